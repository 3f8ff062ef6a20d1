package report

import (
	"fmt"
	"slices"
	"strconv"

	"github.com/informe/informe/internal/dataset"
	"github.com/informe/informe/internal/postgres"
)

// Counting says where the general report gets the number of rows of an
// unfiltered report and how it reaches a deep page.
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

// Dataset returns the general report's declaration ([dataset.GeneralReport])
// with its plain queries counted and paged as counting says.
func Dataset(counting Counting) *dataset.Dataset {
	d := *dataset.GeneralReport
	d.Plain = plain{counting: counting}
	if counting == Maintained {
		d.KeyTable = taskKeys
	}
	return &d
}

// taskKeys is the table of the task rows' keys that informe's triggers
// keep (migration 00011) beside the values the folded steps filter on
// most: a task's status, end date and execution date. It is read only
// with [Maintained] counts, whose start-up check ([CheckCounting]) makes
// sure that its triggers watch the tables general_report reads.
var taskKeys = &dataset.KeyTable{
	Table: "report_task_keys",
	Keys:  []string{"contract_id", "process_id", "task_id"},
	Columns: map[string]string{
		"task_status": "status", "task_end_date": "end_date", "execution_date": "execution_date",
		"key_task_id": "task_id",
	},
	Days: []string{"task_end_date"},
}

// plain reads the report's plain queries (its own order, the spec's
// equalities) from the general_report_typed view, with the maintained
// counts.
type plain struct{ counting Counting }

const order = " ORDER BY key_contract_id, key_process_id, key_task_id"

// byContract orders a whole reading by contract only, its rows ending
// with the key's parts as bigint, within: the cursor orders the rows of
// each contract by them ([dataset.Statement.Within]), so that PostgreSQL
// sorts no whole rows.
const byContract = " ORDER BY key_contract_id"

var within = []string{"key_contract_id AS within_contract", "coalesce(key_process_id, 0) AS within_process",
	"coalesce(key_task_id, 0) AS within_task"}

// Count returns the number of rows matching q's equalities: from the
// maintained counts for an unfiltered report, else by counting the view.
func (p plain) Count(snap *postgres.Snapshot, q *dataset.Query) (int64, error) {
	sql, args := "SELECT report_rows_total()", []any(nil)
	if len(q.Equalities()) > 0 || p.counting != Maintained {
		where, wargs := equalities(q, nil)
		sql, args = "SELECT count(*) FROM general_report_typed"+where, wargs
	}
	var total int64
	if err := snap.QueryRow(sql, args, &total); err != nil {
		return 0, fmt.Errorf("report: count: %w", err)
	}
	return total, nil
}

// keyColumns select a row's key as text, after its columns. They are named
// apart from the view's key_* columns: ORDER BY would take an output column
// of the same name, and sort the ids as text.
var keyColumns = []string{
	"key_contract_id::text AS row_contract",
	"coalesce(key_process_id, 0)::text AS row_process",
	"coalesce(key_task_id, 0)::text AS row_task",
}

// Read returns the statement reading q's rows: after a keyset position
// through the index from its contract; an unfiltered page through the
// maintained counts (seek); else with OFFSET.
func (p plain) Read(snap *postgres.Snapshot, q *dataset.Query, cols []dataset.Column, total int64) (dataset.Statement, error) {
	var extra []string
	if q.Position {
		extra = keyColumns
	}
	if len(q.Equalities()) == 0 && q.Key == nil && p.counting == Maintained && q.Limit >= 0 {
		return p.seek(snap, q, cols, extra, total)
	}
	where, args := equalities(q, nil)
	if q.Key == nil && q.Skip == 0 && q.Limit < 0 {
		// A whole reading: PostgreSQL orders by contract, an index's
		// order, and the cursor orders each contract's rows.
		return dataset.Statement{SQL: selectFrom(cols, append(slices.Clip(extra), within...)...) + where + byContract,
			Args: args, Within: len(within)}, nil
	}
	if q.Key != nil {
		n := len(args)
		args = append(args, q.Key[0], q.Key[1], q.Key[2])
		c, pr, t := "$"+strconv.Itoa(n+1), "$"+strconv.Itoa(n+2), "$"+strconv.Itoa(n+3)
		// The bound on the contract alone lets the index narrow the scan;
		// the row comparison does the rest.
		where = and(where, "key_contract_id >= "+c)
		where = and(where, "(key_contract_id, coalesce(key_process_id, 0), coalesce(key_task_id, 0)) > ("+c+", "+pr+", "+t+")")
	}
	sql, args := q.Window(selectFrom(cols, extra...)+where+order, args)
	return dataset.Statement{SQL: sql, Args: args}, nil
}

