// Command bench-web measures the web page against its targets, in headless
// Chromium on a running informe: the bytes of its HTML, CSS, JavaScript and
// catalogue; the first render of the signed-in page (navigation start to the
// builder drawn, the page's own "informe-ready" mark); and the count and the
// preview of 20 rows after a change of columns (the page's own
// "informe-preview" measure). It prints one line per target and exits 1 if
// one is missed. Run it through scripts/bench-web.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"regexp"
	"slices"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/informe/informe/internal/browser"
)

// target is one figure and the bound it must stay under.
type target struct {
	name  string
	unit  string
	bound float64
	got   float64
}

func main() {
	base := flag.String("base", os.Getenv("BASE"), "informe's base URL")
	token := flag.String("token", os.Getenv("TOKEN"), "a token with report:read")
	runs := flag.Int("runs", 20, "runs of each timing; the median is reported, with the slowest")
	flag.Parse()
	if *base == "" || *token == "" {
		fmt.Fprintln(os.Stderr, "bench-web: -base and -token are required")
		os.Exit(2)
	}
	size, err := pageBytes(*base)
	check(err)

	profile, err := os.MkdirTemp("", "bench-web")
	check(err)
	defer os.RemoveAll(profile)
	ctx, cancel, err := browser.Start(context.Background(), browser.Options{ProfileDir: profile, Lang: "es-CL"})
	check(err)
	defer cancel()
	do := func(steps ...chromedp.Action[chromedp.Void]) {
		c, done := context.WithTimeout(ctx, 30*time.Second)
		defer done()
		check(chromedp.Do(c, steps...))
	}
	num := func(expr string) float64 {
		c, done := context.WithTimeout(ctx, 30*time.Second)
		defer done()
		v, err := chromedp.Run(c, chromedp.Evaluate[float64](expr))
		check(err)
		return v
	}
	wait := func(expr string) chromedp.Action[chromedp.Void] {
		return chromedp.Poll[chromedp.Void](expr, chromedp.WithPollingInterval(5*time.Millisecond))
	}
	idle := wait(`document.body.dataset.loading === "false"`)

	do(chromedp.Navigate(*base+"/"), wait(`document.body.dataset.ready === "true"`),
		chromedp.SetValue(chromedp.ID("token"), *token), chromedp.Click(chromedp.CSS("#sign-in-form button")),
		wait(`!document.getElementById("builder").hidden`), idle)

	var render, preview []float64
	for range *runs {
		do(chromedp.Reload(), wait(`document.body.dataset.ready === "true" && !document.getElementById("builder").hidden`))
		render = append(render, num(`performance.getEntriesByName("informe-ready")[0].startTime`))
		do(idle)
	}
	cols := []string{"contract_id", "code_contract", "task_status", "client_rut"}
	for i := range *runs {
		do(chromedp.Evaluate[chromedp.Void](`performance.clearMeasures("informe-preview")`),
			chromedp.Click(chromedp.ID("col-"+cols[i%len(cols)])),
			wait(`performance.getEntriesByName("informe-preview").length > 0 && document.body.dataset.loading === "false"`))
		preview = append(preview, num(`performance.getEntriesByName("informe-preview").at(-1).duration`))
	}

	targets := []target{
		{"page HTML+CSS+JS+catalogue, uncompressed", "KB", 100, float64(size) / 1000},
		{"first render, signed in (median)", "ms", 300, median(render)},
		{"first render, signed in (slowest)", "ms", 300, slices.Max(render)},
		{"count and 20-row preview after a change (median)", "ms", 200, median(preview)},
		{"count and 20-row preview after a change (slowest)", "ms", 200, slices.Max(preview)},
	}
	missed := 0
	fmt.Printf("%-52s %10s %10s  %s\n", "target", "figure", "bound", "")
	for _, t := range targets {
		verdict := "PASS"
		if t.got >= t.bound {
			verdict = "MISS"
			missed++
		}
		fmt.Printf("%-52s %7.1f %-2s %7.0f %-2s  %s\n", t.name, t.got, t.unit, t.bound, t.unit, verdict)
	}
	if missed > 0 {
		os.Exit(1)
	}
}

// pageBytes returns the bytes of the page and every asset it names.
func pageBytes(base string) (int, error) {
	get := func(u string) ([]byte, error) {
		resp, err := http.Get(u)
		if err != nil {
			return nil, err
		}
		defer resp.Body.Close()
		if resp.StatusCode != 200 {
			return nil, fmt.Errorf("GET %s: %s", u, resp.Status)
		}
		return io.ReadAll(resp.Body)
	}
	page, err := get(base + "/")
	if err != nil {
		return 0, err
	}
	n := len(page)
	refs := regexp.MustCompile(`/assets/[^"]+`).FindAllString(string(page), -1)
	slices.Sort(refs)
	for _, ref := range slices.Compact(refs) { // the catalogue is named twice (preload)
		b, err := get(base + ref)
		if err != nil {
			return 0, err
		}
		n += len(b)
	}
	return n, nil
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	return s[len(s)/2]
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench-web:", err)
		os.Exit(1)
	}
}
