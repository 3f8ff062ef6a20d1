package api_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/informe/informe/internal/fileexport"
	"github.com/informe/informe/internal/pgserver/pgtest"
	"github.com/informe/informe/internal/postgres"
	"github.com/informe/informe/internal/source"
	"github.com/informe/informe/report"
)

// The doors other than the OData feed: the CSV export, the spec's JSON
// page (users: the JSON listing) and the export command take the same
// $filter and $orderby, and must give the same rows in the same order.

// door reads the keys of the rows that opts ($filter, $orderby) ask for
// through one door of the set named set.
type door struct {
	name string
	keys func(t *testing.T, ts *testServer, set string, opts url.Values) []string
}

var doors = []door{
	{"csv export", csvExportKeys},
	{"json page", jsonPageKeys},
	{"informe export", commandKeys},
}

// keyColumns are the columns that make a row's key in each set. The
// report has no task id among its columns, but the seed writes each
// task's code from it: TK-00000123 for task 123.
func keyColumns(set string) string {
	if set == "Users" {
		return "id"
	}
	return "contract_id,process_id,task_code"
}

// doorKey writes the key of a row of set from its key columns as the feed
// writes it: row_id "c-p-t" (0 for an absent part), or the id.
func doorKey(set string, values []string) string {
	if set == "Users" {
		return values[0]
	}
	if code, ok := strings.CutPrefix(values[2], "TK-"); ok {
		n, _ := strconv.Atoi(code)
		values[2] = strconv.Itoa(n)
	}
	for i, v := range values {
		if v == "" {
			values[i] = "0"
		}
	}
	return strings.Join(values, "-")
}

// doorPath is the spec path of set: the report's export or page, or /users.
func doorPath(set, what string) string {
	if set == "Users" {
		return "/users"
	}
	return "/api/general-report" + what
}

// csvKeys reads the keys of CSV rows of set's key columns, header first.
func csvKeys(t *testing.T, set string, body []byte) []string {
	t.Helper()
	recs, err := csv.NewReader(bytes.NewReader(body)).ReadAll()
	if err != nil {
		t.Fatalf("CSV: %v", err)
	}
	if len(recs) == 0 || strings.Join(recs[0], ",") != keyColumns(set) {
		t.Fatalf("CSV header %v, want %s", recs[:min(len(recs), 1)], keyColumns(set))
	}
	keys := make([]string, 0, len(recs)-1)
	for _, r := range recs[1:] {
		keys = append(keys, doorKey(set, r))
	}
	return keys
}

func csvExportKeys(t *testing.T, ts *testServer, set string, opts url.Values) []string {
	t.Helper()
	v := cloneValues(opts)
	v.Set("format", "csv")
	v.Set("columns", keyColumns(set))
	r := ts.Get(t, doorPath(set, "/export")+"?"+v.Encode())
	if r.Status != http.StatusOK {
		t.Fatalf("CSV export: %d %s", r.Status, r.Body)
	}
	keys := csvKeys(t, set, r.Body)
	if n := r.Header.Get("X-Total-Count"); n != strconv.Itoa(len(keys)) {
		t.Errorf("CSV export: X-Total-Count %s for %d rows", n, len(keys))
	}
	return keys
}

