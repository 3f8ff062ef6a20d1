package inbrowser_test

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/informe/informe/internal/api/apitest"
	"github.com/informe/informe/internal/pgserver/pgtest"
)

// The page's conditions as analysts in Chile write them: numbers with
// points for thousands, text without accents, conditions on related rows,
// dates half typed, and a change of grain that keeps the work.

// addCond adds a condition on col with op and returns its id prefix
// ("w0"); the value is the caller's to type or choose.
func (p *tab) addCond(t *testing.T, col, op string) string {
	t.Helper()
	id := "w" + p.eval(t, `String(document.querySelectorAll("#conds > li").length)`)
	p.do(t, chromedp.Click(chromedp.ID("add-cond")))
	p.wait(t, fmt.Sprintf(`document.getElementById(%q) !== null`, id+"-col"))
	p.choose(t, id+"-col", col)
	p.choose(t, id+"-op", op)
	return id
}

// typeValue types text into a condition's value as a person would, key
// by key.
func (p *tab) typeValue(t *testing.T, id, text string) {
	t.Helper()
	p.eval(t, fmt.Sprintf(`(e => { e.value = ""; e.dispatchEvent(new Event("input")); return "" })(document.getElementById(%q))`, id+"-v"))
	p.do(t, chromedp.SendKeys(chromedp.ID(id+"-v"), text))
}

// wantCount waits until the page counts n rows, checked by informe.
func (p *tab) wantCount(t *testing.T, n int64) {
	t.Helper()
	p.wait(t, fmt.Sprintf(`document.getElementById("count").dataset.total === %q && document.body.dataset.loading === "false"`, strconv.FormatInt(n, 10)))
}

// wantRefused checks that the page offers no count, no download and no
// connection text, saying why at condition id.
func (p *tab) wantRefused(t *testing.T, id, message string) {
	t.Helper()
	p.wait(t, fmt.Sprintf(`document.getElementById(%q).getAttribute("aria-invalid") === "true"`, id+"-v"))
	if got := p.text(t, id+"-error"); !strings.Contains(got, message) {
		t.Errorf("condition %s says %q, want %q", id, got, message)
	}
	if got := p.eval(t, `String(document.getElementById("count").dataset.total)`); got != "undefined" {
		t.Errorf("the page counts %s rows while a condition is refused", got)
	}
	if got := p.eval(t, `document.getElementById("download").getAttribute("aria-disabled") + " " + document.getElementById("download").hasAttribute("href")`); got != "true false" {
		t.Errorf("download: aria-disabled and href %s, want true false", got)
	}
	if got := p.eval(t, `String(document.getElementById("connect-invalid") !== null && document.querySelector("#connect textarea") === null)`); got != "true" {
		t.Errorf("connection texts are offered while a condition is refused")
	}
}

