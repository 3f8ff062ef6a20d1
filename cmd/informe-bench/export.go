package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"

	"github.com/informe/informe/report"
)

// exportSpec is one whole export: its filter, rows and the query informe
// runs for it.
type exportSpec struct {
	label  string
	client int64 // client_id filter, 0 for none
	rows   int64
	query  query
}

func (e *exportSpec) path(format string) string {
	p := "/api/general-report/export?format=" + format
	if e.client != 0 {
		p += fmt.Sprintf("&client_id=%d", e.client)
	}
	return p
}

// exportSet is the exports measured: the whole report, the client with the
// most rows, and the client nearest 100 rows (the warm-ups).
type exportSet struct{ all, client, warm *exportSpec }

// exports chooses the clients and notes their queries, once per run.
func (b *bench) exports(ctx context.Context) (*exportSet, error) {
	if b.exportSet != nil {
		return b.exportSet, nil
	}
	var big, little int64
	err := b.pool.QueryRow(ctx, `
		WITH c AS (SELECT k.client_id AS id, sum(r.rows) AS n
		           FROM contracts k JOIN report_contract_rows r ON r.contract_id = k.id GROUP BY 1)
		SELECT (SELECT id FROM c ORDER BY n DESC, id LIMIT 1), (SELECT id FROM c ORDER BY abs(n - $1), id LIMIT 1)`, small).Scan(&big, &little)
	if err != nil {
		return nil, fmt.Errorf("choose clients: %w", err)
	}
	s := &exportSet{all: &exportSpec{label: "all rows"}, client: &exportSpec{label: fmt.Sprint("client ", big), client: big},
		warm: &exportSpec{label: fmt.Sprint("client ", little), client: little}}
	for _, e := range []*exportSpec{s.all, s.client, s.warm} {
		q, pg, err := traced(ctx, b.dbURL, report.Query{ClientID: e.client}, true)
		if err != nil {
			return nil, fmt.Errorf("export %s: %w", e.label, err)
		}
		e.query, e.rows = q, pg.Total
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

// exportCase is a whole export measured next to COPY: over HTTP from a
// fresh informe warmed up with a small client's export, or (cli) by
// `informe export` to a file, written, synced and renamed; with extra
// flags for either.
type exportCase struct {
	label, format string
	cli           bool
	extra         []string
	ss            samples
	growth, peak  int64 // the CLI's growth is its peak RSS
}

// cases returns an HTTP export case for each format, labelled with what,
// with extra flags.
func cases(what string, extra []string, formats ...string) []*exportCase {
	var cs []*exportCase
	for _, f := range formats {
		cs = append(cs, &exportCase{label: f + " export, " + what, format: f, extra: extra})
	}
	return cs
}

// nextToCopy measures the cases of export e and COPY of its query through
// one pgx connection, interleaved for runs rounds, adds their rows to t
// and returns COPY's samples.
func (b *bench) nextToCopy(ctx context.Context, t *table, e *exportSpec, runs int, cases ...*exportCase) (samples, error) {
	logf("%s: %d exports of %s (%d rows) and COPY, %d rounds", t.title, len(cases), e.label, e.rows, runs)
	if _, err := copyOnce(ctx, b.pool, e.query.copySQL(), e.rows); err != nil { // warms the cache
		return nil, err
	}
	var copied samples
	steps := []func(context.Context) error{func(ctx context.Context) error {
		s, err := copyOnce(ctx, b.pool, e.query.copySQL(), e.rows)
		copied = append(copied, s)
		return err
	}}
	sessions := make([]*informe, len(cases))
	var ss []*informe
	for i, c := range cases {
		if c.cli {
			steps = append(steps, func(ctx context.Context) error {
				s, rss, err := b.cliExport(ctx, c.format, c.extra...)
				c.ss, c.peak, c.growth = append(c.ss, s), max(c.peak, rss), max(c.peak, rss)
				return err
			})
			continue
		}
		s, err := b.session(ctx, b.current, c.label, b.exportSet.warm.path(c.format), e.path(c.format), e.rows, c.extra...)
		if err != nil {
			stopAll(ss)
			return nil, err
		}
		sessions[i], ss = s, append(ss, s)
	}
	if err := measureAll(ctx, runs, ss, steps...); err != nil {
		return nil, err
	}
	t.exportRow("COPY csv, "+e.label, "pgx", e.rows, copied, 0, nil)
	for i, c := range cases {
		via := "informe export"
		if s := sessions[i]; s != nil {
			c.ss, c.growth, c.peak, via = s.ss, s.growth, s.peak, "HTTP"
		}
		t.exportRow(c.label, via, e.rows, c.ss, c.growth, copied)
	}
	return copied, nil
}

// exportRow adds one export's figures, next to COPY's (nil for none).
func (t *table) exportRow(label, via string, rows int64, ss samples, growth int64, copied samples) {
	x, ttfb, pg := "-", "-", "-"
	if copied != nil {
		x = fmt.Sprintf("%.2f", copied.wall().Seconds()/ss.wall().Seconds())
	}
	if via != "informe export" {
		ttfb, pg = ms(ss.ttfb()), fmt.Sprintf("%.2f", ss.pgCPU())
	}
	t.add(label, via, rows, ss.bytes(), fmt.Sprintf("%.3f", ss.wall().Seconds()), ss.spread(), ttfb,
		fmt.Sprintf("%.0f", float64(rows)/ss.wall().Seconds()), x, fmt.Sprintf("%.2f", ss.cpu()), pg, mibs(growth))
}

// vsCopy checks exports' speed against COPY's.
func (b *bench) vsCopy(goal string, copied samples, cs ...*exportCase) {
	for _, c := range cs {
		b.res.check(goal, c.label, copied.wall().Seconds()/c.ss.wall().Seconds(), "%.2f vs %.2f s", c.ss.wall().Seconds(), copied.wall().Seconds())
	}
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
	client := cases(set.client.label, nil, "csv", "ndjson")
	copied, err := b.nextToCopy(ctx, &t, set.client, b.o.exportRuns, client...)
	if err != nil {
		return err
	}
	b.vsCopy("export-client-copy", copied, client...)
	all := append(cases(set.all.label, nil, "csv", "ndjson", "json"), &exportCase{label: "informe export --output FILE, csv", format: "csv", cli: true})
	if copied, err = b.nextToCopy(ctx, &t, set.all, b.o.exportRuns, all...); err != nil {
		return err
	}
	b.vsCopy("export-whole-copy", copied, all[:2]...)
	for _, c := range all[:3] {
		b.res.check("export-rss", c.label, float64(c.growth)/mib, "peak %s MiB", mibs(c.peak))
	}
	cliWall, httpWall := all[3].ss.wall().Seconds(), all[0].ss.wall().Seconds()
	b.res.check("export-cli", all[3].label, cliWall/httpWall, "%.2f vs %.2f s", cliWall, httpWall)
	b.res.tables = append(b.res.tables, t)
	pl, err := explain(ctx, b.pool, "whole export (not analyzed)", "SETTINGS", set.all.query.inline())
	b.res.plans = append(b.res.plans, pl)
	return err
}

// cliExport runs `informe export` of the whole report to a file and
// returns its time, bytes, CPU seconds and peak RSS.
func (b *bench) cliExport(ctx context.Context, format string, extra ...string) (sample, int64, error) {
	out := filepath.Join(b.tmp, "export."+format)
	cmd := exec.CommandContext(ctx, b.current.bin, append([]string{"export", "--format", format, "--output", out}, extra...)...)
	cmd.Env = append(os.Environ(), "DATABASE_URL="+b.dbURL)
	s, err := timed(cmd)
	if err != nil {
		return s, 0, err
	}
	fi, err := os.Stat(out)
	if err != nil {
		return s, 0, err
	}
	s.bytes = fi.Size()
	return s, cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss << 10, os.Remove(out) // Maxrss: kB
}

// xlsx measures the whole report as XLSX next to CSV (and COPY): the XLSX
// export's first byte, its time over CSV's, and informe's memory meanwhile.
func (b *bench) xlsx(ctx context.Context) error {
	set, err := b.exports(ctx)
	if err != nil {
		return err
	}
	t := exportTable("XLSX", "the whole report as CSV and as XLSX over HTTP, each from a fresh informe, and COPY, alternating; medians")
	cs := cases(set.all.label, nil, "csv", "xlsx")
	if _, err := b.nextToCopy(ctx, &t, set.all, b.o.xlsxRuns, cs...); err != nil {
		return err
	}
	csv, x := cs[0], cs[1]
	b.res.check("xlsx-ttfb", x.label, x.ss.ttfb().Seconds(), "")
	b.res.check("xlsx-csv", x.label, x.ss.wall().Seconds()/csv.ss.wall().Seconds(), "%.2f vs %.2f s", x.ss.wall().Seconds(), csv.ss.wall().Seconds())
	b.res.check("xlsx-rss", x.label, float64(x.growth)/mib, "peak %s MiB", mibs(x.peak))
	b.res.tables = append(b.res.tables, t)
	return nil
}

// parts measures whole CSV and NDJSON exports (--export-parts), and
// `informe export` to a file (--parts), read through 1, 2 and 4
// connections at once, next to COPY through one connection.
func (b *bench) parts(ctx context.Context) error {
	set, err := b.exports(ctx)
	if err != nil {
		return err
	}
	t := exportTable("Parallel parts", fmt.Sprintf("the whole report with --export-parts=N (serve and export), %d rounds, everything interleaved; x COPY: rows/s over COPY's through one connection", b.o.exportRuns))
	var one, many []*exportCase
	for _, n := range []int{1, 2, 4} {
		cs := append(cases(fmt.Sprint("--export-parts=", n), []string{fmt.Sprint("--export-parts=", n)}, "csv", "ndjson"),
			&exportCase{label: fmt.Sprint("informe export --output FILE, csv, --parts=", n), format: "csv", extra: []string{fmt.Sprint("--parts=", n)}, cli: true})
		if n == 1 {
			one = cs
		} else {
			many = append(many, cs...)
		}
	}
	copied, err := b.nextToCopy(ctx, &t, set.all, b.o.exportRuns, append(one, many...)...)
	if err != nil {
		return err
	}
	b.vsCopy("parts-one", copied, one...)
	b.vsCopy("parts-many", copied, many...)
	b.res.tables = append(b.res.tables, t)
	return nil
}
