package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"math/big"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/informe/informe/internal/api"
	"github.com/informe/informe/internal/pgserver/pgtest"
	"github.com/informe/informe/internal/road"
)

// odataError is the body of an OData error response.
type odataError struct {
	Error struct{ Code, Message, Target string } `json:"error"`
}

// wantODataError checks that r is an OData error of status and code whose
// target is target.
func wantODataError(t *testing.T, r response, status int, code, target string) odataError {
	t.Helper()
	if r.Status != status {
		t.Fatalf("status = %d, want %d: %s", r.Status, status, r.Body)
	}
	var e odataError
	if err := json.Unmarshal(r.Body, &e); err != nil {
		t.Fatalf("body %s: %v", r.Body, err)
	}
	if e.Error.Code != code || e.Error.Target != target || !strings.Contains(e.Error.Message, target) {
		t.Fatalf("body %s, want code %s, target %s and a message naming it", r.Body, code, target)
	}
	return e
}

// TestODataTextNotUTF8Is400 sends string literals holding bytes that are
// not UTF-8, or a NUL, which PostgreSQL cannot hold (22021): each is a 400
// naming the option, on the feed, on /$count and on Users, never a 500.
func TestODataTextNotUTF8Is400(t *testing.T) {
	t.Parallel()
	ts := newServer(t, pgtest.Fixture(t))
	for _, tt := range []struct {
		name, query, target string
	}{
		{"FilterFF", "$filter=task_status%20eq%20'%FF'", "$filter"},
		{"FilterNUL", "$filter=task_status%20eq%20'a%00b'", "$filter"},
		{"FilterLatin1", "$filter=contains(last_name_client,'Nu%F1ez')", "$filter"},
		{"FilterTruncated", "$filter=startswith(task_status,'%C3')", "$filter"},
		{"FilterOutsideLiteral", "$filter=task_status%00%20eq%20'a'", "$filter"},
		{"OrderByNUL", "$orderby=task_status%00", "$orderby"},
		{"SelectFF", "$select=task%FF", "$select"},
	} {
		for _, path := range []string{"/odata/GeneralReport", "/odata/GeneralReport/$count", "/odata/Users"} {
			t.Run(tt.name+path, func(t *testing.T) {
				q := tt.query
				if path == "/odata/Users" {
					// The same literals on a property of Users.
					q = strings.NewReplacer("task_status", "status", "last_name_client", "name", "task", "name").Replace(q)
				}
				r := ts.Get(t, path+"?"+q)
				wantODataError(t, r, 400, "BadRequest", tt.target)
			})
		}
	}
	// Valid UTF-8 in the same places is answered.
	for _, target := range []string{
		"/odata/GeneralReport?$filter=" + url.QueryEscape("contains(last_name_client,'Muñoz')"),
		"/odata/GeneralReport/$count?$filter=" + url.QueryEscape("startswith(client_region,'Región')"),
		"/odata/Users?$filter=" + url.QueryEscape("name eq 'Carla Díaz'"),
	} {
		if r := ts.Get(t, target); r.Status != 200 {
			t.Errorf("%s: status %d: %s", target, r.Status, r.Body)
		}
	}
}

// matchesGo checks that $filter filter selects, in order, exactly the rows
// of all (the whole unfiltered feed) that match says, on the feed and on
// /$count, and returns how many that is.
func (ts *testServer) matchesGo(t *testing.T, set string, all []map[string]any, filter string, match func(r map[string]any) bool) int {
	t.Helper()
	key := "row_id"
	if set == "Users" {
		key = "id"
	}
	var want []any
	for _, r := range all {
		if match(r) {
			want = append(want, r[key])
		}
	}
	got, _, _ := ts.walk(t, "/odata/"+set+"?$select="+key+"&$filter="+url.QueryEscape(filter), "Prefer", "odata.maxpagesize=5000")
	ids := make([]any, 0, len(got))
	for _, r := range got {
		ids = append(ids, r[key])
	}
	if !slices.Equal(ids, want) {
		t.Errorf("%s: %d rows, want %d (first got %v, first wanted %v)", filter, len(ids), len(want), first(ids), first(want))
	}
	r := ts.Get(t, "/odata/"+set+"/$count?$filter="+url.QueryEscape(filter))
	if r.Status != 200 || string(r.Body) != strconv.Itoa(len(want)) {
		t.Errorf("%s: /$count = %d %s, want %d", filter, r.Status, r.Body, len(want))
	}
	return len(want)
}

