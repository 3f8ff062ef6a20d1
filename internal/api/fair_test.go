package api_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/informe/informe/internal/api"
	"github.com/informe/informe/internal/api/apitest"
)

// startAs is testServer.start with token's credentials.
func (ts *testServer) startAs(tb testing.TB, token, target string) *streamed {
	tb.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	tb.Cleanup(cancel)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, ts.URL+target, nil)
	if err != nil {
		tb.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	s := &streamed{done: make(chan struct{}), cancel: cancel}
	go s.read(req)
	return s
}

// getAs sends GET target with token's credentials and reads the whole
// response.
func (ts *testServer) getAs(tb testing.TB, token, target string) response {
	tb.Helper()
	return ts.Do(tb, http.MethodGet, target, "Authorization", "Bearer "+token)
}

// atGate is an informe backend waiting at the gate: its process, the
// start of its statement and the statement.
type atGate struct {
	pid   int
	start time.Time
	query string
}

// gateWaiters returns informe's backends waiting at the gate.
func gateWaiters(tb testing.TB, mon *pgx.Conn) []atGate {
	tb.Helper()
	rows, err := mon.Query(context.Background(), `
		SELECT a.pid, a.query_start, a.query FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
		WHERE l.locktype = 'advisory' AND NOT l.granted AND l.objid = $1
		  AND a.application_name = 'informe' AND a.datname = current_database()`, gateLock)
	if err != nil {
		tb.Fatal(err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (atGate, error) {
		var g atGate
		var start pgtype.Timestamptz
		err := r.Scan(&g.pid, &start, &g.query)
		g.start = start.Time
		return g, err
	})
	if err != nil {
		tb.Fatal(err)
	}
	return out
}

// nextAtGate waits for the one backend at the gate to be a statement
// other than was, and returns it.
func nextAtGate(tb testing.TB, mon *pgx.Conn, was atGate) atGate {
	tb.Helper()
	var now []atGate
	if !waitFor(10*time.Second, func() bool {
		now = gateWaiters(tb, mon)
		return len(now) == 1 && (now[0].pid != was.pid || !now[0].start.Equal(was.start))
	}) {
		tb.Fatalf("no other statement came to wait at the gate after %+v: %+v", was, now)
	}
	return now[0]
}

// waiting waits until n big requests wait for a turn, as /metrics says.
func (s *opsServer) waitWaiting(tb testing.TB, n int) {
	tb.Helper()
	if !waitFor(10*time.Second, func() bool { return s.metric(tb, "informe_export_turns_waiting") == float64(n) }) {
		tb.Fatalf("informe_export_turns_waiting = %v, want %d", s.metric(tb, "informe_export_turns_waiting"), n)
	}
}

// TestTurnsSharedByToken checks that a free turn goes to a token with one
// request waiting before the requests another token queued first: with
// one turn, held at the gate by A's export, A queues three more and B
// one; when A's ends, B's export is the next to reach the database (its
// count is over the view, for its filter, where A's counts are the
// maintained ones), and A's follow. Small requests are served meanwhile.
func TestTurnsSharedByToken(t *testing.T) {
	t.Parallel()
	pool, mon := gatedDB(t)
	ts := newOpsServer(t, pool, func(s *api.Server) { s.Limits.Exports, s.Limits.ExportQueue = 1, 8 })
	tokenB := ts.NewToken(t, "fair-b", nil, time.Time{})
	const (
		targetA = "/api/general-report/export?format=csv"
		targetB = "/api/general-report/export?format=csv&client_id=1"
	)
	isB := func(g atGate) bool { return strings.Contains(g.query, "count(*)") }

	open := closeGate(t, mon, "count")
	a := []*streamed{ts.startAs(t, ts.Token, targetA)}
	waitingAtGate(t, mon)
	held := gateWaiters(t, mon)[0]
	if isB(held) {
		t.Fatalf("A's export runs %q, B's statement: the test cannot tell them apart", held.query)
	}
	for i := range 3 {
		a = append(a, ts.startAs(t, ts.Token, targetA))
		ts.waitWaiting(t, i+1)
	}
	b := ts.startAs(t, tokenB, targetB)
	ts.waitWaiting(t, 4)

	// Small requests never wait for a turn.
	if r := ts.getAs(t, tokenB, "/users"); r.Status != http.StatusOK {
		t.Errorf("/users while exports wait: status %d; body %.300s", r.Status, r.Body)
	}

	a[0].cancel() // A's export ends: its turn is free
	next := nextAtGate(t, mon, held)
	if !isB(next) {
		t.Fatalf("after A's export the turn went to %q, want B's export", next.query)
	}
	b.cancel()
	if next = nextAtGate(t, mon, next); isB(next) {
		t.Fatalf("after B's export the turn went to %q, want A's", next.query)
	}
	open()
	for i, r := range a[1:] {
		r.wait(t)
		if r.err != nil || r.status != http.StatusOK {
			t.Errorf("A's export %d: status %d, error %v", i+2, r.status, r.err)
		}
	}
	if got := ts.metric(t, `informe_export_turns_total{waited="true"}`); got < 4 {
		t.Errorf(`informe_export_turns_total{waited="true"} = %v, want at least 4`, got)
	}
	// A's second and third exports were given their turns with more of
	// A's waiting: a burst (read in batches through a cursor while B's
	// requests are recent), with the bytes of A's last export, no burst's,
	// read in one statement.
	if !waitFor(10*time.Second, func() bool { return strings.Count(ts.Logs.String(), `"burst":true`) == 2 }) {
		t.Errorf("request lines with \"burst\":true: %d, want 2 (A's second and third exports):\n%s",
			strings.Count(ts.Logs.String(), `"burst":true`), ts.Logs.String())
	}
	for i, r := range a[1:3] {
		if !bytes.Equal(r.body.Bytes(), a[3].body.Bytes()) {
			t.Errorf("A's export %d, a burst's, differs from its last, alone: %d bytes against %d", i+2, r.body.Len(), a[3].body.Len())
		}
	}
	t.Logf("A's exports: %d rows", bytes.Count(a[3].body.Bytes(), []byte("\n")))
}

// TestTokenOwnLimit checks a token's own limit, set with the token store:
// with two turns, A (limit 1) holds one at the gate and its second export
// waits though a turn is free; B, with no limit of its own, takes that
// turn at once. With the queue of two full of A's, A's next export gets
// a 429 with Retry-After, and B's takes the place of A's last waiting
// one, which gets the 429. B's exports and A's within its limit end 200.
// The token names are on the request lines, never in a metric.
func TestTokenOwnLimit(t *testing.T) {
	t.Parallel()
	pool, mon := gatedDB(t)
	ts := newOpsServer(t, pool, func(s *api.Server) { s.Limits.Exports, s.Limits.ExportQueue = 2, 2 })
	const nameA, nameB = "fair-limited-a", "fair-unlimited-b"
	tokenA, tokenB := ts.NewToken(t, nameA, nil, time.Time{}), ts.NewToken(t, nameB, nil, time.Time{})
	one := 1
	if err := ts.Tokens.SetMaxExports(context.Background(), nameA, &one); err != nil {
		t.Fatal(err)
	}
	const target = "/api/general-report/export?format=csv"

	open := closeGate(t, mon, "count")
	a1 := ts.startAs(t, tokenA, target)
	waitingAtGate(t, mon)
	a2 := ts.startAs(t, tokenA, target)
	ts.waitWaiting(t, 1)
	b1 := ts.startAs(t, tokenB, target)
	if !waitFor(10*time.Second, func() bool { return len(gateWaiters(t, mon)) == 2 }) {
		t.Fatalf("B's export did not take the free turn: %d at the gate", len(gateWaiters(t, mon)))
	}
	a3 := ts.startAs(t, tokenA, target)
	ts.waitWaiting(t, 2)

	r := ts.getAs(t, tokenA, target)
	r.WantError(t, http.StatusTooManyRequests, "Too Many Requests")
	if got, want := r.Header.Get("Retry-After"), "5"; got != want {
		t.Errorf("Retry-After = %q, want %q", got, want)
	}
	b2 := ts.startAs(t, tokenB, target)
	a3.wait(t)
	if a3.status != http.StatusTooManyRequests {
		t.Errorf("A's waiting export whose place B's took: status %d, want 429", a3.status)
	}
	ts.waitWaiting(t, 2)

	open()
	for _, tt := range []struct {
		name string
		r    *streamed
	}{{"a1", a1}, {"a2", a2}, {"b1", b1}, {"b2", b2}} {
		tt.r.wait(t)
		if tt.r.err != nil || tt.r.status != http.StatusOK {
			t.Errorf("%s: status %d, error %v; body %.300s", tt.name, tt.r.status, tt.r.err, tt.r.body.Bytes())
		}
	}
	if got, want := ts.metric(t, `informe_http_refusals_total{reason="token_busy"}`), 2.0; got != want {
		t.Errorf(`informe_http_refusals_total{reason="token_busy"} = %v, want %v`, got, want)
	}
	if got := ts.metric(t, `informe_http_refusals_total{reason="exports_busy"}`); got != 0 {
		t.Errorf(`informe_http_refusals_total{reason="exports_busy"} = %v, want 0`, got)
	}
	if !waitFor(10*time.Second, func() bool {
		return strings.Count(ts.Logs.String(), `"status":429`) == 2
	}) {
		t.Fatalf("no two request lines with status 429:\n%s", ts.Logs.String())
	}
	for _, line := range strings.Split(ts.Logs.String(), "\n") {
		if strings.Contains(line, `"status":429`) && !strings.Contains(line, fmt.Sprintf(`"token":%q`, nameA)) {
			t.Errorf("a 429's request line does not name A's token: %s", line)
		}
	}
	resp, err := apitest.Client.Get(ts.Ops + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{nameA, nameB} {
		if strings.Contains(string(body), name) {
			t.Errorf("/metrics names token %s", name)
		}
	}
}
