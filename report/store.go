package report

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/informe/informe/database"
	"github.com/informe/informe/export"
)

// Counting says where the store gets the number of rows of an unfiltered
// report and how it reaches a deep page.
type Counting uint8

const (
	// Maintained reads the row counts that informe's triggers keep in
	// report_contract_rows and report_bucket_rows: an unfiltered page costs
	// the same at page 1 and at the last page. The default.
	Maintained Counting = iota
	// FromView counts and skips rows of the general_report view itself.
	// For operators whose general_report reads tables that informe's
	// triggers do not watch; deep unfiltered pages then cost more.
	FromView
)

// ParseCounting parses "maintained" or "view".
func ParseCounting(s string) (Counting, error) {
	switch s {
	case "maintained":
		return Maintained, nil
	case "view":
		return FromView, nil
	}
	return 0, fmt.Errorf("report counts must be maintained or view, got %q", s)
}

// Page describes the page being streamed. It is known before the first row.
type Page struct {
	Total       int64 // rows matching the query, over all pages
	TotalPages  int64 // ceil(Total / PerPage); 0 when nothing matches
	CurrentPage int64
	PerPage     int64
}

// Store reads the general report.
type Store struct {
	pool     *pgxpool.Pool
	counting Counting
}

// NewStore returns a Store reading from pool.
func NewStore(pool *pgxpool.Pool, counting Counting) *Store {
	return &Store{pool: pool, counting: counting}
}

// selectList is the report's select list, built from [Columns].
var selectList = database.SelectList(export.Names(Columns))

const order = " ORDER BY key_contract_id, key_process_id, key_task_id"

// Stream reads one page of the report in one REPEATABLE READ, READ ONLY
// snapshot. It counts the matching rows, calls begin with the [Page], then
// calls row with each row's values (in [Columns] order, valid only during
// the call) as they arrive from PostgreSQL. An error from begin or row stops
// the query and is returned as is; database failures are wrapped, and
// connection failures come back as failure.Unavailable. It returns the
// number of rows passed to row.
func (s *Store) Stream(ctx context.Context, q Query, begin func(Page) error, row func([][]byte) error) (int, error) {
	n := 0
	err := database.Snapshot(ctx, s.pool, func(tx pgx.Tx) error {
		p, pq, err := s.Plan(ctx, tx, q)
		if err != nil {
			return err
		}
		if err := begin(p); err != nil {
			return err
		}
		if pq.SQL == "" { // past the last page
			return nil
		}
		n, err = database.ForEachRaw(ctx, tx, pq.SQL, pq.Args, row)
		return err
	})
	return n, err
}

// PageQuery is the SQL that reads one page of the report and its arguments.
// SQL is "" when the page lies past the last row.
type PageQuery struct {
	SQL  string
	Args []any
}

// Plan counts the rows matching q in tx and returns the [Page] and the
// query that reads it: for an unfiltered report with [Maintained] counts, a
// seek (see seek); otherwise a count and an OFFSET over the view. Stream
// uses it; it is exported so that benchmarks run exactly informe's query.
func (s *Store) Plan(ctx context.Context, tx pgx.Tx, q Query) (Page, PageQuery, error) {
	p := Page{CurrentPage: q.Page, PerPage: q.PerPage}
	if !q.Filtered() && s.counting == Maintained {
		pq, err := seek(ctx, tx, &p)
		return p, pq, err
	}
	where, args := filters(q)
	var total int64
	if err := tx.QueryRow(ctx, "SELECT count(*) FROM general_report"+where, args...).Scan(&total); err != nil {
		return p, PageQuery{}, fmt.Errorf("report: count: %w", err)
	}
	p.setTotal(total)
	first, ok := p.start()
	if !ok {
		return p, PageQuery{}, nil
	}
	args = append(args, first, q.PerPage)
	sql := "SELECT " + selectList + " FROM general_report" + where + order +
		" OFFSET $" + strconv.Itoa(len(args)-1) + " LIMIT $" + strconv.Itoa(len(args))
	return p, PageQuery{sql, args}, nil
}

