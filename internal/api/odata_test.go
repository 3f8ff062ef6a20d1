package api_test

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/informe/informe/auth"
	"github.com/informe/informe/internal/dataset"
	"github.com/informe/informe/internal/pgserver/pgtest"
)

// odataPage is one response of a feed.
type odataPage struct {
	Context  string            `json:"@odata.context"`
	Count    *json.Number      `json:"@odata.count"`
	NextLink string            `json:"@odata.nextLink"`
	Value    []json.RawMessage `json:"value"`
}

func (ts *testServer) odataGet(t *testing.T, target string, header ...string) (response, odataPage) {
	t.Helper()
	r := ts.Get(t, target, header...)
	if got := r.Header.Get("OData-Version"); got != "4.0" {
		t.Errorf("%s: OData-Version = %q, want 4.0", target, got)
	}
	var p odataPage
	if r.Status == 200 {
		dec := json.NewDecoder(bytes.NewReader(r.Body))
		dec.UseNumber()
		if err := dec.Decode(&p); err != nil {
			t.Fatalf("%s: %v in %.300s", target, err, r.Body)
		}
	}
	return r, p
}

// walk follows next links from target, with header, and returns every
// entity and the number of pages.
func (ts *testServer) walk(t *testing.T, target string, header ...string) ([]map[string]any, int, odataPage) {
	t.Helper()
	return ts.walkFirst(t, target, 0, header...)
}

// walkFirst is [testServer.walk] that stops after max pages (none when 0)
// even where next links go on.
func (ts *testServer) walkFirst(t *testing.T, target string, max int, header ...string) ([]map[string]any, int, odataPage) {
	t.Helper()
	var all []map[string]any
	var first odataPage
	for pages := 0; ; pages++ {
		if pages > 10000 {
			t.Fatal("the walk does not end")
		}
		r, p := ts.odataGet(t, target, header...)
		if r.Status != 200 {
			t.Fatalf("%s: status %d: %s", target, r.Status, r.Body)
		}
		if pages == 0 {
			first = p
		}
		for _, raw := range p.Value {
			dec := json.NewDecoder(bytes.NewReader(raw))
			dec.UseNumber()
			var m map[string]any
			if err := dec.Decode(&m); err != nil {
				t.Fatal(err)
			}
			all = append(all, m)
		}
		if p.NextLink == "" || pages+1 == max {
			return all, pages + 1, first
		}
		if strings.Contains(p.NextLink, "access_token") {
			t.Fatalf("next link %q carries a token", p.NextLink)
		}
		u, err := url.Parse(p.NextLink)
		if err != nil || !strings.HasPrefix(p.NextLink, ts.URL+"/odata/") {
			t.Fatalf("next link %q is not an absolute URL of the service", p.NextLink)
		}
		target = u.RequestURI()
	}
}

// exportRows reads the JSON export of the report (or /users) as maps.
func (ts *testServer) exportRows(t *testing.T, target string) []map[string]*string {
	t.Helper()
	r := ts.Get(t, target)
	if r.Status != 200 {
		t.Fatalf("%s: %d %s", target, r.Status, r.Body)
	}
	var rows []map[string]*string
	if err := json.Unmarshal(r.Body, &rows); err != nil {
		t.Fatal(err)
	}
	return rows
}

// sameValue reports whether an OData value equals the text of the JSON
// export: numbers as their digits, null as "" (or null), timestamps as the
// same instant.
func sameValue(odataValue any, text *string) bool {
	if text == nil {
		return odataValue == nil
	}
	switch v := odataValue.(type) {
	case nil:
		return *text == ""
	case json.Number:
		a, err1 := strconv.ParseFloat(v.String(), 64)
		b, err2 := strconv.ParseFloat(*text, 64)
		return err1 == nil && err2 == nil && a == b
	case string:
		if v == *text {
			return true
		}
		ot, err := time.Parse(time.RFC3339Nano, v)
		if err != nil {
			return false
		}
		for _, layout := range []string{"2006-01-02 15:04:05.999999-07", "2006-01-02 15:04:05"} {
			if et, err := time.Parse(layout, *text); err == nil {
				return et.Equal(ot)
			}
		}
	}
	return false
}

