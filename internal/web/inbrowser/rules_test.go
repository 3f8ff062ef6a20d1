package inbrowser_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/informe/informe/auth"
	"github.com/informe/informe/internal/api/apitest"
	"github.com/informe/informe/internal/dataset"
	"github.com/informe/informe/internal/pgserver/pgtest"
)

// personalColumns are the names of every column that holds personal data.
func personalColumns() map[string]bool {
	out := map[string]bool{}
	for _, d := range dataset.All {
		for _, c := range d.Columns {
			if c.Personal != dataset.NotPersonal {
				out[c.Name] = true
			}
		}
	}
	return out
}

// pageSession is GET /web/session as the page reads it.
type pageSession struct {
	SignedIn bool      `json:"signed_in"`
	Datasets []pageSet `json:"datasets"`
}

// pageSet is what /web/session says a token sees of one dataset.
type pageSet struct {
	Source  string            `json:"source"`
	Columns []string          `json:"columns"`
	Masked  map[string]string `json:"masked"`
	Filters []string          `json:"filters"`
	Related []string          `json:"related"`
}

// session returns /web/session signed in with token, and its body.
func session(t *testing.T, ts *apitest.Server, token string) (pageSession, []byte) {
	t.Helper()
	r := ts.Do(t, http.MethodGet, "/web/session", "Cookie", "informe_token="+token)
	var s pageSession
	if r.Status != http.StatusOK {
		t.Fatalf("/web/session: %d %s", r.Status, r.Body)
	}
	if err := json.Unmarshal(r.Body, &s); err != nil {
		t.Fatal(err)
	}
	return s, r.Body
}

// TestPageSessionRules checks what /web/session (and signing in) tells
// the page a token may see: every column of the datasets its scopes allow
// for a token without rules; without a personal column's name anywhere
// for a --no-personal token, nor its filter or related rows; a masked
// column listed with its mask, and the filter on it gone.
func TestPageSessionRules(t *testing.T) {
	t.Parallel()
	ts := apitest.NewWebServer(t, pgtest.Fixture(t))
	personal := personalColumns()

	t.Run("NoRules", func(t *testing.T) {
		s, _ := session(t, ts, ts.Token)
		var want []*dataset.Dataset
		for _, d := range dataset.All {
			if slices.Contains(auth.Scopes, d.Scope) {
				want = append(want, d)
			}
		}
		if !s.SignedIn || len(s.Datasets) != len(want) {
			t.Fatalf("signed in %v with %d datasets, want %d", s.SignedIn, len(s.Datasets), len(want))
		}
		for i, d := range want {
			got := s.Datasets[i]
			if got.Source != d.Name || len(got.Columns) != len(d.Columns) || len(got.Masked) != 0 {
				t.Errorf("%s: %s with %d columns, %d masked; want every one of %d", d.Name, got.Source, len(got.Columns), len(got.Masked), len(d.Columns))
			}
		}
		if got := s.Datasets[0]; got.Source != "general-report" || !slices.Equal(got.Filters, []string{"contract_id", "code_contract", "client_id", "rut"}) {
			t.Errorf("the report's filters are not all offered: %+v", got)
		}
		if i := slices.IndexFunc(s.Datasets, func(d pageSet) bool { return d.Source == "contracts" }); i < 0 || len(s.Datasets[i].Related) == 0 {
			t.Errorf("the contracts' related rows are not offered")
		}
	})

	t.Run("ReportOnly", func(t *testing.T) {
		s, _ := session(t, ts, ts.NewToken(t, "report only", []dataset.Scope{dataset.ReportRead}, time.Time{}))
		for _, d := range s.Datasets {
			if d.Source == "users" || d.Source == "audit" {
				t.Errorf("a report:read token is offered %s", d.Source)
			}
		}
	})

	t.Run("NoPersonal", func(t *testing.T) {
		s, body := session(t, ts, ts.RuledToken(t, "sin datos personales", dataset.Rules{NoPersonal: true}))
		if len(s.Datasets) == 0 {
			t.Fatalf("no dataset: %s", body)
		}
		for _, d := range s.Datasets {
			for _, c := range d.Columns {
				if personal[c] {
					t.Errorf("%s offers the personal column %s", d.Source, c)
				}
			}
			if slices.Contains(d.Filters, "rut") || len(d.Related) != 0 {
				t.Errorf("%s offers the filter on the RUT or related rows: %v %v", d.Source, d.Filters, d.Related)
			}
		}
		sets, err := json.Marshal(s.Datasets)
		if err != nil {
			t.Fatal(err)
		}
		for name := range personal {
			if strings.Contains(string(sets), `"`+name+`"`) {
				t.Errorf("the session names the personal column %s", name)
			}
		}
	})

	t.Run("Masked", func(t *testing.T) {
		tok := ts.RuledToken(t, "enmascarado", dataset.Rules{Mask: []string{"client_rut", "client_email", "client_birth_date"}})
		s, body := session(t, ts, tok)
		signIn := ts.Post(t, "/web/sign-in", `{"token": "`+tok+`"}`, "Origin", ts.URL)
		if signIn.Status != http.StatusOK || string(signIn.Body) != string(body) {
			t.Errorf("signing in says %d %s, the session %s", signIn.Status, signIn.Body, body)
		}
		for _, d := range s.Datasets {
			if d.Source != "clients" && d.Source != "general-report" {
				continue
			}
			want := map[string]string{"client_rut": "rut", "client_email": "email", "client_birth_date": "withheld"}
			if fmt.Sprint(d.Masked) != fmt.Sprint(want) || !slices.Contains(d.Columns, "client_rut") {
				t.Errorf("%s: masked %v, want %v, among its columns", d.Source, d.Masked, want)
			}
			if slices.Contains(d.Filters, "rut") {
				t.Errorf("%s offers the filter on a masked RUT", d.Source)
			}
		}
	})
}

