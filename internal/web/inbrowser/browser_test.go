package inbrowser_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/informe/informe/auth"
	"github.com/informe/informe/internal/api"
	"github.com/informe/informe/internal/api/apitest"
	ibrowser "github.com/informe/informe/internal/browser"
	"github.com/informe/informe/internal/pgserver/pgtest"
	"github.com/informe/informe/internal/postgres"
	"github.com/informe/informe/internal/source"
	"github.com/informe/informe/internal/testenv"
	"github.com/informe/informe/internal/web"
	"github.com/informe/informe/metrics"
	"github.com/informe/informe/report"
)

var screenshots = flag.String("screenshots", "", "save the browser tests' screenshots in this folder (docs/screenshots: ../../../docs/screenshots)")

// tab is a browser tab on the web page, with its downloads folder.
type tab struct {
	ctx       context.Context
	downloads string
	ts        *apitest.Server
	axe       string // axe-core's script, "" when not installed
}

// tabOptions say how to open a tab: the browser's language (default
// es-CL), its window size and flags, and the address (default the test
// server's).
type tabOptions struct {
	lang          string
	width, height int
	flags         map[string]any
	url           string
}

// openTab starts Chromium on the page of ts (in a test of [TestBrowser]).
// Without a Chromium the test is skipped (failed under CI=true);
// scripts/test installs one.
func openTab(t *testing.T, ts *apitest.Server, o tabOptions) *tab {
	t.Helper()
	if _, err := ibrowser.Path(); err != nil {
		testenv.Missing(t, "%v", err)
	}
	if o.lang == "" {
		o.lang = "es-CL"
	}
	if o.url == "" {
		o.url = ts.URL + "/"
	}
	dl := t.TempDir()
	b, err := browsers.get(ibrowser.Options{Lang: o.lang, Width: o.width, Height: o.height, Flags: o.flags})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel, err := b.Tab(dl)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cancel)
	p := &tab{ctx: ctx, downloads: dl, ts: ts}
	if path, ok := testenv.NodeModule(t, "axe-core/axe.min.js"); ok {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		p.axe = string(b)
	}
	p.do(t, chromedp.Navigate(o.url))
	p.wait(t, `document.body.dataset.ready === "true"`)
	return p
}

// browsers are the tests' Chromiums, one for each language, window size
// and flags, started when a test first asks for one and stopped when the
// tests end: each tab is a browser context of its own, as fresh as a new
// browser, at a tenth of the cost of starting one.
var browsers = &browserSet{started: map[string]*ibrowser.Browser{}}

type browserSet struct {
	mu      sync.Mutex
	started map[string]*ibrowser.Browser
}

// get returns the browser started with o.
func (s *browserSet) get(o ibrowser.Options) (*ibrowser.Browser, error) {
	key := fmt.Sprint(o.Lang, o.Width, o.Height, o.Flags) // fmt sorts a map's keys
	s.mu.Lock()
	defer s.mu.Unlock()
	if b, ok := s.started[key]; ok {
		return b, nil
	}
	b, err := ibrowser.Launch(context.Background(), o)
	if err != nil {
		return nil, err
	}
	s.started[key] = b
	return b, nil
}

// close stops the browsers.
func (s *browserSet) close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, b := range s.started {
		b.Close()
	}
}

// do runs the actions, failing the test on error, each step bounded.
func (p *tab) do(t *testing.T, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, 20*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, steps...); err != nil {
		t.Fatal(err)
	}
}

// eval evaluates a JavaScript expression into a string.
func (p *tab) eval(t *testing.T, expr string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, 20*time.Second)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[string](expr))
	if err != nil {
		t.Fatalf("%s: %v", expr, err)
	}
	return v
}

// text returns the text of the element with id.
func (p *tab) text(t *testing.T, id string) string {
	t.Helper()
	return p.eval(t, fmt.Sprintf(`document.getElementById(%q).textContent`, id))
}

// wait waits until the JavaScript expression is true. A poll begun in a
// document that a navigation then replaced loses its execution context:
// it is polled again in the new document.
func (p *tab) wait(t *testing.T, expr string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, 20*time.Second)
	defer cancel()
	for {
		_, err := chromedp.Run(ctx, chromedp.Poll[chromedp.Void](expr, chromedp.WithPollingInterval(20*time.Millisecond)))
		if err == nil {
			return
		}
		if ctx.Err() != nil || !contextReplaced(err) {
			t.Fatalf("waiting for %s: %v", expr, err)
		}
	}
}

// contextReplaced reports whether err says that the document a script ran
// in was replaced by a navigation.
func contextReplaced(err error) bool {
	msg := err.Error()
	return strings.Contains(msg, "Cannot find context with specified id") ||
		strings.Contains(msg, "Execution context was destroyed")
}

