package api_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/informe/informe/internal/api"
	"github.com/informe/informe/internal/pgserver/pgtest"
	"github.com/informe/informe/internal/road"
	"github.com/informe/informe/internal/spool"
	"github.com/informe/informe/internal/testenv"
)

// The tests of failures told as they are: a response informe cuts is
// logged at ERROR as aborted, with the reason it was cut, and counted with
// that reason; 499 (client gone) is only for a client that closed or
// reset its connection; a database lost before the first byte is a 503
// with Retry-After in every format; a full spool disk is a bound, never a
// cut.

// wantCut checks how informe recorded request id, whose response it cut
// mid-stream for reason, a fault on the server's side: a "response cut"
// line at ERROR with the reason, the request logged at ERROR with the
// status it had sent (200), outcome cut, aborted and the reason, no
// "client gone", and the cut counted with its reason.
func (ts *opsServer) wantCut(tb testing.TB, id, reason string) {
	tb.Helper()
	if !waitFor(10*time.Second, func() bool { return logLine(tb, ts.Logs.String(), "request", id) != nil }) {
		tb.Fatalf("request %s was never logged:\n%s", id, ts.Logs.String())
	}
	logs := ts.Logs.String()
	cut := logLine(tb, logs, "response cut", id)
	if cut == nil {
		tb.Fatalf("no cut logged for request %s:\n%s", id, logs)
	}
	if cut["level"] != "ERROR" || cut["reason"] != reason {
		tb.Errorf("cut logged at %v with reason %v; want ERROR, %s", cut["level"], cut["reason"], reason)
	}
	line := requestLine(tb, logs, id)
	if line["level"] != "ERROR" || line["status"] != float64(200) || line["outcome"] != "cut" || line["aborted"] != true || line["reason"] != reason {
		tb.Errorf("request logged at %v with status %v, outcome %v, aborted %v, reason %v; want ERROR, 200, cut, true, %s",
			line["level"], line["status"], line["outcome"], line["aborted"], line["reason"], reason)
	}
	if gone := logLine(tb, logs, "client gone", id); gone != nil {
		tb.Errorf("informe's cut logged as the client's: %v", gone)
	}
	series := fmt.Sprintf(`informe_http_responses_cut_total{reason=%q}`, reason)
	if got := ts.metric(tb, series); got != 1 {
		tb.Errorf("%s = %v, want 1", series, got)
	}
	if got := ts.metric(tb, `informe_http_responses_cut_total{reason="client_gone"}`); got != 0 {
		tb.Errorf(`informe_http_responses_cut_total{reason="client_gone"} = %v, want 0`, got)
	}
}

// terminate ends the backend pid (pg_terminate_backend).
func terminate(tb testing.TB, mon *pgx.Conn, pid int) {
	tb.Helper()
	var ok bool
	if err := mon.QueryRow(context.Background(), "SELECT pg_terminate_backend($1)", pid).Scan(&ok); err != nil || !ok {
		tb.Fatalf("pg_terminate_backend(%d) = %v, %v", pid, ok, err)
	}
}

// TestCutDatabaseGoneSlowClient checks that a backend terminated
// mid-export, while the client is far behind the database (the spool
// holds what it has not read), is told as the database's failure: a cut
// with reason database_unavailable at ERROR, not a client gone (499). The
// client, reading on, gets a body that ends without its chunked end.
func TestCutDatabaseGoneSlowClient(t *testing.T) {
	t.Parallel()
	pool, mon := gatedDB(t)
	ts := newOpsServer(t, pool, func(s *api.Server) {
		// The rows before the gate wait in memory for the client.
		s.Delivery.Spool = spool.Limits{Memory: 64 << 20}
	})
	const id = "database-gone"
	open := closeGate(t, mon, "rows")
	resp := ts.rawGet(t, "/api/general-report/export?format=ndjson", "X-Request-Id", id)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status = %d", resp.StatusCode)
	}
	// The client reads nothing while the database side reaches the gate.
	terminate(t, mon, waitingAtGate(t, mon))
	open()
	ts.wantCut(t, id, "database_unavailable")
	if logs := ts.Logs.String(); !strings.Contains(logs, "57P01") {
		t.Errorf("the cause is not logged:\n%s", logs)
	}
	body, err := io.ReadAll(resp.Body)
	if err == nil {
		t.Fatalf("the body read to its chunked end after %d bytes; want it cut", len(body))
	}
}

