package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// Issue 10: slow clients, bursts and compression.

// sampleEvery is how often pg_stat_activity is sampled: the resolution of
// the connection hold times.
const sampleEvery = 5 * time.Millisecond

// xact is one transaction of an informe backend as pg_stat_activity showed
// it, times from the database's clock.
type xact struct {
	pid   int
	start time.Time // xact_start
	seen  time.Time // the last sample that showed it open
	end   time.Time // zero while open
	exact bool      // end is the state_change to idle; else an upper bound within one sample
	// request is whether a sample showed it running a statement of a
	// request's snapshot rather than one that runs in a transaction of its
	// own: the pool's ping ("-- ping") or the token check of every request,
	// 503s included (api_tokens). (The page query's text is cut at
	// track_activity_query_size before its FROM, so it cannot be told by
	// what it reads.)
	request bool
}

func (x *xact) hold() time.Duration {
	if x.end.IsZero() {
		return x.seen.Sub(x.start)
	}
	return x.end.Sub(x.start)
}

// sampler follows the transactions of informe's backends (application_name
// informe) in the benchmark's database: a transaction is the time a
// request holds a pool connection (informe's snapshots are transactions
// from Begin to Close).
type sampler struct {
	pool   *pgxpool.Pool
	db     string
	mu     sync.Mutex
	xacts  []*xact
	open   map[int]*xact
	n      int // samples taken
	cancel context.CancelFunc
	done   chan error
	once   sync.Once
	err    error
}

func startSampler(ctx context.Context, pool *pgxpool.Pool, db string) (*sampler, error) {
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	s := &sampler{pool: pool, db: db, open: map[int]*xact{}, cancel: cancel, done: make(chan error, 1)}
	go func() {
		defer conn.Release()
		t := time.NewTicker(sampleEvery)
		defer t.Stop()
		for {
			if err := s.sample(ctx, conn); err != nil {
				if ctx.Err() != nil {
					err = nil
				}
				s.done <- err
				return
			}
			select {
			case <-ctx.Done():
				s.done <- nil
				return
			case <-t.C:
			}
		}
	}()
	return s, nil
}

func (s *sampler) sample(ctx context.Context, conn *pgxpool.Conn) error {
	rows, err := conn.Query(ctx, `SELECT pid, xact_start, state_change, state, query, clock_timestamp()
		FROM pg_stat_activity WHERE datname = $1 AND application_name = 'informe'`, s.db)
	if err != nil {
		return err
	}
	defer rows.Close()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.n++
	seen := map[int]bool{}
	var now time.Time
	for rows.Next() {
		var pid int
		var start, change *time.Time
		var state, query *string
		if err := rows.Scan(&pid, &start, &change, &state, &query, &now); err != nil {
			return err
		}
		seen[pid] = true
		x := s.open[pid]
		switch {
		case start != nil:
			if x != nil && !x.start.Equal(*start) {
				x.end = *start // it ended before the next began
				x = nil
			}
			if x == nil {
				x = &xact{pid: pid, start: *start}
				s.open[pid] = x
				s.xacts = append(s.xacts, x)
			}
			x.seen = now
			if query != nil && *query != "" && *query != "-- ping" && !strings.Contains(*query, "api_tokens") {
				x.request = true
			}
		case x != nil:
			if change != nil && state != nil && *state == "idle" && !change.Before(x.seen) {
				x.end, x.exact = *change, true
			} else {
				x.end = now
			}
			delete(s.open, pid)
		}
	}
	if err := rows.Err(); err != nil {
		return err
	}
	for pid, x := range s.open {
		if !seen[pid] { // the backend went away
			x.end = now
			delete(s.open, pid)
		}
	}
	return nil
}

// since returns the transactions that began at or after t, and how many of
// them are still open.
func (s *sampler) since(t time.Time) (holds []time.Duration, open int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, x := range s.xacts {
		if x.start.Before(t) || !x.request {
			continue
		}
		holds = append(holds, x.hold())
		if x.end.IsZero() {
			open++
		}
	}
	return holds, open
}

