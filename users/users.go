// Package users serves the listing of users (GET /users): it declares the
// users as a dataset, read from the user_list view in id order.
package users

import (
	"github.com/informe/informe/internal/dataset"
)

// Params are the query parameters of the spec's users listing: the
// columns (see param.Columns).
var Params = []string{"columns"}

// Dataset is the users' declaration: one row per user, read from the
// user_list view (text) and user_list_typed (typed values), in id order.
var Dataset = &dataset.Dataset{
	Name: "users", Scope: dataset.UsersRead, Columns: Columns,
	Text: "user_list", Typed: "user_list_typed", Keys: []string{"key_id"}, KeyColumn: "id",
}
