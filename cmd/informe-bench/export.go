package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/informe/informe/report"
)

// exportSpec is one whole export: its filter, its rows, and the statement
// report.Store.Export runs for it.
type exportSpec struct {
	label   string // "all rows", "client 123"
	client  int64  // client_id filter, 0 for none
	rows    int64
	query   pageQuery
	planned time.Duration // count and query start
}

// params returns the export's query parameters in format f.
func (e *exportSpec) params(f string) string {
	p := "format=" + f
	if e.client != 0 {
		p += "&client_id=" + strconv.FormatInt(e.client, 10)
	}
	return p
}

func (e *exportSpec) path(f string) string { return "/api/general-report/export?" + e.params(f) }

// planExport opens the export with report.Store.Export (see traced) and
// notes its rows and query.
func planExport(ctx context.Context, url string, e *exportSpec) error {
	q, page, d, err := traced(ctx, url, func(s *report.Store) (*report.Cursor, error) {
		return s.Export(ctx, report.Query{ClientID: e.client})
	})
	e.planned = d
	if err != nil {
		return fmt.Errorf("plan export %s: %w", e.label, err)
	}
	e.rows, e.query = page.Total, q
	return nil
}

// exportSpecs are the exports the export and odata parts measure.
type exportSpecs struct {
	all    *exportSpec // the whole report
	client *exportSpec // the client with the most rows
	warm   *exportSpec // the client nearest small rows: warm-ups and the small case
}

// specs chooses and plans the exports, once per run.
func (b *bench) specs(ctx context.Context) (*exportSpecs, error) {
	if b.exportSpecs != nil {
		return b.exportSpecs, nil
	}
	logf("choosing the clients to export (the largest, and the one nearest %d rows)", small)
	var big, little, bigRows, littleRows int64
	// Rows per client from the maintained counts (checked below against
	// informe's own count of the view).
	err := b.pool.QueryRow(ctx, `
		WITH c AS (SELECT k.client_id AS id, sum(r.rows) AS n
		           FROM contracts k JOIN report_contract_rows r ON r.contract_id = k.id GROUP BY 1)
		SELECT b.id, b.n, l.id, l.n
		FROM (SELECT id, n FROM c ORDER BY n DESC, id LIMIT 1) b,
		     (SELECT id, n FROM c ORDER BY abs(n - $1), id LIMIT 1) l`, small).Scan(&big, &bigRows, &little, &littleRows)
	if err != nil {
		return nil, fmt.Errorf("choose clients: %w", err)
	}
	s := &exportSpecs{
		all:    &exportSpec{label: "all rows"},
		client: &exportSpec{label: fmt.Sprintf("client %d", big), client: big},
		warm:   &exportSpec{label: fmt.Sprintf("client %d", little), client: little},
	}
	for _, e := range []*exportSpec{s.all, s.client, s.warm} {
		if err := planExport(ctx, b.dbURL, e); err != nil {
			return nil, err
		}
	}
	if s.all.rows != b.total {
		return nil, fmt.Errorf("the export counts %d rows, the maintained counts %d", s.all.rows, b.total)
	}
	if s.client.rows != bigRows || s.warm.rows != littleRows {
		return nil, fmt.Errorf("informe counts %d and %d rows for clients %d and %d, the view %d and %d",
			s.client.rows, s.warm.rows, big, little, bigRows, littleRows)
	}
	b.exportSpecs = s
	b.res.exportSpecs = []*exportSpec{s.all, s.client, s.warm}
	return s, nil
}

// exportResult is what one informe process (or `informe export`) measured
// for one whole export.
type exportResult struct {
	format  string
	spec    *exportSpec
	via     string // "HTTP", "CLI file", "CLI stdout"
	samples []sample
	baseRSS int64 // informe's VmRSS after its warm-up, bytes (HTTP)
	peakRSS int64 // its VmHWM after the measured requests; the CLI's max RSS
	copy    *copyRun
}

func (r *exportResult) wall() time.Duration {
	return median(collect(r.samples, func(s sample) time.Duration { return s.wall }))
}

func (r *exportResult) ttfb() time.Duration {
	return median(collect(r.samples, func(s sample) time.Duration { return s.ttfb }))
}

func (r *exportResult) rowsPerSec() float64 { return perSecond(r.spec.rows, r.wall()) }
func (r *exportResult) growth() int64       { return r.peakRSS - r.baseRSS }
func (r *exportResult) bytes() int64        { return r.samples[len(r.samples)-1].bytes }

