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
	if len(q.Equalities()) > 0 || q.Key != nil || !p.Maintained || q.Filtered() {
		return nil, nil
	}
	bounds, firsts, err := p.bounds(snap, total, k)
	if err != nil || len(bounds) == 0 {
		return nil, err
	}
	return reportParts(q, cols, "", nil, bounds, firsts), nil
}

// SplitFiltered returns the statements of up to k parts of q's rows, q
// filtered by other conditions than equalities, and their number: each
// part a range of contracts that holds about 1/k of the unfiltered report
// (as Split's), read under q's conditions. A filter that keeps about as
// many rows of each range keeps the parts about even; one that does not
// reads more of its rows through some parts than through others, never
// other rows. Parts is nil, and the total still returned, when fewer than
// 2*minRows rows meet the conditions, or the counts are not maintained.
//
// With places, one count, the one the export needs, also gives each
// part's first row's place (Statement.First), and ranges where no row
// meets the conditions are no parts (countBefore). Without, total is the rows meeting
// the conditions, counted already (by count, which may know them without
// reading them), and the parts past the first have First -1.
func (p reportReading) SplitFiltered(snap *Snapshot, d *dataset.Dataset, q *query, cols []dataset.Column, k, minRows int64, places bool, total int64) ([]Statement, int64, error) {
	if !places && minRows > 0 && total < 2*minRows {
		return nil, total, nil
	}
	where, args := q.conditions()
	var bounds []int64
	if p.Maintained {
		all, err := p.Count(snap, &query{}) // the unfiltered report's rows, which the ranges split
		if err != nil {
			return nil, 0, err
		}
		if bounds, _, err = p.bounds(snap, all, k); err != nil {
			return nil, 0, err
		}
	}
	if !places {
		if len(bounds) == 0 {
			return nil, total, nil
		}
		firsts := make([]int64, len(bounds))
		for i := range firsts {
			firsts[i] = -1
		}
		return reportParts(q, cols, where, args, bounds, firsts), total, nil
	}
	// The rows meeting the conditions, and those before each bound.
	total, upTo, err := countBefore(snap, d, q, bounds)
	if err != nil {
		return nil, 0, err
	}
	if minRows > 0 && total < 2*minRows {
		return nil, total, nil
	}
	var kept, firsts []int64
	for i, b := range bounds {
		before := upTo[i]
		if before == 0 || before == total || (len(firsts) > 0 && before == firsts[len(firsts)-1]) {
			continue // the part it would start, or the one before it, has no rows
		}
		kept, firsts = append(kept, b), append(firsts, before)
	}
	if len(kept) == 0 {
		return nil, total, nil
	}
	return reportParts(q, cols, where, args, kept, firsts), total, nil
}

// bounds returns the first contract of each of up to k-1 later parts of
// the unfiltered report of total rows, and the place of its first row,
// from the maintained counts.
func (p reportReading) bounds(snap *Snapshot, total, k int64) (bounds, firsts []int64, err error) {
	for i := int64(1); i < k; i++ {
		var contract, firstRow int64
		err := snap.QueryRow("SELECT contract_id, first_row FROM report_contract_at($1)", []any{total * i / k}, &contract, &firstRow)
		if err != nil {
			return nil, nil, fmt.Errorf("report: split: %w", err)
		}
		if firstRow == 0 || (len(bounds) > 0 && contract == bounds[len(bounds)-1]) {
			continue
		}
		bounds = append(bounds, contract)
		firsts = append(firsts, firstRow)
	}
	return bounds, firsts, nil
}

// reportParts returns the statements reading the rows of q's columns under
// the conditions where (on the typed view aliased t, with args; "" for
// none) in the ranges of contracts that bounds starts, the first from
// the first contract; firsts holds each later part's first row's place.
// Each orders its rows by contract ([Statement.Within]).
func reportParts(q *query, cols []dataset.Column, where string, args []any, bounds, firsts []int64) []Statement {
	var extra []string
	if q.Position {
		extra = reportKeyText
	}
	sel := reportSelect(cols, append(slices.Clip(extra), reportWithin...)...) + " t WHERE "
	if where != "" {
		sel += where + " AND "
	}
	from, to := "$"+strconv.Itoa(len(args)+1), "$"+strconv.Itoa(len(args)+2)
	parts := make([]Statement, len(bounds)+1)
	for i := range parts {
		switch {
		case i == 0:
			parts[i] = Statement{SQL: sel + "key_contract_id < " + from + reportByContract, Args: append(slices.Clip(args), bounds[0])}
		case i == len(bounds):
			parts[i] = Statement{SQL: sel + "key_contract_id >= " + from + reportByContract, Args: append(slices.Clip(args), bounds[i-1]), First: firsts[i-1]}
		default:
			parts[i] = Statement{SQL: sel + "key_contract_id >= " + from + " AND key_contract_id < " + to + reportByContract,
				Args: append(slices.Clip(args), bounds[i-1], bounds[i]), First: firsts[i-1]}
		}
		parts[i].Within = len(reportWithin)
	}
	return parts
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
