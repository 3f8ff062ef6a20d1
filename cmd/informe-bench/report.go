package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"

	"github.com/informe/informe/internal/dataset"
	"github.com/informe/informe/internal/postgres"
)

// The report's pages and whole exports, next to COPY of the same query.

// page is one page of the report, informe's query for it and its COPY.
type page struct {
	number, size int64
	query        string
	pgx, psql    samples
}

func (p *page) String() string { return fmt.Sprintf("page %d, %d rows", p.number, p.size) }

// psql is one psql process for sql, its start-up and connection included.
func psql(ctx context.Context, dbURL, sql string) *exec.Cmd {
	return exec.CommandContext(ctx, "psql", dbURL, "-X", "-q", "-v", "ON_ERROR_STOP=1", "-c", sql)
}

func pagePath(format string, number, size int64) string {
	return fmt.Sprintf("/api/general-report?format=%s&result_per_page=%d&page=%d", format, size, number)
}

// pages measures each format's first and deepest 10,000-row pages and
// 100-row pages, each case on a fresh informe (and the baseline's, the
// requests alternating), next to COPY of the same query.
func (b *bench) pages(ctx context.Context) error {
	first, last, little := &page{number: 1, size: perPage}, &page{number: b.lastFull, size: perPage}, &page{number: 1, size: small}
	runs := b.o.runs
	logf("pages: COPY of each page through pgx and psql")
	var startup samples
	for _, p := range []*page{first, last, little} {
		q, _, err := traced(ctx, b.dbURL, dataset.Query{Skip: (p.number - 1) * p.size, Limit: p.size})
		if err != nil {
			return err
		}
		p.query = q
		for i := range runs + 1 { // the first warms the cache
			s, err := copyOnce(ctx, b.pool, copySQL(q), p.size)
			if err != nil {
				return fmt.Errorf("%s: %w", p, err)
			}
			if i == 0 {
				continue
			}
			p.pgx = append(p.pgx, s)
			if s, err = timed(psql(ctx, b.dbURL, copySQL(q))); err != nil {
				return err
			}
			p.psql = append(p.psql, s)
			if s, err = timed(psql(ctx, b.dbURL, "SELECT 1")); err != nil {
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
	for _, f := range []string{"json", "ndjson", "csv", "xlsx"} {
		cur := map[*page]*informe{}
		for _, p := range []*page{first, last, little} {
			if p == little && f == "xlsx" {
				continue
			}
			subject := fmt.Sprintf("%s %s", f, p)
			logf("pages: %s", subject)
			var ss []*informe
			for _, l := range b.launchers {
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
				t.add(f, p, b.launchers[i].label, s.ss.bytes(), ms(s.ss.wall()), s.ss.spread(), ms(s.ss.ttfb()),
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
		pl, err := explain(ctx, b.pool, p.String()+": one-off (custom) plan", "ANALYZE, BUFFERS, SETTINGS", p.query)
		if err != nil {
			return err
		}
		b.res.plans = append(b.res.plans, pl)
	}
	return nil
}

// pageChecks checks a page case (ss: current, then any baseline).
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
	if p.size == perPage && p.number == 1 && f == "json" {
		r.check("typed-json-page", subject, cur.wall().Seconds()/base.wall().Seconds(), "%s vs %s ms", ms(cur.wall()), ms(base.wall()))
	}
	if p.size == small {
		last := ss[len(ss)-1].ss
		r.check("typed-small-page", subject, cur.wall().Seconds()/last.wall().Seconds(), "%s vs %s ms (%s)", ms(cur.wall()), ms(last.wall()), b.launchers[len(ss)-1].label)
	}
	r.check("page-wall-baseline", subject, cur.wall().Seconds()/base.wall().Seconds(), "%s vs %s ms", ms(cur.wall()), ms(base.wall()))
	// informe writes the text PostgreSQL wrote before: the CPU of both
	// sides is what must not grow.
	r.check("page-cpu-baseline", subject, (cur.cpu()+cur.pgCPU())/(base.cpu()+base.pgCPU()), "%.4f + %.4f vs %.4f + %.4f s",
		cur.cpu(), cur.pgCPU(), base.cpu(), base.pgCPU())
	if p.size == small {
		r.check("page-ttfb-baseline", subject, float64((cur.ttfb()-base.ttfb()).Microseconds())/1000, "%s vs %s ms", ms(cur.ttfb()), ms(base.ttfb()))
	}
}

// exportSpec is one whole export: its filter, rows and informe's query.
type exportSpec struct {
	label  string
	client int64 // client_id filter, 0 for none
	rows   int64
	query  string
}

func (e *exportSpec) path(format string) string {
	p := "/api/general-report/export?format=" + format
	if e.client != 0 {
		p += fmt.Sprintf("&client_id=%d", e.client)
	}
	return p
}

// allRows labels the export of the whole report.
const allRows = "all rows"

// exportSet is the exports measured: the whole report, the client with the
// most rows, and the client nearest 100 rows (the warm-ups).
type exportSet struct{ all, client, warm *exportSpec }

// exports chooses the clients and notes their queries, once per run.
func (b *bench) exports(ctx context.Context) (*exportSet, error) {
	if b.exportSet != nil {
		return b.exportSet, nil
	}
	big, little, err := postgres.ReportClients(ctx, b.pool, small)
	if err != nil {
		return nil, fmt.Errorf("choose clients: %w", err)
	}
	s := &exportSet{all: &exportSpec{label: allRows}, client: &exportSpec{label: fmt.Sprint("client ", big), client: big},
		warm: &exportSpec{label: fmt.Sprint("client ", little), client: little}}
	for _, e := range []*exportSpec{s.all, s.client, s.warm} {
		q := dataset.Whole()
		if e.client != 0 {
			q.Equal("key_client_id", e.client)
		}
		sql, total, err := traced(ctx, b.dbURL, q)
		if err != nil {
			return nil, fmt.Errorf("export %s: %w", e.label, err)
		}
		e.query, e.rows = sql, total
	}
	if s.all.rows != b.total {
		return nil, fmt.Errorf("the export counts %d rows, the maintained counts %d", s.all.rows, b.total)
	}
	b.exportSet = s
	return s, nil
}

// exportTable is the table the export parts fill.
func exportTable(title string, notes ...string) table {
	return table{title: title, notes: notes, header: []string{"export", "via", "rows", "bytes", "wall s", "min-max ms", "TTFB ms",
		"rows/s", "x COPY", "CPU s", "PG CPU s", "RSS growth MiB"}}
}

// exportCase is a whole export next to COPY, with extra flags: over HTTP
// from a fresh informe, or (cli) by `informe export` to a file.
type exportCase struct {
	label, format string
	goal          string // of its speed next to COPY's, if any
	cli           bool
	extra         []string
	ss            samples
	growth, peak  int64 // the CLI's growth is its peak RSS
}

// cases returns an HTTP export case for each format.
func cases(what string, extra []string, goal string, formats ...string) []*exportCase {
	var cs []*exportCase
	for _, f := range formats {
		cs = append(cs, &exportCase{label: f + " export, " + what, format: f, extra: extra, goal: goal})
	}
	return cs
}

// nextToCopy measures the cases of e interleaved with COPY of its query
// for runs rounds, adds them to t and checks their goals.
func (b *bench) nextToCopy(ctx context.Context, t *table, e *exportSpec, runs int, cases ...*exportCase) error {
	logf("%s: %d exports of %s (%d rows) and COPY, %d rounds", t.title, len(cases), e.label, e.rows, runs)
	if _, err := copyOnce(ctx, b.pool, copySQL(e.query), e.rows); err != nil { // warms the cache
		return err
	}
	copied := &exportCase{label: "COPY csv, " + e.label}
	steps := []func(context.Context) error{func(ctx context.Context) error {
		s, err := copyOnce(ctx, b.pool, copySQL(e.query), e.rows)
		copied.ss = append(copied.ss, s)
		return err
	}}
	sessions := make([]*informe, len(cases))
	var ss []*informe
	for i, c := range cases {
		if c.cli { // its growth is its peak RSS
			steps = append(steps, func(ctx context.Context) error {
				out := filepath.Join(b.tmp, "export."+c.format)
				cmd := exec.CommandContext(ctx, b.current.bin, append([]string{"export", "--format", c.format, "--output", out}, c.extra...)...)
				cmd.Env = append(os.Environ(), "DATABASE_URL="+b.dbURL)
				s, err := timed(cmd)
				if err == nil {
					c.peak = max(c.peak, cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss<<10) // Maxrss: kB
					var fi os.FileInfo
					if fi, err = os.Stat(out); err == nil {
						s.bytes, err = fi.Size(), os.Remove(out)
					}
				}
				c.ss, c.growth = append(c.ss, s), c.peak
				return err
			})
			continue
		}
		s, err := b.session(ctx, b.current, c.label, b.exportSet.warm.path(c.format), e.path(c.format), e.rows, c.extra...)
		if err != nil {
			stopAll(ss)
			return err
		}
		sessions[i], ss = s, append(ss, s)
	}
	if err := measureAll(ctx, runs, ss, steps...); err != nil {
		return err
	}
	for i, c := range append([]*exportCase{copied}, cases...) {
		via, ttfb, pg, x := "informe export", "-", "-", "-"
		if i == 0 {
			via = "pgx"
		} else if s := sessions[i-1]; s != nil {
			c.ss, c.growth, c.peak, via = s.ss, s.growth, s.peak, "HTTP"
		}
		if i > 0 {
			x = fmt.Sprintf("%.2f", copied.ss.wall().Seconds()/c.ss.wall().Seconds())
		}
		if via != "informe export" {
			ttfb, pg = ms(c.ss.ttfb()), fmt.Sprintf("%.2f", c.ss.pgCPU())
		}
		t.add(c.label, via, e.rows, c.ss.bytes(), fmt.Sprintf("%.3f", c.ss.wall().Seconds()), c.ss.spread(), ttfb,
			fmt.Sprintf("%.0f", float64(e.rows)/c.ss.wall().Seconds()), x, fmt.Sprintf("%.2f", c.ss.cpu()), pg, mibs(c.growth))
		if c.goal != "" {
			b.res.check(c.goal, c.label, copied.ss.wall().Seconds()/c.ss.wall().Seconds(), "%.2f vs %.2f s", c.ss.wall().Seconds(), copied.ss.wall().Seconds())
		}
	}
	return nil
}

// export measures the whole report through GET /api/general-report/export
// in CSV, NDJSON and JSON and through `informe export`, and a big client's
// CSV and NDJSON export, each next to COPY of the same query.
func (b *bench) export(ctx context.Context) error {
	set, err := b.exports(ctx)
	if err != nil {
		return err
	}
	t := exportTable("Whole exports",
		fmt.Sprintf("%d rounds, COPY and every informe interleaved; medians; CPU s are informe's (the CLI's own), PG CPU s its backends'", b.o.exportRuns),
		"COPY: COPY (the query informe runs) TO STDOUT WITH CSV through pgx, one connection; x COPY: informe's rows/s over COPY's",
		"RSS growth: informe's VmHWM at the end over its VmRSS after the warm-up; the CLI's is its peak RSS",
		fmt.Sprintf("the seed has no big client: the benchmark gives client %d every %dth contract", bigClient, bigClientEvery))
	if err := b.nextToCopy(ctx, &t, set.client, b.o.exportRuns, cases(set.client.label, nil, "export-client-copy", "csv", "ndjson")...); err != nil {
		return err
	}
	all := append(cases(set.all.label, nil, "export-whole-copy", "csv", "ndjson"), cases(set.all.label, nil, "", "json")[0],
		&exportCase{label: "informe export --output FILE, csv", format: "csv", cli: true})
	if err := b.nextToCopy(ctx, &t, set.all, b.o.exportRuns, all...); err != nil {
		return err
	}
	for _, c := range all[:3] {
		b.res.check("export-rss", c.label, float64(c.growth)/mib, "peak %s MiB", mibs(c.peak))
	}
	cliWall, httpWall := all[3].ss.wall().Seconds(), all[0].ss.wall().Seconds()
	b.res.check("export-cli", all[3].label, cliWall/httpWall, "%.2f vs %.2f s", cliWall, httpWall)
	b.res.tables = append(b.res.tables, t)
	pl, err := explain(ctx, b.pool, "whole export (not analyzed)", "SETTINGS", set.all.query)
	b.res.plans = append(b.res.plans, pl)
	return err
}

// xlsx measures the whole report as XLSX and as Parquet next to CSV (and
// COPY), each read through as many connections as the server's default
// parts allow: the XLSX export's first byte, each one's time over CSV's,
// Parquet's size over CSV's, and informe's memory meanwhile.
func (b *bench) xlsx(ctx context.Context) error {
	t := exportTable("XLSX and Parquet", "the whole report as CSV, XLSX and Parquet over HTTP, each from a fresh informe with the default --export-parts (each read in parts), and COPY, alternating; medians")
	cs := cases(allRows, nil, "", "csv", "xlsx", "parquet")
	if err := b.wholeNextToCopy(ctx, t, b.o.xlsxRuns, cs...); err != nil {
		return err
	}
	csv, x, pq := cs[0], cs[1], cs[2]
	b.res.check("xlsx-ttfb", x.label, x.ss.ttfb().Seconds(), "")
	b.res.check("xlsx-csv", x.label, x.ss.wall().Seconds()/csv.ss.wall().Seconds(), "%.2f vs %.2f s", x.ss.wall().Seconds(), csv.ss.wall().Seconds())
	b.res.check("xlsx-rss", x.label, float64(x.growth)/mib, "peak %s MiB", mibs(x.peak))
	b.res.check("parquet-csv", pq.label, pq.ss.wall().Seconds()/csv.ss.wall().Seconds(), "%.2f vs %.2f s", pq.ss.wall().Seconds(), csv.ss.wall().Seconds())
	b.res.check("parquet-size", pq.label, 100*float64(pq.ss.bytes())/float64(csv.ss.bytes()), "%d vs %d bytes", pq.ss.bytes(), csv.ss.bytes())
	return nil
}

// parts measures whole exports read through 1, 2 and 4 connections at once
// (serve --export-parts, export --parts) next to COPY.
func (b *bench) parts(ctx context.Context) error {
	t := exportTable("Parallel parts", fmt.Sprintf("the whole report with --export-parts=N (serve and export), %d rounds, everything interleaved; x COPY: rows/s over COPY's through one connection", b.o.exportRuns))
	var cs []*exportCase
	for _, n := range []int{1, 2, 4} {
		goal := "parts-many"
		if n == 1 {
			goal = "parts-one"
		}
		cs = append(append(cs, cases(fmt.Sprint("--export-parts=", n), []string{fmt.Sprint("--export-parts=", n)}, goal, "csv", "ndjson")...),
			&exportCase{label: fmt.Sprint("informe export --output FILE, csv, --parts=", n), format: "csv", extra: []string{fmt.Sprint("--parts=", n)}, goal: goal, cli: true})
	}
	return b.wholeNextToCopy(ctx, t, b.o.exportRuns, cs...)
}

// wholeNextToCopy measures cases, exports of the whole report, next to
// COPY of its query for runs rounds, in t, and adds t to the results.
func (b *bench) wholeNextToCopy(ctx context.Context, t table, runs int, cases ...*exportCase) error {
	set, err := b.exports(ctx)
	if err != nil {
		return err
	}
	if err := b.nextToCopy(ctx, &t, set.all, runs, cases...); err != nil {
		return err
	}
	b.res.tables = append(b.res.tables, t)
	return nil
}
