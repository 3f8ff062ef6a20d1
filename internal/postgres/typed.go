package postgres

import (
	"context"
	"fmt"
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
	Skip, Limit    int64
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
	sql, args := t.SQL()
	cur, err := snap.Query(sql, args)
	return cur, total, err
}
