package odata_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
	_ "time/tzdata" // America/Santiago whatever the machine has

	"github.com/informe/informe/export"
	"github.com/informe/informe/internal/failure"
	"github.com/informe/informe/internal/odata"
)

// A Feed is driven like every other encoder.
var _ export.Encoder = (*odata.Feed)(nil)

var update = flag.Bool("update", false, "rewrite the golden files under testdata")

const root = "https://informe.example.cl/odata"

// Rows of the general report, in order: contract 1 with process 1 (tasks
// 1 and 2) and contract 2 without processes.
var (
	row111 = reportRow(map[string]string{
		"contract_id": "1", "contract_status": "APROBADO", "code_contract": "CT-001", "quantity_quotas": "12",
		"date_first_payment": "2024-02-01", "contract_creation_date": "2024-01-15 09:30:00",
		"first_name_client_contract": "María", "costo_servicio": "350000", "benefit_center_id_service": "1",
		"process_id": "1", "task": "Redacción de demanda", "task_detail": "Se redacta la demanda, con \"comillas\"\ny salto de línea",
		"task_duration": "90", "task_progress": "50", "execution_date": "2024-03-05 14:07:09.123456+00",
		"client_id": "1", "client_rut": "12.345.678-5",
	}, "1", "1", "1")
	row112 = reportRow(map[string]string{
		"contract_id": "1", "code_contract": "CT-001", "costo_servicio": "12500.5", "process_id": "1",
		"task": "Presentación", "task_detail": "=1+1", "execution_date": "2024-07-01 14:00:00.000000+00", "client_id": "1",
	}, "1", "1", "2")
	row200 = reportRow(map[string]string{
		"contract_id": "2", "contract_status": "PENDIENTE", "code_contract": "CT-002",
		"contract_creation_date": "2024-02-20 18:45:00", "client_id": "1",
	}, "2", "", "")
)

