package api_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/informe/informe/internal/pgserver/pgtest"
)

// columnsTarget is a path that takes the columns parameter, with what its
// rows look like.
type columnsTarget struct {
	name  string
	path  string // with a query string
	file  string // its spec field list in docs/spec
	sheet string
	kinds map[string]int
}

var columnsTargets = []columnsTarget{
	{"Page", "/api/general-report?result_per_page=4&page=2", "general-report-columns.txt", "general-report", reportKinds()},
	{"Export", "/api/general-report/export?client_id=1", "general-report-columns.txt", "general-report", reportKinds()},
	{"Users", "/users?_=1", "users-columns.txt", "users", userKinds},
}

// jsonObjects returns the row objects of a JSON or NDJSON body as sent: the
// data of a report page, the elements of an array, or NDJSON's lines.
func jsonObjects(tb testing.TB, format string, body []byte) []json.RawMessage {
	tb.Helper()
	switch {
	case format == "ndjson":
		var out []json.RawMessage
		for _, l := range ndjsonLines(tb, body) {
			out = append(out, l)
		}
		return out
	case bytes.HasPrefix(body, []byte("{")):
		return decodeReport(tb, body).Raw
	}
	return decodeArray(tb, body)
}

// fullRows returns the rows of target as JSON, each a map of every field.
func (ts *testServer) fullRows(tb testing.TB, target columnsTarget) []map[string]*string {
	tb.Helper()
	r := ts.Get(tb, target.path+"&format=json")
	if r.Status != http.StatusOK {
		tb.Fatalf("status = %d; body %.300s", r.Status, r.Body)
	}
	var rows []map[string]*string
	for _, raw := range jsonObjects(tb, "json", r.Body) {
		keys, vals := decodeObject(tb, raw)
		m := make(map[string]*string, len(keys))
		for i, k := range keys {
			m[k] = vals[i]
		}
		rows = append(rows, m)
	}
	if len(rows) < 3 {
		tb.Fatalf("%s has %d rows: the check proves little", target.path, len(rows))
	}
	return rows
}

// TestColumns checks the columns parameter on the report's pages, its
// export and the users, in every format: only the fields asked for, in
// the order asked, with the values of the full rows; the CSV and XLSX
// header rows name them.
func TestColumns(t *testing.T) {
	t.Parallel()
	ts := newServer(t, pgtest.Fixture(t))
	for _, target := range columnsTargets {
		all := specColumns(t, target.file)
		reversed := slices.Clone(all)
		slices.Reverse(reversed)
		type list struct {
			name string
			cols []string
		}
		lists := []list{{"Reversed", reversed}, {"One", all[len(all)-1:]}}
		if target.name == "Users" {
			lists = append(lists,
				list{"Three", []string{"email", "id", "last_entry"}},
				list{"Nullable", []string{"updated_at", "name"}})
		} else {
			lists = append(lists,
				list{"Three", []string{"contract_id", "client_rut", "task_status"}},
				list{"Reordered", []string{"task_status", "contract_id"}},
				list{"Kinds", []string{"execution_date", "costo_servicio", "task_detail", "client_birth_date", "contract_creation_date", "task_duration"}})
		}
		full := ts.fullRows(t, target)
		fullCSV := ts.Get(t, target.path+"&format=csv")
		fullTable := readTable(t, "csv", fullCSV.Body, ',', "")
		for _, l := range lists {
			cols := l.cols
			for _, format := range formats {
				t.Run(fmt.Sprintf("%s/%s/%s", target.name, l.name, format), func(t *testing.T) {
					r := ts.Get(t, target.path+"&format="+format+"&columns="+strings.Join(cols, ","))
					if r.Status != http.StatusOK {
						t.Fatalf("status = %d; body %.300s", r.Status, r.Body)
					}
					switch format {
					case "json", "ndjson":
						objs := jsonObjects(t, format, r.Body)
						if len(objs) != len(full) {
							t.Fatalf("%d rows, want %d", len(objs), len(full))
						}
						for i, raw := range objs {
							keys, vals := decodeObject(t, raw)
							if !slices.Equal(keys, cols) {
								t.Fatalf("row %d keys %v, want %v", i, keys, cols)
							}
							for j, c := range cols {
								if got, want := vals[j], full[i][c]; !equalValue(got, want) {
									t.Errorf("row %d %s = %s, want %s", i, c, show(got), show(want))
								}
							}
						}
					case "csv":
						got := csvRecords(t, r.Body, ',')
						if !slices.Equal(got[0], cols) {
							t.Fatalf("header %v, want %v", got[0], cols)
						}
						if len(got)-1 != len(fullTable.Rows) {
							t.Fatalf("%d records, want %d", len(got)-1, len(fullTable.Rows))
						}
						for i, row := range fullTable.Rows {
							fields := strings.Split(row, "\x1f")
							for j, c := range cols {
								want := fields[slices.Index(fullTable.Header, c)]
								if got := got[i+1][j]; got != want {
									t.Errorf("record %d %s = %q, want %q", i, c, got, want)
								}
							}
						}
					case "xlsx":
						var rows [][]*string
						for _, m := range full {
							var row []*string
							for _, c := range cols {
								row = append(row, m[c])
							}
							rows = append(rows, row)
						}
						checkXLSX(t, r.Body, target.sheet, cols, target.kinds, rows)
					}
				})
			}
		}

		// Every field in the spec's order is what no columns gives.
		for _, format := range formats {
			t.Run(target.name+"/AllInOrder/"+format, func(t *testing.T) {
				want := ts.Get(t, target.path+"&format="+format)
				got := ts.Get(t, target.path+"&format="+format+"&columns="+strings.Join(all, ","))
				if got.Status != http.StatusOK || want.Status != http.StatusOK {
					t.Fatalf("status %d and %d", got.Status, want.Status)
				}
				if format == "xlsx" {
					g, w := readTable(t, format, got.Body, ',', target.sheet), readTable(t, format, want.Body, ',', target.sheet)
					if !slices.Equal(g.Header, w.Header) {
						t.Errorf("header %v, want %v", g.Header, w.Header)
					}
					equalRows(t, "all columns vs none", g.Rows, w.Rows)
					return
				}
				if !bytes.Equal(got.Body, want.Body) {
					t.Errorf("body with every column differs from the body without columns:\n got %.300s\nwant %.300s", got.Body, want.Body)
				}
			})
		}
	}
}

