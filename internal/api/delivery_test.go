package api_test

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/klauspost/compress/zstd"
	"github.com/xuri/excelize/v2"

	"github.com/informe/informe/auth"
	"github.com/informe/informe/internal/api"
	"github.com/informe/informe/internal/api/apitest"
	"github.com/informe/informe/internal/pgserver/pgtest"
	"github.com/informe/informe/internal/postgres"
	"github.com/informe/informe/internal/source"
	"github.com/informe/informe/internal/spool"
	"github.com/informe/informe/metrics"
	"github.com/informe/informe/report"
)

// The tests of issue 10: how bodies reach clients (the spool, compression,
// HTTP/1.0), the limits on the work taken on (pool, export turns), and
// what the request path refuses or redacts. They assert on states the
// server shows (its pool through /metrics, pg_stat_activity, its log), never
// on how long something took.

// opsServer is the API with its operations listener (/metrics, /readyz),
// over a pool and with settings of the test's choosing.
type opsServer struct {
	*testServer
	Ops string // base URL of the operations listener
}

// opsServers numbers the servers' tokens, unique when servers share a
// database.
var opsServers atomic.Int64

// newOpsServer serves the API over pool, as cmd/informe wires it, with
// configure applied to the server before its handlers are made, and a
// token carrying every scope.
func newOpsServer(tb testing.TB, pool *pgxpool.Pool, configure func(*api.Server)) *opsServer {
	tb.Helper()
	return newOpsServerOn(tb, pool, configure, nil)
}

// newOpsServerOn is newOpsServer with the API's listener wrapped by wrap,
// unless it is nil.
func newOpsServerOn(tb testing.TB, pool *pgxpool.Pool, configure func(*api.Server), wrap func(net.Listener) net.Listener) *opsServer {
	tb.Helper()
	s := &api.Server{
		Data: postgres.NewStore(pool), Report: source.Report(report.Maintained),
		Tokens:        auth.NewStore(pool),
		Metrics:       metrics.New(pool),
		Pool:          pool,
		ReadyWhenBusy: true,
	}
	if configure != nil {
		configure(s)
	}
	ts := serveOn(tb, s, wrap)
	ts.Pool = pool
	ts.Token = ts.NewToken(tb, fmt.Sprintf("all-%d", opsServers.Add(1)), nil, time.Time{})
	ops := httptest.NewServer(s.OpsHandler())
	tb.Cleanup(ops.Close)
	return &opsServer{testServer: ts, Ops: ops.URL}
}

// metric returns the value of one series on the operations listener's
// /metrics, written as in the exposition format (name{labels}); a series
// not exposed reads 0, as a counter never incremented.
func (s *opsServer) metric(tb testing.TB, series string) float64 {
	tb.Helper()
	resp, err := apitest.Client.Get(s.Ops + "/metrics")
	if err != nil {
		tb.Fatal(err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), series+" "); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				tb.Fatalf("%s: %v", sc.Text(), err)
			}
			return f
		}
	}
	if err := sc.Err(); err != nil {
		tb.Fatal(err)
	}
	return 0
}

// acquired returns how many of the pool's connections are in use, as
// /metrics shows it.
func (s *opsServer) acquired(tb testing.TB) int {
	tb.Helper()
	return int(s.metric(tb, `informe_db_pool_connections{state="acquired"}`))
}

