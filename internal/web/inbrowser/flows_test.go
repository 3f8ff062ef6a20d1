package inbrowser_test

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/jackc/pgx/v5"

	"github.com/informe/informe/auth"
	"github.com/informe/informe/internal/api"
	"github.com/informe/informe/internal/api/apitest"
	"github.com/informe/informe/internal/dataset"
	"github.com/informe/informe/internal/pgserver/pgtest"
	"github.com/informe/informe/internal/postgres"
	"github.com/informe/informe/internal/source"
	"github.com/informe/informe/internal/testenv"
	"github.com/informe/informe/internal/web"
	"github.com/informe/informe/metrics"
	"github.com/informe/informe/report"
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
	t.Parallel()
	ts := apitest.NewWebServer(t, pgtest.Fixture(t))
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
	spec := func(t *testing.T, r apitest.Response) {
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
		{"NavigationWithBearer", append([]string{"Authorization", "Bearer " + apitest.WellFormedToken()}, navigation...)},
		{"NavigationWithBasic", append([]string{"Authorization", "Basic dG9rZW46eA=="}, navigation...)},
	} {
		t.Run(tt.name, func(t *testing.T) { spec(t, ts.Do(t, http.MethodGet, target, tt.header...)) })
	}
	t.Run("NavigationWithAccessToken", func(t *testing.T) {
		spec(t, ts.Do(t, http.MethodGet, target+"&access_token="+apitest.WellFormedToken(), navigation...))
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
		api := apitest.New(t, pgtest.New(t))
		spec(t, api.Do(t, http.MethodGet, target, navigation...))
	})
}

// TestOptionErrorTargets checks that the refusals of a $filter, $orderby
// or $select made before the option is read (too long, or not decoding)
// carry a code and their target, on the JSON paths and in OData's shape.
func TestOptionErrorTargets(t *testing.T) {
	t.Parallel()
	ts := apitest.New(t, pgtest.New(t))
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
			if got := optionError(apitest.ODataOptionError(t, ts, "/odata/GeneralReport?"+tt.query)); got != tt.want {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
		for _, path := range []string{"/api/general-report?", "/api/general-report/export?format=csv&", "/api/contracts/export?"} {
			t.Run(tt.name+path, func(t *testing.T) {
				if got := optionError(apitest.JSONOptionError(t, ts, path+tt.query)); got != tt.want {
					t.Errorf("got %+v, want %+v", got, tt.want)
				}
			})
		}
	}
}

// flowShot saves a screenshot of the tab as /tmp/flows-name.png.
func flowShot(t *testing.T, p *tab, name, at string) {
	t.Helper()
	p.look(t, "flows-"+name, at, os.TempDir())
}

