package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/informe/informe/internal/pgserver/pgtest"
)

// lockedBuffer collects a process's output, written by one goroutine and
// read by the test.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// served is a running `informe serve`.
type served struct {
	cmd      *exec.Cmd
	log      *lockedBuffer // its stderr: the JSON log
	api, ops string        // base URLs
	http     string        // with HTTPS on, the plain-HTTP listener's base URL
	exited   chan error    // receives cmd.Wait's result
}

// startServe runs `informe serve` on loopback ports with args and waits
// until it logs that it serves.
func startServe(t *testing.T, bin, dbURL string, args ...string) *served {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"serve", "--addr", "127.0.0.1:0", "--ops-addr", "127.0.0.1:0"}, args...)...)
	cmd.Env = append(os.Environ(), "DATABASE_URL="+dbURL)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s := &served{cmd: cmd, log: &lockedBuffer{}, exited: make(chan error, 1)}
	type serving struct {
		Msg      string `json:"msg"`
		Addr     string `json:"addr"`
		OpsAddr  string `json:"ops_addr"`
		HTTPS    bool   `json:"https"`
		HTTPAddr string `json:"http_addr"`
	}
	addrs := make(chan serving, 1)
	go func() {
		lines := bufio.NewScanner(stderr)
		lines.Buffer(nil, 1<<20)
		for lines.Scan() {
			fmt.Fprintln(s.log, lines.Text())
			var l serving
			if json.Unmarshal(lines.Bytes(), &l) == nil && l.Msg == "serving" {
				addrs <- l
			}
		}
		s.exited <- cmd.Wait()
	}()
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	select {
	case a := <-addrs:
		s.api, s.ops = "http://"+a.Addr, "http://"+a.OpsAddr
		if a.HTTPS {
			s.api = "https://" + a.Addr
		}
		if a.HTTPAddr != "" {
			s.http = "http://" + a.HTTPAddr
		}
	case err := <-s.exited:
		t.Fatalf("serve exited before serving (%v):\n%s", err, s.log)
	case <-time.After(60 * time.Second):
		t.Fatalf("serve did not log that it serves within 60s:\n%s", s.log)
	}
	return s
}

// readyz returns the status code and status word of /readyz, or an error
// if the operations listener does not answer.
func (s *served) readyz() (int, string, error) {
	c := &http.Client{Timeout: 5 * time.Second}
	resp, err := c.Get(s.ops + "/readyz")
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

// TestShutdownCutsSlowClient runs `informe serve` with a shutdown delay and
// timeout, a client reading a large export slowly, and sends SIGTERM: at
// once /readyz answers 503 "shutting down" while the export still streams;
// the process exits with status 0; the slow client's body ends without its
// chunked end (cut, not complete); and the log has the cut request's line.
func TestShutdownCutsSlowClient(t *testing.T) {
	bin := build(t)
	pool := pgtest.Seeded(t)
	dbURL := pool.Config().ConnString()
	pool.Close()
	token := strings.TrimSpace(run(t, bin, dbURL, "token", "create", "--name", "shutdown"))

	s := startServe(t, bin, dbURL, "--shutdown-delay", "500ms", "--shutdown-timeout", "2s")
	if code, status, err := s.readyz(); err != nil || code != http.StatusOK || status != "ready" {
		t.Fatalf("/readyz before the signal = %d %q (%v), want 200 ready", code, status, err)
	}
	const id = "shutdown-slow-export"
	slow := startSlowClient(t, s.api, "/api/general-report/export?format=ndjson", token, id)
	if slow.resp.StatusCode != http.StatusOK {
		t.Fatalf("export: status %d", slow.resp.StatusCode)
	}
	if !waitFor(30*time.Second, func() bool { return slow.got.Load() > 0 }) {
		t.Fatal("the slow client got no byte of the body")
	}

	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	var code int
	var status string
	if !waitFor(30*time.Second, func() bool {
		var err error
		code, status, err = s.readyz()
		return err == nil && code == http.StatusServiceUnavailable
	}) {
		t.Fatalf("/readyz never answered 503 after SIGTERM (last %d %q):\n%s", code, status, s.log)
	}
	if status != "shutting down" {
		t.Errorf("/readyz after SIGTERM = %d %q, want 503 shutting down", code, status)
	}
	select {
	case <-slow.done:
		t.Errorf("the export had ended (%v) when /readyz first said shutting down, before the shutdown's delay and timeout", slow.err)
	default:
	}

	select {
	case err := <-s.exited:
		if err != nil {
			t.Fatalf("serve exited with %v after SIGTERM:\n%s", err, s.log)
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("serve still runs 30s after SIGTERM:\n%s", s.log)
	}

	// Whatever the kernel still held reaches the client; then the body
	// must end short of its chunked end.
	close(slow.fast)
	select {
	case <-slow.done:
	case <-time.After(30 * time.Second):
		t.Fatal("the slow client's body did not end within 30s of the exit")
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