// quiet waits until no transaction that began at or after t is open, or
// for at most limit; it reports whether all ended.
func (s *sampler) quiet(ctx context.Context, t time.Time, limit time.Duration) bool {
	deadline := time.Now().Add(limit)
	for {
		if _, open := s.since(t); open == 0 {
			// One more sample, so that an ending just missed is seen.
			time.Sleep(2 * sampleEvery)
			if _, open := s.since(t); open == 0 {
				return true
			}
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return false
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// stop ends the sampling; calls after the first return the first's error.
func (s *sampler) stop() error {
	s.once.Do(func() {
		s.cancel()
		s.err = <-s.done
	})
	return s.err
}

// pageClient reads one 10,000-row CSV page on a connection of its own,
// retrying after 503 (informe's turns and queue of big responses are
// bounded), at full speed or throttled to rate bytes a second.
type pageClient struct {
	path     string
	rate     int         // bytes a second; 0 reads at full speed
	busy     int         // 503s before it was admitted
	answered atomic.Bool // it has its 200, or has failed
	read     atomic.Int64
	finished bool // the whole body arrived
	err      error
}

// throttleChunk is what a throttled client reads before each pause, and
// slowRcvBuf the receive buffer of its socket: a client on a slow link
// does not have megabytes of loopback socket buffers that would take the
// body off informe's hands.
const (
	throttleChunk = 512
	slowRcvBuf    = 8 << 10
)

func (c *pageClient) run(ctx context.Context, base, token string) {
	defer c.answered.Store(true)
	dialer := &net.Dialer{}
	if c.rate > 0 {
		dialer.Control = func(_, _ string, rc syscall.RawConn) error {
			var serr error
			if err := rc.Control(func(fd uintptr) {
				serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, slowRcvBuf)
			}); err != nil {
				return err
			}
			return serr
		}
	}
	tr := &http.Transport{DisableCompression: true, DialContext: dialer.DialContext, MaxIdleConnsPerHost: 1}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr}
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+c.path, nil)
		if err != nil {
			c.err = err
			return
		}
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := client.Do(req)
		if err != nil {
			c.err = err
			return
		}
		if resp.StatusCode == http.StatusServiceUnavailable && c.busy < 200 {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			c.busy++
			select {
			case <-ctx.Done():
				c.err = ctx.Err()
				return
			case <-time.After(250 * time.Millisecond):
			}
			continue
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			c.err = fmt.Errorf("GET %s: %s", c.path, resp.Status)
			return
		}
		c.answered.Store(true)
		buf := make([]byte, 32<<10)
		if c.rate > 0 {
			buf = buf[:throttleChunk]
		}
		pause := time.Duration(float64(throttleChunk) / float64(max(c.rate, 1)) * float64(time.Second))
		for {
			n, err := io.ReadFull(resp.Body, buf)
			c.read.Add(int64(n))
			if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
				c.finished = true
				return
			}
			if err != nil {
				if ctx.Err() == nil {
					c.err = err
				}
				return
			}
			if c.rate > 0 {
				select {
				case <-ctx.Done():
					return
				case <-time.After(pause):
				}
			}
		}
	}
}

// slowResult is what the slow part measured.
type slowResult struct {
	clients, rate int
	idleProbes    []time.Duration // 10-row JSON pages on an idle informe
	probes        []time.Duration // the same while the slow clients read
	probeErrors   []string
	lone          []time.Duration // holds of one fast client's pages, one at a time
	fast          []time.Duration // holds of the fast clients' pages, all at once
	slow          []time.Duration // holds of the slow clients' pages
	fastOpen      int             // fast transactions still open when waiting ended
	slowOpen      int
	fastBusy      int // 503s before admission
	slowBusy      int
	slowAdmitted  time.Duration // from the slow clients' start until all had their 200
	slowRead      int64         // bytes the slow clients had read when stopped
	slowFinished  int           // slow clients whose whole body arrived (none should)
	clientErrors  []string
	pageBytes     int64
	metrics       map[string]float64 // from informe's /metrics at the end
	samples       int
}

// slowPages are the pages the slow and fast clients read: spread over the
// report, full pages only.
func (b *bench) slowPages(n int) []int64 {
	last := max(b.totalPages-1, 1)
	pages := make([]int64, n)
	for i := range pages {
		pages[i] = 1 + int64(i)*(last-1)/int64(max(n-1, 1))
	}
	return pages
}

