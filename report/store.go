package report

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/informe/informe/export"
	"github.com/informe/informe/internal/postgres"
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

// Page describes what a [Cursor] reads. It is known before the first row.
type Page struct {
	Total       int64 // rows matching the query, over all pages
	TotalPages  int64 // ceil(Total / PerPage); 0 when nothing matches; 1 for a whole export of some rows
	CurrentPage int64 // the page asked for; 1 for a whole export
	PerPage     int64 // rows a page; 0 for a whole export
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

// Cursor reads the rows of one page or of a whole export, driven like
// pgx.Rows: Next, Values, Err, and Close on every path, which ends the
// snapshot and returns its connection to the pool. Values holds one value
// per column of the query's selection ([Query.Columns]), as text in the
// API's formats, valid until the next call to Next.
type Cursor struct {
	*postgres.Cursor
	page Page
}

// Page returns what the cursor reads: the count and the page.
func (c *Cursor) Page() Page { return c.page }

const order = " ORDER BY key_contract_id, key_process_id, key_task_id"

// Open counts the rows matching q and opens a [Cursor] on the page q asks
// for, both in one REPEATABLE READ, READ ONLY snapshot, so that the count
// never disagrees with the rows. A page past the last row gives a cursor
// without rows. Connection failures are failure.Unavailable; the cursor's
// queries are cancelled with ctx.
func (s *Store) Open(ctx context.Context, q Query) (*Cursor, error) {
	return s.open(ctx, q, true)
}

// Export is [Store.Open] for every row matching q, in the report's order,
// whatever q's page: the count is taken first (Page.Total), then the rows
// stream from the same snapshot.
func (s *Store) Export(ctx context.Context, q Query) (*Cursor, error) {
	return s.open(ctx, q, false)
}

// Count returns the [Page] that [Store.Open] would read for q, without
// reading its rows: what a HEAD request needs.
func (s *Store) Count(ctx context.Context, q Query) (Page, error) {
	snap, err := postgres.Begin(ctx, s.pool)
	if err != nil {
		return Page{}, err
	}
	defer snap.Close()
	p := Page{CurrentPage: q.Page, PerPage: q.PerPage}
	err = s.count(snap, q, &p)
	return p, err
}

// count sets p's totals: from the maintained counts for an unfiltered
// report, else by counting the view.
func (s *Store) count(snap *postgres.Snapshot, q Query, p *Page) error {
	sql, args := "SELECT report_rows_total()", []any(nil)
	if q.Filtered() || s.counting != Maintained {
		where, fargs := filters(q)
		sql, args = "SELECT count(*) FROM general_report"+where, fargs
	}
	var total int64
	if err := snap.QueryRow(sql, args, &total); err != nil {
		return fmt.Errorf("report: count: %w", err)
	}
	p.setTotal(total)
	return nil
}

func (s *Store) open(ctx context.Context, q Query, paged bool) (_ *Cursor, err error) {
	snap, err := postgres.Begin(ctx, s.pool)
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			snap.Close()
		}
	}()
	cols := q.columns()
	p := Page{CurrentPage: 1}
	if paged {
		p = Page{CurrentPage: q.Page, PerPage: q.PerPage}
	}
	if err := s.count(snap, q, &p); err != nil {
		return nil, err
	}
	var sql string
	var args []any
	if !q.Filtered() && s.counting == Maintained {
		sql, args, err = seek(snap, p, cols)
	} else {
		sql, args = scan(q, p, cols)
	}
	if err != nil {
		return nil, err
	}
	if sql == "" { // past the last page
		return &Cursor{Cursor: snap.Empty(), page: p}, nil
	}
	cur, err := snap.Query(sql, args)
	if err != nil {
		return nil, fmt.Errorf("report: %w", err)
	}
	return &Cursor{Cursor: cur, page: p}, nil
}

// Rows returns the number of rows the page holds: what a cursor on it
// reads.
func (p Page) Rows() int64 {
	first, n, ok := p.bounds()
	switch {
	case !ok:
		return 0
	case n < 0:
		return p.Total
	}
	return min(n, p.Total-first)
}

// setTotal sets the number of matching rows and the pages they make.
func (p *Page) setTotal(total int64) {
	p.Total = total
	switch {
	case p.PerPage > 0:
		p.TotalPages = (total + p.PerPage - 1) / p.PerPage
	case total > 0:
		p.TotalPages = 1
	}
}

// bounds returns the index of the first row to read and how many to read
// (-1: all the rest), and false when nothing is to be read.
func (p Page) bounds() (first, n int64, ok bool) {
	if p.PerPage == 0 {
		return 0, -1, p.Total > 0
	}
	if p.CurrentPage > p.TotalPages {
		return 0, 0, false
	}
	return (p.CurrentPage - 1) * p.PerPage, p.PerPage, true
}

// scan returns the query reading p's rows of the view matching q with
// OFFSET, or "" when p holds no rows.
func scan(q Query, p Page, cols []export.Column) (string, []any) {
	where, args := filters(q)
	first, n, ok := p.bounds()
	if !ok {
		return "", nil
	}
	sql := selectFrom(cols) + where + order
	if first > 0 {
		args = append(args, first)
		sql += " OFFSET $" + strconv.Itoa(len(args))
	}
	if n >= 0 {
		args = append(args, n)
		sql += " LIMIT $" + strconv.Itoa(len(args))
	}
	return sql, args
}

// seek returns the query for the unfiltered rows p asks for, or "" when p
// holds no rows. It finds the contracts holding the first
// and last rows, so that only rows inside the first contract are skipped,
// and bounds the scan by both: PostgreSQL then plans for the few contracts
// it will read, not for the whole table.
func seek(snap *postgres.Snapshot, p Page, cols []export.Column) (string, []any, error) {
	first, n, ok := p.bounds()
	if !ok {
		return "", nil, nil
	}
	if n < 0 { // the whole report: nothing to seek
		return selectFrom(cols) + order, nil, nil
	}
	var from, fromStart, to int64
	const at = "SELECT a.contract_id, a.first_row, b.contract_id FROM report_contract_at($1) a, report_contract_at($2) b"
	if err := snap.QueryRow(at, []any{first, min(first+n, p.Total) - 1}, &from, &fromStart, &to); err != nil {
		return "", nil, fmt.Errorf("report: seek: %w", err)
	}
	sql := selectFrom(cols) + " WHERE key_contract_id BETWEEN $1 AND $2" + order + " OFFSET $3 LIMIT $4"
	return sql, []any{from, to, first - fromStart, n}, nil
}

// selectFrom returns the SELECT of cols, then of the extra expressions,
// from the view.
func selectFrom(cols []export.Column, extra ...string) string {
	list := postgres.SelectList(export.Names(cols))
	for _, e := range extra {
		list += ", " + e
	}
	return "SELECT " + list + " FROM general_report"
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
