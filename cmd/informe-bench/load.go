package main

import (
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
	"syscall"
	"time"
)

// sampleEvery is how often pg_stat_activity is sampled: the resolution of
// the connection hold times.
const sampleEvery = 5 * time.Millisecond

// holds samples pg_stat_activity for the transactions of informe's
// backends: how long each request held a pool connection (informe's
// snapshots are transactions from Begin to Close).
type holds struct {
	mu     sync.Mutex
	xacts  map[[2]int64]*[2]time.Time // (pid, xact_start) -> start, last seen open
	cancel context.CancelFunc
	done   chan struct{}
}

func (b *bench) startHolds(ctx context.Context) *holds {
	ctx, cancel := context.WithCancel(ctx)
	h := &holds{xacts: map[[2]int64]*[2]time.Time{}, cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(h.done)
		for t := time.NewTicker(sampleEvery); ctx.Err() == nil; <-t.C {
			// Request transactions only: not the pool's ping nor the
			// token check, which run in transactions of their own.
			rows, err := b.pool.Query(ctx, `SELECT pid, xact_start, clock_timestamp() FROM pg_stat_activity
				WHERE datname = current_database() AND application_name = 'informe' AND xact_start IS NOT NULL
				AND query <> '-- ping' AND query NOT LIKE '%api_tokens%'`)
			if err != nil {
				continue
			}
			h.mu.Lock()
			for rows.Next() {
				var pid int64
				var start, now time.Time
				if rows.Scan(&pid, &start, &now) == nil {
					k := [2]int64{pid, start.UnixNano()}
					if h.xacts[k] == nil {
						h.xacts[k] = &[2]time.Time{start, now}
					}
					h.xacts[k][1] = now
				}
			}
			rows.Close()
			h.mu.Unlock()
		}
	}()
	return h
}

// since returns how long each transaction begun at or after t held its
// connection (to the last sample that saw it open).
func (h *holds) since(t time.Time) []time.Duration {
	h.mu.Lock()
	defer h.mu.Unlock()
	var ds []time.Duration
	for _, x := range h.xacts {
		if !x[0].Before(t) {
			ds = append(ds, x[1].Sub(x[0]))
		}
	}
	return ds
}

func (h *holds) stop() { h.cancel(); <-h.done }

// client reads one 10,000-row CSV page on a connection of its own,
// retrying after 503, at full speed or throttled to rate bytes a second
// with a small receive buffer, as a client on a slow link.
type client struct {
	path     string
	rate     int
	busy     int // 503s before its 200
	admitted chan struct{}
	finished bool
	err      error
}

func (c *client) run(ctx context.Context, base, token string) {
	defer func() {
		select {
		case <-c.admitted:
		default:
			close(c.admitted)
		}
	}()
	dialer := &net.Dialer{}
	if c.rate > 0 {
		dialer.Control = func(_, _ string, rc syscall.RawConn) error {
			return rc.Control(func(fd uintptr) { _ = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 8<<10) })
		}
	}
	tr := &http.Transport{DisableCompression: true, DialContext: dialer.DialContext}
	defer tr.CloseIdleConnections()
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+c.path, nil)
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := tr.RoundTrip(req)
		if err != nil {
			c.err = err
			return
		}
		if resp.StatusCode == http.StatusServiceUnavailable && c.busy < 200 {
			resp.Body.Close()
			c.busy++
			time.Sleep(250 * time.Millisecond)
			continue
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			c.err = fmt.Errorf("%s: %s", c.path, resp.Status)
			return
		}
		close(c.admitted)
		buf := make([]byte, 32<<10)
		for {
			if c.rate > 0 {
				buf = buf[:512]
				time.Sleep(time.Duration(len(buf)) * time.Second / time.Duration(c.rate))
			}
			_, err := io.ReadFull(resp.Body, buf)
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
		}
	}
}

// clients starts a client for each page at once.
func (b *bench) clients(ctx context.Context, inf *informe, pages []int64, rate int, wg *sync.WaitGroup) []*client {
	var cs []*client
	for _, p := range pages {
		c := &client{path: pagePath("csv", p, perPage), rate: rate, admitted: make(chan struct{})}
		cs = append(cs, c)
		wg.Go(func() { c.run(ctx, inf.base, inf.token) })
	}
	return cs
}

// spread returns n page numbers spread over the report's full pages.
func (b *bench) spread(n int) []int64 {
	pages := make([]int64, n)
	for i := range pages {
		pages[i] = 1 + int64(i)*(b.lastFull-1)/int64(max(n-1, 1))
	}
	return pages
}

// probe times n 10-row JSON pages spread over the report, one at a time.
func (b *bench) probe(ctx context.Context, inf *informe, n int) ([]time.Duration, error) {
	var ds []time.Duration
	for i := range n {
		s, err := inf.fetch(ctx, pagePath("json", 1+int64(i*7919)%(b.total/10), 10), nil, nil)
		if err == nil && s.status != http.StatusOK {
			err = fmt.Errorf("probe: status %d", s.status)
		}
		if err != nil {
			return nil, err
		}
		ds = append(ds, s.wall)
	}
	return ds, nil
}