func csvPagePath(page int64) string {
	return fmt.Sprintf("/api/general-report?format=csv&result_per_page=%d&page=%d", perPage, page)
}

// slow measures issue 10's first target: the p99 of 10-row JSON pages while
// 32 clients read 10,000-row CSV pages at 2 KB/s, and how long each slow
// response holds a database connection next to the same pages read at full
// speed by as many clients at once (and by one client alone).
func (b *bench) slow(ctx context.Context) error {
	o := b.o
	r := &slowResult{clients: o.slowClients, rate: o.slowRate}
	logf("slow: fresh informe, %d throttled clients at %d B/s", o.slowClients, o.slowRate)
	inf, err := b.current.start(ctx, startOptions{ops: true})
	if err != nil {
		return err
	}
	defer inf.stop()
	for _, p := range []string{fmt.Sprintf("/api/general-report?format=csv&result_per_page=%d&page=1", small), probePath(0)} {
		if _, err := inf.measure(ctx, p, nil, b.backends()); err != nil {
			return fmt.Errorf("warm-up: %w", err)
		}
	}
	smp, err := startSampler(ctx, b.pool, b.dbName)
	if err != nil {
		return err
	}
	defer smp.stop()

	logf("slow: %d probes on an idle informe", o.probes)
	if r.idleProbes, err = b.probe(ctx, inf, o.probes, &r.probeErrors); err != nil {
		return err
	}

	logf("slow: one fast client, %d pages one at a time", o.runs)
	began := time.Now()
	for i := range o.runs {
		s, err := inf.measure(ctx, csvPagePath(1+int64(i)), nil, b.backends())
		if err != nil {
			return err
		}
		r.pageBytes = s.bytes
	}
	smp.quiet(ctx, began, 10*time.Second)
	r.lone, _ = smp.since(began)

	pages := b.slowPages(o.slowClients)
	logf("slow: %d fast clients at once", o.slowClients)
	began = time.Now()
	fast := b.startClients(ctx, inf, pages, 0)
	fast.wait()
	if !smp.quiet(ctx, began, 30*time.Second) {
		logf("slow: fast transactions still open after 30 s")
	}
	r.fast, r.fastOpen = smp.since(began)
	for _, c := range fast.clients {
		r.fastBusy += c.busy
		if c.err != nil || !c.finished {
			r.clientErrors = append(r.clientErrors, fmt.Sprintf("fast client %s: finished %v, %v", c.path, c.finished, c.err))
		}
	}

	logf("slow: %d throttled clients", o.slowClients)
	began = time.Now()
	slowCtx, stopSlow := context.WithCancel(ctx)
	defer stopSlow()
	slow := b.startClients(slowCtx, inf, pages, o.slowRate)
	if !slow.admitted(ctx, 2*time.Minute) {
		r.clientErrors = append(r.clientErrors, "not every slow client was admitted within 2 minutes")
	}
	r.slowAdmitted = time.Since(began)
	if !smp.quiet(ctx, began, 60*time.Second) {
		logf("slow: slow clients' transactions still open after 60 s")
	}
	r.slow, r.slowOpen = smp.since(began)

	logf("slow: %d probes while the throttled clients read", o.probes)
	if r.probes, err = b.probe(ctx, inf, o.probes, &r.probeErrors); err != nil {
		return err
	}
	if r.metrics, err = scrape(ctx, inf); err != nil {
		return err
	}
	stopSlow()
	slow.wait()
	for _, c := range slow.clients {
		r.slowBusy += c.busy
		r.slowRead += c.read.Load()
		if c.finished {
			r.slowFinished++
		}
		if c.err != nil {
			r.clientErrors = append(r.clientErrors, fmt.Sprintf("slow client %s: %v", c.path, c.err))
		}
	}
	r.samples = smp.n
	b.res.slow = r
	return smp.stop()
}

// probePath is the i-th 10-row JSON page the probes ask for: pages spread
// over the report.
func probePath(i int) string {
	return fmt.Sprintf("/api/general-report?format=json&result_per_page=10&page=%d", 1+(i*7919)%90000)
}

