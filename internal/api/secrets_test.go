package api_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/informe/informe/auth"
	"github.com/informe/informe/internal/api"
	"github.com/informe/informe/internal/api/apitest"
	"github.com/informe/informe/internal/pgserver/pgtest"
	"github.com/informe/informe/internal/postgres"
	"github.com/informe/informe/internal/source"
	"github.com/informe/informe/metrics"
	"github.com/informe/informe/report"
)

// TestTokenLeaksNowhere sends a token in every place a probe from outside
// would put one: the request id, every parameter of every route, parameter
// names that fold to access_token, X-Forwarded-Host and -Proto, paths,
// methods; with and without valid credentials. The token's text, and its
// body without the prefix, must appear in no log line, response header or
// response body.
func TestTokenLeaksNowhere(t *testing.T) {
	t.Parallel()
	ts := newServer(t, pgtest.Fixture(t))
	probe := apitest.WellFormedToken()
	body := strings.TrimPrefix(probe, "informe_")
	type request struct {
		method, target string
		header         []string
	}
	var reqs []request
	add := func(method, target string, header ...string) {
		reqs = append(reqs, request{method, target, header})
	}
	for _, tok := range []string{probe, body, strings.ToUpper(probe[:8]) + body} {
		q := url.QueryEscape(tok)
		for _, p := range []string{"/api/general-report", "/api/general-report/export", "/users"} {
			for _, name := range []string{"columns", "format", "delimiter", "contract_id", "code_contract", "client_id",
				"rut", "page", "result_per_page", "header", "bom"} {
				add("GET", p+"?"+name+"="+q)
				add("GET", p+"?result_per_page=2&"+name+"=x,"+q)
			}
			add("GET", p+"?result_per_page=2&ACCESS_TOKEN="+q+"&Access_Token="+q+"&foo="+q)
			add("GET", p+"?result_per_page=2&"+q+"=1")
			add("GET", p+"?access_token="+q)
			add("HEAD", p+"?result_per_page=2&Access_Token="+q)
		}
		for _, p := range []string{"/odata/GeneralReport", "/odata/Users"} {
			for _, opt := range []string{"$select", "$orderby", "$format", "$top", "$skip", "$count", "$filter", "$skiptoken"} {
				add("GET", p+"?"+opt+"="+q)
				add("GET", p+"?"+opt+"="+url.QueryEscape("contract_id,"+tok))
			}
			for _, f := range []string{"code_contract eq '" + tok + "'", tok + " eq 1", "contract_id eq " + tok,
				"startswith(code_contract,'" + tok + "')", "contract_id eq @" + tok, "client_rut eq '" + tok + "'"} {
				add("GET", p+"?$filter="+url.QueryEscape(f))
			}
			add("GET", p+"?$orderby="+url.QueryEscape("contract_id "+tok))
			add("GET", p+"?$format="+url.QueryEscape("application/json;x="+tok))
			add("GET", p+"?ACCESS_TOKEN="+q+"&Access_Token="+q+"&foo="+q, "Prefer", "odata.maxpagesize=1")
			add("GET", p+"?$"+q+"=1")
			add("GET", p, "Accept", "application/json;odata.metadata="+tok)
			add("GET", p, "Prefer", "odata.maxpagesize="+tok)
		}
		add("GET", "/odata/?$format="+q)
		add("GET", "/openapi.json?format="+q)
		add("GET", "/users", "X-Request-Id", tok)
		add("GET", "/users", "X-Request-Id", "x-"+tok)
		add("GET", "/odata/Users", "X-Forwarded-Host", tok+".example", "X-Forwarded-Proto", tok, "Prefer", "odata.maxpagesize=1")
		add("GET", "/odata/", "X-Forwarded-Host", tok)
		for _, p := range []string{"/" + q, "/api/" + q, "/odata/" + q, "/users/" + q, "/users?x=" + q} {
			for _, m := range []string{"GET", "POST", "PUT", "DELETE", "PATCH", "OPTIONS"} {
				add(m, p)
			}
		}
		add("GET", "/users", "Authorization", "Bearer "+tok)
		add("GET", "/users", "Accept", "text/"+tok)
	}
	for _, r := range reqs {
		for _, authorized := range []bool{true, false} {
			header := r.header
			if authorized && !slices.Contains(header, "Authorization") {
				header = append([]string{"Authorization", "Bearer " + ts.Token}, header...)
			}
			resp := ts.Do(t, r.method, r.target, header...)
			if resp.Status == 0 || resp.Status >= 500 && resp.Status != http.StatusNotImplemented {
				t.Errorf("%s %s: status %d: %s", r.method, r.target, resp.Status, resp.Body)
			}
			where := []string{string(resp.Body)}
			for k, vs := range resp.Header {
				where = append(where, k+": "+strings.Join(vs, ", "))
			}
			for _, w := range where {
				if strings.Contains(w, body) || strings.Contains(w, ts.Token) {
					t.Errorf("%s %s (authorized %v): the token is in the response: %.300s", r.method, r.target, authorized, w)
				}
			}
		}
	}
	logs := ts.Logs.String()
	if strings.Contains(logs, body) || strings.Contains(logs, ts.Token[len("informe_"):]) {
		t.Errorf("the token is in the log:\n%s", logs)
	}
	if !strings.Contains(logs, "REDACTED") {
		t.Error("no REDACTED in the log: did the probes reach the server?")
	}
}

