package postgres

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/informe/informe/internal/dataset"
)

// maxDays is the longest range of dates read day by day: two months.
const maxDays = 62

// days returns, when q's conditions bound a date column of t to a range of
// at most maxDays days, that column's name in t and the days, as
// "2006-01-02".
func keyTableDays(t *dataset.KeyTable, q *query) (string, []string) {
	const layout = "2006-01-02"
	for _, col := range t.Days {
		var lo, hi time.Time
		for _, o := range q.on {
			s, ok := o.Value.(string)
			if o.Column != col || !ok {
				continue
			}
			d, err := time.Parse(layout, s)
			if err != nil {
				return "", nil
			}
			switch o.Op {
			case ">=", ">":
				if o.Op == ">" {
					d = d.AddDate(0, 0, 1)
				}
				if lo.IsZero() || d.After(lo) {
					lo = d
				}
			case "<", "<=":
				if o.Op == "<=" {
					d = d.AddDate(0, 0, 1)
				}
				if hi.IsZero() || d.Before(hi) {
					hi = d
				}
			}
		}
		if lo.IsZero() || hi.IsZero() || !lo.Before(hi) || hi.Sub(lo) > maxDays*24*time.Hour {
			continue
		}
		var days []string
		for d := lo; d.Before(hi); d = d.AddDate(0, 0, 1) {
			days = append(days, d.Format(layout))
		}
		return t.Columns[col], days
	}
	return "", nil
}

// conditions returns q's conditions written on t's columns, aliased k, or
// false when one of them is not on one of t's columns.
func keyTableConditions(t *dataset.KeyTable, q *query) ([]string, bool) {
	conds := make([]string, len(q.on))
	for i, o := range q.on {
		col, ok := t.Columns[o.Column]
		if !ok || o.Column == "" {
			return nil, false
		}
		conds[i] = "k." + pgx.Identifier{col}.Sanitize() + " " + o.Test
	}
	return conds, true
}

// keyed reports whether d's KeyTable answers q: a page or a count in the
// dataset's own order, without related rows (Expand), every condition on
// one of its columns.
func keyed(d *dataset.Dataset, q *query) ([]string, bool) {
	if d.KeyTable == nil || len(q.where) == 0 || len(q.Sort) > 0 || len(q.Expand) > 0 || len(q.after) > 0 && q.Key == nil {
		return nil, false
	}
	return keyTableConditions(d.KeyTable, q)
}

// keyRead returns the statement reading the rows of q's page through d's
// KeyTable, and false when it cannot answer q. It reads the page's keys,
// in order, from the table, then the rows of those keys alone, joined to
// them in that order.
func keyRead(snap *Snapshot, d *dataset.Dataset, q *query) (_ Statement, _ bool, err error) {
	conds, ok := keyed(d, q)
	if !ok || q.Limit < 0 {
		return Statement{}, false, nil
	}
	kt := d.KeyTable
	_, args := q.conditions()
	args = slices.Clip(args)
	keys := make([]string, len(kt.Keys))
	for i, k := range kt.Keys {
		keys[i] = "k." + pgx.Identifier{k}.Sanitize()
	}
	list := strings.Join(keys, ", ")
	if q.Key != nil {
		var after []string
		for _, v := range q.Key {
			args = append(args, v)
			after = append(after, "$"+strconv.Itoa(len(args))+"::bigint")
		}
		// The bound on the first part alone lets the index narrow the
		// scan; the row comparison does the rest.
		conds = append(conds, keys[0]+" >= "+after[0], "("+list+") > ("+strings.Join(after, ", ")+")")
	}
	from := " FROM " + ident(kt.Table) + " k WHERE " + strings.Join(conds, " AND ")
	sql := "SELECT " + list + from + " ORDER BY " + list
	generic := false
	if col, days := keyTableDays(kt, q); days != nil {
		generic = true
		// A range of a few days: the index gives each day's keys in order,
		// which PostgreSQL merges (Merge Append), reading about as many
		// keys as the page holds, where the range's would all be read and
		// sorted (a month of end dates: 16,000 keys for a page of 1,000).
		// The days are parameters: the statement is the same for every
		// range of as many days, which the connection keeps prepared.
		branches := make([]string, len(days))
		for i, day := range days {
			args = append(args, day)
			branches[i] = "(SELECT " + list + from + " AND k." + pgx.Identifier{col}.Sanitize() + " = $" + strconv.Itoa(len(args)) +
				"::date ORDER BY " + list + ")"
		}
		sql = "SELECT " + list + " FROM (" + strings.Join(branches, " UNION ALL ") + ") k ORDER BY " + list
	}
	sql, args = q.Window(sql, args)
	if generic {
		// Planning a branch a day costs more than reading the keys: the
		// plan of the first statement of as many days serves every other,
		// for this statement only.
		if err := snap.QueryRow("SELECT set_config('plan_cache_mode', 'force_generic_plan', true)", nil, new(string)); err != nil {
			return Statement{}, true, fmt.Errorf("%s: keys: %w", d.Name, err)
		}
		defer func() {
			if err == nil {
				err = snap.QueryRow("SELECT set_config('plan_cache_mode', 'auto', true)", nil, new(string))
			}
		}()
	}
	order := make([]string, len(keys))
	for i := range keys {
		order[i] = "p.k" + strconv.Itoa(i)
	}
	arrays, err := pageKeys(snap, sql, args, len(keys), names(len(keys)), order)
	if err != nil {
		return Statement{}, true, fmt.Errorf("%s: keys: %w", d.Name, err)
	}
	if arrays == nil {
		return Statement{}, true, nil // a page past the last
	}
	return keyRows(d, q, arrays, false), true, nil
}