// copyRun is COPY (an export's query) TO STDOUT WITH CSV through pgx on an
// open connection, timed runs times.
type copyRun struct {
	spec      *exportSpec
	walls     []time.Duration
	ttfbs     []time.Duration // to the first CopyData
	pgCPU     []float64       // the backend's CPU seconds
	clientCPU []float64       // the benchmark's, reading
	bytes     int64
}

func (c *copyRun) wall() time.Duration { return median(c.walls) }
func (c *copyRun) rowsPerSec() float64 { return perSecond(c.spec.rows, c.wall()) }
func (c *copyRun) ttfb() time.Duration { return median(c.ttfbs) }
func (c *copyRun) sql() string         { return "COPY (" + c.spec.query.inline() + ") TO STDOUT WITH CSV" }
func (c *copyRun) add(d, ttfb time.Duration, n int64) {
	c.walls, c.ttfbs, c.bytes = append(c.walls, d), append(c.ttfbs, ttfb), n
}

// once runs c's COPY once on pool and checks its rows; with perfDir, its
// backend is profiled as perfName.
func (c *copyRun) once(ctx context.Context, pool *pgxpool.Pool, perfDir, perfName string) error {
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return err
	}
	defer conn.Release()
	var pid int
	if err := conn.QueryRow(ctx, "SELECT pg_backend_pid()").Scan(&pid); err != nil {
		return err
	}
	var prof *profiler
	if perfName != "" {
		if prof, err = startPerf(perfDir, perfName, pid); err != nil {
			return err
		}
	}
	ticks0, err := procTicks(pid)
	if err != nil {
		return err
	}
	self0 := selfCPU()
	var w countWriter
	began := time.Now()
	tag, err := conn.Conn().PgConn().CopyTo(ctx, &w, c.sql())
	d := time.Since(began)
	self := selfCPU() - self0
	ticks1, terr := procTicks(pid)
	if perr := prof.stop(); perr != nil {
		return perr
	}
	if terr != nil {
		return terr
	}
	if err != nil {
		return fmt.Errorf("copy %s: %w", c.spec.label, err)
	}
	if tag.RowsAffected() != c.spec.rows {
		return fmt.Errorf("copy %s: %d rows, want %d", c.spec.label, tag.RowsAffected(), c.spec.rows)
	}
	c.add(d, w.first.Sub(began), w.n)
	c.pgCPU, c.clientCPU = append(c.pgCPU, float64(ticks1-ticks0)/clockTicks), append(c.clientCPU, self)
	return nil
}

// exportSession is a fresh informe, warmed up with a small export of its
// format, whose whole export is measured several times, interleaved with
// other sessions.
type exportSession struct {
	inf *informe
	r   *exportResult
}

func (b *bench) startExportSession(ctx context.Context, format string, spec, warm *exportSpec) (*exportSession, error) {
	inf, err := b.current.start(ctx, startOptions{})
	if err != nil {
		return nil, err
	}
	r := &exportResult{format: format, spec: spec, via: "HTTP"}
	if _, err := inf.measure(ctx, warm.path(format), nil, b.backends()); err != nil {
		inf.stop()
		return nil, fmt.Errorf("warm-up: %w", err)
	}
	if r.baseRSS, _, err = procMemory(inf.cmd.Process.Pid); err != nil {
		inf.stop()
		return nil, err
	}
	return &exportSession{inf: inf, r: r}, nil
}

// measure measures the session's export once; with perfName (and --perf)
// informe and its database backends are profiled meanwhile.
func (s *exportSession) measure(ctx context.Context, b *bench, perfName string) error {
	logf("  %s export of %s (%d rows)", s.r.format, s.r.spec.label, s.r.spec.rows)
	var prof *profiler
	if perfName != "" && b.perfDir != "" {
		pids, err := b.backends().ticks(ctx)
		if err != nil {
			return err
		}
		list := []int{s.inf.cmd.Process.Pid}
		for pid := range pids {
			list = append(list, pid)
		}
		if prof, err = startPerf(b.perfDir, perfName, list...); err != nil {
			return err
		}
	}
	smp, err := s.inf.measure(ctx, s.r.spec.path(s.r.format), nil, b.backends())
	if perr := prof.stop(); err == nil && perr != nil {
		err = perr
	}
	if err != nil {
		return fmt.Errorf("%s export of %s: %w", s.r.format, s.r.spec.label, err)
	}
	s.r.samples = append(s.r.samples, smp)
	return nil
}

