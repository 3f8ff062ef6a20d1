package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

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

// row adds one export's figures, next to COPY's (nil for none).
func (t *table) exportRow(label, via string, rows int64, ss samples, growth int64, copied samples) {
	x := "-"
	if copied != nil {
		x = fmt.Sprintf("%.2f", copied.wall().Seconds()/ss.wall().Seconds())
	}
	t.add(label, via, rows, ss.bytes(), fmt.Sprintf("%.3f", ss.wall().Seconds()), ss.spread(), ms(ss.ttfb()),
		fmt.Sprintf("%.0f", float64(rows)/ss.wall().Seconds()), x, fmt.Sprintf("%.2f", ss.cpu()), fmt.Sprintf("%.2f", ss.pgCPU()), mibs(growth))
}

// copyRuns measures COPY of e's query through pgx, one connection, as a
// step for interleave.
func (b *bench) copyRuns(e *exportSpec, out *samples) func(context.Context) error {
	return func(ctx context.Context) error {
		s, err := copyOnce(ctx, b.pool, e.query.copySQL(), e.rows)
		*out = append(*out, s)
		return err
	}
}

// export measures the whole report through GET /api/general-report/export
// in CSV, NDJSON and JSON and through `informe export` to a file, next to
// COPY of the same query, interleaved round by round; and a big client's
// CSV and NDJSON export likewise. Every informe is a fresh process warmed up
// with a small client's export of its format.
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
	for _, e := range []*exportSpec{set.client, set.all} {
		formats := []string{"csv", "ndjson"}
		if e == set.all {
			formats = append(formats, "json")
		}
		var copied samples
		steps := []func(context.Context) error{b.copyRuns(e, &copied)}
		var ss []*session
		for _, f := range formats {
			s, err := b.session(ctx, b.current, f+" export of "+e.label, set.warm.path(f), e.path(f), e.rows)
			if err != nil {
				stopAll(ss)
				return err
			}
			ss = append(ss, s)
			steps = append(steps, s.step)
		}
		var cli samples
		var cliRSS int64
		if e == set.all {
			steps = append(steps, func(ctx context.Context) error {
				s, rss, err := b.cliExport(ctx, "csv")
				cli, cliRSS = append(cli, s), max(cliRSS, rss)
				return err
			})
		}
		logf("export: %s (%d rows), %d rounds", e.label, e.rows, b.o.exportRuns)
		if _, err := copyOnce(ctx, b.pool, e.query.copySQL(), e.rows); err != nil { // warms the cache
			stopAll(ss)
			return err
		}
		if err := interleave(ctx, b.o.exportRuns, steps...); err != nil {
			stopAll(ss)
			return err
		}
		t.exportRow("COPY csv, "+e.label, "pgx", e.rows, copied, 0, nil)
		for i, s := range ss {
			if err := s.finish(); err != nil {
				stopAll(ss)
				return err
			}
			f := formats[i]
			subject := f + " export, " + e.label
			t.exportRow(subject, "HTTP", e.rows, s.ss, s.growth, copied)
			goal := "export-client-copy"
			if e == set.all {
				goal = "export-whole-copy"
				b.res.check("export-rss", subject, float64(s.growth)/mib, "peak %s MiB", mibs(s.peak))
			}
			if f != "json" {
				x := copied.wall().Seconds() / s.ss.wall().Seconds()
				b.res.check(goal, subject, x, "%.2f vs %.2f s", s.ss.wall().Seconds(), copied.wall().Seconds())
			}
		}
		if cli != nil {
			t.exportRow("csv export, "+e.label, "informe export", e.rows, cli, cliRSS, copied)
			b.res.check("export-cli", "informe export --output FILE, csv", ratio(cli.wall().Seconds(), ss[0].ss.wall().Seconds()),
				"%.2f vs %.2f s", cli.wall().Seconds(), ss[0].ss.wall().Seconds())
		}
	}
	b.res.tables = append(b.res.tables, t)
	pl, err := explain(ctx, b.pool, "whole export (not analyzed)", "SETTINGS", set.all.query.inline())
	b.res.plans = append(b.res.plans, pl)
	return err
}

// cliExport runs `informe export` of the whole report to a file (written,
// synced and renamed) and returns its time, bytes, CPU and peak RSS.
func (b *bench) cliExport(ctx context.Context, format string, extra ...string) (sample, int64, error) {
	out := filepath.Join(b.tmp, "export."+format)
	cmd := exec.CommandContext(ctx, b.current.bin, append([]string{"export", "--format", format, "--output", out}, extra...)...)
	cmd.Env = append(os.Environ(), "DATABASE_URL="+b.dbURL)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	began := time.Now()
	err := cmd.Run()
	s := sample{wall: time.Since(began), status: http.StatusOK}
	if err != nil {
		return s, 0, fmt.Errorf("informe export: %w: %.2000s", err, stderr.String())
	}
	fi, err := os.Stat(out)
	if err != nil {
		return s, 0, err
	}
	s.bytes = fi.Size()
	s.cpu = cmd.ProcessState.UserTime().Seconds() + cmd.ProcessState.SystemTime().Seconds()
	var rss int64
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		rss = ru.Maxrss << 10 // kB
	}
	return s, rss, os.Remove(out)
}

