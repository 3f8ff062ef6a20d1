// Command bench measures informe against about a million report rows in a
// private PostgreSQL, each case served by a fresh `informe serve` process,
// next to COPY of the same rows in the same run:
//
//   - pages: for each format (json, ndjson, csv, xlsx), a 10,000-row page
//     at page 1 and at the last page, next to COPY through psql and pgx;
//   - export: the whole report through GET /api/general-report/export in
//     every format, a client's rows, and `informe export` to a file, next to
//     COPY of the same query through pgx, with informe's peak RSS;
//   - odata: the whole OData feed read by following @odata.nextLink, next to
//     the JSON export of the same rows;
//   - slow: 32 clients reading pages at 2 KB/s; how long their responses
//     hold a database connection, and the p99 of small pages meanwhile;
//   - burst: 64 CSV and 16 XLSX pages at once, and informe's peak RSS;
//   - gzip: a page with Accept-Encoding: gzip next to the same without.
//
// It prints tables and the targets of the benchmark issues with PASS or
// MISS, and writes the same as Markdown, with the query plans, to
// bench/out/latest.md. --baseline-rev (or --baseline-bin) also measures the
// page cases with an older informe, interleaved, and prints a before/after
// table.
//
// Run it through scripts/bench, which makes sure PostgreSQL and psql are
// installed. The seeded cluster is kept in --data-dir, so only the first
// run pays for the seed.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
)

// parts are the groups of cases --only chooses from, in the order they run.
var parts = []string{"pages", "export", "odata", "slow", "burst", "gzip"}

type options struct {
	contracts   int
	seed        int64
	dataDir     string
	pgUser      string
	runs        int
	exportRuns  int
	xlsxRuns    int
	odataRuns   int
	out         string
	only        []string
	informeBin  string
	baselineBin string
	baselineRev string
	serveArgs   []string
	slowClients int
	slowRate    int
	probes      int
	perf        bool
}

func (o options) has(part string) bool { return slices.Contains(o.only, part) }

// stringList is a repeatable string flag.
type stringList []string

func (l *stringList) String() string     { return strings.Join(*l, " ") }
func (l *stringList) Set(s string) error { *l = append(*l, s); return nil }

func main() {
	var o options
	var only string
	var serveArgs stringList
	flag.IntVar(&o.contracts, "contracts", 100000, "contracts to seed; each yields about 10 report rows")
	flag.Int64Var(&o.seed, "seed", 1, "seed of the generated data")
	flag.StringVar(&o.dataDir, "data-dir", filepath.Join(os.TempDir(), "informe-bench"),
		"folder of the private PostgreSQL; kept between runs so that the seed is reused")
	flag.StringVar(&o.pgUser, "pg-user", "postgres", "unprivileged user to run PostgreSQL as when run as root")
	flag.IntVar(&o.runs, "runs", 5, "measured requests per page case, and per gzip case; medians are reported")
	flag.IntVar(&o.exportRuns, "export-runs", 3, "measured whole exports per text format, COPY and `informe export` (interleaved); medians are reported")
	flag.IntVar(&o.xlsxRuns, "xlsx-runs", 1, "measured whole XLSX exports (about a minute each)")
	flag.IntVar(&o.odataRuns, "odata-runs", 3, "full reads of the OData feed, each next to a JSON export; per page depth the median is taken")
	flag.StringVar(&only, "only", strings.Join(parts, ","), "comma-separated parts to run: "+strings.Join(parts, ", "))
	flag.StringVar(&o.informeBin, "informe-bin", "", "prebuilt informe `binary` to measure, instead of building ./cmd/informe")
	flag.StringVar(&o.baselineBin, "baseline-bin", "", "also measure the page cases with this informe `binary`, interleaved, and print a before/after table")
	flag.StringVar(&o.baselineRev, "baseline-rev", "", "like --baseline-bin, building ./cmd/informe of this git `revision` (extracted with git archive into a temporary folder)")
	flag.Var(&serveArgs, "serve-arg", "extra `flag` for every informe serve process (repeatable), e.g. --serve-arg=--pool-size=32")
	flag.IntVar(&o.slowClients, "slow-clients", 32, "throttled clients in the slow part")
	flag.IntVar(&o.slowRate, "slow-rate", 2048, "bytes per second each throttled client reads")
	flag.IntVar(&o.probes, "probes", 100, "10-row JSON pages timed in the slow part")
	flag.BoolVar(&o.perf, "perf", false, "profile the first round of the whole exports (informe and its backends; COPY's backend) with perf; reports in OUT/perf")
	flag.StringVar(&o.out, "out", filepath.Join("bench", "out"), "folder for latest.md and informe's logs")
	flag.Parse()
	o.serveArgs = serveArgs
	for p := range strings.SplitSeq(only, ",") {
		if p = strings.TrimSpace(p); p == "" {
			continue
		}
		if !slices.Contains(parts, p) {
			fmt.Fprintf(os.Stderr, "bench: --only: unknown part %q (parts: %s)\n", p, strings.Join(parts, ", "))
			os.Exit(2)
		}
		o.only = append(o.only, p)
	}
	switch {
	case o.runs < 1 || o.contracts < 1 || o.exportRuns < 1 || o.xlsxRuns < 1 || o.odataRuns < 1:
		fmt.Fprintln(os.Stderr, "bench: --runs, --export-runs, --xlsx-runs, --odata-runs and --contracts must be at least 1")
		os.Exit(2)
	case len(o.only) == 0:
		fmt.Fprintln(os.Stderr, "bench: --only names no part")
		os.Exit(2)
	case o.baselineBin != "" && o.baselineRev != "":
		fmt.Fprintln(os.Stderr, "bench: give --baseline-bin or --baseline-rev, not both")
		os.Exit(2)
	case (o.baselineBin != "" || o.baselineRev != "") && !o.has("pages"):
		fmt.Fprintln(os.Stderr, "bench: a baseline is compared on the page cases: --only must include pages")
		os.Exit(2)
	case o.slowClients < 1 || o.slowRate < 1 || o.probes < 1:
		fmt.Fprintln(os.Stderr, "bench: --slow-clients, --slow-rate and --probes must be at least 1")
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, o); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}
