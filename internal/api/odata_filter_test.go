package api_test

import (
	"context"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/informe/informe/internal/pgserver/pgtest"
)

// str returns a feed value as a string and whether it is not null.
func str(v any) (string, bool) {
	if v == nil {
		return "", false
	}
	return fmt.Sprint(v), true
}

func num(v any) (float64, bool) {
	s, ok := str(v)
	if !ok {
		return 0, false
	}
	f, err := strconv.ParseFloat(s, 64)
	return f, err == nil
}

// TestODataFilterMatchesGo checks each $filter against the same predicate
// computed in Go over the whole unfiltered feed, row for row, in order,
// following next links at several page sizes.
func TestODataFilterMatchesGo(t *testing.T) {
	t.Parallel() // on a database of its own
	ts := newServer(t, pgtest.SmallSeeded(t))
	all, _, _ := ts.walk(t, "/odata/GeneralReport", "Prefer", "odata.maxpagesize=5000")
	var status string
	for _, r := range all {
		if s, ok := str(r["task_status"]); ok {
			status = s
			break
		}
	}
	for _, tt := range []struct {
		name, filter string
		match        func(r map[string]any) bool
	}{
		{"Status", "task_status eq '" + status + "'", func(r map[string]any) bool { s, _ := str(r["task_status"]); return s == status }},
		{"NotStatus", "not (task_status eq '" + status + "')", func(r map[string]any) bool { s, ok := str(r["task_status"]); return !ok || s != status }},
		{"NeStatus", "task_status ne '" + status + "'", func(r map[string]any) bool { s, ok := str(r["task_status"]); return !ok || s != status }},
		{"Month", "task_end_date ge 2024-03-01 and task_end_date lt 2024-04-01", func(r map[string]any) bool {
			s, ok := str(r["task_end_date"])
			return ok && s >= "2024-03-01" && s < "2024-04-01"
		}},
		{"EndNull", "task_end_date eq null", func(r map[string]any) bool { return r["task_end_date"] == nil }},
		{"StatusOrEndNull", "task_status eq '" + status + "' or task_end_date eq null", func(r map[string]any) bool {
			s, _ := str(r["task_status"])
			return s == status || r["task_end_date"] == nil
		}},
		{"StartsWith", "startswith(client_email,'a')", func(r map[string]any) bool { s, _ := str(r["client_email"]); return strings.HasPrefix(s, "a") }},
		{"EndsWith", "endswith(client_email,'.cl')", func(r map[string]any) bool { s, _ := str(r["client_email"]); return strings.HasSuffix(s, ".cl") }},
		{"ContainsLower", "contains(tolower(task),'a')", func(r map[string]any) bool {
			s, _ := str(r["task"])
			return strings.Contains(strings.ToLower(s), "a")
		}},
		{"Length", "length(task) gt 8", func(r map[string]any) bool { s, ok := str(r["task"]); return ok && utf8.RuneCountInString(s) > 8 }},
		{"Cost", "costo_servicio gt 100000", func(r map[string]any) bool { f, ok := num(r["costo_servicio"]); return ok && f > 100000 }},
		{"CostOrNull", "costo_servicio le 50000.5 or costo_servicio eq null", func(r map[string]any) bool {
			f, ok := num(r["costo_servicio"])
			return !ok || f <= 50000.5
		}},
		{"Year", "year(execution_date) eq 2024", func(r map[string]any) bool {
			s, ok := str(r["execution_date"])
			return ok && strings.HasPrefix(s, "2024")
		}},
		{"Window", "execution_date ge 2024-03-01T00:00:00Z and execution_date lt 2024-03-01T00:00:00-03:00", func(r map[string]any) bool {
			s, ok := str(r["execution_date"])
			return ok && s >= "2024-03-01T00:00:00" && s < "2024-03-01T03:00:00"
		}},
		{"In", "task_status in ('" + status + "', null)", func(r map[string]any) bool { s, ok := str(r["task_status"]); return !ok || s == status }},
		{"IntCompare", "process_id gt 10 and process_id le 40", func(r map[string]any) bool { f, ok := num(r["process_id"]); return ok && f > 10 && f <= 40 }},
		{"RowID", "row_id eq '" + all[3]["row_id"].(string) + "'", func(r map[string]any) bool { return r["row_id"] == all[3]["row_id"] }},
	} {
		var want []any
		for _, r := range all {
			if tt.match(r) {
				want = append(want, r["row_id"])
			}
		}
		// Small pages are followed for the first rows only ($top), so
		// that the test stays short; large ones over every row.
		for _, page := range []struct{ size, top int }{{7, 40}, {1000, -1}} {
			size := page.size
			t.Run(fmt.Sprintf("%s/%d", tt.name, size), func(t *testing.T) {
				target := "/odata/GeneralReport?$count=true&$select=row_id&$filter=" + url.QueryEscape(tt.filter)
				want := want
				if page.top >= 0 {
					target += "&$top=" + strconv.Itoa(page.top)
					want = want[:min(len(want), page.top)]
				}
				got, _, first := ts.walk(t, target, "Prefer", fmt.Sprintf("odata.maxpagesize=%d", size))
				var ids []any
				for _, r := range got {
					ids = append(ids, r["row_id"])
				}
				if !slices.Equal(ids, want) {
					t.Fatalf("%s: %d rows, want %d", tt.filter, len(ids), len(want))
				}
				if page.top >= 0 {
					return
				}
				if first.Count == nil || first.Count.String() != strconv.Itoa(len(want)) {
					t.Errorf("@odata.count = %v, want %d", first.Count, len(want))
				}
				r := ts.Get(t, "/odata/GeneralReport/$count?$filter="+url.QueryEscape(tt.filter))
				if r.Status != 200 || string(r.Body) != strconv.Itoa(len(want)) {
					t.Errorf("/$count = %d %s, want %d", r.Status, r.Body, len(want))
				}
			})
		}
	}
}

