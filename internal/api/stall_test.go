//go:build linux

package api_test

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"golang.org/x/sys/unix"

	"github.com/informe/informe/internal/api"
	"github.com/informe/informe/internal/pgserver/pgtest"
	"github.com/informe/informe/internal/spool"
)

// wanMSS is the maximum segment size of the stall tests' clients. On
// loopback it is 64 KiB, and a receiver reopens its window an MSS at a
// time: a slow reader's connection would accept nothing for long stretches,
// then 64 KiB at once. With a real network's MSS, window updates come as
// they would over one, and the server's send buffer grows only as it would
// there.
const wanMSS = 1400

// The stall rule: a client whose receive buffer holds B bytes and that
// reads R bytes a second frees room for a window update only about every
// B/R seconds, and its connection acknowledges nothing in between. With a
// stall timeout T, a steady reader is kept when B/R < T, that is when it
// reads faster than about B/T. The tests below scale the rule down, with
// small buffers on both ends and a short stall timeout, so that a reader
// several times faster or slower than B/T takes seconds, not minutes.

// stallRcvBuf is the receive buffer B the stall tests' clients ask for.
// Set before connecting, it also turns off Linux's autotuning of the
// buffer, which would otherwise grow it to megabytes.
const stallRcvBuf = 4 << 10

// stallSndBuf is the send buffer of the stall tests' server side, so that
// a body a few times larger than what the sockets take in is tens of KB,
// not the hundreds a loopback connection's autotuned buffer would take.
const stallSndBuf = 4 << 10

// smallSendBuffers wraps a listener so that every connection it accepts
// has a send buffer of stallSndBuf bytes.
type smallSendBuffers struct{ net.Listener }

func (l smallSendBuffers) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return c, err
	}
	if tc, ok := c.(*net.TCPConn); ok {
		if err := tc.SetWriteBuffer(stallSndBuf); err != nil {
			c.Close()
			return nil, err
		}
	}
	return c, nil
}

// newStallServer serves the API over pool with a stall timeout of stall,
// memory enough for every body (the database side ends at once, and the
// clients meet the spool alone) and send buffers of stallSndBuf bytes.
func newStallServer(tb testing.TB, pool *pgxpool.Pool, stall time.Duration) *opsServer {
	tb.Helper()
	return newOpsServerOn(tb, pool, func(s *api.Server) {
		s.Delivery.Spool = spool.Limits{Memory: 32 << 20, NoProgress: stall}
	}, func(l net.Listener) net.Listener { return smallSendBuffers{l} })
}

// socketBuffers returns how many bytes a connection to ts takes in while
// its client, connected as the stall tests' are, reads nothing: the
// server's send buffer and the client's receive buffer, as this kernel
// sizes them.
func socketBuffers(tb testing.TB) int64 {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	ln = smallSendBuffers{ln}
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			close(accepted)
			return
		}
		accepted <- c
	}()
	client := dialTCP(tb, "http://"+ln.Addr().String(), stallRcvBuf, wanMSS)
	defer client.Close()
	server := <-accepted
	if server == nil {
		tb.Fatal("accept failed")
	}
	defer server.Close()
	_ = server.SetWriteDeadline(time.Now().Add(time.Second))
	var n int64
	buf := make([]byte, 32<<10)
	for {
		k, err := server.Write(buf)
		n += int64(k)
		if err != nil {
			return n
		}
	}
}

// inQueue returns how many received bytes conn's kernel holds that the
// client has not read.
func inQueue(tb testing.TB, conn net.Conn) int {
	tb.Helper()
	raw, err := conn.(*net.TCPConn).SyscallConn()
	if err != nil {
		tb.Fatal(err)
	}
	var n int
	var ierr error
	if err := raw.Control(func(fd uintptr) { n, ierr = unix.IoctlGetInt(int(fd), unix.SIOCINQ) }); err != nil {
		tb.Fatal(err)
	}
	if ierr != nil {
		tb.Fatal(ierr)
	}
	return n
}