func first(s []any) any {
	if len(s) == 0 {
		return nil
	}
	return s[0]
}

// TestODataCaseMappingIsUnicode checks tolower and toupper on the seeded
// names, which the database of the tests (C locale) maps in ASCII only,
// against Go's Unicode mapping; and that eq and contains stay exact: case
// and accents count.
func TestODataCaseMappingIsUnicode(t *testing.T) {
	t.Parallel()
	ts := newServer(t, pgtest.Seeded(t))
	all, _, _ := ts.walk(t, "/odata/GeneralReport", "Prefer", "odata.maxpagesize=5000")
	prop := func(r map[string]any, name string) string { s, _ := str(r[name]); return s }
	for _, tt := range []struct {
		name, filter string
		some         bool // the seed holds matching rows
		match        func(r map[string]any) bool
	}{
		{"ToUpperEq", "toupper(last_name_client) eq 'VÁSQUEZ'", true,
			func(r map[string]any) bool { return strings.ToUpper(prop(r, "last_name_client")) == "VÁSQUEZ" }},
		{"ToLowerEq", "tolower(second_last_name_client) eq 'ñanculef'", true,
			func(r map[string]any) bool { return strings.ToLower(prop(r, "second_last_name_client")) == "ñanculef" }},
		{"ContainsToUpper", "contains(toupper(client_region),'REGIÓN')", true,
			func(r map[string]any) bool {
				return strings.Contains(strings.ToUpper(prop(r, "client_region")), "REGIÓN")
			}},
		{"StartsWithToLower", "startswith(tolower(last_name_client),'ñ')", false,
			func(r map[string]any) bool {
				return strings.HasPrefix(strings.ToLower(prop(r, "last_name_client")), "ñ")
			}},
		{"ToLowerNoAccentFolding", "tolower(last_name_client) eq 'vasquez'", false,
			func(r map[string]any) bool { return strings.ToLower(prop(r, "last_name_client")) == "vasquez" }},
		{"EqAccentsCount", "last_name_client eq 'Vasquez'", false,
			func(r map[string]any) bool { return prop(r, "last_name_client") == "Vasquez" }},
		{"EqCaseCounts", "last_name_client eq 'vásquez'", false,
			func(r map[string]any) bool { return prop(r, "last_name_client") == "vásquez" }},
		{"EqExact", "last_name_client eq 'Vásquez'", true,
			func(r map[string]any) bool { return prop(r, "last_name_client") == "Vásquez" }},
		{"ContainsAccentsCount", "contains(last_name_client,'Nunez')", false,
			func(r map[string]any) bool { return strings.Contains(prop(r, "last_name_client"), "Nunez") }},
		{"ContainsExact", "contains(last_name_client,'Núñez')", true,
			func(r map[string]any) bool { return strings.Contains(prop(r, "last_name_client"), "Núñez") }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			n := ts.matchesGo(t, "GeneralReport", all, tt.filter, tt.match)
			if tt.some && n == 0 {
				t.Fatalf("%s: the seed holds no matching row: the check proves nothing", tt.filter)
			}
		})
	}
}

// tri is a value of OData's three-valued logic.
type tri uint8

const (
	fls tri = iota
	unk     // null
	tru
)

func and3(a, b tri) tri { return min(a, b) }
func or3(a, b tri) tri  { return max(a, b) }
func not3(a tri) tri    { return tru - a }

func bool3(b bool) tri {
	if b {
		return tru
	}
	return fls
}

// strFunc3 is a Boolean string function of a property: null when it is.
func strFunc3(r map[string]any, name string, f func(string) bool) tri {
	s, ok := str(r[name])
	if !ok {
		return unk
	}
	return bool3(f(s))
}

