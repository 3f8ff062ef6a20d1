package inbrowser_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/jackc/pgx/v5"
	"github.com/xuri/excelize/v2"

	"github.com/informe/informe/internal/api/apitest"
	"github.com/informe/informe/internal/dataset"
	"github.com/informe/informe/internal/pgserver/pgtest"
	"github.com/informe/informe/internal/source"
	"github.com/informe/informe/internal/testenv"
	"github.com/informe/informe/report"
)

// awkward is a text value a shell, a URL and OData each quote their own
// way: an apostrophe (OData's quote), an ampersand, accents and a space.
const awkward = "O'Higgins & Núñez"

// testPageConnectTexts checks the Connect texts of every dataset: each
// names its own dataset (curl's and informe export's file, informe
// export's --dataset, the sheet M opens, which the workbook has, the
// export and OData paths), and the curl command, run as given by sh with a
// condition on a value holding a quote, an apostrophe, an accent and &,
// exits 0 and writes the export's bytes, with the rows SQL counts.
func testPageConnectTexts(t *testing.T) {
	if _, err := exec.LookPath("curl"); err != nil {
		testenv.Missing(t, "curl: %v", err)
	}
	pool := pgtest.Fixture(t)
	for _, q := range []string{
		`UPDATE services SET name = $1 WHERE id = 1`,
		`UPDATE processes SET caption = $1 WHERE id = 6`,
		`UPDATE tasks SET name = $1 WHERE id = 9`,
		`UPDATE clients SET first_name = $1 WHERE id = 2`,
		`UPDATE users SET name = $1 WHERE id = 2`,
	} {
		if _, err := pool.Exec(context.Background(), q, awkward); err != nil {
			t.Fatal(err)
		}
	}
	ts := apitest.NewWebServer(t, pool)
	p := openTab(t, ts, tabOptions{})
	p.signIn(t, ts.Token)
	for _, tt := range []struct {
		ds, source, odata, export, column string
	}{
		{"report", "general-report", "GeneralReport", "/api/general-report/export", "service"},
		{"contracts", "contracts", "Contracts", "/api/contracts/export", "service"},
		{"processes", "processes", "Processes", "/api/processes/export", "caratulado_process"},
		{"tasks", "tasks", "Tasks", "/api/tasks/export", "task"},
		{"clients", "clients", "Clients", "/api/clients/export", "first_name_client"},
		{"services", "services", "Services", "/api/services/export", "service"},
		{"users", "users", "Users", "/users", "name"},
	} {
		t.Run(tt.ds, func(t *testing.T) {
			src, err := source.Named(tt.source, report.Maintained)
			if err != nil {
				t.Fatal(err)
			}
			var want int
			if err := pool.QueryRow(context.Background(),
				"SELECT count(*) FROM "+pgx.Identifier{src.Text}.Sanitize()+" WHERE "+pgx.Identifier{tt.column}.Sanitize()+" = $1",
				awkward).Scan(&want); err != nil {
				t.Fatal(err)
			}
			if want == 0 {
				t.Fatalf("no %s row holds %q: the case proves nothing", tt.ds, awkward)
			}
			frag := "ds=" + tt.ds + "&w=" + url.QueryEscape(tt.column+"~eq~"+awkward) + "&format=csv"
			p.do(t, chromedp.Navigate("about:blank"), chromedp.Navigate(ts.URL+"/#"+frag))
			p.wait(t, `document.body.dataset.ready === "true" && !document.getElementById("builder").hidden`)
			p.settled(t)
			texts := map[string]string{}
			for _, id := range []string{"web", "m", "odata", "curl", "cli", "libre"} {
				texts[id] = p.eval(t, fmt.Sprintf(`document.getElementById("c-%s").value`, id))
			}
			file := tt.source + ".csv"
			for _, c := range []struct{ id, want string }{
				{"web", ts.URL + tt.export + "?format=csv&"},
				{"m", `RelativePath = "` + strings.TrimPrefix(tt.export, "/") + `"`},
				{"odata", ts.URL + "/odata/" + tt.odata + "?"},
				{"curl", "-o " + file + ".tmp "},
				{"curl", "&& mv " + file + ".tmp " + file},
				{"cli", "--output " + file},
				{"libre", ts.URL + tt.export + "?format=csv&"},
			} {
				if !strings.Contains(texts[c.id], c.want) {
					t.Errorf("the %s text does not hold %q:\n%s", c.id, c.want, texts[c.id])
				}
			}
			if got, want := strings.Contains(texts["cli"], "--dataset "+tt.source+" "), tt.ds != "report"; got != want {
				t.Errorf("informe export names --dataset %s: %v, want %v:\n%s", tt.source, got, want, texts["cli"])
			}
			for id, text := range texts {
				if strings.Contains(strings.ToLower(text), "users") != (tt.ds == "users") {
					t.Errorf("the %s text of %s speaks of users, or that of users does not:\n%s", id, tt.ds, text)
				}
			}

			// curl, run as given.
			dir := t.TempDir()
			cmd := exec.Command("sh", "-c", texts["curl"])
			cmd.Dir = dir
			cmd.Env = append(os.Environ(), "INFORME_TOKEN="+ts.Token)
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("sh -c %s: %v\n%s", texts["curl"], err, out)
			}
			got, err := os.ReadFile(filepath.Join(dir, file))
			if err != nil {
				t.Fatal(err)
			}
			link := p.eval(t, `document.getElementById("download").getAttribute("href")`)
			if export := ts.Get(t, link); export.Status != 200 || !bytes.Equal(got, export.Body) {
				t.Errorf("curl wrote %d bytes; the export %s answers %d with %d", len(got), link, export.Status, len(export.Body))
			}
			rows, err := csv.NewReader(bytes.NewReader(got)).ReadAll()
			if err != nil {
				t.Fatal(err)
			}
			if len(rows)-1 != want {
				t.Errorf("curl's file holds %d rows, SQL counts %d", len(rows)-1, want)
			}

			// The sheet M opens is the workbook's.
			p.choose(t, "format", "xlsx")
			p.settled(t)
			m := p.eval(t, `document.getElementById("c-m").value`)
			book := ts.Get(t, p.eval(t, `document.getElementById("download").getAttribute("href")`))
			f, err := excelize.OpenReader(bytes.NewReader(book.Body))
			if err != nil {
				t.Fatalf("the XLSX export (%d): %v", book.Status, err)
			}
			sheet := f.GetSheetName(0)
			if want := `Source{[Item = "` + sheet + `", Kind = "Sheet"]}`; !strings.Contains(m, want) {
				t.Errorf("M does not open the workbook's sheet %q:\n%s", sheet, m)
			}
		})
	}
}