// finish notes the peak RSS, stops informe and checks from its log that
// every measured export streamed all its rows.
func (s *exportSession) finish() error {
	var err error
	if _, s.r.peakRSS, err = procMemory(s.inf.cmd.Process.Pid); err != nil {
		s.inf.stop()
		return err
	}
	s.inf.stop()
	rows, err := s.inf.loggedRows("/api/general-report/export")
	if err != nil {
		return err
	}
	if len(rows) != len(s.r.samples)+1 {
		return fmt.Errorf("informe logged %d exports, want %d", len(rows), len(s.r.samples)+1)
	}
	for _, n := range rows[1:] {
		if n != s.r.spec.rows {
			return fmt.Errorf("%s export of %s: informe streamed %d rows, want %d", s.r.format, s.r.spec.label, n, s.r.spec.rows)
		}
	}
	return nil
}

// exports measures issue 8: the whole report exported over HTTP in every
// format, a client's rows, and `informe export`, each informe a fresh
// process warmed up with a small export of its format; the text formats,
// the CLI and COPY interleaved run by run, so that load that comes and goes
// weighs on all alike.
func (b *bench) exports(ctx context.Context) error {
	res := b.res
	specs, err := b.specs(ctx)
	if err != nil {
		return err
	}
	all, client, warm := specs.all, specs.client, specs.warm

	// The small exports that peak RSS is compared with.
	for _, f := range append(append([]string{}, rssFormats...), "xlsx") {
		logf("export: %s, %s (%d rows), fresh informe", f, warm.label, warm.rows)
		s, err := b.startExportSession(ctx, f, warm, warm)
		if err != nil {
			return err
		}
		for range b.o.runs {
			if err := s.measure(ctx, b, ""); err != nil {
				s.inf.stop()
				return err
			}
		}
		if err := s.finish(); err != nil {
			return err
		}
		res.exports = append(res.exports, s.r)
	}

	// The client's export, next to COPY of its query.
	clientCopy := &copyRun{spec: client}
	logf("export: csv and ndjson, %s (%d rows), next to COPY", client.label, client.rows)
	if err := clientCopy.once(ctx, b.pool, "", ""); err != nil { // warms the cache
		return err
	}
	clientCopy.walls, clientCopy.ttfbs, clientCopy.pgCPU, clientCopy.clientCPU = nil, nil, nil, nil
	var clientSessions []*exportSession
	for _, f := range []string{"csv", "ndjson"} {
		s, err := b.startExportSession(ctx, f, client, warm)
		if err != nil {
			return err
		}
		defer s.inf.stop()
		s.r.copy = clientCopy
		clientSessions = append(clientSessions, s)
	}
	for range b.o.runs {
		if err := clientCopy.once(ctx, b.pool, "", ""); err != nil {
			return err
		}
		for _, s := range clientSessions {
			if err := s.measure(ctx, b, ""); err != nil {
				return err
			}
		}
	}
	for _, s := range clientSessions {
		if err := s.finish(); err != nil {
			return err
		}
		res.exports = append(res.exports, s.r)
	}
	res.exportCopies = append(res.exportCopies, clientCopy)

	// The whole report: COPY, the text formats over HTTP and the CLI,
	// interleaved.
	allCopy := &copyRun{spec: all}
	var sessions []*exportSession
	for _, f := range []string{"csv", "ndjson", "json"} {
		s, err := b.startExportSession(ctx, f, all, warm)
		if err != nil {
			return err
		}
		defer s.inf.stop()
		s.r.copy = allCopy
		sessions = append(sessions, s)
	}
	cliFile := &exportResult{format: "csv", spec: all, via: "CLI file", copy: allCopy}
	cliStdout := &exportResult{format: "csv", spec: all, via: "CLI stdout", copy: allCopy}
	for i := range b.o.exportRuns {
		logf("export: the whole report, round %d of %d: COPY through pgx, then informe", i+1, b.o.exportRuns)
		perf := func(name string) string { // the first round is profiled
			if i > 0 || b.perfDir == "" {
				return ""
			}
			return name
		}
		if err := allCopy.once(ctx, b.pool, b.perfDir, perf("perf-export-copy")); err != nil {
			return err
		}
		for _, s := range sessions {
			if err := s.measure(ctx, b, perf("perf-export-"+s.r.format)); err != nil {
				return err
			}
		}
		clis := []*exportResult{cliFile}
		if i == 0 { // stdout only tells the file's cost apart: once is enough
			clis = append(clis, cliStdout)
		}
		for _, r := range clis {
			logf("  informe export, csv, %s", r.via)
			smp, rss, err := b.cliExport(ctx, r.via == "CLI file")
			if err != nil {
				return err
			}
			r.samples = append(r.samples, smp)
			r.peakRSS = max(r.peakRSS, rss)
		}
	}
	for _, s := range sessions {
		if err := s.finish(); err != nil {
			return err
		}
		res.exports = append(res.exports, s.r)
	}
	res.exports = append(res.exports, cliFile, cliStdout)
	res.exportCopies = append(res.exportCopies, allCopy)
	httpCSV := sessions[0].r
	for _, r := range []*exportResult{cliFile, cliStdout} {
		if r.bytes() != httpCSV.bytes() {
			return fmt.Errorf("informe export (%s) wrote %d bytes, the HTTP export %d", r.via, r.bytes(), httpCSV.bytes())
		}
	}

	logf("export: xlsx, the whole report, fresh informe")
	xs, err := b.startExportSession(ctx, "xlsx", all, warm)
	if err != nil {
		return err
	}
	for range b.o.xlsxRuns {
		if err := xs.measure(ctx, b, ""); err != nil {
			xs.inf.stop()
			return err
		}
	}
	if err := xs.finish(); err != nil {
		return err
	}
	res.exports = append(res.exports, xs.r)

	logf("export: query plans")
	plans, err := explainExports(ctx, b.pool, all, client)
	if err != nil {
		return err
	}
	res.plans = append(res.plans, plans...)
	return nil
}