// slow measures small pages while clients read 10,000-row CSV pages at
// 2 KB/s, and how long a slow client's page holds a database connection
// next to the same pages read at full speed, all at once.
func (b *bench) slow(ctx context.Context) error {
	o := b.o
	logf("slow: fresh informe, %d clients at full speed, then at %d B/s", o.slowClients, o.slowRate)
	inf, err := b.current.start(ctx)
	if err != nil {
		return err
	}
	defer inf.stop()
	if err := inf.warm(ctx, pagePath("csv", 1, small), nil); err != nil {
		return err
	}
	idle, err := b.probe(ctx, inf, o.probes)
	if err != nil {
		return err
	}
	h := b.startHolds(ctx)
	defer h.stop()
	pages := b.spread(o.slowClients)

	began := time.Now()
	var wg sync.WaitGroup
	fast := b.clients(ctx, inf, pages, 0, &wg)
	wg.Wait()
	time.Sleep(10 * sampleEvery)
	fastHolds := h.since(began)

	began = time.Now()
	slowCtx, stopSlow := context.WithCancel(ctx)
	defer stopSlow()
	var slowWG sync.WaitGroup
	slow := b.clients(slowCtx, inf, pages, o.slowRate, &slowWG)
	for _, c := range slow {
		<-c.admitted
	}
	admitted := time.Since(began)
	// The slow clients' pages should leave the database at database speed:
	// wait as long as the fast pages took, twice, then take the holds.
	time.Sleep(2*slices.Max(append(fastHolds, time.Second)) + 10*sampleEvery)
	slowHolds := h.since(began)
	busy, err := b.probe(ctx, inf, o.probes)
	if err != nil {
		return err
	}
	metrics := scrape(ctx, inf)
	stopSlow()
	slowWG.Wait()
	var problems []string
	busyOf := map[int]int{}
	for _, c := range append(fast, slow...) {
		busyOf[c.rate] += c.busy
		if c.err != nil || c.rate == 0 && !c.finished {
			problems = append(problems, fmt.Sprintf("%s at %d B/s: %v", c.path, c.rate, c.err))
		}
	}
	t := table{title: "Slow clients", header: []string{"what", "n", "min ms", "median ms", "p99 ms", "max ms"}, notes: []string{
		fmt.Sprintf("one fresh informe, default limits; %d clients read 10,000-row CSV pages spread over the report, at full speed and then at %d B/s (512-byte reads, 8 KiB receive buffer)", o.slowClients, o.slowRate),
		fmt.Sprintf("connection hold: a request transaction of an informe backend in pg_stat_activity, sampled every %s; the slow clients were all admitted after %.2f s", sampleEvery, admitted.Seconds()),
		fmt.Sprintf("503s before admission: fast %d, slow %d; spool and refusal counters: %v; client errors: %v", busyOf[0], busyOf[o.slowRate], metrics, problems),
	}}
	for _, r := range []struct {
		name string
		ds   []time.Duration
	}{{"10-row JSON pages, informe idle", idle}, {"10-row JSON pages while the slow clients read", busy},
		{"connection hold, fast clients' pages", fastHolds}, {"connection hold, slow clients' pages", slowHolds}} {
		if len(r.ds) > 0 {
			t.add(r.name, len(r.ds), ms(slices.Min(r.ds)), ms(median(r.ds)), ms(percentile(r.ds, 99)), ms(slices.Max(r.ds)))
		}
	}
	b.res.tables = append(b.res.tables, t)
	b.res.check("slow-p99", "small pages during slow clients", float64(percentile(busy, 99).Microseconds())/1000, "idle p99 %s ms", ms(percentile(idle, 99)))
	if len(fastHolds) == 0 || len(slowHolds) < o.slowClients {
		return fmt.Errorf("saw %d fast and %d slow page transactions, want %d each", len(fastHolds), len(slowHolds), o.slowClients)
	}
	b.res.check("slow-hold", "slow page, median", ratio(median(slowHolds).Seconds(), median(fastHolds).Seconds()), "%s vs %s ms", ms(median(slowHolds)), ms(median(fastHolds)))
	b.res.check("slow-hold", "slow page, worst", ratio(slices.Max(slowHolds).Seconds(), slices.Max(fastHolds).Seconds()), "%s vs %s ms", ms(slices.Max(slowHolds)), ms(slices.Max(fastHolds)))
	return nil
}

// scrape reads the counters of informe's /metrics that say what the spool
// and the limits did.
func scrape(ctx context.Context, inf *informe) map[string]float64 {
	m := map[string]float64{}
	var body strings.Builder
	_, _ = inf.fetch(ctx, inf.ops+"/metrics", nil, &body)
	for line := range strings.Lines(body.String()) {
		name, val, _ := strings.Cut(strings.TrimSpace(line), " ")
		if v, err := strconv.ParseFloat(val, 64); err == nil && v != 0 &&
			(strings.HasPrefix(name, "informe_spool") || strings.HasPrefix(name, "informe_http_refusals")) {
			m[name] = v
		}
	}
	return m
}