// seek returns the statement for the unfiltered rows q asks for, or none
// when they are past the last row. It finds the contracts holding the
// first and last rows, so that only rows inside the first contract are
// skipped, and bounds the scan by both: PostgreSQL then plans for the few
// contracts it will read, not for the whole table.
func (p plain) seek(snap *postgres.Snapshot, q *dataset.Query, cols []dataset.Column, extra []string, total int64) (dataset.Statement, error) {
	if total < 0 {
		var err error
		if total, err = p.Count(snap, q); err != nil {
			return dataset.Statement{}, err
		}
	}
	first, n := q.Skip, q.Limit
	if first >= total {
		return dataset.Statement{}, nil
	}
	var from, fromStart, to int64
	// The page's statement runs its generic plan, planned once per
	// connection, where a custom plan took about a millisecond to plan
	// for every page: its bounds hold it to a few contracts whatever
	// their values, so both plans are the same. The setting holds for
	// the rest of the transaction, in which the page's statement is the
	// last.
	const at = "SELECT a.contract_id, a.first_row, b.contract_id, set_config('plan_cache_mode', 'force_generic_plan', true) " +
		"FROM report_contract_at($1) a, report_contract_at($2) b"
	if err := snap.QueryRow(at, []any{first, min(first+n, total) - 1}, &from, &fromStart, &to, new(string)); err != nil {
		return dataset.Statement{}, fmt.Errorf("report: seek: %w", err)
	}
	sql := selectFrom(cols, extra...) + " WHERE key_contract_id BETWEEN $1 AND $2" + order + " OFFSET $3 LIMIT $4"
	return dataset.Statement{SQL: sql, Args: []any{from, to, first - fromStart, n}}, nil
}

// Split returns the statements of up to k parts of the unfiltered report,
// each a range of contracts split by the maintained counts so that the
// parts hold about the same number of rows; nil when q is filtered or the
// counts are not maintained.
func (p plain) Split(snap *postgres.Snapshot, q *dataset.Query, cols []dataset.Column, total, k int64) ([]dataset.Statement, error) {
	if len(q.Equalities()) > 0 || q.Key != nil || p.counting != Maintained {
		return nil, nil
	}
	var bounds, firsts []int64 // each later part's first contract, and its first row
	for i := int64(1); i < k; i++ {
		var contract, firstRow int64
		err := snap.QueryRow("SELECT contract_id, first_row FROM report_contract_at($1)", []any{total * i / k}, &contract, &firstRow)
		if err != nil {
			return nil, fmt.Errorf("report: split: %w", err)
		}
		if firstRow == 0 || (len(bounds) > 0 && contract == bounds[len(bounds)-1]) {
			continue
		}
		bounds = append(bounds, contract)
		firsts = append(firsts, firstRow)
	}
	if len(bounds) == 0 {
		return nil, nil
	}
	var extra []string
	if q.Position {
		extra = keyColumns
	}
	sel := selectFrom(cols, append(slices.Clip(extra), within...)...)
	parts := make([]dataset.Statement, len(bounds)+1)
	for i := range parts {
		switch {
		case i == 0:
			parts[i] = dataset.Statement{SQL: sel + " WHERE key_contract_id < $1" + byContract, Args: []any{bounds[0]}}
		case i == len(bounds):
			parts[i] = dataset.Statement{SQL: sel + " WHERE key_contract_id >= $1" + byContract, Args: []any{bounds[i-1]}, First: firsts[i-1]}
		default:
			parts[i] = dataset.Statement{SQL: sel + " WHERE key_contract_id >= $1 AND key_contract_id < $2" + byContract,
				Args: []any{bounds[i-1], bounds[i]}, First: firsts[i-1]}
		}
		parts[i].Within = len(within)
	}
	return parts, nil
}

// selectFrom returns the SELECT of cols, then of the extra expressions,
// from the typed view: Go writes the text.
func selectFrom(cols []dataset.Column, extra ...string) string {
	list := postgres.SelectList(dataset.Names(cols))
	for _, e := range extra {
		list += ", " + e
	}
	return "SELECT " + list + " FROM general_report_typed"
}

// equalities returns the WHERE clause of q's equalities on the view, with
// their arguments appended to args.
func equalities(q *dataset.Query, args []any) (string, []any) {
	var where string
	for _, e := range q.Equalities() {
		args = append(args, e.Value)
		where = and(where, postgres.SelectList([]string{e.Column})+" = $"+strconv.Itoa(len(args)))
	}
	return where, args
}

// and adds cond to the WHERE clause where.
func and(where, cond string) string {
	if where == "" {
		return " WHERE " + cond
	}
	return where + " AND " + cond
}

// Page is a page of the spec's JSON, known before its first row.
type Page struct {
	Total       int64 // rows matching the query, over all pages
	TotalPages  int64 // ceil(Total / PerPage); 0 when nothing matches
	CurrentPage int64 // the page asked for
	PerPage     int64 // rows a page
}

// WithTotal returns p with its total of matching rows and the pages they
// make.
func (p Page) WithTotal(total int64) Page {
	p.Total = total
	p.TotalPages = 0
	if p.PerPage > 0 {
		p.TotalPages = (total + p.PerPage - 1) / p.PerPage
	}
	return p
}

// Rows returns the number of rows the page holds.
func (p Page) Rows() int64 {
	first := (p.CurrentPage - 1) * p.PerPage
	if p.CurrentPage > p.TotalPages || first >= p.Total {
		return 0
	}
	return min(p.PerPage, p.Total-first)
}