// testPageDecimalComma checks the page's decimal comma: chosen with the
// semicolon, the download and the curl command ask for decimal=comma and
// the file holds 12500,5; with the comma delimiter the choice is disabled
// and left out of every URL.
func testPageDecimalComma(t *testing.T) {
	ts := apitest.NewWebServer(t, pgtest.Fixture(t))
	p := openTab(t, ts, tabOptions{})
	p.signIn(t, ts.Token)
	p.do(t, chromedp.Navigate("about:blank"), chromedp.Navigate(ts.URL+"/#ds=services&format=csv&delimiter=semicolon&decimal=comma"))
	p.wait(t, `document.body.dataset.ready === "true" && !document.getElementById("builder").hidden`)
	p.settled(t)
	if got := p.eval(t, `String(document.getElementById("decimal").checked && !document.getElementById("decimal").disabled)`); got != "true" {
		t.Errorf("the decimal comma is not chosen, or disabled, with the semicolon")
	}
	link := p.eval(t, `document.getElementById("download").getAttribute("href")`)
	if !strings.Contains(link, "&delimiter=semicolon&decimal=comma") {
		t.Errorf("download link = %s", link)
	}
	if m := p.eval(t, `document.getElementById("c-m").value`); !strings.Contains(m, `"es-CL")`) {
		t.Errorf("M does not read the numbers as Chile writes them:\n%s", m)
	}
	curl := p.eval(t, `document.getElementById("c-curl").value`)
	dir := t.TempDir()
	cmd := exec.Command("sh", "-c", curl)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "INFORME_TOKEN="+ts.Token)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("sh -c %s: %v\n%s", curl, err, out)
	}
	got, err := os.ReadFile(filepath.Join(dir, "services.csv"))
	if err != nil {
		t.Fatal(err)
	}
	if want := ts.Get(t, link); !bytes.Equal(got, want.Body) || !bytes.Contains(got, []byte(";12500,5;")) {
		t.Errorf("curl wrote:\n%s\nthe export %s (%d):\n%s", got, link, want.Status, want.Body)
	}

	p.choose(t, "delimiter", "comma")
	p.settled(t)
	if got := p.eval(t, `String(document.getElementById("decimal").disabled)`); got != "true" {
		t.Error("the decimal comma stays enabled with the comma delimiter")
	}
	for _, id := range []string{"c-web", "c-curl", "c-m"} {
		if text := p.eval(t, fmt.Sprintf(`document.getElementById(%q).value`, id)); strings.Contains(text, "decimal") {
			t.Errorf("with the comma delimiter %s asks for decimal:\n%s", id, text)
		}
	}
	if got := p.eval(t, `document.getElementById("count").dataset.total`); got == "" {
		t.Error("no count with the comma delimiter")
	}
}

