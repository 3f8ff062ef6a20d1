package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/informe/informe/auth"
	"github.com/informe/informe/internal/pgserver"
	"github.com/informe/informe/internal/postgres"
	"github.com/informe/informe/internal/seed"
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

// bench is what every part of a run shares.
type bench struct {
	o          options
	tmp        string // removed at the end
	pool       *pgxpool.Pool
	dbName     string
	dbURL      string
	total      int64 // report rows, from the maintained counts
	totalPages int64 // of perPage rows, as informe says
	current    *launcher
	baseline   *launcher // nil without --baseline-bin/--baseline-rev
	res        *results
	// exportSpecs are chosen once, for the export and odata parts.
	exportSpecs *exportSpecs
	perfDir     string // where perf profiles go; "" without --perf
}

func (b *bench) backends() *backends { return &backends{pool: b.pool, db: b.dbName} }

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
	b := &bench{o: o, tmp: tmp, dbName: fmt.Sprintf("bench_c%d_s%d", o.contracts, o.seed)}
	b.dbURL = srv.URL(b.dbName)
	if b.pool, err = prepareDatabase(ctx, srv, b.dbName, o); err != nil {
		return err
	}
	defer b.pool.Close()

	if err := b.pool.QueryRow(ctx, "SELECT report_rows_total()").Scan(&b.total); err != nil {
		return err
	}
	if b.total == 0 {
		return errors.New("the report is empty")
	}

	bin := o.informeBin
	if bin == "" {
		bin = filepath.Join(tmp, "informe")
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
	logPath := filepath.Join(o.out, "informe.log")
	if err := os.WriteFile(logPath, nil, 0o644); err != nil {
		return err
	}
	if o.perf {
		b.perfDir = filepath.Join(o.out, "perf")
		if err := os.MkdirAll(b.perfDir, 0o755); err != nil {
			return err
		}
	}
	b.current = &launcher{bin: bin, label: "current", dbURL: b.dbURL, token: token, logPath: logPath, logDir: tmp, args: o.serveArgs}
	if base := o.baselineBin; base != "" || o.baselineRev != "" {
		label := "baseline " + base
		if o.baselineRev != "" {
			label = "baseline " + o.baselineRev
			if base, err = buildRevision(ctx, o.baselineRev, tmp); err != nil {
				return err
			}
		}
		// Flags informe gained later are not the baseline's: it gets none.
		b.baseline = &launcher{bin: base, label: label, dbURL: b.dbURL, token: token, logPath: logPath, logDir: tmp}
	}

	// The last page is what informe says it is.
	if b.totalPages, err = askTotalPages(ctx, b.current); err != nil {
		return err
	}
	if want := (b.total + perPage - 1) / perPage; b.totalPages != want {
		return fmt.Errorf("informe says %d pages of %d rows, the maintained counts say %d", b.totalPages, perPage, want)
	}
	b.res = &results{contracts: o.contracts, seed: o.seed, total: b.total, totalPages: b.totalPages, runs: o.runs, o: o,
		started: time.Now(), loadBefore: loadAverage(), binary: bin}
	if b.baseline != nil {
		b.res.baselineLabel = b.baseline.label
	}
	steps := []struct {
		part string
		run  func(context.Context) error
	}{
		{"pages", b.pages}, {"export", b.exports}, {"odata", b.odata},
		{"slow", b.slow}, {"burst", b.burst}, {"gzip", b.gzip},
	}
	for _, s := range steps {
		if !o.has(s.part) {
			continue
		}
		began := time.Now()
		err := s.run(ctx)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if err != nil {
			// The other parts may still tell something: go on, and
			// count this one as a missed target.
			logf("%s FAILED: %v", s.part, err)
			b.res.failed = append(b.res.failed, partFailure{s.part, err})
		}
		b.res.took = append(b.res.took, partTime{s.part, time.Since(began), loadAverage()})
	}

	b.res.loadAfter = loadAverage()
	b.res.evaluate()
	b.res.writeText(os.Stdout)
	md := filepath.Join(o.out, "latest.md")
	f, err := os.Create(md)
	if err != nil {
		return err
	}
	b.res.writeMarkdown(f)
	if err := f.Close(); err != nil {
		return err
	}
	fmt.Printf("\nMarkdown, with the query plans: %s; informe's logs: %s\n", md, logPath)
	return nil
}

