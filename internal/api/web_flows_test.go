package api_test

import (
	"net/http"
	"net/url"
	"os/exec"
	"strings"
	"testing"

	"github.com/informe/informe/internal/pgserver/pgtest"
	"github.com/informe/informe/internal/testenv"
)

// noRedirects is a client that shows a redirect rather than following it.
var noRedirects = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

// navigation are the headers of Chromium's own navigation to a URL typed
// in its address bar.
var navigation = []string{
	"Accept", "text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8",
	"Sec-Fetch-Mode", "navigate", "Sec-Fetch-Dest", "document", "Sec-Fetch-Site", "none", "Sec-Fetch-User", "?1",
}

// TestSignInFirst checks who is sent to the page's sign-in and who gets
// the spec's 401: a browser's navigation to an export without a token is
// a 303 to the page, which comes back to the export; every API client
// (curl as it is, Power Query's and Excel's requests, a script's fetch, a
// navigation that carries a token, however wrong) gets the 401's exact
// bytes.
func TestSignInFirst(t *testing.T) {
	ts := newWebServer(t, fixtureDB(t))
	const target = "/api/general-report/export?format=csv&$filter=client_id%20eq%201"
	do := func(t *testing.T, path string, header ...string) *http.Response {
		t.Helper()
		req, err := http.NewRequest(http.MethodGet, ts.URL+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i+1 < len(header); i += 2 {
			req.Header.Set(header[i], header[i+1])
		}
		resp, err := noRedirects.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	t.Run("Navigation", func(t *testing.T) {
		for _, path := range []string{target, "/users?format=csv", "/api/contracts/export"} {
			resp := do(t, path, navigation...)
			if resp.StatusCode != http.StatusSeeOther {
				t.Fatalf("%s: %d, want 303", path, resp.StatusCode)
			}
			loc, err := url.Parse(resp.Header.Get("Location"))
			if err != nil || loc.Path != "/" || loc.Query().Get("return") != path {
				t.Errorf("%s: Location %q, want / with return=%s", path, resp.Header.Get("Location"), path)
			}
		}
	})
	spec := func(t *testing.T, r response) {
		t.Helper()
		if r.Status != 401 || string(r.Body) != `{"message":"Invalid Token"}` {
			t.Errorf("%d %s, want the spec's 401", r.Status, r.Body)
		}
	}
	for _, tt := range []struct {
		name   string
		header []string
	}{
		{"NoHeaders", nil},
		{"PowerQuery", []string{"User-Agent", "Microsoft.Data.Mashup (https://go.microsoft.com/fwlink/?LinkID=304225)", "Accept", "*/*"}},
		{"ExcelFromWeb", []string{"User-Agent", "Microsoft Office Excel 2014", "Accept", "text/html, application/xhtml+xml, */*"}},
		{"Fetch", []string{"Accept", "*/*", "Sec-Fetch-Mode", "cors", "Sec-Fetch-Dest", "empty"}},
		{"Frame", []string{"Accept", "text/html", "Sec-Fetch-Mode", "navigate", "Sec-Fetch-Dest", "iframe"}},
		{"NavigationWithBearer", append([]string{"Authorization", "Bearer " + wellFormedToken()}, navigation...)},
		{"NavigationWithBasic", append([]string{"Authorization", "Basic dG9rZW46eA=="}, navigation...)},
	} {
		t.Run(tt.name, func(t *testing.T) { spec(t, ts.do(t, http.MethodGet, target, tt.header...)) })
	}
	t.Run("NavigationWithAccessToken", func(t *testing.T) {
		spec(t, ts.do(t, http.MethodGet, target+"&access_token="+wellFormedToken(), navigation...))
	})
	t.Run("HEAD", func(t *testing.T) {
		if resp := do(t, target); resp.StatusCode != 401 {
			t.Errorf("HEAD: %d", resp.StatusCode)
		}
	})
	t.Run("Curl", func(t *testing.T) {
		if _, err := exec.LookPath("curl"); err != nil {
			testenv.Missing(t, "curl: %v", err)
		}
		out, err := exec.Command("curl", "-sS", "-w", "\n%{http_code}", ts.URL+target).Output()
		if err != nil {
			t.Fatal(err)
		}
		if got, want := string(out), "{\"message\":\"Invalid Token\"}\n401"; got != want {
			t.Errorf("curl: %q, want %q", got, want)
		}
	})
	t.Run("WithoutPage", func(t *testing.T) {
		api := newServer(t, pgtest.New(t))
		spec(t, api.do(t, http.MethodGet, target, navigation...))
	})
}

// TestOptionErrorTargets checks that the refusals of a $filter, $orderby
// or $select made before the option is read (too long, or not decoding)
// carry a code and their target, on the JSON paths and in OData's shape.
func TestOptionErrorTargets(t *testing.T) {
	ts := newServer(t, pgtest.New(t))
	long := "contract_id eq 1" + strings.Repeat(" or contract_id eq 1", 120)
	for _, tt := range []struct {
		name, query string
		want        optionError
	}{
		{"FilterTooLong", "$filter=" + url.QueryEscape(long), optionError{400, "too_long", "$filter", 0}},
		{"OrderByTooLong", "$orderby=" + strings.Repeat("task,", 120) + "task", optionError{400, "too_long", "$orderby", 0}},
		{"SelectTooLong", "$select=" + strings.Repeat("task,", 500) + "task", optionError{400, "too_long", "$select", 0}},
		{"FilterBadEscape", "$filter=task%20eq%20'100%'", optionError{400, "malformed_query", "$filter", 13}},
		{"OrderByBadEscape", "$orderby=task%2", optionError{400, "malformed_query", "$orderby", 5}},
		{"SelectSemicolon", "$select=task;contract_id", optionError{400, "malformed_query", "$select", 5}},
	} {
		t.Run(tt.name+"/feed", func(t *testing.T) {
			if got := odataOptionError(t, ts, "/odata/GeneralReport?"+tt.query); got != tt.want {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
		for _, path := range []string{"/api/general-report?", "/api/general-report/export?format=csv&", "/api/contracts/export?"} {
			t.Run(tt.name+path, func(t *testing.T) {
				if got := jsonOptionError(t, ts, path+tt.query); got != tt.want {
					t.Errorf("got %+v, want %+v", got, tt.want)
				}
			})
		}
	}
}