func equalValue(a, b *string) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

func show(v *string) string {
	if v == nil {
		return "null"
	}
	return fmt.Sprintf("%q", *v)
}

// TestColumnsErrors checks that a wrong columns parameter is a 400 whose
// message names the field, on every path that takes it, whatever the
// format asked for.
func TestColumnsErrors(t *testing.T) {
	t.Parallel()
	ts := newServer(t, pgtest.Fixture(t))
	for _, target := range columnsTargets {
		valid, other := "contract_id", "client_rut"
		wrongPath := "email" // a users field, not a report field
		if target.name == "Users" {
			valid, other, wrongPath = "id", "email", "contract_id"
		}
		for _, tt := range []struct {
			name    string
			columns string // raw, already escaped
			msg     string
		}{
			{"ErrUnknown", valid + ",nope", `columns: unknown field "nope"`},
			{"ErrUnknownFirst", "nope," + valid, `columns: unknown field "nope"`},
			{"ErrOtherPathsField", wrongPath, fmt.Sprintf(`columns: unknown field %q`, wrongPath)},
			{"ErrCase", strings.ToUpper(valid), fmt.Sprintf(`columns: unknown field %q`, strings.ToUpper(valid))},
			{"ErrKeyColumn", "key_" + valid, fmt.Sprintf(`columns: unknown field %q`, "key_"+valid)},
			{"ErrSQL", url.QueryEscape(valid + `" FROM pg_authid; --`), fmt.Sprintf(`columns: unknown field %q`, valid+`" FROM pg_authid; --`)},
			{"ErrRepeated", valid + "," + other + "," + valid, fmt.Sprintf(`columns: %q is given more than once`, valid)},
			{"ErrRepeatedAdjacent", other + "," + other, fmt.Sprintf(`columns: %q is given more than once`, other)},
			{"ErrEmptyElement", valid + ",," + other, "columns: an empty field name is not allowed"},
			{"ErrTrailingComma", valid + ",", "columns: an empty field name is not allowed"},
			{"ErrLeadingComma", "," + valid, "columns: an empty field name is not allowed"},
			{"ErrOnlyComma", ",", "columns: an empty field name is not allowed"},
			{"ErrEmpty", "", "columns must not be empty"},
			{"ErrTwice", valid + "&columns=" + other, "columns must be given at most once"},
		} {
			for _, format := range []string{"json", "csv", "xlsx"} {
				t.Run(fmt.Sprintf("%s/%s/%s", target.name, tt.name, format), func(t *testing.T) {
					r := ts.Get(t, target.path+"&format="+format+"&columns="+tt.columns)
					r.WantError(t, http.StatusBadRequest, tt.msg)
					for _, h := range []string{"Content-Disposition", "X-Total-Count"} {
						if v := r.Header.Get(h); v != "" {
							t.Errorf("error carries %s: %q", h, v)
						}
					}
				})
			}
		}
	}
}

// TestColumnsSaveBytes checks what the columns parameter is for: a CSV
// export of 8 of the 74 fields is well under a fifth of the full one.
func TestColumnsSaveBytes(t *testing.T) {
	t.Parallel()
	ts := newServer(t, pgtest.Seeded(t))
	const cols = "contract_id,code_contract,contract_status,client_rut,process_id,task_code,task_status,task_end_date"
	full := ts.Get(t, "/api/general-report/export?format=csv")
	some := ts.Get(t, "/api/general-report/export?format=csv&columns="+cols)
	if full.Status != http.StatusOK || some.Status != http.StatusOK {
		t.Fatalf("status %d and %d", full.Status, some.Status)
	}
	if got, want := some.Header.Get("X-Total-Count"), full.Header.Get("X-Total-Count"); got != want {
		t.Errorf("X-Total-Count = %s, want %s", got, want)
	}
	if got, want := len(csvRecords(t, some.Body, ',')), len(csvRecords(t, full.Body, ',')); got != want {
		t.Fatalf("%d records, want %d", got, want)
	}
	ratio := float64(len(some.Body)) / float64(len(full.Body))
	t.Logf("8 columns: %d bytes, all 74: %d bytes (%.3f)", len(some.Body), len(full.Body), ratio)
	if ratio >= 0.2 {
		t.Errorf("8 columns take %.3f of the full export's bytes, want under 0.2", ratio)
	}
}