// settled waits until the count and preview of the last change are in.
func (p *tab) settled(t *testing.T) {
	t.Helper()
	p.wait(t, `document.body.dataset.loading === "false" && !/…/.test(document.getElementById("count").textContent)`)
}

// signIn signs in with token and waits for the builder.
func (p *tab) signIn(t *testing.T, token string) {
	t.Helper()
	p.do(t, chromedp.SetValue(chromedp.ID("token"), token), chromedp.Click(chromedp.CSS("#sign-in-form button")))
	p.wait(t, `!document.getElementById("builder").hidden`)
	p.settled(t)
}

// choose sets a select's value as a person would, so that the page hears it.
func (p *tab) choose(t *testing.T, id, value string) {
	t.Helper()
	p.eval(t, fmt.Sprintf(`(e => { e.value = %q; e.dispatchEvent(new Event("change")); return "" })(document.getElementById(%q))`, value, id))
}

// download runs steps that start a download and returns the file's
// suggested name and bytes.
func (p *tab) download(t *testing.T, steps ...chromedp.Action[chromedp.Void]) (string, []byte) {
	t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, 30*time.Second)
	defer cancel()
	name, b, err := ibrowser.Download(ctx, p.downloads, func() error {
		p.do(t, steps...)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return name, b
}

// preview returns the preview table: the header row, then the rows.
func (p *tab) preview(t *testing.T) [][]string {
	t.Helper()
	var rows [][]string
	js := `JSON.stringify([...document.querySelectorAll("#preview tr")].map(r => [...r.cells].map(c => c.textContent)))`
	if err := json.Unmarshal([]byte(p.eval(t, js)), &rows); err != nil {
		t.Fatal(err)
	}
	return rows
}

// screen checks what the page shows with axe-core, failing on any
// violation, and saves a screenshot named name (with -screenshots). at is
// the id of an element to scroll to ("" for the top).
func (p *tab) screen(t *testing.T, name, at string) {
	t.Helper()
	p.look(t, name, at, *screenshots)
}

// look is [tab.screen], saving the screenshot in folder, none when it is
// "". The flag is only read: tests run at once (see [TestBrowser]).
func (p *tab) look(t *testing.T, name, at, folder string) {
	t.Helper()
	scroll := `window.scrollTo(0, 0); ""`
	if at != "" {
		scroll = fmt.Sprintf(`document.getElementById(%q).scrollIntoView({block: "start"}); ""`, at)
	}
	p.eval(t, scroll)
	if p.axe != "" {
		if p.eval(t, `typeof axe`) == "undefined" {
			p.eval(t, p.axe+`;""`)
		}
		ctx, cancel := context.WithTimeout(p.ctx, 30*time.Second)
		defer cancel()
		out, err := chromedp.Run(ctx, chromedp.Evaluate[string](
			`axe.run(document, {resultTypes: ["violations"]}).then(r => JSON.stringify(r.violations.map(v => ({id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.map(n => n.target.join(" "))}))))`,
			chromedp.EvalAwaitPromise))
		if err != nil {
			t.Fatal(err)
		}
		if out != "[]" {
			t.Errorf("%s: axe-core finds %s", name, out)
		}
	}
	if folder == "" {
		return
	}
	ctx, cancel := context.WithTimeout(p.ctx, 20*time.Second)
	defer cancel()
	png, err := chromedp.Call(ctx, page.CaptureScreenshot, page.CaptureScreenshotParams{Format: page.CaptureScreenshotFormatPng})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(folder, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(folder, name+".png"), png.Data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// shot is [tab.screen], saving no screenshot when name is "".
func (p *tab) shot(t *testing.T, name, at string) {
	t.Helper()
	if name == "" {
		p.look(t, "unsaved", at, "")
		return
	}
	p.screen(t, name, at)
}

// tabTo presses Tab until the element with id has the focus.
func (p *tab) tabTo(t *testing.T, id string) {
	t.Helper()
	for range 400 {
		if p.eval(t, `document.activeElement ? document.activeElement.id : ""`) == id {
			return
		}
		p.do(t, chromedp.KeyEvent("\t"))
	}
	t.Fatal(errors.New("Tab never reaches #" + id))
}

// headerRow returns the first line of a CSV file.
func headerRow(b []byte) string {
	line, _, _ := strings.Cut(strings.TrimPrefix(string(b), "\uFEFF"), "\r\n")
	return line
}

var datedFile = regexp.MustCompile(`^informe-general-cliente-1-\d{4}-\d{2}-\d{2}\.(csv|json)$`)

// testPageInBrowser drives the page in Chromium as an analyst would: a
// wrong token; five columns ticked in an order of their own and one
// client, whose count, preview and download (named for the client, with
// the labels in the order ticked) equal the API's; a reload and the choice
// kept; JSON saved as a file; a wrong RUT told in Spanish with Download
// disabled; the Connect texts (IMPORTDATA refused on http://127.0.0.1,
// with why); English; signing out, which forgets the choice. Every screen
// is checked with axe-core.
func testPageInBrowser(t *testing.T) {
	pool := pgtest.Fixture(t)
	// A value that would run if the page rendered data as HTML.
	if _, err := pool.Exec(context.Background(),
		`UPDATE clients SET first_name = '<script>window.pwned=1</script><img src=x onerror="window.pwned=1">' WHERE id = 1`); err != nil {
		t.Fatal(err)
	}
	ts := apitest.NewWebServer(t, pool)
	// Ticked in this order, not the report's.
	ticked := []string{"code_contract", "task_end_date", "costo_servicio", "contract_id", "first_name_client"}
	labels := "Código de contrato,Término de la tarea,Costo del servicio,N° de contrato,Primer nombre del cliente"
	query := "columns=" + strings.Join(ticked, ",") + "&client_id=1"
	export := ts.Get(t, "/api/general-report/export?format=csv&"+query+"&header=labels&lang=es")
	if export.Status != 200 {
		t.Fatalf("export: %d %s", export.Status, export.Body)
	}
	var want struct {
		Data []map[string]string `json:"data"`
	}
	if err := json.Unmarshal(ts.Get(t, "/api/general-report?result_per_page=20&"+query).Body, &want); err != nil {
		t.Fatal(err)
	}
	total := ts.Do(t, http.MethodHead, "/api/general-report/export?"+query, "Authorization", "Bearer "+ts.Token).Header.Get("X-Total-Count")

	t.Run("Mouse", func(t *testing.T) {
		p := openTab(t, ts, tabOptions{})
		p.wait(t, `!document.getElementById("sign-in").hidden`)
		p.screen(t, "01-sign-in", "")

		// A wrong token gets its message.
		p.do(t, chromedp.SetValue(chromedp.ID("token"), apitest.WellFormedToken()), chromedp.Click(chromedp.CSS("#sign-in-form button")))
		p.wait(t, `document.getElementById("sign-in-error").textContent !== ""`)
		if got, want := p.text(t, "sign-in-error"), web.SignInMessage("unknown", "es"); got != want {
			t.Errorf("wrong token message = %q, want %q", got, want)
		}
		p.screen(t, "02-wrong-token", "")

		p.signIn(t, ts.Token)
		if got := p.eval(t, `document.cookie`); strings.Contains(got, "informe_") {
			t.Errorf("a script reads the token: document.cookie = %q", got)
		}
		if got := p.text(t, "h-importdata"); got == "" {
			t.Error("no IMPORTDATA heading")
		}
		// Kinds as an analyst knows them, labels rather than API names.
		if got := p.eval(t, `document.querySelector("label[for=col-execution_date]").textContent`); got != "Fecha de ejecución fecha y hora" {
			t.Errorf("execution_date's label = %q", got)
		}
		p.screen(t, "03-builder", "cols-title")

		// The search ignores accents and case, and says when nothing matches.
		p.do(t, chromedp.SendKeys(chromedp.ID("search"), "CODIGO"))
		p.wait(t, `document.querySelectorAll("#groups li").length === 2`)
		p.screen(t, "04-search", "cols-title")
		p.do(t, chromedp.SendKeys(chromedp.ID("search"), "zzz"))
		p.wait(t, `document.getElementById("search-empty").textContent !== ""`)
		if got := p.text(t, "search-empty"); got != "Ninguna columna coincide con «CODIGOzzz»." {
			t.Errorf("empty search says %q", got)
		}
		p.eval(t, `(e => { e.value = ""; e.dispatchEvent(new Event("input")); return "" })(document.getElementById("search"))`)

		var clicks []chromedp.Action[chromedp.Void]
		for _, c := range ticked {
			clicks = append(clicks, chromedp.Click(chromedp.ID("col-"+c)))
		}
		clicks = append(clicks, chromedp.SendKeys(chromedp.ID("f-client_id"), "1"))
		p.do(t, clicks...)
		p.wait(t, fmt.Sprintf(`document.getElementById("count").dataset.total === %q && document.querySelectorAll("#preview tbody tr").length === %d && document.body.dataset.loading === "false"`, total, len(want.Data)))
		rows := p.preview(t)
		if got := strings.Join(rows[0], ","); got != labels {
			t.Errorf("preview header = %s, want %s", got, labels)
		}
		for i, w := range want.Data {
			for j, c := range ticked {
				if got := rows[i+1][j]; got != strings.TrimRight(w[c], " \n") {
					t.Errorf("preview row %d, %s = %q, want %q", i+1, c, got, w[c])
				}
			}
		}
		if got := p.eval(t, `String(window.pwned)`); got != "undefined" {
			t.Error("a value from the database ran as script")
		}
		if got := p.eval(t, `[...document.querySelectorAll("#order li .name")].map(e => e.textContent).join(",")`); got != labels {
			t.Errorf("order list = %s, want %s", got, labels)
		}
		if got := p.text(t, "size"); !strings.HasPrefix(got, "Tamaño estimado: CSV ≈ ") {
			t.Errorf("size = %q", got)
		}
		p.screen(t, "05-chosen", "result-title")

		href := p.eval(t, `document.getElementById("download").getAttribute("href")`)
		if want := "/api/general-report/export?format=csv&" + query + "&header=labels&lang=es"; href != want {
			t.Errorf("download link = %s, want %s", href, want)
		}
		name, got := p.download(t, chromedp.Click(chromedp.ID("download")))
		if string(got) != string(export.Body) {
			t.Errorf("downloaded file:\n%s\nwant the export:\n%s", got, export.Body)
		}
		if headerRow(got) != labels {
			t.Errorf("the file's header row = %s, want %s", headerRow(got), labels)
		}
		if !datedFile.MatchString(name) {
			t.Errorf("downloaded as %q, want informe-general-cliente-1-<date>.csv", name)
		}

		// A reload keeps the choice: it lives in the URL's fragment, never
		// the token.
		hash := p.eval(t, `location.hash`)
		if strings.Contains(hash, "informe_") || !strings.Contains(hash, "cols=code_contract,task_end_date") {
			t.Errorf("fragment = %s", hash)
		}
		p.do(t, chromedp.Reload())
		p.wait(t, `document.body.dataset.ready === "true" && !document.getElementById("builder").hidden`)
		p.settled(t)
		if got := p.eval(t, `document.getElementById("download").getAttribute("href")`); got != href {
			t.Errorf("after a reload the download link = %s, want %s", got, href)
		}

		// JSON is saved as a file, named like the rest; the page stays.
		p.choose(t, "format", "json")
		p.settled(t)
		name, got = p.download(t, chromedp.Click(chromedp.ID("download")))
		if want := ts.Get(t, "/api/general-report/export?format=json&"+query); string(got) != string(want.Body) {
			t.Errorf("JSON download:\n%s\nwant:\n%s", got, want.Body)
		}
		if !datedFile.MatchString(name) {
			t.Errorf("JSON downloaded as %q", name)
		}
		if p.eval(t, `document.body.dataset.ready`) != "true" {
			t.Error("the JSON download replaced the page")
		}
		p.choose(t, "format", "csv")
		p.settled(t)

		// A RUT typed wrong: told in Spanish beside the field; Download is
		// disabled, and clicking it leaves the page as it is.
		// (Typed key by key, a shorter prefix's message may show first:
		// wait for the whole RUT's.)
		p.do(t, chromedp.SendKeys(chromedp.ID("f-rut"), "12.345.678-0"))
		p.wait(t, `document.getElementById("f-rut-error").textContent === "El dígito verificador de este RUT no corresponde: revise el número." && document.body.dataset.loading === "false"`)
		if got := p.eval(t, `document.getElementById("download").getAttribute("aria-disabled")`); got != "true" {
			t.Errorf("Download aria-disabled = %s with a wrong RUT", got)
		}
		before := p.eval(t, `location.href`)
		p.do(t, chromedp.Click(chromedp.ID("download")))
		if got := p.eval(t, `location.href + (document.body.dataset.ready || "")`); got != before+"true" {
			t.Errorf("after clicking a disabled Download the page is %s", got)
		}
		p.screen(t, "06-rut-error", "filters-title")
		p.eval(t, `(e => { e.value = ""; e.dispatchEvent(new Event("input")); return "" })(document.getElementById("f-rut"))`)
		p.settled(t)

		// On http://127.0.0.1 IMPORTDATA cannot work: the page says why.
		if got := p.text(t, "c-importdata-unavailable"); !strings.Contains(got, "HTTPS pública") || !strings.Contains(got, ts.URL) {
			t.Errorf("IMPORTDATA on %s: %q", ts.URL, got)
		}
		if m := p.eval(t, `document.getElementById("c-m").value`); !strings.Contains(m, `Table.TransformColumnTypes(Promoted, {{"Código de contrato", type text}, {"Término de la tarea", type date}, {"Costo del servicio", type number}, {"N° de contrato", Int64.Type}`) {
			t.Errorf("M code:\n%s", m)
		}
		p.screen(t, "07-connect", "connect-title")

		// Zero rows: said, and nothing to download.
		p.eval(t, `(e => { e.value = "99"; e.dispatchEvent(new Event("input")); return "" })(document.getElementById("f-contract_id"))`)
		p.wait(t, `document.getElementById("count").dataset.total === "0" && document.body.dataset.loading === "false"`)
		if got := p.eval(t, `document.getElementById("download").getAttribute("aria-disabled")`); got != "true" {
			t.Errorf("Download aria-disabled = %s with no rows", got)
		}
		p.screen(t, "08-no-rows", "result-title")

		p.do(t, chromedp.Click(chromedp.ID("lang")))
		p.wait(t, `document.documentElement.lang === "en"`)
		p.settled(t)
		p.screen(t, "09-english", "")

		// Signing out forgets the token and the choice.
		p.do(t, chromedp.Click(chromedp.ID("sign-out")))
		p.wait(t, `!document.getElementById("sign-in").hidden`)
		if got := p.eval(t, `location.hash`); got != "" {
			t.Errorf("after sign-out the fragment is %s", got)
		}
		cookies, err := chromedp.Call(p.ctx, network.GetCookies, network.GetCookiesParams{URLs: []string{ts.URL}})
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range cookies.Cookies {
			if c.Name == web.CookieName {
				t.Errorf("after sign-out the browser keeps %s", c.Name)
			}
		}
		p.screen(t, "10-signed-out", "")
		p.signIn(t, ts.Token)
		if got := p.eval(t, `String(document.querySelectorAll("#order li").length)`); got != "0" {
			t.Errorf("after signing out and in, %s columns are still chosen", got)
		}
	})

	t.Run("Keyboard", func(t *testing.T) {
		p := openTab(t, ts, tabOptions{})
		p.tabTo(t, "token")
		p.do(t, chromedp.KeyEvent(ts.Token+"\r"))
		p.wait(t, `!document.getElementById("builder").hidden && document.activeElement.id === "builder-title"`)
		for _, col := range []struct{ search, id string }{{"codigo de contrato", "col-code_contract"}, {"numero del contrato", "col-contract_id"}} {
			p.tabTo(t, "search")
			p.do(t, chromedp.KeyEvent(col.search))
			p.wait(t, `document.querySelectorAll("#groups li").length === 1`)
			p.tabTo(t, col.id)
			p.do(t, chromedp.KeyEvent(" "))
			p.eval(t, `document.getElementById("search").select(); ""`)
		}
		// The second ticked moves up, by keyboard; the focus stays on it.
		p.tabTo(t, "order-up-contract_id")
		p.do(t, chromedp.KeyEvent("\r"))
		p.wait(t, `document.querySelector("#order li .name").textContent === "N° de contrato" && document.activeElement.id === "order-down-contract_id"`)
		p.tabTo(t, "f-client_id")
		p.do(t, chromedp.KeyEvent("1"))
		p.wait(t, `document.getElementById("download").getAttribute("href").includes("columns=contract_id,code_contract&client_id=1") && document.getElementById("download").getAttribute("aria-disabled") === "false"`)
		p.tabTo(t, "download")
		_, got := p.download(t, chromedp.KeyEvent("\r"))
		want := ts.Get(t, "/api/general-report/export?format=csv&columns=contract_id,code_contract&client_id=1&header=labels&lang=es")
		if string(got) != string(want.Body) {
			t.Errorf("downloaded by keyboard:\n%s\nwant:\n%s", got, want.Body)
		}
	})

	for _, lang := range []string{"es-CL", "en-US"} {
		t.Run("Phone/"+lang, func(t *testing.T) {
			p := openTab(t, ts, tabOptions{lang: lang, width: 390, height: 844})
			// Loading signed out fails no request (no 401 in the console).
			// (The catalogue and /web/session are resources whose status
			// the browser records.)
			if got := p.eval(t, `(es => es.length >= 2 && es.every(e => typeof e.responseStatus === "number") ? es.filter(e => e.responseStatus >= 400).map(e => e.name).join(" ") : "no statuses recorded")(performance.getEntriesByType("resource"))`); got != "" {
				t.Errorf("loading signed out fails %s", got)
			}
			name := func(s string) string {
				if lang == "en-US" {
					return s
				}
				return "" // the English screens are the ones kept
			}
			p.shot(t, name("11-phone-sign-in"), "")
			p.signIn(t, ts.Token)
			// The header keeps one line: the tools beside the name.
			if got := p.eval(t, `String(document.querySelector(".top").getBoundingClientRect().height < 60)`); got != "true" {
				t.Errorf("the header wraps at 390 px: %s px high", p.eval(t, `String(document.querySelector(".top").getBoundingClientRect().height)`))
			}
			p.shot(t, name("12-phone"), "")
			p.shot(t, name("13-phone-result"), "result-title")
			p.shot(t, name("13-phone-connect"), "connect-title")
		})
	}
}

// testPageMonthAsXLSX checks the page's conditions ($filter): the tasks
// that ended in a month, as XLSX, chosen by mouse, count and download
// equal to the API's export with the same $filter.
func testPageMonthAsXLSX(t *testing.T) {
	ts := apitest.NewWebServer(t, pgtest.Fixture(t))
	const filter = "task_end_date ge 2024-03-01 and task_end_date lt 2024-04-01 and task_status eq 'En Curso'"
	query := "format=xlsx&columns=task,task_end_date,contract_id&" + url.Values{"$filter": {filter}}.Encode() + "&header=labels&lang=es"
	head := ts.Do(t, http.MethodHead, "/api/general-report/export?"+query, "Authorization", "Bearer "+ts.Token)
	if head.Status != 200 || head.Header.Get("X-Total-Count") == "0" {
		t.Fatalf("HEAD of the export: %d, %s rows: the case proves nothing", head.Status, head.Header.Get("X-Total-Count"))
	}
	p := openTab(t, ts, tabOptions{url: ts.URL + "/#ds=report&cols=task,task_end_date,contract_id&format=xlsx"})
	p.signIn(t, ts.Token)
	for i, w := range []struct{ op, day string }{{"ge", "2024-03-01"}, {"lt", "2024-04-01"}} {
		id := fmt.Sprintf("w%d", i)
		p.do(t, chromedp.Click(chromedp.ID("add-cond")))
		p.wait(t, fmt.Sprintf(`document.getElementById(%q) !== null`, id+"-col"))
		p.choose(t, id+"-col", "task_end_date")
		p.choose(t, id+"-op", w.op)
		p.eval(t, fmt.Sprintf(`(e => { e.value = %q; e.dispatchEvent(new Event("input")); return "" })(document.getElementById(%q))`, w.day, id+"-v"))
	}
	// A status is chosen among its values.
	p.do(t, chromedp.Click(chromedp.ID("add-cond")))
	p.wait(t, `document.getElementById("w2-col") !== null`)
	p.choose(t, "w2-col", "task_status")
	p.wait(t, `document.getElementById("w2-v").tagName === "SELECT"`)
	p.choose(t, "w2-v", "En Curso")
	p.wait(t, fmt.Sprintf(`document.getElementById("count").dataset.total === %q && document.body.dataset.loading === "false"`, head.Header.Get("X-Total-Count")))
	if got, want := p.eval(t, `document.getElementById("download").getAttribute("href")`), "/api/general-report/export?format=xlsx&columns=task,task_end_date,contract_id&$filter=task_end_date%20ge%202024-03-01%20and%20task_end_date%20lt%202024-04-01%20and%20task_status%20eq%20'En%20Curso'&header=labels&lang=es"; got != want {
		t.Errorf("download link = %s, want %s", got, want)
	}
	p.screen(t, "16-month-xlsx", "filters-title")
	name, got := p.download(t, chromedp.Click(chromedp.ID("download")))
	if !strings.HasSuffix(name, ".xlsx") || !strings.HasPrefix(name, "informe-general-") {
		t.Errorf("downloaded as %q", name)
	}
	want := ts.Get(t, "/api/general-report/export?"+query)
	if len(got) == 0 || len(got) != len(want.Body) {
		t.Errorf("downloaded %d bytes, the export has %d", len(got), len(want.Body))
	}
	if odata := p.eval(t, `document.getElementById("c-odata").value`); !strings.HasSuffix(odata, "$select=task,task_end_date,contract_id&$filter=task_end_date%20ge%202024-03-01%20and%20task_end_date%20lt%202024-04-01%20and%20task_status%20eq%20'En%20Curso'") {
		t.Errorf("OData URL = %s", odata)
	}
}

// testPageSessionEnds checks that a download refused because the token
// expired or was revoked is told in the page (why, in its language), that
// the page is not replaced, and that the choice is there again after
// signing in.
func testPageSessionEnds(t *testing.T) {
	ts := apitest.NewWebServer(t, pgtest.Fixture(t))
	ctx := context.Background()
	for _, tt := range []struct {
		reason string
		end    func(name string)
	}{
		{"revoked", func(name string) {
			if err := ts.Tokens.Revoke(ctx, name); err != nil {
				t.Fatal(err)
			}
		}},
		{"expired", func(name string) {
			if _, err := ts.Pool.Exec(ctx, "UPDATE api_tokens SET expires_at = now() - interval '1 minute' WHERE name = $1", name); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(tt.reason, func(t *testing.T) {
			tok := ts.NewToken(t, tt.reason, nil, time.Time{})
			p := openTab(t, ts, tabOptions{url: ts.URL + "/#ds=report&cols=task,contract_id&client_id=3&format=xlsx"})
			p.signIn(t, tok)
			if got := p.eval(t, `document.getElementById("download").getAttribute("href")`); got != "/api/general-report/export?format=xlsx&columns=task,contract_id&client_id=3&header=labels&lang=es" {
				t.Fatalf("the link opened the choice as %s", got)
			}
			tt.end(tt.reason)
			p.do(t, chromedp.Click(chromedp.ID("download")))
			p.wait(t, `!document.getElementById("sign-in").hidden`)
			if got, want := p.text(t, "sign-in-error"), web.SignInMessage(tt.reason, "es"); !strings.HasPrefix(got, want) {
				t.Errorf("the page says %q, want %q", got, want)
			}
			p.screen(t, "14-session-"+tt.reason, "")
			p.signIn(t, ts.Token)
			if got := p.eval(t, `document.getElementById("download").getAttribute("href")`); !strings.HasSuffix(got, "columns=task,contract_id&client_id=3&header=labels&lang=es") {
				t.Errorf("after signing in again the choice is %s", got)
			}
		})
	}
}

// testPageImportDataHTTPS checks the IMPORTDATA text where informe is at a
// public HTTPS address: the page, reached as https://informe.example.cl
// (resolved to the test server, with its self-signed certificate), offers
// the formula, its URL at that address.
func testPageImportDataHTTPS(t *testing.T) {
	pool := pgtest.Fixture(t)
	site, err := web.New()
	if err != nil {
		t.Fatal(err)
	}
	s := &api.Server{
		Data: postgres.NewStore(pool), Report: source.Report(report.Maintained),
		Tokens:  auth.NewStore(pool),
		Metrics: metrics.New(pool),
		Site:    site,
	}
	ts := serveTLS(t, s, pool)
	u, _ := url.Parse(ts.URL)
	public := "https://informe.example.cl:" + u.Port()
	p := openTab(t, ts, tabOptions{url: public + "/#ds=report&cols=contract_id,code_contract&client_id=1", flags: map[string]any{
		"host-resolver-rules":       "MAP informe.example.cl 127.0.0.1",
		"ignore-certificate-errors": true,
	}})
	p.signIn(t, ts.Token)
	want := `=IMPORTDATA("` + public + `/api/general-report/export?format=csv&columns=contract_id,code_contract&client_id=1&header=labels&lang=es&access_token=informe_••••••••••••")`
	if got := p.eval(t, `document.getElementById("c-importdata").value`); got != want {
		t.Errorf("IMPORTDATA text:\n%s\nwant\n%s", got, want)
	}
	p.screen(t, "15-importdata-https", "connect-title")
}

// serveTLS serves s over HTTPS (a self-signed certificate), with a token
// carrying every scope.
func serveTLS(t *testing.T, s *api.Server, pool *pgxpool.Pool) *apitest.Server {
	t.Helper()
	ts := apitest.ServeTLS(t, s)
	ts.Pool = pool
	ts.Token = ts.NewToken(t, "all", nil, time.Time{})
	return ts
}

// testPageMParses parses every kind of M text the page writes with
// Microsoft's own Power Query parser (@microsoft/powerquery-parser, from
// npm): CSV with each header choice and delimiter, XLSX, and filter values
// with quotes, which M doubles.
func testPageMParses(t *testing.T) {
	ts := apitest.NewWebServer(t, pgtest.Fixture(t))
	p := openTab(t, ts, tabOptions{})
	p.signIn(t, ts.Token)
	texts := p.mTexts(t, ts, []string{
		"ds=report&format=csv",
		"ds=report&cols=code_contract,execution_date,costo_servicio&code_contract=CT-\"X&format=csv",
		"ds=report&cols=task_detail,client_rut&rut=12.345.678-5&format=csv&header=true&delimiter=semicolon",
		"ds=report&cols=contract_id,date_first_payment&format=csv&header=false&delimiter=tab&bom=true",
		"ds=report&cols=contract_id&code_contract=O'Higgins \"sur\"&format=xlsx",
		"ds=users&cols=name,last_entry&format=csv",
		"ds=users&format=xlsx",
		"ds=report&cols=task,contract_id&w=task_end_date~ge~2024-03-01&w=task~eq~Revisión 'final'&format=csv",
		"ds=users&w=name~contains~O'Brien&format=xlsx",
	})
	if m := texts[1].Text; !strings.Contains(m, `code_contract = "CT-""X"`) {
		t.Errorf("a quote in a filter value is not doubled in M:\n%s", m)
	}
	if m := texts[7].Text; !strings.Contains(m, `#"$filter" = "task_end_date ge 2024-03-01 and task eq 'Revisión ''final'''"`) {
		t.Errorf("the conditions are not the M query's $filter:\n%s", m)
	}
	parseM(t, texts)
}

// mText is the M text the page offers for a link.
type mText struct {
	Name string `json:"name"` // the link's fragment
	Text string `json:"text"`
}

// mTexts opens the page of ts at each fragment, in a new document for
// each, as a person opening the link would, and returns the M text it
// offers there.
func (p *tab) mTexts(t *testing.T, ts *apitest.Server, frags []string) []mText {
	t.Helper()
	var texts []mText
	for _, frag := range frags {
		p.do(t, chromedp.Navigate("about:blank"), chromedp.Navigate(ts.URL+"/#"+(&url.URL{Fragment: frag}).EscapedFragment()))
		p.wait(t, `document.body.dataset.ready === "true" && !document.getElementById("builder").hidden`)
		texts = append(texts, mText{frag, p.eval(t, `document.getElementById("c-m").value`)})
	}
	return texts
}

// parseM parses texts with Microsoft's Power Query parser (from npm),
// failing the test if it refuses one; without the parser it parses
// nothing (see [testenv.NodeModule]).
func parseM(t *testing.T, texts []mText) {
	t.Helper()
	parser, ok := testenv.NodeModule(t, "@microsoft/powerquery-parser/package.json")
	if !ok {
		return
	}
	in, err := json.Marshal(texts)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("node", "../../../scripts/check-m.d/parse.js", filepath.Dir(parser))
	cmd.Stdin = strings.NewReader(string(in))
	out, err := cmd.CombinedOutput()
	t.Logf("Power Query parser:\n%s", out)
	if err != nil {
		t.Errorf("the parser refuses an M text: %v", err)
	}
}

// testPageGrains checks the choice of grain: for one row per contract, per
// process and per task, the page says what a row is, its count equals the
// export's, and its download is the export's bytes; the general report
// says that its costs repeat on each task row.
func testPageGrains(t *testing.T) {
	ts := apitest.NewWebServer(t, pgtest.Fixture(t))
	p := openTab(t, ts, tabOptions{})
	p.signIn(t, ts.Token)
	p.wait(t, `document.getElementById("ds-report") !== null && document.body.dataset.loading === "false"`)
	if got := p.text(t, "ds-row"); !strings.Contains(got, "se repiten en cada fila de tarea") {
		t.Errorf("the general report's row says %q, nothing of its repeated costs", got)
	}
	for _, ds := range []string{"contracts", "processes", "tasks"} {
		t.Run(ds, func(t *testing.T) {
			p.do(t, chromedp.Click(chromedp.ID("ds-"+ds)))
			href := "/api/" + ds + "/export?"
			p.wait(t, fmt.Sprintf(`document.getElementById("download").getAttribute("href").startsWith(%q) && document.body.dataset.loading === "false"`, href))
			link := p.eval(t, `document.getElementById("download").getAttribute("href")`)
			head := ts.Do(t, http.MethodHead, link, "Authorization", "Bearer "+ts.Token)
			n := head.Header.Get("X-Total-Count")
			if head.Status != http.StatusOK || n == "" || n == "0" {
				t.Fatalf("HEAD %s: %d, %s rows: the case proves nothing", link, head.Status, n)
			}
			p.wait(t, fmt.Sprintf(`document.getElementById("count").dataset.total === %q`, n))
			if got := p.text(t, "ds-row"); !strings.HasPrefix(got, "Una fila por") {
				t.Errorf("the page says of a row %q", got)
			}
			p.screen(t, "17-grain-"+ds, "ds-title")
			name, got := p.download(t, chromedp.Click(chromedp.ID("download")))
			want := ts.Get(t, link)
			if !strings.HasPrefix(name, map[string]string{"contracts": "contratos", "processes": "procesos", "tasks": "tareas"}[ds]) || !bytes.Equal(got, want.Body) {
				t.Errorf("downloaded %q, %d bytes; the export %s has %d", name, len(got), link, len(want.Body))
			}
		})
	}
}
