package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/informe/informe/auth"
	"github.com/informe/informe/internal/dataset"
	"github.com/informe/informe/internal/pgserver/pgtest"
)

// personalValues are the fixture's personal values, each of which a
// token that may not see personal data must find nowhere.
var personalValues = []string{
	"12.345.678-5", "9876543-3", "17000003-k", "maria.gonzalez@example.cl", "maria@example.cl", "juan@example.cl",
	"+56911112222", "+56933334444", "González", "Quispe", "Irarrázaval", "1980-02-29", "1975-12-31",
	"carla@informe.cl", "Carla Díaz", "Pedro Soto", "+56955556666", "11111111-1", "Ana Abogada", "Luis Letrado",
	"Docente", "Comerciante",
}

// as sends GET target with token.
func (ts *testServer) as(tb testing.TB, token, target string) response {
	tb.Helper()
	return ts.Do(tb, "GET", target, "Authorization", "Bearer "+token)
}

// ruleDoors are the paths of every door of every dataset, with its OData set,
// in the formats whose bytes hold values as written.
func ruleDoors() []string {
	out := []string{"/api/general-report", "/api/general-report?format=csv", "/odata/", "/odata/$metadata"}
	for _, d := range dataset.All {
		if !slices.Contains(auth.Scopes, d.Scope) {
			continue // a scope tokens are given only when asked for
		}
		for _, f := range []string{"json", "csv", "ndjson", "arrow"} {
			out = append(out, d.ExportPath+"?format="+f)
		}
		out = append(out, "/odata/"+d.OData.Name, "/odata/"+d.OData.Name+"/$count")
	}
	return append(out, "/odata/Users(3)", "/odata/Clients(1)", "/odata/Contracts(1)", "/odata/GeneralReport('1-1-1')")
}

func TestRulesNoPersonalOnEveryDoor(t *testing.T) {
	t.Parallel()
	ts := newServer(t, pgtest.Fixture(t))
	tok := ts.RuledToken(t, "no-personal", dataset.Rules{NoPersonal: true})
	for _, target := range ruleDoors() {
		r := ts.as(t, tok, target)
		if r.Status != 200 {
			t.Fatalf("%s: status %d, want 200; body %s\n%s", target, r.Status, r.Body, ts.Logs)
			continue
		}
		for _, v := range personalValues {
			if bytes.Contains(r.Body, []byte(v)) {
				t.Errorf("%s: the body holds %q", target, v)
			}
			for name, h := range r.Header {
				if strings.Contains(strings.Join(h, " "), v) {
					t.Errorf("%s: header %s holds %q", target, name, v)
				}
			}
		}
		for _, d := range dataset.All {
			if !slices.Contains(auth.Scopes, d.Scope) {
				continue // a scope tokens are given only when asked for
			}
			for _, c := range d.Columns {
				if c.Personal != dataset.NotPersonal && (strings.Contains(target, "metadata") || strings.HasSuffix(target, "csv")) &&
					bytes.Contains(r.Body, []byte(`"`+c.Name+`"`)) {
					t.Errorf("%s names the hidden column %s", target, c.Name)
				}
			}
		}
	}
	// The same token without rules sees them: the check above finds
	// what it looks for.
	if r := ts.Get(t, "/api/clients/export?format=csv"); !bytes.Contains(r.Body, []byte("12.345.678-5")) {
		t.Fatalf("a token without rules does not see a client's RUT: %s", r.Body)
	}
}

