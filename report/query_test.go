package report_test

import (
	"net/url"
	"reflect"
	"strings"
	"testing"

	"github.com/informe/informe/export"
	"github.com/informe/informe/internal/failure"
	"github.com/informe/informe/report"
)

func TestParseQuery(t *testing.T) {
	for _, tt := range []struct {
		name, query string
		want        report.Query
		wantErr     string
	}{
		{"Defaults", "", report.Query{Page: 1, PerPage: 10000}, ""},
		{"AllFilters", "contract_id=3&code_contract=CT-1&client_id=9&rut=12.345.678-5&page=2&result_per_page=50",
			report.Query{ContractID: 3, CodeContract: "CT-1", ClientID: 9, RUTKey: "123456785", Page: 2, PerPage: 50}, ""},
		{"RUTLowerK", "rut=17000003-k", report.Query{RUTKey: "17000003K", Page: 1, PerPage: 10000}, ""},
		{"UnknownIgnored", "foo=bar&format=csv", report.Query{Page: 1, PerPage: 10000}, ""},
		{"ErrPageZero", "page=0", report.Query{}, "page"},
		{"ErrPerPageOver", "result_per_page=10001", report.Query{}, "result_per_page must be an integer from 1 to 10000"},
		{"ErrContractID", "contract_id=abc", report.Query{}, "contract_id"},
		{"ErrClientIDTwice", "client_id=1&client_id=1", report.Query{}, "client_id must be given at most once"},
		{"ErrCodeEmpty", "code_contract=", report.Query{}, "code_contract must not be empty"},
		{"ErrRUTCheckDigit", "rut=12.345.678-9", report.Query{}, "check digit"},
		{"ErrRUTMalformed", "rut=hola", report.Query{}, "rut"},
		{"Columns", "columns=task_status,contract_id", report.Query{Page: 1, PerPage: 10000,
			Columns: []export.Column{report.Columns[53], report.Columns[0]}}, ""},
		{"ErrColumnUnknown", "columns=contract_id,nope", report.Query{}, `columns: unknown field "nope"`},
		{"ErrColumnTwice", "columns=contract_id,contract_id", report.Query{}, `columns: "contract_id" is given more than once`},
		{"ErrColumnEmptyName", "columns=contract_id,", report.Query{}, "columns: an empty field name"},
		{"ErrColumnsEmpty", "columns=", report.Query{}, "columns must not be empty"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			v, err := url.ParseQuery(tt.query)
			if err != nil {
				t.Fatal(err)
			}
			got, err := report.ParseQuery(v)
			if tt.wantErr != "" {
				if failure.CodeOf(err) != failure.Invalid || !strings.Contains(failure.MessageOf(err), tt.wantErr) {
					t.Fatalf("err = %v, want Invalid containing %q", err, tt.wantErr)
				}
				return
			}
			if tt.want.Columns == nil {
				tt.want.Columns = report.Columns
			}
			if err != nil || !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("ParseQuery = %+v, %v; want %+v", got, err, tt.want)
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
		q, err := report.ParseQuery(v)
		if err != nil {
			if failure.CodeOf(err) != failure.Invalid || failure.MessageOf(err) == "" {
				t.Fatalf("err = %v, want a failure.Invalid with a message", err)
			}
			return
		}
		if q.Page < 1 || q.PerPage < 1 || q.PerPage > report.MaxPerPage || q.ContractID < 0 || q.ClientID < 0 {
			t.Fatalf("out of range: %+v", q)
		}
	})
}