func testPageConditionsChile(t *testing.T) {
	pool := pgtest.Seeded(t)
	ts := apitest.NewWebServer(t, pool)
	costly := pgtest.Int(t, pool, "SELECT count(*) FROM contracts c JOIN services s ON s.id = c.service_id WHERE s.cost > 100000")
	if costly == 0 || costly == pgtest.Int(t, pool, "SELECT count(*) FROM contracts") {
		t.Fatalf("%d contracts cost more than 100000: the case proves nothing", costly)
	}

	t.Run("NumberAsChileWritesIt", func(t *testing.T) {
		p := openTab(t, ts, tabOptions{url: ts.URL + "/#ds=contracts&cols=contract_id,costo_servicio"})
		p.signIn(t, ts.Token)
		id := p.addCond(t, "costo_servicio", "gt")
		for _, typed := range []string{"100.000", "$ 100.000", "$100.000", "100000"} {
			p.typeValue(t, id, typed)
			p.wantCount(t, costly)
			if got := p.text(t, id+"-read"); got != "= 100000" {
				t.Errorf("%q: the page shows %q beside it, want = 100000", typed, got)
			}
		}
		if got := p.eval(t, `document.getElementById("c-odata").value`); !strings.HasSuffix(got, "$filter=costo_servicio%20gt%20100000") {
			t.Errorf("OData URL = %s", got)
		}
		p.typeValue(t, id, "12.500,5")
		p.wait(t, fmt.Sprintf(`document.getElementById(%q).textContent === "= 12500.5"`, id+"-read"))
		for _, typed := range []string{"100.00", "1.5", "1,500"} {
			p.typeValue(t, id, typed)
			p.wantRefused(t, id, "scriba")
		}
		p.screen(t, "18-number-refused", "filters-title")
		p.typeValue(t, id, "1.000.000")
		p.wantCount(t, pgtest.Int(t, pool, "SELECT count(*) FROM contracts c JOIN services s ON s.id = c.service_id WHERE s.cost > 1000000"))
	})

	t.Run("NumberInEnglish", func(t *testing.T) {
		p := openTab(t, ts, tabOptions{lang: "en", url: ts.URL + "/#ds=contracts&cols=contract_id,costo_servicio"})
		p.signIn(t, ts.Token)
		id := p.addCond(t, "costo_servicio", "gt")
		p.typeValue(t, id, "100,000")
		p.wantCount(t, costly)
		p.typeValue(t, id, "100.000")
		p.wantRefused(t, id, "Chile writes a hundred thousand 100.000")
	})

	t.Run("AccentsAndCapitals", func(t *testing.T) {
		p := openTab(t, ts, tabOptions{url: ts.URL + "/#ds=clients&cols=client_id,last_name_client,client_commune"})
		p.signIn(t, ts.Token)
		id := p.addCond(t, "last_name_client", "eq")
		p.typeValue(t, id, "Nunez")
		nunez := pgtest.Int(t, pool, "SELECT count(*) FROM clients WHERE "+apitest.SpanishFold("last_name")+" = 'nunez'")
		if nunez == 0 {
			t.Fatal("no Núñez among the clients: the case proves nothing")
		}
		p.wantCount(t, nunez)
		// Exact, as asked: Nunez without its accent is no one's name.
		p.do(t, chromedp.Click(chromedp.ID(id+"-exact")))
		p.wantCount(t, 0)
		p.do(t, chromedp.Click(chromedp.ID(id+"-exact")))
		p.wantCount(t, nunez)
		id2 := p.addCond(t, "client_commune", "contains")
		p.typeValue(t, id2, "valparaiso")
		both := pgtest.Int(t, pool, "SELECT count(*) FROM clients WHERE "+apitest.SpanishFold("last_name")+" = 'nunez' AND strpos("+apitest.SpanishFold("commune")+", 'valparaiso') > 0")
		p.wantCount(t, both)
		p.screen(t, "19-accents", "filters-title")
		// The download and the feed give the same rows.
		link := p.eval(t, `document.getElementById("download").getAttribute("href")`)
		head := ts.Do(t, http.MethodHead, link, "Authorization", "Bearer "+ts.Token)
		if got := head.Header.Get("X-Total-Count"); got != strconv.FormatInt(both, 10) {
			t.Errorf("the download %s counts %s rows, want %d", link, got, both)
		}
		odata := p.eval(t, `document.getElementById("c-odata").value`)
		path := strings.TrimPrefix(odata, ts.URL)
		q := path[strings.Index(path, "?"):]
		r := ts.Get(t, "/odata/Clients/$count"+q)
		if strings.TrimSpace(string(r.Body)) != strconv.FormatInt(both, 10) {
			t.Errorf("the OData URL %s counts %d %s, want %d", odata, r.Status, r.Body, both)
		}
		p.do(t, chromedp.Navigate("about:blank"), chromedp.Navigate(ts.URL+"/#ds=clients&w=client_region~icontains~Nuble"))
		p.wait(t, `document.body.dataset.ready === "true" && !document.getElementById("builder").hidden`)
		p.wantCount(t, pgtest.Int(t, pool, "SELECT count(*) FROM clients WHERE strpos("+apitest.SpanishFold("region")+", 'nuble') > 0"))
	})

	t.Run("RelatedRows", func(t *testing.T) {
		p := openTab(t, ts, tabOptions{url: ts.URL + "/#ds=contracts&cols=contract_id,contract_status"})
		p.signIn(t, ts.Token)
		id := p.addCond(t, "Tasks/task_status", "eq")
		p.wait(t, fmt.Sprintf(`document.getElementById(%q).tagName === "SELECT"`, id+"-v"))
		p.choose(t, id+"-v", "Pendiente")
		const tasks = "SELECT 1 FROM tasks k JOIN processes p ON p.id = k.process_id WHERE p.contract_id = c.id AND k.status = 'Pendiente'"
		p.wantCount(t, pgtest.Int(t, pool, "SELECT count(*) FROM contracts c WHERE EXISTS ("+tasks+")"))
		// A second condition on tasks speaks of the same task.
		id2 := p.addCond(t, "Tasks/task_end_date", "year")
		p.typeValue(t, id2, "2025")
		p.wantCount(t, pgtest.Int(t, pool, "SELECT count(*) FROM contracts c WHERE EXISTS ("+tasks+" AND k.end_date >= '2025-01-01' AND k.end_date < '2026-01-01')"))
		p.screen(t, "20-related-rows", "filters-title")
		if got := p.eval(t, `document.getElementById("c-cli").value`); !strings.Contains(got, `--filter 'Tasks/any(r:r/task_status eq '\''Pendiente'\'' and (r/task_end_date ge 2025-01-01 and r/task_end_date lt 2026-01-01))'`) {
			t.Errorf("informe export's text = %s", got)
		}
	})

	t.Run("HalfTypedDate", func(t *testing.T) {
		p := openTab(t, ts, tabOptions{url: ts.URL + "/#ds=contracts&cols=contract_id"})
		p.signIn(t, ts.Token)
		id := p.addCond(t, "Tasks/task_end_date", "ge")
		p.wait(t, fmt.Sprintf(`document.getElementById(%q).type === "date"`, id+"-v"))
		// Day and month, no year: 01-01-aaaa.
		p.do(t, chromedp.SendKeys(chromedp.ID(id+"-v"), "0101"))
		p.wantRefused(t, id, "Fecha incompleta")
		p.screen(t, "21-half-typed-date", "filters-title")
	})

	t.Run("GrainKeepsTheWork", func(t *testing.T) {
		p := openTab(t, ts, tabOptions{url: ts.URL + "/#ds=report&cols=contract_id,costo_servicio,task"})
		p.signIn(t, ts.Token)
		id := p.addCond(t, "costo_servicio", "gt")
		p.typeValue(t, id, "100.000")
		p.wait(t, `!document.getElementById("grain-warn").hidden`)
		if got := p.text(t, "grain-warn-text"); !strings.Contains(got, "se repite en cada fila de tarea") {
			t.Errorf("the warning says %q", got)
		}
		p.screen(t, "22-grain-warning", "ds-title")
		p.do(t, chromedp.Click(chromedp.ID("grain-switch")))
		p.wait(t, `document.getElementById("ds-contracts").checked`)
		p.wantCount(t, costly)
		if got := p.eval(t, `document.getElementById("download").getAttribute("href")`); !strings.HasPrefix(got, "/api/contracts/export?format=csv&columns=contract_id,costo_servicio&$filter=costo_servicio%20gt%20100000") {
			t.Errorf("after the change the download is %s", got)
		}
		if got := p.text(t, "grain-note"); !strings.Contains(got, "Tarea") {
			t.Errorf("the page says %q of what it dropped, want the task column named", got)
		}
		if !p.evalBool(t, `document.getElementById("grain-warn").hidden`) {
			t.Error("the warning stays at one row per contract")
		}
	})
}

