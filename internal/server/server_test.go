package server_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/informe/informe/auth"
	"github.com/informe/informe/internal/pgserver/pgtest"
	"github.com/informe/informe/internal/server"
	"github.com/informe/informe/internal/spool"
	"github.com/informe/informe/internal/testenv"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// config is the configuration `informe serve` runs with by default, on
// loopback ports, logging JSON into log.
func config(log io.Writer) server.Config {
	return server.Config{
		Addr: "127.0.0.1:0", OpsAddr: "127.0.0.1:0", LogFormat: "json", Log: log, ReportCounts: "maintained",
		ReadyWhenBusy: true, Spool: spool.Limits{Disk: 1 << 30},
		SpoolDiskTotal: 8 << 30,
		ShutdownDelay:  0, ShutdownTimeout: 30 * time.Second,
	}
}

// running is a [server.Run] in progress.
type running struct {
	log      *testenv.Buffer
	api, ops string // base URLs
	stop     context.CancelFunc
	done     chan struct{} // closed when Run has returned
	err      error         // Run's result, after done
}

// start runs cfg (its Log and Ready replaced) over pool until the test
// ends or stop is called, and waits until it serves.
func start(t *testing.T, pool *pgxpool.Pool, cfg server.Config) *running {
	t.Helper()
	r := &running{log: &testenv.Buffer{}, done: make(chan struct{})}
	cfg.Log = r.log
	addrs := make(chan [2]string, 1)
	cfg.Ready = func(apiAddr, opsAddr string) { addrs <- [2]string{apiAddr, opsAddr} }
	ctx, stop := context.WithCancel(context.Background())
	r.stop = stop
	go func() { r.err = server.Run(ctx, pool, cfg); close(r.done) }()
	t.Cleanup(func() {
		stop()
		select {
		case <-r.done:
		case <-time.After(30 * time.Second):
			t.Error("Run did not return within 30s of its context's end")
		}
	})
	select {
	case a := <-addrs:
		r.api, r.ops = "http://"+a[0], "http://"+a[1]
	case <-r.done:
		t.Fatalf("Run returned before serving (%v):\n%s", r.err, r.log)
	case <-time.After(60 * time.Second):
		t.Fatalf("Run did not serve within 60s:\n%s", r.log)
	}
	return r
}

