package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/informe/informe/internal/pgserver"
	"github.com/informe/informe/internal/seed"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/informe/informe/auth"
	"github.com/informe/informe/internal/postgres"
)

// perPage is the page size the targets speak of, and small the page size
// that peak RSS at perPage is compared with.
const (
	perPage = 10000
	small   = 100
)

// formats are measured in this order; rssFormats also at small pages.
var (
	formats    = []string{"json", "ndjson", "csv", "xlsx"}
	rssFormats = []string{"json", "ndjson", "csv"}
)

func run(ctx context.Context, o options) error {
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
	dbName := fmt.Sprintf("bench_c%d_s%d", o.contracts, o.seed)
	dbURL := srv.URL(dbName)
	pool, err := prepareDatabase(ctx, srv, dbName, o)
	if err != nil {
		return err
	}
	defer pool.Close()

	var total int64
	if err := pool.QueryRow(ctx, "SELECT report_rows_total()").Scan(&total); err != nil {
		return err
	}
	if total == 0 {
		return errors.New("the report is empty")
	}

	bin := filepath.Join(tmp, "informe")
	logf("building informe")
	build := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cmd/informe")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		return fmt.Errorf("go build: %w", err)
	}
	tokens := auth.NewStore(pool)
	if err := tokens.Delete(ctx, "bench"); err != nil {
		return err
	}
	token, err := tokens.Create(ctx, "bench", nil, time.Time{})
	if err != nil {
		return err
	}

	logPath := filepath.Join(o.out, "informe.log")
	if err := os.WriteFile(logPath, nil, 0o644); err != nil {
		return err
	}
	start := func() (*informe, error) { return startInforme(ctx, bin, dbURL, token, logPath) }

	// The last page is what informe says it is.
	totalPages, err := askTotalPages(ctx, start)
	if err != nil {
		return err
	}
	if want := (total + perPage - 1) / perPage; totalPages != want {
		return fmt.Errorf("informe says %d pages of %d rows, the maintained counts say %d", totalPages, perPage, want)
	}
	pages := []pageSpec{{label: "first", page: 1, perPage: perPage}, {label: "last", page: totalPages, perPage: perPage}}
	if total%perPage != 0 && totalPages > 1 {
		// A partial last page is no fair comparison with page 1; the
		// deepest full page is.
		pages = append(pages, pageSpec{label: "last full", page: totalPages - 1, perPage: perPage})
	}
	smallPage := pageSpec{label: "first", page: 1, perPage: small}
	for i := range pages {
		if err := planPage(ctx, dbURL, &pages[i]); err != nil {
			return err
		}
	}
	if err := planPage(ctx, dbURL, &smallPage); err != nil {
		return err
	}

	res := &results{contracts: o.contracts, seed: o.seed, total: total, totalPages: totalPages, runs: o.runs, started: time.Now(), loadBefore: loadAverage()}

	logf("COPY baselines: psql start-up, then each page through psql and through pgx")
	if res.psqlStartup, err = psqlStartup(ctx, dbURL, o.runs); err != nil {
		return err
	}
	copies := map[string]*copyResult{}
	for _, p := range append(pages, smallPage) {
		c, err := measureCopy(ctx, pool, dbURL, p, o.runs)
		if err != nil {
			return err
		}
		copies[p.key()] = c
		res.copies = append(res.copies, c)
	}

	type benchCase struct {
		format string
		page   pageSpec
	}
	var cases []benchCase
	for _, f := range formats {
		for _, p := range pages {
			cases = append(cases, benchCase{f, p})
		}
	}
	for _, f := range rssFormats {
		cases = append(cases, benchCase{f, smallPage})
	}
	for _, c := range cases {
		logf("informe %s, page %d (%s), %d rows per page", c.format, c.page.page, c.page.label, c.page.perPage)
		r, err := measureInforme(ctx, start, pool, dbName, c.format, c.page, o.runs)
		if err != nil {
			return fmt.Errorf("%s %s page: %w", c.format, c.page.label, err)
		}
		r.copy = copies[c.page.key()]
		res.cases = append(res.cases, r)
	}

	logf("query plans")
	if res.plans, err = explain(ctx, pool, pages); err != nil {
		return err
	}

	res.loadAfter = loadAverage()
	res.evaluate()
	res.writeText(os.Stdout)
	md := filepath.Join(o.out, "latest.md")
	f, err := os.Create(md)
	if err != nil {
		return err
	}
	res.writeMarkdown(f)
	if err := f.Close(); err != nil {
		return err
	}
	fmt.Printf("\nMarkdown, with the query plans: %s; informe's logs: %s\n", md, logPath)
	return nil
}

// prepareDatabase creates, migrates and seeds the benchmark's database
// unless it already holds the data asked for, then vacuums and analyzes it.
func prepareDatabase(ctx context.Context, srv *pgserver.Server, name string, o options) (*pgxpool.Pool, error) {
	if err := srv.CreateDatabase(ctx, name); err != nil {
		return nil, err
	}
	// Its own application_name, so that the backends of informe's pool
	// are told apart from the benchmark's own.
	pool, err := postgres.Open(ctx, srv.URL(name)+"&application_name=informe-bench")
	if err != nil {
		return nil, err
	}
	if _, err := postgres.Migrate(ctx, pool); err != nil {
		pool.Close()
		return nil, err
	}
	has, err := seed.HasData(ctx, pool)
	if err != nil {
		pool.Close()
		return nil, err
	}
	if has {
		var n int
		if err := pool.QueryRow(ctx, "SELECT count(*) FROM contracts").Scan(&n); err != nil {
			pool.Close()
			return nil, err
		}
		if n != o.contracts {
			pool.Close()
			return nil, fmt.Errorf("database %s in %s holds %d contracts, not %d; delete the folder to start over", name, o.dataDir, n, o.contracts)
		}
		logf("reusing %d seeded contracts in database %s", n, name)
	} else {
		logf("seeding %d contracts (seed %d)", o.contracts, o.seed)
		began := time.Now()
		st, err := seed.Seed(ctx, pool, seed.Options{Contracts: o.contracts, Seed: o.seed})
		if err != nil {
			pool.Close()
			return nil, err
		}
		logf("seeded %d contracts, %d report rows in %s", st.Contracts, st.ReportRows, time.Since(began).Round(time.Millisecond))
	}
	began := time.Now()
	if _, err := pool.Exec(ctx, "VACUUM ANALYZE"); err != nil {
		pool.Close()
		return nil, err
	}
	logf("VACUUM ANALYZE in %s", time.Since(began).Round(time.Millisecond))
	return pool, nil
}

// askTotalPages asks a fresh informe for the number of 10,000-row pages,
// with a JSON request for a page past the end, which streams no rows.
func askTotalPages(ctx context.Context, start func() (*informe, error)) (int64, error) {
	inf, err := start()
	if err != nil {
		return 0, err
	}
	defer inf.stop()
	resp, err := inf.request(ctx, fmt.Sprintf("/api/general-report?format=json&result_per_page=%d&page=%d", perPage, int64(1)<<40))
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	var body struct {
		TotalPages int64           `json:"totalPages"`
		Data       json.RawMessage `json:"data"`
	}
	if resp.StatusCode != 200 {
		b, _ := io.ReadAll(resp.Body)
		return 0, fmt.Errorf("informe answered %s: %s", resp.Status, strings.TrimSpace(string(b)))
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		return 0, fmt.Errorf("total pages: %w", err)
	}
	return body.TotalPages, nil
}

// loadAverage returns the 1-, 5- and 15-minute load averages.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "%s  "+format+"\n", append([]any{time.Now().Format("15:04:05")}, args...)...)
}