// readyz returns the status and the status word of /readyz.
func (s *opsServer) readyz(tb testing.TB) (int, string) {
	tb.Helper()
	resp, err := apitest.Client.Get(s.Ops + "/readyz")
	if err != nil {
		tb.Fatal(err)
	}
	defer resp.Body.Close()
	var body struct {
		Status string `json:"status"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		tb.Fatalf("/readyz body: %v", err)
	}
	return resp.StatusCode, body.Status
}

// smallRcvBuf is the receive buffer of raw test connections. Set before
// connecting, it also turns off Linux's autotuning of the buffer (up to
// net.ipv4.tcp_rmem's maximum, often many MiB), so what such a client has not
// read stays on the server's side.
const smallRcvBuf = 4 << 10

// dialSmall connects to the server at base (http://host:port) with a
// receive buffer of smallRcvBuf bytes.
func dialSmall(tb testing.TB, base string) net.Conn {
	tb.Helper()
	return dialTCP(tb, base, smallRcvBuf, 0)
}

// dialTCP connects to the server at base (http://host:port) with a
// receive buffer of rcvBuf bytes and, unless mss is 0, a maximum segment
// size of mss bytes.
func dialTCP(tb testing.TB, base string, rcvBuf, mss int) net.Conn {
	tb.Helper()
	d := net.Dialer{Control: func(_, _ string, c syscall.RawConn) error {
		var serr error
		if err := c.Control(func(fd uintptr) {
			serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, rcvBuf)
			if serr == nil && mss != 0 {
				serr = syscall.SetsockoptInt(int(fd), syscall.IPPROTO_TCP, syscall.TCP_MAXSEG, mss)
			}
		}); err != nil {
			return err
		}
		return serr
	}}
	conn, err := d.Dial("tcp", strings.TrimPrefix(base, "http://"))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { conn.Close() })
	return conn
}

// rawRequest writes GET target in protocol proto (HTTP/1.1 or HTTP/1.0) on
// conn, with the server's token and the given header pairs.
func (ts *testServer) rawRequest(tb testing.TB, conn net.Conn, proto, target string, header ...string) {
	tb.Helper()
	var b strings.Builder
	fmt.Fprintf(&b, "GET %s %s\r\nHost: informe.test\r\nAuthorization: Bearer %s\r\n", target, proto, ts.Token)
	for i := 0; i+1 < len(header); i += 2 {
		fmt.Fprintf(&b, "%s: %s\r\n", header[i], header[i+1])
	}
	b.WriteString("\r\n")
	if _, err := io.WriteString(conn, b.String()); err != nil {
		tb.Fatal(err)
	}
}

// rawGet sends GET target over HTTP/1.1 on a connection with a small
// receive buffer and reads the response's status and header only.
func (ts *testServer) rawGet(tb testing.TB, target string, header ...string) *http.Response {
	tb.Helper()
	conn := dialSmall(tb, ts.URL)
	return ts.rawGetOn(tb, conn, bufio.NewReader(conn), target, header...)
}

// rawGetOn sends GET target over HTTP/1.1 on conn and reads the
// response's status and header from r, which reads conn.
func (ts *testServer) rawGetOn(tb testing.TB, conn net.Conn, r *bufio.Reader, target string, header ...string) *http.Response {
	tb.Helper()
	ts.rawRequest(tb, conn, "HTTP/1.1", target, header...)
	req, err := http.NewRequest(http.MethodGet, ts.URL+target, nil)
	if err != nil {
		tb.Fatal(err)
	}
	resp, err := http.ReadResponse(r, req)
	if err != nil {
		tb.Fatalf("reading the response header: %v", err)
	}
	tb.Cleanup(func() { resp.Body.Close() })
	return resp
}

// slowBody reads a body slowly in a goroutine: step bytes every interval,
// about 2 KB/s, until told to read the rest at full speed.
type slowBody struct {
	got  atomic.Int64 // bytes read so far
	fast chan struct{}
	done chan struct{}
	body bytes.Buffer // valid after done
	err  error        // the read's end, after done: nil for a complete body
}

func readSlowly(r io.Reader) *slowBody {
	const step, interval = 512, 250 * time.Millisecond
	b := &slowBody{fast: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(b.done)
		t := time.NewTicker(interval)
		defer t.Stop()
		buf := make([]byte, 32<<10)
		for {
			n := len(buf)
			select {
			case <-b.fast:
			default:
				n = step
				select {
				case <-t.C:
				case <-b.fast:
					n = len(buf)
				}
			}
			k, err := r.Read(buf[:n])
			b.body.Write(buf[:k])
			b.got.Add(int64(k))
			if err == io.EOF {
				return
			}
			if err != nil {
				b.err = err
				return
			}
		}
	}()
	return b
}

// finish reads the rest at full speed and waits for the end, failing the
// test after 60s.
func (b *slowBody) finish(tb testing.TB) {
	tb.Helper()
	close(b.fast)
	select {
	case <-b.done:
	case <-time.After(60 * time.Second):
		tb.Fatal("the body did not end within 60s of reading at full speed")
	}
}

// rateReader reads r at about rate bytes a second, in reads of a
// twentieth of a second's worth, never catching up on time it spent idle.
type rateReader struct {
	r    io.Reader
	rate int64
	next time.Time // when the next read may start
}

func (rr *rateReader) Read(p []byte) (int, error) {
	time.Sleep(time.Until(rr.next))
	p = p[:min(int64(len(p)), max(rr.rate/20, 1))]
	n, err := rr.r.Read(p)
	if now := time.Now(); rr.next.Before(now) {
		rr.next = now
	}
	rr.next = rr.next.Add(time.Duration(n) * time.Second / time.Duration(rr.rate))
	return n, err
}

// variedTasks is bigTasks with details that differ from row to row and
// within a row, so that a byte out of place shows.
func variedTasks(tb testing.TB, pool *pgxpool.Pool, n, size int) {
	tb.Helper()
	bigTasks(tb, pool, n, 0)
	if _, err := pool.Exec(context.Background(),
		`UPDATE tasks SET detail = left(repeat(md5(id::text), $1 / 32 + 1), $1)`, size); err != nil {
		tb.Fatal(err)
	}
}

// kernelSendBuffer returns the largest send buffer Linux gives a TCP
// socket that does not set its own (the third field of
// net.ipv4.tcp_wmem), or 4 MiB, its default, where that is unknown.
func kernelSendBuffer(tb testing.TB) int64 {
	tb.Helper()
	b, err := os.ReadFile("/proc/sys/net/ipv4/tcp_wmem")
	if err != nil {
		return 4 << 20
	}
	f := strings.Fields(string(b))
	n, err := strconv.ParseInt(f[len(f)-1], 10, 64)
	if err != nil {
		tb.Fatalf("tcp_wmem %q: %v", b, err)
	}
	return n
}

// requestLine returns the fields of the log line of the request whose id
// is id, failing the test if there is none.
func requestLine(tb testing.TB, logs, id string) map[string]any {
	tb.Helper()
	if m := logLine(tb, logs, "request", id); m != nil {
		return m
	}
	tb.Fatalf("no log line for request %s:\n%s", id, logs)
	return nil
}

// logLine returns the fields of the log line with message msg of the
// request whose id is id, nil if there is none.
func logLine(tb testing.TB, logs, msg, id string) map[string]any {
	tb.Helper()
	for _, l := range strings.Split(logs, "\n") {
		if !strings.Contains(l, `"request_id":"`+id+`"`) || !strings.Contains(l, `"msg":`+fmt.Sprintf("%q", msg)) {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			tb.Fatalf("log line %s: %v", l, err)
		}
		if m["msg"] == msg {
			return m
		}
	}
	return nil
}

// TestSlowReaderReleasesConnection checks that a client slower than the
// database does not hold the database: with a spool that can take the
// whole page (in memory, or in a temporary file), the pool's only
// connection is back in the pool, and no informe backend is in a
// transaction, while a client reading a 10,000-row CSV page at about
// 2 KB/s is still further from the end than any socket buffer could hold;
// meanwhile another client's 10-row page is served on that one
// connection. The slow client then reads on and gets the whole page.
func TestSlowReaderReleasesConnection(t *testing.T) {
	t.Parallel()
	base := pgtest.New(t)
	// About 30 MB of CSV: well past the kernel's buffers of both ends.
	const rows = 10000
	bigTasks(t, base, rows, 3000)
	mon := monitor(t, base)
	unreadAtLeast := kernelSendBuffer(t) + 2*smallRcvBuf + 1<<20

	for _, tt := range []struct {
		name    string
		limits  spool.Limits
		spilled string
	}{
		{"Memory", spool.Limits{Memory: 64 << 20, NoProgress: -1}, "false"},
		{"Disk", spool.Limits{Memory: 64 << 10, Disk: 64 << 20, Dir: t.TempDir(), NoProgress: -1}, "true"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			pool := apitest.PoolOf(t, base, 1)
			ts := newOpsServer(t, pool, func(s *api.Server) { s.Delivery.Spool = tt.limits })

			resp := ts.rawGet(t, "/api/general-report?format=csv&result_per_page=10000")
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("status = %d", resp.StatusCode)
			}
			if got, want := resp.Header.Get("X-Total-Count"), strconv.Itoa(rows); got != want {
				t.Fatalf("X-Total-Count = %s, want %s", got, want)
			}
			slow := readSlowly(resp.Body)
			// The header left after the page's first row: the cursor held
			// the connection then.
			if !waitFor(60*time.Second, func() bool { return ts.acquired(t) == 0 && busyBackends(t, mon) == 0 }) {
				t.Fatalf("the connection is still held (%d acquired, %d busy backends) while the client reads slowly",
					ts.acquired(t), busyBackends(t, mon))
			}
			atRelease := slow.got.Load()

			// Another client is served meanwhile, on the pool's only
			// connection.
			page := ts.Get(t, "/api/general-report?result_per_page=10")
			if page.Status != http.StatusOK {
				t.Fatalf("10-row page while the slow client reads: status = %d; body %.300s", page.Status, page.Body)
			}
			if got := len(decodeReport(t, page.Body).Raw); got != 10 {
				t.Errorf("10-row page has %d rows", got)
			}
			select {
			case <-slow.done:
				t.Fatalf("the slow client's body ended early: %v", slow.err)
			default:
			}

			slow.finish(t)
			if slow.err != nil {
				t.Fatalf("reading the rest of the page: %v", slow.err)
			}
			recs := csvRecords(t, slow.body.Bytes(), ',')
			if got, want := len(recs), rows+1; got != want {
				t.Fatalf("%d CSV records, want %d (header and rows)", got, want)
			}
			unread := int64(slow.body.Len()) - atRelease
			t.Logf("connection released with %d of %d bytes read by the client", atRelease, slow.body.Len())
			if unread < unreadAtLeast {
				t.Fatalf("the client had only %d bytes left to read at the release, want more than %d (what socket buffers hold)", unread, unreadAtLeast)
			}
			if got := ts.metric(t, `informe_spooled_responses_total{spilled="`+tt.spilled+`"}`); got < 1 {
				t.Errorf("informe_spooled_responses_total{spilled=%q} = %v, want the page counted", tt.spilled, got)
			}
		})
	}
}

// TestStalledClientIsCut checks that a client that stops reading is cut
// after the stall timeout: the server logs the cut (reason client_stalled)
// and the request with the status it had sent, 200, outcome cut (it is
// informe's cut, not the client's going away), closes the connection before the chunked body's end, and no
// database connection is left held (the producer, waiting for the client
// with the spool full, held one until the cut).
func TestStalledClientIsCut(t *testing.T) {
	t.Parallel()
	pool := pgtest.New(t)
	bigTasks(t, pool, 10000, 1000) // about 10 MB of NDJSON
	mon := monitor(t, pool)
	// The default memory and no disk: the producer waits for the client,
	// holding its connection, until the cut.
	ts := newOpsServer(t, pool, func(s *api.Server) { s.Delivery.Spool = spool.Limits{NoProgress: 500 * time.Millisecond} })

	resp := ts.rawGet(t, "/api/general-report/export?format=ndjson", "X-Request-Id", "stalled-client")
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status = %d", resp.StatusCode)
	}
	// The client reads nothing more.
	if !waitFor(60*time.Second, func() bool {
		return strings.Contains(ts.Logs.String(), `"msg":"response cut","request_id":"stalled-client","reason":"client_stalled"`)
	}) {
		t.Fatalf("no cut logged:\n%s", ts.Logs.String())
	}
	body, err := io.ReadAll(resp.Body)
	if err == nil {
		t.Fatalf("the body read to its chunked end after %d bytes; want the connection cut", len(body))
	}
	t.Logf("the body ended with %v after %d bytes", err, len(body))
	if !waitFor(10*time.Second, func() bool { return ts.acquired(t) == 0 && busyBackends(t, mon) == 0 }) {
		t.Fatalf("after the cut: %d connections acquired, %d busy backends; want 0", ts.acquired(t), busyBackends(t, mon))
	}
	if !waitFor(10*time.Second, func() bool {
		return strings.Contains(ts.Logs.String(), `"msg":"request","request_id":"stalled-client"`)
	}) {
		t.Fatalf("the request was never logged:\n%s", ts.Logs.String())
	}
	line := requestLine(t, ts.Logs.String(), "stalled-client")
	if line["status"] != float64(200) || line["outcome"] != "cut" || line["aborted"] != true || line["reason"] != "client_stalled" {
		t.Errorf("logged status %v, outcome %v, aborted %v, reason %v; want 200, cut, true, client_stalled", line["status"], line["outcome"], line["aborted"], line["reason"])
	}
	if got := ts.metric(t, `informe_http_responses_cut_total{reason="client_stalled"}`); got != 1 {
		t.Errorf("informe_http_responses_cut_total{reason=\"client_stalled\"} = %v, want 1", got)
	}
	// The server serves on.
	if r := ts.Get(t, "/api/general-report?result_per_page=1"); r.Status != http.StatusOK {
		t.Errorf("after the cut: status %d; body %s", r.Status, r.Body)
	}
}

// TestPoolExhausted checks that when every pool connection is held (the
// one of a pool of one, by an export waiting at the gate inside
// PostgreSQL), a request waits at most the acquire timeout and is answered
// 503 with Retry-After and a JSON message; that /readyz says "busy" then,
// 200 or 503 as ReadyWhenBusy says; and that all is well again once the
// connection is back.
//
// Tokens are looked up on a pool of their own here, so that requests get
// past authentication to the stores; SharedPool is the wiring of
// cmd/informe, where they share the one pool.
func TestPoolExhausted(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name          string
		readyWhenBusy bool
		sharedPool    bool
	}{
		{"ReadyWhenBusy", true, false},
		{"NotReadyWhenBusy", false, false},
		{"SharedPool", true, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			gated, mon := gatedDB(t)
			pool := apitest.PoolOf(t, gated, 1)
			ts := newOpsServer(t, pool, func(s *api.Server) {
				s.Limits.AcquireTimeout = 200 * time.Millisecond
				s.ReadyWhenBusy = tt.readyWhenBusy
				if !tt.sharedPool {
					s.Tokens = auth.NewStore(apitest.PoolOf(t, gated, 2))
				}
			})
			if code, status := ts.readyz(t); code != http.StatusOK || status != "ready" {
				t.Fatalf("/readyz before = %d %q, want 200 ready", code, status)
			}
			open := closeGate(t, mon, "rows")
			held := ts.start(t, "/api/general-report/export?format=csv")
			waitingAtGate(t, mon)
			if got := ts.acquired(t); got != 1 {
				t.Fatalf("%d connections acquired while the export waits at the gate, want the pool's 1", got)
			}

			targets := []string{"/users", "/api/general-report?result_per_page=10", "/api/general-report/export?format=json"}
			for _, target := range targets {
				t.Run(target, func(t *testing.T) {
					r := ts.getWithin(t, 30*time.Second, target)
					r.WantError(t, http.StatusServiceUnavailable, "every database connection is busy")
					if got, want := r.Header.Get("Retry-After"), "5"; got != want {
						t.Errorf("Retry-After = %q, want %q", got, want)
					}
				})
			}
			wantCode := http.StatusOK
			if !tt.readyWhenBusy {
				wantCode = http.StatusServiceUnavailable
			}
			if code, status := ts.readyz(t); code != wantCode || status != "busy" {
				t.Errorf("/readyz while the pool is exhausted = %d %q, want %d busy", code, status, wantCode)
			}
			if got, want := ts.metric(t, `informe_http_refusals_total{reason="pool_busy"}`), float64(len(targets)); got != want {
				t.Errorf(`informe_http_refusals_total{reason="pool_busy"} = %v, want %v`, got, want)
			}

			open()
			held.wait(t)
			if held.err != nil || held.status != http.StatusOK {
				t.Fatalf("the held export: status %d, error %v", held.status, held.err)
			}
			if got, want := held.header.Get("X-Total-Count"), strconv.Itoa(10*gatedContracts); got != want {
				t.Errorf("the held export: X-Total-Count %s, want %s", got, want)
			}
			if !waitFor(10*time.Second, func() bool { return ts.acquired(t) == 0 }) {
				t.Fatal("the export's connection was not released")
			}
			if code, status := ts.readyz(t); code != http.StatusOK || status != "ready" {
				t.Errorf("/readyz after = %d %q, want 200 ready", code, status)
			}
			for _, target := range targets {
				if r := ts.Get(t, target); r.Status != http.StatusOK {
					t.Errorf("%s after: status %d; body %.300s", target, r.Status, r.Body)
				}
			}
		})
	}
}

// TestReadyz checks /readyz's other answers: 200 "ready" with a working
// database, 503 "shutting down" once the server drains (whatever the
// database), and 503 "database unreachable" when the database does not
// answer.
func TestReadyz(t *testing.T) {
	t.Parallel()
	pool := pgtest.New(t)
	var srv *api.Server
	ts := newOpsServer(t, pool, func(s *api.Server) { srv = s })
	if code, status := ts.readyz(t); code != http.StatusOK || status != "ready" {
		t.Errorf("/readyz = %d %q, want 200 ready", code, status)
	}
	srv.Drain()
	if code, status := ts.readyz(t); code != http.StatusServiceUnavailable || status != "shutting down" {
		t.Errorf("/readyz after Drain = %d %q, want 503 shutting down", code, status)
	}
	// Draining does not stop the API: requests in flight and those that
	// still come while load balancers notice are served.
	if r := ts.Get(t, "/users"); r.Status != http.StatusOK {
		t.Errorf("/users while draining: status %d", r.Status)
	}

	down := newOpsServer(t, pool, func(s *api.Server) { s.Pool = closedPortPool(t) })
	if code, status := down.readyz(t); code != http.StatusServiceUnavailable || status != "database unreachable" {
		t.Errorf("/readyz with the database down = %d %q, want 503 database unreachable", code, status)
	}
}

// getWithin is get with a bound on the whole exchange: a request that is
// not answered within d fails the test, rather than hanging it.
func (ts *testServer) getWithin(tb testing.TB, d time.Duration, target string, header ...string) response {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	req := apitest.NewRequest(tb, http.MethodGet, ts.URL+target, nil, append([]string{"Authorization", "Bearer " + ts.Token}, header...)...)
	resp, err := apitest.Client.Do(req.WithContext(ctx))
	if err != nil {
		tb.Fatalf("GET %s: no answer within %v: %v", target, d, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		tb.Fatalf("GET %s: reading body: %v", target, err)
	}
	return response{Status: resp.StatusCode, Header: resp.Header, Body: body}
}

// TestExportTurns checks the turns of big responses with one turn and no
// queue: while an export holds the turn (mid-stream, waiting at the gate
// at contract gateAt), every big request (an export, a page of more than
// 1,000 rows, any XLSX) is answered 503 "too many exports" at once, and
// small requests are served; once the export is done, the turn is free
// again, for one big response after another, and no handler is left
// running. With and without a request time limit, which wraps the turn's
// end.
func TestExportTurns(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name    string
		timeout time.Duration
	}{
		{"NoRequestTimeout", 0},
		{"RequestTimeout", 10 * time.Minute},
	} {
		t.Run(tt.name, func(t *testing.T) {
			pool, mon := gatedDB(t)
			ts := newOpsServer(t, pool, func(s *api.Server) {
				s.Limits.Exports, s.Limits.ExportQueue = 1, 0
				s.Limits.RequestTimeout = tt.timeout
			})
			open := closeGate(t, mon, "rows")
			held := ts.start(t, "/api/general-report/export?format=csv")
			waitingAtGate(t, mon)

			big := []string{
				"/api/general-report/export?format=json",
				"/api/general-report?result_per_page=5000",
				"/api/general-report?result_per_page=10&format=xlsx",
				"/users?format=xlsx",
			}
			for _, target := range big {
				t.Run("Big"+target, func(t *testing.T) {
					r := ts.getWithin(t, 30*time.Second, target)
					r.WantError(t, http.StatusServiceUnavailable, "too many exports")
					if got, want := r.Header.Get("Retry-After"), "5"; got != want {
						t.Errorf("Retry-After = %q, want %q", got, want)
					}
				})
			}
			// Small pages end before the gate's contract.
			for _, target := range []string{"/api/general-report?result_per_page=10", "/api/general-report?result_per_page=500&format=csv", "/users"} {
				t.Run("Small"+target, func(t *testing.T) {
					if r := ts.getWithin(t, 30*time.Second, target); r.Status != http.StatusOK {
						t.Errorf("status = %d; body %.300s", r.Status, r.Body)
					}
				})
			}
			if got, want := ts.metric(t, `informe_http_refusals_total{reason="exports_busy"}`), float64(len(big)); got != want {
				t.Errorf(`informe_http_refusals_total{reason="exports_busy"} = %v, want %v`, got, want)
			}

			open()
			held.wait(t)
			if held.err != nil || held.status != http.StatusOK {
				t.Fatalf("the held export: status %d, error %v", held.status, held.err)
			}
			// Each big response gives its turn back, once.
			for _, target := range append(big, big...) {
				if r := ts.getWithin(t, 30*time.Second, target); r.Status != http.StatusOK {
					t.Errorf("%s after the held export: status %d; body %.300s", target, r.Status, r.Body)
				}
			}
			if !waitFor(10*time.Second, func() bool { return ts.metric(t, "informe_http_requests_in_flight") == 0 }) {
				t.Errorf("%v requests still in flight after every response was read", ts.metric(t, "informe_http_requests_in_flight"))
			}
		})
	}
}

// http10 sends GET target as an HTTP/1.0 request and returns the response
// (status and header) and the raw body: everything after the header up to
// the connection's end, which ends an HTTP/1.0 exchange.
func (ts *testServer) http10(tb testing.TB, target string, header ...string) (*http.Response, []byte) {
	tb.Helper()
	conn, err := net.Dial("tcp", strings.TrimPrefix(ts.URL, "http://"))
	if err != nil {
		tb.Fatal(err)
	}
	defer conn.Close()
	ts.rawRequest(tb, conn, "HTTP/1.0", target, header...)
	_ = conn.SetReadDeadline(time.Now().Add(60 * time.Second))
	all, err := io.ReadAll(conn)
	if err != nil {
		tb.Fatalf("reading the HTTP/1.0 response: %v", err)
	}
	head, body, ok := bytes.Cut(all, []byte("\r\n\r\n"))
	if !ok {
		tb.Fatalf("no end of header in %.300q", all)
	}
	resp, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(append(head, "\r\n\r\n"...))), nil)
	if err != nil {
		tb.Fatalf("header %q: %v", head, err)
	}
	return resp, body
}

// TestHTTP10 checks that an HTTP/1.0 client, which cannot tell a cut body
// from a whole one without a length, gets the whole body with a
// Content-Length and no chunked coding, byte for byte what HTTP/1.1 gets,
// in every format and compressed too; and a 503 in JSON, with nothing else
// sent, when the body is larger than the spool can hold.
func TestHTTP10(t *testing.T) {
	t.Parallel()
	pool := pgtest.New(t)
	bigTasks(t, pool, 1000, 1000) // about 1 MB of CSV: past the spool's memory
	ts := newOpsServer(t, pool, func(s *api.Server) {
		s.Delivery.Spool = spool.Limits{Memory: 64 << 10, Disk: 64 << 20, Dir: t.TempDir()}
	})
	for _, target := range []string{
		"/api/general-report/export?format=csv",
		"/api/general-report/export?format=json",
		"/api/general-report/export?format=ndjson",
		"/api/general-report/export?format=xlsx",
		"/api/general-report?format=csv&result_per_page=5000",
	} {
		for _, coding := range []string{"identity", "gzip", "zstd"} {
			t.Run(target+"/"+coding, func(t *testing.T) {
				resp, body := ts.http10(t, target, "Accept-Encoding", coding)
				if resp.StatusCode != http.StatusOK {
					t.Fatalf("status = %d; body %.300s", resp.StatusCode, body)
				}
				if te := resp.Header.Values("Transfer-Encoding"); len(te) != 0 || len(resp.TransferEncoding) != 0 {
					t.Errorf("Transfer-Encoding %q over HTTP/1.0", te)
				}
				if got, want := resp.Header.Get("Content-Length"), strconv.Itoa(len(body)); got != want {
					t.Fatalf("Content-Length = %q, the body has %s bytes", got, want)
				}
				want := ts.Get(t, target, "Accept-Encoding", "identity")
				if want.Status != http.StatusOK {
					t.Fatalf("HTTP/1.1: status = %d", want.Status)
				}
				got := decodeBody(t, resp.Header.Get("Content-Encoding"), body)
				if strings.Contains(target, "xlsx") {
					if ce := resp.Header.Get("Content-Encoding"); ce != "" {
						t.Errorf("XLSX with Content-Encoding %q", ce)
					}
					checkSameWorkbook(t, got, want.Body)
					return
				}
				if wantCE := map[string]string{"identity": "", "gzip": "gzip", "zstd": "zstd"}[coding]; resp.Header.Get("Content-Encoding") != wantCE {
					t.Errorf("Content-Encoding = %q, want %q", resp.Header.Get("Content-Encoding"), wantCE)
				}
				if !bytes.Equal(got, want.Body) {
					t.Errorf("HTTP/1.0 body (%d bytes) differs from HTTP/1.1's (%d bytes)", len(got), len(want.Body))
				}
			})
		}
	}

	t.Run("ErrTooLarge", func(t *testing.T) {
		tiny := newOpsServer(t, pool, func(s *api.Server) {
			s.Delivery.Spool = spool.Limits{Memory: 32 << 10, Disk: 32 << 10, Dir: t.TempDir()}
		})
		for _, format := range formats {
			t.Run(format, func(t *testing.T) {
				target := "/api/general-report/export?format=" + format
				resp, body := tiny.http10(t, target)
				r := response{Status: resp.StatusCode, Header: resp.Header, Body: body}
				r.WantError(t, http.StatusServiceUnavailable, "too large to hold for an HTTP/1.0 client")
				if got, want := r.Header.Get("Retry-After"), "5"; got != want {
					t.Errorf("Retry-After = %q, want %q", got, want)
				}
				if got, want := r.Header.Get("Content-Length"), strconv.Itoa(len(body)); got != want {
					t.Errorf("Content-Length = %q, the body has %s bytes", got, want)
				}
				for _, h := range []string{"Content-Disposition", "X-Total-Count", "Content-Encoding"} {
					if v := r.Header.Get(h); v != "" {
						t.Errorf("error carries %s: %q", h, v)
					}
				}
				// HTTP/1.1 streams it through the same small spool.
				if r := tiny.Get(t, target); r.Status != http.StatusOK {
					t.Errorf("HTTP/1.1: status %d", r.Status)
				}
			})
		}
		if got := tiny.acquired(t); got != 0 {
			t.Errorf("%d connections still acquired after the refusals", got)
		}
	})
}

// checkSameWorkbook checks that two XLSX bodies hold the same cells.
func checkSameWorkbook(tb testing.TB, got, want []byte) {
	tb.Helper()
	g, w := xlsxRows(tb, got, xlsxSheet(tb, want)), xlsxRows(tb, want, xlsxSheet(tb, want))
	if len(g) != len(w) {
		tb.Fatalf("workbook has %d rows, want %d", len(g), len(w))
	}
	for i := range g {
		if strings.Join(g[i], "\x1f") != strings.Join(w[i], "\x1f") {
			tb.Fatalf("workbook row %d = %q, want %q", i, g[i], w[i])
		}
	}
}

// xlsxSheet returns the name of a workbook's first sheet.
func xlsxSheet(tb testing.TB, body []byte) string {
	tb.Helper()
	f, err := excelize.OpenReader(bytes.NewReader(body))
	if err != nil {
		tb.Fatalf("opening workbook: %v", err)
	}
	defer f.Close()
	return f.GetSheetList()[0]
}

// decodeBody undoes a Content-Encoding: gzip, zstd or none.
func decodeBody(tb testing.TB, coding string, body []byte) []byte {
	tb.Helper()
	var r io.Reader
	switch coding {
	case "":
		return body
	case "gzip":
		zr, err := gzip.NewReader(bytes.NewReader(body))
		if err != nil {
			tb.Fatalf("gzip: %v", err)
		}
		r = zr
	case "zstd":
		zr, err := zstd.NewReader(bytes.NewReader(body))
		if err != nil {
			tb.Fatalf("zstd: %v", err)
		}
		defer zr.Close()
		r = zr
	default:
		tb.Fatalf("unexpected Content-Encoding %q", coding)
	}
	out, err := io.ReadAll(r)
	if err != nil {
		tb.Fatalf("decoding %s: %v", coding, err)
	}
	return out
}

// TestCompressedBodies checks that gzip and zstd bodies decode to the
// identity body byte for byte, in every format of the report's page, the
// export and /users, with Content-Encoding and Vary saying so; that XLSX,
// compressed already, is never compressed again; and how Accept-Encoding's
// quality values choose the coding.
func TestCompressedBodies(t *testing.T) {
	t.Parallel()
	pool := pgtest.Fixture(t)
	// Enough users that /users is worth compressing.
	if _, err := pool.Exec(context.Background(), `
		INSERT INTO users (id, name, email, username, rut, status, created_at)
		SELECT i, 'Usuaria ' || i, 'u' || i || '@informe.cl', 'u' || i || '@informe.cl', '11111111-1', 'A', '2024-01-01'
		FROM generate_series(10, 200) AS i`); err != nil {
		t.Fatal(err)
	}
	ts := newServer(t, pool)
	for _, path := range []string{"/api/general-report?result_per_page=10000", "/api/general-report/export", "/users"} {
		for _, format := range formats {
			target := path + map[bool]string{true: "&", false: "?"}[strings.Contains(path, "?")] + "format=" + format
			identity := ts.Get(t, target, "Accept-Encoding", "identity")
			if identity.Status != http.StatusOK {
				t.Fatalf("%s: status = %d", target, identity.Status)
			}
			if ce := identity.Header.Get("Content-Encoding"); ce != "" {
				t.Fatalf("%s: identity asked, Content-Encoding %q", target, ce)
			}
			for _, coding := range []string{"gzip", "zstd"} {
				t.Run(target+"/"+coding, func(t *testing.T) {
					r := ts.Get(t, target, "Accept-Encoding", coding)
					if r.Status != http.StatusOK {
						t.Fatalf("status = %d", r.Status)
					}
					vary := headerTokens(r.Header.Values("Vary"))
					if format == "xlsx" {
						if ce := r.Header.Get("Content-Encoding"); ce != "" {
							t.Errorf("XLSX with Content-Encoding %q", ce)
						}
						if slicesContains(vary, "Accept-Encoding") {
							t.Errorf("XLSX Vary = %q: it never varies with Accept-Encoding", vary)
						}
						checkSameWorkbook(t, r.Body, identity.Body)
						return
					}
					if got := r.Header.Get("Content-Encoding"); got != coding {
						t.Fatalf("Content-Encoding = %q, want %q", got, coding)
					}
					if !slicesContains(vary, "Accept-Encoding") || !slicesContains(vary, "Accept") {
						t.Errorf("Vary = %q, want Accept and Accept-Encoding", vary)
					}
					if len(r.Body) >= len(identity.Body) {
						t.Errorf("%s body %d bytes, identity %d", coding, len(r.Body), len(identity.Body))
					}
					if got := decodeBody(t, coding, r.Body); !bytes.Equal(got, identity.Body) {
						t.Errorf("decoded %s body (%d bytes) differs from the identity body (%d bytes)", coding, len(got), len(identity.Body))
					}
					for _, h := range []string{"Content-Type", "X-Total-Count", "Content-Disposition"} {
						if got, want := r.Header.Get(h), identity.Header.Get(h); got != want {
							t.Errorf("%s = %q, identity has %q", h, got, want)
						}
					}
				})
			}
		}
	}

	t.Run("Negotiation", func(t *testing.T) {
		const target = "/api/general-report?format=json"
		identity := ts.Get(t, target, "Accept-Encoding", "identity")
		for _, tt := range []struct {
			name, accept, want string
		}{
			{"GzipRefusedZstd", "gzip;q=0, zstd", "zstd"},
			{"Identity", "identity", ""},
			{"Gzip", "gzip", "gzip"},
			{"Zstd", "zstd", "zstd"},
			{"HigherQualityWins", "zstd;q=0.5, gzip;q=0.8", "gzip"},
			{"ZstdAtEqualQuality", "gzip, zstd", "zstd"},
			{"Star", "*", "gzip"},
			{"BothRefused", "gzip;q=0, zstd;q=0", ""},
			{"Unknown", "br", ""},
			{"CaseInsensitive", "GZIP", "gzip"},
		} {
			t.Run(tt.name, func(t *testing.T) {
				r := ts.Get(t, target, "Accept-Encoding", tt.accept)
				if r.Status != http.StatusOK {
					t.Fatalf("status = %d", r.Status)
				}
				if got := r.Header.Get("Content-Encoding"); got != tt.want {
					t.Errorf("Accept-Encoding %q: Content-Encoding = %q, want %q", tt.accept, got, tt.want)
				}
				if !slicesContains(headerTokens(r.Header.Values("Vary")), "Accept-Encoding") {
					t.Errorf("Vary = %q, want Accept-Encoding", r.Header.Values("Vary"))
				}
				if got := decodeBody(t, r.Header.Get("Content-Encoding"), r.Body); !bytes.Equal(got, identity.Body) {
					t.Error("decoded body differs from the identity body")
				}
			})
		}
	})

	t.Run("SmallBodyNotCompressed", func(t *testing.T) {
		// One row is below the size worth compressing; it still varies
		// with Accept-Encoding.
		r := ts.Get(t, "/api/general-report?result_per_page=1", "Accept-Encoding", "gzip, zstd")
		if r.Status != http.StatusOK {
			t.Fatalf("status = %d", r.Status)
		}
		if got := r.Header.Get("Content-Encoding"); got != "" {
			t.Errorf("Content-Encoding = %q for a one-row page", got)
		}
		if !slicesContains(headerTokens(r.Header.Values("Vary")), "Accept-Encoding") {
			t.Errorf("Vary = %q, want Accept-Encoding", r.Header.Values("Vary"))
		}
	})
}

func slicesContains(s []string, v string) bool {
	for _, e := range s {
		if strings.EqualFold(e, v) {
			return true
		}
	}
	return false
}

// TestTokensRedactedInLogs checks that a token never reaches the log,
// whatever the disguise of the parameter that carries it (its name
// percent-encoded or in another case, the token itself percent-encoded, the
// token as a parameter's name) or when it is a path segment, while every
// such request is still logged, with its status.
func TestTokensRedactedInLogs(t *testing.T) {
	t.Parallel()
	ts := newServer(t, pgtest.Fixture(t))
	unknown := apitest.WellFormedToken()
	// The token percent-encoded from its first letter.
	encoded := "%69" + strings.TrimPrefix(ts.Token, "i")
	for _, tt := range []struct {
		name        string
		target      string
		bearer      bool // send the token in the header too
		status      int
		path, query string // as logged
	}{
		{"EncodedUnderscore", "/users?access%5Ftoken=" + ts.Token, false, 200, "/users", "access_token=REDACTED"},
		{"EncodedLetter", "/users?%61ccess_token=" + ts.Token, false, 200, "/users", "access_token=REDACTED"},
		{"EncodedBoth", "/users?%61ccess%5ftoken=" + ts.Token + "&format=csv", false, 200, "/users", "access_token=REDACTED&format=csv"},
		{"OtherCase", "/users?Access_Token=" + ts.Token, false, 401, "/users", "Access_Token=REDACTED"},
		{"UpperCaseEncoded", "/users?ACCESS%5FTOKEN=" + ts.Token, false, 401, "/users", "ACCESS_TOKEN=REDACTED"},
		{"EncodedValue", "/users?access_token=" + encoded, false, 200, "/users", "access_token=REDACTED"},
		{"UnknownToken", "/users?access%5Ftoken=" + unknown, false, 401, "/users", "access_token=REDACTED"},
		// A parameter holding a token is refused (links would carry it).
		{"InAnotherParameter", "/api/general-report?code_contract=" + ts.Token, true, 400, "/api/general-report", "code_contract=REDACTED"},
		// An unknown parameter is refused, its name redacted too.
		{"AsParameterName", "/users?" + ts.Token + "=1", true, 400, "/users", "REDACTED=1"},
		{"PathSegment", "/api/" + ts.Token, true, 404, "/api/REDACTED", ""},
		{"PathSegmentNoHeader", "/api/" + ts.Token, false, 401, "/api/REDACTED", ""},
		{"PathSegmentEncoded", "/api/" + encoded + "/x", true, 404, "/api/REDACTED/x", ""},
		{"PathAndQuery", "/" + unknown + "?access%5Ftoken=" + ts.Token, false, 404, "/REDACTED", "access_token=REDACTED"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			id := "redact-" + strings.ToLower(tt.name)
			header := []string{"X-Request-Id", id}
			if tt.bearer {
				header = append(header, "Authorization", "Bearer "+ts.Token)
			}
			r := ts.Do(t, http.MethodGet, tt.target, header...)
			if r.Status != tt.status {
				t.Fatalf("status = %d, want %d; body %s", r.Status, tt.status, r.Body)
			}
			line := requestLine(t, ts.Logs.String(), id)
			for _, f := range []struct {
				name string
				want any
			}{{"status", float64(tt.status)}, {"path", tt.path}, {"query", tt.query}} {
				if got := line[f.name]; got != f.want {
					t.Errorf("logged %s = %v, want %v", f.name, got, f.want)
				}
			}
		})
	}
	logs := ts.Logs.String()
	if !strings.Contains(logs, "REDACTED") {
		t.Error("no REDACTED in the log")
	}
	for _, secret := range []string{ts.Token, unknown} {
		// The part after the prefix, which no encoding of the token
		// changes: base64url letters only.
		body := secret[len("informe_"):]
		if strings.Contains(logs, body) {
			t.Fatalf("the log holds token %s:\n%s", secret, logs)
		}
	}
}

// TestRequestRefusals checks what the request path refuses before any
// work: text parameters that are not UTF-8 or hold a NUL (400 naming the
// parameter), and header fields over 64 KiB (431 in JSON, token or not).
func TestRequestRefusals(t *testing.T) {
	t.Parallel()
	ts := newServer(t, pgtest.Fixture(t))
	for _, path := range []string{"/api/general-report", "/api/general-report/export"} {
		for _, value := range []string{"%FF", "%00", "CT%00001", "ab%C3", "%C0%AF"} {
			t.Run(path+"/"+value, func(t *testing.T) {
				r := ts.Get(t, path+"?code_contract="+value)
				r.WantError(t, http.StatusBadRequest, "code_contract")
			})
		}
	}
	filler := strings.Repeat("a", 100<<10)
	for _, tt := range []struct {
		name   string
		header []string
	}{
		{"WithToken", []string{"Authorization", "Bearer " + ts.Token, "X-Filler", filler}},
		{"WithoutToken", []string{"X-Filler", filler}},
		{"ManyFields", manyFields(40, 3<<10)},
	} {
		t.Run("ErrHeaderTooLarge/"+tt.name, func(t *testing.T) {
			r := ts.Do(t, http.MethodGet, "/api/general-report", tt.header...)
			r.WantError(t, http.StatusRequestHeaderFieldsTooLarge, "Request Header Fields Too Large")
		})
	}
	t.Run("HeaderUnderLimit", func(t *testing.T) {
		r := ts.Get(t, "/api/general-report?result_per_page=1", "X-Filler", strings.Repeat("a", 60<<10))
		if r.Status != http.StatusOK {
			t.Errorf("60 KiB of header: status %d; body %s", r.Status, r.Body)
		}
	})
}

// manyFields returns n header pairs of size bytes each.
func manyFields(n, size int) []string {
	var h []string
	for i := range n {
		h = append(h, fmt.Sprintf("X-Filler-%d", i), strings.Repeat("b", size))
	}
	return h
}

// TestHeadReadsNoRows checks that HEAD answers with the headers GET would
// send (paging, type, attachment, count) and no body, without reading a
// row: the view is made to fail on any row read, which GET shows, and HEAD
// still answers 200.
func TestHeadReadsNoRows(t *testing.T) {
	t.Parallel()
	pool := pgtest.Fixture(t)
	ts := newServer(t, pool)
	targets := []string{
		"/api/general-report",
		"/api/general-report?format=csv&result_per_page=2&page=2",
		"/api/general-report?format=ndjson&client_id=1",
		"/api/general-report?format=xlsx&code_contract=CT-SHARED",
		"/api/general-report?result_per_page=3&page=9",
		"/api/general-report/export?format=csv",
		"/api/general-report/export?format=xlsx&rut=12.345.678-5",
	}
	gets := map[string]response{}
	for _, target := range targets {
		gets[target] = ts.Get(t, target)
		if gets[target].Status != http.StatusOK {
			t.Fatalf("GET %s: status %d", target, gets[target].Status)
		}
	}
	wrapTaskColumn(t, pool, `RAISE EXCEPTION 'a row of the report was read'; RETURN v;`)
	for _, target := range targets {
		t.Run(target, func(t *testing.T) {
			if r := ts.Get(t, target); r.Status != http.StatusInternalServerError && !strings.Contains(target, "page=9") {
				t.Fatalf("GET after the view fails on every row: status %d, want 500", r.Status)
			}
			r := ts.Do(t, http.MethodHead, target, "Authorization", "Bearer "+ts.Token)
			if r.Status != http.StatusOK {
				t.Fatalf("HEAD: status = %d", r.Status)
			}
			if len(r.Body) != 0 {
				t.Errorf("HEAD has a body of %d bytes", len(r.Body))
			}
			for _, h := range []string{"Content-Type", "Content-Disposition", "X-Total-Count", "X-Total-Pages", "X-Current-Page", "Link", "Cache-Control", "Vary"} {
				if got, want := strings.Join(r.Header.Values(h), ", "), strings.Join(gets[target].Header.Values(h), ", "); got != want {
					t.Errorf("HEAD %s = %q, GET's %q", h, got, want)
				}
			}
		})
	}
	if !strings.Contains(ts.Logs.String(), "a row of the report was read") {
		t.Error("the failing view was never read: the test proves nothing")
	}
}
