package users

import "github.com/informe/informe/internal/dataset"

// Columns are the fields of a user, in the order of the API spec (section
// 2.1). last_entry and updated_at are NULL (JSON null) when absent.
var Columns = []dataset.Column{
	{Name: "id", Kind: dataset.Integer},
	{Name: "name", Kind: dataset.Text},
	{Name: "email", Kind: dataset.Text},
	{Name: "username", Kind: dataset.Text},
	{Name: "rut", Kind: dataset.Text},
	{Name: "phone", Kind: dataset.Text},
	{Name: "last_entry", Kind: dataset.Timestamp, Nullable: true},
	{Name: "status", Kind: dataset.Text},
	{Name: "created_at", Kind: dataset.Timestamp},
	{Name: "updated_at", Kind: dataset.Timestamp, Nullable: true},
}
