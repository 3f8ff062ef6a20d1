// Package report serves the general report: one row per task of a process
// of a contract, filtered, counted and paged in one consistent snapshot, and
// streamed row by row from the general_report view.
package report

import (
	"errors"
	"math"
	"net/url"

	"github.com/informe/informe/export"
	"github.com/informe/informe/internal/failure"
	"github.com/informe/informe/internal/param"
	"github.com/informe/informe/internal/rut"
)

// MaxPerPage is the largest result_per_page, and the default.
const MaxPerPage = 10000

// Query is a validated request for one page of the general report. Zero
// values mean "no filter"; filters combine with AND.
type Query struct {
	ContractID   int64
	CodeContract string
	ClientID     int64
	RUTKey       string // rut.RUT.Key() of the client's RUT
	Page         int64  // from 1
	PerPage      int64  // from 1 to MaxPerPage
	// Columns are the fields to read, in order; nil means all [Columns].
	Columns []export.Column
}

// columns returns the fields q reads.
func (q Query) columns() []export.Column {
	if q.Columns == nil {
		return Columns
	}
	return q.Columns
}

// Filtered reports whether q narrows the report.
func (q Query) Filtered() bool {
	return q.ContractID != 0 || q.CodeContract != "" || q.ClientID != 0 || q.RUTKey != ""
}

// ParseQuery validates the report's query parameters, columns included
// (see param.Columns). Unknown parameters are
// ignored. A parameter given twice, empty or out of its range is a
// failure.Invalid error whose message names it and what it allows.
func ParseQuery(v url.Values) (Query, error) {
	var q Query
	var err error
	if q.ContractID, err = param.Int(v, "contract_id", 0, math.MaxInt64); err != nil {
		return q, err
	}
	if q.CodeContract, _, err = param.Single(v, "code_contract"); err != nil {
		return q, err
	}
	if q.ClientID, err = param.Int(v, "client_id", 0, math.MaxInt64); err != nil {
		return q, err
	}
	s, ok, err := param.Single(v, "rut")
	if err != nil {
		return q, err
	}
	if ok {
		r, err := rut.Parse(s)
		if err != nil {
			reason := "rut_malformed"
			if errors.Is(err, rut.ErrCheckDigit) {
				reason = "rut_check_digit"
			}
			return q, &failure.Error{Code: failure.Invalid, Target: "rut", Reason: reason, Message: err.Error(), Err: err}
		}
		q.RUTKey = r.Key()
	}
	if q.Page, err = param.Int(v, "page", 1, math.MaxInt64); err != nil {
		return q, err
	}
	if q.PerPage, err = param.Int(v, "result_per_page", MaxPerPage, MaxPerPage); err != nil {
		return q, err
	}
	q.Columns, err = param.Columns(v, Columns)
	return q, err
}
