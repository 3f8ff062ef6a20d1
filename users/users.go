// Package users serves the spec's listing of users (GET /users), declared
// as [dataset.Users]: it parses the listing's query parameters
// ([ParseQuery]).
package users

import (
	"net/url"

	"github.com/informe/informe/internal/dataset"
	"github.com/informe/informe/internal/param"
)

// ParseQuery parses the spec's parameters of the users listing
// ([dataset.Users].Params: the columns, see param.Columns) into a query
// for every user. A bad value is a failure.Invalid error naming it.
func ParseQuery(v url.Values) (dataset.Query, error) {
	cols, err := param.Columns(v, dataset.Users.Columns)
	return dataset.Query{Columns: cols}, err
}
