package browser_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	ibrowser "github.com/informe/informe/internal/browser"
	"github.com/informe/informe/internal/testenv"
)

// TestStartDownloads starts the browser as the tests do (as root here,
// in CI), with a language, and checks that a page sees the language and
// that an attachment is downloaded, byte for byte, into the folder under
// its GUID.
func TestStartDownloads(t *testing.T) {
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
	defer cancel()
	ctx, stop := context.WithTimeout(ctx, 30*time.Second)
	defer stop()

	// A page and an attachment, as informe serves them.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/file" {
			w.Header().Set("Content-Type", "text/csv; charset=utf-8")
			w.Header().Set("Content-Disposition", `attachment; filename="informe.csv"`)
			io.WriteString(w, "a,b\r\n1,2\r\n")
			return
		}
		io.WriteString(w, `<!doctype html><title>t</title><a id="a" href="/file">csv</a>`)
	}))
	defer srv.Close()
	page := srv.URL + "/"
	if err := chromedp.Do(ctx, chromedp.Navigate(page)); err != nil {
		t.Fatal(err)
	}
	lang, err := chromedp.Run(ctx, chromedp.Evaluate[string](`navigator.language`))
	if err != nil {
		t.Fatal(err)
	}
	if lang != "es-CL" {
		t.Errorf("navigator.language = %q, want es-CL", lang)
	}

	name, b, err := ibrowser.Download(ctx, dl, func() error { return chromedp.Do(ctx, chromedp.Click(chromedp.ID("a"))) })
	if err != nil {
		t.Fatal(err)
	}
	if name != "informe.csv" {
		t.Errorf("suggested name %q, want informe.csv", name)
	}
	if string(b) != "a,b\r\n1,2\r\n" {
		t.Errorf("downloaded %q", b)
	}
}