// page encodes rows for q with opts and returns the body.
func page(t *testing.T, q *odata.Query, opts odata.FeedOptions, rows ...[][]byte) []byte {
	t.Helper()
	var b bytes.Buffer
	enc := odata.NewFeed(&b, q, opts)
	for _, r := range rows {
		if err := enc.Encode(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := enc.Close(); err != nil {
		t.Fatal(err)
	}
	if !json.Valid(b.Bytes()) {
		t.Fatalf("not valid JSON:\n%s", b.Bytes())
	}
	return b.Bytes()
}

type feedBody struct {
	Context  string           `json:"@odata.context"`
	Count    any              `json:"@odata.count"`
	Value    []map[string]any `json:"value"`
	NextLink string           `json:"@odata.nextLink"`
}

func decode(t *testing.T, body []byte) feedBody {
	t.Helper()
	d := json.NewDecoder(bytes.NewReader(body))
	d.UseNumber()
	var f feedBody
	if err := d.Decode(&f); err != nil {
		t.Fatalf("%v\n%s", err, body)
	}
	return f
}

func mustParse(t testing.TB, set *odata.EntitySet, raw string) *odata.Query {
	t.Helper()
	q, err := odata.Parse(query(raw), set)
	if err != nil {
		t.Fatal(err)
	}
	return q
}

func TestFeedValues(t *testing.T) {
	t.Parallel()
	set := reportSet(t)
	for _, tt := range []struct {
		name   string
		format odata.Format
		num    func(string) any
	}{
		{"OKNumbers", odata.Format{}, func(s string) any { return json.Number(s) }},
		{"OKIEEE754Compatible", odata.Format{IEEE754Compatible: true}, func(s string) any { return s }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			q := mustParse(t, set, "$count=true")
			body := page(t, q, odata.FeedOptions{ServiceRoot: root, Count: 3, Format: tt.format}, row111, row112, row200)
			f := decode(t, body)
			if got, want := f.Context, root+"/$metadata#GeneralReport"; got != want {
				t.Errorf("context = %q, want %q", got, want)
			}
			if got, want := f.Count, tt.num("3"); got != want {
				t.Errorf("count = %#v, want %#v", got, want)
			}
			if f.NextLink != "" {
				t.Errorf("nextLink = %q, want none", f.NextLink)
			}
			if got, want := len(f.Value), 3; got != want {
				t.Fatalf("%d entities, want %d", got, want)
			}
			for _, c := range []struct {
				row  int
				prop string
				want any
			}{
				{0, "row_id", "1-1-1"},
				{0, "contract_id", tt.num("1")},
				{0, "quantity_quotas", tt.num("12")},
				{0, "costo_servicio", tt.num("350000")},
				{0, "date_first_payment", "2024-02-01"},
				{0, "contract_creation_date", "2024-01-15T09:30:00Z"},
				{0, "execution_date", "2024-03-05T14:07:09.123456Z"},
				{0, "first_name_client_contract", "María"},
				{0, "task_detail", "Se redacta la demanda, con \"comillas\"\ny salto de línea"},
				{0, "client_rut", "12.345.678-5"},
				{0, "attended_by", nil}, // empty text is null
				{0, "client_birth_date", nil},
				{1, "row_id", "1-1-2"},
				{1, "costo_servicio", tt.num("12500.5")},
				{1, "task_detail", "=1+1"},
				{1, "execution_date", "2024-07-01T14:00:00.000000Z"},
				{1, "task_duration", nil},
				{2, "row_id", "2-0-0"},
				{2, "process_id", nil},
				{2, "task", nil},
				{2, "execution_date", nil},
				{2, "costo_servicio", nil},
			} {
				got, ok := f.Value[c.row][c.prop]
				if !ok {
					t.Errorf("entity %d has no %s", c.row, c.prop)
				} else if got != c.want {
					t.Errorf("entity %d: %s = %#v, want %#v", c.row, c.prop, got, c.want)
				}
			}
			if got, want := len(f.Value[0]), 1+len(reportDef.Columns); got != want {
				t.Errorf("entity has %d properties, want %d", got, want)
			}
		})
	}
}

func TestFeedSelect(t *testing.T) {
	t.Parallel()
	set := reportSet(t)
	for _, tt := range []struct {
		name, query, context, body string
	}{
		{"OKKeyAdded", "$select=task,contract_id", "GeneralReport(task,contract_id)",
			`{"row_id":"1-1-1","task":"Redacción de demanda","contract_id":1}`},
		{"OKKeySelected", "$select=contract_id,row_id", "GeneralReport(contract_id,row_id)",
			`{"contract_id":1,"row_id":"1-1-1"}`},
		{"OKRepeat", "$select=task,task", "GeneralReport(task)", `{"row_id":"1-1-1","task":"Redacción de demanda"}`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			body := string(page(t, mustParse(t, set, tt.query), odata.FeedOptions{ServiceRoot: root}, row111))
			want := `{"@odata.context":"` + root + `/$metadata#` + tt.context + `","value":[` + tt.body + `]}`
			if body != want {
				t.Errorf("got  %s\nwant %s", body, want)
			}
		})
	}
}

func TestFeedEmpty(t *testing.T) {
	t.Parallel()
	q := mustParse(t, reportSet(t), "$count=true&$filter=contract_id eq 99")
	got := string(page(t, q, odata.FeedOptions{ServiceRoot: root}))
	if want := `{"@odata.context":"` + root + `/$metadata#GeneralReport","@odata.count":0,"value":[]}`; got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

// TestNextLinkBuilt checks that a next link carries $format as informe
// writes it and the custom options of the request not at all, whatever
// the request held: only access_token, and only when the caller passes it.
func TestNextLinkBuilt(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name, query, token string
		want               string
	}{
		{"OKFormatJunkParameter", "$format=application/json%3Bx%3Dinforme_" + tokenBody, "",
			root + "/GeneralReport?$format=application/json&$skiptoken="},
		{"OKFormatJSON", "$format=JSON", "", root + "/GeneralReport?$format=application/json&$skiptoken="},
		{"OKCustomOptionsDropped", "Access_Token=informe_" + tokenBody + "&ACCESS_TOKEN=x&x=informe_" + tokenBody, "",
			root + "/GeneralReport?$skiptoken="},
		{"OKAccessTokenGiven", "$top=5", "informe_" + tokenBody, root + "/GeneralReport?$top=4&$skiptoken="},
	} {
		t.Run(tt.name, func(t *testing.T) {
			q := mustParse(t, reportSet(t), tt.query)
			f := decode(t, page(t, q, odata.FeedOptions{ServiceRoot: root, PageSize: 1, AccessToken: tt.token}, row111, row112))
			if !strings.HasPrefix(f.NextLink, tt.want) {
				t.Fatalf("next link %s, want it to start %s", f.NextLink, tt.want)
			}
			if got := strings.Contains(f.NextLink, tokenBody); got != (tt.token != "") {
				t.Errorf("next link %s: holds the token %v, want %v", f.NextLink, got, tt.token != "")
			}
		})
	}
}