// TestODataOrderByPages follows next links under several orders and page
// sizes: every row once, in the order asked for, nulls first ascending.
// Pages of 100 rows by costo_servicio often hold the last rows of one cost
// and the first of the next, which are read each cost apart.
func TestODataOrderByPages(t *testing.T) {
	t.Parallel() // on a database of its own
	ts := newServer(t, pgtest.SmallSeeded(t))
	all, _, _ := ts.walk(t, "/odata/GeneralReport", "Prefer", "odata.maxpagesize=5000")
	// costo_servicio's order comes from an index (odata's SortIndexed): its
	// pages are found from their first sort values, small pages most often
	// among equal costs.
	for _, order := range []string{"costo_servicio desc", "costo_servicio", "task_end_date", "task_status desc,execution_date", "client_email,row_id desc"} {
		for _, size := range []int{1, 7, 100, 1000} {
			if size < 1000 && order != "task_end_date" && order != "costo_servicio desc" {
				continue // small pages under two orders keep the test short
			}
			t.Run(fmt.Sprintf("%s/%d", order, size), func(t *testing.T) {
				target := "/odata/GeneralReport?$select=row_id,costo_servicio,task_end_date,task_status,execution_date,client_email&$orderby=" +
					url.QueryEscape(order)
				want := len(all)
				if size < 100 { // small pages for the first rows only
					want = size * 40
					target += "&$top=" + strconv.Itoa(want)
				}
				got, _, _ := ts.walk(t, target, "Prefer", fmt.Sprintf("odata.maxpagesize=%d", size))
				if len(got) != want {
					t.Fatalf("%d rows, want %d", len(got), want)
				}
				checkOnceInOrder(t, got, order)
			})
		}
	}
}

// checkOnceInOrder fails t unless every row of got comes once and in the
// order of $orderby order; it returns the row ids seen.
func checkOnceInOrder(t *testing.T, got []map[string]any, order string) map[any]bool {
	t.Helper()
	seen := map[any]bool{}
	for i, r := range got {
		if seen[r["row_id"]] {
			t.Fatalf("row %v twice", r["row_id"])
		}
		seen[r["row_id"]] = true
		if i > 0 && compareRows(got[i-1], r, order) > 0 {
			t.Fatalf("rows %d and %d out of order: %v then %v", i-1, i, got[i-1], r)
		}
	}
	return seen
}

// compareRows compares a and b under a $orderby of plain properties.
func compareRows(a, b map[string]any, order string) int {
	for _, item := range strings.Split(order, ",") {
		f := strings.Fields(item)
		x, xok := str(a[f[0]])
		y, yok := str(b[f[0]])
		c := 0
		switch {
		case !xok && !yok:
		case !xok:
			c = -1
		case !yok:
			c = 1
		default:
			if xf, err := strconv.ParseFloat(x, 64); err == nil && f[0] != "row_id" {
				yf, _ := strconv.ParseFloat(y, 64)
				c = map[bool]int{true: -1, false: 1}[xf < yf]
				if xf == yf {
					c = 0
				}
			} else {
				c = strings.Compare(x, y) // dates and date-times in the feed's forms sort as text
				if f[0] == "client_email" || f[0] == "task_status" || f[0] == "row_id" {
					if x != y {
						// Text sorts in the database's collation, which Go
						// does not reproduce: different texts end the check.
						return 0
					}
					c = 0
				}
			}
		}
		if len(f) == 2 && f[1] == "desc" {
			c = -c
		}
		if c != 0 {
			return c
		}
	}
	return 0
}

