package api_test

import (
	"context"
	"encoding/xml"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/informe/informe/internal/api/apitest"
	"github.com/informe/informe/internal/pgserver/pgtest"
)

// TestODataLiteralEdgesOnEveryDoor checks, on every door (the feed, the
// CSV export, the JSON page and informe export), the literals at the edge
// of what PostgreSQL holds: a date-time finer than its microseconds never
// rounded into a match, years 0000 (1 BC) and after, substring past an
// integer, and two literals compared; expected rows computed in Go from
// the stored values.
func TestODataLiteralEdgesOnEveryDoor(t *testing.T) {
	t.Parallel()
	pool := pgtest.SmallSeeded(t)
	if _, err := pool.Exec(context.Background(),
		`UPDATE tasks SET execution_date = '2021-08-01 15:54:30.096172+00' WHERE id = (SELECT min(id) FROM tasks)`); err != nil {
		t.Fatal(err)
	}
	ts := newServer(t, pool)
	all, _, _ := ts.walk(t, "/odata/GeneralReport", "Prefer", "odata.maxpagesize=5000")
	stored := time.Date(2021, 8, 1, 15, 54, 30, 96172000, time.UTC)
	// at compares a row's execution_date with stored at the microsecond,
	// and then with what the literal holds beyond it (finer: more).
	at := func(r map[string]any, cmp func(c int) bool, finer bool) bool {
		s, ok := str(r["execution_date"])
		if !ok {
			return false
		}
		tm, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			t.Fatalf("execution_date %q: %v", s, err)
		}
		c := tm.Compare(stored)
		if c == 0 && finer {
			c = -1
		}
		return cmp(c)
	}
	has := func(name string) func(r map[string]any) bool {
		return func(r map[string]any) bool { _, ok := str(r[name]); return ok }
	}
	n := 0
	for _, r := range all {
		if at(r, func(c int) bool { return c == 0 }, false) {
			n++
		}
	}
	if n == 0 {
		t.Fatal("no row holds the stored date-time: the checks prove nothing")
	}
	for _, tt := range []struct {
		name, filter string
		match        func(r map[string]any) bool
	}{
		{"Fraction10Eq", "execution_date eq 2021-08-01T15:54:30.0961720001Z",
			func(r map[string]any) bool { return false }},
		{"Fraction10EqOffset", "execution_date eq 2021-08-01T12:54:30.0961720001-03:00",
			func(r map[string]any) bool { return false }},
		{"Fraction12Zeros", "execution_date eq 2021-08-01T15:54:30.096172000000Z",
			func(r map[string]any) bool { return at(r, func(c int) bool { return c == 0 }, false) }},
		{"Fraction10Gt", "execution_date gt 2021-08-01T15:54:30.0961720001Z",
			func(r map[string]any) bool { return at(r, func(c int) bool { return c > 0 }, true) }},
		{"Fraction12Ge", "execution_date ge 2021-08-01T15:54:30.096171999999Z",
			func(r map[string]any) bool { return at(r, func(c int) bool { return c >= 0 }, false) }},
		{"Fraction12Lt", "execution_date lt 2021-08-01T15:54:30.096172000001Z",
			func(r map[string]any) bool { return at(r, func(c int) bool { return c < 0 }, true) }},
		{"Fraction11Ne", "execution_date ne 2021-08-01T15:54:30.09617200001Z",
			func(r map[string]any) bool { return true }},
		{"Fraction10In", "execution_date in (2021-08-01T15:54:30.0961720001Z, 2021-08-01T15:54:30.096172Z)",
			func(r map[string]any) bool { return at(r, func(c int) bool { return c == 0 }, false) }},
		{"YearZeroDate", "task_end_date gt 0000-01-01", has("task_end_date")},
		{"YearBeforeChristDate", "task_end_date ge -0044-03-15", has("task_end_date")},
		{"YearZeroDateTime", "execution_date ge 0000-01-01T00:00:00Z", has("execution_date")},
		{"YearFiveDigits", "task_end_date lt 10000-01-01", has("task_end_date")},
		{"YearAstronomical", "year(task_end_date) gt 0", has("task_end_date")},
		{"SubstringPastInteger", "substring(task,2147483648) eq ''", has("task")},
		// Both sides null where task is: null eq null is true.
		{"SubstringLengthPastInteger", "substring(task,0,9223372036854775807) eq task", func(r map[string]any) bool { return true }},
		{"SubstringLengthPastIntegerText", "substring(task,1,9223372036854775807) eq substring(task,1)", func(r map[string]any) bool { return true }},
		{"SubstringBothPastInteger", "substring(task,2147483648,2147483648) ne ''", func(r map[string]any) bool { return !has("task")(r) }},
		{"TwoIntegers", "1 eq 1", func(r map[string]any) bool { return true }},
		{"TwoIntegersFalse", "1 eq 2", func(r map[string]any) bool { return false }},
		{"TwoDateTimesFiner", "2021-08-01T15:54:30.0961720001Z gt 2021-08-01T15:54:30.096172Z", func(r map[string]any) bool { return true }},
		{"LiteralIn", "'a' in ('b', 'a') and task_end_date ge 0000-01-01", has("task_end_date")},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var want []any
			for _, r := range all {
				if tt.match(r) {
					want = append(want, r["row_id"])
				}
			}
			ts.matchesGo(t, "GeneralReport", all, tt.filter, tt.match)
			checkDoors(t, ts, "GeneralReport", url.Values{"$filter": {tt.filter}}, want)
		})
	}
}