// testPageInBrowserRules drives the page in Chromium with tokens that have
// rules: with --no-personal, no dataset offers a personal column, in the
// columns, the filters or the conditions, and a shared link naming one is
// told exactly as one naming a column that does not exist; with --mask,
// the masked columns are marked in Spanish and English and say how they
// are masked, the preview shows them masked, and no condition or filter
// is offered on them.
func testPageInBrowserRules(t *testing.T) {
	ts := apitest.NewWebServer(t, pgtest.Fixture(t))
	personal := personalColumns()

	t.Run("NoPersonal", func(t *testing.T) {
		tok := ts.RuledToken(t, "sin datos personales", dataset.Rules{NoPersonal: true})
		p := openTab(t, ts, tabOptions{url: ts.URL + "/#ds=report&cols=contract_id,client_rut,no_such_column&format=csv"})
		p.signIn(t, tok)
		notice := p.text(t, "link-issues")
		if want := "Columnas que «Una fila por tarea (informe general)» no tiene, no marcadas: client_rut, no_such_column."; !strings.Contains(notice, want) {
			t.Errorf("the notice says %q, want %q", notice, want)
		}
		if got := p.eval(t, `location.hash`); strings.Contains(got, "client_rut") {
			t.Errorf("the hidden column stays in the address: %s", got)
		}
		datasets := p.eval(t, `JSON.stringify([...document.querySelectorAll("#datasets input")].map(e => e.value))`)
		var names []string
		if err := json.Unmarshal([]byte(datasets), &names); err != nil {
			t.Fatal(err)
		}
		if slices.Contains(names, "audit") || len(names) < 2 {
			t.Errorf("the page offers the datasets %v", names)
		}
		for _, ds := range names {
			p.do(t, chromedp.Click(chromedp.ID("ds-"+ds)))
			p.wait(t, fmt.Sprintf(`document.getElementById("ds-%s").checked && document.body.dataset.loading === "false"`, ds))
			var offered []string
			js := `JSON.stringify([...document.querySelectorAll("#groups input[type=checkbox], #filters input, #conds option")].map(e => e.value || e.name))`
			p.do(t, chromedp.Click(chromedp.ID("add-cond")))
			if err := json.Unmarshal([]byte(p.eval(t, js)), &offered); err != nil {
				t.Fatal(err)
			}
			if len(offered) == 0 {
				t.Fatalf("%s offers nothing", ds)
			}
			for _, c := range offered {
				if personal[c] || personal[c[strings.Index(c, "/")+1:]] || c == "rut" {
					t.Errorf("%s offers %s", ds, c)
				}
			}
			p.do(t, chromedp.Click(chromedp.ID("w0-remove")))
		}
	})

	t.Run("Masked", func(t *testing.T) {
		tok := ts.RuledToken(t, "enmascarado", dataset.Rules{Mask: []string{"client_rut", "client_email", "client_birth_date"}})
		cols := "client_id,client_rut,first_name_client,client_email,client_birth_date,client_commune"
		p := openTab(t, ts, tabOptions{url: ts.URL + "/#ds=clients&cols=" + cols + "&w=client_rut~eq~12.345.678-5&format=csv"})
		p.signIn(t, tok)
		// A condition on a masked column would tell its values: it is
		// told as one on a column the data do not have.
		if notice := p.text(t, "link-issues"); !strings.Contains(notice, "Condiciones que no se aplican (más filas que las de quien envió el enlace): client_rut eq 12.345.678-5.") {
			t.Errorf("the notice says %q", notice)
		}
		mark := func(col string) string {
			return p.eval(t, fmt.Sprintf(`(e => e ? e.textContent + "|" + e.title : "")(document.querySelector("label[for=col-%s] .masked"))`, col))
		}
		for col, how := range map[string]string{"client_rut": "12.***.***-5", "client_email": "c***@dominio.cl", "client_birth_date": "vacío"} {
			if got := mark(col); !strings.HasPrefix(got, "enmascarado|Este token lo ve enmascarado: "+how) {
				t.Errorf("%s is marked %q", col, got)
			}
			if about := p.text(t, "col-"+col+"-about"); !strings.Contains(about, how) {
				t.Errorf("%s's description says %q, not how it is masked", col, about)
			}
		}
		for _, col := range []string{"client_id", "first_name_client", "client_commune"} {
			if got := mark(col); got != "" {
				t.Errorf("%s, which is not masked, is marked %q", col, got)
			}
		}
		rows := p.preview(t)
		if len(rows) < 2 {
			t.Fatalf("preview %v", rows)
		}
		if got := rows[0][1]; got != "RUT del cliente enmascarado" {
			t.Errorf("the preview's heading of the RUT is %q", got)
		}
		body := fmt.Sprint(rows)
		if !strings.Contains(body, "12.***.***-5") || strings.Contains(body, "12.345.678-5") || strings.Contains(body, "maria.gonzalez@example.cl") {
			t.Errorf("the preview is not masked: %v", rows)
		}
		p.do(t, chromedp.Click(chromedp.ID("add-cond")))
		options := p.eval(t, `[...document.querySelectorAll("#w0-col option")].map(e => e.value).join(",")`)
		for _, col := range []string{"client_rut", "client_email", "client_birth_date"} {
			if slices.Contains(strings.Split(options, ","), col) {
				t.Errorf("a condition is offered on the masked %s", col)
			}
		}
		p.do(t, chromedp.Click(chromedp.ID("w0-remove")))
		p.settled(t)
		p.screen(t, "30-masked-columns", "cols-title")
		p.screen(t, "31-masked-preview", "result-title")
		p.do(t, chromedp.Click(chromedp.ID("lang")))
		p.wait(t, `document.documentElement.lang === "en"`)
		if got := mark("client_rut"); !strings.HasPrefix(got, "masked|This token sees it masked: 12.***.***-5") {
			t.Errorf("in English the RUT is marked %q", got)
		}
		p.do(t, chromedp.Click(chromedp.ID("lang")))
		p.wait(t, `document.documentElement.lang === "es"`)
		// The report's filter on the client's RUT is the masked column's.
		p.do(t, chromedp.Click(chromedp.ID("ds-report")))
		p.wait(t, `document.getElementById("ds-report").checked && document.body.dataset.loading === "false"`)
		if got := p.eval(t, `String(!!document.getElementById("f-rut")) + String(!!document.getElementById("f-client_id"))`); got != "falsetrue" {
			t.Errorf("the report's filters: RUT shown, client id shown = %s, want false, true", got)
		}
	})
}