// testPageConditionsMParse parses, with Power Query's own parser, the M
// text of conditions that fold accents and speak of related rows: the
// $filter M carries is the URL's, its quotes doubled.
func testPageConditionsMParse(t *testing.T) {
	ts := apitest.NewWebServer(t, pgtest.Fixture(t))
	p := openTab(t, ts, tabOptions{})
	p.signIn(t, ts.Token)
	texts := p.mTexts(t, ts, []string{
		"ds=clients&cols=client_id,last_name_client&w=last_name_client~ieq~Núñez \"O'Brien\"&format=csv",
		"ds=contracts&cols=contract_id&w=Tasks/task_status~eq~Pendiente&w=Tasks/task_end_date~year~2026&w=costo_servicio~gt~100.000&format=xlsx",
	})
	if m := texts[0].Text; !strings.Contains(m, `#"$filter" = "Informe.fold(text=last_name_client) eq Informe.fold(text='Núñez ""O''Brien""')"`) {
		t.Errorf("the folded condition is not the M query's $filter:\n%s", m)
	}
	if m := texts[1].Text; !strings.Contains(m, `#"$filter" = "costo_servicio gt 100000 and Tasks/any(r:r/task_status eq 'Pendiente' and (r/task_end_date ge 2026-01-01 and r/task_end_date lt 2027-01-01))"`) {
		t.Errorf("the conditions on tasks are not the M query's $filter:\n%s", m)
	}
	parseM(t, texts)
}

// evalBool evaluates a JavaScript expression into a bool.
func (p *tab) evalBool(t *testing.T, expr string) bool {
	t.Helper()
	return p.eval(t, "String(Boolean("+expr+"))") == "true"
}