// TestODataFeedEqualsExport walks the report's feed by next links, at
// several page sizes and with filters, and checks it equals the JSON export
// of the same rows, typed: same rows, same order, same values.
func TestODataFeedEqualsExport(t *testing.T) {
	t.Parallel() // on a database of its own
	ts := newServer(t, pgtest.Seeded(t))
	for _, tt := range []struct {
		name, filter, export string
		pageSize             int
	}{
		{"Whole/997", "", "", 997},
		{"Whole/10000", "", "", 0},
		{"ClientID/3", "$filter=client_id eq 3", "client_id=3", 3},
		{"RUTDotted", "$filter=client_rut eq '23.715.783-4'", "rut=23715783-4", 2},
		{"And", "$filter=client_id eq 3 and contract_id eq 9", "client_id=3&contract_id=9", 1},
		{"Code", "$filter=code_contract eq 'CT-2021-000034'", "code_contract=CT-2021-000034", 4},
	} {
		t.Run(tt.name, func(t *testing.T) {
			want := ts.exportRows(t, "/api/general-report/export?format=json&"+tt.export)
			var header []string
			if tt.pageSize > 0 {
				header = []string{"Prefer", fmt.Sprintf("odata.maxpagesize=%d", tt.pageSize)}
			}
			q := "$count=true"
			if tt.filter != "" {
				q += "&" + url.PathEscape(tt.filter)
			}
			got, pages, first := ts.walk(t, "/odata/GeneralReport?"+q, header...)
			if first.Count == nil || first.Count.String() != strconv.Itoa(len(want)) {
				t.Errorf("@odata.count = %v, want %d", first.Count, len(want))
			}
			if len(got) != len(want) {
				t.Fatalf("the feed has %d rows in %d pages, the export %d", len(got), pages, len(want))
			}
			if size := max(tt.pageSize, 1); tt.pageSize > 0 && pages > (len(want)+size-1)/size+1 {
				t.Errorf("%d pages for %d rows of %d", pages, len(want), tt.pageSize)
			}
			for i := range want {
				for _, c := range dataset.GeneralReport.Columns {
					if !sameValue(got[i][c.Name], want[i][c.Name]) {
						t.Fatalf("row %d %s: feed %#v, export %v", i, c.Name, got[i][c.Name], deref(want[i][c.Name]))
					}
				}
			}
		})
	}
}

func deref(s *string) any {
	if s == nil {
		return nil
	}
	return *s
}

// TestODataUsers walks the users' feed and compares it with /users.
func TestODataUsers(t *testing.T) {
	t.Parallel()
	ts := newServer(t, pgtest.Seeded(t))
	want := ts.exportRows(t, "/users?format=json")
	got, pages, _ := ts.walk(t, "/odata/Users", "Prefer", "odata.maxpagesize=7")
	if len(got) != len(want) || pages < len(want)/7 {
		t.Fatalf("%d users in %d pages, want %d", len(got), pages, len(want))
	}
	for i := range want {
		for _, c := range dataset.Users.Columns {
			if !sameValue(got[i][c.Name], want[i][c.Name]) {
				t.Fatalf("user %d %s: feed %#v, /users %v", i, c.Name, got[i][c.Name], deref(want[i][c.Name]))
			}
		}
	}
}