// TestODataNotOfNullIsNotTrue checks OData's null rules (4.01, URL
// Conventions 5.1.1) computed in Go: a function of null is null, not null
// is null (so "not contains(task,'recurso')", Power Query's "does not
// contain", keeps no row without a task), while a comparison is never
// null (null eq 'a' is false, so not of it is true; null gt 50 is false),
// and null eq null is true.
func TestODataNotOfNullIsNotTrue(t *testing.T) {
	t.Parallel()
	ts := newServer(t, pgtest.Seeded(t))
	all, _, _ := ts.walk(t, "/odata/GeneralReport", "Prefer", "odata.maxpagesize=5000")
	nullTask := 0
	var someTask string
	for _, r := range all {
		if s, ok := str(r["task"]); !ok {
			nullTask++
		} else if someTask == "" {
			someTask = s
		}
	}
	if nullTask == 0 || someTask == "" {
		t.Fatalf("%d rows without a task, a task %q: the checks prove nothing", nullTask, someTask)
	}
	contains := func(name, sub string) func(r map[string]any) tri {
		return func(r map[string]any) tri {
			return strFunc3(r, name, func(s string) bool { return strings.Contains(s, sub) })
		}
	}
	recurso := contains("task", "recurso")
	progress := func(r map[string]any) (float64, bool) { return num(r["task_progress"]) }
	eqTask := func(r map[string]any) tri { s, ok := str(r["task"]); return bool3(ok && s == someTask) }
	gt50 := func(r map[string]any) tri { f, ok := progress(r); return bool3(ok && f > 50) }
	eq0 := func(r map[string]any) tri { f, ok := progress(r); return bool3(ok && f == 0) }
	isTrue := func(f func(r map[string]any) tri) func(r map[string]any) bool {
		return func(r map[string]any) bool { return f(r) == tru }
	}
	for _, tt := range []struct {
		name, filter string
		match        func(r map[string]any) tri
	}{
		{"NotContains", "not contains(task,'recurso')", func(r map[string]any) tri { return not3(recurso(r)) }},
		{"NotContainsPassport", "not contains(passport_client_contract,'60')",
			func(r map[string]any) tri { return not3(contains("passport_client_contract", "60")(r)) }},
		{"NotStartsWith", "not startswith(task,'Re')",
			func(r map[string]any) tri {
				return not3(strFunc3(r, "task", func(s string) bool { return strings.HasPrefix(s, "Re") }))
			}},
		{"NotEndsWith", "not endswith(task,'a')",
			func(r map[string]any) tri {
				return not3(strFunc3(r, "task", func(s string) bool { return strings.HasSuffix(s, "a") }))
			}},
		{"NotContainsToLower", "not contains(tolower(task),'recurso')",
			func(r map[string]any) tri {
				return not3(strFunc3(r, "task", func(s string) bool { return strings.Contains(strings.ToLower(s), "recurso") }))
			}},
		{"NotNotContains", "not not contains(task,'recurso')", recurso},
		{"NotEq", "not (task eq '" + someTask + "')", func(r map[string]any) tri { return not3(eqTask(r)) }},
		{"NotGt", "not (task_progress gt 50)", func(r map[string]any) tri { return not3(gt50(r)) }},
		{"NotOr", "not (contains(task,'recurso') or task_progress eq 0)",
			func(r map[string]any) tri { return not3(or3(recurso(r), eq0(r))) }},
		{"NotAnd", "not (contains(task,'recurso') and task_progress gt 50)",
			func(r map[string]any) tri { return not3(and3(recurso(r), gt50(r))) }},
		{"ContainsEqFalse", "contains(task,'recurso') eq false",
			func(r map[string]any) tri { return bool3(recurso(r) == fls) }},
		{"ContainsNeTrue", "contains(task,'recurso') ne true",
			func(r map[string]any) tri { return bool3(recurso(r) != tru) }},
		{"ContainsEqNull", "contains(task,'recurso') eq null",
			func(r map[string]any) tri { return bool3(recurso(r) == unk) }},
		{"EqEqFalse", "(task eq '" + someTask + "') eq false", func(r map[string]any) tri { return bool3(eqTask(r) == fls) }},
		{"NullEqNull", "null eq null", func(map[string]any) tri { return tru }},
		{"NullNeNull", "null ne null", func(map[string]any) tri { return fls }},
		{"NotNullEqNull", "not (null eq null)", func(map[string]any) tri { return fls }},
		{"NullNeNullOrNoTask", "null ne null or task eq null", func(r map[string]any) tri { _, ok := str(r["task"]); return bool3(!ok) }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ts.matchesGo(t, "GeneralReport", all, tt.filter, isTrue(tt.match))
		})
	}
	t.Run("UsersNullEqNull", func(t *testing.T) {
		users, _, _ := ts.walk(t, "/odata/Users")
		ts.matchesGo(t, "Users", users, "null eq null", func(map[string]any) bool { return true })
		ts.matchesGo(t, "Users", users, "null ne null", func(map[string]any) bool { return false })
	})
}

