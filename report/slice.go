package report

import (
	"context"
	"fmt"
	"strconv"

	"github.com/informe/informe/export"
	"github.com/informe/informe/internal/postgres"
)

// Key is a report row's position in the report's order: its contract,
// process and task ids, 0 for an absent process or task. A contract
// without processes, or a process without tasks, yields one row, so
// reading an absent id as 0 keeps the order of the report.
type Key [3]int64

// Slice asks for rows of the report by position rather than by page
// number, the way a client pages by keyset: those matching Query's filters
// whose key comes after After (from the first row when nil), Skip of them
// passed over, at most Limit. Query.Page and Query.PerPage are ignored.
type Slice struct {
	Query Query
	After *Key
	Skip  int64
	Limit int64
	Count bool // count the rows matching the filters (Page.Total); else Total is -1
}

// keyColumns select a row's [Key] as text. They are named apart from the
// view's key_* columns: ORDER BY would take an output column of the same
// name, and sort the ids as text.
var keyColumns = []string{
	"key_contract_id::text AS row_contract",
	"coalesce(key_process_id, 0)::text AS row_process",
	"coalesce(key_task_id, 0)::text AS row_task",
}

// OpenSlice opens a [Cursor] on the rows sl asks for, in one REPEATABLE
// READ, READ ONLY snapshot. Each row's values are those of the query's
// columns followed by the three parts of its [Key], as base-10 text. A
// slice costs the same wherever it starts: the scan begins at After's
// contract through the index, never skipping the rows before it.
// Errors are those of [Store.Open].
func (s *Store) OpenSlice(ctx context.Context, sl Slice) (_ *Cursor, err error) {
	snap, err := postgres.Begin(ctx, s.pool)
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			snap.Close()
		}
	}()
	p := Page{Total: -1, CurrentPage: 1, PerPage: sl.Limit}
	if sl.Count {
		if err := s.count(snap, sl.Query, &p); err != nil {
			return nil, err
		}
	}
	if sl.Limit <= 0 {
		return &Cursor{Cursor: snap.Empty(), page: p}, nil
	}
	where, args := filters(sl.Query)
	and := func(cond string) {
		if where == "" {
			where = " WHERE " + cond
		} else {
			where += " AND " + cond
		}
	}
	if sl.After != nil {
		n := len(args)
		args = append(args, sl.After[0], sl.After[1], sl.After[2])
		c, pr, t := "$"+strconv.Itoa(n+1), "$"+strconv.Itoa(n+2), "$"+strconv.Itoa(n+3)
		// The bound on the contract alone lets the index narrow the scan;
		// the row comparison does the rest.
		and("key_contract_id >= " + c)
		and("(key_contract_id, coalesce(key_process_id, 0), coalesce(key_task_id, 0)) > (" + c + ", " + pr + ", " + t + ")")
	}
	sql := selectFrom(sl.Query.columns(), keyColumns...) + where + order
	if sl.Skip > 0 {
		args = append(args, sl.Skip)
		sql += " OFFSET $" + strconv.Itoa(len(args))
	}
	args = append(args, sl.Limit)
	sql += " LIMIT $" + strconv.Itoa(len(args))
	cur, err := snap.Query(sql, args)
	if err != nil {
		return nil, fmt.Errorf("report: %w", err)
	}
	return &Cursor{Cursor: cur, page: p}, nil
}

// Selection asks for rows of the report found and ordered by their typed
// values, in the general_report_typed view (OData's $filter and
// $orderby): those matching Where, in the order of Sort then the key, Skip
// of them passed over, at most Limit. Each row's values are those of the
// columns, then the three parts of its [Key], then SortText's values.
type Selection struct {
	Columns []export.Column // nil: all [Columns]
	// Where is a condition on general_report_typed, aliased t, with
	// parameters $1 to $len(Args); "" for every row. It includes the
	// position to resume after.
	Where string
	Args  []any
	// Sort, SortText, Desc, After, AfterKey and Bound: see postgres.Typed.
	Sort, SortText  []string
	Desc            []bool
	After, AfterKey string
	Bound           bool
	Skip, Limit     int64
	// Count, with CountWhere and CountArgs (the filter without the
	// position), counts the matching rows (Page.Total); else Total is -1.
	Count      bool
	CountWhere string
	CountArgs  []any
}

// OpenSelection opens a [Cursor] on the rows sel asks for, in one
// REPEATABLE READ, READ ONLY snapshot. Only the rows read are rendered:
// they are found in general_report_typed, then read from general_report.
// Errors are those of [Store.Open].
func (s *Store) OpenSelection(ctx context.Context, sel Selection) (*Cursor, error) {
	cols := sel.Columns
	if cols == nil {
		cols = Columns
	}
	cur, total, err := postgres.OpenTyped(ctx, s.pool, postgres.Typed{
		Typed: "general_report_typed", Text: "general_report",
		Keys:    []string{"key_contract_id", "key_process_id", "key_task_id"},
		Columns: export.Names(cols),
		Extra:   []string{"r.key_contract_id::text", "coalesce(r.key_process_id, 0)::text", "coalesce(r.key_task_id, 0)::text"},
		Where:   sel.Where, Args: sel.Args,
		Sort: sel.Sort, SortText: sel.SortText, Desc: sel.Desc, After: sel.After, AfterKey: sel.AfterKey, Bound: sel.Bound,
		Skip: sel.Skip, Limit: sel.Limit,
	}, sel.Count, sel.CountWhere, sel.CountArgs)
	if err != nil {
		return nil, fmt.Errorf("report: %w", err)
	}
	p := Page{Total: -1, CurrentPage: 1, PerPage: sel.Limit}
	if sel.Count {
		p.setTotal(total)
	}
	return &Cursor{Cursor: cur, page: p}, nil
}