// xlsx measures the whole report as XLSX next to CSV, each from a fresh
// informe warmed up with a small client's export, alternating: the XLSX
// export's first byte, its time over CSV's, and informe's memory meanwhile.
func (b *bench) xlsx(ctx context.Context) error {
	set, err := b.exports(ctx)
	if err != nil {
		return err
	}
	var ss []*session
	for _, f := range []string{"csv", "xlsx"} {
		s, err := b.session(ctx, b.current, f+" export, all rows", set.warm.path(f), set.all.path(f), set.all.rows)
		if err != nil {
			stopAll(ss)
			return err
		}
		ss = append(ss, s)
	}
	logf("xlsx: the whole report as CSV and XLSX, %d rounds", b.o.xlsxRuns)
	if err := interleave(ctx, b.o.xlsxRuns, stepsOf(ss...)...); err != nil {
		stopAll(ss)
		return err
	}
	t := exportTable("XLSX", "the whole report as CSV and as XLSX over HTTP, each from a fresh informe, alternating; medians")
	for _, s := range ss {
		if err := s.finish(); err != nil {
			return err
		}
		t.exportRow(s.label, "HTTP", set.all.rows, s.ss, s.growth, nil)
	}
	csv, x := ss[0], ss[1]
	subject := "xlsx export, all rows"
	b.res.check("xlsx-ttfb", subject, x.ss.ttfb().Seconds(), "")
	b.res.check("xlsx-csv", subject, x.ss.wall().Seconds()/csv.ss.wall().Seconds(), "%.2f vs %.2f s", x.ss.wall().Seconds(), csv.ss.wall().Seconds())
	b.res.check("xlsx-rss", subject, float64(x.growth)/mib, "peak %s MiB", mibs(x.peak))
	b.res.tables = append(b.res.tables, t)
	return nil
}

// parts measures whole CSV and NDJSON exports and `informe export` to a
// file read through 1, 2 and 4 connections at once (--export-parts), next
// to COPY through one connection, interleaved round by round.
func (b *bench) parts(ctx context.Context) error {
	t := exportTable("Parallel parts",
		fmt.Sprintf("the whole report with --export-parts=N (serve and export), %d rounds, everything interleaved; x COPY: rows/s over COPY's through one connection", b.o.exportRuns))
	serveHelp, _ := exec.CommandContext(ctx, b.current.bin, "serve", "--help").CombinedOutput()
	if !strings.Contains(string(serveHelp), "--export-parts") {
		t.notes = append(t.notes, "SKIPPED: `informe serve --help` lists no --export-parts")
		b.res.tables = append(b.res.tables, t)
		logf("parts: skipped, informe serve has no --export-parts")
		return nil
	}
	exportHelp, _ := exec.CommandContext(ctx, b.current.bin, "export", "--help").CombinedOutput()
	cliParts := strings.Contains(string(exportHelp), "--export-parts")
	if !cliParts {
		t.notes = append(t.notes, "`informe export --help` lists no --export-parts: the command is not measured")
	}
	set, err := b.exports(ctx)
	if err != nil {
		return err
	}
	all := set.all
	var copied samples
	steps := []func(context.Context) error{b.copyRuns(all, &copied)}
	var ss []*session
	type cliRun struct {
		n   int
		ss  samples
		rss int64
	}
	var clis []*cliRun
	for _, n := range []int{1, 2, 4} {
		flag := fmt.Sprint("--export-parts=", n)
		for _, f := range []string{"csv", "ndjson"} {
			s, err := b.session(ctx, b.current, fmt.Sprintf("%s export, %d parts", f, n), set.warm.path(f), all.path(f), all.rows, flag)
			if err != nil {
				stopAll(ss)
				return err
			}
			ss = append(ss, s)
			steps = append(steps, s.step)
		}
		if cliParts {
			c := &cliRun{n: n}
			clis = append(clis, c)
			steps = append(steps, func(ctx context.Context) error {
				s, rss, err := b.cliExport(ctx, "csv", flag)
				c.ss, c.rss = append(c.ss, s), max(c.rss, rss)
				return err
			})
		}
	}
	logf("parts: the whole report through 1, 2 and 4 connections, %d rounds", b.o.exportRuns)
	if err := interleave(ctx, b.o.exportRuns, steps...); err != nil {
		stopAll(ss)
		return err
	}
	t.exportRow("COPY csv, all rows", "pgx", all.rows, copied, 0, nil)
	judge := func(subject string, n int, ss samples) {
		goal := "parts-many"
		if n == 1 {
			goal = "parts-one"
		}
		b.res.check(goal, subject, copied.wall().Seconds()/ss.wall().Seconds(), "%.2f vs %.2f s", ss.wall().Seconds(), copied.wall().Seconds())
	}
	for i, s := range ss {
		if err := s.finish(); err != nil {
			stopAll(ss)
			return err
		}
		t.exportRow(s.label, "HTTP", all.rows, s.ss, s.growth, copied)
		judge(s.label, 1<<(i/2), s.ss)
	}
	for _, c := range clis {
		label := fmt.Sprintf("csv export, %d parts", c.n)
		t.exportRow(label, "informe export", all.rows, c.ss, c.rss, copied)
		judge("informe export --output FILE, "+label, c.n, c.ss)
	}
	b.res.tables = append(b.res.tables, t)
	return nil
}
