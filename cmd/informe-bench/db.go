package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/informe/informe/internal/dataset"
	"github.com/informe/informe/internal/pgserver"
	"github.com/informe/informe/internal/postgres"
	"github.com/informe/informe/internal/seed"
	"github.com/informe/informe/report"
)

// prepareDatabase creates, migrates and seeds the benchmark's database
// unless it holds the data, and opens a pool whose application_name tells
// its backends from informe's.
func prepareDatabase(ctx context.Context, srv *pgserver.Server, name string, o options) (_ *pgxpool.Pool, err error) {
	if err := postgres.EnsureDatabase(ctx, srv.URL("postgres"), name); err != nil {
		return nil, err
	}
	pool, err := postgres.Open(ctx, srv.URL(name)+"&application_name=informe-bench")
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			pool.Close()
		}
	}()
	_, err = postgres.Migrate(ctx, pool)
	has, herr := seed.HasData(ctx, pool)
	if err = errors.Join(err, herr); err != nil {
		return nil, err
	}
	if has { // the seed is one transaction: this database has all its contracts
		logf("reusing the %d contracts seeded in database %s", o.contracts, name)
	} else {
		logf("seeding %d contracts", o.contracts)
		st, err := seed.Seed(ctx, pool, seed.Options{Contracts: o.contracts, Seed: 1})
		if err != nil {
			return nil, err
		}
		logf("seeded %d contracts, %d report rows", st.Contracts, st.ReportRows)
	}
	// The seed's largest client has about 120 rows: a client-filtered
	// export of that measures only the cost of a request. Client
	// bigClient gets every bigClientEvery-th contract instead (about 5% of
	// the report), once; the report's rows and counts do not change.
	if err := postgres.GiveContracts(ctx, pool, bigClient, bigClientEvery); err != nil {
		return nil, fmt.Errorf("big client: %w", err)
	}
	return pool, postgres.VacuumAnalyze(ctx, pool)
}

const (
	bigClient      = 1
	bigClientEvery = 20
)

// lastQuery is a pgx tracer that keeps the last statement run, its
// arguments written in (integers only, as informe's are) for COPY and
// EXPLAIN, which take no parameters.
type lastQuery struct{ sql string }

func (t *lastQuery) TraceQueryStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	t.sql = d.SQL
	for i := len(d.Args); i >= 1; i-- { // $10 before $1
		t.sql = strings.ReplaceAll(t.sql, fmt.Sprintf("$%d", i), fmt.Sprint(d.Args[i-1]))
	}
	return ctx
}

func (t *lastQuery) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

func copySQL(query string) string { return postgres.CopyCSV(rendered(query)) }

// traced opens q on the general report with informe's dataset store and
// returns its count and the last statement it ran, the rows' query, so
// that COPY and EXPLAIN run exactly what informe runs.
func traced(ctx context.Context, url string, q dataset.Query) (string, int64, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return "", 0, err
	}
	tracer := &lastQuery{}
	cfg.ConnConfig.Tracer, cfg.MaxConns = tracer, 1
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return "", 0, err
	}
	defer pool.Close()
	q.Count = true
	cur, err := postgres.NewStore(pool).Open(ctx, report.Dataset(report.Maintained), q)
	if err != nil {
		return "", 0, err
	}
	defer cur.Close()
	return tracer.sql, cur.Total(), nil
}

// copyOnce times sql, a COPY TO STDOUT of rows rows, through pgx, with its
// backend's CPU seconds.
func copyOnce(ctx context.Context, pool *pgxpool.Pool, sql string, rows int64) (sample, error) {
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return sample{}, err
	}
	defer conn.Release()
	pid := int(conn.Conn().PgConn().PID())
	cpu0 := procCPU(pid)
	var w countWriter
	began := time.Now()
	tag, err := conn.Conn().PgConn().CopyTo(ctx, &w, sql)
	s := sample{wall: time.Since(began), ttfb: w.first.Sub(began), bytes: w.n, pgCPU: procCPU(pid) - cpu0}
	if err == nil && tag.RowsAffected() != rows {
		err = fmt.Errorf("COPY: %d rows, want %d", tag.RowsAffected(), rows)
	}
	return s, err
}

// explain returns EXPLAIN's output for sql, prefixed with options.
func explain(ctx context.Context, pool *pgxpool.Pool, title, options, sql string) (plan, error) {
	lines, err := postgres.Explain(ctx, pool, options, sql)
	return plan{title, strings.Join(lines, "\n") + "\n"}, err
}
