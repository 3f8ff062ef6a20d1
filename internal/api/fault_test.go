package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/informe/informe/internal/api"
	"github.com/informe/informe/internal/fileexport"
	"github.com/informe/informe/internal/pgfault"
	"github.com/informe/informe/internal/postgres"
	"github.com/informe/informe/internal/road"
	"github.com/informe/informe/internal/source"
	"github.com/informe/informe/internal/testenv"
	"github.com/informe/informe/report"
)

// The tests of the database failing under informe, through a real proxy
// between informe and PostgreSQL that resets connections or swallows
// them (package pgfault): a failure on the database's side is told as
// database_unavailable, a 503 with Retry-After before the first byte and a
// cut logged at ERROR after it, on every door and in every format, and
// never as a client gone, whatever errno the failure carries; a silent
// database is unreachable, not busy; and the README's nightly recipe keeps
// the old file.

// faultServer is informe over a gated database reached through a
// fault-injecting proxy.
type faultServer struct {
	*opsServer
	proxy *pgfault.Proxy
	mon   *pgx.Conn // straight to the database, past the proxy
}

// minRowFields is the fewest fields of a data row that pgfault.ResetAtRow
// resets at here: more than a token's lookup (4) and a transaction's
// settings (3), so that those pass and the door's own rows are reset.
const minRowFields = 5

// newFaultServer serves the API over a pool that reaches a fresh gated
// database (see gatedDB) through a pgfault proxy, with configure applied
// to the server. The database also holds users, for /users.
func newFaultServer(t *testing.T, configure func(*api.Server)) *faultServer {
	t.Helper()
	direct, mon := gatedDB(t)
	if _, err := mon.Exec(context.Background(), `INSERT INTO users (id, name, email, username, rut, status, created_at)
		SELECT i, 'Usuaria ' || i, 'u' || i || '@informe.cl', 'u' || i || '@informe.cl', '11111111-1', 'A', '2024-01-01'
		FROM generate_series(1, 50) i`); err != nil {
		t.Fatal(err)
	}
	cfg := direct.Config().Copy()
	proxy, err := pgfault.Start(net.JoinHostPort(cfg.ConnConfig.Host, strconv.Itoa(int(cfg.ConnConfig.Port))))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { proxy.Close() })
	host, port, _ := net.SplitHostPort(proxy.Addr())
	p, _ := strconv.Atoi(port)
	cfg.ConnConfig.Host, cfg.ConnConfig.Port = host, uint16(p)
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	ts := newOpsServer(t, pool, configure)
	return &faultServer{opsServer: ts, proxy: proxy, mon: mon}
}

// faultDoors are the requests that read rows, one per door and format.
var faultDoors = []string{
	"/api/general-report?result_per_page=100",
	"/api/general-report/export?format=csv",
	"/api/general-report/export?format=csv&delimiter=tab",
	"/api/general-report/export?format=ndjson",
	"/api/general-report/export?format=json",
	"/api/general-report/export?format=xlsx",
	"/api/general-report/export?format=parquet",
	"/api/general-report/export?format=arrow",
	"/users",
	"/odata/GeneralReport?$top=50",
	"/odata/Contracts?$expand=Tasks",
	"/api/contracts/export?format=csv",
}

// faultIDs numbers the requests of the fault tests.
var faultIDs atomic.Int64

// faultID returns a new request id starting with prefix, to find the
// request's log lines by.
func faultID(prefix string) string { return fmt.Sprintf("%s-%d", prefix, faultIDs.Add(1)) }