// TestRequestIDNeverAToken checks that an X-Request-Id is echoed and logged
// only when it cannot be a token; otherwise the request gets a fresh id.
func TestRequestIDNeverAToken(t *testing.T) {
	t.Parallel()
	ts := newServer(t, pgtest.Fixture(t))
	tok := apitest.WellFormedToken()
	for _, tt := range []struct {
		name, id string
		echoed   bool
	}{
		{"OKPlain", "client-id-42", true},
		{"OKUUID", "123e4567-e89b-12d3-a456-426614174000", true},
		{"OKHex", "0123456789abcdef0123456789abcdef", true},
		{"OKLong", strings.Repeat("a", 64), true},
		{"ReplacedToken", tok, false},
		{"ReplacedUpperCasePrefix", "INFORME_" + tok[8:], false},
		{"ReplacedBody", tok[8:], false},
		{"ReplacedBodyInID", "req." + tok[8:] + ".1", false},
		{"ReplacedPrefixAndMore", "informe_x", false},
		{"ReplacedTooLong", strings.Repeat("a", 65), false},
		{"ReplacedBadCharacters", "a b", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := ts.Get(t, "/users", "X-Request-Id", tt.id)
			got := r.Header.Get("X-Request-Id")
			if (got == tt.id) != tt.echoed || got == "" {
				t.Errorf("X-Request-Id = %q, want echoed %v", got, tt.echoed)
			}
			requestLine(t, ts.Logs.String(), got)
		})
	}
	if strings.Contains(ts.Logs.String(), tok[8:]) {
		t.Error("the token is in the log")
	}
}

// TestUnauthorizedIsTheSame checks that a 401 says nothing of the path or
// the method: the same headers and body for paths that exist, paths that
// do not, OData's and the others, under every method.
func TestUnauthorizedIsTheSame(t *testing.T) {
	t.Parallel()
	ts := newServer(t, pgtest.Fixture(t))
	// shape is a 401 without what differs by request: its id and date.
	shape := func(r response) string {
		h := r.Header.Clone()
		h.Del("X-Request-Id")
		h.Del("Date")
		var b strings.Builder
		_ = h.Write(&b)
		return b.String() + "\n" + string(r.Body)
	}
	want := map[bool]string{} // by whether the method is HEAD
	for _, path := range []string{"/users", "/nope", "/api/general-report", "/api/general-report/export",
		"/openapi.json", "/odata", "/odata/", "/odata/$metadata", "/odata/GeneralReport", "/odata/nope", "/users/"} {
		for _, method := range []string{"GET", "HEAD", "POST", "PUT", "DELETE", "PATCH", "OPTIONS"} {
			r := ts.Do(t, method, path)
			if r.Status != http.StatusUnauthorized {
				t.Errorf("%s %s: status %d, want 401", method, path, r.Status)
				continue
			}
			got := shape(r)
			head := method == http.MethodHead
			if want[head] == "" {
				want[head] = got
				if !head && !strings.Contains(got, `{"message":"Invalid Token"}`) {
					t.Errorf("401 body %s", r.Body)
				}
				continue
			}
			if got != want[head] {
				t.Errorf("%s %s: 401\n%s\nwant\n%s", method, path, got, want[head])
			}
		}
	}
}