// pages measures each format's 10,000-row page 1 and last page, and the
// small pages that peak RSS is compared with, next to COPY of each page;
// with a baseline, each case also with the baseline binary, their
// requests alternating.
func (b *bench) pages(ctx context.Context) error {
	pages := []pageSpec{{label: "first", page: 1, perPage: perPage}, {label: "last", page: b.totalPages, perPage: perPage}}
	if b.total%perPage != 0 && b.totalPages > 1 {
		// A partial last page is no fair comparison with page 1; the
		// deepest full page is.
		pages = append(pages, pageSpec{label: "last full", page: b.totalPages - 1, perPage: perPage})
	}
	smallPage := pageSpec{label: "first", page: 1, perPage: small}
	for i := range pages {
		if err := planPage(ctx, b.dbURL, &pages[i]); err != nil {
			return err
		}
	}
	if err := planPage(ctx, b.dbURL, &smallPage); err != nil {
		return err
	}

	res := b.res
	logf("COPY baselines: psql start-up, then each page through psql and through pgx")
	var err error
	if res.psqlStartup, err = psqlStartup(ctx, b.dbURL, b.o.runs); err != nil {
		return err
	}
	copies := map[string]*copyResult{}
	for _, p := range append(pages, smallPage) {
		c, err := measureCopy(ctx, b.pool, b.dbURL, p, b.o.runs)
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
		launchers := []*launcher{b.current}
		if b.baseline != nil {
			launchers = append(launchers, b.baseline)
		}
		logf("informe %s, page %d (%s), %d rows per page", c.format, c.page.page, c.page.label, c.page.perPage)
		rs, err := measureInforme(ctx, launchers, b.pool, b.dbName, c.format, c.page, b.o.runs)
		if err != nil {
			return fmt.Errorf("%s %s page: %w", c.format, c.page.label, err)
		}
		for _, r := range rs {
			r.copy = copies[c.page.key()]
		}
		res.cases = append(res.cases, rs[0])
		res.baseCases = append(res.baseCases, rs[1:]...)
	}

	logf("query plans of the pages")
	plans, err := explain(ctx, b.pool, pages)
	if err != nil {
		return err
	}
	res.plans = append(res.plans, plans...)
	return nil
}

// goBuild builds dir's ./cmd/informe into out.
func goBuild(ctx context.Context, dir, out string) error {
	build := exec.CommandContext(ctx, "go", "build", "-o", out, "./cmd/informe")
	build.Dir = dir
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		return fmt.Errorf("go build in %s: %w", dir, err)
	}
	return nil
}

// buildRevision extracts rev of the repository with git archive (no
// worktree, nothing in .git changes) under tmp and builds its informe.
func buildRevision(ctx context.Context, rev, tmp string) (string, error) {
	dir := filepath.Join(tmp, "baseline-src")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	logf("extracting %s into %s and building its informe", rev, dir)
	archive := exec.CommandContext(ctx, "git", "archive", "--format=tar", rev)
	untar := exec.CommandContext(ctx, "tar", "-x", "-C", dir)
	pipe, err := archive.StdoutPipe()
	if err != nil {
		return "", err
	}
	untar.Stdin = pipe
	archive.Stderr, untar.Stderr = os.Stderr, os.Stderr
	if err := untar.Start(); err != nil {
		return "", err
	}
	if err := archive.Run(); err != nil {
		_ = untar.Wait()
		return "", fmt.Errorf("git archive %s: %w", rev, err)
	}
	if err := untar.Wait(); err != nil {
		return "", fmt.Errorf("untar %s: %w", rev, err)
	}
	bin := filepath.Join(tmp, "informe-baseline")
	return bin, goBuild(ctx, dir, bin)
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
	if err := ensureBigClient(ctx, pool); err != nil {
		pool.Close()
		return nil, err
	}
	began := time.Now()
	if _, err := pool.Exec(ctx, "VACUUM ANALYZE"); err != nil {
		pool.Close()
		return nil, err
	}
	logf("VACUUM ANALYZE in %s", time.Since(began).Round(time.Millisecond))
	return pool, nil
}

// bigClient owns every bigClientEvery-th contract once ensureBigClient has
// run: the seed spreads contracts over clients (its largest client has
// about 120 rows), and a client-filtered export of a hundred rows measures
// nothing but the cost of a request.
const (
	bigClient      = 1
	bigClientEvery = 20
)

// ensureBigClient gives client bigClient every bigClientEvery-th contract
// (about 50,000 report rows at the default size), once: the seeded
// database is changed in place and kept. The contracts' copies of their
// client's details are left as they were; the report's rows and counts do
// not change.
func ensureBigClient(ctx context.Context, pool *pgxpool.Pool) error {
	tag, err := pool.Exec(ctx, "UPDATE contracts SET client_id = $1 WHERE id % $2 = 0 AND client_id <> $1", bigClient, bigClientEvery)
	if err != nil {
		return fmt.Errorf("big client: %w", err)
	}
	if n := tag.RowsAffected(); n > 0 {
		logf("gave client %d every %dth contract (%d contracts moved)", bigClient, bigClientEvery, n)
	}
	return nil
}

// askTotalPages asks a fresh informe for the number of 10,000-row pages,
// with a JSON request for a page past the end, which streams no rows.
func askTotalPages(ctx context.Context, l *launcher) (int64, error) {
	inf, err := l.start(ctx, startOptions{})
	if err != nil {
		return 0, err
	}
	defer inf.stop()
	var body strings.Builder
	s, err := inf.fetch(ctx, fmt.Sprintf("/api/general-report?format=json&result_per_page=%d&page=%d", perPage, int64(1)<<40), nil, &body)
	if err != nil {
		return 0, fmt.Errorf("total pages: %w", err)
	}
	if s.status != 200 {
		return 0, fmt.Errorf("informe answered %d: %s", s.status, strings.TrimSpace(body.String()))
	}
	var page struct {
		TotalPages int64           `json:"totalPages"`
		Data       json.RawMessage `json:"data"`
	}
	if err := json.NewDecoder(strings.NewReader(body.String())).Decode(&page); err != nil {
		return 0, fmt.Errorf("total pages: %w", err)
	}
	return page.TotalPages, nil
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