// setTotal sets the number of matching rows and the pages they make.
func (p *Page) setTotal(total int64) {
	p.Total = total
	p.TotalPages = (total + p.PerPage - 1) / p.PerPage
}

// start returns the index of the page's first row, and false when the page
// lies past the last row.
func (p Page) start() (int64, bool) {
	if p.CurrentPage > p.TotalPages {
		return 0, false
	}
	return (p.CurrentPage - 1) * p.PerPage, true
}

// seek sets p's totals from the maintained counts and returns the query for
// the unfiltered page p. It finds the contracts holding the page's first and
// last rows, so that only rows inside the first contract are skipped, and
// bounds the scan by both: PostgreSQL then plans for the few contracts it
// will read, not for the whole table.
func seek(ctx context.Context, tx pgx.Tx, p *Page) (PageQuery, error) {
	var total int64
	if err := tx.QueryRow(ctx, "SELECT coalesce(sum(rows), 0) FROM report_bucket_rows").Scan(&total); err != nil {
		return PageQuery{}, fmt.Errorf("report: count: %w", err)
	}
	p.setTotal(total)
	first, ok := p.start()
	if !ok {
		return PageQuery{}, nil
	}
	from, fromStart, err := contractAt(ctx, tx, first)
	if err != nil {
		return PageQuery{}, err
	}
	to, _, err := contractAt(ctx, tx, min(first+p.PerPage, p.Total)-1)
	if err != nil {
		return PageQuery{}, err
	}
	sql := "SELECT " + selectList + " FROM general_report WHERE key_contract_id BETWEEN $1 AND $2" + order + " OFFSET $3 LIMIT $4"
	return PageQuery{sql, []any{from, to, first - fromStart, p.PerPage}}, nil
}

// contractAt returns the contract holding the report's row number row
// (from 0) and the number of its first row, walking the bucket totals, then
// the contracts of one bucket.
func contractAt(ctx context.Context, tx pgx.Tx, row int64) (contract, contractStart int64, err error) {
	var bucket, before int64
	err = tx.QueryRow(ctx, `
		SELECT bucket, cum - rows FROM (
			SELECT bucket, rows, sum(rows) OVER (ORDER BY bucket) AS cum
			FROM report_bucket_rows
		) b WHERE cum > $1 ORDER BY bucket LIMIT 1`, row).Scan(&bucket, &before)
	if err != nil {
		return 0, 0, fmt.Errorf("report: seek bucket: %w", err)
	}
	err = tx.QueryRow(ctx, `
		SELECT contract_id, $2::bigint + cum - rows FROM (
			SELECT contract_id, rows, sum(rows) OVER (ORDER BY contract_id) AS cum
			FROM report_contract_rows
			WHERE contract_id >= $1::bigint << 10 AND contract_id < ($1::bigint + 1) << 10
		) c WHERE $2::bigint + cum > $3 ORDER BY contract_id LIMIT 1`, bucket, before, row).Scan(&contract, &contractStart)
	if err != nil {
		return 0, 0, fmt.Errorf("report: seek contract: %w", err)
	}
	return contract, contractStart, nil
}

// filters returns the WHERE clause and arguments for q's filters.
func filters(q Query) (string, []any) {
	var conds []string
	var args []any
	add := func(cond string, arg any) {
		args = append(args, arg)
		conds = append(conds, cond+" = $"+strconv.Itoa(len(args)))
	}
	if q.ContractID != 0 {
		add("key_contract_id", q.ContractID)
	}
	if q.CodeContract != "" {
		add("key_code_contract", q.CodeContract)
	}
	if q.ClientID != 0 {
		add("key_client_id", q.ClientID)
	}
	if q.RUTKey != "" {
		add("key_client_rut", q.RUTKey)
	}
	if len(conds) == 0 {
		return "", nil
	}
	return " WHERE " + strings.Join(conds, " AND "), args
}
