// Command check-web walks a running informe's web page screen by screen in
// headless Chromium, runs axe-core against each screen, reports every
// serious or critical violation, and saves a screenshot of each step. Run it
// through scripts/check-web, which fetches axe-core from npm.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/informe/informe/internal/browser"
)

// violation is what axe-core reports of one rule.
type violation struct {
	ID     string `json:"id"`
	Impact string `json:"impact"`
	Help   string `json:"help"`
	Nodes  []struct {
		Target []string `json:"target"`
	} `json:"nodes"`
}

func main() {
	base := flag.String("base", os.Getenv("BASE"), "informe's base URL")
	token := flag.String("token", os.Getenv("TOKEN"), "a token with report:read and users:read")
	axePath := flag.String("axe", "", "path of axe-core's axe.min.js")
	out := flag.String("out", "docs/screenshots", "folder for the screenshots")
	flag.Parse()
	if *base == "" || *token == "" || *axePath == "" {
		fmt.Fprintln(os.Stderr, "check-web: -base, -token and -axe are required")
		os.Exit(2)
	}
	axe, err := os.ReadFile(*axePath)
	if err != nil {
		fail(err)
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		fail(err)
	}
	profile, err := os.MkdirTemp("", "check-web")
	if err != nil {
		fail(err)
	}
	defer os.RemoveAll(profile)
	ctx, cancel, err := browser.Start(context.Background(), browser.Options{ProfileDir: profile, Lang: "es-CL", Width: 1280, Height: 900})
	if err != nil {
		fail(err)
	}
	defer cancel()

	run := func(steps ...chromedp.Action[chromedp.Void]) {
		c, done := context.WithTimeout(ctx, 30*time.Second)
		defer done()
		if err := chromedp.Do(c, steps...); err != nil {
			fail(err)
		}
	}
	wait := func(expr string) chromedp.Action[chromedp.Void] {
		return chromedp.Poll[chromedp.Void](expr, chromedp.WithPollingInterval(20*time.Millisecond))
	}
	// clear empties an input as a person would, so that the page hears it.
	clear := func(id string) chromedp.Action[chromedp.Void] {
		return chromedp.Evaluate[chromedp.Void](fmt.Sprintf(
			`(e => { e.value = ""; e.dispatchEvent(new Event("input")); })(document.getElementById(%q))`, id))
	}
	settled := wait(`document.body.dataset.loading !== "true"`)
	serious := 0
	// screen checks the page with axe-core and saves what the window shows,
	// scrolled to the element with the id at (the top when "").
	screen := func(name, at string) {
		scroll := `window.scrollTo(0, 0)`
		if at != "" {
			scroll = fmt.Sprintf(`document.getElementById(%q).scrollIntoView()`, at)
		}
		run(chromedp.Evaluate[chromedp.Void](scroll), chromedp.Sleep(300*time.Millisecond))
		c, done := context.WithTimeout(ctx, 60*time.Second)
		defer done()
		if _, err := chromedp.Run(c, chromedp.Evaluate[bool](string(axe)+";true")); err != nil {
			fail(err)
		}
		res, err := chromedp.Run(c, chromedp.Evaluate[string](
			`axe.run(document, {resultTypes: ["violations"]}).then(r => JSON.stringify(r.violations))`, chromedp.EvalAwaitPromise))
		if err != nil {
			fail(err)
		}
		var vs []violation
		if err := json.Unmarshal([]byte(res), &vs); err != nil {
			fail(err)
		}
		counted := 0
		for _, v := range vs {
			if v.Impact == "serious" || v.Impact == "critical" {
				serious++
				counted++
			}
			fmt.Printf("  %s: %s (%s) at %v\n", name, v.ID, v.Impact, v.Nodes)
		}
		png, err := chromedp.Run(c, chromedp.CaptureScreenshot())
		if err != nil {
			fail(err)
		}
		file := filepath.Join(*out, name+".png")
		if err := os.WriteFile(file, png, 0o644); err != nil {
			fail(err)
		}
		fmt.Printf("%-22s axe: %d violations, %d serious or critical; %s\n", name, len(vs), counted, file)
	}

	run(chromedp.Navigate(*base+"/"), wait(`document.body.dataset.ready === "true"`))
	screen("01-sign-in", "")
	run(chromedp.SetValue(chromedp.ID("token"), "informe_not-a-real-token"), chromedp.Click(chromedp.CSS("#sign-in-form button")),
		wait(`document.getElementById("sign-in-error").textContent !== ""`))
	screen("02-wrong-token", "")
	run(chromedp.SetValue(chromedp.ID("token"), *token), chromedp.Click(chromedp.CSS("#sign-in-form button")),
		wait(`!document.getElementById("builder").hidden`), settled)
	screen("03-builder", "")
	run(chromedp.SendKeys(chromedp.ID("search"), "client"))
	screen("04-search", "cols-title")
	run(clear("search"),
		chromedp.Click(chromedp.ID("col-contract_id")), chromedp.Click(chromedp.ID("col-code_contract")),
		chromedp.Click(chromedp.ID("col-task_status")), chromedp.SendKeys(chromedp.ID("f-client_id"), "2"),
		chromedp.Sleep(400*time.Millisecond), settled)
	screen("05-preview", "result-title")
	run(chromedp.SendKeys(chromedp.ID("f-rut"), "12.345.678-9"), wait(`document.getElementById("f-rut-error").textContent !== ""`))
	screen("06-rut-error", "filters-title")
	run(clear("f-rut"),
		chromedp.Sleep(400*time.Millisecond), settled) // the token stays masked: screenshots get committed
	screen("07-connect", "connect-title")
	run(chromedp.Click(chromedp.ID("lang")), chromedp.Sleep(400*time.Millisecond), settled)
	screen("08-english", "cols-title")
	run(chromedp.Click(chromedp.ID("sign-out")), wait(`!document.getElementById("sign-in").hidden`))
	screen("09-signed-out", "")

	if serious > 0 {
		fmt.Printf("FAIL: %d serious or critical axe-core violations\n", serious)
		os.Exit(1)
	}
	fmt.Println("PASS: no serious or critical axe-core violations")
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "check-web:", err)
	os.Exit(1)
}