// readyz returns the status code and status word of /readyz, or an error
// if the operations listener does not answer.
func (r *running) readyz() (int, string, error) {
	c := &http.Client{Timeout: 5 * time.Second}
	resp, err := c.Get(r.ops + "/readyz")
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	var body struct {
		Status string `json:"status"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		return resp.StatusCode, "", err
	}
	return resp.StatusCode, body.Status, nil
}

// TestRunInvalid checks that Run refuses a configuration it cannot honour
// with an error that names what is wrong, and serves nothing.
func TestRunInvalid(t *testing.T) {
	pool := pgtest.New(t)
	dir := t.TempDir()
	for _, tt := range []struct {
		name string
		set  func(*server.Config)
		want string
	}{
		{"ErrLogFormat", func(c *server.Config) { c.LogFormat = "xml" }, `log format must be json or text, got "xml"`},
		{"ErrReportCounts", func(c *server.Config) { c.ReportCounts = "guess" }, "guess"},
		{"ErrTrustedProxies", func(c *server.Config) { c.TrustedProxies = "not-a-cidr" }, "not-a-cidr"},
		{"ErrCertWithoutKey", func(c *server.Config) { c.TLS.CertFile = filepath.Join(dir, "cert.pem") }, "--tls-cert and --tls-key go together"},
		{"ErrCertAndACME", func(c *server.Config) {
			c.TLS.CertFile, c.TLS.KeyFile, c.TLS.ACMEDomains = "cert.pem", "key.pem", []string{"informe.example.cl"}
		}, "--tls-cert and --acme-domain are alternatives: give one"},
		{"ErrAddr", func(c *server.Config) { c.Addr = "127.0.0.1:-1" }, "invalid port"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var log testenv.Buffer
			cfg := config(&log)
			tt.set(&cfg)
			cfg.Ready = func(string, string) { t.Error("Run served an invalid configuration") }
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			err := server.Run(ctx, pool, cfg)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Run = %v, want an error saying %q", err, tt.want)
			}
		})
	}
}

// TestRunReadiness checks the operations listener's /readyz through a
// shutdown: 200 ready while serving, 503 "shutting down" from the moment
// the context ends, for the whole of ShutdownDelay, while the API still
// answers; then Run returns nil.
func TestRunReadiness(t *testing.T) {
	pool := pgtest.New(t)
	cfg := config(nil)
	cfg.ShutdownDelay = time.Second
	r := start(t, pool, cfg)
	if code, status, err := r.readyz(); err != nil || code != http.StatusOK || status != "ready" {
		t.Fatalf("/readyz = %d %q (%v), want 200 ready", code, status, err)
	}
	r.stop()
	var code int
	var status string
	if !waitFor(10*time.Second, func() bool {
		var err error
		code, status, err = r.readyz()
		return err == nil && code == http.StatusServiceUnavailable
	}) {
		t.Fatalf("/readyz never answered 503 after the context ended (last %d %q):\n%s", code, status, r.log)
	}
	if status != "shutting down" {
		t.Errorf("/readyz after the context ended = %d %q, want 503 shutting down", code, status)
	}
	// Within the delay, the API still takes connections.
	if resp, err := http.Get(r.api + "/openapi.json"); err != nil {
		t.Errorf("the API during the shutdown delay: %v", err)
	} else {
		resp.Body.Close()
	}
	select {
	case <-r.done:
		if r.err != nil {
			t.Errorf("Run = %v after its context ended, want nil", r.err)
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("Run still runs 30s after its context ended:\n%s", r.log)
	}
	if !strings.Contains(r.log.String(), `"msg":"shutting down","delay":1000000000`) {
		t.Errorf("the log does not say it shuts down with its delay:\n%s", r.log)
	}
}

// slowClient reads a response about 2 KB/s over a connection whose
// receive buffer is 4 KiB (set before connecting, which also stops Linux
// from growing it), so that the server cannot push the body into the
// client's kernel and be done with it.
type slowClient struct {
	resp *http.Response
	got  atomic.Int64
	fast chan struct{} // closed: read the rest at full speed
	done chan struct{}
	err  error // the read's end, after done: nil for a complete body
}

func startSlowClient(t *testing.T, base, target, token, requestID string) *slowClient {
	t.Helper()
	d := net.Dialer{Control: func(_, _ string, c syscall.RawConn) error {
		var serr error
		if err := c.Control(func(fd uintptr) {
			serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4<<10)
		}); err != nil {
			return err
		}
		return serr
	}}
	conn, err := d.Dial("tcp", strings.TrimPrefix(base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	fmt.Fprintf(conn, "GET %s HTTP/1.1\r\nHost: informe.test\r\nAuthorization: Bearer %s\r\nX-Request-Id: %s\r\n\r\n", target, token, requestID)
	req, _ := http.NewRequest(http.MethodGet, base+target, nil)
	resp, err := http.ReadResponse(bufio.NewReader(conn), req)
	if err != nil {
		t.Fatalf("reading the response header: %v", err)
	}
	c := &slowClient{resp: resp, fast: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(c.done)
		tick := time.NewTicker(250 * time.Millisecond)
		defer tick.Stop()
		buf := make([]byte, 32<<10)
		for {
			n := 512
			select {
			case <-tick.C:
			case <-c.fast:
				n = len(buf)
			}
			k, err := resp.Body.Read(buf[:n])
			c.got.Add(int64(k))
			if err == io.EOF {
				return
			}
			if err != nil {
				c.err = err
				return
			}
		}
	}()
	return c
}

// TestShutdownCutsSlowClient runs the server with a shutdown delay and
// timeout, a client reading a large export slowly, and ends Run's context
// (what SIGTERM does to `informe serve`): at once /readyz answers 503
// "shutting down" while the export still streams; Run returns nil; the
// slow client's body ends without its chunked end (cut, not complete); and
// the log has the cut request's line.
func TestShutdownCutsSlowClient(t *testing.T) {
	pool := pgtest.Seeded(t)
	token, err := auth.NewStore(pool).Create(context.Background(), "shutdown", auth.Scopes, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	cfg := config(nil)
	cfg.ShutdownDelay, cfg.ShutdownTimeout = 500*time.Millisecond, 2*time.Second
	s := start(t, pool, cfg)
	if code, status, err := s.readyz(); err != nil || code != http.StatusOK || status != "ready" {
		t.Fatalf("/readyz before the end = %d %q (%v), want 200 ready", code, status, err)
	}
	const id = "shutdown-slow-export"
	slow := startSlowClient(t, s.api, "/api/general-report/export?format=ndjson", token, id)
	if slow.resp.StatusCode != http.StatusOK {
		t.Fatalf("export: status %d", slow.resp.StatusCode)
	}
	if !waitFor(30*time.Second, func() bool { return slow.got.Load() > 0 }) {
		t.Fatal("the slow client got no byte of the body")
	}

	s.stop()
	var code int
	var status string
	if !waitFor(30*time.Second, func() bool {
		var err error
		code, status, err = s.readyz()
		return err == nil && code == http.StatusServiceUnavailable
	}) {
		t.Fatalf("/readyz never answered 503 after the context ended (last %d %q):\n%s", code, status, s.log)
	}
	if status != "shutting down" {
		t.Errorf("/readyz after the context ended = %d %q, want 503 shutting down", code, status)
	}
	select {
	case <-slow.done:
		t.Errorf("the export had ended (%v) when /readyz first said shutting down, before the shutdown's delay and timeout", slow.err)
	default:
	}

	select {
	case <-s.done:
		if s.err != nil {
			t.Fatalf("Run = %v after its context ended:\n%s", s.err, s.log)
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("Run still runs 30s after its context ended:\n%s", s.log)
	}

	// Whatever the kernel still held reaches the client; then the body
	// must end short of its chunked end.
	close(slow.fast)
	select {
	case <-slow.done:
	case <-time.After(30 * time.Second):
		t.Fatal("the slow client's body did not end within 30s of Run's return")
	}
	if slow.err == nil {
		t.Fatalf("the slow client read a complete body (%d bytes): want it cut by the shutdown", slow.got.Load())
	}
	t.Logf("the slow client's body ended with %v after %d bytes", slow.err, slow.got.Load())

	log := s.log.String()
	if !strings.Contains(log, "responses still in flight at the shutdown timeout are cut") {
		t.Errorf("the log does not say responses were cut:\n%s", log)
	}
	var line map[string]any
	for _, l := range strings.Split(log, "\n") {
		var m map[string]any
		if json.Unmarshal([]byte(l), &m) == nil && m["msg"] == "request" && m["request_id"] == id {
			line = m
		}
	}
	if line == nil {
		t.Fatalf("no log line for the cut request %s:\n%s", id, log)
	}
	t.Logf("the cut request's log line: %v", line)
	if line["level"] != "ERROR" || line["status"] != float64(200) || line["outcome"] != "cut" || line["aborted"] != true || line["reason"] != "shutdown" {
		t.Errorf("the cut request was logged at %v with status %v, outcome %v, aborted %v, reason %v; want ERROR, 200, cut, true, shutdown",
			line["level"], line["status"], line["outcome"], line["aborted"], line["reason"])
	}
}

// waitFor polls cond every 20ms until it holds or d has passed.
func waitFor(d time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(d)
	for {
		if cond() {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(20 * time.Millisecond)
	}
}