// testPageFlows drives the page's flows in Chromium: a refused condition
// told beside it, in Spanish, then in English; a link pasted into the open
// tab applied, and what it asks that the page cannot honour told; a
// download that reports its bytes and ends saying so; the arrow keys on the datasets keeping the
// focus.
func testPageFlows(t *testing.T) {
	pool := pgtest.Fixture(t)
	ts := apitest.NewWebServer(t, pool)
	p := openTab(t, ts, tabOptions{})
	p.signIn(t, ts.Token)
	open := func(t *testing.T, frag string) {
		t.Helper()
		p.do(t, chromedp.Navigate("about:blank"), chromedp.Navigate(ts.URL+"/#"+frag))
		p.wait(t, `document.body.dataset.ready === "true" && !document.getElementById("builder").hidden`)
		p.settled(t)
	}

	t.Run("ConditionError", func(t *testing.T) {
		// The second condition's date does not exist: informe's
		// bad_literal, at a position in the second condition's part.
		open(t, "ds=report&w="+url.QueryEscape("code_contract~eq~O'Higgins & Núñez")+"&w="+url.QueryEscape("task_end_date~ge~2024-02-30")+"&format=csv")
		p.wait(t, `document.getElementById("w1-error") !== null`)
		if got, want := p.text(t, "w1-error"), "Este valor no es válido para la columna (una fecha inexistente o un número fuera de rango)."; got != want {
			t.Errorf("beside condition 2: %q, want %q", got, want)
		}
		if got := p.eval(t, `String(document.getElementById("w0-error") && document.getElementById("w0-error").textContent)`); got != "null" && got != "" {
			t.Errorf("condition 1, which is right, is blamed: %s", got)
		}
		if got := p.text(t, "conds-error"); !strings.HasPrefix(got, "Condición 2: ") {
			t.Errorf("the alert says %q", got)
		}
		if got := p.eval(t, `document.getElementById("w1-v").getAttribute("aria-invalid")`); got != "true" {
			t.Errorf("condition 2's value is not marked invalid: %s", got)
		}
		flowShot(t, p, "condition-error-es", "conds-title")
		p.do(t, chromedp.Click(chromedp.ID("lang")))
		p.settled(t)
		p.wait(t, `document.getElementById("w1-error") !== null`)
		if got, want := p.text(t, "w1-error"), "This value is not valid for the column (a date that does not exist, or a number out of range)."; got != want {
			t.Errorf("in English: %q, want %q", got, want)
		}
		flowShot(t, p, "condition-error-en", "conds-title")
		p.do(t, chromedp.Click(chromedp.ID("lang")))
		p.settled(t)
	})

	t.Run("PastedLink", func(t *testing.T) {
		open(t, "ds=report&format=csv")
		// A link pasted into the open tab: applied, not overwritten.
		p.eval(t, `location.hash = "#ds=services&cols=service,nope&w=nope~eq~1&w=service~eq~x&format=csv&zzz=1&delimiter=pipe"; ""`)
		p.wait(t, `document.getElementById("download").getAttribute("href").startsWith("/api/services/export?") && document.body.dataset.loading === "false"`)
		p.settled(t)
		if got := p.eval(t, `location.hash`); !strings.Contains(got, "ds=services") || !strings.Contains(got, "cols=service") {
			t.Errorf("the pasted link was overwritten: %s", got)
		}
		notice := p.text(t, "link-issues")
		for _, want := range []string{"nope", "nope eq 1", "zzz", "delimiter=pipe", "más filas que las de quien envió el enlace"} {
			if !strings.Contains(notice, want) {
				t.Errorf("the notice does not tell %q:\n%s", want, notice)
			}
		}
		if href := p.eval(t, `document.getElementById("download").getAttribute("href")`); !strings.Contains(href, "columns=service&") || !strings.Contains(href, "service%20eq%20'x'") {
			t.Errorf("download link = %s", href)
		}
		flowShot(t, p, "link-issues", "")
		p.do(t, chromedp.Click(chromedp.ID("link-issues-ok")))
		if got := p.eval(t, `String(document.getElementById("link-issues").hidden)`); got != "true" {
			t.Error("the notice stays after Entendido")
		}
		// A link that asks for nothing odd says nothing.
		p.eval(t, `location.hash = "#ds=contracts&format=csv"; ""`)
		p.wait(t, `document.getElementById("download").getAttribute("href").startsWith("/api/contracts/export?")`)
		if got := p.eval(t, `String(document.getElementById("link-issues").hidden)`); got != "true" {
			t.Errorf("a plain link shows: %s", p.text(t, "link-issues"))
		}
	})

	t.Run("DatasetArrows", func(t *testing.T) {
		open(t, "ds=report&format=csv")
		p.do(t, chromedp.Focus(chromedp.ID("ds-report")), chromedp.KeyEvent(kbArrowDown))
		p.wait(t, `document.getElementById("ds-contracts").checked`)
		p.settled(t)
		if got := p.eval(t, `document.activeElement.id`); got != "ds-contracts" {
			t.Errorf("after ArrowDown the focus is on %q, want ds-contracts", got)
		}
		p.do(t, chromedp.KeyEvent(kbArrowDown))
		p.wait(t, `document.getElementById("ds-processes").checked && document.activeElement.id === "ds-processes"`)
	})

	t.Run("TaskStatusWords", func(t *testing.T) {
		open(t, "ds=report&format=csv")
		about := p.text(t, "col-task_status-about")
		for _, v := range []string{"Pendiente", "En Curso", "Cancelado", "Terminada"} {
			if !strings.Contains(about, v) {
				t.Errorf("«Estado de la tarea» says %q, without %s", about, v)
			}
		}
	})

	t.Run("Download", func(t *testing.T) {
		open(t, "ds=services&format=csv")
		link := p.eval(t, `document.getElementById("download").getAttribute("href")`)
		want := ts.Get(t, link)
		name, got := p.download(t, chromedp.Click(chromedp.ID("download")))
		if string(got) != string(want.Body) {
			t.Errorf("downloaded %d bytes, the export has %d", len(got), len(want.Body))
		}
		// Named in Spanish, dated the day it is in Santiago.
		santiago, err := time.LoadLocation("America/Santiago")
		if err != nil {
			t.Fatal(err)
		}
		day := time.Now().In(santiago)
		if name != "servicios-"+day.Format("2006-01-02")+".csv" && name != "servicios-"+day.Add(-time.Minute).Format("2006-01-02")+".csv" {
			t.Errorf("downloaded as %q", name)
		}
		p.wait(t, `document.getElementById("download-status").dataset.done === "true"`)
		status := p.text(t, "download-status")
		if !regexp.MustCompile(`^Descargado servicios-\d{4}-\d{2}-\d{2}\.csv: [0-9.,]+ (B|KB), completo\.$`).MatchString(status) {
			t.Errorf("the download line says %q", status)
		}
		flowShot(t, p, "download-done", "result-title")
	})

	t.Run("DownloadFailsThenRetried", func(t *testing.T) {
		open(t, "ds=services&format=csv")
		// The count and preview are read; the export then fails in the
		// database (its view is gone), as a download can.
		ctx := context.Background()
		if _, err := pool.Exec(ctx, "ALTER VIEW service_list_typed RENAME TO service_list_away"); err != nil {
			t.Fatal(err)
		}
		restored := false
		restore := func() {
			if !restored {
				if _, err := pool.Exec(ctx, "ALTER VIEW service_list_away RENAME TO service_list_typed"); err != nil {
					t.Fatal(err)
				}
				restored = true
			}
		}
		defer restore()
		p.do(t, chromedp.Click(chromedp.ID("download")))
		p.wait(t, `document.getElementById("download-error").textContent !== "" && !document.getElementById("download-retry").hidden`)
		if got := p.text(t, "download-error"); !strings.HasPrefix(got, "La descarga de servicios falló después de 0 B: ") {
			t.Errorf("the failed download says %q", got)
		}
		if got := p.eval(t, `String(document.getElementById("download-status").dataset.done)`); got == "true" {
			t.Error("a failed download is told as done")
		}
		flowShot(t, p, "download-failed", "result-title")
		restore()
		link := p.eval(t, `document.getElementById("download").getAttribute("href")`)
		want := ts.Get(t, link)
		_, got := p.download(t, chromedp.Click(chromedp.ID("download-retry")))
		if string(got) != string(want.Body) {
			t.Errorf("the retried download has %d bytes, the export %d", len(got), len(want.Body))
		}
		p.wait(t, `document.getElementById("download-status").dataset.done === "true"`)
		if got := p.text(t, "download-error"); got != "" {
			t.Errorf("after the retry the error still says %q", got)
		}
	})
}