// TestODataProtocol checks the service document, $metadata, the query
// options and the errors.
func TestODataProtocol(t *testing.T) {
	t.Parallel()
	ts := newServer(t, pgtest.Seeded(t))

	t.Run("ServiceDocument", func(t *testing.T) {
		// The token's scopes are the default ones: ScheduleRuns and
		// AuditLog, which need schedules:read and audit:read, are not
		// offered to it.
		r, p := ts.odataGet(t, "/odata/")
		if r.Status != 200 || !strings.HasSuffix(p.Context, "/odata/$metadata") || len(p.Value) != 7 {
			t.Fatalf("status %d: %s", r.Status, r.Body)
		}
		every := ts.NewToken(t, "every-scope", auth.Known, time.Time{})
		r = ts.Do(t, http.MethodGet, "/odata/", "Authorization", "Bearer "+every)
		for _, set := range []string{`"ScheduleRuns"`, `"AuditLog"`} {
			if !strings.Contains(string(r.Body), set) {
				t.Errorf("a token with every scope is not offered %s: %s", set, r.Body)
			}
		}
		if m := ts.Do(t, http.MethodGet, "/odata/$metadata", "Authorization", "Bearer "+every); !strings.Contains(string(m.Body), `Name="AuditLog"`) {
			t.Errorf("$metadata for every scope lacks AuditLog")
		}
		if m := ts.Get(t, "/odata/$metadata"); strings.Contains(string(m.Body), `Name="AuditLog"`) {
			t.Errorf("$metadata for the default scopes has AuditLog")
		}
	})
	t.Run("Metadata", func(t *testing.T) {
		r := ts.Get(t, "/odata/$metadata")
		if r.Status != 200 || !strings.HasPrefix(r.Header.Get("Content-Type"), "application/xml") {
			t.Fatalf("status %d, Content-Type %q", r.Status, r.Header.Get("Content-Type"))
		}
		var doc struct {
			DataServices struct {
				Schema struct {
					EntityType []struct {
						Name     string `xml:"Name,attr"`
						Property []struct {
							Name string `xml:"Name,attr"`
							Type string `xml:"Type,attr"`
						} `xml:"Property"`
					} `xml:"EntityType"`
				} `xml:"Schema"`
			} `xml:"DataServices"`
		}
		if err := xml.Unmarshal(r.Body, &doc); err != nil {
			t.Fatal(err)
		}
		types := map[string]int{}
		for _, et := range doc.DataServices.Schema.EntityType {
			types[et.Name] = len(et.Property)
		}
		if got, want := types["GeneralReportRow"], len(dataset.GeneralReport.Columns)+1; got != want {
			t.Errorf("GeneralReportRow has %d properties, want %d (the columns and row_id)", got, want)
		}
		if got, want := types["User"], len(dataset.Users.Columns); got != want {
			t.Errorf("User has %d properties, want %d", got, want)
		}
	})
	t.Run("SelectTopSkip", func(t *testing.T) {
		_, all := ts.odataGet(t, "/odata/GeneralReport?$top=20")
		r, p := ts.odataGet(t, "/odata/GeneralReport?$select=contract_id,task_status&$top=5&$skip=10")
		if r.Status != 200 || len(p.Value) != 5 {
			t.Fatalf("status %d, %d rows: %.300s", r.Status, len(p.Value), r.Body)
		}
		if p.NextLink != "" {
			t.Errorf("$top=5 answered in one page has a next link %q", p.NextLink)
		}
		for i, raw := range p.Value {
			var m map[string]any
			_ = json.Unmarshal(raw, &m)
			var full map[string]any
			_ = json.Unmarshal(all.Value[10+i], &full)
			if len(m) != 3 || m["contract_id"] != full["contract_id"] || m["task_status"] != full["task_status"] || m["row_id"] != full["row_id"] {
				t.Errorf("row %d = %v, want row_id, contract_id and task_status of %v", i, m, full)
			}
		}
	})
	t.Run("IEEE754Compatible", func(t *testing.T) {
		_, p := ts.odataGet(t, "/odata/GeneralReport?$top=1&$count=true", "Accept", "application/json;odata.metadata=minimal;IEEE754Compatible=true")
		var m map[string]any
		_ = json.Unmarshal(p.Value[0], &m)
		if _, ok := m["contract_id"].(string); !ok {
			t.Errorf("contract_id = %#v, want a string with IEEE754Compatible=true", m["contract_id"])
		}
	})
	t.Run("MaxPageSize", func(t *testing.T) {
		r, p := ts.odataGet(t, "/odata/GeneralReport", "Prefer", "odata.maxpagesize=50")
		if len(p.Value) != 50 || r.Header.Get("Preference-Applied") != "odata.maxpagesize=50" || p.NextLink == "" {
			t.Fatalf("%d rows, Preference-Applied %q, next %q", len(p.Value), r.Header.Get("Preference-Applied"), p.NextLink)
		}
		_, p = ts.odataGet(t, "/odata/GeneralReport")
		if len(p.Value) != 10000 {
			t.Fatalf("default page has %d rows, want 10000", len(p.Value))
		}
	})
	for _, tt := range []struct {
		name, target string
		status       int
		code, msg    string
	}{
		{"ErrUnsupportedOperator", "/odata/GeneralReport?$filter=contract_id%20add%203%20eq%204", 501, "NotImplemented", "arithmetic"},
		{"ErrUnsupportedFunction", "/odata/GeneralReport?$filter=round(costo_servicio)%20eq%204", 501, "NotImplemented", "contains"},
		{"ErrFilterType", "/odata/GeneralReport?$filter=task_end_date%20eq%20'x'", 400, "BadRequest", "Edm.Date"},
		{"ErrExpand", "/odata/GeneralReport?$expand=x", 501, "NotImplemented", "$select"},
		{"ErrOrderBy", "/odata/GeneralReport?$orderby=tolower(task)", 501, "NotImplemented", "order by properties"},
		{"ErrSelect", "/odata/GeneralReport?$select=nope", 400, "BadRequest", "nope"},
		{"ErrTop", "/odata/GeneralReport?$top=-1", 400, "BadRequest", "$top"},
		{"ErrSkipToken", "/odata/GeneralReport?$skiptoken=garbage", 400, "BadRequest", "$skiptoken"},
		{"ErrRUT", "/odata/GeneralReport?$filter=client_rut%20eq%20'12.345.678-9'", 400, "BadRequest", "client_rut"},
		{"ErrNotFound", "/odata/Nope", 404, "NotFound", "Not Found"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := ts.Get(t, tt.target)
			if r.Status != tt.status {
				t.Fatalf("status = %d, want %d: %s", r.Status, tt.status, r.Body)
			}
			var e struct {
				Error struct{ Code, Message string } `json:"error"`
			}
			if err := json.Unmarshal(r.Body, &e); err != nil || e.Error.Code != tt.code || !strings.Contains(e.Error.Message, tt.msg) {
				t.Fatalf("body %s, want code %s and a message naming %q", r.Body, tt.code, tt.msg)
			}
			if r.Header.Get("OData-Version") != "4.0" {
				t.Error("no OData-Version on the error")
			}
		})
	}
	t.Run("ErrUnauthorized", func(t *testing.T) {
		r := ts.Do(t, "GET", "/odata/GeneralReport")
		if r.Status != 401 || !strings.Contains(string(r.Body), `"message":"Invalid Token"`) || len(r.Header.Values("WWW-Authenticate")) != 2 {
			t.Fatalf("status %d, body %s, WWW-Authenticate %q", r.Status, r.Body, r.Header.Values("WWW-Authenticate"))
		}
	})
}

