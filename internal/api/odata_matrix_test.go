package api_test

import (
	"cmp"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/informe/informe/internal/dataset"
	"github.com/informe/informe/internal/pgserver/pgtest"
)

// A model of the feed's values in Go, to check $filter and $orderby
// against: every comparison operator on every property type, the string
// and date functions, nulls, and orders, each computed here over the whole
// feed and compared with what informe returns, row for row and in order.
// The test databases are created with --no-locale, so text compares and
// sorts by bytes and tolower/toupper change ASCII letters only, as
// PostgreSQL does in the C locale.

// value is one property's value in a row: nil, or its typed form.
type value struct {
	null bool
	num  float64   // Int64, Decimal
	text string    // String, and Date as YYYY-MM-DD
	at   time.Time // DateTimeOffset
}

// typedValue reads a feed value of kind k.
func typedValue(t *testing.T, k dataset.Kind, v any) value {
	t.Helper()
	if v == nil {
		return value{null: true}
	}
	s := fmt.Sprint(v)
	switch k {
	case dataset.Integer, dataset.Decimal:
		f, err := strconv.ParseFloat(s, 64)
		if err != nil {
			t.Fatalf("number %q: %v", s, err)
		}
		return value{num: f}
	case dataset.Timestamp, dataset.Timestamptz:
		at, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			t.Fatalf("date-time %q: %v", s, err)
		}
		return value{at: at}
	}
	return value{text: s}
}

// compareValues orders two non-null values of kind k.
func compareValues(k dataset.Kind, a, b value) int {
	switch k {
	case dataset.Integer, dataset.Decimal:
		return cmp.Compare(a.num, b.num)
	case dataset.Timestamp, dataset.Timestamptz:
		return a.at.Compare(b.at)
	}
	return strings.Compare(a.text, b.text)
}

// literal writes v as an OData literal of kind k.
func literal(k dataset.Kind, v value) string {
	switch {
	case v.null:
		return "null"
	case k == dataset.Integer || k == dataset.Decimal:
		return strconv.FormatFloat(v.num, 'f', -1, 64)
	case k == dataset.Timestamp || k == dataset.Timestamptz:
		return v.at.UTC().Format(time.RFC3339Nano)
	case k == dataset.Date:
		return v.text
	}
	return "'" + strings.ReplaceAll(v.text, "'", "''") + "'"
}

