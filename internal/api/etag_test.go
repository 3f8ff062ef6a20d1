package api_test

import (
	"bytes"
	"context"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/informe/informe/internal/pgserver/pgtest"
	"github.com/informe/informe/internal/testenv"
)

// etagDoors are paths that tag their responses: every format of an
// export, the spec's two paths, another dataset's export, OData pages and
// a count.
var etagDoors = []string{
	"/api/general-report/export?format=csv",
	"/api/general-report/export?format=csv&delimiter=semicolon&decimal=comma&header=labels&lang=en&bom=true",
	"/api/general-report/export?format=json",
	"/api/general-report/export?format=ndjson",
	"/api/general-report/export?format=xlsx",
	"/api/general-report/export?format=parquet",
	"/api/general-report/export?format=arrow",
	"/api/general-report/export?format=csv&$filter=task_status%20eq%20'Pendiente'&$orderby=task%20desc",
	"/api/general-report?page=2&result_per_page=3&format=csv",
	"/users?format=csv",
	"/api/tasks/export?format=csv",
	"/odata/Tasks",
	"/odata/GeneralReport?$top=2&$count=true",
	"/odata/Contracts?$expand=Processes",
	"/odata/Tasks/$count",
}

// identity asks for the bytes as they are, so that the tag is strong.
var identity = []string{"Accept-Encoding", "identity"}

// TestETagNotModified checks that each door's response carries a strong
// ETag, that GET and HEAD with If-None-Match holding it (alone, in a
// list, as a weak tag, or "*") answer 304 with the same ETag and no
// body, and that another tag gets the whole response again, the same
// bytes.
func TestETagNotModified(t *testing.T) {
	t.Parallel()
	ts := newServer(t, pgtest.Fixture(t))
	for _, door := range etagDoors {
		t.Run(door, func(t *testing.T) {
			first := ts.Get(t, door, identity...)
			if first.Status != http.StatusOK {
				t.Fatalf("status = %d; body %.300s", first.Status, first.Body)
			}
			tag := first.Header.Get("ETag")
			if !strings.HasPrefix(tag, `"`) || !strings.HasSuffix(tag, `"`) || len(tag) < 10 {
				t.Fatalf("ETag = %q, want a strong entity tag", tag)
			}
			head := ts.Do(t, http.MethodHead, door, "Authorization", "Bearer "+ts.Token, "Accept-Encoding", "identity")
			if got := head.Header.Get("ETag"); head.Status != http.StatusOK || got != tag {
				t.Errorf("HEAD: status %d, ETag %q; want 200, %q", head.Status, got, tag)
			}
			for _, tt := range []struct {
				name, held string
				method     string
			}{
				{"OK", tag, http.MethodGet},
				{"OKHead", tag, http.MethodHead},
				{"OKList", `"other", ` + tag, http.MethodGet},
				{"OKWeak", "W/" + tag, http.MethodGet},
				{"OKStar", "*", http.MethodGet},
			} {
				r := ts.Do(t, tt.method, door, "Authorization", "Bearer "+ts.Token, "Accept-Encoding", "identity", "If-None-Match", tt.held)
				if r.Status != http.StatusNotModified || len(r.Body) != 0 {
					t.Errorf("%s: status %d, %d bytes; want 304 and none", tt.name, r.Status, len(r.Body))
				}
				if got := r.Header.Get("ETag"); got != tag {
					t.Errorf("%s: 304's ETag = %q, want %q", tt.name, got, tag)
				}
			}
			again := ts.Get(t, door, append(identity, "If-None-Match", `"other"`)...)
			if again.Status != http.StatusOK || again.Header.Get("ETag") != tag || string(again.Body) != string(first.Body) {
				t.Errorf("another tag: status %d, ETag %q, same body %v; want 200, %q, true",
					again.Status, again.Header.Get("ETag"), string(again.Body) == string(first.Body), tag)
			}
		})
	}
}

