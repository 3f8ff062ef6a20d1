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

// stallRcvBuf is the receive buffer of the stall tests' clients. A
// receiver reopens its window only once a part of its buffer is free (at
// least an MSS, more with a larger buffer): a client reading 2 KB/s from a
// buffer of Linux's default size acknowledges nothing for tens of seconds,
// with one of 4 KiB for up to 3s at a time, with this one for about a
// second, within the stall timeout below.
const stallRcvBuf = 2 << 10

// socketBuffers returns how many bytes a loopback connection takes in
// while its client, connected as the stall tests' are, reads nothing: the
// server's send buffer and the client's receive buffer, as this kernel
// sizes them.
func socketBuffers(tb testing.TB) int64 {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
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

// TestStallMeasuredByProgress checks that a client is cut only when its
// connection accepted nothing for the stall timeout, with real sockets
// whose buffers the kernel sizes: clients reading steadily at 2 KB/s,
// 20 KB/s and 200 KB/s a body several times larger than the socket
// buffers (at 2 KB/s, as much as 45s of reading allow, and at least the
// buffers and three stall periods' reading), for at least three stall
// periods, receive every
// byte; a client that reads nothing is cut within the stall timeout plus a
// second of the last byte its connection accepted, logged as aborted with
// reason client_stalled at WARN.
func TestStallMeasuredByProgress(t *testing.T) {
	pool := pgtest.New(t)
	const rowSize = 1000
	variedTasks(t, pool, 5000, rowSize)
	const stall = 2 * time.Second
	ts := newOpsServer(t, pool, func(s *api.Server) {
		// Memory for every body: the database side ends at once, and the
		// clients meet the spool alone.
		s.Delivery.Spool = spool.Limits{Memory: 32 << 20, NoProgress: stall}
	})
	buffers := socketBuffers(t)
	t.Logf("a connection that is not read takes in %d bytes", buffers)
	page := func(bytes int64) string {
		return fmt.Sprintf("/api/general-report?format=ndjson&columns=task,task_detail&result_per_page=%d", bytes/rowSize+1)
	}
	stallBytes := func(rate int64) int64 { return rate * int64(stall/time.Second) }

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
			size := max(min(3*buffers, 45*tt.rate), buffers+3*stallBytes(tt.rate), 4*stallBytes(tt.rate))
			target := page(size)
			want := ts.get(t, target, "Accept-Encoding", "identity")
			if want.Status != http.StatusOK {
				t.Fatalf("status = %d; body %.300s", want.Status, want.Body)
			}
			id := "steady-" + strings.ToLower(tt.name)
			conn := dialTCP(t, ts.URL, stallRcvBuf, wanMSS)
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

	t.Run("ReadsNothing", func(t *testing.T) {
		t.Parallel()
		const id = "reads-nothing"
		conn := dialTCP(t, ts.URL, stallRcvBuf, wanMSS)
		ts.rawRequest(t, conn, "HTTP/1.1", page(10*buffers+spool.DefaultMemory), "X-Request-Id", id)
		// The client's kernel takes what its buffer holds; after that the
		// connection accepts nothing.
		var last time.Time // when the client's kernel last took bytes
		queued := 0
		var cut map[string]any
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
		at, err := time.Parse(time.RFC3339Nano, fmt.Sprint(cut["time"]))
		if err != nil {
			t.Fatalf("time of %v: %v", cut, err)
		}
		idle := at.Sub(last)
		t.Logf("cut %v after the connection last accepted bytes", idle.Round(time.Millisecond))
		if idle > stall+time.Second {
			t.Errorf("cut %v after the connection last accepted bytes, want within %v", idle.Round(time.Millisecond), stall+time.Second)
		}
		if cut["level"] != "WARN" || cut["reason"] != "client_stalled" {
			t.Errorf("cut logged at %v with reason %v; want WARN, client_stalled", cut["level"], cut["reason"])
		}
		if !waitFor(10*time.Second, func() bool { return logLine(t, ts.Logs.String(), "request", id) != nil }) {
			t.Fatal("the request was never logged")
		}
		line := requestLine(t, ts.Logs.String(), id)
		if line["status"] != float64(0) || line["aborted"] != true || line["reason"] != "client_stalled" {
			t.Errorf("logged status %v, aborted %v, reason %v; want 0, true, client_stalled", line["status"], line["aborted"], line["reason"])
		}
		if got := ts.metric(t, `informe_http_responses_cut_total{reason="client_stalled"}`); got != 1 {
			t.Errorf(`informe_http_responses_cut_total{reason="client_stalled"} = %v, want 1`, got)
		}
	})
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
