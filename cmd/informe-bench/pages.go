package main

import (
	"context"
	"fmt"

	"github.com/informe/informe/report"
)

// page is one page of the unfiltered report, the query informe runs for it
// and COPY of that query.
type page struct {
	number, size int64
	query        query
	pgx, psql    samples
}

func (p *page) String() string { return fmt.Sprintf("page %d, %d rows", p.number, p.size) }

func pagePath(format string, number, size int64) string {
	return fmt.Sprintf("/api/general-report?format=%s&result_per_page=%d&page=%d", format, size, number)
}

// pages measures each format's page 1 and deepest full page of 10,000
// rows, and 100-row pages, each with a fresh informe warmed up with a
// 100-row page of its format, next to COPY of the same page query; with a
// baseline, every case also with the baseline's informe, the requests
// alternating.
func (b *bench) pages(ctx context.Context) error {
	first, last, little := &page{number: 1, size: perPage}, &page{number: b.lastFull, size: perPage}, &page{number: 1, size: small}
	runs := b.o.runs
	logf("pages: COPY of each page through pgx and psql")
	var startup samples
	for _, p := range []*page{first, last, little} {
		q, _, err := traced(ctx, b.dbURL, report.Query{Page: p.number, PerPage: p.size}, false)
		if err != nil {
			return err
		}
		p.query = q
		for i := range runs + 1 { // the first warms the cache
			s, err := copyOnce(ctx, b.pool, q.copySQL(), p.size)
			if err != nil {
				return fmt.Errorf("%s: %w", p, err)
			}
			if i == 0 {
				continue
			}
			p.pgx = append(p.pgx, s)
			if s, err = psql(ctx, b.dbURL, q.copySQL()); err != nil {
				return err
			}
			p.psql = append(p.psql, s)
			if s, err = psql(ctx, b.dbURL, "SELECT 1"); err != nil {
				return err
			}
			startup = append(startup, s)
		}
	}
	t := table{title: "Pages", header: []string{"format", "page", "informe", "bytes", "wall ms", "min-max ms", "TTFB ms", "CPU s", "PG CPU s",
		"rows/s", "x psql COPY", "x pgx COPY", "RSS growth MiB"},
		notes: []string{
			fmt.Sprintf("each case: a fresh informe warmed up with a %d-row page of its format, then %d requests; with a baseline, both started, then their requests alternating", small, runs),
			"wall: request sent to last byte; TTFB: request written to first byte; CPU s: informe's, PG CPU s: its backends' (/proc schedstat, mean per request); medians otherwise",
			fmt.Sprintf("COPY: COPY (informe's page query) TO STDOUT WITH CSV through pgx on an open connection, and through psql (its start-up and connection, SELECT 1: %s ms, included)", ms(startup.wall())),
		}}
	ls := []*launcher{b.current}
	if b.baseline != nil {
		ls = append(ls, b.baseline)
	}
	for _, f := range []string{"json", "ndjson", "csv", "xlsx"} {
		cur := map[*page]*informe{}
		for _, p := range []*page{first, last, little} {
			if p == little && f == "xlsx" {
				continue
			}
			subject := fmt.Sprintf("%s %s", f, p)
			logf("pages: %s", subject)
			var ss []*informe
			for _, l := range ls {
				s, err := b.session(ctx, l, subject+", "+l.label, pagePath(f, 1, small), pagePath(f, p.number, p.size), p.size)
				if err != nil {
					stopAll(ss)
					return err
				}
				ss = append(ss, s)
			}
			if err := measureAll(ctx, runs, ss); err != nil {
				return err
			}
			for i, s := range ss {
				rps := float64(p.size) / s.ss.wall().Seconds()
				t.add(f, p, ls[i].label, s.ss.bytes(), ms(s.ss.wall()), s.ss.spread(), ms(s.ss.ttfb()),
					fmt.Sprintf("%.4f", s.ss.cpu()), fmt.Sprintf("%.4f", s.ss.pgCPU()), fmt.Sprintf("%.0f", rps),
					fmt.Sprintf("%.2f", rps*p.psql.wall().Seconds()/float64(p.size)),
					fmt.Sprintf("%.2f", rps*p.pgx.wall().Seconds()/float64(p.size)), mibs(s.growth))
			}
			cur[p] = ss[0]
			b.pageChecks(f, p, subject, ss)
		}
		w1, wl := cur[first].ss.wall(), cur[last].ss.wall()
		b.res.check("page-depth", f+" "+last.String(), wl.Seconds()/w1.Seconds(), "%s vs %s ms", ms(wl), ms(w1))
		if f != "xlsx" {
			g1, gs := cur[first].growth, cur[little].growth
			b.res.check("page-rss", f+" "+first.String(), float64(g1-gs)/mib, "growth %s vs %s MiB", mibs(g1), mibs(gs))
		}
	}
	b.res.tables = append(b.res.tables, t)
	for _, p := range []*page{first, last} {
		pl, err := explain(ctx, b.pool, p.String()+": one-off (custom) plan", "ANALYZE, BUFFERS, SETTINGS", p.query.inline())
		if err != nil {
			return err
		}
		b.res.plans = append(b.res.plans, pl)
	}
	return nil
}

// pageChecks checks one page case (ss: current, then any baseline)
// against its goals, and against the baseline's.
func (b *bench) pageChecks(f string, p *page, subject string, ss []*informe) {
	r, cur := &b.res, ss[0].ss
	if p.size == perPage {
		rps, copyRPS := float64(p.size)/cur.wall().Seconds(), float64(p.size)/p.psql.wall().Seconds()
		switch f {
		case "csv":
			r.check("page-csv-copy", subject, rps/copyRPS, "%.0f vs %.0f rows/s", rps, copyRPS)
			r.check("page-csv-ttfb", subject, float64(cur.ttfb().Microseconds())/1000, "")
		case "json", "ndjson":
			r.check("page-text-copy", subject, rps/copyRPS, "%.0f vs %.0f rows/s", rps, copyRPS)
		case "xlsx":
			r.check("page-xlsx-wall", subject, cur.wall().Seconds(), "")
			r.check("page-xlsx-rss", subject, float64(ss[0].growth)/mib, "peak %s MiB", mibs(ss[0].peak))
		}
	}
	if len(ss) == 1 || f == "xlsx" {
		return
	}
	base := ss[1].ss
	r.check("page-wall-baseline", subject, cur.wall().Seconds()/base.wall().Seconds(), "%s vs %s ms", ms(cur.wall()), ms(base.wall()))
	r.check("page-cpu-baseline", subject, cur.cpu()/base.cpu(), "%.4f vs %.4f s", cur.cpu(), base.cpu())
	if p.size == small {
		r.check("page-ttfb-baseline", subject, float64((cur.ttfb()-base.ttfb()).Microseconds())/1000, "%s vs %s ms", ms(cur.ttfb()), ms(base.ttfb()))
	}
}