// TestForwardedHeadersNeedTrustedProxy checks that X-Forwarded-Host and
// -Proto change the links of the OData feed only when the peer is one of
// the trusted proxies: a request carrying its token in the URL must not
// be handed a next link to another host.
func TestForwardedHeadersNeedTrustedProxy(t *testing.T) {
	t.Parallel()
	pool := pgtest.Fixture(t)
	untrusted := newServer(t, pool)
	server := func(proxies string) *testServer {
		prefixes, err := api.ParseTrustedProxies(proxies)
		if err != nil {
			t.Fatal(err)
		}
		ts := serve(t, &api.Server{
			Data: postgres.NewStore(pool), Report: source.Report(report.Maintained),
			Tokens: auth.NewStore(pool), Metrics: metrics.New(pool), TrustedProxies: prefixes,
		})
		ts.Token = untrusted.Token
		return ts
	}
	for _, tt := range []struct {
		name string
		ts   *testServer
		root string // "" for the server's own
	}{
		{"IgnoredByDefault", untrusted, ""},
		{"IgnoredFromOtherPeers", server("10.0.0.0/8, 192.168.1.1"), ""},
		{"BelievedFromTrustedProxy", server("10.0.0.0/8,127.0.0.0/8"), "https://evil.example/odata"},
		{"BelievedFromTrustedAddress", server("127.0.0.1"), "https://evil.example/odata"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			want := tt.root
			if want == "" {
				want = tt.ts.URL + "/odata"
			}
			r := tt.ts.Do(t, "GET", "/odata/Users?access_token="+tt.ts.Token,
				"X-Forwarded-Host", "evil.example", "X-Forwarded-Proto", "https", "Prefer", "odata.maxpagesize=1")
			var p odataPage
			if err := json.Unmarshal(r.Body, &p); err != nil || r.Status != 200 {
				t.Fatalf("status %d: %s", r.Status, r.Body)
			}
			if !strings.HasPrefix(p.NextLink, want+"/Users?") || !strings.HasPrefix(p.Context, want+"/$metadata") {
				t.Errorf("next link %s, context %s; want them on %s", p.NextLink, p.Context, want)
			}
		})
	}
}

// TestForwardedHostValidated checks that a trusted proxy's
// X-Forwarded-Host goes into the OData links only when it is a host name
// or address with an optional port from 1 to 65535; any other is ignored,
// as if absent, and the links are the listener's.
func TestForwardedHostValidated(t *testing.T) {
	t.Parallel()
	pool := pgtest.Fixture(t)
	own := newServer(t, pool)
	prefixes, err := api.ParseTrustedProxies("127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	ts := serve(t, &api.Server{
		Data: postgres.NewStore(pool), Report: source.Report(report.Maintained),
		Tokens: auth.NewStore(pool), Metrics: metrics.New(pool), TrustedProxies: prefixes,
	})
	ts.Token = own.Token
	for _, tt := range []struct {
		name, host, root string // root "" for the listener's own
	}{
		{"OKName", "informe.example.cl", "http://informe.example.cl/odata"},
		{"OKNamePort", "informe.example.cl:8443", "http://informe.example.cl:8443/odata"},
		{"OKPortMax", "informe.example.cl:65535", "http://informe.example.cl:65535/odata"},
		{"OKIPv4", "10.0.0.5:8080", "http://10.0.0.5:8080/odata"},
		{"OKIPv6", "[2001:db8::1]:8443", "http://[2001:db8::1]:8443/odata"},
		{"OKTrailingDot", "informe.example.cl.", "http://informe.example.cl./odata"},
		{"ErrQuote", `ev"il.example`, ""},
		{"ErrPortTooLarge", "evil.example:99999", ""},
		{"ErrPortZero", "evil.example:0", ""},
		{"ErrPortEmpty", "evil.example:", ""},
		{"ErrPortSign", "evil.example:+80", ""},
		{"ErrTwoHosts", "evil.example, informe.example.cl", ""},
		{"ErrUserInfo", "user@evil.example", ""},
		{"ErrPath", "evil.example/x", ""},
		{"ErrAngle", "evil.example<script>", ""},
		{"ErrLabelDash", "-evil.example", ""},
		{"ErrLabelEmpty", "evil..example", ""},
		{"ErrLabelLong", strings.Repeat("a", 64) + ".example", ""},
		{"ErrIPv6Bare", "2001:db8::1", ""},
		{"ErrIPv6Zone", "[fe80::1%25eth0]", ""},
		{"ErrIPv4InBrackets", "[10.0.0.5]", ""},
		{"ErrUnicode", "évil.example", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			want := tt.root
			if want == "" {
				want = ts.URL + "/odata"
			}
			r := ts.Do(t, "GET", "/odata/Users", "Authorization", "Bearer "+ts.Token,
				"X-Forwarded-Host", tt.host, "Prefer", "odata.maxpagesize=1")
			var p odataPage
			if err := json.Unmarshal(r.Body, &p); err != nil || r.Status != 200 {
				t.Fatalf("status %d: %s", r.Status, r.Body)
			}
			if !strings.HasPrefix(p.NextLink, want+"/Users?") || !strings.HasPrefix(p.Context, want+"/$metadata") {
				t.Errorf("next link %s, context %s; want them on %s", p.NextLink, p.Context, want)
			}
		})
	}
}