// probe times n 10-row JSON pages one after the other on one connection.
func (b *bench) probe(ctx context.Context, inf *informe, n int, errs *[]string) ([]time.Duration, error) {
	var ds []time.Duration
	for i := range n {
		s, err := inf.fetch(ctx, probePath(i), nil, nil)
		if err != nil {
			return nil, err
		}
		if s.status != http.StatusOK {
			*errs = append(*errs, fmt.Sprintf("probe %s: status %d", probePath(i), s.status))
		}
		ds = append(ds, s.wall)
	}
	return ds, nil
}

// clientGroup is page clients running at once.
type clientGroup struct {
	clients []*pageClient
	wg      sync.WaitGroup
}

func (b *bench) startClients(ctx context.Context, inf *informe, pages []int64, rate int) *clientGroup {
	g := &clientGroup{}
	for _, p := range pages {
		c := &pageClient{path: csvPagePath(p), rate: rate}
		g.clients = append(g.clients, c)
		g.wg.Go(func() { c.run(ctx, inf.base, inf.token) })
	}
	return g
}

func (g *clientGroup) wait() { g.wg.Wait() }

// admitted waits until every client has its 200 (or has failed).
func (g *clientGroup) admitted(ctx context.Context, limit time.Duration) bool {
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) && ctx.Err() == nil {
		all := true
		for _, c := range g.clients {
			if !c.answered.Load() {
				all = false
			}
		}
		if all {
			return true
		}
		time.Sleep(10 * time.Millisecond)
	}
	return false
}

// scrape reads the counters of informe's /metrics that say what the
// spool and the limits did.
func scrape(ctx context.Context, inf *informe) (map[string]float64, error) {
	if inf.ops == "" {
		return nil, nil
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, inf.ops+"/metrics", nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	m := map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "informe_spool") && !strings.HasPrefix(line, "informe_http_refusals") && !strings.HasPrefix(line, "informe_db_pool_acquire") {
			continue
		}
		name, val, ok := strings.Cut(line, " ")
		if !ok {
			continue
		}
		if v, err := strconv.ParseFloat(val, 64); err == nil {
			m[name] = v
		}
	}
	return m, sc.Err()
}

// burstResult is 64 CSV and 16 XLSX pages asked for at once.
type burstResult struct {
	csv, xlsx int              // requests of each, per round
	ok, busy  []map[string]int // per round, by format
	failures  []string
	baseRSS   int64
	peakRSS   int64           // over both rounds
	wall      []time.Duration // per round, until the last response ended
	spilled   float64
}