// TestCutTimeouts checks that an export cut by informe's timeouts, its
// query waiting at the gate after the first rows were sent, is told as
// such: the statement timeout (PostgreSQL cancels the query, 57014) as
// statement_timeout, the request timeout (informe cancels it) as
// request_timeout.
func TestCutTimeouts(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name   string
		limits api.Limits
		reason string
	}{
		{"Statement", api.Limits{Limits: road.Limits{StatementTimeout: time.Second}}, "statement_timeout"},
		{"Request", api.Limits{Limits: road.Limits{RequestTimeout: time.Second}}, "request_timeout"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			pool, mon := gatedDB(t)
			ts := newOpsServer(t, pool, func(s *api.Server) { s.Limits = tt.limits })
			closeGate(t, mon, "rows")
			r := ts.start(t, "/api/general-report/export?format=csv")
			r.wait(t)
			if r.status != http.StatusOK {
				t.Fatalf("status = %d; body %.300s", r.status, r.body.Bytes())
			}
			if !errors.Is(r.err, io.ErrUnexpectedEOF) {
				t.Errorf("the body ended with %v after %d bytes, want an unexpected EOF", r.err, r.body.Len())
			}
			ts.wantCut(t, r.header.Get("X-Request-Id"), tt.reason)
		})
	}
}

// TestClientGoneMidExport checks that a client that closes or resets its
// connection mid-export is the one case logged as 499: "client gone" at
// INFO, counted as client_gone, no "response cut", nothing at ERROR.
func TestClientGoneMidExport(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name  string
		reset bool // RST instead of FIN
	}{{"Closed", false}, {"Reset", true}} {
		t.Run(tt.name, func(t *testing.T) {
			pool, mon := gatedDB(t)
			ts := newOpsServer(t, pool, func(s *api.Server) {
				// The rows before the gate wait in memory for the client.
				s.Delivery.Spool = spool.Limits{Memory: 64 << 20}
			})
			id := "gone-" + strings.ToLower(tt.name)
			closeGate(t, mon, "rows")
			conn := dialSmall(t, ts.URL)
			resp := ts.rawGetOn(t, conn, bufio.NewReader(conn), "/api/general-report/export?format=csv", "X-Request-Id", id)
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("status = %d", resp.StatusCode)
			}
			waitingAtGate(t, mon)
			if _, err := io.ReadFull(resp.Body, make([]byte, 64<<10)); err != nil {
				t.Fatalf("reading the export's start: %v", err)
			}
			if tt.reset {
				if err := conn.(*net.TCPConn).SetLinger(0); err != nil {
					t.Fatal(err)
				}
			}
			conn.Close()
			if !waitFor(10*time.Second, func() bool { return logLine(t, ts.Logs.String(), "request", id) != nil }) {
				t.Fatalf("the request was never logged:\n%s", ts.Logs.String())
			}
			logs := ts.Logs.String()
			line := requestLine(t, logs, id)
			if line["status"] != float64(499) || line["aborted"] != nil {
				t.Errorf("request logged with status %v, aborted %v; want 499, not aborted", line["status"], line["aborted"])
			}
			if gone := logLine(t, logs, "client gone", id); gone == nil || gone["level"] != "INFO" {
				t.Errorf(`"client gone" logged as %v; want it at INFO`, gone)
			}
			if cut := logLine(t, logs, "response cut", id); cut != nil {
				t.Errorf("the client's going logged as informe's cut: %v", cut)
			}
			for _, l := range strings.Split(logs, "\n") {
				if strings.Contains(l, `"level":"ERROR"`) {
					t.Errorf("logged at ERROR: %s", l)
				}
			}
			if got := ts.metric(t, `informe_http_responses_cut_total{reason="client_gone"}`); got != 1 {
				t.Errorf(`informe_http_responses_cut_total{reason="client_gone"} = %v, want 1`, got)
			}
		})
	}
}