func TestRulesHiddenIsMissing(t *testing.T) {
	t.Parallel()
	ts := newServer(t, pgtest.Fixture(t))
	tok := ts.RuledToken(t, "cols", dataset.Rules{Columns: []string{"contract_id", "code_contract", "client_id", "process_id", "task_id", "client_email"},
		Mask: []string{"client_email"}})
	for _, tt := range []struct {
		name, hidden, missing string
	}{
		{"filter", "/odata/GeneralReport?$filter=client_rut eq '1'", "/odata/GeneralReport?$filter=zzz_rut eq '1'"},
		{"filter on a masked column", "/odata/GeneralReport?$filter=client_email eq '1'", "/odata/GeneralReport?$filter=zzz_email eq '1'"},
		{"orderby", "/odata/GeneralReport?$orderby=client_rut", "/odata/GeneralReport?$orderby=zzz_rut"},
		{"orderby a masked column", "/odata/GeneralReport?$orderby=client_email", "/odata/GeneralReport?$orderby=zzz_email"},
		{"case", "/odata/GeneralReport?$filter=Client_Rut eq '1'", "/odata/GeneralReport?$filter=Zzz_Rut eq '1'"},
		{"masked case", "/odata/GeneralReport?$orderby=Client_Email", "/odata/GeneralReport?$orderby=Zzz_Email"},
		{"select", "/odata/GeneralReport?$select=client_rut", "/odata/GeneralReport?$select=zzz_rut"},
		{"export select", "/api/general-report/export?$select=client_rut", "/api/general-report/export?$select=zzz_rut"},
		{"export filter", "/api/contracts/export?$filter=client_rut eq '1'", "/api/contracts/export?$filter=zzz_rut eq '1'"},
		{"columns", "/api/general-report/export?columns=contract_id,client_rut", "/api/general-report/export?columns=contract_id,zzz_rut"},
		{"page columns", "/api/general-report?columns=client_rut", "/api/general-report?columns=zzz_rut"},
		{"count", "/odata/Contracts/$count?$filter=client_rut eq '1'", "/odata/Contracts/$count?$filter=zzz_rut eq '1'"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			q := func(s string) string {
				p, raw, _ := strings.Cut(s, "?")
				v, _ := url.ParseQuery(raw)
				return p + "?" + v.Encode()
			}
			h := ts.as(t, tok, q(tt.hidden))
			m := ts.as(t, tok, q(tt.missing))
			if h.Status != 400 {
				t.Fatalf("status %d, want 400; body %s", h.Status, h.Body)
			}
			got := strings.NewReplacer("client_rut", "zzz_rut", "Client_Rut", "Zzz_Rut", "client_email", "zzz_email", "Client_Email", "Zzz_Email").Replace(string(h.Body))
			if h.Status != m.Status || got != string(m.Body) {
				t.Errorf("hidden: %d %s\nmissing: %d %s", h.Status, h.Body, m.Status, m.Body)
			}
		})
	}
}

func TestRulesMask(t *testing.T) {
	t.Parallel()
	ts := newServer(t, pgtest.Fixture(t))
	tok := ts.RuledToken(t, "mask", dataset.Rules{Mask: []string{"client_rut", "client_email", "client_phone", "first_name_client", "client_birth_date", "client_address", "rut", "email", "username"}})
	want := []string{"12.***.***-5", "m***@example.cl", "***22", "M***", "98.***.***-3", "17.***.***-k", "c***@informe.cl", "11.***.***-1"}
	gone := []string{"12.345.678-5", "maria.gonzalez@example.cl", "+56911112222", "1980-02-29", "Irarrázaval", "carla@informe.cl", "11111111-1"}
	for _, target := range []string{"/api/clients/export?format=csv", "/api/clients/export?format=json", "/api/clients/export?format=arrow",
		"/odata/Clients", "/odata/Clients(1)", "/users?format=ndjson", "/odata/Users?$select=rut,email"} {
		r := ts.as(t, tok, target)
		if r.Status != 200 {
			t.Fatalf("%s: status %d; body %s", target, r.Status, r.Body)
		}
		found := 0
		for _, w := range want {
			if bytes.Contains(r.Body, []byte(w)) {
				found++
			}
		}
		if found == 0 {
			t.Errorf("%s: no masked value in %s", target, r.Body)
		}
		for _, g := range gone {
			if bytes.Contains(r.Body, []byte(g)) {
				t.Errorf("%s: the body holds %q", target, g)
			}
		}
	}
	// A masked date is null in JSON.
	r := ts.as(t, tok, "/odata/Clients(1)?$select=client_birth_date")
	if !bytes.Contains(r.Body, []byte(`"client_birth_date":null`)) {
		t.Errorf("masked birth date: %s", r.Body)
	}
}