// burst measures issue 10's second target: 64 concurrent 10,000-row CSV
// pages and 16 concurrent XLSX pages, each on a connection of its own, all
// sent at once to a fresh informe: each must succeed whole or get 503, and
// informe's peak RSS stay under 256 MiB.
func (b *bench) burst(ctx context.Context) error {
	const nCSV, nXLSX = 64, 16
	logf("burst: fresh informe, %d CSV and %d XLSX pages of %d rows at once", nCSV, nXLSX, perPage)
	inf, err := b.current.start(ctx, startOptions{ops: true})
	if err != nil {
		return err
	}
	defer inf.stop()
	for _, f := range []string{"csv", "xlsx"} {
		if _, err := inf.measure(ctx, fmt.Sprintf("/api/general-report?format=%s&result_per_page=%d&page=1", f, small), nil, b.backends()); err != nil {
			return fmt.Errorf("warm-up: %w", err)
		}
	}
	r := &burstResult{csv: nCSV, xlsx: nXLSX}
	if r.baseRSS, _, err = procMemory(inf.cmd.Process.Pid); err != nil {
		return err
	}
	// A 200 is whole when its chunked body ended cleanly (a cut one ends
	// in an error) and informe logged all its rows, not aborted.
	type call struct {
		format string
		page   int64
		s      sample
		err    error
	}
	// Round 1 sends them all at once, round 2 the XLSX pages 100 ms
	// before the CSV pages: which of them get the turns and the queue
	// depends on the order of arrival, and XLSX is what costs memory.
	for round := range 2 {
		var calls []*call
		for i, p := range b.slowPages(nCSV) {
			calls = append(calls, &call{format: "csv", page: p})
			if i < nXLSX {
				calls = append(calls, &call{format: "xlsx", page: b.slowPages(nXLSX)[i]})
			}
		}
		start := make(chan struct{})
		var wg sync.WaitGroup
		for _, c := range calls {
			wg.Go(func() {
				client := &http.Client{Transport: &http.Transport{DisableCompression: true}}
				defer client.CloseIdleConnections()
				<-start
				if round == 1 && c.format == "csv" {
					time.Sleep(100 * time.Millisecond) // after the XLSX pages
				}
				c.s, c.err = fetch(ctx, client, inf.base+fmt.Sprintf("/api/general-report?format=%s&result_per_page=%d&page=%d", c.format, perPage, c.page), inf.token, nil, nil)
			})
		}
		began := time.Now()
		close(start)
		wg.Wait()
		r.wall = append(r.wall, time.Since(began))
		ok, busy := map[string]int{}, map[string]int{}
		for _, c := range calls {
			switch {
			case c.err != nil:
				r.failures = append(r.failures, fmt.Sprintf("round %d: %s page %d: %v", round+1, c.format, c.page, c.err))
			case c.s.status == http.StatusServiceUnavailable:
				busy[c.format]++
			case c.s.status != http.StatusOK:
				r.failures = append(r.failures, fmt.Sprintf("round %d: %s page %d: status %d", round+1, c.format, c.page, c.s.status))
			default:
				ok[c.format]++
			}
		}
		r.ok, r.busy = append(r.ok, ok), append(r.busy, busy)
	}
	if _, r.peakRSS, err = procMemory(inf.cmd.Process.Pid); err != nil {
		return err
	}
	m, err := scrape(ctx, inf)
	if err != nil {
		return err
	}
	r.spilled = m[`informe_spooled_responses_total{spilled="true"}`]
	// informe's own account: every 200 streamed its rows whole.
	inf.stop()
	lines, err := inf.logged("/api/general-report")
	if err != nil {
		return err
	}
	for _, l := range lines[min(2, len(lines)):] { // after the warm-ups
		if l.Status == http.StatusOK && (l.Aborted || l.Rows != perPage) {
			r.failures = append(r.failures, fmt.Sprintf("informe logged %s: %d rows, aborted %v", l.Query, l.Rows, l.Aborted))
		}
	}
	b.res.burst = r
	return nil
}

// gzipResult is a 10,000-row CSV page with and without compression.
type gzipResult struct {
	identity, gzip, zstd []sample
}

// gzip measures issue 10's third target: page 1 of 10,000 CSV rows with
// Accept-Encoding: gzip (and zstd, for comparison) next to identity, on one
// fresh informe, the codings alternating.
func (b *bench) gzip(ctx context.Context) error {
	logf("gzip: fresh informe, a %d-row CSV page with and without compression", perPage)
	inf, err := b.current.start(ctx, startOptions{})
	if err != nil {
		return err
	}
	defer inf.stop()
	r := &gzipResult{}
	codings := []struct {
		name string
		out  *[]sample
	}{{"identity", &r.identity}, {"gzip", &r.gzip}, {"zstd", &r.zstd}}
	path := csvPagePath(1)
	for i := range b.o.runs + 1 {
		for _, c := range codings {
			s, err := inf.measure(ctx, path, http.Header{"Accept-Encoding": {c.name}}, b.backends())
			if err != nil {
				return err
			}
			if got := s.header.Get("Content-Encoding"); got != strings.TrimPrefix(c.name, "identity") {
				return fmt.Errorf("asked for %s, informe answered Content-Encoding %q", c.name, got)
			}
			if i > 0 { // the first round warms up
				*c.out = append(*c.out, s)
			}
		}
	}
	b.res.gzip = r
	return nil
}

// percentile returns the nearest-rank p-th percentile of ds.
func percentile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	i := int(float64(len(s))*p/100+0.999999) - 1
	return s[min(max(i, 0), len(s)-1)]
}
