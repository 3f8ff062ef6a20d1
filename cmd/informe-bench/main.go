// Command informe-bench measures informe against about a million report
// rows in a private PostgreSQL, each case served by a fresh `informe serve`
// process, next to COPY of the same rows in the same run. Its parts (pages,
// export, xlsx, parts, odata, slow, burst, flood, gzip, folding, typed,
// capacity, fair) are the methods of bench of those names; scripts/bench --help says what each measures. The targets
// are one table, goals in targets.go: the run prints every table and the
// targets with PASS or MISS, and writes them as Markdown, with query plans,
// to OUT/latest.md. Run it through scripts/bench, which makes sure
// PostgreSQL and psql are installed; the seeded cluster is kept in
// --data-dir, so only the first run pays for the seed.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/informe/informe/auth"
	"github.com/informe/informe/internal/pgserver"
	"github.com/informe/informe/internal/postgres"
)

type options struct {
	contracts, runs, exportRuns, xlsxRuns, odataRuns int
	dataDir, out                                     string
	only, serveArgs, baselines                       []string
}

// bench is what every part of a run shares.
type bench struct {
	o         options
	tmp       string
	pool      *pgxpool.Pool
	dbURL     string
	total     int64 // report rows
	lastFull  int64 // the deepest full page of perPage rows
	current   *launcher
	launchers []*launcher // current, and the baseline with --baseline-rev
	res       results
	exportSet *exportSet // chosen once, for the parts that export
}

// perPage is the page size of the page cases and the OData feed; small the
// size of warm-ups and small pages.
const (
	perPage = 10000
	small   = 100
)

// parts are the groups of cases --only chooses from, in the order they run.
var parts = []struct {
	name string
	run  func(*bench, context.Context) error
}{
	{"pages", (*bench).pages}, {"export", (*bench).export}, {"xlsx", (*bench).xlsx}, {"parts", (*bench).parts},
	{"odata", (*bench).odata}, {"slow", (*bench).slow}, {"burst", (*bench).burst}, {"flood", (*bench).flood}, {"gzip", (*bench).gzip},
	{"folding", (*bench).folding}, {"typed", (*bench).typed}, {"capacity", (*bench).capacity},
	{"fair", (*bench).fair},
}

func main() {
	var o options
	var names []string
	for _, p := range parts {
		names = append(names, p.name)
	}
	flag.Func("only", "comma-separated parts to run (default all): "+strings.Join(names, ", "), func(s string) error {
		for p := range strings.SplitSeq(s, ",") {
			if p = strings.TrimSpace(p); !slices.Contains(names, p) {
				return fmt.Errorf("unknown part %q", p)
			}
			o.only = append(o.only, p)
		}
		return nil
	})
	flag.IntVar(&o.contracts, "contracts", 100000, "contracts to seed; each yields about 10 report rows")
	flag.StringVar(&o.dataDir, "data-dir", filepath.Join(os.TempDir(), "informe-bench"), "folder of the private PostgreSQL, kept between runs")
	flag.IntVar(&o.runs, "runs", 5, "measured requests per page case and gzip case; medians are reported")
	flag.IntVar(&o.exportRuns, "export-runs", 3, "rounds of whole exports (each format, COPY and informe export interleaved)")
	flag.IntVar(&o.xlsxRuns, "xlsx-runs", 1, "whole XLSX exports, each next to a CSV export")
	flag.IntVar(&o.odataRuns, "odata-runs", 3, "full reads of the OData feed, each next to a JSON export")
	flag.Func("baseline-rev", "also measure the page, typed, folding and flood cases, interleaved, with the informe of each of these comma-separated git `revisions` (or informe binaries); "+
		"the first is the one the guards compare with, the last the one the 100-row pages must keep up with",
		func(s string) error {
			for r := range strings.SplitSeq(s, ",") {
				if r = strings.TrimSpace(r); r != "" {
					o.baselines = append(o.baselines, r)
				}
			}
			return nil
		})
	flag.Func("serve-arg", "extra `flag` for every informe serve process but the baseline's (repeatable), e.g. --serve-arg=--pool-size=32",
		func(s string) error { o.serveArgs = append(o.serveArgs, s); return nil })
	flag.StringVar(&o.out, "out", filepath.Join("bench", "out"), "folder for latest.md and informe's logs")
	flag.Parse()
	if o.only == nil {
		o.only = names
	}
	err := o.validate()
	if err == nil {
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		defer stop()
		err = run(ctx, o)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "informe-bench:", err)
		os.Exit(1)
	}
}

// compared are the parts that measure each baseline too.
var compared = []string{"pages", "typed", "folding", "flood"}

