package main

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/informe/informe/internal/postgres"
	"github.com/informe/informe/internal/secret"
)

const (
	floodClients = 32              // clients sending made-up tokens
	floodReads   = 400             // the legitimate client's pages per case
	floodRounds  = 10              // rounds the reads are split into, the cases alternating
	floodFor     = 5 * time.Minute // the longest a flood lasts
	floodMost    = 100000          // the most requests a flood client sends
)

// floodCase is one informe read by the legitimate client alone and under
// the flood.
type floodCase struct {
	inf            *informe
	alone, flooded reads
	statuses       map[string]int // the flood's answers, by status
}

// reads are the legitimate client's pages of a case, with the CPU seconds
// informe and its backends spent meanwhile and the time they took.
type reads struct {
	ds         []time.Duration
	bad        int // answers other than 200
	cpu, pgCPU float64
	took       time.Duration
}

// during reads n pages from the from-th on from inf into r, through flood,
// which runs the reads while it floods informe (nil: no flood), and adds
// the CPU seconds and the time.
func (r *reads) during(ctx context.Context, b *bench, inf *informe, from, n int, flood func(context.Context, func(context.Context) error) error) error {
	read := func(ctx context.Context) error {
		ds, bad, err := b.read(ctx, inf, from, n)
		r.ds, r.bad = append(r.ds, ds...), r.bad+bad
		return err
	}
	if flood == nil {
		flood = func(ctx context.Context, f func(context.Context) error) error { return f(ctx) }
	}
	pg0, _ := inf.backendsCPU(ctx) // an error comes again below
	cpu0, began := procCPU(inf.cmd.Process.Pid), time.Now()
	err := flood(ctx, read)
	r.took += time.Since(began)
	r.cpu += procCPU(inf.cmd.Process.Pid) - cpu0
	pg1, perr := inf.backendsCPU(ctx)
	for pid, t := range pg1 {
		r.pgCPU += t - pg0[pid]
	}
	return cmp.Or(err, perr)
}

// flood measures a client with a valid token reading 100-row JSON pages one
// at a time, alone and while floodClients clients send requests each with
// a made-up token of a valid token's shape, on a fresh informe of each
// build, the cases alternating.
func (b *bench) flood(ctx context.Context) error {
	logf("flood: %d 100-row JSON pages alone and under %d clients of made-up tokens, on %d informes", floodReads, floodClients, len(b.launchers))
	var cs []*floodCase
	defer func() {
		for _, c := range cs {
			c.inf.stop()
		}
	}()
	for _, l := range b.launchers {
		inf, err := b.session(ctx, l, "flood, "+l.label, floodPath(1), "", 0)
		if err != nil {
			return err
		}
		cs = append(cs, &floodCase{inf: inf, statuses: map[string]int{}})
	}
	per := floodReads / floodRounds
	var steps []func(context.Context) error
	for _, c := range cs {
		aloneRound, floodRound := 0, 0
		steps = append(steps, func(ctx context.Context) error {
			aloneRound++
			return c.alone.during(ctx, b, c.inf, (aloneRound-1)*per, per, nil)
		}, func(ctx context.Context) error {
			floodRound++
			err := c.flooded.during(ctx, b, c.inf, (floodRound-1)*per, per, func(ctx context.Context, read func(context.Context) error) error {
				statuses, err := flooding(ctx, c.inf.base+floodPath(1), read)
				for s, n := range statuses {
					c.statuses[s] += n
				}
				return err
			})
			return cmp.Or(err, b.settle(ctx, c.inf))
		})
	}
	if err := interleave(ctx, floodRounds, steps...); err != nil {
		return err
	}
	t := table{title: "Flood of made-up tokens", header: []string{"informe", "legitimate client", "pages", "not 200", "p50 ms", "p99 ms", "max ms",
		"CPU s", "PG CPU s", "flood answered", "flood answers", "flood req/s"},
		notes: []string{
			fmt.Sprintf("each informe a fresh process, default limits; one client with a valid token reads %d 100-row JSON pages spread over the report, one at a time, alone and while %d clients send requests for the same endpoint, each request with a new random token of a valid token's shape (%s and %d base64url characters) on a keep-alive connection of its client's own",
				floodReads, floodClients, secret.TokenPrefix, secret.TokenBodyLen),
			fmt.Sprintf("%d rounds of %d pages each alone and under the flood, every informe's cases alternating, reversed every other round; the flood starts before the pages, once every flood client has had an answer, and stops after them; the next case waits until informe has served no request and its backends have run no statement for a second", floodRounds, per),
			"wall: request sent to last byte; CPU s: informe's, PG CPU s: its backends' (/proc schedstat), in all, over the case's pages; flood answered: responses read whole, those cut short when the flood stopped left out",
		}}
	for _, c := range cs {
		label := c.inf.launcher.label
		row := func(what string, r reads, flood ...any) {
			t.add(append([]any{label, what, len(r.ds), r.bad, ms(median(r.ds)), ms(percentile(r.ds, 99)), ms(slices.Max(r.ds)),
				fmt.Sprintf("%.2f", r.cpu), fmt.Sprintf("%.2f", r.pgCPU)}, flood...)...)
		}
		answered := 0
		for _, n := range c.statuses {
			answered += n
		}
		row("alone", c.alone, "-", "-", "-")
		row("under the flood", c.flooded, answered, countsOf(c.statuses), fmt.Sprintf("%.0f", float64(answered)/c.flooded.took.Seconds()))
		if m := metricValues(ctx, c.inf, "informe_token_", "informe_http_refusals"); len(m) > 0 {
			maps.DeleteFunc(m, func(_ string, v float64) bool { return v == 0 })
			t.notes = append(t.notes, fmt.Sprintf("%s's token and refusal counters: %v", label, m))
		}
		alone, flooded := percentile(c.alone.ds, 99), percentile(c.flooded.ds, 99)
		subject := "100-row JSON pages under the flood, " + label
		b.res.check("flood-p99", subject, flooded.Seconds()/alone.Seconds(), "%s vs %s ms alone; p50 %s vs %s ms",
			ms(flooded), ms(alone), ms(median(c.flooded.ds)), ms(median(c.alone.ds)))
		b.res.check("flood-legit", subject, float64(c.alone.bad+c.flooded.bad), "")
	}
	b.res.tables = append(b.res.tables, t)
	return nil
}