// TestODataLiteralsAtTheirOwnPrecision checks that a date-time literal
// finer than the microsecond, and a decimal with more digits than the
// column's scale, are compared as written, not rounded to the column's
// precision first: expected rows computed in Go from the stored values.
func TestODataLiteralsAtTheirOwnPrecision(t *testing.T) {
	t.Parallel()
	pool := pgtest.Fixture(t)
	ctx := context.Background()
	if _, err := pool.Exec(ctx, `UPDATE tasks SET execution_date = '2022-01-11 12:53:36.471554+00' WHERE id = 4`); err != nil {
		t.Fatal(err)
	}
	ts := newServer(t, pool)
	all, _, _ := ts.walk(t, "/odata/GeneralReport")
	users, _, _ := ts.walk(t, "/odata/Users")
	instant := func(r map[string]any, name string) (time.Time, bool) {
		s, ok := str(r[name])
		if !ok {
			return time.Time{}, false
		}
		if !strings.HasSuffix(s, "Z") {
			s += "Z" // Edm.DateTimeOffset of a column without zone: UTC
		}
		tm, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			t.Fatalf("%s %q: %v", name, s, err)
		}
		return tm, true
	}
	rat := func(s string) *big.Rat {
		x, ok := new(big.Rat).SetString(s)
		if !ok {
			t.Fatalf("decimal %q", s)
		}
		return x
	}
	// cmp is the comparison of the property's value with the literal, in
	// Go at the literal's precision; null eq/ne follow OData.
	cmp := func(op string, c int, null bool) bool {
		if null {
			return op == "ne"
		}
		switch op {
		case "eq":
			return c == 0
		case "ne":
			return c != 0
		case "gt":
			return c > 0
		case "ge":
			return c >= 0
		case "lt":
			return c < 0
		}
		return c <= 0
	}
	stored := 0
	for _, r := range all {
		if tm, ok := instant(r, "execution_date"); ok && tm.Equal(time.Date(2022, 1, 11, 12, 53, 36, 471554000, time.UTC)) {
			stored++
		}
	}
	if stored == 0 {
		t.Fatal("no row holds the stored date-time: the checks prove nothing")
	}
	for _, op := range []string{"eq", "ne", "gt", "ge", "lt", "le"} {
		for _, lit := range []string{"2022-01-11T12:53:36.4715544Z", "2022-01-11T12:53:36.4715536Z", "2022-01-11T12:53:36.471554Z",
			"2022-01-11T09:53:36.4715540001-03:00", "2022-01-11T12:53:36.471554000001Z", "2022-01-11T12:53:36.471553999999Z"} {
			filter := "execution_date " + op + " " + lit
			t.Run("Report/"+filter, func(t *testing.T) {
				ts.matchesGo(t, "GeneralReport", all, filter, func(r map[string]any) bool {
					tm, ok := instant(r, "execution_date")
					return cmp(op, compareExact(t, tm, lit), !ok)
				})
			})
		}
		// Users' last_entry is a date-time without zone, to the second:
		// Carla's is 2024-05-06T07:08:09.
		for _, lit := range []string{"2024-05-06T07:08:09.0000004Z", "2024-05-06T07:08:08.9999996Z", "2024-05-06T07:08:09.000000000001Z"} {
			filter := "last_entry " + op + " " + lit
			t.Run("Users/"+filter, func(t *testing.T) {
				ts.matchesGo(t, "Users", users, filter, func(r map[string]any) bool {
					tm, ok := instant(r, "last_entry")
					return cmp(op, compareExact(t, tm, lit), !ok)
				})
			})
		}
		for _, lit := range []string{"12500.501", "12500.5000", "12500.4999999999999999999", "12500.50000000000000000001", "350000.000"} {
			want := rat(lit)
			filter := "costo_servicio " + op + " " + lit
			t.Run("Decimal/"+filter, func(t *testing.T) {
				ts.matchesGo(t, "GeneralReport", all, filter, func(r map[string]any) bool {
					s, ok := str(r["costo_servicio"])
					if !ok {
						return cmp(op, 0, true)
					}
					return cmp(op, rat(s).Cmp(want), false)
				})
			})
		}
	}
	t.Run("In", func(t *testing.T) {
		n := ts.matchesGo(t, "GeneralReport", all, "execution_date in (2022-01-11T12:53:36.4715544Z, 2022-01-11T12:53:36.471554Z)",
			func(r map[string]any) bool {
				tm, ok := instant(r, "execution_date")
				return ok && tm.Equal(time.Date(2022, 1, 11, 12, 53, 36, 471554000, time.UTC))
			})
		if n != stored {
			t.Errorf("in: %d rows, want %d", n, stored)
		}
		ts.matchesGo(t, "GeneralReport", all, "execution_date in (2022-01-11T12:53:36.4715544Z)", func(map[string]any) bool { return false })
	})
}