// TestDatabaseGoneBeforeFirstByte checks that a backend terminated while
// an export waits before its first row is a 503 with Retry-After and a
// JSON message in every format, XLSX included, carrying none of the
// headers of the body it did not send.
func TestDatabaseGoneBeforeFirstByte(t *testing.T) {
	t.Parallel()
	pool, mon := gatedDB(t)
	ts := newOpsServer(t, pool, nil)
	for _, format := range formats {
		t.Run(format, func(t *testing.T) {
			open := closeGateAt(t, mon, "rows", 1)
			r := ts.start(t, "/api/general-report/export?format="+format)
			terminate(t, mon, waitingAtGate(t, mon))
			open()
			r.wait(t)
			if r.err != nil {
				t.Fatalf("reading the response: %v", r.err)
			}
			resp := response{Status: r.status, Header: r.header, Body: r.body.Bytes()}
			resp.WantError(t, http.StatusServiceUnavailable, "Service Unavailable")
			if got, want := r.header.Get("Retry-After"), "5"; got != want {
				t.Errorf("Retry-After = %q, want %q", got, want)
			}
			for _, h := range []string{"Content-Disposition", "X-Total-Count", "Content-Encoding"} {
				if v := r.header.Get(h); v != "" {
					t.Errorf("error carries %s: %q", h, v)
				}
			}
			id := r.header.Get("X-Request-Id")
			if !waitFor(10*time.Second, func() bool { return logLine(t, ts.Logs.String(), "request", id) != nil }) {
				t.Fatal("the request was never logged")
			}
			if got := requestLine(t, ts.Logs.String(), id)["status"]; got != float64(503) {
				t.Errorf("request logged with status %v, want 503", got)
			}
		})
	}
}

