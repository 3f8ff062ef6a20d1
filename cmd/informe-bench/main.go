// Command bench measures informe against about a million report rows in a
// private PostgreSQL: for each format (json, ndjson, csv, xlsx), a
// 10,000-row page at page 1 and at the last page, each served by a fresh
// `informe serve` process, next to COPY of the same rows (through psql and
// through pgx) in the same run. It prints a table and the targets of the
// benchmark issue with PASS or MISS, and writes the same as Markdown, with
// the query plans, to bench/out/latest.md.
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
	"syscall"
)

type options struct {
	contracts int
	seed      int64
	dataDir   string
	pgUser    string
	runs      int
	out       string
}

func main() {
	var o options
	flag.IntVar(&o.contracts, "contracts", 100000, "contracts to seed; each yields about 10 report rows")
	flag.Int64Var(&o.seed, "seed", 1, "seed of the generated data")
	flag.StringVar(&o.dataDir, "data-dir", filepath.Join(os.TempDir(), "informe-bench"),
		"folder of the private PostgreSQL; kept between runs so that the seed is reused")
	flag.StringVar(&o.pgUser, "pg-user", "postgres", "unprivileged user to run PostgreSQL as when run as root")
	flag.IntVar(&o.runs, "runs", 5, "measured requests per case; medians are reported")
	flag.StringVar(&o.out, "out", filepath.Join("bench", "out"), "folder for latest.md and informe's logs")
	flag.Parse()
	if o.runs < 1 || o.contracts < 1 {
		fmt.Fprintln(os.Stderr, "bench: --runs and --contracts must be at least 1")
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, o); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}