// TestStallRule checks the stall rule with real sockets whose receive
// buffer is B = stallRcvBuf and a stall timeout T of a second, so that
// the slowest reader kept is about B/T = 4 KB/s: clients reading steadily
// at 3, 10 and 50 times that rate read a body several times larger than
// the socket buffers, for at least three stall periods, and receive every
// byte; a client that stops reading is cut, logged with reason
// client_stalled at WARN and counted. It asserts outcomes, not how long
// anything took: a reader kept reads on to the end, however slow the
// machine; a stalled one is cut, however late.
func TestStallRule(t *testing.T) {
	t.Parallel()
	pool := pgtest.New(t)
	const rowSize = 1000
	variedTasks(t, pool, 2000, rowSize)
	const stall = time.Second
	ts := newStallServer(t, pool, stall)
	buffers := socketBuffers(t)
	t.Logf("a connection that is not read takes in %d bytes", buffers)
	slowest := int64(stallRcvBuf) * int64(time.Second) / int64(stall) // B/T, bytes a second
	page := func(bytes int64) string {
		return fmt.Sprintf("/api/general-report?format=ndjson&columns=task,task_detail&result_per_page=%d", bytes/rowSize+1)
	}

	for _, times := range []int64{3, 10, 50} {
		rate := times * slowest
		name := fmt.Sprintf("%dxBperT", times)
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			size := max(3*buffers, buffers+3*rate*int64(stall/time.Millisecond)/1000)
			target := page(size)
			want := ts.Get(t, target, "Accept-Encoding", "identity")
			if want.Status != http.StatusOK {
				t.Fatalf("status = %d; body %.300s", want.Status, want.Body)
			}
			id := "rule-" + strings.ToLower(name)
			conn := dialTCP(t, ts.URL, stallRcvBuf, wanMSS)
			start := time.Now()
			resp := ts.rawGetOn(t, conn, bufio.NewReader(&rateReader{r: conn, rate: rate}), target, "X-Request-Id", id)
			line := ts.readWhole(t, resp, want.Body, id)
			t.Logf("read %d bytes at %d B/s (%.1f times what the buffers take) in %v", len(want.Body), rate,
				float64(len(want.Body))/float64(buffers), time.Since(start).Round(time.Millisecond))
			if line["aborted"] != nil || line["outcome"] != nil {
				t.Errorf("logged outcome %v, aborted %v; want neither", line["outcome"], line["aborted"])
			}
			if cut := logLine(t, ts.Logs.String(), "response cut", id); cut != nil {
				t.Errorf("the response was cut: %v", cut)
			}
		})
	}

	t.Run("StopsReading", func(t *testing.T) {
		t.Parallel()
		ts.wantStalled(t, page(10*buffers+1<<20), "stops-reading")
	})
}

// wantStalled sends GET target with request id id on a connection with a
// receive buffer of stallRcvBuf bytes, reads nothing, and checks that the
// response was cut as a client's stall: a "response cut" line at WARN
// with reason client_stalled, the request logged at WARN with the status
// it had sent (200), outcome cut and that reason, and the cut counted.
func (ts *opsServer) wantStalled(t *testing.T, target, id string) {
	t.Helper()
	conn := dialTCP(t, ts.URL, stallRcvBuf, wanMSS)
	ts.rawRequest(t, conn, "HTTP/1.1", target, "X-Request-Id", id)
	var last time.Time // when the client's kernel last took bytes, for the log
	queued := 0
	var cut map[string]any
	// The bound guards against a hang; it is no assertion on the timing.
	if !waitFor(60*time.Second, func() bool {
		if n := inQueue(t, conn); n != queued {
			queued, last = n, time.Now()
		}
		cut = logLine(t, ts.Logs.String(), "response cut", id)
		return cut != nil
	}) {
		t.Fatalf("no cut logged within 60s:\n%s", ts.Logs.String())
	}
	if queued == 0 {
		t.Fatal("the client's kernel took no bytes")
	}
	if at, err := time.Parse(time.RFC3339Nano, fmt.Sprint(cut["time"])); err == nil {
		t.Logf("cut %v after the connection last accepted bytes", at.Sub(last).Round(time.Millisecond))
	}
	if cut["level"] != "WARN" || cut["reason"] != "client_stalled" {
		t.Errorf("cut logged at %v with reason %v; want WARN, client_stalled", cut["level"], cut["reason"])
	}
	if !waitFor(10*time.Second, func() bool { return logLine(t, ts.Logs.String(), "request", id) != nil }) {
		t.Fatal("the request was never logged")
	}
	line := requestLine(t, ts.Logs.String(), id)
	if line["level"] != "WARN" || line["status"] != float64(200) || line["outcome"] != "cut" || line["reason"] != "client_stalled" {
		t.Errorf("request logged at %v with status %v, outcome %v, reason %v; want WARN, 200, cut, client_stalled",
			line["level"], line["status"], line["outcome"], line["reason"])
	}
	if got := ts.metric(t, `informe_http_responses_cut_total{reason="client_stalled"}`); got != 1 {
		t.Errorf(`informe_http_responses_cut_total{reason="client_stalled"} = %v, want 1`, got)
	}
}