// TestSpoolDiskFull checks that a full spool disk is a bound: with the
// spool's files on a full filesystem, several readers of a big export that
// read nothing until their spools have tried the disk each get their whole
// body; the database side waited for them instead, and each response's
// disk failure is logged at WARN. It needs to mount a tmpfs, as root.
//
// The disk is full before the requests (a file fills the tmpfs), and the
// readers start reading only once every spool has opened its temporary
// file, which it does to write to it: so every spool meets the full disk,
// however fast or slow the machine.
func TestSpoolDiskFull(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", dir).CombinedOutput(); err != nil {
		testenv.Missing(t, "the test needs a small filesystem, which mounting a tmpfs (as root) gives: %v: %s", err, bytes.TrimSpace(out))
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", "-l", dir).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v: %s", dir, err, out)
		}
	})
	fillDisk(t, filepath.Join(dir, "filler"))

	pool := pgtest.New(t)
	variedTasks(t, pool, 1000, 1000) // about 1.3 MB of CSV
	ts := newOpsServer(t, pool, func(s *api.Server) {
		// Never cut: the readers read nothing for as long as it takes.
		s.Delivery.Spool = spool.Limits{Memory: 64 << 10, Disk: 64 << 20, Dir: dir, NoProgress: -1}
	})
	const target = "/api/general-report/export?format=csv"
	want := ts.Get(t, target, "Accept-Encoding", "identity")
	if want.Status != http.StatusOK {
		t.Fatalf("status = %d; body %.300s", want.Status, want.Body)
	}
	// Far more than the spool's memory and the sockets' buffers hold: a
	// reader that reads nothing makes its spool write to its file.
	if len(want.Body) < 1<<20 {
		t.Fatalf("the export has %d bytes, want at least 1 MiB", len(want.Body))
	}

	const readers = 3
	gate := make(chan struct{})
	resps := make([]*http.Response, readers)
	for i := range resps {
		// A real network's segment size: over loopback's 64 KiB ones,
		// Linux sizes the server's send buffer to hold the whole body.
		conn := dialTCP(t, ts.URL, smallRcvBuf, 1400)
		g := &gatedReader{r: conn, gate: gate}
		resps[i] = ts.rawGetOn(t, conn, bufio.NewReader(g), target, "X-Request-Id", fmt.Sprintf("disk-full-%d", i))
		g.closed = true // the header is in; the body waits for the gate
	}
	var open sync.Once
	// Runs before the bodies' own cleanups, which read them to the end.
	t.Cleanup(func() { open.Do(func() { close(gate) }) })
	if !waitFor(2*time.Minute, func() bool { return len(spoolFiles(t, dir)) == readers }) {
		t.Fatalf("spool files open on the full disk: %q, want %d", spoolFiles(t, dir), readers)
	}
	// The disk's failure is logged when it happens, while the responses
	// wait for readers that read nothing, not when they end.
	const diskFailed = "the spool's disk failed; the response waits for its client instead"
	for i := range readers {
		id := fmt.Sprintf("disk-full-%d", i)
		if !waitFor(2*time.Minute, func() bool { return logLine(t, ts.Logs.String(), diskFailed, id) != nil }) {
			t.Fatalf("request %s: its spool's disk failure was not logged while it waited:\n%s", id, ts.Logs.String())
		}
		if line := logLine(t, ts.Logs.String(), "request", id); line != nil {
			t.Fatalf("request %s ended before its readers read: %v", id, line)
		}
	}
	open.Do(func() { close(gate) })

	t.Run("Readers", func(t *testing.T) {
		for i, resp := range resps {
			t.Run(fmt.Sprint(i), func(t *testing.T) {
				t.Parallel()
				ts.readWhole(t, resp, want.Body, fmt.Sprintf("disk-full-%d", i))
			})
		}
	})
	logs := ts.Logs.String()
	for i := range readers {
		id := fmt.Sprintf("disk-full-%d", i)
		line := logLine(t, logs, diskFailed, id)
		if line == nil || line["level"] != "WARN" {
			t.Errorf("request %s: disk failure logged as %v, want a WARN line:\n%s", id, line, logs)
		}
	}
	if strings.Contains(logs, `"msg":"response cut"`) || strings.Contains(logs, `"level":"ERROR"`) {
		t.Errorf("a response was cut, or an error logged:\n%s", logs)
	}
	if got := ts.metric(t, "informe_spool_producer_wait_seconds_total"); got <= 0 {
		t.Errorf("informe_spool_producer_wait_seconds_total = %v, want the database side to have waited", got)
	}
}

// fillDisk writes the file name until its filesystem is full.
func fillDisk(tb testing.TB, name string) {
	tb.Helper()
	f, err := os.Create(name)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	buf := make([]byte, 64<<10)
	for {
		if _, err := f.Write(buf); errors.Is(err, syscall.ENOSPC) {
			return
		} else if err != nil {
			tb.Fatal(err)
		}
	}
}

// spoolFiles returns the spool files in dir that this process holds open
// (a spool unlinks its file at once and keeps the descriptor).
func spoolFiles(tb testing.TB, dir string) []string {
	tb.Helper()
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		testenv.Missing(tb, "the test finds open spool files in /proc/self/fd: %v", err)
	}
	var files []string
	for _, fd := range fds {
		target, err := os.Readlink(filepath.Join("/proc/self/fd", fd.Name()))
		if err == nil && strings.HasPrefix(target, filepath.Join(dir, "informe-spool-")) {
			files = append(files, target)
		}
	}
	return files
}

// gatedReader reads r, and once closed is set, reads nothing more until
// gate is closed.
type gatedReader struct {
	r      io.Reader
	gate   chan struct{}
	closed bool
}

func (g *gatedReader) Read(p []byte) (int, error) {
	if g.closed {
		<-g.gate
	}
	return g.r.Read(p)
}