// cliExport runs `informe export` of the whole report as CSV, to a file
// (written, synced and renamed, as the command does) or to stdout (read and
// discarded), and returns its wall time, bytes and peak RSS.
func (b *bench) cliExport(ctx context.Context, toFile bool) (sample, int64, error) {
	var s sample
	out := filepath.Join(b.tmp, "export.csv")
	args := []string{"export", "--format", "csv", "--output", out}
	var stdout countWriter
	if !toFile {
		args[len(args)-1] = "-"
	}
	cmd := exec.CommandContext(ctx, b.current.bin, args...)
	cmd.Env = append(os.Environ(), "DATABASE_URL="+b.dbURL)
	var stderr limitedBuffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	self0 := selfCPU()
	began := time.Now()
	err := cmd.Run()
	s.wall = time.Since(began)
	s.clientCPU = selfCPU() - self0
	if err != nil {
		return s, 0, fmt.Errorf("informe export: %w: %s", err, stderr.String())
	}
	s.status = http.StatusOK
	s.bytes = stdout.n
	if !toFile {
		s.ttfb = stdout.first.Sub(began)
	} else {
		fi, err := os.Stat(out)
		if err != nil {
			return s, 0, err
		}
		s.bytes = fi.Size()
		if err := os.Remove(out); err != nil {
			return s, 0, err
		}
	}
	var rss int64
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		rss = ru.Maxrss << 10 // kB
	}
	s.cpu = cmd.ProcessState.UserTime().Seconds() + cmd.ProcessState.SystemTime().Seconds()
	return s, rss, nil
}

// limitedBuffer keeps the first 4 KiB written to it.
type limitedBuffer struct{ b []byte }

func (l *limitedBuffer) Write(p []byte) (int, error) {
	l.b = append(l.b, p[:min(len(p), max(0, 4096-len(l.b)))]...)
	return len(p), nil
}

func (l *limitedBuffer) String() string { return string(l.b) }

// explainExports returns the plan of the whole export's query (EXPLAIN
// only: analyzing it reads a million rows) and the analyzed plan of the
// client's export.
func explainExports(ctx context.Context, pool *pgxpool.Pool, all, client *exportSpec) ([]plan, error) {
	var plans []plan
	for _, p := range []struct {
		title, prefix string
		e             *exportSpec
	}{
		{"whole export, " + all.label + ": plan (not analyzed)", "EXPLAIN (SETTINGS) ", all},
		{"export of " + client.label + ", arguments " + client.query.args(), "EXPLAIN (ANALYZE, BUFFERS, SETTINGS) ", client},
	} {
		rows, err := pool.Query(ctx, p.prefix+p.e.query.inline())
		if err != nil {
			return nil, fmt.Errorf("explain %s: %w", p.title, err)
		}
		var text string
		for rows.Next() {
			var line string
			if err := rows.Scan(&line); err != nil {
				rows.Close()
				return nil, err
			}
			text += line + "\n"
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, errors.Join(fmt.Errorf("explain %s", p.title), err)
		}
		plans = append(plans, plan{p.title, text})
	}
	var b string
	for _, e := range []*exportSpec{all, client} {
		b += fmt.Sprintf("%s: %.2f ms\n", e.label, float64(e.planned.Microseconds())/1000)
	}
	plans = append(plans, plan{"count and query start of the exports (report.Store.Export, in its own snapshot)", b})
	return plans, nil
}
