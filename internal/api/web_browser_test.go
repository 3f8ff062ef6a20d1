package api_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	ibrowser "github.com/informe/informe/internal/browser"
	"github.com/informe/informe/internal/web"

	"github.com/informe/informe/internal/testenv"
)

// page is a browser tab on the web page, with its downloads folder.
type page struct {
	ctx       context.Context
	downloads string
	ts        *testServer
}

// openPage starts Chromium (in Spanish) on the page of ts. Without a
// Chromium the test is skipped; scripts/test installs one.
func openPage(t *testing.T, ts *testServer) *page {
	t.Helper()
	if _, err := ibrowser.Path(); err != nil {
		testenv.Missing(t, "%v", err)
	}
	dl := t.TempDir()
	ctx, cancel, err := ibrowser.Start(context.Background(), ibrowser.Options{
		ProfileDir: t.TempDir(), DownloadDir: dl, Lang: "es-CL",
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cancel)
	p := &page{ctx: ctx, downloads: dl, ts: ts}
	p.do(t, chromedp.Navigate(ts.URL+"/"))
	p.wait(t, `document.body.dataset.ready === "true"`)
	return p
}

// do runs the actions, failing the test on error, each step bounded.
func (p *page) do(t *testing.T, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, 20*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, steps...); err != nil {
		t.Fatal(err)
	}
}

// eval evaluates a JavaScript expression into a string.
func (p *page) eval(t *testing.T, expr string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, 20*time.Second)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[string](expr))
	if err != nil {
		t.Fatalf("%s: %v", expr, err)
	}
	return v
}

// wait waits until the JavaScript expression is true.
func (p *page) wait(t *testing.T, expr string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, 20*time.Second)
	defer cancel()
	if _, err := chromedp.Run(ctx, chromedp.Poll[chromedp.Void](expr, chromedp.WithPollingInterval(20*time.Millisecond))); err != nil {
		t.Fatalf("waiting for %s: %v", expr, err)
	}
}

// download runs steps that start a download and returns the file's bytes.
func (p *page) download(t *testing.T, steps ...chromedp.Action[chromedp.Void]) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, 30*time.Second)
	defer cancel()
	progress := chromedp.Events(ctx, browser.DownloadProgress)
	p.do(t, steps...)
	for ev, err := range progress {
		if err != nil {
			t.Fatalf("download: %v", err)
		}
		switch ev.State {
		case browser.DownloadProgressStateCompleted:
			b, err := os.ReadFile(filepath.Join(p.downloads, ev.GUID))
			if err != nil {
				t.Fatal(err)
			}
			return b
		case browser.DownloadProgressStateCanceled:
			t.Fatal("download canceled")
		}
	}
	t.Fatal("no download")
	return nil
}

// preview returns the preview table: the header row, then the rows.
func (p *page) preview(t *testing.T) [][]string {
	t.Helper()
	var rows [][]string
	js := `JSON.stringify([...document.querySelectorAll("#preview tr")].map(r => [...r.cells].map(c => c.textContent)))`
	if err := json.Unmarshal([]byte(p.eval(t, js)), &rows); err != nil {
		t.Fatal(err)
	}
	return rows
}

