package main

import (
	"context"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/informe/informe/internal/postgres"
)

const (
	slowClients = 32                   // throttled clients in the slow part
	slowRate    = 2048                 // bytes per second each of them reads
	probes      = 100                  // 10-row JSON pages timed in the slow part
	sampleEvery = 5 * time.Millisecond // pg_stat_activity's sampling: the resolution of the connection holds
)

// holds samples pg_stat_activity until the returned func is called, which
// returns how long each request transaction (informe's snapshots, Begin to
// Close) of informe's backends held its connection.
func (b *bench) holds(ctx context.Context) func() []time.Duration {
	began := time.Now()
	ctx, cancel := context.WithCancel(ctx)
	held := map[[2]int64]time.Duration{} // (pid, xact_start): to the last sample that saw it open
	var wg sync.WaitGroup
	wg.Go(func() {
		for t := time.NewTicker(sampleEvery); ctx.Err() == nil; <-t.C {
			// Request transactions only: not the pool's ping nor the
			// token check, which run in transactions of their own.
			postgres.InformeTransactions(ctx, b.pool, began, func(pid int64, start, now time.Time) {
				held[[2]int64{pid, start.UnixNano()}] = now.Sub(start)
			})
		}
	})
	return func() []time.Duration {
		cancel()
		wg.Wait()
		return slices.Collect(maps.Values(held))
	}
}

// client reads a page on a connection of its own, after a delay, at full
// speed or, as on a slow link, at rate bytes a second with a small receive
// buffer; with retry, it asks again after a 503.
type client struct {
	path     string
	rate     int
	retry    bool
	delay    time.Duration
	busy     int           // 503s before its answer
	status   int           // of its answer
	admitted chan struct{} // closed at its answer, or its end
	whole    bool          // the body was read to its end
	after    string        // the answer's Retry-After
	err      error
}

func (c *client) run(ctx context.Context, base, token string) {
	admit := sync.OnceFunc(func() { close(c.admitted) })
	defer admit()
	time.Sleep(c.delay)
	dialer := &net.Dialer{}
	if c.rate > 0 {
		dialer.Control = func(_, _ string, rc syscall.RawConn) error {
			return rc.Control(func(fd uintptr) { _ = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 8<<10) })
		}
	}
	tr := &http.Transport{DisableCompression: true, DialContext: dialer.DialContext}
	defer tr.CloseIdleConnections()
	var resp *http.Response
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+c.path, nil)
		req.Header.Set("Authorization", "Bearer "+token)
		if resp, c.err = tr.RoundTrip(req); c.err != nil {
			return
		}
		if c.status = resp.StatusCode; c.status != http.StatusServiceUnavailable || !c.retry || c.busy == 200 {
			break
		}
		resp.Body.Close()
		c.busy++
		time.Sleep(250 * time.Millisecond)
	}
	defer resp.Body.Close()
	c.after = resp.Header.Get("Retry-After")
	admit()
	var body io.Reader = resp.Body
	if c.rate > 0 {
		body = readFunc(func(p []byte) (int, error) {
			time.Sleep(512 * time.Second / time.Duration(c.rate))
			return resp.Body.Read(p[:min(len(p), 512)])
		})
	}
	_, err := io.Copy(io.Discard, body)
	if c.whole = err == nil; err != nil && ctx.Err() == nil {
		c.err = err
	}
}

// clients starts a client like c for each path at once.
func clients(ctx context.Context, inf *informe, c client, paths []string, wg *sync.WaitGroup) []*client {
	var cs []*client
	for _, p := range paths {
		c := c
		c.path, c.admitted = p, make(chan struct{})
		cs = append(cs, &c)
		wg.Go(func() { c.run(ctx, inf.base, inf.token) })
	}
	return cs
}

