package api_test

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/informe/informe/internal/pgserver/pgtest"
)

// TestDecimalComma checks that decimal=comma writes the decimal columns'
// values with a comma, and every other field as without it, on every path
// in CSV and TSV; and that it is refused, naming it, in another format,
// beside a comma delimiter, or with a value it does not know.
func TestDecimalComma(t *testing.T) {
	t.Parallel()
	ts := newServer(t, pgtest.Fixture(t))
	for _, tt := range []struct {
		name, path, want string
		delim            rune
	}{
		{"ExportSemicolon", "/api/general-report/export?format=csv&delimiter=semicolon&columns=contract_id,costo_servicio", "12500,5", ';'},
		{"ExportTab", "/api/general-report/export?format=csv&delimiter=tab&client_id=1", "12500,5", '\t'},
		{"Page", "/api/general-report?format=csv&delimiter=semicolon&result_per_page=4&page=2", "", ';'},
		{"Grain", "/api/services/export?format=csv&delimiter=semicolon", "12500,5", ';'},
		{"Users", "/users?format=csv&delimiter=tab", "", '\t'},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := ts.Get(t, tt.path+"&decimal=comma")
			point := ts.Get(t, tt.path)
			if r.Status != http.StatusOK || point.Status != http.StatusOK {
				t.Fatalf("status = %d, %d without decimal; body %.300s", r.Status, point.Status, r.Body)
			}
			if tt.want != "" && !strings.Contains(string(r.Body), tt.want) {
				t.Errorf("no %s in the body: %.400s", tt.want, r.Body)
			}
			got, want := csvRecords(t, r.Body, tt.delim), csvRecords(t, point.Body, tt.delim)
			decimal := map[int]bool{}
			for i, name := range want[0] {
				decimal[i] = name == "costo_servicio"
			}
			for _, rec := range want[1:] {
				for i := range rec {
					if decimal[i] {
						rec[i] = strings.Replace(rec[i], ".", ",", 1)
					}
				}
			}
			if !slices.EqualFunc(got, want, slices.Equal) {
				t.Errorf("records %q\nwant %q", got, want)
			}
		})
	}
	for _, tt := range []struct {
		name, path, reason string
	}{
		{"ErrCommaDelimiter", "/api/general-report/export?format=csv&delimiter=comma&decimal=comma", "comma_delimiter"},
		{"ErrDefaultDelimiter", "/api/general-report/export?format=csv&decimal=comma", "comma_delimiter"},
		{"ErrJSON", "/api/general-report/export?format=json&delimiter=semicolon&decimal=comma", "csv_only"},
		{"ErrXLSX", "/api/contracts/export?format=xlsx&decimal=comma", "csv_only"},
		{"ErrPageNDJSON", "/api/general-report?format=ndjson&decimal=comma", "csv_only"},
		{"ErrUnknown", "/api/general-report/export?format=csv&delimiter=semicolon&decimal=coma", "not_allowed"},
		{"ErrTwice", "/users?format=csv&delimiter=tab&decimal=comma&decimal=comma", "repeated"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := ts.Get(t, tt.path)
			if r.Status != http.StatusBadRequest {
				t.Fatalf("status = %d, want 400; body %.300s", r.Status, r.Body)
			}
			var body struct{ Message, Code, Target string }
			if err := json.Unmarshal(r.Body, &body); err != nil {
				t.Fatalf("%v: %s", err, r.Body)
			}
			if body.Target != "decimal" || body.Code != tt.reason || !strings.Contains(body.Message, "decimal") {
				t.Errorf("body = %+v, want target decimal, code %s and a message naming decimal", body, tt.reason)
			}
		})
	}
}
