// Command informe-bench measures informe against about a million report
// rows in a private PostgreSQL, each case served by a fresh `informe serve`
// process, next to COPY of the same rows in the same run. Its parts (pages,
// export, xlsx, parts, odata, slow, burst, gzip) are the methods of bench of
// those names; scripts/bench --help says what each measures. The targets
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
)

type options struct {
	contracts                             int
	seed                                  int64
	dataDir, pgUser, out                  string
	runs, exportRuns, xlsxRuns, odataRuns int
	only                                  []string
	informeBin, baselineBin, baselineRev  string
	serveArgs                             stringList
	slowClients, slowRate, probes         int
}

// stringList is a repeatable string flag.
type stringList []string

func (l *stringList) String() string     { return strings.Join(*l, " ") }
func (l *stringList) Set(s string) error { *l = append(*l, s); return nil }

// bench is what every part of a run shares.
type bench struct {
	o         options
	tmp       string
	pool      *pgxpool.Pool
	dbURL     string
	total     int64 // report rows
	lastFull  int64 // the deepest full page of perPage rows
	current   *launcher
	baseline  *launcher // nil without --baseline-rev or --baseline-bin
	res       results
	exportSet *exportSet // chosen once, for the parts that export
}

// perPage is the page size of the page cases and the OData feed; small the
// size of warm-ups and small pages.
const (
	perPage = 10000
	small   = 100
)

// part is one group of cases --only chooses from, in the order they run.
type part struct {
	name string
	run  func(*bench, context.Context) error
}

var parts = []part{
	{"pages", (*bench).pages}, {"export", (*bench).export}, {"xlsx", (*bench).xlsx}, {"parts", (*bench).parts},
	{"odata", (*bench).odata}, {"slow", (*bench).slow}, {"burst", (*bench).burst}, {"gzip", (*bench).gzip},
	{"folding", (*bench).folding},
}