func (o options) validate() error {
	switch {
	case min(o.contracts, o.runs, o.exportRuns, o.xlsxRuns, o.odataRuns) < 1:
		return errors.New("--contracts and the --*-runs must be at least 1")
	case len(o.baselines) > 0 && !slices.ContainsFunc(o.only, func(p string) bool { return slices.Contains(compared, p) }):
		return fmt.Errorf("a baseline is compared on the cases of %s: --only must include one of them", strings.Join(compared, ", "))
	}
	return nil
}

func run(ctx context.Context, o options) error {
	began := time.Now()
	tmp, err := os.MkdirTemp("", "informe-bench-run-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	logs := filepath.Join(o.out, "logs")
	if err := errors.Join(os.RemoveAll(logs), os.MkdirAll(logs, 0o755)); err != nil {
		return err
	}
	logf("starting PostgreSQL in %s", o.dataDir)
	srv, err := pgserver.Start(ctx, pgserver.Options{Dir: o.dataDir})
	if err != nil {
		return err
	}
	defer func() {
		if err := srv.Close(); err != nil {
			logf("%v", err)
		}
	}()
	db := fmt.Sprintf("bench_c%d_s1", o.contracts)
	b := &bench{o: o, tmp: tmp, dbURL: srv.URL(db)}
	if b.pool, err = prepareDatabase(ctx, srv, db, o); err != nil {
		return err
	}
	defer b.pool.Close()
	if b.total, err = postgres.ReportRowsTotal(ctx, b.pool); err != nil {
		return err
	}
	if b.total < 2*perPage {
		return fmt.Errorf("the report has %d rows: seed at least %d contracts", b.total, 2*perPage/10)
	}
	b.lastFull = b.total / perPage

	rev, _ := exec.CommandContext(ctx, "git", "describe", "--always", "--dirty").Output()
	what := "./cmd/informe at " + strings.TrimSpace(string(rev))
	bin, err := build(ctx, tmp, "")
	if err != nil {
		return err
	}
	tokens := auth.NewStore(b.pool)
	token, err := tokens.Replace(ctx, "bench", nil, time.Time{})
	if err != nil {
		return err
	}
	b.current = &launcher{bin: bin, label: "current", dbURL: b.dbURL, token: token, logDir: logs, args: o.serveArgs, pool: b.pool, db: db}
	b.launchers = []*launcher{b.current}
	for i, rev := range o.baselines {
		base := rev
		if fi, err := os.Stat(base); err != nil || fi.IsDir() {
			if base, err = build(ctx, filepath.Join(tmp, fmt.Sprint("baseline-", i)), rev); err != nil {
				return err
			}
		}
		// Flags informe gained since are not the baseline's: it gets none.
		b.launchers = append(b.launchers, &launcher{bin: base, label: "baseline " + rev, dbURL: b.dbURL, token: token, logDir: logs, pool: b.pool, db: db})
	}

	loadBefore := loadAverage()
	var took []string
	for _, p := range parts {
		if !slices.Contains(o.only, p.name) {
			continue
		}
		start := time.Now()
		err := p.run(b, ctx)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if err != nil { // the other parts may still tell something
			logf("%s FAILED: %v", p.name, err)
			b.res.check("part-ran", p.name, 1, "%v", err)
		}
		took = append(took, fmt.Sprintf("%s %.0f s (load after %s)", p.name, time.Since(start).Seconds(), loadAverage()))
	}
	if len(o.serveArgs) > 0 {
		what += " serve " + strings.Join(o.serveArgs, " ")
	}
	b.res.intro = []string{
		fmt.Sprintf("informe benchmark, %s, %s/%s, %d CPUs, %s", began.Format(time.DateTime), runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), runtime.Version()),
		fmt.Sprintf("data: %d contracts (seed 1), %d report rows", o.contracts, b.total),
		fmt.Sprintf("informe: %s; parts: %s", what, strings.Join(took, "; ")),
		"load average (1, 5, 15 min) before: " + loadBefore + ", after: " + loadAverage(),
	}
	for _, l := range []string{loadBefore, loadAverage()} {
		if one, _ := strconv.ParseFloat(strings.Fields(l + " 0")[0], 64); one > float64(runtime.NumCPU()+1) {
			b.res.intro = append(b.res.intro, fmt.Sprintf("WARNING: a load average of %.1f on %d CPUs: other work competed with the benchmark, and its figures are noisy", one, runtime.NumCPU()))
			break
		}
	}
	var md strings.Builder
	b.res.write(os.Stdout, &md)
	path := filepath.Join(o.out, "latest.md")
	if err := os.WriteFile(path, []byte(md.String()), 0o644); err != nil {
		return err
	}
	fmt.Printf("\nMarkdown, with the query plans: %s; informe's logs: %s\n", path, logs)
	return nil
}

// loadAverage returns /proc/loadavg's 1-, 5- and 15-minute averages.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if f := strings.Fields(string(b)); err == nil && len(f) >= 3 {
		return strings.Join(f[:3], " ")
	}
	return "unknown"
}