// TestODataKeyAndCount reads one row by key, a missing key, and /$count.
func TestODataKeyAndCount(t *testing.T) {
	t.Parallel() // on a database of its own
	ts := newServer(t, pgtest.SmallSeeded(t))
	all, _, _ := ts.walk(t, "/odata/GeneralReport", "Prefer", "odata.maxpagesize=5000")
	id := all[5]["row_id"].(string)
	r := ts.Get(t, "/odata/GeneralReport('"+id+"')")
	if r.Status != 200 || !strings.Contains(string(r.Body), `"row_id":"`+id+`"`) || !strings.Contains(string(r.Body), "$entity") {
		t.Errorf("by key: %d %s", r.Status, r.Body)
	}
	if r := ts.Get(t, "/odata/GeneralReport('999999-0-0')"); r.Status != 404 {
		t.Errorf("missing key: %d %s", r.Status, r.Body)
	}
	if r := ts.Get(t, "/odata/GeneralReport(42)"); r.Status != 400 {
		t.Errorf("unquoted key: %d %s", r.Status, r.Body)
	}
	if r := ts.Get(t, "/odata/GeneralReport/$count"); r.Status != 200 || string(r.Body) != strconv.Itoa(len(all)) {
		t.Errorf("/$count = %d %s, want %d", r.Status, r.Body, len(all))
	}
	if r := ts.Get(t, "/odata/Users(1)"); r.Status != 200 {
		t.Errorf("Users(1): %d %s", r.Status, r.Body)
	}
	if r := ts.Get(t, "/odata/Users/$count?$filter="+url.QueryEscape("startswith(email,'a') or id ge 1")); r.Status != 200 {
		t.Errorf("Users/$count: %d %s", r.Status, r.Body)
	}
}

// TestODataOrderedPagingWhileWriting follows the next links of a sorted,
// filtered feed while a writer adds and removes tasks (of processes that
// have tasks, so that no row it did not write changes): no row comes
// twice, rows come in order, and every row that existed throughout is
// read.
func TestODataOrderedPagingWhileWriting(t *testing.T) {
	t.Parallel()
	pool := pgtest.Seeded(t)
	ts := newServer(t, pool)
	const target = "/odata/GeneralReport?$select=row_id,costo_servicio,task_end_date&$orderby=costo_servicio desc,task_end_date" +
		"&$filter=task_end_date ne null or costo_servicio gt 100000"
	const order = "costo_servicio desc,task_end_date"
	before, _, _ := ts.walk(t, strings.ReplaceAll(target, " ", "%20"))

	stop := make(chan struct{})
	writerDone := make(chan error, 1)
	go func() {
		for i := 0; ; i++ {
			select {
			case <-stop:
				writerDone <- nil
				return
			default:
			}
			_, err := pool.Exec(context.Background(), `
				INSERT INTO tasks (process_id, name, status, end_date)
				SELECT id, 'nueva', 'Pendiente', date '2022-01-01' + ($1::int % 900) FROM processes p
				WHERE EXISTS (SELECT 1 FROM tasks t WHERE t.process_id = p.id AND t.name <> 'nueva')
				ORDER BY random() LIMIT 3`, i)
			if err == nil {
				_, err = pool.Exec(context.Background(), `DELETE FROM tasks WHERE name = 'nueva' AND id % 2 = 0`)
			}
			if err != nil {
				writerDone <- err
				return
			}
		}
	}()
	got, _, _ := ts.walk(t, strings.ReplaceAll(target, " ", "%20"), "Prefer", "odata.maxpagesize=700")
	close(stop)
	if err := <-writerDone; err != nil {
		t.Fatal(err)
	}
	seen := checkOnceInOrder(t, got, order)
	for _, r := range before {
		if !seen[r["row_id"]] {
			t.Fatalf("row %v existed throughout and was skipped", r["row_id"])
		}
	}
}
