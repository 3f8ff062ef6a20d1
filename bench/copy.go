package main

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/informe/informe/database"
	"github.com/informe/informe/export"
	"github.com/informe/informe/report"
)

// pageSpec is one page of the unfiltered report, and where it starts.
type pageSpec struct {
	label    string
	page     int64
	perPage  int64
	rows     int64 // rows on the page
	contract int64 // the contract holding the page's first row
	offset   int64 // rows of that contract before the page
}

func (p pageSpec) key() string { return fmt.Sprintf("%d/%d", p.page, p.perPage) }

// order is report/store.go's ORDER BY.
const order = " ORDER BY key_contract_id, key_process_id, key_task_id"

var selectList = database.SelectList(export.Names(report.Columns))

// pageSQL is the query informe runs for an unfiltered page once it has
// found where the page starts (report/store.go's seek): the same columns,
// order and keyset start, with the values written in.
func (p pageSpec) pageSQL() string {
	return fmt.Sprintf("SELECT %s FROM general_report WHERE key_contract_id >= %d%s OFFSET %d LIMIT %d",
		selectList, p.contract, order, p.offset, p.perPage)
}

// preparedSQLTail is the page query after its select list, with
// informe's parameters.
const preparedSQLTail = " FROM general_report WHERE key_contract_id >= $1" + order + " OFFSET $2 LIMIT $3"

// seekPage fills in where p starts, from the maintained per-contract counts,
// the way informe's seek does (in one step rather than by bucket: this runs
// once, untimed).
func seekPage(ctx context.Context, pool *pgxpool.Pool, total int64, p *pageSpec) error {
	first := (p.page - 1) * p.perPage
	if first >= total {
		return fmt.Errorf("page %d of %d rows lies past the end (%d rows)", p.page, p.perPage, total)
	}
	p.rows = min(p.perPage, total-first)
	err := pool.QueryRow(ctx, `
		SELECT contract_id, $1 - (cum - rows) FROM (
			SELECT contract_id, rows, sum(rows) OVER (ORDER BY contract_id) AS cum
			FROM report_contract_rows
		) c WHERE cum > $1 ORDER BY contract_id LIMIT 1`, first).Scan(&p.contract, &p.offset)
	if err != nil {
		return fmt.Errorf("seek page %d: %w", p.page, err)
	}
	return nil
}

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
// to from the sixth execution on a connection), and of the seek of the
// deepest page.
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
		title := fmt.Sprintf("page %d (%s), %d rows from contract %d, offset %d", p.page, p.label, p.perPage, p.contract, p.offset)
		if err := add(title+": one-off (custom) plan", analyze+p.pageSQL()); err != nil {
			return nil, err
		}
	}
	if _, err := c.Exec(ctx, "PREPARE bench_page (bigint, bigint, bigint) AS SELECT "+selectList+preparedSQLTail); err != nil {
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
		if err := add(title, fmt.Sprintf("%sEXECUTE bench_page(%d, %d, %d)", analyze, p.contract, p.offset, p.perPage)); err != nil {
			return nil, err
		}
	}
	if _, err := c.Exec(ctx, "RESET plan_cache_mode"); err != nil {
		return nil, err
	}
	deepest := pages[len(pages)-1]
	for _, p := range pages {
		if p.page > deepest.page {
			deepest = p
		}
	}
	first := (deepest.page - 1) * deepest.perPage
	if err := add("count: sum of the maintained bucket counts",
		analyze+"SELECT coalesce(sum(rows), 0) FROM report_bucket_rows"); err != nil {
		return nil, err
	}
	// The two seek queries of report/store.go, as informe runs them.
	const bucketSQL = `
		SELECT bucket, cum - rows FROM (
			SELECT bucket, rows, sum(rows) OVER (ORDER BY bucket) AS cum
			FROM report_bucket_rows
		) b WHERE cum > $1 ORDER BY bucket LIMIT 1`
	if err := add(fmt.Sprintf("seek of page %d: its bucket", deepest.page), analyze+bucketSQL, first); err != nil {
		return nil, err
	}
	var bucket, before int64
	if err := c.QueryRow(ctx, bucketSQL, first).Scan(&bucket, &before); err != nil {
		return nil, err
	}
	if err := add(fmt.Sprintf("seek of page %d: its contract in bucket %d", deepest.page, bucket), analyze+`
		SELECT contract_id, $2::bigint + cum - rows FROM (
			SELECT contract_id, rows, sum(rows) OVER (ORDER BY contract_id) AS cum
			FROM report_contract_rows
			WHERE contract_id >= $1::bigint << 10 AND contract_id < ($1::bigint + 1) << 10
		) c WHERE $2::bigint + cum > $3 ORDER BY contract_id LIMIT 1`, bucket, before, first); err != nil {
		return nil, err
	}
	return plans, nil
}

// countWriter counts and discards what is written to it.
type countWriter struct{ n int64 }

func (w *countWriter) Write(p []byte) (int, error) {
	w.n += int64(len(p))
	return len(p), nil
}