// TestODataFeedEdges checks the edges of the feed's own options: a
// $skiptoken beside $skip=0, $metadata's options, and an $expand as long
// as Power Query writes one.
func TestODataFeedEdges(t *testing.T) {
	t.Parallel()
	ts := newServer(t, pgtest.SmallSeeded(t))
	t.Run("SkipTokenWithSkipZero", func(t *testing.T) {
		r, p := ts.odataGet(t, "/odata/Contracts?$top=3", "Prefer", "odata.maxpagesize=1")
		if r.Status != 200 || p.NextLink == "" {
			t.Fatalf("first page: %d, next link %q", r.Status, p.NextLink)
		}
		u, err := url.Parse(p.NextLink)
		if err != nil {
			t.Fatal(err)
		}
		if r := ts.Get(t, u.RequestURI(), "Prefer", "odata.maxpagesize=1"); r.Status != 200 {
			t.Fatalf("the next link: %d %s", r.Status, r.Body)
		}
		for _, skip := range []string{"0", "1"} {
			got := optionError(apitest.ODataOptionError(t, ts.Server, u.RequestURI()+"&$skip="+skip))
			if want := (optionError{400, "bad_skiptoken", "$skiptoken", 0}); got != want {
				t.Errorf("$skip=%s: got %+v, want %+v", skip, got, want)
			}
		}
	})
	t.Run("Metadata", func(t *testing.T) {
		for _, tt := range []struct {
			query  string
			status int
			target string
			msg    string
		}{
			{"", 200, "", ""},
			{"?$format=xml", 200, "", ""},
			{"?$format=application/xml", 200, "", ""},
			{"?access_token=" + ts.Token, 200, "", ""},
			{"?foo=1", 400, "foo", `unknown query parameter "foo"`},
			{"?$top=1", 400, "$top", "$top is not an option of $metadata"},
			{"?$format=json", 406, "$format", "CSDL JSON (OData 4.01) is not written"},
			{"?$format=application/json", 406, "$format", "CSDL JSON"},
		} {
			r := ts.Get(t, "/odata/$metadata"+tt.query)
			if tt.status == 200 {
				if r.Status != 200 || !strings.HasPrefix(r.Header.Get("Content-Type"), "application/xml") {
					t.Errorf("%s: %d %s %.100s", tt.query, r.Status, r.Header.Get("Content-Type"), r.Body)
				}
				continue
			}
			e := wantODataError(t, r, tt.status, strings.ReplaceAll(http.StatusText(tt.status), " ", ""), tt.target)
			if !strings.Contains(e.Error.Message, tt.msg) {
				t.Errorf("%s: message %q, want %q in it", tt.query, e.Error.Message, tt.msg)
			}
		}
	})
	t.Run("ExpandAsPowerQueryWritesIt", func(t *testing.T) {
		r := ts.Get(t, "/odata/$metadata")
		if r.Status != 200 {
			t.Fatalf("$metadata: %d", r.Status)
		}
		expands := everyExpansion(t, r.Body)
		if len(expands) == 0 {
			t.Fatal("no set has navigations: the check proves nothing")
		}
		longest := 0
		for set, expand := range expands {
			longest = max(longest, len(expand))
			// Every navigation of the set, each with every property of its
			// target chosen, in any spelling of $expand.
			for _, name := range []string{"$expand", "$Expand"} {
				target := "/odata/" + set + "?$top=1&" + name + "=" + url.QueryEscape(expand)
				if r := ts.Get(t, target); r.Status != 200 {
					t.Errorf("%s: %d %.300s", target, r.Status, r.Body)
				}
			}
		}
		t.Logf("the longest $expand of every navigation and property: %d bytes", longest)
		// Past the limit, a 400 naming $expand.
		target := "/odata/Contracts?$expand=" + url.QueryEscape("Processes($select="+strings.Repeat("process_id,", 200)+"process_id)")
		wantODataError(t, ts.Get(t, target), 400, "BadRequest", "$expand")
	})
}

