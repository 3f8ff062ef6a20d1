package api_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"

	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/informe/informe/internal/api"
	"github.com/informe/informe/internal/api/apitest"
	"github.com/informe/informe/internal/dataset"
	"github.com/informe/informe/internal/pgserver/pgtest"
	"github.com/informe/informe/internal/web"
)

// The tests of what informe reads of a request: bounded bodies, query
// strings and parameter values, links built only from what the operator
// named or the listener's own address, and the headers every response
// carries.

// TestRequestBodyBounded checks that a body is read under a deadline and
// a size limit: a sign-in that announces 100 bytes and sends none is
// answered 408 and its connection closed (it used to stay open for
// minutes), and a body over the limit is a 413.
func TestRequestBodyBounded(t *testing.T) {
	t.Parallel()
	pool := pgtest.Fixture(t)
	site, err := web.New()
	if err != nil {
		t.Fatal(err)
	}
	ts := newOpsServer(t, pool, func(s *api.Server) {
		s.Site = site
		s.Limits.BodyTimeout = 200 * time.Millisecond
	})

	t.Run("NeverSent", func(t *testing.T) {
		conn := dialSmall(t, ts.URL)
		// A guard against a hang only; the test asserts what arrives.
		_ = conn.SetDeadline(time.Now().Add(30 * time.Second))
		host := strings.TrimPrefix(ts.URL, "http://")
		fmt.Fprintf(conn, "POST /web/sign-in HTTP/1.1\r\nHost: %s\r\nOrigin: %s\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n", host, ts.URL)
		r := bufio.NewReader(conn)
		resp, err := http.ReadResponse(r, nil)
		if err != nil {
			t.Fatalf("no response: %v", err)
		}
		body, _ := io.ReadAll(resp.Body)
		response{Status: resp.StatusCode, Header: resp.Header, Body: body}.WantError(t, http.StatusRequestTimeout, "did not arrive in time")
		if resp.Header.Get("Set-Cookie") != "" {
			t.Error("a sign-in without a body set a cookie")
		}
		if n, err := r.Read(make([]byte, 1)); err != io.EOF {
			t.Errorf("after the 408: %d bytes, %v; want the connection closed", n, err)
		}
	})
	t.Run("TooLarge", func(t *testing.T) {
		body := `{"token":"` + ts.Token + `","lang":"` + strings.Repeat("x", api.MaxBodyBytes) + `"}`
		ts.Post(t, "/web/sign-in", body, "Origin", ts.URL).WantError(t, http.StatusRequestEntityTooLarge, "4 KiB")
	})
	t.Run("WithinBounds", func(t *testing.T) {
		r := ts.Post(t, "/web/sign-in", `{"token":"`+ts.Token+`"}`, "Origin", ts.URL, "Content-Type", "application/json")
		if r.Status != http.StatusOK {
			t.Fatalf("status = %d; body %s", r.Status, r.Body)
		}
	})
}

// allColumns is the value of columns that names every report column.
func allColumns() string {
	names := make([]string, len(dataset.GeneralReport.Columns))
	for i, c := range dataset.GeneralReport.Columns {
		names[i] = c.Name
	}
	return strings.Join(names, ",")
}