// wantUnavailable checks that r, whose request id is id, is the 503 of a
// database that failed before the first byte: Retry-After, a JSON message
// saying so, no headers of the body it did not send; logged with status
// 503 and a "request failed" line at ERROR, never as a client gone; and
// counted as refused for database_unavailable, never as pool_busy.
func (ts *faultServer) wantUnavailable(t *testing.T, r response, id, msg string) {
	t.Helper()
	if r.Status != http.StatusServiceUnavailable {
		t.Fatalf("status = %d, want 503; body %.300s", r.Status, r.Body)
	}
	if got := errorMessage(t, r); !strings.Contains(got, msg) {
		t.Errorf("message %q, want it to hold %q", got, msg)
	}
	if r.Header.Get("Retry-After") == "" {
		t.Error("no Retry-After")
	}
	for _, h := range []string{"Content-Disposition", "X-Total-Count", "Content-Encoding"} {
		if v := r.Header.Get(h); v != "" {
			t.Errorf("the error carries %s: %q", h, v)
		}
	}
	line := ts.logged(t, id)
	if line["status"] != float64(503) || line["level"] != "INFO" {
		t.Errorf("request logged with status %v at %v, want 503 at INFO (the failure has its own line at ERROR)", line["status"], line["level"])
	}
	logs := ts.Logs.String()
	if failed := logLine(t, logs, "request failed", id); failed == nil || failed["level"] != "ERROR" {
		t.Errorf(`"request failed" logged as %v, want it at ERROR`, failed)
	}
	if gone := logLine(t, logs, "client gone", id); gone != nil {
		t.Errorf("the database's failure logged as the client's: %v", gone)
	}
	t.Logf("saw: %d, Retry-After %s, %q; logged: status %v, %v", r.Status, r.Header.Get("Retry-After"),
		errorMessage(t, r), line["status"], logLine(t, logs, "request failed", id)["level"])
}

// logged waits for the request line of id, which is written before the
// response's last byte leaves, and returns it.
func (ts *faultServer) logged(t *testing.T, id string) map[string]any {
	t.Helper()
	if !waitFor(30*time.Second, func() bool { return logLine(t, ts.Logs.String(), "request", id) != nil }) {
		t.Fatalf("request %s was never logged:\n%s", id, ts.Logs.String())
	}
	return requestLine(t, ts.Logs.String(), id)
}

// errorMessage returns the message of an error body, in informe's shape or
// OData's.
func errorMessage(t *testing.T, r response) string {
	t.Helper()
	var body struct {
		Message string `json:"message"`
		Error   struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(r.Body, &body); err != nil {
		t.Fatalf("error body %.300s: %v", r.Body, err)
	}
	return body.Message + body.Error.Message
}

// wantCounted checks the refusals and cuts counted, by reason.
func (ts *faultServer) wantCounted(t *testing.T, refused map[string]float64, cut map[string]float64) {
	t.Helper()
	for _, reason := range []string{"database_unavailable", "pool_busy"} {
		series := fmt.Sprintf("informe_http_refusals_total{reason=%q}", reason)
		if got := ts.metric(t, series); got != refused[reason] {
			t.Errorf("%s = %v, want %v", series, got, refused[reason])
		}
	}
	for _, reason := range []string{"database_unavailable", "client_gone"} {
		series := fmt.Sprintf("informe_http_responses_cut_total{reason=%q}", reason)
		if got := ts.metric(t, series); got != cut[reason] {
			t.Errorf("%s = %v, want %v", series, got, cut[reason])
		}
	}
}

// TestDatabaseResetBeforeFirstByte checks every door and format against a
// database whose connections are reset as they are made, and one whose
// connections are reset at the first row of a result (after the count,
// the token's lookup and the transaction's settings): a 503 with
// Retry-After each time, never an empty 200, and the export command's
// file left as it was.
func TestDatabaseResetBeforeFirstByte(t *testing.T) {
	t.Parallel()
	for _, fault := range []pgfault.Fault{pgfault.ResetAtConnect, pgfault.ResetAtRow} {
		t.Run(strings.ReplaceAll(fault.String(), " ", "_"), func(t *testing.T) {
			t.Parallel()
			ts := newFaultServer(t, nil)
			ts.proxy.Arm(fault, minRowFields)
			for _, target := range faultDoors {
				id := faultID("reset")
				r := ts.Get(t, target, "X-Request-Id", id)
				ts.wantUnavailable(t, r, id, "the database cannot be reached")
			}
			ts.wantCounted(t, map[string]float64{"database_unavailable": float64(len(faultDoors))}, nil)
			if ts.proxy.Resets() == 0 {
				t.Error("the proxy reset no connection")
			}
			wantCommandFails(t, ts)
		})
	}
}

// wantCommandFails checks that informe export, through ts's faulty
// proxy, fails saying the database cannot be reached, and leaves the file
// it was to replace as it was.
func wantCommandFails(t *testing.T, ts *faultServer) {
	t.Helper()
	check := startCommand(t, ts)
	check()
}

// startCommand starts informe export through ts's proxy, replacing a file
// that holds a report of yesterday's, and returns what checks, once the
// export has ended, that it failed for the database and left the file.
func startCommand(t *testing.T, ts *faultServer) (check func()) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "report.csv")
	const old = "yesterday's report\n"
	if err := os.WriteFile(out, []byte(old), 0o644); err != nil {
		t.Fatal(err)
	}
	plan, err := fileexport.NewPlan(fileexport.Flags{Source: source.Report(report.Maintained), Query: url.Values{},
		Output: out, Format: "csv", Parts: 2})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := fileexport.Run(context.Background(), postgres.NewStore(ts.Pool), plan, io.Discard, io.Discard)
		done <- err
	}()
	return func() {
		t.Helper()
		var err error
		select {
		case err = <-done:
		case <-time.After(2 * time.Minute):
			t.Fatal("informe export did not end within 2 minutes")
		}
		if err == nil || !strings.Contains(err.Error(), "the database cannot be reached") {
			t.Errorf("informe export: %v, want the database unreachable", err)
		}
		if got, _ := os.ReadFile(out); string(got) != old {
			t.Errorf("the file holds %.100q, want it unchanged", got)
		}
	}
}