// kbArrowDown is the ArrowDown key, as chromedp.KeyEvent takes it.
const kbArrowDown = "\u0301"

// testPageSignInReturns checks that a browser that opens an export's URL
// without a session lands on the sign-in page in its language, and, once
// signed in, gets the file; and that a link naming a dataset the token
// cannot read says so.
func testPageSignInReturns(t *testing.T) {
	pool := pgtest.Fixture(t)
	ts := apitest.NewWebServer(t, pool)
	const target = "/api/services/export?format=csv&$filter=service%20ne%20'O''Higgins%20%26%20N%C3%BA%C3%B1ez'"
	for _, lang := range []string{"es-CL", "en-US"} {
		t.Run(lang, func(t *testing.T) {
			p := openTab(t, ts, tabOptions{lang: lang, url: ts.URL + target})
			p.wait(t, `!document.getElementById("sign-in").hidden`)
			note := p.text(t, "return-note")
			want := map[string]string{"es-CL": "Ingrese para descargar", "en-US": "Sign in to download"}[lang]
			if !strings.HasPrefix(note, want) || !strings.Contains(note, "/api/services/export") {
				t.Errorf("the sign-in says %q", note)
			}
			flowShot(t, p, "sign-in-return-"+lang, "")
			name, got := p.download(t, chromedp.SetValue(chromedp.ID("token"), ts.Token), chromedp.Click(chromedp.CSS("#sign-in-form button")))
			if exp := ts.Get(t, target); string(got) != string(exp.Body) {
				t.Errorf("after signing in got %d bytes, the export has %d", len(got), len(exp.Body))
			}
			if prefix := map[string]string{"es-CL": "servicios-", "en-US": "services-"}[lang]; !strings.HasPrefix(name, prefix) {
				t.Errorf("downloaded as %q", name)
			}
			if got := p.eval(t, `location.search`); got != "" {
				t.Errorf("the page keeps ?%s after going back", got)
			}
		})
	}

	t.Run("DatasetNotReadable", func(t *testing.T) {
		p := openTab(t, ts, tabOptions{url: ts.URL + "/#ds=users&w=name~eq~x&format=csv"})
		p.signIn(t, ts.NewToken(t, "report only", []dataset.Scope{dataset.ReportRead}, time.Time{}))
		notice := p.text(t, "link-issues")
		if !strings.Contains(notice, "«users»") || !strings.Contains(notice, "no existen o este token no puede leerlos") {
			t.Errorf("the notice says %q", notice)
		}
	})
}