// TestFeedPaging follows next links through a report of five rows in pages
// of two, as a client would.
func TestFeedPaging(t *testing.T) {
	t.Parallel()
	set := reportSet(t)
	all := [][][]byte{row111, row112, row200,
		reportRow(map[string]string{"contract_id": "3", "process_id": "3", "client_id": "2"}, "3", "3", ""),
		reportRow(map[string]string{"contract_id": "4", "process_id": "4", "client_id": "2"}, "4", "4", "4"),
	}
	keys := [][]int64{{1, 1, 1}, {1, 1, 2}, {2, 0, 0}, {3, 3, 0}, {4, 4, 4}}
	ids := []string{"1-1-1", "1-1-2", "2-0-0", "3-3-0", "4-4-4"}
	for _, tt := range []struct {
		name     string
		query    string
		pageSize int
		pages    [][]string
	}{
		{"OKPagesOfTwo", "$count=true&$select=task&$orderby=contract_id", 2, [][]string{ids[0:2], ids[2:4], ids[4:5]}},
		{"OKExactPages", "", 5, [][]string{ids}},
		{"OKTop", "$top=3", 2, [][]string{ids[0:2], ids[2:3]}},
		{"OKTopIsPage", "$top=2", 2, [][]string{ids[0:2]}},
		{"OKSkip", "$skip=1&$top=3", 2, [][]string{ids[1:3], ids[3:4]}},
		{"OKFilterKept", "$filter=client_id eq 1&$format=application/json%3BIEEE754Compatible%3Dtrue", 1, [][]string{ids[0:1], ids[1:2], ids[2:3], ids[3:4], ids[4:5]}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			raw := tt.query
			var got [][]string
			for n := 0; n < 10; n++ {
				q := mustParse(t, set, raw)
				// Play the store: after the key, skip, then the limit.
				var rows [][][]byte
				for i, r := range all {
					if q.After != nil && !keyAfter(keys[i], q.After) {
						continue
					}
					rows = append(rows, r)
				}
				if int(q.Skip) <= len(rows) {
					rows = rows[q.Skip:]
				} else {
					rows = nil
				}
				if lim := q.Limit(tt.pageSize); int64(len(rows)) > lim {
					rows = rows[:lim]
				}
				f := decode(t, page(t, q, odata.FeedOptions{ServiceRoot: root, PageSize: tt.pageSize, Count: 5}, rows...))
				var pg []string
				for _, e := range f.Value {
					pg = append(pg, e["row_id"].(string))
				}
				got = append(got, pg)
				if q.Count && f.Count == nil {
					t.Errorf("page %d has no @odata.count", n+1)
				}
				if f.NextLink == "" {
					break
				}
				u, err := url.Parse(f.NextLink)
				if err != nil {
					t.Fatal(err)
				}
				if got, want := u.Scheme+"://"+u.Host+u.Path, root+"/GeneralReport"; got != want {
					t.Fatalf("next link %s, want one on %s", f.NextLink, want)
				}
				if strings.Contains(f.NextLink, "+") || strings.Contains(f.NextLink, "$skip=") {
					t.Errorf("next link %s has a '+' or a $skip", f.NextLink)
				}
				if v, first := u.Query(), query(tt.query); v.Get("$filter") != first.Get("$filter") || v.Get("$format") != first.Get("$format") {
					t.Errorf("next link %s lost $filter or $format", f.NextLink)
				}
				raw = u.RawQuery
			}
			if !reflect.DeepEqual(got, tt.pages) {
				t.Errorf("pages %v, want %v", got, tt.pages)
			}
		})
	}
}

