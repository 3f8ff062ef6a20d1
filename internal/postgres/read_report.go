package postgres

import (
	"fmt"
	"slices"
	"strconv"

	"github.com/informe/informe/internal/dataset"
)

// reportReading reads the general report's plain queries as
// [dataset.ReportReading] declares.
type reportReading dataset.ReportReading

// reportOrder is the general report's own order, its key's.
const reportOrder = " ORDER BY key_contract_id, key_process_id, key_task_id"

// reportByContract orders a whole reading by contract only, its rows ending
// with the key's parts as bigint, within: the cursor orders the rows of
// each contract by them ([Statement.Within]), so that PostgreSQL
// sorts no whole rows.
const reportByContract = " ORDER BY key_contract_id"

// reportWithin are the key's parts as bigint that a whole reading's rows
// end with (see reportByContract).
var reportWithin = []string{"key_contract_id AS within_contract", "coalesce(key_process_id, 0) AS within_process",
	"coalesce(key_task_id, 0) AS within_task"}

// Count returns the number of rows matching q's equalities: from the
// maintained counts for an unfiltered report, else by counting the view.
func (p reportReading) Count(snap *Snapshot, q *query) (int64, error) {
	sql, args := "SELECT report_rows_total()", []any(nil)
	if len(q.Equalities()) > 0 || !p.Maintained {
		where, wargs := reportEqualities(q, nil)
		sql, args = "SELECT count(*) FROM general_report_typed"+where, wargs
	}
	var total int64
	if err := snap.QueryRow(sql, args, &total); err != nil {
		return 0, fmt.Errorf("report: count: %w", err)
	}
	return total, nil
}

// reportKeyText selects a row's key as text, after its columns. They are named
// apart from the view's key_* columns: ORDER BY would take an output column
// of the same name, and sort the ids as text.
var reportKeyText = []string{
	"key_contract_id::text AS row_contract",
	"coalesce(key_process_id, 0)::text AS row_process",
	"coalesce(key_task_id, 0)::text AS row_task",
}

// Read returns the statement reading q's rows: after a keyset position
// through the index from its contract; an unfiltered page through the
// maintained counts (seek); else with OFFSET.
func (p reportReading) Read(snap *Snapshot, q *query, cols []dataset.Column, total int64) (Statement, error) {
	var extra []string
	if q.Position {
		extra = reportKeyText
	}
	if len(q.Equalities()) == 0 && q.Key == nil && p.Maintained && q.Limit >= 0 {
		return p.seek(snap, q, cols, extra, total)
	}
	where, args := reportEqualities(q, nil)
	if q.Key == nil && q.Skip == 0 && q.Limit < 0 {
		// A whole reading: PostgreSQL orders by contract, an index's
		// order, and the cursor orders each contract's rows.
		return Statement{SQL: reportSelect(cols, append(slices.Clip(extra), reportWithin...)...) + where + reportByContract,
			Args: args, Within: len(reportWithin)}, nil
	}
	if q.Key != nil {
		n := len(args)
		args = append(args, q.Key[0], q.Key[1], q.Key[2])
		c, pr, t := "$"+strconv.Itoa(n+1), "$"+strconv.Itoa(n+2), "$"+strconv.Itoa(n+3)
		// The bound on the contract alone lets the index narrow the scan;
		// the row comparison does the rest.
		where = andWhere(where, "key_contract_id >= "+c)
		where = andWhere(where, "(key_contract_id, coalesce(key_process_id, 0), coalesce(key_task_id, 0)) > ("+c+", "+pr+", "+t+")")
	}
	sql, args := q.Window(reportSelect(cols, extra...)+where+reportOrder, args)
	return Statement{SQL: sql, Args: args}, nil
}

// seek returns the statement for the unfiltered rows q asks for, or none
// when they are past the last row. It finds the contracts holding the
// first and last rows, so that only rows inside the first contract are
// skipped, and bounds the scan by both: PostgreSQL then plans for the few
// contracts it will read, not for the whole table.
func (p reportReading) seek(snap *Snapshot, q *query, cols []dataset.Column, extra []string, total int64) (Statement, error) {
	if total < 0 {
		var err error
		if total, err = p.Count(snap, q); err != nil {
			return Statement{}, err
		}
	}
	first, n := q.Skip, q.Limit
	if first >= total {
		return Statement{}, nil
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
		return Statement{}, fmt.Errorf("report: seek: %w", err)
	}
	sql := reportSelect(cols, extra...) + " WHERE key_contract_id BETWEEN $1 AND $2" + reportOrder + " OFFSET $3 LIMIT $4"
	return Statement{SQL: sql, Args: []any{from, to, first - fromStart, n}}, nil
}

// Split returns the statements of up to k parts of the unfiltered report,
// each a range of contracts split by the maintained counts so that the
// parts hold about the same number of rows; nil when q is filtered or the
// counts are not maintained.
func (p reportReading) Split(snap *Snapshot, q *query, cols []dataset.Column, total, k int64) ([]Statement, error) {
	if len(q.Equalities()) > 0 || q.Key != nil || !p.Maintained {
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
		extra = reportKeyText
	}
	sel := reportSelect(cols, append(slices.Clip(extra), reportWithin...)...)
	parts := make([]Statement, len(bounds)+1)
	for i := range parts {
		switch {
		case i == 0:
			parts[i] = Statement{SQL: sel + " WHERE key_contract_id < $1" + reportByContract, Args: []any{bounds[0]}}
		case i == len(bounds):
			parts[i] = Statement{SQL: sel + " WHERE key_contract_id >= $1" + reportByContract, Args: []any{bounds[i-1]}, First: firsts[i-1]}
		default:
			parts[i] = Statement{SQL: sel + " WHERE key_contract_id >= $1 AND key_contract_id < $2" + reportByContract,
				Args: []any{bounds[i-1], bounds[i]}, First: firsts[i-1]}
		}
		parts[i].Within = len(reportWithin)
	}
	return parts, nil
}

// reportSelect returns the SELECT of cols, then of the extra expressions,
// from the typed view: Go writes the text.
func reportSelect(cols []dataset.Column, extra ...string) string {
	list := SelectList(dataset.Names(cols))
	for _, e := range extra {
		list += ", " + e
	}
	return "SELECT " + list + " FROM general_report_typed"
}

// reportEqualities returns the WHERE clause of q's equalities on the view, with
// their arguments appended to args.
func reportEqualities(q *query, args []any) (string, []any) {
	var where string
	for _, e := range q.Equalities() {
		args = append(args, e.Value)
		where = andWhere(where, SelectList([]string{e.Column})+" = $"+strconv.Itoa(len(args)))
	}
	return where, args
}

// andWhere adds cond to the WHERE clause where.
func andWhere(where, cond string) string {
	if where == "" {
		return " WHERE " + cond
	}
	return where + " AND " + cond
}