func main() {
	var o options
	var names []string
	for _, p := range parts {
		names = append(names, p.name)
	}
	only := flag.String("only", strings.Join(names, ","), "comma-separated parts to run: "+strings.Join(names, ", "))
	flag.IntVar(&o.contracts, "contracts", 100000, "contracts to seed; each yields about 10 report rows")
	flag.Int64Var(&o.seed, "seed", 1, "seed of the generated data")
	flag.StringVar(&o.dataDir, "data-dir", filepath.Join(os.TempDir(), "informe-bench"), "folder of the private PostgreSQL, kept between runs")
	flag.StringVar(&o.pgUser, "pg-user", "postgres", "unprivileged user to run PostgreSQL as when run as root")
	flag.IntVar(&o.runs, "runs", 5, "measured requests per page case and gzip case; medians are reported")
	flag.IntVar(&o.exportRuns, "export-runs", 3, "rounds of whole exports (each format, COPY and informe export interleaved)")
	flag.IntVar(&o.xlsxRuns, "xlsx-runs", 1, "whole XLSX exports, each next to a CSV export")
	flag.IntVar(&o.odataRuns, "odata-runs", 3, "full reads of the OData feed, each next to a JSON export")
	flag.StringVar(&o.informeBin, "informe-bin", "", "prebuilt informe `binary` to measure instead of building ./cmd/informe")
	flag.StringVar(&o.baselineBin, "baseline-bin", "", "also measure the page cases with this informe `binary`, interleaved")
	flag.StringVar(&o.baselineRev, "baseline-rev", "", "like --baseline-bin, building ./cmd/informe of this git `revision`")
	flag.Var(&o.serveArgs, "serve-arg", "extra `flag` for every informe serve process but the baseline's (repeatable), e.g. --serve-arg=--pool-size=32")
	flag.IntVar(&o.slowClients, "slow-clients", 32, "throttled clients in the slow part")
	flag.IntVar(&o.slowRate, "slow-rate", 2048, "bytes per second each throttled client reads")
	flag.IntVar(&o.probes, "probes", 100, "10-row JSON pages timed in the slow part")
	flag.StringVar(&o.out, "out", filepath.Join("bench", "out"), "folder for latest.md and informe's logs")
	flag.Parse()
	for p := range strings.SplitSeq(*only, ",") {
		if p = strings.TrimSpace(p); p != "" {
			o.only = append(o.only, p)
		}
	}
	if err := o.validate(names); err != nil {
		fmt.Fprintln(os.Stderr, "informe-bench:", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, o); err != nil {
		fmt.Fprintln(os.Stderr, "informe-bench:", err)
		os.Exit(1)
	}
}

func (o options) validate(names []string) error {
	for _, p := range o.only {
		if !slices.Contains(names, p) {
			return fmt.Errorf("--only: unknown part %q (parts: %s)", p, strings.Join(names, ", "))
		}
	}
	switch {
	case len(o.only) == 0:
		return errors.New("--only names no part")
	case min(o.contracts, o.runs, o.exportRuns, o.xlsxRuns, o.odataRuns, o.slowClients, o.slowRate, o.probes) < 1:
		return errors.New("--contracts, the --*-runs, --slow-clients, --slow-rate and --probes must be at least 1")
	case o.baselineBin != "" && o.baselineRev != "":
		return errors.New("give --baseline-bin or --baseline-rev, not both")
	case (o.baselineBin != "" || o.baselineRev != "") && !slices.Contains(o.only, "pages"):
		return errors.New("a baseline is compared on the page cases: --only must include pages")
	}
	return nil
}

func run(ctx context.Context, o options) error {
	began := time.Now()
	if err := os.MkdirAll(o.out, 0o755); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "informe-bench-run-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	logf("starting PostgreSQL in %s", o.dataDir)
	srv, err := pgserver.Start(ctx, pgserver.Options{Dir: o.dataDir, RunAs: o.pgUser})
	if err != nil {
		return err
	}
	defer func() {
		if err := srv.Close(); err != nil {
			logf("%v", err)
		}
	}()
	db := fmt.Sprintf("bench_c%d_s%d", o.contracts, o.seed)
	b := &bench{o: o, tmp: tmp, dbURL: srv.URL(db)}
	if b.pool, err = prepareDatabase(ctx, srv, db, o); err != nil {
		return err
	}
	defer b.pool.Close()
	if err := b.pool.QueryRow(ctx, "SELECT report_rows_total()").Scan(&b.total); err != nil {
		return err
	}
	if b.total < 2*perPage {
		return fmt.Errorf("the report has %d rows: seed at least %d contracts", b.total, 2*perPage/10)
	}
	b.lastFull = b.total / perPage

	bin, what := o.informeBin, o.informeBin
	if bin == "" {
		rev, _ := exec.CommandContext(ctx, "git", "describe", "--always", "--dirty").Output()
		bin, what = filepath.Join(tmp, "informe"), "./cmd/informe at "+strings.TrimSpace(string(rev))
		logf("building informe")
		if err := goBuild(ctx, ".", bin); err != nil {
			return err
		}
	}
	tokens := auth.NewStore(b.pool)
	if err := tokens.Delete(ctx, "bench"); err != nil {
		return err
	}
	token, err := tokens.Create(ctx, "bench", nil, time.Time{})
	if err != nil {
		return err
	}
	logs := filepath.Join(o.out, "logs")
	if err := errors.Join(os.RemoveAll(logs), os.MkdirAll(logs, 0o755)); err != nil {
		return err
	}
	b.current = &launcher{bin: bin, label: "current", dbURL: b.dbURL, token: token, logDir: logs, args: o.serveArgs, pg: &backends{b.pool, db}}
	if o.baselineBin != "" || o.baselineRev != "" {
		base, label := o.baselineBin, o.baselineBin
		if o.baselineRev != "" {
			label = o.baselineRev
			if base, err = buildRevision(ctx, o.baselineRev, tmp); err != nil {
				return err
			}
		}
		// Flags informe gained since are not the baseline's: it gets none.
		b.baseline = &launcher{bin: base, label: "baseline " + label, dbURL: b.dbURL, token: token, logDir: logs, pg: b.current.pg}
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
		if err != nil {
			// The other parts may still tell something: go on.
			logf("%s FAILED: %v", p.name, err)
			b.res.check("part-ran", p.name, 1, "%v", err)
		}
		took = append(took, fmt.Sprintf("%s %.0f s (load after %s)", p.name, time.Since(start).Seconds(), loadAverage()))
	}
	args := ""
	if len(o.serveArgs) > 0 {
		args = " serve " + o.serveArgs.String()
	}
	b.res.intro = []string{
		"informe benchmark, " + machine(began),
		fmt.Sprintf("data: %d contracts (seed %d), %d report rows", o.contracts, o.seed, b.total),
		fmt.Sprintf("informe: %s%s; parts: %s", what, args, strings.Join(took, "; ")),
		"load average (1, 5, 15 min) before: " + loadBefore + ", after: " + loadAverage(),
	}
	for _, l := range []string{loadBefore, loadAverage()} {
		if one, _ := strconv.ParseFloat(strings.Fields(l + " 0")[0], 64); one > float64(runtime.NumCPU()+1) {
			b.res.intro = append(b.res.intro, fmt.Sprintf("WARNING: a load average of %.1f on %d CPUs: other work competed with the benchmark, and its figures are noisy", one, runtime.NumCPU()))
			break
		}
	}
	md := filepath.Join(o.out, "latest.md")
	f, err := os.Create(md)
	if err != nil {
		return err
	}
	b.res.write(os.Stdout, f)
	if err := f.Close(); err != nil {
		return err
	}
	fmt.Printf("\nMarkdown, with the query plans: %s; informe's logs: %s\n", md, logs)
	return nil
}
