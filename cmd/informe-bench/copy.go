package main

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/informe/informe/report"
)

// pageQuery is a statement informe ran and its arguments.
type pageQuery struct {
	SQL  string
	Args []any
}

// pageSpec is one page of the unfiltered report and the query informe
// runs for it.
type pageSpec struct {
	label   string
	page    int64
	perPage int64
	rows    int64         // rows on the page
	query   pageQuery     // the page query report.Store.Open ran
	planned time.Duration // how long Open took (count, seek, query start)
}

func (p pageSpec) key() string { return fmt.Sprintf("%d/%d", p.page, p.perPage) }

// lastQuery is a pgx tracer that keeps the last statement run.
type lastQuery struct{ q pageQuery }

func (t *lastQuery) TraceQueryStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	t.q = pageQuery{d.SQL, d.Args}
	return ctx
}

func (t *lastQuery) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

// planPage opens the page with report.Store.Open, the server's own entry
// point, on a pool of its own whose tracer records the statements: the last
// one is the page query, so that COPY and EXPLAIN run exactly the query
// informe runs. It notes how long counting and seeking took.
func planPage(ctx context.Context, url string, p *pageSpec) error {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return err
	}
	tracer := &lastQuery{}
	cfg.ConnConfig.Tracer = tracer
	cfg.MaxConns = 1
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return err
	}
	defer pool.Close()
	if err := pool.Ping(ctx); err != nil {
		return err
	}
	began := time.Now()
	cur, err := report.NewStore(pool, report.Maintained).Open(ctx, report.Query{Page: p.page, PerPage: p.perPage})
	p.planned = time.Since(began)
	if err != nil {
		return fmt.Errorf("plan page %d: %w", p.page, err)
	}
	defer cur.Close()
	page := cur.Page()
	if page.CurrentPage > page.TotalPages {
		return fmt.Errorf("page %d of %d rows lies past the end (%d rows)", p.page, p.perPage, page.Total)
	}
	p.rows = min(p.perPage, page.Total-(p.page-1)*p.perPage)
	p.query = tracer.q
	return nil
}

// pageSQL is the page query with its arguments written in, for COPY,
// which takes no parameters.
func (p pageSpec) pageSQL() string {
	sql := p.query.SQL
	for i := len(p.query.Args); i >= 1; i-- { // $10 before $1
		sql = strings.ReplaceAll(sql, fmt.Sprintf("$%d", i), fmt.Sprint(p.query.Args[i-1]))
	}
	return sql
}

// args lists the page query's arguments, for titles and tables.
func (p pageSpec) args() string { return strings.Trim(fmt.Sprint(p.query.Args...), "[]") }

// copyResult is COPY of one page's rows as CSV, through psql (a new
// process and connection each time) and through pgx on an open connection.
type copyResult struct {
	page  pageSpec
	rows  int64
	bytes int64
	psql  []time.Duration
	pgx   []time.Duration
}

// measureCopy runs COPY (page query) TO STDOUT WITH CSV runs times through
// psql and runs times through pgx, after one untimed run that warms the
// cache.
func measureCopy(ctx context.Context, pool *pgxpool.Pool, dbURL string, p pageSpec, runs int) (*copyResult, error) {
	sql := "COPY (" + p.pageSQL() + ") TO STDOUT WITH CSV"
	r := &copyResult{page: p}
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return nil, err
	}
	defer conn.Release()
	for i := range runs + 1 {
		var w countWriter
		began := time.Now()
		tag, err := conn.Conn().PgConn().CopyTo(ctx, &w, sql)
		d := time.Since(began)
		if err != nil {
			return nil, fmt.Errorf("copy page %d: %w", p.page, err)
		}
		if tag.RowsAffected() != p.rows {
			return nil, fmt.Errorf("copy page %d: %d rows, want %d", p.page, tag.RowsAffected(), p.rows)
		}
		r.rows, r.bytes = tag.RowsAffected(), w.n
		if i > 0 {
			r.pgx = append(r.pgx, d)
		}
	}
	for range runs {
		var w countWriter
		d, err := psql(ctx, dbURL, sql, &w)
		if err != nil {
			return nil, err
		}
		if w.n != r.bytes {
			return nil, fmt.Errorf("psql copied %d bytes of page %d, pgx %d", w.n, p.page, r.bytes)
		}
		r.psql = append(r.psql, d)
	}
	return r, nil
}