func jsonPageKeys(t *testing.T, ts *testServer, set string, opts url.Values) []string {
	t.Helper()
	v := cloneValues(opts)
	v.Set("columns", keyColumns(set))
	cols := strings.Split(keyColumns(set), ",")
	var keys []string
	read := func(rows []map[string]any) {
		for _, row := range rows {
			values := make([]string, len(cols))
			for i, c := range cols {
				if row[c] != nil {
					values[i] = fmt.Sprint(row[c])
				}
			}
			keys = append(keys, doorKey(set, values))
		}
	}
	if set == "Users" {
		r := ts.Get(t, "/users?"+v.Encode())
		if r.Status != http.StatusOK {
			t.Fatalf("users: %d %s", r.Status, r.Body)
		}
		var rows []map[string]any
		if err := json.Unmarshal(r.Body, &rows); err != nil {
			t.Fatal(err)
		}
		read(rows)
		return keys
	}
	for page := 1; ; page++ {
		v.Set("page", strconv.Itoa(page))
		v.Set("result_per_page", "10000")
		r := ts.Get(t, "/api/general-report?"+v.Encode())
		if r.Status != http.StatusOK {
			t.Fatalf("page %d: %d %s", page, r.Status, r.Body)
		}
		var body struct {
			Data       []map[string]any `json:"data"`
			TotalPages int              `json:"totalPages"`
		}
		if err := json.Unmarshal(r.Body, &body); err != nil {
			t.Fatal(err)
		}
		read(body.Data)
		if page >= body.TotalPages {
			if n := r.Header.Get("X-Total-Count"); n != strconv.Itoa(len(keys)) {
				t.Errorf("JSON pages: X-Total-Count %s for %d rows", n, len(keys))
			}
			return keys
		}
	}
}

func commandKeys(t *testing.T, ts *testServer, set string, opts url.Values) []string {
	t.Helper()
	src := source.Report(report.Maintained)
	if set == "Users" {
		src = source.All(src)[1]
	}
	v := cloneValues(opts)
	v.Set("columns", keyColumns(set))
	plan, err := fileexport.NewPlan(fileexport.Flags{Source: src, Query: v, Output: "-", Format: "csv", Parts: 2})
	if err != nil {
		t.Fatalf("export plan: %v", err)
	}
	var out bytes.Buffer
	if _, err := fileexport.Run(context.Background(), postgres.NewStore(ts.Pool), plan, &out, io.Discard); err != nil {
		t.Fatalf("export: %v", err)
	}
	return csvKeys(t, set, out.Bytes())
}

func cloneValues(v url.Values) url.Values {
	out := url.Values{}
	for k, vs := range v {
		out[k] = slices.Clone(vs)
	}
	return out
}

// checkDoors checks that every door gives the rows the feed gave, want,
// for the options opts of set.
func checkDoors(t *testing.T, ts *testServer, set string, opts url.Values, want []any) {
	t.Helper()
	wantKeys := make([]string, len(want))
	for i, k := range want {
		wantKeys[i] = fmt.Sprint(k)
	}
	for _, d := range doors {
		got := d.keys(t, ts, set, opts)
		if !slices.Equal(got, wantKeys) {
			i := 0
			for i < min(len(got), len(wantKeys)) && got[i] == wantKeys[i] {
				i++
			}
			t.Errorf("%s, %v: %d rows, the feed %d; first difference at row %d", d.name, opts, len(got), len(wantKeys), i)
		}
	}
}

// TestDoorsCombineFilters checks that the spec's filters and $filter
// combine by AND, on the page, the export and the export command, and that
// $select chooses the columns in its order.
func TestDoorsCombineFilters(t *testing.T) {
	t.Parallel()
	ts := newServer(t, pgtest.Seeded(t))
	all, _, _ := ts.walk(t, "/odata/GeneralReport?$select=row_id,client_id,task_status", "Prefer", "odata.maxpagesize=10000")
	client := all[len(all)/2]["client_id"]
	status := "Pendiente"
	var want []any
	for _, r := range all {
		if fmt.Sprint(r["client_id"]) == fmt.Sprint(client) && r["task_status"] == status {
			want = append(want, r["row_id"])
		}
	}
	if len(want) == 0 {
		t.Fatalf("client %v has no %s task: the case checks nothing", client, status)
	}
	opts := url.Values{"client_id": {fmt.Sprint(client)}, "$filter": {"task_status eq '" + status + "'"}}
	checkDoors(t, ts, "GeneralReport", opts, want)

	r := ts.Get(t, "/api/general-report/export?format=csv&$select=task_status,contract_id&client_id="+fmt.Sprint(client))
	if r.Status != http.StatusOK || !strings.HasPrefix(string(r.Body), "task_status,contract_id\r\n") {
		t.Errorf("$select: %d %.60q", r.Status, r.Body)
	}
}

