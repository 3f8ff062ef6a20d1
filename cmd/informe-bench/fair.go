package main

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/informe/informe/auth"
)

const (
	fairLoops     = 20              // token A's export loops at once
	fairExports   = 20              // token B's exports, one at a time, in each phase
	fairContracts = 1000            // contracts in each export: about the demo's whole report
	fairAloneFor  = 5 * time.Second // token A's loops alone, before B's phase beside them
)

// fairExport is the CSV export of the contracts after from, fairContracts
// of them.
func fairExport(from int) string {
	f := fmt.Sprintf("contract_id gt %d and contract_id le %d", from, from+fairContracts)
	return "/api/general-report/export?format=csv&%24filter=" + url.PathEscape(f)
}

// fairPhase is what token B saw in one phase: its exports' and 100-row
// pages' times, its exports' first bytes, and the statuses of its
// exports.
type fairPhase struct {
	exports, pages, ttfb []time.Duration
	statuses             map[int]int
}

// add adds q's figures to p's.
func (p *fairPhase) add(q fairPhase) {
	p.exports = append(p.exports, q.exports...)
	p.pages = append(p.pages, q.pages...)
	p.ttfb = append(p.ttfb, q.ttfb...)
	for s, n := range q.statuses {
		p.statuses[s] += n
	}
}

// fairB runs token B's exports one at a time, then its 100-row pages.
func (b *bench) fairB(ctx context.Context, inf *informe) (fairPhase, error) {
	p := fairPhase{statuses: map[int]int{}}
	for range fairExports {
		s, err := inf.fetch(ctx, fairExport(0), nil, nil)
		if err != nil {
			return p, err
		}
		p.statuses[s.status]++
		if s.status == http.StatusOK {
			p.exports = append(p.exports, s.wall)
			p.ttfb = append(p.ttfb, s.ttfb)
		}
	}
	for i := range probes {
		s, err := inf.fetch(ctx, pagePath("json", 1+int64(i*7919)%(b.total/small), small), nil, nil)
		if err == nil && s.status != http.StatusOK {
			err = fmt.Errorf("fair: a 100-row page: status %d", s.status)
		}
		if err != nil {
			return p, err
		}
		p.pages = append(p.pages, s.wall)
	}
	return p, nil
}

// fairLoopsA starts token A's fairLoops export loops through infA, until
// ctx ends; the func returned waits for them and returns their statuses
// (-1: cut by ctx's end, or failed).
func fairLoopsA(ctx context.Context, infA *informe) (wait func() map[int]int) {
	var mu sync.Mutex
	statuses := map[int]int{}
	var wg sync.WaitGroup
	for i := range fairLoops {
		wg.Go(func() {
			for ctx.Err() == nil {
				s, err := infA.fetch(ctx, fairExport((i+1)*fairContracts), nil, nil)
				mu.Lock()
				if err != nil {
					statuses[-1]++
				} else {
					statuses[s.status]++
				}
				mu.Unlock()
				// A refused request waits as its Retry-After says, as
				// Power Query's Web.Contents and curl --retry do.
				if err == nil && (s.status == http.StatusTooManyRequests || s.status == http.StatusServiceUnavailable) {
					secs, _ := strconv.Atoi(s.header.Get("Retry-After"))
					select {
					case <-ctx.Done():
					case <-time.After(time.Duration(max(secs, 1)) * time.Second):
					}
				}
			}
		})
	}
	return func() map[int]int {
		wg.Wait()
		return statuses
	}
}

// settle waits, 30 s at most, for inf to have no request in flight: cut
// requests end on the server as it next writes to them.
func settle(ctx context.Context, inf *informe) error {
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if metricValues(ctx, inf, "informe_http_requests_in_flight")["informe_http_requests_in_flight"] == 0 {
			return nil
		}
	}
	return ctx.Err()
}