// holds applies a comparison operator with OData's null rules: eq is true
// for two nulls, ne when exactly one side is null, and the order
// operators never with a null.
func holds(op string, k dataset.Kind, a, b value) bool {
	if a.null || b.null {
		switch op {
		case "eq":
			return a.null && b.null
		case "ne":
			return a.null != b.null
		}
		return false
	}
	c := compareValues(k, a, b)
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

// entitySetModel is what the matrix needs of an entity set.
type entitySetModel struct {
	name  string
	key   string // the key property
	cols  []dataset.Column
	props []string // the properties tested, all when nil
	rows  []map[string]any
}

func (m entitySetModel) kind(prop string) dataset.Kind {
	for _, c := range m.cols {
		if c.Name == prop {
			return c.Kind
		}
	}
	return dataset.Text
}

// values returns the distinct non-null values of prop, in order.
func (m entitySetModel) values(t *testing.T, prop string) []value {
	k := m.kind(prop)
	var vs []value
	for _, r := range m.rows {
		if v := typedValue(t, k, r[prop]); !v.null {
			vs = append(vs, v)
		}
	}
	slices.SortFunc(vs, func(a, b value) int { return compareValues(k, a, b) })
	return slices.CompactFunc(vs, func(a, b value) bool { return compareValues(k, a, b) == 0 })
}

// check asks for the rows matching filter, in the feed's order, and
// compares their keys with those of the rows match keeps. It returns how
// many rows matched.
func (m entitySetModel) check(t *testing.T, ts *testServer, filter string, match func(r map[string]any) bool) int {
	t.Helper()
	var want []any
	for _, r := range m.rows {
		if match(r) {
			want = append(want, r[m.key])
		}
	}
	got, _, _ := ts.walk(t, "/odata/"+m.name+"?$select="+m.key+"&$filter="+url.QueryEscape(filter), "Prefer", "odata.maxpagesize=10000")
	var ids []any
	for _, r := range got {
		ids = append(ids, r[m.key])
	}
	if !slices.Equal(ids, want) {
		t.Errorf("$filter=%s: %d rows, want %d (first rows %v, want %v)", filter, len(ids), len(want), ids[:min(len(ids), 5)], want[:min(len(want), 5)])
	}
	checkDoors(t, ts, m.name, url.Values{"$filter": {filter}}, want)
	return len(want)
}

// matrixSets reads both entity sets whole, with the properties tested: in
// the report two of each type (one of them with nulls, where the data
// has them), in Users every one.
func matrixSets(t *testing.T, ts *testServer) []entitySetModel {
	reportRows, _, _ := ts.walk(t, "/odata/GeneralReport", "Prefer", "odata.maxpagesize=10000")
	userRows, _, _ := ts.walk(t, "/odata/Users", "Prefer", "odata.maxpagesize=10000")
	return []entitySetModel{
		{name: "GeneralReport", key: "row_id", cols: dataset.GeneralReport.Columns, rows: reportRows, props: []string{
			"process_id", "quantity_quotas", // Int64
			"costo_servicio",                      // Decimal
			"task_end_date", "date_first_payment", // Date
			"execution_date", "contract_creation_date", // DateTimeOffset
			"task_status", "client_email", "client_rut", // String
		}},
		{name: "Users", key: "id", cols: dataset.Users.Columns, rows: userRows},
	}
}

// TestODataMatrix checks every comparison operator on every property type,
// every function, and orders on every property type, against the model,
// through the feed and through every other door (checkDoors).
func TestODataMatrix(t *testing.T) {
	t.Parallel() // on a database of its own
	ts := newServer(t, pgtest.SmallSeeded(t))
	sets := matrixSets(t, ts)
	t.Run("Operators", func(t *testing.T) { filterEveryOperator(t, ts, sets) })
	t.Run("Functions", func(t *testing.T) { filterEveryFunction(t, ts, sets[0]) })
	t.Run("Orders", func(t *testing.T) { orderEveryType(t, ts, sets) })
}

// filterEveryOperator checks eq, ne, gt, ge, lt, le and in against values
// from each property's values, and eq and ne against null, on every
// property type of both entity sets.
func filterEveryOperator(t *testing.T, ts *testServer, sets []entitySetModel) {
	for _, m := range sets {
		props := m.props
		if props == nil {
			for _, c := range m.cols {
				props = append(props, c.Name)
			}
		}
		for _, prop := range props {
			k := m.kind(prop)
			vs := m.values(t, prop)
			if len(vs) == 0 {
				t.Fatalf("%s.%s has no values", m.name, prop)
			}
			mid := vs[len(vs)/2]
			t.Run(m.name+"/"+prop, func(t *testing.T) {
				for _, op := range []string{"eq", "ne", "gt", "ge", "lt", "le"} {
					for _, v := range []value{mid, {null: true}} {
						if v.null && op != "eq" && op != "ne" {
							continue // an order against null is a 400
						}
						m.check(t, ts, prop+" "+op+" "+literal(k, v), func(r map[string]any) bool {
							return holds(op, k, typedValue(t, k, r[prop]), v)
						})
					}
				}
				if len(vs) > 2 {
					in := []value{vs[0], vs[len(vs)-1]}
					m.check(t, ts, prop+" in ("+literal(k, in[0])+","+literal(k, in[1])+")", func(r map[string]any) bool {
						v := typedValue(t, k, r[prop])
						return holds("eq", k, v, in[0]) || holds("eq", k, v, in[1])
					})
				}
			})
		}
	}
}

// filterEveryFunction checks the string and date functions, and not,
// and, or and parentheses, over the report.
func filterEveryFunction(t *testing.T, ts *testServer, m entitySetModel) {
	text := func(r map[string]any, prop string) (string, bool) { return str(r[prop]) }
	email := m.values(t, "client_email")[len(m.values(t, "client_email"))/3].text
	task := m.values(t, "task")[0].text
	status := m.values(t, "task_status")[0].text
	at := slices.Index([]rune(email), '@')
	part := email[1:min(len(email), 4)]
	q := func(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }
	datePart := func(prop string, part func(time.Time) int, want int) func(r map[string]any) bool {
		return func(r map[string]any) bool {
			s, ok := text(r, prop)
			if !ok {
				return false
			}
			layout := time.RFC3339Nano
			if len(s) == len("2006-01-02") {
				layout = time.DateOnly
			}
			at, err := time.Parse(layout, s)
			return err == nil && part(at.UTC()) == want
		}
	}
	strFn := func(prop string, f func(s string) bool) func(r map[string]any) bool {
		return func(r map[string]any) bool {
			s, ok := text(r, prop)
			return ok && f(s)
		}
	}
	runes := func(s string) []rune { return []rune(s) }
	for _, tt := range []struct {
		filter string
		match  func(r map[string]any) bool
	}{
		{"contains(client_email," + q(part) + ")", strFn("client_email", func(s string) bool { return strings.Contains(s, part) })},
		// contains of null is null, and not null is not true: no row
		// without an e-mail (OData 4.01, URL Conventions 5.1.1).
		{"not contains(client_email," + q(part) + ")", func(r map[string]any) bool {
			s, ok := text(r, "client_email")
			return ok && !strings.Contains(s, part)
		}},
		{"startswith(client_email," + q(email[:2]) + ")", strFn("client_email", func(s string) bool { return strings.HasPrefix(s, email[:2]) })},
		{"endswith(client_email," + q(email[len(email)-4:]) + ")", strFn("client_email", func(s string) bool { return strings.HasSuffix(s, email[len(email)-4:]) })},
		// Case maps by Unicode's rules (ÁÉÍÓÚÑ too), whatever the database's locale.
		{"tolower(task) eq " + q(strings.ToLower(task)), strFn("task", func(s string) bool { return strings.ToLower(s) == strings.ToLower(task) })},
		{"toupper(task) eq " + q(strings.ToUpper(task)), strFn("task", func(s string) bool { return strings.ToUpper(s) == strings.ToUpper(task) })},
		{"trim(task) eq " + q(strings.Trim(task, " ")), strFn("task", func(s string) bool { return strings.Trim(s, " ") == strings.Trim(task, " ") })},
		{"length(client_email) ge " + strconv.Itoa(utf8.RuneCountInString(email)), strFn("client_email", func(s string) bool {
			return utf8.RuneCountInString(s) >= utf8.RuneCountInString(email)
		})},
		{"concat(task_status,'!') eq " + q(status+"!"), strFn("task_status", func(s string) bool { return s+"!" == status+"!" })},
		{"concat(concat(first_name_client,' '),last_name_client) ne 'x'", func(map[string]any) bool { return true }},
		{"indexof(client_email,'@') eq " + strconv.Itoa(at), strFn("client_email", func(s string) bool { return slices.Index(runes(s), '@') == at })},
		{"indexof(client_email,'#') eq -1", strFn("client_email", func(s string) bool { return !strings.Contains(s, "#") })},
		{"substring(client_email,1) eq " + q(string(runes(email)[1:])), strFn("client_email", func(s string) bool {
			return len(runes(s)) >= 1 && string(runes(s)[1:]) == string(runes(email)[1:])
		})},
		{"substring(client_email,0,3) eq " + q(string(runes(email)[:3])), strFn("client_email", func(s string) bool {
			return string(runes(s)[:min(3, len(runes(s)))]) == string(runes(email)[:3])
		})},
		{"year(task_end_date) eq 2024", datePart("task_end_date", time.Time.Year, 2024)},
		{"month(task_end_date) eq 3", datePart("task_end_date", func(at time.Time) int { return int(at.Month()) }, 3)},
		{"day(date_first_payment) lt 2", datePart("date_first_payment", time.Time.Day, 1)},
		{"hour(execution_date) eq 13", datePart("execution_date", time.Time.Hour, 13)},
		{"minute(execution_date) eq 30", datePart("execution_date", time.Time.Minute, 30)},
		{"second(contract_creation_date) eq 0", datePart("contract_creation_date", time.Time.Second, 0)},
		{"(task_status eq " + q(task) + " or costo_servicio lt 60000) and not (task_end_date eq null)", func(r map[string]any) bool {
			s, _ := text(r, "task_status")
			c, cok := num(r["costo_servicio"])
			return (s == task || (cok && c < 60000)) && r["task_end_date"] != nil
		}},
	} {
		t.Run(tt.filter, func(t *testing.T) {
			if m.check(t, ts, tt.filter, tt.match) == 0 {
				t.Errorf("no row matches: the case checks nothing")
			}
		})
	}
}

// orderEveryType sorts each entity set by a property of each type,
// ascending and descending, and follows the next links at page sizes 1, 7
// (the first rows) and 1,000 (every row): the rows come in the order Go
// computes over the feed, nulls first ascending and last descending, ties
// in the feed's own order.
func orderEveryType(t *testing.T, ts *testServer, sets []entitySetModel) {
	for _, c := range []struct {
		set  int
		prop string
	}{
		{0, "quantity_quotas"}, {0, "costo_servicio"}, {0, "task_end_date"}, {0, "execution_date"}, {0, "client_email"},
		{1, "id"}, {1, "name"}, {1, "last_entry"}, {1, "status"},
	} {
		m := sets[c.set]
		k := m.kind(c.prop)
		for _, desc := range []bool{false, true} {
			want := slices.Clone(m.rows)
			slices.SortStableFunc(want, func(a, b map[string]any) int {
				x, y := typedValue(t, k, a[c.prop]), typedValue(t, k, b[c.prop])
				r := 0
				switch {
				case x.null && y.null:
				case x.null:
					r = -1
				case y.null:
					r = 1
				default:
					r = compareValues(k, x, y)
				}
				if desc {
					r = -r
				}
				return r
			})
			order := c.prop
			if desc {
				order += " desc"
			}
			for _, size := range []int{1, 7, 1000} {
				t.Run(fmt.Sprintf("%s/%s/%d", m.name, order, size), func(t *testing.T) {
					target := "/odata/" + m.name + "?$select=" + m.key + "&$orderby=" + url.QueryEscape(order)
					want := want
					if size < 1000 {
						want = want[:min(len(want), size*30)]
						target += "&$top=" + strconv.Itoa(len(want))
					}
					got, _, _ := ts.walk(t, target, "Prefer", fmt.Sprintf("odata.maxpagesize=%d", size))
					if len(got) != len(want) {
						t.Fatalf("%d rows, want %d", len(got), len(want))
					}
					for i := range got {
						if fmt.Sprint(got[i][m.key]) != fmt.Sprint(want[i][m.key]) {
							t.Fatalf("row %d is %v, want %v (%s %v)", i, got[i][m.key], want[i][m.key], c.prop, want[i][c.prop])
						}
					}
					if size == 1000 { // every row, through every door
						keys := make([]any, len(want))
						for i, r := range want {
							keys[i] = r[m.key]
						}
						checkDoors(t, ts, m.name, url.Values{"$orderby": {order}}, keys)
					}
				})
			}
		}
	}
}
