package users

import "github.com/informe/informe/export"

// Columns are the fields of a user, in the order of the API spec (section
// 2.1). last_entry and updated_at are NULL (JSON null) when absent.
var Columns = []export.Column{
	{Name: "id", Kind: export.Integer},
	{Name: "name", Kind: export.Text},
	{Name: "email", Kind: export.Text},
	{Name: "username", Kind: export.Text},
	{Name: "rut", Kind: export.Text},
	{Name: "phone", Kind: export.Text},
	{Name: "last_entry", Kind: export.Timestamp, Nullable: true},
	{Name: "status", Kind: export.Text},
	{Name: "created_at", Kind: export.Timestamp},
	{Name: "updated_at", Kind: export.Timestamp, Nullable: true},
}