// settle waits until informe has served no request and none of its
// backends has run a statement for a second on end, so that the flood's
// last requests (those its clients sent just before it stopped, which
// informe may read after) and the cancel requests of lookups its clients
// left weigh on no later case; it gives up after 30 s.
func (b *bench) settle(ctx context.Context, inf *informe) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	quiet := time.Now()
	for t := time.NewTicker(10 * time.Millisecond); ; <-t.C {
		active, err := postgres.InformeActive(ctx, b.pool)
		serving, ok := metricValues(ctx, inf, "informe_http_requests_in_flight")["informe_http_requests_in_flight"]
		switch {
		case ctx.Err() != nil:
			return fmt.Errorf("%s still busy 30 s after the flood: %d requests, %d statements", inf.launcher.label, int(serving), active)
		case err != nil || !ok || serving > 0 || active > 0:
			quiet = time.Now()
		case time.Since(quiet) >= time.Second:
			return nil
		}
	}
}

// floodPath is the legitimate client's page n of 100 rows.
func floodPath(n int64) string {
	return fmt.Sprintf("/api/general-report?result_per_page=%d&page=%d", small, n)
}

// read reads n 100-row JSON pages spread over the report, from the
// from-th on, one at a time, and returns their times and how many were not
// 200.
func (b *bench) read(ctx context.Context, inf *informe, from, n int) (ds []time.Duration, bad int, err error) {
	pages := max(b.total/small, 1)
	for i := from; i < from+n; i++ {
		s, err := inf.fetch(ctx, floodPath(1+int64(i)*7919%pages), nil, nil)
		if err != nil {
			return ds, bad, err
		}
		if s.status != http.StatusOK {
			bad++
		}
		ds = append(ds, s.wall)
	}
	return ds, bad, nil
}

// flooding runs legitimate while floodClients clients GET url, each request
// with a new made-up token, and returns the statuses of the flood's
// answers ("error" for a request that failed). The flood lasts at most
// floodFor, each client at most floodMost requests: one that ends before
// legitimate does is an error, as the flood was thinner.
func flooding(ctx context.Context, url string, legitimate func(context.Context) error) (map[string]int, error) {
	fctx, stop := context.WithTimeout(ctx, floodFor)
	defer stop()
	var wg, answered sync.WaitGroup
	var ranOut atomic.Bool
	answered.Add(floodClients)
	got := make([]map[string]int, floodClients)
	for i := range floodClients {
		wg.Go(func() {
			var out bool
			got[i], out = flooder(fctx, url, answered.Done)
			if out {
				ranOut.Store(true)
			}
		})
	}
	answered.Wait()
	err := legitimate(fctx)
	thin := ranOut.Load() // before stop: till then only its count ends a client
	stop()
	wg.Wait()
	statuses := map[string]int{}
	for _, g := range got {
		for s, n := range g {
			statuses[s] += n
		}
	}
	switch {
	case err != nil && fctx.Err() != nil && ctx.Err() == nil:
		return statuses, fmt.Errorf("the flood's %s passed before the legitimate client's pages were read", floodFor)
	case err == nil && thin:
		return statuses, errors.New("a flood client sent its requests before the legitimate client's pages were read")
	}
	return statuses, err
}

// flooder GETs url again and again, each time with a new made-up token,
// until ctx ends or it sent floodMost requests (ranOut), and returns the
// answers' statuses; answered is called once, at its first answer or its
// end.
func flooder(ctx context.Context, url string, answered func()) (statuses map[string]int, ranOut bool) {
	once := sync.OnceFunc(answered)
	defer once()
	tr := &http.Transport{DisableCompression: true}
	defer tr.CloseIdleConnections()
	statuses = map[string]int{}
	for range floodMost {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		req.Header.Set("Authorization", "Bearer "+madeUpToken())
		resp, err := tr.RoundTrip(req)
		if err == nil {
			_, err = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
		switch {
		case ctx.Err() != nil:
			return statuses, false
		case err != nil:
			statuses["error"]++
		default:
			statuses[strconv.Itoa(resp.StatusCode)]++
		}
		once()
	}
	return statuses, true
}

// madeUpToken returns a random token of the shape informe issues, which
// no informe issued.
func madeUpToken() string {
	raw := make([]byte, 32)
	_, _ = rand.Read(raw) // never fails (crypto/rand)
	return secret.TokenPrefix + base64.RawURLEncoding.EncodeToString(raw)
}

// countsOf writes counts as "401: 9000, 503: 12", by key.
func countsOf(counts map[string]int) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(counts)) {
		parts = append(parts, fmt.Sprintf("%s: %d", k, counts[k]))
	}
	return strings.Join(parts, ", ")
}