// compareExact compares tm, a stored value to the microsecond, with the
// date-time literal lit, whose fraction may hold up to 12 digits: -1, 0 or
// +1. (time.Parse would cut lit to the nanosecond.)
func compareExact(t *testing.T, tm time.Time, lit string) int {
	t.Helper()
	head, tail := lit, ""
	if dot := strings.IndexByte(lit, '.'); dot >= 0 {
		end := dot + 1
		for end < len(lit) && lit[end] >= '0' && lit[end] <= '9' {
			end++
		}
		frac := lit[dot+1 : end]
		if len(frac) > 6 {
			head, tail = lit[:dot+7]+lit[end:], frac[6:]
		}
	}
	want, err := time.Parse(time.RFC3339Nano, head)
	if err != nil {
		t.Fatalf("literal %q: %v", lit, err)
	}
	c := tm.Compare(want)
	if c == 0 && strings.Trim(tail, "0") != "" {
		c = -1 // the literal is finer, and more
	}
	return c
}

// slowFilter reads every row of the report and matches none: a function
// over each row's text, so that no index serves it.
const slowFilter = "contains(tolower(concat(concat(task,client_email),client_address)),'no hay tal texto')"

// TestODataCountBoundedLikeTheFeed checks that /$count is bounded as a
// page of the feed is: a statement timeout, or a request timeout, far
// below what reading every row takes answers 503, never a late 200; and a
// count under a $filter waits for a turn of the big responses, so that it
// is refused while the only turn is held.
func TestODataCountBoundedLikeTheFeed(t *testing.T) {
	t.Parallel()
	// The statement timeout is PostgreSQL's own: a statement that reads
	// every row of the report cannot end within a millisecond.
	t.Run("StatementTimeout", func(t *testing.T) {
		ts := newOpsServer(t, pgtest.Seeded(t), func(s *api.Server) { s.Limits = api.Limits{Limits: road.Limits{StatementTimeout: time.Millisecond}} })
		for _, target := range []string{
			"/odata/GeneralReport?$filter=" + url.QueryEscape(slowFilter),
			"/odata/GeneralReport/$count?$filter=" + url.QueryEscape(slowFilter),
		} {
			wantTimeout(t, ts.Get(t, target), target, "the query took longer than the database allows")
		}
	})
	// The request timeout is informe's: the count is held at a gate in the
	// database past it, whatever the machine's speed, so that only the
	// timeout can end it. (The feed's pages under it: TestCutTimeouts.)
	t.Run("RequestTimeout", func(t *testing.T) {
		pool, mon := gatedDB(t)
		ts := newOpsServer(t, pool, func(s *api.Server) {
			s.Limits = api.Limits{Limits: road.Limits{RequestTimeout: 200 * time.Millisecond}}
		})
		closeGate(t, mon, "count")
		const target = "/odata/GeneralReport/$count"
		wantTimeout(t, ts.getWithin(t, 30*time.Second, target), target, "the request took longer than this server allows")
	})
	t.Run("Turns", func(t *testing.T) {
		pool, mon := gatedDB(t)
		ts := newOpsServer(t, pool, func(s *api.Server) { s.Limits.Exports, s.Limits.ExportQueue = 1, 0 })
		all, _, _ := ts.walk(t, "/odata/GeneralReport?$select=row_id,task", "Prefer", "odata.maxpagesize=5000")
		want := 0
		for _, r := range all {
			if s, ok := str(r["task"]); ok && strings.HasSuffix(s, "7") {
				want++
			}
		}
		if want == 0 {
			t.Fatal("no task ends with 7: the count proves nothing")
		}
		counted := "/odata/GeneralReport/$count?$filter=" + url.QueryEscape("endswith(task,'7')")

		open := closeGate(t, mon, "rows")
		held := ts.start(t, "/api/general-report/export?format=csv")
		waitingAtGate(t, mon)
		wantODataBusy(t, ts.getWithin(t, 30*time.Second, counted))
		if r := ts.getWithin(t, 30*time.Second, "/odata/GeneralReport/$count"); r.Status != 200 || string(r.Body) != strconv.Itoa(len(all)) {
			t.Errorf("unfiltered /$count while the turn is held: %d %s, want %d (the maintained count takes no turn)", r.Status, r.Body, len(all))
		}
		open()
		held.wait(t)
		if held.err != nil || held.status != http.StatusOK {
			t.Fatalf("the held export: status %d, error %v", held.status, held.err)
		}
		// The count gives its turn back: twice in a row.
		for range 2 {
			if r := ts.getWithin(t, 30*time.Second, counted); r.Status != 200 || string(r.Body) != strconv.Itoa(want) {
				t.Errorf("/$count after the held export: %d %s, want %d", r.Status, r.Body, want)
			}
		}
	})
}