// TestQueryBounds checks that query strings and parameter values have
// limits, answered before any work: 414 past the request target's, 400
// naming the parameter past a value's (OData's target too), and that with
// every link parameter at its longest the Link header of a page and an
// OData next link stay within a few KiB, and the next link can be
// followed.
func TestQueryBounds(t *testing.T) {
	t.Parallel()
	ts := newServer(t, pgtest.Fixture(t))
	long := func(n int) string { return strings.Repeat("C", n) }
	for _, tt := range []struct {
		name, target string
		status       int
		msg          string
	}{
		{"URITooLong", "/api/general-report?code_contract=" + long(36000), http.StatusRequestURITooLong, "8 KiB"},
		{"URITooLongUnauthenticated", "/nope?x=" + long(9000), http.StatusRequestURITooLong, "8 KiB"},
		{"CodeContract", "/api/general-report?code_contract=" + long(api.MaxParamBytes+1), http.StatusBadRequest, "code_contract: the value may take 128 bytes at most"},
		{"Rut", "/api/general-report/export?rut=" + long(200), http.StatusBadRequest, "rut:"},
		{"Columns", "/api/general-report?columns=" + allColumns() + "," + long(2048), http.StatusBadRequest, "columns: the value may take 2048 bytes at most"},
		{"UnknownParameter", "/users?whatever=" + long(300), http.StatusBadRequest, "whatever:"},
		{"TokenLikeName", "/users?" + apitest.WellFormedToken() + "=" + long(300), http.StatusBadRequest, "a parameter:"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ts.Get(t, tt.target).WantError(t, tt.status, tt.msg)
		})
	}
	t.Run("ODataTarget", func(t *testing.T) {
		r := ts.Get(t, "/odata/GeneralReport?$filter="+url.QueryEscape("code_contract eq '"+long(3000)+"'"))
		if r.Status != http.StatusBadRequest {
			t.Fatalf("status = %d; body %.300s", r.Status, r.Body)
		}
		var e struct {
			Error struct{ Code, Message, Target string } `json:"error"`
		}
		if err := json.Unmarshal(r.Body, &e); err != nil {
			t.Fatalf("%v in %s", err, r.Body)
		}
		if e.Error.Target != "$filter" || !strings.Contains(e.Error.Message, "$filter") {
			t.Errorf("error %+v, want it to name $filter", e.Error)
		}
	})

	const fewKiB = 8 << 10
	t.Run("LinkHeader", func(t *testing.T) {
		q := url.Values{
			"code_contract": {long(api.MaxParamBytes)}, "columns": {allColumns()}, "format": {"csv"},
			"delimiter": {"semicolon"}, "header": {"false"}, "bom": {"true"}, "result_per_page": {"1"},
			"contract_id": {"1"}, "client_id": {"1"}, "rut": {"12.345.678-5"}, "page": {"1"},
		}
		r := ts.Get(t, "/api/general-report?"+q.Encode())
		if r.Status != http.StatusOK {
			t.Fatalf("status = %d; body %.300s", r.Status, r.Body)
		}
		link := r.Header.Get("Link")
		t.Logf("Link header: %d bytes", len(link))
		if link == "" || len(link) > fewKiB {
			t.Errorf("Link header of %d bytes, want some and at most %d", len(link), fewKiB)
		}
	})
	t.Run("NextLink", func(t *testing.T) {
		filter := "contract_id eq 1"
		for len(filter)+len(" or contract_id eq 1") <= 2048 {
			filter += " or contract_id eq 1"
		}
		q := url.Values{"$filter": {filter}, "$select": {allColumns()}, "$orderby": {"code_contract,task desc"}, "$count": {"true"}}
		r, p := ts.odataGet(t, "/odata/GeneralReport?"+q.Encode(), "Prefer", "odata.maxpagesize=1")
		if r.Status != http.StatusOK {
			t.Fatalf("status = %d; body %.300s", r.Status, r.Body)
		}
		t.Logf("next link: %d bytes", len(p.NextLink))
		if p.NextLink == "" || len(p.NextLink) > fewKiB {
			t.Fatalf("next link of %d bytes, want one of at most %d", len(p.NextLink), fewKiB)
		}
		r, _ = ts.odataGet(t, strings.TrimPrefix(p.NextLink, ts.URL), "Prefer", "odata.maxpagesize=1")
		if r.Status != http.StatusOK {
			t.Errorf("following the next link: status %d; body %.300s", r.Status, r.Body)
		}
	})
}