// burst sends 64 CSV and 16 XLSX 10,000-row pages at once to a fresh
// informe, each on a connection of its own, twice (the second time the
// XLSX pages 100 ms first): each must succeed whole or get 503, and
// informe's memory stay bounded.
func (b *bench) burst(ctx context.Context) error {
	const nCSV, nXLSX = 64, 16
	logf("burst: fresh informe, %d CSV and %d XLSX pages at once, twice", nCSV, nXLSX)
	inf, err := b.current.start(ctx)
	if err != nil {
		return err
	}
	defer inf.stop()
	if err := inf.warm(ctx, pagePath("xlsx", 1, small), nil); err != nil {
		return err
	}
	t := table{title: "Burst", header: []string{"round", "csv 200", "csv 503", "xlsx 200", "xlsx 503", "other", "last ended s"}}
	failures := 0
	for round := range 2 {
		count := map[string]int{}
		var mu sync.Mutex
		var wg sync.WaitGroup
		began := time.Now()
		for i, p := range b.spread(nCSV) {
			for _, f := range []string{"csv", "xlsx"} {
				if f == "xlsx" && i >= nXLSX {
					continue
				}
				wg.Go(func() {
					if round == 1 && f == "csv" {
						time.Sleep(100 * time.Millisecond)
					}
					c := &http.Client{Transport: &http.Transport{DisableCompression: true}}
					defer c.CloseIdleConnections()
					s, err := fetch(ctx, c, inf.base+pagePath(f, p, perPage), inf.token, nil, nil)
					mu.Lock()
					defer mu.Unlock()
					switch {
					case err == nil && (s.status == http.StatusOK || s.status == http.StatusServiceUnavailable):
						count[fmt.Sprint(f, " ", s.status)]++
					default:
						count["other"]++
					}
				})
			}
		}
		wg.Wait()
		failures += count["other"]
		t.add(round+1, count["csv 200"], count["csv 503"], count["xlsx 200"], count["xlsx 503"], count["other"], fmt.Sprintf("%.2f", time.Since(began).Seconds()))
	}
	growth, peak := inf.memory()
	t.notes = []string{fmt.Sprintf("informe's peak RSS %s MiB, growth over the warm-up %s MiB; spool counters %v", mibs(peak), mibs(growth), scrape(ctx, inf))}
	inf.stop()
	// informe's own account: every 200 streamed its rows whole.
	lines, err := inf.logged("/api/general-report")
	if err != nil {
		return err
	}
	for _, l := range lines[min(1, len(lines)):] { // after the warm-up
		if l.Status == http.StatusOK && (l.Aborted || l.Rows != perPage) {
			failures++
		}
	}
	b.res.tables = append(b.res.tables, t)
	b.res.check("burst-whole", fmt.Sprintf("%d CSV and %d XLSX pages at once, twice", nCSV, nXLSX), float64(failures), "")
	b.res.check("burst-rss", "burst", float64(peak)/mib, "growth %s MiB", mibs(growth))
	return nil
}

// gzip measures page 1 of 10,000 CSV rows with Accept-Encoding gzip (and
// zstd, for comparison) next to identity, on one fresh informe, the codings
// alternating after one warm-up round.
func (b *bench) gzip(ctx context.Context) error {
	logf("gzip: fresh informe, a %d-row CSV page with and without compression", perPage)
	inf, err := b.current.start(ctx)
	if err != nil {
		return err
	}
	defer inf.stop()
	codings := []string{"identity", "gzip", "zstd"}
	got := make([]samples, len(codings))
	steps := make([]func(context.Context) error, len(codings))
	for i, c := range codings {
		steps[i] = func(ctx context.Context) error {
			s, err := inf.measure(ctx, pagePath("csv", 1, perPage), http.Header{"Accept-Encoding": {c}})
			if err == nil && s.header.Get("Content-Encoding") != strings.TrimPrefix(c, "identity") {
				err = fmt.Errorf("asked for %s, informe answered Content-Encoding %q", c, s.header.Get("Content-Encoding"))
			}
			got[i] = append(got[i], s)
			return err
		}
	}
	if err := interleave(ctx, b.o.runs+1, steps...); err != nil {
		return err
	}
	t := table{title: "Compression", notes: []string{fmt.Sprintf("page 1, %d CSV rows, %d runs each after one warm-up round, codings alternating; loopback", perPage, b.o.runs)},
		header: []string{"Accept-Encoding", "bytes", "wall ms", "min-max ms", "TTFB ms", "CPU s"}}
	for i, c := range codings {
		got[i] = got[i][1:]
		t.add(c, got[i].bytes(), ms(got[i].wall()), got[i].spread(), ms(got[i].ttfb()), fmt.Sprintf("%.3f", got[i].cpu()))
	}
	b.res.tables = append(b.res.tables, t)
	id, gz := got[0], got[1]
	b.res.check("gzip-wall", "gzip CSV page", gz.wall().Seconds()/id.wall().Seconds(), "%s vs %s ms", ms(gz.wall()), ms(id.wall()))
	b.res.check("gzip-size", "gzip CSV page", 100*float64(gz.bytes())/float64(id.bytes()), "%d vs %d bytes", gz.bytes(), id.bytes())
	return nil
}
