package api_test

import (
	"bytes"
	"net/http"
	"slices"
	"testing"

	"github.com/informe/informe/internal/pgserver/pgtest"
)

// TestTabDelimited checks that delimiter=tab is served as
// tab-separated values, in a .tsv attachment, on every path, holding the
// same records as the comma-separated file; other delimiters stay CSV.
func TestTabDelimited(t *testing.T) {
	t.Parallel()
	ts := newServer(t, pgtest.Fixture(t))
	const (
		tsv = "text/tab-separated-values; charset=utf-8"
		csv = "text/csv; charset=utf-8"
	)
	for _, tt := range []struct {
		name  string
		path  string // with a query string
		query string
		ctype string
		file  string
		delim rune
	}{
		{"Export", "/api/general-report/export?format=csv", "&delimiter=tab", tsv, "general-report-DATE.tsv", '\t'},
		{"ExportFiltered", "/api/general-report/export?format=csv&client_id=3", "&delimiter=tab", tsv, "general-report-client-3-DATE.tsv", '\t'},
		{"ExportColumns", "/api/general-report/export?format=csv&columns=task_detail,contract_id", "&delimiter=tab", tsv, "general-report-DATE.tsv", '\t'},
		{"ExportAccept", "/api/general-report/export?_=1", "&delimiter=tab", tsv, "general-report-DATE.tsv", '\t'},
		{"ExportSemicolon", "/api/general-report/export?format=csv", "&delimiter=semicolon", csv, "general-report-DATE.csv", ';'},
		{"ExportComma", "/api/general-report/export?format=csv", "&delimiter=comma", csv, "general-report-DATE.csv", ','},
		{"Page", "/api/general-report?format=csv&result_per_page=4&page=3", "&delimiter=tab", tsv, "general-report-page-3-DATE.tsv", '\t'},
		{"PageOne", "/api/general-report?format=csv", "&delimiter=tab", tsv, "general-report-page-1-DATE.tsv", '\t'},
		{"PagePastTheEnd", "/api/general-report?format=csv&result_per_page=4&page=9", "&delimiter=tab", tsv, "general-report-page-9-DATE.tsv", '\t'},
		{"PageSemicolon", "/api/general-report?format=csv&result_per_page=4&page=2", "&delimiter=semicolon", csv, "general-report-page-2-DATE.csv", ';'},
		{"Users", "/users?format=csv", "&delimiter=tab", tsv, "users-DATE.tsv", '\t'},
	} {
		t.Run(tt.name, func(t *testing.T) {
			header := []string{"Accept", "text/csv"}
			r := ts.Get(t, tt.path+tt.query, header...)
			if r.Status != http.StatusOK {
				t.Fatalf("status = %d; body %.300s", r.Status, r.Body)
			}
			if got, want := r.Header.Get("Content-Type"), tt.ctype; got != want {
				t.Errorf("Content-Type = %q, want %q", got, want)
			}
			if got, want := undated(r.Header.Get("Content-Disposition")), attached(tt.file); got != want {
				t.Errorf("Content-Disposition = %q, want %q", got, want)
			}
			comma := ts.Get(t, tt.path, header...)
			if comma.Status != http.StatusOK {
				t.Fatalf("status = %d; body %.300s", comma.Status, comma.Body)
			}
			got, want := csvRecords(t, r.Body, tt.delim), csvRecords(t, comma.Body, ',')
			if !slices.EqualFunc(got, want, slices.Equal) {
				t.Errorf("records %q\nwant %q", got, want)
			}
			if tt.delim == '\t' && !bytes.Contains(r.Body, []byte("\t")) {
				t.Error("no tab in the body")
			}
		})
	}

	t.Run("OptionsTogether", func(t *testing.T) {
		r := ts.Get(t, "/api/general-report/export?format=csv&delimiter=tab&bom=true&header=false&contract_id=2")
		if r.Status != http.StatusOK {
			t.Fatalf("status = %d; body %.300s", r.Status, r.Body)
		}
		if got, want := undated(r.Header.Get("Content-Disposition")), attached("general-report-contract-2-DATE.tsv"); got != want {
			t.Errorf("Content-Disposition = %q, want %q", got, want)
		}
		if !bytes.HasPrefix(r.Body, []byte("\xEF\xBB\xBF2\tPENDIENTE\tCT-002\t")) {
			t.Errorf("body starts %q, want the BOM and then the row of contract 2", r.Body[:min(len(r.Body), 40)])
		}
	})

	// Formats other than CSV take the parameter and ignore it.
	for _, format := range []string{"json", "ndjson", "xlsx"} {
		t.Run("Ignored/"+format, func(t *testing.T) {
			r := ts.Get(t, "/api/general-report/export?delimiter=tab&format="+format)
			want := ts.Get(t, "/api/general-report/export?format="+format)
			if got, want := r.Header.Get("Content-Type"), want.Header.Get("Content-Type"); got != want {
				t.Errorf("Content-Type = %q, want %q", got, want)
			}
			if got, want := r.Header.Get("Content-Disposition"), want.Header.Get("Content-Disposition"); got != want {
				t.Errorf("Content-Disposition = %q, want %q", got, want)
			}
		})
	}
}