// spread returns n 10,000-row pages in format, spread over the report.
func (b *bench) spread(format string, n int) []string {
	paths := make([]string, n)
	for i := range paths {
		paths[i] = pagePath(format, 1+int64(i)*(b.lastFull-1)/int64(max(n-1, 1)), perPage)
	}
	return paths
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
	logf("slow: fresh informe, %d clients at full speed, then at %d B/s", slowClients, slowRate)
	inf, err := b.session(ctx, b.current, "slow", pagePath("csv", 1, small), "", 0)
	if err != nil {
		return err
	}
	defer inf.stop()
	idle, err := b.probe(ctx, inf, probes)
	if err != nil {
		return err
	}
	pages := b.spread("csv", slowClients)

	held := b.holds(ctx)
	var wg sync.WaitGroup
	fast := clients(ctx, inf, client{retry: true}, pages, &wg)
	wg.Wait()
	time.Sleep(10 * sampleEvery)
	fastHolds := held()

	held, began := b.holds(ctx), time.Now()
	slowCtx, stopSlow := context.WithCancel(ctx)
	defer stopSlow()
	var slowWG sync.WaitGroup
	slow := clients(slowCtx, inf, client{retry: true, rate: slowRate}, pages, &slowWG)
	for _, c := range slow {
		<-c.admitted
	}
	admitted := time.Since(began)
	// The slow clients' pages should leave the database at database speed:
	// wait as long as the fast pages took, twice, then take the holds.
	time.Sleep(2*slices.Max(append(fastHolds, time.Second)) + 10*sampleEvery)
	slowHolds := held()
	busy, err := b.probe(ctx, inf, probes)
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
		if c.err != nil || c.status != http.StatusOK || c.rate == 0 && !c.whole {
			problems = append(problems, fmt.Sprintf("%s at %d B/s: status %d, %v", c.path, c.rate, c.status, c.err))
		}
	}
	t := table{title: "Slow clients", header: []string{"what", "n", "min ms", "median ms", "p99 ms", "max ms"}, notes: []string{
		fmt.Sprintf("one fresh informe, default limits; %d clients read 10,000-row CSV pages spread over the report, at full speed and then at %d B/s (512-byte reads, 8 KiB receive buffer)", slowClients, slowRate),
		fmt.Sprintf("connection hold: a request transaction of an informe backend in pg_stat_activity, sampled every %s; the slow clients were all admitted after %.2f s", sampleEvery, admitted.Seconds()),
		fmt.Sprintf("503s before admission: fast %d, slow %d; spool and refusal counters: %v; client errors: %v", busyOf[0], busyOf[slowRate], metrics, problems),
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
	if len(fastHolds) == 0 || len(slowHolds) < slowClients {
		return fmt.Errorf("saw %d fast and %d slow page transactions, want %d each", len(fastHolds), len(slowHolds), slowClients)
	}
	b.res.check("slow-hold", "slow page, median", median(slowHolds).Seconds()/median(fastHolds).Seconds(), "%s vs %s ms", ms(median(slowHolds)), ms(median(fastHolds)))
	b.res.check("slow-hold", "slow page, worst", slices.Max(slowHolds).Seconds()/slices.Max(fastHolds).Seconds(), "%s vs %s ms", ms(slices.Max(slowHolds)), ms(slices.Max(fastHolds)))
	return nil
}

// burst sends 64 CSV and 16 XLSX 10,000-row pages at once, twice (the XLSX
// ones 100 ms first the second time), with one token: each must be whole
// or refused with a Retry-After (503, the server at capacity, or 429, the
// token past its own limit), and informe's memory bounded.
func (b *bench) burst(ctx context.Context) error {
	const nCSV, nXLSX = 64, 16
	logf("burst: fresh informe, %d CSV and %d XLSX pages at once, twice", nCSV, nXLSX)
	inf, err := b.session(ctx, b.current, "burst", pagePath("xlsx", 1, small), "", 0)
	if err != nil {
		return err
	}
	defer inf.stop()
	t := table{title: "Burst", header: []string{"round", "csv 200", "csv 503", "csv 429", "xlsx 200", "xlsx 503", "xlsx 429", "other", "last ended s"}}
	failures := 0
	for round := range 2 {
		rctx, cancel := context.WithTimeout(ctx, 5*time.Minute) // a hung server's clients count as "other"
		var wg sync.WaitGroup
		began := time.Now()
		cs := map[string][]*client{
			"csv":  clients(rctx, inf, client{delay: time.Duration(round) * 100 * time.Millisecond}, b.spread("csv", nCSV), &wg),
			"xlsx": clients(rctx, inf, client{}, b.spread("xlsx", nCSV)[:nXLSX], &wg),
		}
		wg.Wait()
		cancel()
		count := map[string]int{}
		for f, cs := range cs {
			for _, c := range cs {
				refused := (c.status == http.StatusServiceUnavailable || c.status == http.StatusTooManyRequests) && c.after != ""
				if c.err == nil && c.whole && (c.status == http.StatusOK || refused) {
					count[fmt.Sprint(f, " ", c.status)]++
				} else {
					count["other"]++
				}
			}
		}
		failures += count["other"]
		t.add(round+1, count["csv 200"], count["csv 503"], count["csv 429"], count["xlsx 200"], count["xlsx 503"], count["xlsx 429"], count["other"], fmt.Sprintf("%.2f", time.Since(began).Seconds()))
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

// gzip measures a 10,000-row CSV page gzipped (and zstd) next to identity,
// on one informe, the codings alternating after one warm-up round.
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