// keyAfter reports whether key k comes after after.
func keyAfter(k, after []int64) bool {
	for i := range k {
		if k[i] != after[i] {
			return k[i] > after[i]
		}
	}
	return false
}

func TestFeedUsers(t *testing.T) {
	t.Parallel()
	set := usersSet(t)
	santiago, err := time.LoadLocation("America/Santiago")
	if err != nil {
		t.Fatal(err)
	}
	rows := [][][]byte{
		userRow(map[string]string{"id": "1", "name": "Admin", "email": "a@x.cl", "username": "a@x.cl", "rut": "22222222-2",
			"phone": "", "status": "A", "created_at": "2023-01-01 08:00:00"}),
		userRow(map[string]string{"id": "3", "name": "Carla", "email": "c@x.cl", "username": "c@x.cl", "rut": "11111111-1",
			"phone": "+56955556666", "last_entry": "2024-05-06 07:08:09", "status": "A", "created_at": "2023-06-01 12:00:00",
			"updated_at": "2024-07-07 10:00:00"}),
	}
	for _, tt := range []struct {
		name string
		loc  *time.Location
		want []map[string]any
	}{
		{"OKUTC", nil, []map[string]any{
			{"id": json.Number("1"), "phone": "", "last_entry": nil, "created_at": "2023-01-01T08:00:00Z", "updated_at": nil},
			{"id": json.Number("3"), "phone": "+56955556666", "last_entry": "2024-05-06T07:08:09Z", "updated_at": "2024-07-07T10:00:00Z"},
		}},
		// Chile is at UTC-3 in its summer and UTC-4 in its winter.
		{"OKSantiago", santiago, []map[string]any{
			{"created_at": "2023-01-01T08:00:00-03:00"},
			{"last_entry": "2024-05-06T07:08:09-04:00", "created_at": "2023-06-01T12:00:00-04:00"},
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := decode(t, page(t, mustParse(t, set, ""), odata.FeedOptions{ServiceRoot: root, Location: tt.loc}, rows...))
			if got, want := f.Context, root+"/$metadata#Users"; got != want {
				t.Errorf("context = %q, want %q", got, want)
			}
			for i, want := range tt.want {
				for k, v := range want {
					if got := f.Value[i][k]; got != v {
						t.Errorf("user %d: %s = %#v, want %#v", i, k, got, v)
					}
				}
			}
		})
	}
}

func TestFeedErrors(t *testing.T) {
	t.Parallel()
	rset, uset := reportSet(t), usersSet(t)
	for _, tt := range []struct {
		name string
		set  *odata.EntitySet
		row  [][]byte
		want string
	}{
		{"ErrRowLength", rset, row111[:74], "row has 74 values, want 77"},
		{"ErrInteger", rset, with(row111, 3, "12.0"), `quantity_quotas: "12.0" is not a valid Edm.Int64`},
		{"ErrLeadingZero", rset, with(row111, 3, "012"), "quantity_quotas"},
		{"ErrDecimal", rset, with(row111, 40, "1e5"), "costo_servicio"},
		{"ErrDecimalNaN", rset, with(row111, 40, "NaN"), "costo_servicio"},
		{"ErrDate", rset, with(row111, 4, "2024-13-01"), "date_first_payment"},
		{"ErrTimestamp", rset, with(row111, 5, "2024-01-15 25:00:00"), "contract_creation_date"},
		{"ErrTimestampOffset", rset, with(row111, 5, "2024-01-15 09:00:00+00"), "contract_creation_date"},
		{"ErrTimestamptzNoOffset", rset, with(row111, 56, "2024-03-05 14:07:09"), "execution_date"},
		{"ErrKeyPart", rset, with(row111, 75, "x"), "key part process_id"},
		{"ErrUserNull", uset, userRow(map[string]string{"id": "1"}), "property name is null but not nullable"},
		{"ErrUserKey", uset, userRow(map[string]string{"id": "one"}), "key id"},
		{"ErrUserEmptyTimestamp", uset, userRow(map[string]string{"id": "1", "name": "", "email": "", "username": "",
			"rut": "", "phone": "", "status": "", "created_at": ""}), "created_at"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			enc := odata.NewFeed(&b, mustParse(t, tt.set, ""), odata.FeedOptions{ServiceRoot: root})
			err := enc.Encode(tt.row)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Encode: %v, want an error containing %q", err, tt.want)
			}
			if err2 := enc.Encode(row111); err2 != err {
				t.Errorf("second Encode: %v, want the first error", err2)
			}
			if err2 := enc.Close(); err2 != err {
				t.Errorf("Close: %v, want the first error", err2)
			}
			if b.Len() != 0 {
				t.Errorf("wrote %q after an error in the first row", b.String())
			}
		})
	}
}