// testPageAppsScript checks the Apps Script of every dataset with a
// condition on a value holding an apostrophe, an accent and &: node parses
// it, runs it with Google's services stood in by plain objects that record
// what it asks, and curl fetches its URL with its header, which gives the
// export's bytes and the rows SQL counts.
func testPageAppsScript(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		testenv.Missing(t, "node: %v", err)
	}
	if _, err := exec.LookPath("curl"); err != nil {
		testenv.Missing(t, "curl: %v", err)
	}
	pool := pgtest.Fixture(t)
	if _, err := pool.Exec(context.Background(), `UPDATE services SET name = $1 WHERE id = 1`, awkward); err != nil {
		t.Fatal(err)
	}
	site, err := web.New()
	if err != nil {
		t.Fatal(err)
	}
	server := func() *api.Server {
		return &api.Server{
			Data: postgres.NewStore(pool), Report: source.Report(report.Maintained),
			Tokens: auth.NewStore(pool), Metrics: metrics.New(pool), Site: site,
		}
	}
	tls := serveTLS(t, server(), pool)
	ts := apitest.Serve(t, server())
	ts.Pool, ts.Token = pool, tls.Token
	// Apps Script needs a public HTTPS address: on http://127.0.0.1 the
	// page says why it is not offered.
	p := openTab(t, ts, tabOptions{})
	p.signIn(t, ts.Token)
	if got := p.text(t, "c-apps-unavailable"); !strings.Contains(got, "HTTPS pública") {
		t.Errorf("on plain HTTP the Apps Script item says %q", got)
	}
	tu, _ := url.Parse(tls.URL)
	public := "https://informe.example.cl:" + tu.Port()
	p = openTab(t, tls, tabOptions{url: public + "/", flags: map[string]any{
		"host-resolver-rules":       "MAP informe.example.cl 127.0.0.1",
		"ignore-certificate-errors": true,
	}})
	p.signIn(t, tls.Token)
	for _, tt := range []struct{ ds, frag string }{
		{"report", "ds=report&w=" + url.QueryEscape("service~eq~"+awkward) + "&format=csv"},
		{"services", "ds=services&w=" + url.QueryEscape("service~eq~"+awkward) + "&format=xlsx&header=true"},
		{"contracts", "ds=contracts&cols=contract_id,service,costo_servicio&w=" + url.QueryEscape("service~eq~"+awkward) + "&format=csv&delimiter=semicolon&decimal=comma"},
	} {
		t.Run(tt.ds, func(t *testing.T) {
			p.do(t, chromedp.Navigate("about:blank"), chromedp.Navigate(public+"/#"+tt.frag))
			p.wait(t, `document.body.dataset.ready === "true" && !document.getElementById("builder").hidden`)
			p.settled(t)
			script := p.eval(t, `document.getElementById("c-apps").value`)
			dir := t.TempDir()
			file := filepath.Join(dir, "Code.js")
			if err := os.WriteFile(file, []byte(script), 0o644); err != nil {
				t.Fatal(err)
			}
			if out, err := exec.Command(node, "--check", file).CombinedOutput(); err != nil {
				t.Fatalf("node --check: %v\n%s\n%s", err, out, script)
			}
			// Google's services, standing in: they record the fetch and
			// answer a CSV of two rows, which the script writes.
			harness := script + `
const asked = {};
var PropertiesService = {getScriptProperties: () => ({getProperty: (k) => k === "INFORME_TOKEN" ? "TOKEN" : null})};
var UrlFetchApp = {fetch: (url, o) => { asked.url = url; asked.auth = o.headers.Authorization;
  return {getResponseCode: () => 200, getContentText: () => "a,b\n1,x\n"}; }};
var Utilities = {parseCsv: (s) => s.trim().split("\n").map((l) => l.split(","))};
var written = null;
var sheet = {clearContents: () => {}, getRange: (r, c, n, m) => ({setValues: (v) => { written = {r, c, n, m, v}; }})};
var SpreadsheetApp = {getActive: () => ({getSheetByName: (n) => { asked.sheet = n; return sheet; }, insertSheet: () => sheet})};
var triggers = [];
var ScriptApp = {getProjectTriggers: () => [], deleteTrigger: () => {},
  newTrigger: (f) => ({timeBased: () => ({everyHours: (h) => ({create: () => triggers.push(f + "/" + h)})})})};
instalar();
console.log(JSON.stringify({asked, written, triggers}));
`
			out, err := exec.Command(node, "-e", harness).CombinedOutput()
			if err != nil {
				t.Fatalf("node: %v\n%s", err, out)
			}
			var run struct {
				Asked    struct{ URL, Auth, Sheet string }
				Written  struct{ N, M int }
				Triggers []string
			}
			if err := json.Unmarshal(out, &run); err != nil {
				t.Fatalf("%v: %s", err, out)
			}
			if run.Asked.Auth != "Bearer TOKEN" || run.Written.N != 2 || run.Written.M != 2 || len(run.Triggers) != 1 || run.Triggers[0] != "actualizar/1" {
				t.Errorf("the script did %+v", run)
			}
			if strings.Contains(run.Asked.URL, "access_token") || strings.Contains(script, tls.Token) {
				t.Errorf("the script carries the token: %s", run.Asked.URL)
			}
			// Its URL, fetched as the script fetches it.
			curl := exec.Command("curl", "-sS", "--fail", "-k", "--resolve", "informe.example.cl:"+tu.Port()+":127.0.0.1",
				"-H", "Authorization: Bearer "+tls.Token, run.Asked.URL)
			body, err := curl.Output()
			if err != nil {
				t.Fatalf("curl %s: %v", run.Asked.URL, err)
			}
			u, err := url.Parse(run.Asked.URL)
			if err != nil {
				t.Fatal(err)
			}
			if exp := ts.Get(t, u.RequestURI()); string(body) != string(exp.Body) {
				t.Errorf("curl got %d bytes, the export %s has %d", len(body), u.RequestURI(), len(exp.Body))
			}
			if got := u.Query().Get("$filter"); got != "service eq '"+strings.ReplaceAll(awkward, "'", "''")+"'" {
				t.Errorf("$filter = %q", got)
			}
			records, err := csv.NewReader(strings.NewReader(string(body))).ReadAll()
			if err != nil {
				t.Fatal(err)
			}
			rows := len(records) - 1
			var want int
			src, err := source.Named(map[string]string{"report": "general-report"}[tt.ds]+strings.TrimPrefix(tt.ds, "report"), report.Maintained)
			if err != nil {
				t.Fatal(err)
			}
			if err := pool.QueryRow(context.Background(), "SELECT count(*) FROM "+pgx.Identifier{src.Text}.Sanitize()+" WHERE service = $1", awkward).Scan(&want); err != nil {
				t.Fatal(err)
			}
			if want == 0 || rows != want {
				t.Errorf("curl's CSV holds %d rows, SQL counts %d", rows, want)
			}
		})
	}
}