// TestStallMeasuredByProgress checks the same rule at the old test's
// figures, a stall timeout of 2s and a receive buffer of 2 KiB (B/T about
// 1 KB/s): clients reading steadily at 2 KB/s, 20 KB/s and 200 KB/s a body
// several times larger than the socket buffers, for at least three stall
// periods, receive every byte. With small send buffers on the server's
// side the 2 KB/s reader takes seconds.
func TestStallMeasuredByProgress(t *testing.T) {
	t.Parallel()
	pool := pgtest.New(t)
	const rowSize = 1000
	variedTasks(t, pool, 2000, rowSize)
	const stall = 2 * time.Second
	const rcvBuf = 2 << 10
	ts := newStallServer(t, pool, stall)
	buffers := socketBuffers(t)
	page := func(bytes int64) string {
		return fmt.Sprintf("/api/general-report?format=ndjson&columns=task,task_detail&result_per_page=%d", bytes/rowSize+1)
	}
	for _, tt := range []struct {
		name string
		rate int64 // bytes a second
	}{
		{"2KBps", 2_000},
		{"20KBps", 20_000},
		{"200KBps", 200_000},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			size := max(2*buffers, buffers+3*tt.rate*int64(stall/time.Second))
			target := page(size)
			want := ts.Get(t, target, "Accept-Encoding", "identity")
			if want.Status != http.StatusOK {
				t.Fatalf("status = %d; body %.300s", want.Status, want.Body)
			}
			id := "steady-" + strings.ToLower(tt.name)
			conn := dialTCP(t, ts.URL, rcvBuf, wanMSS)
			start := time.Now()
			resp := ts.rawGetOn(t, conn, bufio.NewReader(&rateReader{r: conn, rate: tt.rate}), target, "X-Request-Id", id)
			line := ts.readWhole(t, resp, want.Body, id)
			t.Logf("read %d bytes (%.1f times what the buffers take) in %v", len(want.Body), float64(len(want.Body))/float64(buffers), time.Since(start).Round(time.Millisecond))
			if line["aborted"] != nil {
				t.Errorf("logged aborted %v; want not aborted", line["aborted"])
			}
			if cut := logLine(t, ts.Logs.String(), "response cut", id); cut != nil {
				t.Errorf("the response was cut: %v", cut)
			}
		})
	}
}

// readWhole reads resp's body to its end and fails t unless the status is
// 200, the body is want, whole, and the request with id was logged with
// status 200; it returns that log line.
func (ts *testServer) readWhole(t *testing.T, resp *http.Response, want []byte, id string) map[string]any {
	t.Helper()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status = %d", resp.StatusCode)
	}
	got, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("the body ended with %v after %d of %d bytes; the server's log: %v", err, len(got), len(want), logLine(t, ts.Logs.String(), "response cut", id))
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("the body (%d bytes) differs from a fast client's (%d bytes)", len(got), len(want))
	}
	if !waitFor(10*time.Second, func() bool { return logLine(t, ts.Logs.String(), "request", id) != nil }) {
		t.Fatal("the request was never logged")
	}
	line := requestLine(t, ts.Logs.String(), id)
	if line["status"] != float64(200) {
		t.Errorf("request logged with status %v, want 200", line["status"])
	}
	return line
}