// TestETagReadsNoRows checks that a 304 is decided without reading rows:
// while another transaction holds every table of the data locked, a
// request that would read them would wait, and a request holding the tag
// is answered.
func TestETagReadsNoRows(t *testing.T) {
	t.Parallel()
	pool := pgtest.Fixture(t)
	ts := newServer(t, pool)
	tags := map[string]string{}
	for _, door := range etagDoors {
		r := ts.Get(t, door, identity...)
		if r.Status != http.StatusOK || r.Header.Get("ETag") == "" {
			t.Fatalf("%s: status %d, ETag %q", door, r.Status, r.Header.Get("ETag"))
		}
		tags[door] = r.Header.Get("ETag")
	}
	ctx := context.Background()
	tx, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, "LOCK TABLE clients, contracts, services, benefit_centers, processes, tasks, users IN ACCESS EXCLUSIVE MODE"); err != nil {
		t.Fatal(err)
	}
	for _, door := range etagDoors {
		for _, method := range []string{http.MethodGet, http.MethodHead} {
			r := ts.Do(t, method, door, "Authorization", "Bearer "+ts.Token, "Accept-Encoding", "identity", "If-None-Match", tags[door])
			if r.Status != http.StatusNotModified {
				t.Errorf("%s %s: status %d, want 304; body %.200s", method, door, r.Status, r.Body)
			}
		}
	}
}

// TestETagsDiffer checks that what changes a response's bytes changes
// its tag: the format and its options, the query, the content coding
// (whose tag is weak), and the dataset.
func TestETagsDiffer(t *testing.T) {
	t.Parallel()
	ts := newServer(t, pgtest.Fixture(t))
	seen := map[string]string{}
	for _, tt := range []struct {
		door   string
		header []string
	}{
		{"/api/general-report/export?format=csv", identity},
		{"/api/general-report/export?format=csv&delimiter=semicolon", identity},
		{"/api/general-report/export?format=csv&header=false", identity},
		{"/api/general-report/export?format=csv&header=labels", identity},
		{"/api/general-report/export?format=csv&header=labels&lang=en", identity},
		{"/api/general-report/export?format=csv&delimiter=semicolon&decimal=comma", identity},
		{"/api/general-report/export?format=csv&bom=true", identity},
		{"/api/general-report/export?format=csv&delimiter=tab", identity},
		{"/api/general-report/export?format=json", identity},
		{"/api/general-report/export?format=csv&columns=contract_id,task", identity},
		{"/api/general-report/export?format=csv&contract_id=1", identity},
		{"/api/general-report/export?format=csv&$filter=task_status%20eq%20'Pendiente'", identity},
		{"/api/general-report/export?format=csv&$orderby=task", identity},
		{"/api/general-report/export?format=csv", []string{"Accept-Encoding", "gzip"}},
		{"/api/general-report/export?format=csv", []string{"Accept-Encoding", "zstd"}},
		{"/api/general-report?page=1&format=csv", identity},
		{"/api/general-report?page=2&format=csv&result_per_page=2", identity},
		{"/api/contracts/export?format=csv", identity},
		{"/odata/GeneralReport", identity},
		{"/odata/GeneralReport?$top=3", identity},
		{"/odata/GeneralReport", []string{"Accept-Encoding", "identity", "Prefer", "odata.maxpagesize=2"}},
		{"/odata/GeneralReport", []string{"Accept-Encoding", "identity", "Accept", "application/json;IEEE754Compatible=true"}},
		{"/odata/GeneralReport/$count", identity},
	} {
		r := ts.Get(t, tt.door, tt.header...)
		tag := r.Header.Get("ETag")
		if r.Status != http.StatusOK || tag == "" {
			t.Errorf("%s %q: status %d, ETag %q; want 200 and a tag", tt.door, tt.header, r.Status, tag)
			continue
		}
		key := tt.door + " " + strings.Join(tt.header, " ")
		if other, ok := seen[tag]; ok {
			t.Errorf("%s and %s share the tag %s", key, other, tag)
		}
		seen[tag] = key
		coded := slices.Contains(tt.header, "gzip") || slices.Contains(tt.header, "zstd")
		if weak := strings.HasPrefix(tag, "W/"); weak != coded {
			t.Errorf("%s: ETag %s weak = %v, want %v", key, tag, weak, coded)
		}
	}
	// $select and columns= choose the same columns: the same query, the
	// same bytes, the same tag.
	a := ts.Get(t, "/api/general-report/export?format=csv&columns=contract_id,task", identity...).Header.Get("ETag")
	b := ts.Get(t, "/api/general-report/export?format=csv&$select=contract_id,task", identity...).Header.Get("ETag")
	if a != b {
		t.Errorf("columns and $select of the same columns: tags %s, %s", a, b)
	}
}

