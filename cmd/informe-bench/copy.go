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

// traced runs open, one of report.Store's entry points, the server's own,
// on a pool of its own whose tracer records the statements, and returns the
// last one, which is the query of the rows, so that COPY and EXPLAIN run
// exactly the query informe runs, with what open said about the rows and
// how long it took (counting, seeking and starting the query).
func traced(ctx context.Context, url string, open func(*report.Store) (*report.Cursor, error)) (pageQuery, report.Page, time.Duration, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return pageQuery{}, report.Page{}, 0, err
	}
	tracer := &lastQuery{}
	cfg.ConnConfig.Tracer = tracer
	cfg.MaxConns = 1
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return pageQuery{}, report.Page{}, 0, err
	}
	defer pool.Close()
	if err := pool.Ping(ctx); err != nil {
		return pageQuery{}, report.Page{}, 0, err
	}
	began := time.Now()
	cur, err := open(report.NewStore(pool, report.Maintained))
	d := time.Since(began)
	if err != nil {
		return pageQuery{}, report.Page{}, d, err
	}
	defer cur.Close()
	return tracer.q, cur.Page(), d, nil
}

// planPage opens the page with report.Store.Open (see traced) and notes its
// rows and query.
func planPage(ctx context.Context, url string, p *pageSpec) error {
	q, page, d, err := traced(ctx, url, func(s *report.Store) (*report.Cursor, error) {
		return s.Open(ctx, report.Query{Page: p.page, PerPage: p.perPage})
	})
	p.planned = d
	if err != nil {
		return fmt.Errorf("plan page %d: %w", p.page, err)
	}
	if page.CurrentPage > page.TotalPages {
		return fmt.Errorf("page %d of %d rows lies past the end (%d rows)", p.page, p.perPage, page.Total)
	}
	p.rows = min(p.perPage, page.Total-(p.page-1)*p.perPage)
	p.query = q
	return nil
}

// pageSQL is the page query with its arguments written in, for COPY,
// which takes no parameters.
func (p pageSpec) pageSQL() string { return p.query.inline() }

// args lists the page query's arguments, for titles and tables.
func (p pageSpec) args() string { return p.query.args() }

// inline returns q's SQL with its arguments written in (integers only, as
// informe's are), for COPY and EXPLAIN, which take no parameters.
func (q pageQuery) inline() string {
	sql := q.SQL
	for i := len(q.Args); i >= 1; i-- { // $10 before $1
		sql = strings.ReplaceAll(sql, fmt.Sprintf("$%d", i), fmt.Sprint(q.Args[i-1]))
	}
	return sql
}

func (q pageQuery) args() string { return strings.Trim(fmt.Sprint(q.Args...), "[]") }

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

// countWriter counts and discards what is written to it, and notes when
// the first byte came.
type countWriter struct {
	n     int64
	first time.Time
}

func (w *countWriter) Write(p []byte) (int, error) {
	if w.n == 0 && len(p) > 0 {
		w.first = time.Now()
	}
	w.n += int64(len(p))
	return len(p), nil
}