// TestUnknownParameters checks that every path refuses what it does not
// know, naming it, rather than answering as if it were not there.
func TestUnknownParameters(t *testing.T) {
	t.Parallel()
	ts := newServer(t, pgtest.Seeded(t))
	for _, tt := range []struct {
		name, target string
		status       int
		want         string
	}{
		{"PageFoo", "/api/general-report?result_per_page=5&foo=1", 400, `unknown query parameter "foo"; this path accepts contract_id, code_contract`},
		{"PageFilterWithoutDollar", "/api/general-report?filter=task_status%20eq%20'x'", 400, `unknown query parameter "filter"`},
		{"PageSort", "/api/general-report?sort=contract_id", 400, `unknown query parameter "sort"`},
		{"PageTop", "/api/general-report?$top=1", 400, "$top is an option of the OData feed (/odata/GeneralReport), not of this path"},
		{"PageSkip", "/api/general-report?$skip=1", 400, "$skip is an option of the OData feed"},
		{"PageExpand", "/api/general-report?$expand=x", 400, "$expand is an option of the OData feed"},
		{"PageApply", "/api/general-report?$apply=groupby((task_status))", 501, "$apply is not supported"},
		{"PageUnknownOption", "/api/general-report?$foo=1", 400, "unknown query option $foo"},
		{"ExportPage", "/api/general-report/export?format=csv&page=2", 400, `unknown query parameter "page"`},
		{"ExportPerPage", "/api/general-report/export?result_per_page=5", 400, `unknown query parameter "result_per_page"`},
		{"ExportFoo", "/api/general-report/export?format=csv&foo=1", 400, `unknown query parameter "foo"`},
		{"ExportCount", "/api/general-report/export?$count=true", 400, "$count is an option of the OData feed"},
		{"ExportBadFilter", "/api/general-report/export?format=csv&$filter=nope%20eq%201", 400, "has no property"},
		{"ExportSelectAndColumns", "/api/general-report/export?columns=contract_id&$select=contract_id", 400, "give columns or $select, not both"},
		{"ExportSelectKey", "/api/general-report/export?$select=row_id", 400, "row_id is the OData key, not a column of this path"},
		{"UsersFoo", "/users?foo=1", 400, `unknown query parameter "foo"; this path accepts columns`},
		{"UsersRUT", "/users?rut=12.345.678-5", 400, `unknown query parameter "rut"`},
		{"UsersPage", "/users?page=1", 400, `unknown query parameter "page"`},
		{"UsersBadOrder", "/users?$orderby=nope", 400, "User has no property"},
		{"TokenNamedParameter", "/users?foo=" + ts.Token, 400, "unknown query parameter"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := ts.Get(t, tt.target)
			r.WantError(t, tt.status, tt.want)
			if strings.Contains(string(r.Body), ts.Token) {
				t.Errorf("the body repeats the token: %s", r.Body)
			}
		})
	}
	// The OData feed has no custom query option: one is refused in OData's
	// error shape.
	for _, target := range []string{"/odata/GeneralReport?foo=1", "/odata/Users/$count?sort=id", "/odata/Users(1)?x=1"} {
		r := ts.Get(t, target)
		var e odataError
		if r.Status != http.StatusBadRequest || json.Unmarshal(r.Body, &e) != nil || !strings.HasPrefix(e.Error.Message, "unknown query parameter") {
			t.Errorf("%s: %d %s, want OData's 400 naming the parameter", target, r.Status, r.Body)
		}
	}
	for _, target := range []string{
		"/api/general-report?result_per_page=5&_=1732000000000", // jQuery's cache-buster
		"/users?_=1&access_token=" + ts.Token,
		"/api/general-report/export?format=csv&$filter=task_status%20eq%20'Pendiente'&$orderby=task_end_date%20desc&$select=contract_id",
	} {
		if r := ts.Get(t, target); r.Status != http.StatusOK {
			t.Errorf("%s: %d %s", target, r.Status, r.Body)
		}
	}
}