// TestLinksNotFromHost checks that OData's absolute links are built from
// the public URL the operator gave, or else from the address the
// connection reached, never from a Host header nobody named, even with
// the token in the URL.
func TestLinksNotFromHost(t *testing.T) {
	t.Parallel()
	pool := pgtest.Fixture(t)
	public, err := api.ParsePublicURL("https://informe.example.cl/informe/")
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name   string
		public *url.URL
		root   func(ts *opsServer) string
	}{
		{"ListenerAddress", nil, func(ts *opsServer) string { return ts.URL + "/odata" }},
		{"PublicURL", public, func(*opsServer) string { return "https://informe.example.cl/informe/odata" }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ts := newOpsServer(t, pool, func(s *api.Server) { s.PublicURL = tt.public })
			req, err := http.NewRequest(http.MethodGet, ts.URL+"/odata/GeneralReport?access_token="+ts.Token, nil)
			if err != nil {
				t.Fatal(err)
			}
			req.Host = "evil.example"
			req.Header.Set("Prefer", "odata.maxpagesize=2")
			r := apitest.RoundTrip(t, req)
			var p odataPage
			if err := json.Unmarshal(r.Body, &p); err != nil || r.Status != http.StatusOK {
				t.Fatalf("status %d, %v; body %.300s", r.Status, err, r.Body)
			}
			root := tt.root(ts)
			if !strings.HasPrefix(p.NextLink, root+"/GeneralReport?") || !strings.HasPrefix(p.Context, root+"/$metadata") {
				t.Errorf("context %q, next link %q; want both under %s", p.Context, p.NextLink, root)
			}
			if strings.Contains(string(r.Body), "evil.example") {
				t.Errorf("the Host header went into the body: %.300s", r.Body)
			}
		})
	}
	t.Run("BadPublicURL", func(t *testing.T) {
		for _, s := range []string{"informe.example.cl", "ftp://informe.example.cl", "https://", "https://informe.example.cl/?a=1", "https://u:p@informe.example.cl"} {
			if _, err := api.ParsePublicURL(s); err == nil {
				t.Errorf("ParsePublicURL(%q) succeeded", s)
			}
		}
	})
}

// TestNoSniff checks that every kind of response carries
// X-Content-Type-Options: nosniff: API pages and errors, the OpenAPI
// document, OData's documents and feeds, the refusals before any work,
// and the operations listener's.
func TestNoSniff(t *testing.T) {
	t.Parallel()
	ts := newOpsServer(t, pgtest.Fixture(t), nil)
	for _, target := range []string{
		"/api/general-report?format=csv", "/api/general-report/export?format=ndjson", "/users", "/openapi.json",
		"/odata/", "/odata/$metadata", "/odata/GeneralReport", "/odata/Users/$count",
		"/nope", "/api/general-report?page=0", "/users?x=" + strings.Repeat("x", 9000),
	} {
		t.Run(target[:min(len(target), 40)], func(t *testing.T) {
			for _, r := range []response{ts.Get(t, target), ts.Do(t, http.MethodGet, target)} {
				if got := r.Header.Get("X-Content-Type-Options"); got != "nosniff" {
					t.Errorf("status %d: X-Content-Type-Options = %q, want nosniff", r.Status, got)
				}
			}
		})
	}
	for _, path := range []string{"/metrics", "/healthz", "/readyz", "/nope"} {
		resp, err := apitest.Client.Get(ts.Ops + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if got := resp.Header.Get("X-Content-Type-Options"); got != "nosniff" {
			t.Errorf("ops %s (%d): X-Content-Type-Options = %q, want nosniff", path, resp.StatusCode, got)
		}
	}
}

// TestOpsBounds checks that the operations listener bounds requests as
// the API does: 414 past the request target's limit, 431 past the header
// fields', in JSON, with nosniff and no-store, and answers within them.
func TestOpsBounds(t *testing.T) {
	t.Parallel()
	ts := newOpsServer(t, pgtest.Fixture(t), nil)
	for _, tt := range []struct {
		name, target string
		header       string // a header field's value, or none
		status       int
		msg          string
	}{
		{"OK", "/healthz", "", http.StatusOK, ""},
		{"URITooLong", "/healthz?x=" + strings.Repeat("x", api.MaxURIBytes), "", http.StatusRequestURITooLong, "8 KiB"},
		{"URITooLongUnknownPath", "/" + strings.Repeat("x", api.MaxURIBytes), "", http.StatusRequestURITooLong, "8 KiB"},
		{"HeadersTooLarge", "/readyz", strings.Repeat("x", api.MaxHeaderBytes), http.StatusRequestHeaderFieldsTooLarge, "64 KiB"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			req, err := http.NewRequest(http.MethodGet, ts.Ops+tt.target, nil)
			if err != nil {
				t.Fatal(err)
			}
			if tt.header != "" {
				req.Header.Set("X-Filler", tt.header)
			}
			r := apitest.RoundTrip(t, req)
			for k, want := range map[string]string{"X-Content-Type-Options": "nosniff", "Cache-Control": "private, no-store"} {
				if got := r.Header.Get(k); got != want {
					t.Errorf("%s = %q, want %q", k, got, want)
				}
			}
			if r.Status != tt.status {
				t.Fatalf("status = %d, want %d; body %.300s", r.Status, tt.status, r.Body)
			}
			if tt.msg == "" {
				return
			}
			if got := r.Message(t); !strings.Contains(got, tt.msg) {
				t.Errorf("message = %q, want it to contain %q", got, tt.msg)
			}
		})
	}
}