// TestPageInBrowser drives the page in Chromium as a person would: a wrong
// token, signing in, three columns and a client, the count and the preview
// against the API, the download against the export, the IMPORTDATA URL
// fetched, signing out; then the same by keyboard alone.
func TestPageInBrowser(t *testing.T) {
	pool := fixtureDB(t)
	// A value that would run if the page rendered data as HTML.
	if _, err := pool.Exec(context.Background(),
		`UPDATE clients SET first_name = '<script>window.pwned=1</script><img src=x onerror="window.pwned=1">' WHERE id = 1`); err != nil {
		t.Fatal(err)
	}
	ts := newWebServer(t, pool)
	const query = "columns=contract_id,code_contract,first_name_client&client_id=1"
	export := ts.get(t, "/api/general-report/export?format=csv&"+query)
	if export.Status != 200 {
		t.Fatalf("export: %d %s", export.Status, export.Body)
	}
	var want struct {
		Data []map[string]string `json:"data"`
	}
	if err := json.Unmarshal(ts.get(t, "/api/general-report?result_per_page=20&"+query).Body, &want); err != nil {
		t.Fatal(err)
	}
	total := ts.do(t, http.MethodHead, "/api/general-report/export?"+query, "Authorization", "Bearer "+ts.Token).Header.Get("X-Total-Count")

	t.Run("Mouse", func(t *testing.T) {
		p := openPage(t, ts)
		p.wait(t, `!document.getElementById("sign-in").hidden`)

		// A wrong token gets its message.
		p.do(t, chromedp.SetValue(chromedp.ID("token"), wellFormedToken()), chromedp.Click(chromedp.CSS("#sign-in-form button")))
		p.wait(t, `document.getElementById("sign-in-error").textContent !== ""`)
		if got, want := p.eval(t, `document.getElementById("sign-in-error").textContent`), web.SignInMessage("unknown", "es"); got != want {
			t.Errorf("wrong token message = %q, want %q", got, want)
		}

		p.do(t, chromedp.SetValue(chromedp.ID("token"), ts.Token), chromedp.Click(chromedp.CSS("#sign-in-form button")))
		p.wait(t, `!document.getElementById("builder").hidden`)
		if got := p.eval(t, `document.cookie`); strings.Contains(got, "informe_") {
			t.Errorf("a script reads the token: document.cookie = %q", got)
		}
		p.do(t,
			chromedp.Click(chromedp.ID("col-contract_id")),
			chromedp.Click(chromedp.ID("col-code_contract")),
			chromedp.Click(chromedp.ID("col-first_name_client")),
			chromedp.SendKeys(chromedp.ID("f-client_id"), "1"),
		)
		p.wait(t, fmt.Sprintf(`document.getElementById("count").dataset.total === %q && document.querySelectorAll("#preview tbody tr").length === %d && document.body.dataset.loading === "false"`, total, len(want.Data)))
		rows := p.preview(t)
		if got, want := strings.Join(rows[0], ","), "contract_id,code_contract,first_name_client"; got != want {
			t.Errorf("preview header = %s, want %s", got, want)
		}
		for i, w := range want.Data {
			got := rows[i+1]
			if got[0] != w["contract_id"] || got[1] != w["code_contract"] || got[2] != w["first_name_client"] {
				t.Errorf("preview row %d = %q, want %v", i+1, got, w)
			}
		}
		if got := p.eval(t, `String(window.pwned)`); got != "undefined" {
			t.Error("a value from the database ran as script")
		}

		href := p.eval(t, `document.getElementById("download").getAttribute("href")`)
		if want := "/api/general-report/export?format=csv&" + query; href != want {
			t.Errorf("download link = %s, want %s", href, want)
		}
		if got := p.download(t, chromedp.Click(chromedp.ID("download"))); string(got) != string(export.Body) {
			t.Errorf("downloaded file:\n%s\nwant the export:\n%s", got, export.Body)
		}

		// The IMPORTDATA text is masked until revealed; revealed, its URL
		// fetched with no other credential gives the export.
		if masked := p.eval(t, `document.getElementById("c-importdata").value`); strings.Contains(masked, ts.Token) {
			t.Error("the IMPORTDATA text shows the token before it is revealed")
		}
		p.do(t, chromedp.Click(chromedp.ID("reveal")))
		formula := p.eval(t, `document.getElementById("c-importdata").value`)
		u, ok := strings.CutPrefix(formula, `=IMPORTDATA("`)
		u, ok2 := strings.CutSuffix(u, `")`)
		if !ok || !ok2 || !strings.Contains(u, "access_token="+ts.Token) {
			t.Fatalf("IMPORTDATA text = %s", formula)
		}
		req, _ := http.NewRequest(http.MethodGet, u, nil)
		if got := roundTrip(t, req); got.Status != 200 || string(got.Body) != string(export.Body) {
			t.Errorf("IMPORTDATA URL gives %d:\n%s\nwant the export:\n%s", got.Status, got.Body, export.Body)
		}

		// A RUT typed wrong gets the API's own message beside the field.
		// (Typed key by key, it may show the message of a shorter prefix
		// first: wait for the whole RUT's.)
		apiMsg := ts.get(t, "/api/general-report?rut=12.345.678-9").message(t)
		p.do(t, chromedp.SendKeys(chromedp.ID("f-rut"), "12.345.678-9"))
		p.wait(t, fmt.Sprintf(`document.getElementById("f-rut-error").textContent === %q && document.body.dataset.loading === "false"`, apiMsg))

		// Signing out forgets the token in the browser.
		p.do(t, chromedp.Click(chromedp.ID("sign-out")))
		p.wait(t, `!document.getElementById("sign-in").hidden`)
		cookies, err := chromedp.Call(p.ctx, network.GetCookies, network.GetCookiesParams{URLs: []string{ts.URL}})
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range cookies.Cookies {
			if c.Name == web.CookieName {
				t.Errorf("after sign-out the browser keeps %s", c.Name)
			}
		}
		p.do(t, chromedp.Reload())
		p.wait(t, `document.body.dataset.ready === "true" && !document.getElementById("sign-in").hidden`)
	})

	t.Run("Keyboard", func(t *testing.T) {
		p := openPage(t, ts)
		p.tabTo(t, "token")
		p.do(t, chromedp.KeyEvent(ts.Token+"\r"))
		p.wait(t, `!document.getElementById("builder").hidden && document.activeElement.id === "builder-title"`)
		p.tabTo(t, "search")
		p.do(t, chromedp.KeyEvent("code_contract"))
		p.wait(t, `document.querySelectorAll("#groups li").length === 1`)
		p.tabTo(t, "col-code_contract")
		p.do(t, chromedp.KeyEvent(" "))
		p.tabTo(t, "f-client_id")
		p.do(t, chromedp.KeyEvent("1"))
		p.wait(t, `document.getElementById("download").getAttribute("href").endsWith("columns=code_contract&client_id=1")`)
		p.tabTo(t, "download")
		got := p.download(t, chromedp.KeyEvent("\r"))
		want := ts.get(t, "/api/general-report/export?format=csv&columns=code_contract&client_id=1")
		if string(got) != string(want.Body) {
			t.Errorf("downloaded by keyboard:\n%s\nwant:\n%s", got, want.Body)
		}
	})
}

// tabTo presses Tab until the element with id has the focus.
func (p *page) tabTo(t *testing.T, id string) {
	t.Helper()
	for range 300 {
		if p.eval(t, `document.activeElement ? document.activeElement.id : ""`) == id {
			return
		}
		p.do(t, chromedp.KeyEvent("\t"))
	}
	t.Fatal(errors.New("Tab never reaches #" + id))
}
