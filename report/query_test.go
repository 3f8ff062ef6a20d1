package report_test

import (
	"net/url"
	"reflect"
	"strings"
	"testing"

	"github.com/informe/informe/internal/dataset"
	"github.com/informe/informe/internal/failure"
	"github.com/informe/informe/report"
)

func TestParseQuery(t *testing.T) {
	t.Parallel()
	type want struct {
		eq          []dataset.Eq
		page, per   int64
		skip, limit int64
		cols        []dataset.Column
	}
	for _, tt := range []struct {
		name, query string
		want        want
		wantErr     string
	}{
		{"Defaults", "", want{page: 1, per: 10000, limit: 10000}, ""},
		{"AllFilters", "contract_id=3&code_contract=CT-1&client_id=9&rut=12.345.678-5&page=2&result_per_page=50",
			want{eq: []dataset.Eq{{Column: "key_contract_id", Value: int64(3)}, {Column: "key_code_contract", Value: "CT-1"}, {Column: "key_client_id", Value: int64(9)},
				{Column: "key_client_rut", Value: "123456785"}}, page: 2, per: 50, skip: 50, limit: 50}, ""},
		{"RUTLowerK", "rut=17000003-k", want{eq: []dataset.Eq{{Column: "key_client_rut", Value: "17000003K"}}, page: 1, per: 10000, limit: 10000}, ""},
		{"OthersAreTheCallers", "foo=bar&format=csv", want{page: 1, per: 10000, limit: 10000}, ""},
		{"ErrPageZero", "page=0", want{}, "page"},
		{"ErrPerPageOver", "result_per_page=10001", want{}, "result_per_page must be an integer from 1 to 10000"},
		{"ErrContractID", "contract_id=abc", want{}, "contract_id"},
		{"ErrClientIDTwice", "client_id=1&client_id=1", want{}, "client_id must be given at most once"},
		{"ErrCodeEmpty", "code_contract=", want{}, "code_contract must not be empty"},
		{"ErrRUTCheckDigit", "rut=12.345.678-9", want{}, "check digit"},
		{"ErrRUTMalformed", "rut=hola", want{}, "rut"},
		{"Columns", "columns=task_status,contract_id", want{page: 1, per: 10000, limit: 10000,
			cols: []dataset.Column{dataset.GeneralReport.Columns[53], dataset.GeneralReport.Columns[0]}}, ""},
		{"ErrColumnUnknown", "columns=contract_id,nope", want{}, `columns: unknown field "nope"`},
		{"ErrColumnTwice", "columns=contract_id,contract_id", want{}, `columns: "contract_id" is given more than once`},
		{"ErrColumnEmptyName", "columns=contract_id,", want{}, "columns: an empty field name"},
		{"ErrColumnsEmpty", "columns=", want{}, "columns must not be empty"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			v, err := url.ParseQuery(tt.query)
			if err != nil {
				t.Fatal(err)
			}
			q, p, err := report.ParseQuery(v)
			if tt.wantErr != "" {
				if failure.CodeOf(err) != failure.Invalid || !strings.Contains(failure.MessageOf(err), tt.wantErr) {
					t.Fatalf("err = %v, want Invalid containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tt.want.cols == nil {
				tt.want.cols = dataset.GeneralReport.Columns
			}
			got := want{eq: q.Equalities(), page: p.CurrentPage, per: p.PerPage, skip: q.Skip, limit: q.Limit, cols: q.Columns}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("ParseQuery = %+v; want %+v", got, tt.want)
			}
			if !q.Count || !q.Plain() || q.Filtered() != (len(tt.want.eq) > 0) {
				t.Errorf("Count %v, Plain %v, Filtered %v", q.Count, q.Plain(), q.Filtered())
			}
		})
	}
}

// FuzzParseQuery checks that any query string either parses into a query
// within the documented ranges or fails with a client-safe Invalid error.
func FuzzParseQuery(f *testing.F) {
	for _, s := range []string{"", "page=2&result_per_page=10", "rut=12.345.678-5", "contract_id=1&client_id=2&code_contract=x", "page=1.5", "page=1&page=2", "rut=k"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		v, err := url.ParseQuery(raw)
		if err != nil {
			return
		}
		q, p, err := report.ParseQuery(v)
		if err != nil {
			if failure.CodeOf(err) != failure.Invalid || failure.MessageOf(err) == "" {
				t.Fatalf("err = %v, want a failure.Invalid with a message", err)
			}
			return
		}
		if p.CurrentPage < 1 || p.PerPage < 1 || p.PerPage > report.MaxPerPage || q.Skip < 0 || q.Limit != p.PerPage {
			t.Fatalf("out of range: %+v %+v", q, p)
		}
	})
}