// pageKeys reads a page's keys: sql (with args) selects the n key parts
// of its rows, then any values they are ordered by, as the columns cols;
// order is the page's order over those columns. It returns one array (a
// []pgtype.Int8, a part NULL where a row lacks it) per key part, in that
// order, or nil for an empty page.
func pageKeys(snap *Snapshot, sql string, args []any, n int, cols, order []string) ([]any, error) {
	aggs := make([]string, n)
	for i, c := range cols[:n] {
		aggs[i] = "coalesce(array_agg(p." + c + " ORDER BY " + strings.Join(order, ", ") + "), '{}')"
	}
	sql = "SELECT " + strings.Join(aggs, ", ") + " FROM (" + sql + ") p(" + strings.Join(cols, ", ") + ")"
	parts := make([][]pgtype.Int8, len(aggs))
	dest := make([]any, len(aggs))
	for i := range parts {
		dest[i] = &parts[i]
	}
	if err := snap.QueryRow(sql, args, dest...); err != nil {
		return nil, err
	}
	if len(parts[0]) == 0 {
		return nil, nil
	}
	arrays := make([]any, len(parts))
	for i := range parts {
		arrays[i] = parts[i]
	}
	return arrays, nil
}

// keyRows returns the statement reading q's columns of the rows whose keys
// are in arrays (a bigint[] per key part, each a parameter), in their
// order, from the typed view aliased t: each key's row is found by its
// parts' equalities, which PostgreSQL serves from the tables' primary
// keys; with nullable, the parts after the first may be NULL (a contract
// without processes), and match a NULL. With [dataset.Query.Position], each row
// carries its key's text and sort values' text.
func keyRows(d *dataset.Dataset, q *query, arrays []any, nullable bool) Statement {
	var outer, unnest, join []string
	for i, k := range d.Keys {
		unnest = append(unnest, "$"+strconv.Itoa(i+1)+"::bigint[]")
		op := " = "
		if nullable && i > 0 {
			op = " IS NOT DISTINCT FROM "
		}
		join = append(join, "t."+k+op+"k.k"+strconv.Itoa(i))
	}
	for _, c := range q.columns(d) {
		outer = append(outer, "t."+ident(c.Name))
	}
	if q.Position {
		outer = append(outer, keyText(d, "t")...)
		for _, s := range q.sorts {
			outer = append(outer, s.text)
		}
	}
	return Statement{
		SQL: "SELECT " + strings.Join(outer, ", ") + " FROM unnest(" + strings.Join(unnest, ", ") + ") WITH ORDINALITY k(" +
			strings.Join(names(len(d.Keys)), ", ") + ", n) JOIN " + ident(d.Typed) + " t ON " + strings.Join(join, " AND ") + " ORDER BY k.n",
		Args: arrays,
	}
}

// names returns the names k0, k1, ... of n key parts.
func names(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = "k" + strconv.Itoa(i)
	}
	return out
}