// TestDatabaseResetAfterFirstByte checks every format of the export, and
// the export command, against a database connection reset while the rows
// stream, after the client has received the first bytes: the body is cut
// (no chunked end, no complete file), the cut is logged at ERROR as
// database_unavailable and counted so, and nothing is told as the
// client's.
func TestDatabaseResetAfterFirstByte(t *testing.T) {
	t.Parallel()
	for _, format := range []string{"csv", "csv&delimiter=tab", "ndjson", "json", "xlsx", "parquet", "arrow"} {
		t.Run(format, func(t *testing.T) {
			t.Parallel()
			ts := newFaultServer(t, nil)
			open := closeGate(t, ts.mon, "rows")
			id := faultID("cut")
			r := ts.start(t, "/api/general-report/export?format="+format, "X-Request-Id", id)
			waitingAtGate(t, ts.mon)
			began := waitFor(30*time.Second, func() bool { return r.got.Load() > 0 })
			ts.proxy.Arm(pgfault.ResetAtRow, minRowFields)
			open()
			r.wait(t)
			if !began {
				// A format that sends nothing before its last row (none
				// today) would be a 503 here.
				t.Fatalf("no byte of the %s export came before the gate: status %d, %d bytes", format, r.status, r.body.Len())
			}
			if r.status != http.StatusOK || !errors.Is(r.err, io.ErrUnexpectedEOF) {
				t.Errorf("status %d, body ended by %v after %d bytes; want 200 cut short (unexpected EOF)", r.status, r.err, r.body.Len())
			}
			ts.wantCut(t, id, "database_unavailable")
			line := requestLine(t, ts.Logs.String(), id)
			t.Logf("saw: %d, %d bytes, then %v; logged: status %v at %v, outcome %v, reason %v", r.status, r.body.Len(), r.err,
				line["status"], line["level"], line["outcome"], line["reason"])
		})
	}
	t.Run("command", func(t *testing.T) {
		t.Parallel()
		ts := newFaultServer(t, nil)
		open := closeGate(t, ts.mon, "rows")
		check := startCommand(t, ts)
		waitingAtGate(t, ts.mon)
		ts.proxy.Arm(pgfault.ResetAtRow, minRowFields)
		open()
		check()
	})
}

// TestDatabaseSilent checks a database that stops answering, its sockets
// open and nothing forwarded: requests that wait for a connection past the
// acquire timeout are told the database cannot be reached (503, counted as
// database_unavailable), not that every connection is busy, and /readyz
// agrees.
func TestDatabaseSilent(t *testing.T) {
	t.Parallel()
	ts := newFaultServer(t, func(s *api.Server) {
		s.Limits = api.Limits{Limits: road.Limits{AcquireTimeout: time.Second}}
	})
	ts.proxy.Set(pgfault.BlackHole)
	targets := []string{faultDoors[0], faultDoors[1], faultDoors[8], faultDoors[9]}
	got := make([]response, len(targets))
	ids := make([]string, len(targets))
	done := make(chan int)
	for i, target := range targets {
		ids[i] = faultID("silent")
		go func() {
			got[i] = ts.Get(t, target, "X-Request-Id", ids[i])
			done <- i
		}()
	}
	for range targets {
		<-done
	}
	for i := range targets {
		ts.wantUnavailable(t, got[i], ids[i], "the database cannot be reached")
	}
	ts.wantCounted(t, map[string]float64{"database_unavailable": float64(len(targets))}, nil)
	if code, status := ts.readyz(t); code != http.StatusServiceUnavailable || status != "database unreachable" {
		t.Errorf("/readyz = %d %q, want 503 database unreachable", code, status)
	}
	ts.proxy.Set(pgfault.Pass)
	if r := ts.Get(t, faultDoors[0]); r.Status != http.StatusOK {
		t.Errorf("after the database answers again: status %d; body %.300s", r.Status, r.Body)
	}
}