// TestUnauthorizedIdentical checks that every 401 is byte for byte the
// same, body and headers (but for the request id and the date), whatever
// the credentials: none, a wrong token, an expired one, one in the URL;
// that a bad cookie of the web page on the API's paths gets the same 401
// but for the challenges, which browsers would answer with a credential
// dialog over the page; and that the page's own /web/session answers a
// bad cookie with 200 and why, never a 401.
func TestUnauthorizedIdentical(t *testing.T) {
	t.Parallel()
	pool := pgtest.Fixture(t)
	site, err := web.New()
	if err != nil {
		t.Fatal(err)
	}
	ts := newOpsServer(t, pool, func(s *api.Server) { s.Site = site })
	expired := ts.NewToken(t, "expired", []dataset.Scope{dataset.ReportRead}, time.Now().Add(-time.Hour))
	bad := apitest.WellFormedToken()
	cases := []struct {
		name, target string
		header       []string
	}{
		{"NoToken", "/api/general-report", nil},
		{"BadToken", "/api/general-report", []string{"Authorization", "Bearer " + bad}},
		{"BadTokenRemembered", "/api/general-report", []string{"Authorization", "Bearer " + bad}},
		{"BadBasic", "/api/general-report", []string{"Authorization", basic("x", bad)}},
		{"ExpiredToken", "/api/general-report", []string{"Authorization", "Bearer " + expired}},
		{"TokenInQuery", "/api/general-report?access_token=" + bad, nil},
		{"BadCookieAPI", "/api/general-report", []string{"Cookie", web.CookieName + "=" + expired}},
		{"NoTokenOData", "/odata/GeneralReport", nil},
	}
	dump := func(r response, cookie bool) string {
		h := r.Header.Clone()
		if cookie {
			if got := h.Values("Www-Authenticate"); got != nil {
				t.Errorf("a 401 to the page's cookie carries challenges %q", got)
			}
			h["Www-Authenticate"] = challenges
		}
		h.Del("X-Request-Id")
		h.Del("Date")
		var b strings.Builder
		keys := make([]string, 0, len(h))
		for k := range h {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			fmt.Fprintf(&b, "%s: %q\n", k, h[k])
		}
		return fmt.Sprintf("%d\n%s\n%s", r.Status, b.String(), r.Body)
	}
	var want string
	for _, tt := range cases {
		r := ts.Do(t, http.MethodGet, tt.target, tt.header...)
		got := dump(r, strings.HasPrefix(tt.name, "BadCookie"))
		if want == "" {
			want = got
			if r.Status != http.StatusUnauthorized || len(r.Header.Values("WWW-Authenticate")) != 2 {
				t.Fatalf("%s: %s", tt.name, got)
			}
			continue
		}
		if got != want {
			t.Errorf("%s:\n%s\nwant, as %s:\n%s", tt.name, got, cases[0].name, want)
		}
	}
	r := ts.Do(t, http.MethodGet, "/web/session", "Cookie", web.CookieName+"="+bad)
	if r.Status != http.StatusOK || !strings.HasPrefix(string(r.Body), `{"signed_in":false,"reason":"unknown"`) ||
		r.Header.Get("WWW-Authenticate") != "" {
		t.Errorf("/web/session with a bad cookie: %d %v %s", r.Status, r.Header.Values("WWW-Authenticate"), r.Body)
	}
}