func TestParseTrustedProxies(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name, in string
		want     []string
		wantErr  bool
	}{
		{"OKEmpty", "", nil, false},
		{"OKOne", "10.0.0.0/8", []string{"10.0.0.0/8"}, false},
		{"OKSeveral", " 10.0.0.0/8 , 2001:db8::/32,,", []string{"10.0.0.0/8", "2001:db8::/32"}, false},
		{"OKAddress", "127.0.0.1,::1", []string{"127.0.0.1/32", "::1/128"}, false},
		{"OKMasked", "10.1.2.3/8", []string{"10.0.0.0/8"}, false},
		{"ErrName", "proxy.internal", nil, true},
		{"ErrBits", "10.0.0.0/33", nil, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := api.ParseTrustedProxies(tt.in)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, want an error %v", err, tt.wantErr)
			}
			var s []string
			for _, p := range got {
				s = append(s, p.String())
			}
			if !slices.Equal(s, tt.want) {
				t.Errorf("got %v, want %v", s, tt.want)
			}
		})
	}
}

// TestODataUnsupportedNotAnError checks that a 501, the client asking for
// what informe does not do, is logged at INFO, not as a failure of the
// server, and that the smaller refusals of the feed hold over HTTP.
func TestODataUnsupportedNotAnError(t *testing.T) {
	t.Parallel()
	ts := newServer(t, pgtest.Fixture(t))
	for _, tt := range []struct {
		name, target string
		header       []string
		status       int
	}{
		{"Expand", "/odata/GeneralReport?$expand=Users", nil, 501},
		{"Expand", "/odata/Users?$expand=x", nil, 501},
		{"SelectStarThenUnknown", "/odata/Users?$select=*,nope", nil, 400},
		{"SelectStarAndProperty", "/odata/Users?$select=*,name", nil, 200},
		{"MetadataNoneInFormat", "/odata/Users?$format=application/json%3Bodata.metadata%3Dnone", nil, 406},
		{"MetadataNoneInAccept", "/odata/Users", []string{"Accept", "application/json;odata.metadata=none"}, 406},
	} {
		t.Run(tt.name, func(t *testing.T) {
			id := "unsupported-" + strings.ToLower(tt.name)
			r := ts.Get(t, tt.target, append([]string{"X-Request-Id", id}, tt.header...)...)
			if r.Status != tt.status {
				t.Fatalf("status %d, want %d: %s", r.Status, tt.status, r.Body)
			}
			requestLine(t, ts.Logs.String(), id)
		})
	}
	if strings.Contains(ts.Logs.String(), `"level":"ERROR"`) {
		t.Errorf("an ERROR line:\n%s", ts.Logs.String())
	}
}