// TestNightlyRecipeKeepsFile runs the README's nightly curl recipe while
// the database resets informe's connections, before the first byte and
// after it: curl exits non-zero (22, 18) and the old file stays; with the
// database well, the recipe replaces it with the whole export.
func TestNightlyRecipeKeepsFile(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("curl"); err != nil {
		testenv.Missing(t, "the nightly recipe needs curl: %v", err)
	}
	const old = "yesterday's report\n"
	// The README's recipe, its host this server's and its query $QUERY.
	const recipe = `curl --fail --compressed -sS -u "token:$TOKEN" -o report.csv.tmp \
  "$BASE/api/general-report/export?$QUERY" \
  && mv report.csv.tmp report.csv`
	const readmeQuery = "format=csv&columns=contract_id,code_contract,task"
	// run runs the recipe for query, and during while it runs.
	run := func(t *testing.T, ts *faultServer, query string, during func(dir string)) (exit int, file string) {
		t.Helper()
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "report.csv"), []byte(old), 0o644); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command("sh", "-c", recipe)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "TOKEN="+ts.Token, "BASE="+ts.URL, "QUERY="+query)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		if during != nil {
			during(dir)
		}
		err := cmd.Wait()
		var ee *exec.ExitError
		if err != nil && !errors.As(err, &ee) {
			t.Fatal(err)
		}
		b, _ := os.ReadFile(filepath.Join(dir, "report.csv"))
		t.Logf("curl: exit %d, %s", cmd.ProcessState.ExitCode(), bytes.TrimSpace(stderr.Bytes()))
		return cmd.ProcessState.ExitCode(), string(b)
	}
	t.Run("ResetAtConnect", func(t *testing.T) {
		t.Parallel()
		ts := newFaultServer(t, nil)
		ts.proxy.Set(pgfault.ResetAtConnect)
		if exit, file := run(t, ts, readmeQuery, nil); exit != 22 || file != old {
			t.Errorf("exit %d, report.csv %.60q; want 22 and the old file", exit, file)
		}
	})
	t.Run("ResetAfterFirstByte", func(t *testing.T) {
		t.Parallel()
		ts := newFaultServer(t, nil)
		open := closeGate(t, ts.mon, "rows")
		// Every column: the gated database's plan for the README's three
		// reads every row up to the gate before it sends the first, and
		// its rows are too narrow for the reset.
		exit, file := run(t, ts, "format=csv", func(dir string) {
			// The first bytes are in curl's file before the reset.
			waitingAtGate(t, ts.mon)
			if !waitFor(30*time.Second, func() bool {
				fi, err := os.Stat(filepath.Join(dir, "report.csv.tmp"))
				return err == nil && fi.Size() > 0
			}) {
				t.Fatal("no byte of the export reached curl before the gate")
			}
			ts.proxy.Arm(pgfault.ResetAtRow, minRowFields)
			open()
		})
		if exit != 18 || file != old {
			t.Errorf("exit %d, report.csv %.60q; want 18 and the old file", exit, file)
		}
	})
	t.Run("Pass", func(t *testing.T) {
		t.Parallel()
		ts := newFaultServer(t, nil)
		want := ts.Get(t, "/api/general-report/export?"+readmeQuery, "Accept-Encoding", "identity")
		if exit, file := run(t, ts, readmeQuery, nil); exit != 0 || file != string(want.Body) {
			t.Errorf("exit %d, report.csv of %d bytes; want 0 and the export's %d", exit, len(file), len(want.Body))
		}
	})
}