func TestRulesRows(t *testing.T) {
	t.Parallel()
	ts := newServer(t, pgtest.Fixture(t))
	tok := ts.RuledToken(t, "rows", dataset.Rules{Rows: "client_id eq 1"})
	for _, tt := range []struct {
		target string
		sql    string
	}{
		{"/odata/GeneralReport/$count", "SELECT count(*) FROM general_report_typed WHERE client_id = 1"},
		{"/odata/Contracts/$count", "SELECT count(*) FROM contracts WHERE client_id = 1"},
		{"/odata/Clients/$count", "SELECT 1"},
		{"/odata/Contracts/$count?$filter=contract_id gt 1", "SELECT count(*) FROM contracts WHERE client_id = 1 AND id > 1"},
	} {
		p, raw, _ := strings.Cut(tt.target, "?")
		v, _ := url.ParseQuery(raw)
		r := ts.as(t, tok, p+"?"+v.Encode())
		var want int64
		if err := ts.Pool.QueryRow(context.Background(), tt.sql).Scan(&want); err != nil {
			t.Fatal(err)
		}
		if got := string(r.Body); r.Status != 200 || got != jsonInt(want) {
			t.Errorf("%s: %d %s, want %d", tt.target, r.Status, got, want)
		}
	}
	r := ts.as(t, tok, "/api/general-report/export?format=json")
	if got := r.Header.Get("X-Total-Count"); got != "4" {
		t.Errorf("export of client 1's rows: X-Total-Count %s, want 4; %s", got, r.Body)
	}
	if bytes.Contains(r.Body, []byte("CT-006")) {
		t.Errorf("another client's contract in the export: %s", r.Body)
	}
	if r := ts.as(t, tok, "/odata/Contracts(6)"); r.Status != 404 {
		t.Errorf("another client's contract by key: %d %s", r.Status, r.Body)
	}
	// Datasets the condition does not apply to are not served.
	for _, target := range []string{"/users", "/odata/Users", "/odata/Users/$count", "/odata/Users(1)", "/api/services/export"} {
		if r := ts.as(t, tok, target); r.Status != 403 {
			t.Errorf("%s: %d, want 403; %s", target, r.Status, r.Body)
		}
	}
	for _, target := range []string{"/odata/", "/odata/$metadata"} {
		if r := ts.as(t, tok, target); bytes.Contains(r.Body, []byte(`Users`)) || bytes.Contains(r.Body, []byte(`"Services"`)) {
			t.Errorf("%s lists a set the condition does not apply to: %s", target, r.Body)
		}
	}
	// $expand could reach rows outside the condition: the set has no
	// navigations for this token.
	if r := ts.as(t, tok, "/odata/Contracts?$expand=Processes"); r.Status != 501 {
		t.Errorf("$expand: %d %s", r.Status, r.Body)
	}
}

func jsonInt(n int64) string { b, _ := json.Marshal(n); return string(b) }

func TestRulesMaxRows(t *testing.T) {
	t.Parallel()
	ts := newServer(t, pgtest.Fixture(t))
	tok := ts.RuledToken(t, "max", dataset.Rules{MaxRows: 3})
	for _, tt := range []struct {
		target string
		status int
		reason string
	}{
		{"/api/general-report/export?format=csv", 403, "max_rows"},
		{"/api/general-report?result_per_page=10", 403, "max_rows"},
		{"/api/general-report?result_per_page=3", 200, ""},
		{"/api/general-report/export?$filter=contract_id eq 1", 200, ""},
		{"/odata/GeneralReport?$top=5", 403, "max_rows"},
		{"/users", 200, ""},
	} {
		p, raw, _ := strings.Cut(tt.target, "?")
		v, _ := url.ParseQuery(raw)
		r := ts.as(t, tok, p+"?"+v.Encode())
		if r.Status != tt.status {
			t.Errorf("%s: %d, want %d; %s", tt.target, r.Status, tt.status, r.Body)
			continue
		}
		if tt.reason != "" && !bytes.Contains(r.Body, []byte(`"`+tt.reason+`"`)) {
			t.Errorf("%s: no reason %s in %s", tt.target, tt.reason, r.Body)
		}
	}
	// The feed's pages carry at most 3 rows, with a next link.
	r := ts.as(t, tok, "/odata/GeneralReport")
	var page struct {
		Value []json.RawMessage `json:"value"`
		Next  string            `json:"@odata.nextLink"`
	}
	if err := json.Unmarshal(r.Body, &page); err != nil || len(page.Value) != 3 || page.Next == "" {
		t.Errorf("feed page: %d rows, next %q (%v); %s", len(page.Value), page.Next, err, r.Body)
	}
}
