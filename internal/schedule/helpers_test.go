package schedule

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/pem"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/informe/informe/auth"
	"github.com/informe/informe/internal/api"
	"github.com/informe/informe/internal/dataset"
	"github.com/informe/informe/internal/pgserver/pgtest"
	"github.com/informe/informe/internal/postgres"
	"github.com/informe/informe/internal/source"
	"github.com/informe/informe/internal/testenv"
	"github.com/informe/informe/metrics"
	"github.com/informe/informe/report"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// clock is a clock the test sets: the time is what it says.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = t
}

// santiago is a local time in America/Santiago.
func santiago(y int, mo time.Month, d, h, mi int) time.Time {
	loc, _ := Zone("")
	return time.Date(y, mo, d, h, mi, 30, 0, loc)
}

// env is a seeded database with a token, the API served over it, and the
// log and metrics the runners of the test share.
type env struct {
	pool    *pgxpool.Pool
	api     string // the API's URL
	token   string // the secret of the token "finanzas"
	logs    *testenv.Buffer
	metrics *metrics.Metrics
	store   *Store
}

func newEnv(t *testing.T) *env {
	t.Helper()
	pool := pgtest.SmallSeeded(t)
	tokens := auth.NewStore(pool)
	secret, err := tokens.Create(context.Background(), "finanzas", []dataset.Scope{dataset.ReportRead}, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	srv := &api.Server{Data: postgres.NewStore(pool), Report: source.Report(report.Maintained), Tokens: tokens, Metrics: metrics.New(pool),
		Logger: slog.New(slog.DiscardHandler)}
	hs := httptest.NewUnstartedServer(srv.Handler())
	hs.Config.ConnContext = api.ConnContext
	hs.Start()
	t.Cleanup(hs.Close)
	return &env{pool: pool, api: hs.URL, token: secret, logs: &testenv.Buffer{}, metrics: metrics.New(nil), store: NewStore(pool, report.Maintained)}
}

// runner returns a runner called name over e's database, on clk.
func (e *env) runner(name string, clk *clock) *Runner {
	return NewRunner(e.pool, Config{Instance: name, Now: clk.Now, Observer: e.metrics,
		Logger: slog.New(slog.NewJSONHandler(e.logs, nil)), Counting: report.Maintained})
}

// export returns the API's export of the general report in format with
// the query q: what a schedule of the same query must deliver.
func (e *env) export(t *testing.T, format string, q url.Values) []byte {
	t.Helper()
	v := url.Values{"format": {format}}
	for k, vs := range q {
		v[k] = vs
	}
	req, err := http.NewRequest(http.MethodGet, e.api+"/api/general-report/export?"+v.Encode(), nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+e.token)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("export: %d %v: %s", res.StatusCode, err, b)
	}
	return b
}

// runs returns the attempts recorded, oldest first, as "attempt outcome".
func (e *env) runs(t *testing.T, name string) []Run {
	t.Helper()
	list, err := e.store.Runs(context.Background(), name, 1000)
	if err != nil {
		t.Fatal(err)
	}
	for i, j := 0, len(list)-1; i < j; i, j = i+1, j-1 {
		list[i], list[j] = list[j], list[i]
	}
	return list
}

// scrape returns e's metrics as text.
func (e *env) scrape(t *testing.T) string {
	t.Helper()
	rec := httptest.NewRecorder()
	e.metrics.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	return rec.Body.String()
}

// history returns every column of every recorded run and schedule as
// text, for a look for secrets.
func (e *env) history(t *testing.T) string {
	t.Helper()
	var s string
	err := e.pool.QueryRow(context.Background(), "SELECT coalesce((SELECT string_agg(r::text, E'\\n') FROM schedule_runs r), '') || coalesce((SELECT string_agg(s::text, E'\\n') FROM schedules s), '')").Scan(&s)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// onWrite passes writes to w, calling hook before the first.
type onWrite struct {
	w    io.Writer
	once sync.Once
	hook func()
}

func (o *onWrite) Write(p []byte) (int, error) {
	o.once.Do(o.hook)
	return o.w.Write(p)
}

// receiver is an HTTPS server that keeps the bodies POSTed to it whose
// signature verifies, by path.
type receiver struct {
	url    string // https://127.0.0.1:port
	caFile string
	mu     sync.Mutex
	got    map[string][][]byte
}

func startReceiver(t *testing.T, secret string) *receiver {
	t.Helper()
	rc := &receiver{got: map[string][][]byte{}}
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		mac := hmac.New(sha256.New, []byte(secret))
		mac.Write(body)
		if err != nil || r.Header.Get("X-Informe-Signature") != "sha256="+hex.EncodeToString(mac.Sum(nil)) {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		rc.mu.Lock()
		rc.got[r.URL.Path] = append(rc.got[r.URL.Path], body)
		rc.mu.Unlock()
		w.WriteHeader(http.StatusCreated)
	}))
	t.Cleanup(srv.Close)
	rc.url = srv.URL
	rc.caFile = filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(rc.caFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o644); err != nil {
		t.Fatal(err)
	}
	return rc
}

// bodies returns the bodies received at path.
func (rc *receiver) bodies(path string) [][]byte {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return rc.got[path]
}

// writeSecret writes s to a file of its own and returns its path.
func writeSecret(t *testing.T, s string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(p, []byte(s+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// visible returns the names in dir that do not start with a dot.
func visible(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), ".") {
			out = append(out, e.Name())
		}
	}
	return out
}

// all returns every name in dir.
func all(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		out = append(out, e.Name())
	}
	return out
}