// wantODataBusy checks that r is the 503 of a full turn queue.
func wantODataBusy(t *testing.T, r response) {
	t.Helper()
	if r.Status != http.StatusServiceUnavailable || r.Header.Get("Retry-After") == "" {
		t.Fatalf("status %d, Retry-After %q, want 503 with Retry-After: %s", r.Status, r.Header.Get("Retry-After"), r.Body)
	}
	var e odataError
	if err := json.Unmarshal(r.Body, &e); err != nil || !strings.Contains(e.Error.Message, "too many exports") {
		t.Errorf("body %s, want a message saying too many exports", r.Body)
	}
}

// TestODataSkipTokenBoundToQuery takes the next link of a filtered,
// selected, limited page and uses its $skiptoken with another query: each
// is a 400 naming $skiptoken, since the position means nothing in other
// rows; the next link itself, and the ones after it, serve the rest of
// the rows computed in Go.
func TestODataSkipTokenBoundToQuery(t *testing.T) {
	t.Parallel()
	ts := newServer(t, pgtest.Seeded(t))
	all, _, _ := ts.walk(t, "/odata/GeneralReport?$select=row_id,task_status", "Prefer", "odata.maxpagesize=5000")
	for _, tt := range []struct {
		name, query string
		match       func(r map[string]any) bool
		top         int
	}{
		{"Plain", "$select=row_id", func(map[string]any) bool { return true }, -1},
		{"Filtered", "$select=row_id&$filter=" + url.QueryEscape("task_status eq 'Pendiente'"),
			func(r map[string]any) bool { s, _ := str(r["task_status"]); return s == "Pendiente" }, 100},
		{"Ordered", "$select=row_id&$orderby=task_status desc&$filter=" + url.QueryEscape("task_status ne 'Pendiente'"),
			func(r map[string]any) bool { s, ok := str(r["task_status"]); return !ok || s != "Pendiente" }, 120},
	} {
		t.Run(tt.name, func(t *testing.T) {
			target := "/odata/GeneralReport?" + strings.ReplaceAll(tt.query, " ", "%20")
			if tt.top >= 0 {
				target += "&$top=" + strconv.Itoa(tt.top)
			}
			r, p := ts.odataGet(t, target, "Prefer", "odata.maxpagesize=7")
			if r.Status != 200 || p.NextLink == "" {
				t.Fatalf("first page: %d, next link %q", r.Status, p.NextLink)
			}
			next, err := url.Parse(p.NextLink)
			if err != nil {
				t.Fatal(err)
			}
			tok := next.Query().Get("$skiptoken")
			for _, bad := range []struct{ name, edit string }{
				{"OtherFilter", "$filter=" + url.QueryEscape("task_status eq 'Terminada'")},
				{"NoFilter", ""},
				{"Skip", "$skip=5"},
				{"OtherSelect", "$select=row_id,task"},
				{"OtherTop", "$top=3"},
				{"OtherOrder", "$orderby=task_end_date"},
			} {
				if bad.name == "NoFilter" && !strings.Contains(tt.query, "$filter") {
					continue
				}
				t.Run(bad.name, func(t *testing.T) {
					v := next.Query()
					switch {
					case bad.name == "NoFilter":
						v.Del("$filter")
					case strings.HasPrefix(bad.edit, "$skip="):
						v.Set("$skip", "5")
					default:
						name, value, _ := strings.Cut(bad.edit, "=")
						value, _ = url.QueryUnescape(value)
						v.Set(name, value)
					}
					if v.Get("$skiptoken") != tok {
						t.Fatal("the token was lost")
					}
					wantODataError(t, ts.Get(t, "/odata/GeneralReport?"+v.Encode()), 400, "BadRequest", "$skiptoken")
				})
			}
			// The next links serve the rest, each row once, in order; for
			// the whole report, its first ten pages suffice.
			pages := 0
			if tt.top < 0 {
				pages = 10
			}
			got, _, _ := ts.walkFirst(t, target, pages, "Prefer", "odata.maxpagesize=7")
			var want []any
			for _, r := range all {
				if tt.match(r) {
					want = append(want, r["row_id"])
				}
			}
			if tt.name == "Ordered" {
				seen := map[any]bool{}
				for _, r := range got {
					if seen[r["row_id"]] {
						t.Fatalf("row %v twice", r["row_id"])
					}
					seen[r["row_id"]] = true
				}
				if len(got) != min(tt.top, len(want)) {
					t.Fatalf("%d rows, want %d", len(got), min(tt.top, len(want)))
				}
				return
			}
			if tt.top >= 0 {
				want = want[:min(tt.top, len(want))]
			} else {
				want = want[:min(len(want), len(got))]
			}
			ids := make([]any, 0, len(got))
			for _, r := range got {
				ids = append(ids, r["row_id"])
			}
			if !slices.Equal(ids, want) {
				t.Fatalf("%d rows, want %d", len(ids), len(want))
			}
		})
	}
}