// TestETagFollowsData checks that one changed row gives the datasets that
// read it a new tag and a 200, that the others keep theirs, and that a
// change not yet committed, or rolled back, changes nothing.
func TestETagFollowsData(t *testing.T) {
	t.Parallel()
	pool := pgtest.Fixture(t)
	ts := newServer(t, pool)
	ctx := context.Background()
	doors := map[string]bool{ // whether a task's status is read
		"/api/general-report/export?format=csv": true,
		"/api/tasks/export?format=csv":          true,
		"/api/contracts/export?format=csv":      true, // its task counts
		"/odata/Tasks":                          true,
		"/odata/Contracts?$expand=Tasks":        true,
		"/odata/Tasks/$count":                   true, // a count changes with the table, not the rows
		"/users?format=csv":                     false,
		"/api/clients/export?format=csv":        false,
		"/api/services/export?format=csv":       false,
		"/odata/Clients":                        false,
		"/odata/Clients?$expand=Contracts":      true, // the related rows' task counts
	}
	tags := map[string]string{}
	bodies := map[string]string{}
	for door := range doors {
		r := ts.Get(t, door, identity...)
		if r.Status != http.StatusOK || r.Header.Get("ETag") == "" {
			t.Fatalf("%s: status %d, ETag %q", door, r.Status, r.Header.Get("ETag"))
		}
		tags[door], bodies[door] = r.Header.Get("ETag"), string(r.Body)
	}
	check := func(t *testing.T, changed func(door string) bool) {
		t.Helper()
		for door, was := range tags {
			r := ts.Get(t, door, append(identity, "If-None-Match", was)...)
			switch {
			case changed(door) && (r.Status != http.StatusOK || r.Header.Get("ETag") == was || r.Header.Get("ETag") == ""):
				t.Errorf("%s: status %d, ETag %q; want 200 and a tag other than %s", door, r.Status, r.Header.Get("ETag"), was)
			case !changed(door) && (r.Status != http.StatusNotModified || r.Header.Get("ETag") != was):
				t.Errorf("%s: status %d, ETag %q; want 304, %s", door, r.Status, r.Header.Get("ETag"), was)
			}
		}
	}
	t.Run("Uncommitted", func(t *testing.T) {
		tx, err := pool.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer tx.Rollback(ctx)
		if _, err := tx.Exec(ctx, "UPDATE tasks SET status = 'Terminada' WHERE id = 4"); err != nil {
			t.Fatal(err)
		}
		check(t, func(string) bool { return false })
		if err := tx.Rollback(ctx); err != nil {
			t.Fatal(err)
		}
		check(t, func(string) bool { return false })
	})
	t.Run("Committed", func(t *testing.T) {
		if _, err := pool.Exec(ctx, "UPDATE tasks SET status = 'Terminada' WHERE id = 4"); err != nil {
			t.Fatal(err)
		}
		check(t, func(door string) bool { return doors[door] })
		if r := ts.Get(t, "/api/tasks/export?format=csv", identity...); !strings.Contains(string(r.Body), "Terminada") {
			t.Errorf("the tasks' export after the change lacks it:\n%s", r.Body)
		}
	})
	// A block changes what any dataset may show of a person: no client
	// may keep a copy that still holds their values for a 304.
	t.Run("Blocked", func(t *testing.T) {
		for door := range doors {
			tags[door] = ts.Get(t, door, identity...).Header.Get("ETag")
		}
		if _, err := pool.Exec(ctx, "INSERT INTO subject_blocks (rut_key, reason, blocked_by) VALUES ('1', 'test', 'test')"); err != nil {
			t.Fatal(err)
		}
		check(t, func(string) bool { return true })
	})
}

// TestETagBadIfNoneMatch checks that an If-None-Match that is not "*" or
// a list of entity tags is a 400 naming the header.
func TestETagBadIfNoneMatch(t *testing.T) {
	t.Parallel()
	ts := newServer(t, pgtest.Fixture(t))
	for _, held := range []string{"abc", `"abc`, `"a" "b"`, `"a", *`} {
		r := ts.Get(t, "/api/general-report/export?format=csv", "If-None-Match", held)
		r.WantError(t, http.StatusBadRequest, "If-None-Match must be")
	}
}