// testPageScheduleText runs the page's informe schedule add text for a
// selection, as given by sh, then runs the schedule once: the file it
// delivers holds the bytes of the page's own download of the selection.
func testPageScheduleText(t *testing.T) {
	pool := pgtest.Fixture(t)
	ts := apitest.NewWebServer(t, pool)
	ts.NewToken(t, "programa", []dataset.Scope{dataset.ReportRead}, time.Time{})
	bin := filepath.Join(t.TempDir(), "informe")
	if out, err := exec.Command("go", "build", "-o", bin, "../../../cmd/informe").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	p := openTab(t, ts, tabOptions{})
	p.signIn(t, ts.Token)
	frag := "ds=contracts&w=" + url.QueryEscape("service~eq~"+awkward) + "&format=csv"
	p.do(t, chromedp.Navigate("about:blank"), chromedp.Navigate(ts.URL+"/#"+frag))
	p.wait(t, `document.body.dataset.ready === "true" && !document.getElementById("builder").hidden`)
	p.settled(t)
	text := p.eval(t, `document.getElementById("c-schedule").value`)
	if !strings.HasPrefix(text, "informe schedule add --name contracts-nightly --dataset contracts ") {
		t.Fatalf("the schedule text is %q", text)
	}
	dir := t.TempDir()
	env := append(os.Environ(), "PATH="+filepath.Dir(bin)+":"+os.Getenv("PATH"), "DATABASE_URL="+pool.Config().ConnString(), "INFORME_TOKEN_NAME=programa")
	cmd := exec.Command("sh", "-c", text)
	cmd.Dir, cmd.Env = dir, env
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("sh -c %s: %v\n%s", text, err, out)
	}
	cmd = exec.Command(bin, "schedule", "run-now", "contracts-nightly")
	cmd.Dir, cmd.Env = dir, env
	if out, err := cmd.CombinedOutput(); err != nil || !strings.Contains(string(out), ": delivered") {
		t.Fatalf("run-now: %v\n%s", err, out)
	}
	entries, err := os.ReadDir(dir)
	if err != nil || len(entries) != 1 || !strings.HasPrefix(entries[0].Name(), "contracts-") {
		t.Fatalf("the folder holds %v, %v", entries, err)
	}
	got, err := os.ReadFile(filepath.Join(dir, entries[0].Name()))
	if err != nil {
		t.Fatal(err)
	}
	link := p.eval(t, `document.getElementById("download").getAttribute("href")`)
	if export := ts.Get(t, link); export.Status != 200 || !bytes.Equal(got, export.Body) {
		t.Errorf("the schedule delivered %d bytes; the download %s answers %d with %d", len(got), link, export.Status, len(export.Body))
	}
}