// fair measures token B's whole exports (one at a time) and 100-row pages
// alone, then while token A runs fairLoops export loops at once, then
// alone again (alone is both phases together, so that the machine's drift
// over the run weighs on both sides), on one informe with default limits:
// turns shared by token keep B's exports near their time alone, and small
// pages never wait behind exports.
func (b *bench) fair(ctx context.Context) error {
	logf("fair: fresh informe, token B alone, then with token A's %d export loops", fairLoops)
	inf, err := b.session(ctx, b.current, "fair", fairExport(0), "", 0)
	if err != nil {
		return err
	}
	defer inf.stop()
	tokens := auth.NewStore(b.pool)
	secretA, err := tokens.Replace(ctx, "bench-fair-a", nil, time.Time{})
	if err != nil {
		return err
	}
	launcherA := *inf.launcher
	launcherA.token = secretA
	infA := *inf
	infA.launcher = &launcherA

	alone, err := b.fairB(ctx, inf)
	if err != nil {
		return err
	}

	// A alone: what its burst, reading in batches and giving way to no
	// one, exports in fairAloneFor.
	aloneCtx, stopAlone := context.WithCancel(ctx)
	doneAlone := fairLoopsA(aloneCtx, &infA)
	time.Sleep(fairAloneFor)
	stopAlone()
	statusesAlone := doneAlone()
	if err := settle(ctx, inf); err != nil {
		return err
	}

	loopCtx, stop := context.WithCancel(ctx)
	defer stop()
	doneA := fairLoopsA(loopCtx, &infA)
	time.Sleep(time.Second) // A's loops fill their turns and queue
	busy, err := b.fairB(ctx, inf)
	stop()
	statusesA := doneA()
	if err != nil {
		return err
	}
	metrics := metricValues(ctx, inf, "informe_http_refusals", "informe_export_turn", "informe_export_share")
	if err := settle(ctx, inf); err != nil {
		return err
	}
	after, err := b.fairB(ctx, inf)
	if err != nil {
		return err
	}
	alone.add(after)

	t := table{title: "Turns shared by token", header: []string{"token B's", "while", "n", "p50 ms", "p99 ms", "max ms", "first byte p50 ms", "statuses"}, notes: []string{
		fmt.Sprintf("one fresh informe, default limits; B's exports are CSV exports of %d contracts (about the demo's whole report), one at a time, %d of them in each phase; its pages are 100-row JSON pages, %d of them in each phase, one at a time; alone is measured before A's loops and again after them, both together", fairContracts, fairExports, probes),
		fmt.Sprintf("token A ran %d loops of exports like B's at once, over other contracts, each waiting as Retry-After says after a 429 or 503; A's answers: %v (-1: cut by the phase's end); turns and refusals: %v", fairLoops, statusesA, metrics),
		fmt.Sprintf("token A's loops alone for %v, before: %v, %.1f exports a second", fairAloneFor, statusesAlone, float64(statusesAlone[http.StatusOK])/fairAloneFor.Seconds()),
	}}
	for _, r := range []struct {
		what, while string
		ds, ttfb    []time.Duration
		statuses    map[int]int
	}{
		{"exports", "alone", alone.exports, alone.ttfb, alone.statuses},
		{"exports", fmt.Sprintf("A's %d loops", fairLoops), busy.exports, busy.ttfb, busy.statuses},
		{"100-row pages", "alone", alone.pages, nil, nil}, {"100-row pages", fmt.Sprintf("A's %d loops", fairLoops), busy.pages, nil, nil},
	} {
		if len(r.ds) == 0 {
			t.add(r.what, r.while, 0, "-", "-", "-", "-", r.statuses)
			continue
		}
		first := "-"
		if len(r.ttfb) > 0 {
			first = ms(median(r.ttfb))
		}
		t.add(r.what, r.while, len(r.ds), ms(median(r.ds)), ms(percentile(r.ds, 99)), ms(slices.Max(r.ds)), first, r.statuses)
	}
	b.res.tables = append(b.res.tables, t)
	b.res.check("fair-refused", "token B's exports with A's loops", float64(fairExports-busy.statuses[http.StatusOK]), "statuses %v", busy.statuses)
	if len(busy.exports) > 0 && len(alone.exports) > 0 {
		b.res.check("fair-export", "token B's exports, p50", median(busy.exports).Seconds()/median(alone.exports).Seconds(),
			"%s vs %s ms", ms(median(busy.exports)), ms(median(alone.exports)))
	}
	b.res.check("fair-page", "token B's 100-row pages, p99", percentile(busy.pages, 99).Seconds()/percentile(alone.pages, 99).Seconds(),
		"%s vs %s ms", ms(percentile(busy.pages, 99)), ms(percentile(alone.pages, 99)))
	return tokens.Delete(ctx, "bench-fair-a")
}
