package postgres

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Typed asks for rows chosen and ordered on a typed view (general_report_typed,
// user_list_typed) and read, rendered, from the text view over it
// (general_report, user_list): the rows are found by their typed values,
// with the indexes those can use, and only the page's rows are rendered.
type Typed struct {
	Typed, Text string   // the views
	Keys        []string // the key columns both views share, the row's identity and last order
	Columns     []string // the text view's columns to read
	Extra       []string // more expressions over the text view, aliased r, read after Columns
	// Where is a condition on the typed view's row, aliased t, with
	// parameters $1 to $len(Args); "" for none.
	Where string
	Args  []any
	// Sort are expressions over t the rows are ordered by before the keys,
	// descending where Desc says (nulls last), else ascending (nulls
	// first); SortText, their text, is read after Extra.
	Sort, SortText []string
	Desc           []bool
	// After, when the rows start after a position, is the parameter
	// (among Args) holding that position's first sort value, and
	// AfterKey a condition on the row (aliased t) that the rows sharing
	// that value meet, such as a bound on the key; "" for none.
	After, AfterKey string
	// Bound says an index gives the order of Sort[0]: the page's first
	// sort values are found through it first (see bounded).
	Bound       bool
	Skip, Limit int64
}

// SQL returns the statement reading t's rows and its arguments.
func (t Typed) SQL() (string, []any) {
	var inner, outer, order, innerOrder []string
	for _, k := range t.Keys {
		inner = append(inner, "t."+k)
	}
	for i := range t.Sort {
		n := strconv.Itoa(i + 1)
		inner = append(inner, t.Sort[i]+" AS sort_"+n, t.SortText[i]+" AS sort_text_"+n)
		dir := " ASC NULLS FIRST"
		if t.Desc[i] {
			dir = " DESC NULLS LAST"
		}
		innerOrder = append(innerOrder, "sort_"+n+dir)
		order = append(order, "k.sort_"+n+dir)
	}
	var join []string
	for i, k := range t.Keys {
		innerOrder = append(innerOrder, "t."+k)
		order = append(order, "k."+k)
		op := " IS NOT DISTINCT FROM "
		if i == 0 {
			op = " = " // the first key part is never NULL: an index serves it
		}
		join = append(join, "r."+k+op+"k."+k)
	}
	for _, c := range t.Columns {
		outer = append(outer, "r."+pgx.Identifier{c}.Sanitize())
	}
	outer = append(outer, t.Extra...)
	for i := range t.Sort {
		outer = append(outer, "k.sort_text_"+strconv.Itoa(i+1))
	}
	args := t.Args
	sql := "SELECT " + strings.Join(inner, ", ") + " FROM " + pgx.Identifier{t.Typed}.Sanitize() + " t"
	if t.Where != "" {
		sql += " WHERE " + t.Where
	}
	sql += " ORDER BY " + strings.Join(innerOrder, ", ")
	if t.Skip > 0 {
		args = append(args, t.Skip)
		sql += " OFFSET $" + strconv.Itoa(len(args))
	}
	args = append(args, t.Limit)
	sql += " LIMIT $" + strconv.Itoa(len(args))
	return "SELECT " + strings.Join(outer, ", ") + " FROM (" + sql + ") k JOIN " + pgx.Identifier{t.Text}.Sanitize() +
		" r ON " + strings.Join(join, " AND ") + " ORDER BY " + strings.Join(order, ", "), args
}

// bounded returns t with a condition on its first sort value that the
// rows it reads meet, or t itself when it has no sort or t.Bound is false.
// The rows from the
// (Skip+1)-th to the (Skip+Limit)-th in t's order hold the same first sort
// values as those in the order of that value alone, which an index on it
// finds by reading about as many rows (services_cost_idx for a service's
// cost): bounded by their least and greatest, t sorts only the rows that
// share the page's values, not every matching row; and when the page holds
// one value, t's order is the rest of its order among the rows of that
// value, which PostgreSQL can read in that order, from t.AfterKey's bound
// when that value is the position's.
func (t Typed) bounded(snap *Snapshot) (Typed, error) {
	if len(t.Sort) == 0 || !t.Bound {
		return t, nil
	}
	e, dir := t.Sort[0], " ASC NULLS FIRST"
	if t.Desc[0] {
		dir = " DESC NULLS LAST"
	}
	n := len(t.Args)
	p := func(i int) string { return "$" + strconv.Itoa(n+i) }
	sql := "SELECT " + e + " AS v FROM " + pgx.Identifier{t.Typed}.Sanitize() + " t"
	if t.Where != "" {
		sql += " WHERE " + t.Where
	}
	same := "false"
	if t.After != "" {
		same = "coalesce(min(v) = " + t.After + " AND max(v) = " + t.After + ", false)"
	}
	sql = "SELECT count(*), count(v), min(v), max(v), min(v) = max(v), " + same + " FROM (" + sql + " ORDER BY 1" + dir +
		" OFFSET " + p(1) + " LIMIT " + p(2) + ") page"
	var rows, values int64
	var least, greatest any
	var one *bool
	var after bool
	if err := snap.QueryRow(sql, append(slices.Clip(t.Args), t.Skip, t.Limit), &rows, &values, &least, &greatest, &one, &after); err != nil {
		return t, fmt.Errorf("bound: %w", err)
	}
	var cond string
	switch {
	case rows == 0:
		return t, nil
	case values == 0:
		cond = e + " IS NULL"
	case *one:
		cond = e + " = " + p(1)
		t.Args = append(slices.Clip(t.Args), least)
	default:
		cond = e + " BETWEEN " + p(1) + " AND " + p(2)
		t.Args = append(slices.Clip(t.Args), least, greatest)
	}
	if values > 0 && values < rows { // and nulls
		cond = "(" + cond + " OR " + e + " IS NULL)"
	}
	if after && values == rows { // every row of the page shares the position's value
		cond += " AND " + t.AfterKey
	}
	if t.Where != "" {
		cond = "(" + t.Where + ") AND " + cond
	}
	t.Where = cond
	return t, nil
}

// OpenTyped opens a cursor on t's rows in one REPEATABLE READ, READ ONLY
// snapshot of pool, after counting, when count is set, the rows of
// t.Typed matching countWhere (a condition on its row aliased t, "" for
// all) with countArgs; the count is -1 otherwise. A t.Limit of 0 reads no
// rows. Errors are those of [Begin], and the statements' wrapped.
func OpenTyped(ctx context.Context, pool *pgxpool.Pool, t Typed, count bool, countWhere string, countArgs []any) (_ *Cursor, total int64, err error) {
	snap, err := Begin(ctx, pool)
	if err != nil {
		return nil, 0, err
	}
	defer func() {
		if err != nil {
			snap.Close()
		}
	}()
	total = -1
	if count {
		sql := "SELECT count(*) FROM " + pgx.Identifier{t.Typed}.Sanitize() + " t"
		if countWhere != "" {
			sql += " WHERE " + countWhere
		}
		if err := snap.QueryRow(sql, countArgs, &total); err != nil {
			return nil, 0, fmt.Errorf("count: %w", err)
		}
	}
	if t.Limit <= 0 {
		return snap.Empty(), total, nil
	}
	// A page in the key's order, or in an order an index gives, reads
	// rows in that order until it has enough: parallel workers would each
	// read their own share of the order, all of which a Gather Merge
	// waits for, and read several times the rows, later (a first page of
	// task_status eq 'Terminada' on a million rows: 45 ms alone, 130 ms
	// with two workers). A sort no index gives reads every matching row,
	// which workers share; so may the count above.
	if len(t.Sort) == 0 || t.Bound {
		if err := snap.Serial(); err != nil {
			return nil, 0, err
		}
	}
	if t, err = t.bounded(snap); err != nil {
		return nil, 0, err
	}
	sql, args := t.SQL()
	cur, err := snap.Query(sql, args)
	return cur, total, err
}