// everyExpansion reads a CSDL document and returns, for each entity set
// with navigations, the $expand of all of them, each with a $select of
// every property of its target, as Power Query writes it when every column
// of every navigation is ticked.
func everyExpansion(t *testing.T, doc []byte) map[string]string {
	t.Helper()
	var csdl struct {
		Schemas []struct {
			Types []struct {
				Name  string `xml:"Name,attr"`
				Props []struct {
					Name string `xml:"Name,attr"`
				} `xml:"Property"`
				Navs []struct {
					Name string `xml:"Name,attr"`
					Type string `xml:"Type,attr"`
				} `xml:"NavigationProperty"`
			} `xml:"EntityType"`
			Container struct {
				Sets []struct {
					Name string `xml:"Name,attr"`
					Type string `xml:"EntityType,attr"`
				} `xml:"EntitySet"`
			} `xml:"EntityContainer"`
		} `xml:"DataServices>Schema"`
	}
	if err := xml.Unmarshal(doc, &csdl); err != nil || len(csdl.Schemas) != 1 {
		t.Fatalf("$metadata: %v", err)
	}
	s := csdl.Schemas[0]
	props := map[string][]string{}
	for _, typ := range s.Types {
		for _, p := range typ.Props {
			props[typ.Name] = append(props[typ.Name], p.Name)
		}
	}
	out := map[string]string{}
	for _, set := range s.Container.Sets {
		typeName := set.Type[strings.LastIndex(set.Type, ".")+1:]
		var items []string
		for _, typ := range s.Types {
			if typ.Name != typeName {
				continue
			}
			for _, nav := range typ.Navs {
				target := strings.TrimSuffix(nav.Type[strings.LastIndex(nav.Type, ".")+1:], ")")
				if len(props[target]) == 0 {
					t.Fatalf("%s/%s: no properties of %s", set.Name, nav.Name, target)
				}
				items = append(items, fmt.Sprintf("%s($select=%s)", nav.Name, strings.Join(props[target], ",")))
			}
		}
		if len(items) > 0 {
			out[set.Name] = strings.Join(items, ",")
		}
	}
	return out
}
