package browser_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync"
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

	srv := site(t)
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

// site serves a page and an attachment, as informe serves them: /file, or
// /file?n=N for a file of its own.
func site(t *testing.T) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/file" {
			w.Header().Set("Content-Type", "text/csv; charset=utf-8")
			w.Header().Set("Content-Disposition", `attachment; filename="informe`+r.URL.Query().Get("n")+`.csv"`)
			io.WriteString(w, "a,b\r\n1,2"+r.URL.Query().Get("n")+"\r\n")
			return
		}
		io.WriteString(w, `<!doctype html><title>t</title><a id="a" href="/file?`+r.URL.RawQuery+`">csv</a>`)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// TestTabsApart opens tabs of one browser at once and checks that each is
// a fresh profile of its own: the browser's language, storage that the
// other tabs do not see, and its downloads in its own folder, told to it
// alone.
func TestTabsApart(t *testing.T) {
	if _, err := ibrowser.Path(); err != nil {
		testenv.Missing(t, "%v", err)
	}
	b, err := ibrowser.Launch(context.Background(), ibrowser.Options{Lang: "es-CL"})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	srv := site(t)
	var wg sync.WaitGroup
	for i := range 3 {
		wg.Go(func() {
			n := string(rune('1' + i))
			dl := t.TempDir()
			ctx, cancel, err := b.Tab(dl)
			if err != nil {
				t.Error(err)
				return
			}
			defer cancel()
			ctx, stop := context.WithTimeout(ctx, 30*time.Second)
			defer stop()
			if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/?n="+n)); err != nil {
				t.Error(err)
				return
			}
			seen, err := chromedp.Run(ctx, chromedp.Evaluate[string](`(s => { localStorage.setItem("tab", "`+n+`"); return (s ?? "none") + " " + navigator.language })(localStorage.getItem("tab"))`))
			if err != nil {
				t.Error(err)
				return
			}
			if seen != "none es-CL" {
				t.Errorf("tab %s: a fresh tab reads %q, want no stored value and es-CL", n, seen)
			}
			name, body, err := ibrowser.Download(ctx, dl, func() error { return chromedp.Do(ctx, chromedp.Click(chromedp.ID("a"))) })
			if err != nil {
				files, _ := filepath.Glob(filepath.Join(dl, "*"))
				t.Error(err, files)
				return
			}
			if name != "informe"+n+".csv" || string(body) != "a,b\r\n1,2"+n+"\r\n" {
				t.Errorf("tab %s downloaded %s: %q", n, name, body)
			}
			files, _ := filepath.Glob(filepath.Join(dl, "*"))
			if len(files) != 1 {
				t.Errorf("tab %s: its folder holds %q, want its one download", n, files)
			}
		})
	}
	wg.Wait()
}