// TestODataPagingWhileWriting pages through the feed while another
// connection inserts rows before and after the position reached and
// deletes rows already read: no row that exists throughout is skipped or
// repeated, as the next link resumes after the last row's key.
func TestODataPagingWhileWriting(t *testing.T) {
	t.Parallel()
	pool := pgtest.Seeded(t)
	ts := newServer(t, pool)
	ctx := t.Context()
	before := map[string]bool{}
	all, _, _ := ts.walk(t, "/odata/GeneralReport?$select=row_id")
	for _, m := range all {
		before[m["row_id"].(string)] = true
	}
	seen := map[string]bool{}
	target := "/odata/GeneralReport?$select=row_id"
	for page := 0; target != ""; page++ {
		_, p := ts.odataGet(t, target, "Prefer", "odata.maxpagesize=1500")
		for _, raw := range p.Value {
			var m map[string]string
			_ = json.Unmarshal(raw, &m)
			if seen[m["row_id"]] {
				t.Fatalf("page %d repeats row %s", page, m["row_id"])
			}
			seen[m["row_id"]] = true
		}
		// Writes between pages: a contract copied under a new id at the
		// end, and the first contract's tasks deleted (already read).
		if page == 2 {
			if _, err := pool.Exec(ctx, `
				INSERT INTO contracts (id, client_id, status, code)
				SELECT (SELECT max(id) + 1 FROM contracts), client_id, status, code || '-X'
				FROM contracts WHERE id = 1`); err != nil {
				t.Fatal(err)
			}
			if _, err := pool.Exec(ctx, `DELETE FROM tasks WHERE process_id IN (SELECT id FROM processes WHERE contract_id = 1)`); err != nil {
				t.Fatal(err)
			}
		}
		target = ""
		if p.NextLink != "" {
			u, _ := url.Parse(p.NextLink)
			target = u.RequestURI()
		}
	}
	for id := range before {
		if !seen[id] && !strings.HasPrefix(id, "1-") {
			t.Fatalf("row %s existed throughout and was skipped", id)
		}
	}
}

// TestODataNextLinkToken checks that a next link carries the access_token
// when the request carried it in the query, and never when it came in a
// header.
func TestODataNextLinkToken(t *testing.T) {
	t.Parallel()
	ts := newServer(t, pgtest.Seeded(t))
	r := ts.Do(t, "GET", "/odata/GeneralReport?access_token="+ts.Token, "Prefer", "odata.maxpagesize=3")
	var p odataPage
	if err := json.Unmarshal(r.Body, &p); err != nil || r.Status != 200 {
		t.Fatalf("status %d: %s", r.Status, r.Body)
	}
	u, err := url.Parse(p.NextLink)
	if err != nil || u.Query().Get("access_token") != ts.Token {
		t.Fatalf("next link %q does not carry the request's access_token", p.NextLink)
	}
	// The link works as it is, without a header.
	r = ts.Do(t, "GET", u.RequestURI(), "Prefer", "odata.maxpagesize=3")
	if r.Status != 200 {
		t.Fatalf("following the next link: status %d: %s", r.Status, r.Body)
	}
	if strings.Contains(ts.Logs.String(), ts.Token) {
		t.Error("the token reached the log")
	}
	_, p = ts.odataGet(t, "/odata/GeneralReport", "Prefer", "odata.maxpagesize=3")
	if strings.Contains(p.NextLink, "access_token") {
		t.Errorf("next link %q carries a token the request sent in a header", p.NextLink)
	}
}
