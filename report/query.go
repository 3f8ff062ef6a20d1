// Package report serves the general report ([dataset.GeneralReport]): one
// row per task of a process of a contract. It reads the report's plain
// queries through the row counts informe maintains ([Dataset]), checks at
// start-up that they can be had ([CheckCounting]), and parses the spec's
// query parameters ([ParseQuery], the parameters
// [dataset.GeneralReport].PageParams lists).
package report

import (
	"math"
	"net/url"

	"github.com/informe/informe/internal/dataset"
	"github.com/informe/informe/internal/param"
	"github.com/informe/informe/internal/rut"
)

// MaxPerPage is the largest result_per_page, and the default.
const MaxPerPage = 10000

// ParseQuery parses the spec's parameters of the general report into a
// query for one page of it, counted: the filters contract_id,
// code_contract, client_id and rut (equalities, joined by AND), page and
// result_per_page, and the columns. Other parameters are the caller's. A
// parameter given twice, empty or out of its range is a failure.Invalid
// error whose message names it and what it allows.
func ParseQuery(v url.Values) (dataset.Query, Page, error) {
	var q dataset.Query
	var p Page
	if err := equalID(&q, v, "contract_id", "key_contract_id"); err != nil {
		return q, p, err
	}
	code, ok, err := param.Single(v, "code_contract")
	if err != nil {
		return q, p, err
	}
	if ok {
		q.Equal("key_code_contract", code)
	}
	if err := equalID(&q, v, "client_id", "key_client_id"); err != nil {
		return q, p, err
	}
	s, ok, err := param.Single(v, "rut")
	if err != nil {
		return q, p, err
	}
	if ok {
		r, err := rut.ParseAs("rut", s)
		if err != nil {
			return q, p, err
		}
		q.Equal("key_client_rut", r.Key())
	}
	if p.CurrentPage, err = param.Int(v, "page", 1, math.MaxInt64); err != nil {
		return q, p, err
	}
	if p.PerPage, err = param.Int(v, "result_per_page", MaxPerPage, MaxPerPage); err != nil {
		return q, p, err
	}
	if q.Columns, err = param.Columns(v, dataset.GeneralReport.Columns); err != nil {
		return q, p, err
	}
	q.Skip, q.Limit, q.Count = (p.CurrentPage-1)*p.PerPage, p.PerPage, true
	if p.CurrentPage-1 > math.MaxInt64/p.PerPage {
		q.Skip = math.MaxInt64 // past any last row
	}
	return q, p, nil
}

// equalID adds to q the condition that column equals the id given as the
// parameter name, if it is given. An id that is not a whole number of 1 or
// more is a failure.Invalid error naming the parameter.
func equalID(q *dataset.Query, v url.Values, name, column string) error {
	id, err := param.Int(v, name, 0, math.MaxInt64)
	if err != nil {
		return err
	}
	if id != 0 {
		q.Equal(column, id)
	}
	return nil
}