// with returns a copy of row with value i set to v.
func with(row [][]byte, i int, v string) [][]byte {
	r := append([][]byte(nil), row...)
	r[i] = []byte(v)
	return r
}

type failingWriter struct{ err error }

func (w failingWriter) Write([]byte) (int, error) { return 0, w.err }

func TestFeedWriterError(t *testing.T) {
	t.Parallel()
	werr := errors.New("connection reset")
	enc := odata.NewFeed(failingWriter{werr}, mustParse(t, reportSet(t), ""), odata.FeedOptions{ServiceRoot: root})
	if err := enc.Encode(row111); err != nil {
		t.Fatalf("Encode: %v; the row should sit in the buffer", err)
	}
	if err := enc.Close(); err != werr {
		t.Errorf("Close = %v, want %v", err, werr)
	}
	if err := enc.Close(); err != werr {
		t.Errorf("second Close = %v, want %v", err, werr)
	}
	if err := enc.Encode(row111); err == nil {
		t.Error("Encode after Close succeeded")
	}
}

func TestFeedGolden(t *testing.T) {
	t.Parallel()
	q := mustParse(t, reportSet(t), "$count=true&$filter=client_id eq 1&$select=contract_id,task,costo_servicio,execution_date,attended_by")
	body := page(t, q, odata.FeedOptions{ServiceRoot: root, PageSize: 2, Count: 3}, row111, row112, row200)
	golden := filepath.Join("testdata", "feed-report-page.json")
	if *update {
		if err := os.WriteFile(golden, body, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(body, want) {
		t.Errorf("got\n%s\nwant\n%s", body, want)
	}
}

func TestFeedAllocations(t *testing.T) {
	santiago, err := time.LoadLocation("America/Santiago")
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name  string
		set   *odata.EntitySet
		query string
		row   [][]byte
		loc   *time.Location
	}{
		{"Report", reportSet(t), "", row111, nil},
		{"ReportIEEE", reportSet(t), "$format=application/json%3BIEEE754Compatible%3Dtrue&$select=task,contract_id", row111, nil},
		{"UsersSantiago", usersSet(t), "", userRow(map[string]string{"id": "3", "name": "Carla", "email": "c", "username": "c",
			"rut": "1-9", "phone": "", "status": "A", "created_at": "2023-06-01 12:00:00"}), santiago},
	} {
		t.Run(tt.name, func(t *testing.T) {
			q := mustParse(t, tt.set, tt.query)
			f, _ := odata.Negotiate(query(tt.query), nil)
			enc := odata.NewFeed(io.Discard, q, odata.FeedOptions{ServiceRoot: root, Format: f, Location: tt.loc})
			enc.Encode(tt.row) // the first row sizes the scratch buffer
			if n := testing.AllocsPerRun(200, func() {
				if err := enc.Encode(tt.row); err != nil {
					t.Fatal(err)
				}
			}); n != 0 {
				t.Errorf("Encode allocates %v times per row, want 0", n)
			}
		})
	}
}

func BenchmarkFeed(b *testing.B) {
	q := mustParse(b, reportSet(b), "")
	enc := odata.NewFeed(io.Discard, q, odata.FeedOptions{ServiceRoot: root, PageSize: odata.MaxPageSize})
	b.ReportAllocs()
	for b.Loop() {
		if err := enc.Encode(row111); err != nil {
			b.Fatal(err)
		}
	}
}

func TestFeedUsersNextLink(t *testing.T) {
	t.Parallel()
	set := usersSet(t)
	rows := [][][]byte{
		userRow(map[string]string{"id": "7", "name": "A", "email": "a", "username": "a", "rut": "1-9", "phone": "", "status": "A", "created_at": "2023-01-01 08:00:00"}),
		userRow(map[string]string{"id": "9", "name": "B", "email": "b", "username": "b", "rut": "2-7", "phone": "", "status": "A", "created_at": "2023-01-01 08:00:00"}),
	}
	q := mustParse(t, set, "$select=name")
	f := decode(t, page(t, q, odata.FeedOptions{ServiceRoot: root, PageSize: 1}, rows...))
	if len(f.Value) != 1 || f.Value[0]["id"] != json.Number("7") || f.Value[0]["name"] != "A" {
		t.Errorf("value = %v", f.Value)
	}
	u, err := url.Parse(f.NextLink)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := u.Path, "/odata/Users"; got != want {
		t.Errorf("next link path %q, want %q", got, want)
	}
	next, err := odata.Parse(u.Query(), set)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(next.After, []int64{7}) {
		t.Errorf("After = %v, want [7]", next.After)
	}
	// A report's token is not a users token.
	rq := mustParse(t, reportSet(t), "")
	rf := decode(t, page(t, rq, odata.FeedOptions{ServiceRoot: root, PageSize: 1}, row111, row112))
	ru, _ := url.Parse(rf.NextLink)
	_, err = odata.Parse(url.Values{"$skiptoken": {ru.Query().Get("$skiptoken")}}, set)
	wantErr(t, err, 400, "$skiptoken is not valid")
}

// TestSkipTokenBoundToQuery checks that a next link's $skiptoken is good
// for that next link only: with another $filter, none, another $select,
// another $top, any $skip (even 0) or another $orderby it is a 400 naming
// $skiptoken.
func TestSkipTokenBoundToQuery(t *testing.T) {
	t.Parallel()
	set := reportSet(t)
	q := mustParse(t, set, "$filter=client_id eq 1&$select=contract_id,task&$top=5")
	f := decode(t, page(t, q, odata.FeedOptions{ServiceRoot: root, PageSize: 1}, row111, row112))
	u, err := url.Parse(f.NextLink)
	if err != nil {
		t.Fatal(err)
	}
	next := u.Query()
	if got, want := next.Get("$top"), "4"; got != want {
		t.Fatalf("next link $top = %q, want %q", got, want)
	}
	if q, err := odata.Parse(next, set); err != nil || !reflect.DeepEqual(q.After, []int64{1, 1, 1}) {
		t.Fatalf("the next link: %v, After %v", err, q)
	}
	const notValid, withSkip = "$skiptoken is not valid", "$skiptoken cannot be combined with $skip, not even $skip=0"
	for _, tt := range []struct {
		name, option, value string // value "" deletes the option
		msg                 string
	}{
		{"ErrOtherFilter", "$filter", "client_id eq 2", notValid},
		{"ErrNoFilter", "$filter", "", notValid},
		{"ErrOtherSelect", "$select", "contract_id", notValid},
		{"ErrNoSelect", "$select", "", notValid},
		{"ErrOtherTop", "$top", "5", notValid},
		{"ErrNoTop", "$top", "", notValid},
		{"ErrSkip", "$skip", "5", withSkip},
		{"ErrSkipZero", "$skip", "0", withSkip},
		{"ErrOrderBy", "$orderby", "task", notValid},
	} {
		t.Run(tt.name, func(t *testing.T) {
			v := url.Values{}
			for k, vs := range next {
				v[k] = vs
			}
			if tt.value == "" {
				v.Del(tt.option)
			} else {
				v.Set(tt.option, tt.value)
			}
			_, err := odata.Parse(v, set)
			wantErr(t, err, 400, tt.msg, "use the @odata.nextLink of a previous response as it is")
			if e := err.(*failure.Error); e.Target != "$skiptoken" || e.Reason != "bad_skiptoken" {
				t.Errorf("target %q, reason %q, want $skiptoken, bad_skiptoken", e.Target, e.Reason)
			}
		})
	}
}