// psqlStartup times psql running SELECT 1: its process start and
// connection, which every psql COPY pays too.
func psqlStartup(ctx context.Context, dbURL string, runs int) ([]time.Duration, error) {
	var ds []time.Duration
	for range runs {
		var w countWriter
		d, err := psql(ctx, dbURL, "SELECT 1", &w)
		if err != nil {
			return nil, err
		}
		ds = append(ds, d)
	}
	return ds, nil
}

// psql runs one psql process for sql and returns its wall time.
func psql(ctx context.Context, dbURL, sql string, out *countWriter) (time.Duration, error) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "psql", dbURL, "-X", "-q", "-v", "ON_ERROR_STOP=1", "-c", sql)
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = out, &stderr
	began := time.Now()
	err := cmd.Run()
	d := time.Since(began)
	if err != nil {
		return 0, fmt.Errorf("psql: %w: %s", err, strings.TrimSpace(stderr.String()))
	}
	return d, nil
}

// plan is one EXPLAIN (ANALYZE, BUFFERS) output.
type plan struct {
	title string
	text  string
}

// explain returns the plans of each page's query, as a one-off query with
// its values written in (the plan PostgreSQL picks for COPY, and for
// informe's first five executions of its prepared statement) and as the
// generic plan of informe's prepared statement (which PostgreSQL may switch
// to from the sixth execution on a connection), and how long counting and
// seeking took for each page.
func explain(ctx context.Context, pool *pgxpool.Pool, pages []pageSpec) ([]plan, error) {
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return nil, err
	}
	defer conn.Release()
	c := conn.Conn()
	query := func(sql string, args ...any) (string, error) {
		rows, err := c.Query(ctx, sql, args...)
		if err != nil {
			return "", err
		}
		defer rows.Close()
		var b strings.Builder
		for rows.Next() {
			var line string
			if err := rows.Scan(&line); err != nil {
				return "", err
			}
			b.WriteString(line + "\n")
		}
		return b.String(), rows.Err()
	}
	var plans []plan
	add := func(title, sql string, args ...any) error {
		text, err := query(sql, args...)
		if err != nil {
			return fmt.Errorf("explain %s: %w", title, err)
		}
		plans = append(plans, plan{title, text})
		return nil
	}
	const analyze = "EXPLAIN (ANALYZE, BUFFERS, SETTINGS) "
	for _, p := range pages {
		title := fmt.Sprintf("page %d (%s), %d rows, arguments %s", p.page, p.label, p.perPage, p.args())
		if err := add(title+": one-off (custom) plan", analyze+p.pageSQL()); err != nil {
			return nil, err
		}
	}
	if _, err := c.Exec(ctx, "PREPARE bench_page AS "+pages[0].query.SQL); err != nil {
		return nil, err
	}
	defer func() {
		// Leave the connection as it was for the pool.
		_, _ = c.Exec(context.WithoutCancel(ctx), "DEALLOCATE bench_page")
		_, _ = c.Exec(context.WithoutCancel(ctx), "RESET plan_cache_mode")
	}()
	if _, err := c.Exec(ctx, "SET plan_cache_mode = force_generic_plan"); err != nil {
		return nil, err
	}
	for _, p := range pages {
		title := fmt.Sprintf("page %d (%s): informe's prepared statement, generic plan", p.page, p.label)
		if err := add(title, fmt.Sprintf("%sEXECUTE bench_page(%s)", analyze, strings.ReplaceAll(p.args(), " ", ", "))); err != nil {
			return nil, err
		}
	}
	if _, err := c.Exec(ctx, "RESET plan_cache_mode"); err != nil {
		return nil, err
	}
	// Counting and seeking are informe's own code (report.Store.Open), timed
	// rather than copied here, so that they cannot drift from what it runs.
	var b strings.Builder
	for _, p := range pages {
		fmt.Fprintf(&b, "page %d (%s): %.2f ms\n", p.page, p.label, float64(p.planned.Microseconds())/1000)
	}
	plans = append(plans, plan{"count and seek (report.Store.Open, in its own snapshot)", b.String()})
	return plans, nil
}

// countWriter counts and discards what is written to it.
type countWriter struct{ n int64 }

func (w *countWriter) Write(p []byte) (int, error) {
	w.n += int64(len(p))
	return len(p), nil
}