// TestETagCurl runs docs/api-guide.md's curl recipe, which keeps the tag
// beside the file with --etag-save and sends it with --etag-compare: the
// first run downloads, a run over unchanged data gets a 304 and leaves
// the file, a run after one change downloads it again.
func TestETagCurl(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("curl"); err != nil {
		testenv.Missing(t, "the test runs curl: %v", err)
	}
	// The guide's recipe, its host this server's.
	const recipe = `code=$(curl --fail --compressed -sS -u "token:$TOKEN" \
  --etag-compare report.etag --etag-save report.etag.tmp \
  -o report.csv.tmp -w '%{http_code}' \
  "$BASE/api/general-report/export?format=csv&columns=contract_id,code_contract,task") \
  && if [ "$code" = 200 ]; then mv report.csv.tmp report.csv && mv report.etag.tmp report.etag; fi; echo "$code"`
	guide, err := os.ReadFile("../../docs/api-guide.md")
	if err != nil {
		t.Fatal(err)
	}
	inGuide := strings.ReplaceAll(strings.TrimSuffix(recipe, `; echo "$code"`), `"$BASE`, `'https://informe.example.cl`)
	inGuide = strings.Replace(inGuide, `task")`, `task')`, 1)
	if !strings.Contains(string(guide), inGuide) {
		t.Fatalf("docs/api-guide.md lacks the recipe:\n%s", inGuide)
	}
	pool := pgtest.Fixture(t)
	ts := newServer(t, pool)
	dir := t.TempDir()
	run := func(t *testing.T) (status string, file string) {
		t.Helper()
		cmd := exec.Command("sh", "-c", recipe)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "TOKEN="+ts.Token, "BASE="+ts.URL)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("the recipe: %v: %s", err, out)
		}
		b, err := os.ReadFile(filepath.Join(dir, "report.csv"))
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(string(out)), string(b)
	}
	status, first := run(t)
	if status != "200" || !strings.HasPrefix(first, "contract_id,code_contract,task") {
		t.Fatalf("first run: %s, file %.100q", status, first)
	}
	if status, file := run(t); status != "304" || file != first {
		t.Errorf("unchanged: %s, the file changed: %v; want 304 and the same file", status, file != first)
	}
	if _, err := pool.Exec(context.Background(), "UPDATE tasks SET name = 'Cambiada' WHERE id = 1"); err != nil {
		t.Fatal(err)
	}
	if status, file := run(t); status != "200" || !strings.Contains(file, "Cambiada") {
		t.Errorf("after a change: %s, the change in the file: %v; want 200, true", status, strings.Contains(file, "Cambiada"))
	}
	if status, _ := run(t); status != "304" {
		t.Errorf("unchanged again: %s; want 304", status)
	}
}

// TestETagAnyParts checks that an export read through one connection and
// one read in parts send the same tag, strong for the text formats, whose
// bytes are the same, weak for those whose parts write blocks of their
// own (XLSX, Parquet, Arrow) on a server that reads in parts; and that
// either server's tag gets a 304 from the other: instances of one build
// behind a balancer answer each other's tags.
func TestETagAnyParts(t *testing.T) {
	t.Parallel()
	pool := pgtest.Fixture(t)
	one, parts := partsServer(t, pool, 1), partsServer(t, pool, 4)
	for _, tt := range []struct {
		format string
		blocks bool
	}{{"csv", false}, {"json", false}, {"ndjson", false}, {"xlsx", true}, {"parquet", true}, {"arrow", true}} {
		t.Run(tt.format, func(t *testing.T) {
			target := "/api/general-report/export?format=" + tt.format
			a, b := one.Get(t, target, identity...), parts.Get(t, target, identity...)
			if a.Status != http.StatusOK || b.Status != http.StatusOK {
				t.Fatalf("statuses %d, %d", a.Status, b.Status)
			}
			if same := bytes.Equal(a.Body, b.Body); same == tt.blocks {
				t.Errorf("the same bytes through one connection and in parts: %v, want %v", same, !tt.blocks)
			}
			ta, tb := a.Header.Get("ETag"), b.Header.Get("ETag")
			want := ta
			if tt.blocks {
				want = "W/" + ta
			}
			if !strings.HasPrefix(ta, `"`) || tb != want {
				t.Errorf("ETag %q through one connection, %q in parts; want %q in parts", ta, tb, want)
			}
			if r := parts.Get(t, target, append(identity, "If-None-Match", ta)...); r.Status != http.StatusNotModified {
				t.Errorf("one server's tag at the other: status %d, want 304", r.Status)
			}
			if r := one.Get(t, target, append(identity, "If-None-Match", tb)...); r.Status != http.StatusNotModified {
				t.Errorf("the other server's tag at the one: status %d, want 304", r.Status)
			}
		})
	}
	// A filtered export is never read in parts: its tag stays strong.
	if tag := parts.Get(t, "/api/general-report/export?format=xlsx&contract_id=1", identity...).Header.Get("ETag"); !strings.HasPrefix(tag, `"`) {
		t.Errorf("a filtered XLSX export on the server that reads in parts: ETag %q, want a strong one", tag)
	}
}