// walkWith follows next links from target like walk, calling between(n)
// after page n (from 1) has been read and before the next is asked for.
func (ts *testServer) walkWith(t *testing.T, target string, between func(page int, rows []map[string]any), header ...string) []map[string]any {
	t.Helper()
	var all []map[string]any
	for page := 1; ; page++ {
		if page > 1000 {
			t.Fatal("the walk does not end")
		}
		r, p := ts.odataGet(t, target, header...)
		if r.Status != 200 {
			t.Fatalf("%s: status %d: %s", target, r.Status, r.Body)
		}
		for _, raw := range p.Value {
			var m map[string]any
			dec := json.NewDecoder(bytes.NewReader(raw))
			dec.UseNumber()
			if err := dec.Decode(&m); err != nil {
				t.Fatal(err)
			}
			all = append(all, m)
		}
		if p.NextLink == "" {
			return all
		}
		between(page, all)
		u, err := url.Parse(p.NextLink)
		if err != nil {
			t.Fatal(err)
		}
		target = u.RequestURI()
	}
}

// TestODataPagingUnderUpdates shows what docs/odata.md promises of next
// links while rows are written between pages. In the default (key) order
// every row comes exactly once, in key order, whatever is updated. Under
// $orderby=task_progress, a row already sent whose progress is moved
// behind the position comes a second time, and a row not yet sent whose
// progress is moved before the position never comes.
func TestODataPagingUnderUpdates(t *testing.T) {
	t.Parallel()
	const header = "odata.maxpagesize=4"
	progress := func(r map[string]any) (float64, bool) { return num(r["task_progress"]) }
	task := func(r map[string]any) string { return strings.Split(r["row_id"].(string), "-")[2] }
	set := func(t *testing.T, pool *pgxpool.Pool, id, progress string) {
		t.Helper()
		if _, err := pool.Exec(context.Background(), "UPDATE tasks SET progress = "+progress+" WHERE id = $1", id); err != nil {
			t.Fatal(err)
		}
	}
	count := func(rows []map[string]any) map[any]int {
		n := map[any]int{}
		for _, r := range rows {
			n[r["row_id"]]++
		}
		return n
	}

	t.Run("KeyOrder", func(t *testing.T) {
		pool := pgtest.Fixture(t)
		ts := newServer(t, pool)
		before, _, _ := ts.walk(t, "/odata/GeneralReport?$select=row_id,task_progress")
		// Between pages, every task's progress changes, the rows sent
		// first going to the end of a progress order and the others to its
		// start.
		got := ts.walkWith(t, "/odata/GeneralReport?$select=row_id,task_progress", func(page int, sent []map[string]any) {
			if _, err := pool.Exec(context.Background(), `UPDATE tasks SET progress = CASE WHEN progress IS NULL THEN 100 ELSE NULL END`); err != nil {
				t.Fatal(err)
			}
		}, "Prefer", header)
		if len(got) != len(before) {
			t.Fatalf("%d rows, want %d", len(got), len(before))
		}
		for i := range got {
			if got[i]["row_id"] != before[i]["row_id"] {
				t.Fatalf("row %d is %v, want %v: every key once, in key order", i, got[i]["row_id"], before[i]["row_id"])
			}
		}
	})

	t.Run("OrderBy", func(t *testing.T) {
		pool := pgtest.Fixture(t)
		ts := newServer(t, pool)
		const target = "/odata/GeneralReport?$select=row_id,task_progress&$orderby=task_progress"
		before, _, _ := ts.walk(t, target)
		var twice, never string // row ids
		got := ts.walkWith(t, target, func(page int, sent []map[string]any) {
			if page != 1 {
				return
			}
			last := sent[len(sent)-1]
			p, ok := progress(last)
			if !ok || p >= 100 {
				t.Fatalf("the first page ends at progress %v: the fixture no longer shows both moves", last["task_progress"])
			}
			seen := map[any]bool{}
			for _, r := range sent {
				seen[r["row_id"]] = true
				if twice == "" && task(r) != "0" {
					twice = r["row_id"].(string) // sent: moved behind the position
					set(t, pool, task(r), "100")
				}
			}
			for _, r := range before {
				if q, ok := progress(r); ok && q > p && !seen[r["row_id"]] && task(r) != "0" {
					never = r["row_id"].(string) // not sent: moved before the position
					set(t, pool, task(r), "NULL")
					break
				}
			}
			if twice == "" || never == "" {
				t.Fatalf("no row to move (sent %v)", sent)
			}
		}, "Prefer", header)
		n := count(got)
		if n[twice] != 2 {
			t.Errorf("row %s, moved behind the position after it was sent, came %d times; want 2", twice, n[twice])
		}
		if n[never] != 0 {
			t.Errorf("row %s, moved before the position before it was sent, came %d times; want 0", never, n[never])
		}
		for _, r := range before {
			if id := r["row_id"]; id != twice && id != never && n[id] != 1 {
				t.Errorf("row %v, whose progress stayed put, came %d times; want 1", id, n[id])
			}
		}
		if len(got) != len(before) {
			t.Errorf("%d rows, want %d: one twice and one never", len(got), len(before))
		}
	})
}

// wantTimeout checks that r is the OData 503 of a timeout whose message
// says msg.
func wantTimeout(t *testing.T, r response, target, msg string) {
	t.Helper()
	if r.Status != http.StatusServiceUnavailable {
		t.Fatalf("%s: status %d, want 503: %.300s", target, r.Status, r.Body)
	}
	var e odataError
	if err := json.Unmarshal(r.Body, &e); err != nil || !strings.Contains(e.Error.Message, msg) {
		t.Errorf("%s: body %s, want a message saying %q", target, r.Body, msg)
	}
}
