package postgres

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/informe/informe/internal/dataset"
)

// compile returns dq with its typed conditions ([dataset.Query.Filters], [dataset.Query.ByKey]),
// order ([dataset.Query.Sort]) and position ([dataset.Query.Resume]) as PostgreSQL over
// d's typed view aliased t, after the equalities of [Query.Equal]: every
// literal is a bound parameter, never text in the statement, and every
// comparison is on the typed column, so that it is by value and an index
// on the column can serve it. A query is compiled once, when it is opened.
func compile(d *dataset.Dataset, dq dataset.Query) query {
	q := &query{Query: dq}
	set := d.EntitySet()
	b := &sqlBuilder{set: &set, alias: "t", q: q}
	for _, e := range q.Equalities() {
		cast := "text"
		if _, ok := e.Value.(int64); ok {
			cast = "bigint"
		}
		q.addWhere("t."+e.Column+" = "+q.param(e.Value, cast), On{})
	}
	for i, c := range b.keyColumns() {
		if q.ByKey != nil {
			q.addWhere(keyPart(b.alias, i, c)+" = "+q.param(q.ByKey[i], "bigint"), On{})
		}
	}
	for _, f := range q.Filters {
		b.filter(f)
	}
	q.bound = len(q.Sort) > 0 && slices.Contains(set.SortIndexed, q.Sort[0].Property)
	var sort []string
	for _, o := range q.Sort {
		e, t := b.sortExpr(o.Property)
		sort = append(sort, e)
		q.sorts = append(q.sorts, sortSQL{expr: e, text: t})
	}
	if q.Resume != nil {
		after, first, floor := b.after(q.Resume, sort)
		q.after = append(q.after, after...)
		q.afterValue, q.afterFloor = first, floor
	}
	return *q
}

// sortSQL is a [dataset.Sort] item written: its typed expression over the typed
// view aliased t, and that value as text, read after a row's columns and
// key when [dataset.Query.Position] asks for it (what a next link resumes from).
type sortSQL struct{ expr, text string }

type sqlBuilder struct {
	set   *dataset.EntitySet
	alias string
	q     *query // where the parameters are bound
	depth int    // of lambda operators around the expressions written
}

func (b *sqlBuilder) param(v any, cast string) string { return b.q.param(v, cast) }

// filter adds the condition e: each operand of its outer and on its own,
// and those that compare a column with a literal as conditions on that
// column (see [On]), then the joined columns it needs.
func (b *sqlBuilder) filter(e *dataset.Expr) {
	var conjuncts func(e *dataset.Expr)
	conjuncts = func(e *dataset.Expr) {
		if e.Op == dataset.And {
			conjuncts(e.Args[0])
			conjuncts(e.Args[1])
		} else if o, ok := b.on(e); ok {
			b.q.addWhere("t."+o.Column+" "+o.Test, o)
		} else {
			b.q.addWhere(b.cond(e), On{})
		}
	}
	conjuncts(e)
	seen := make(map[string]bool)
	for _, col := range b.needed(e) {
		if !seen[col] {
			seen[col] = true
			b.q.addWhere("t."+col+" IS NOT NULL", On{Column: col, Test: "IS NOT NULL"})
		}
	}
}

// keyColumns are the typed view's columns of the key's parts.
func (b *sqlBuilder) keyColumns() []string {
	if len(b.set.KeyColumns) > 0 {
		return b.set.KeyColumns
	}
	return []string{b.set.Key}
}

// column returns the set's column named name.
func (b *sqlBuilder) column(name string) (dataset.Column, bool) {
	for _, c := range b.set.Columns {
		if c.Name == name {
			return c, true
		}
	}
	return dataset.Column{}, false
}

// on returns e as a condition on one column, when it compares a property
// with a literal by eq, gt, ge, lt or le as [sqlBuilder.cmp] writes it:
// the column, the operator and the literal's parameter.
func (b *sqlBuilder) on(e *dataset.Expr) (On, bool) {
	if e.Op != dataset.Compare {
		return On{}, false
	}
	l, r, name := e.Args[0], e.Args[1], e.Name
	if l.Op == dataset.Literal {
		l, r, name = r, l, flip(name)
	}
	if name == "ne" || l.Op != dataset.Property || r.Op != dataset.Literal || r.Type == dataset.Null || l.Type == dataset.Bool || subMicro(r) {
		return On{}, false
	}
	if _, normalized := b.set.Normalized[l.Column]; l.Key || l.Kind == dataset.Timestamp || normalized {
		return On{}, false // cmp writes these otherwise
	}
	v := r.Value
	if d, ok := v.(time.Time); ok && r.Type == dataset.Day {
		v = pgDate(d)
	}
	return On{Column: l.Column, Test: sqlOps[name] + " " + b.value(r), Op: sqlOps[name], Value: v}, true
}

// needed returns the [dataset.EntitySet.Joined] columns that are not null
// wherever e is true (some maybe twice): e reads a property of their
// table, and is false or NULL where that property is null.
func (b *sqlBuilder) needed(e *dataset.Expr) []string {
	joined := func(props []*dataset.Expr) []string {
		var cols []string
		for _, p := range props {
			for col, names := range b.set.Joined {
				if !p.Key && slices.Contains(names, p.Column) {
					cols = append(cols, col)
				}
			}
		}
		return cols
	}
	switch e.Op {
	case dataset.And:
		return append(b.needed(e.Args[0]), b.needed(e.Args[1])...)
	case dataset.Or:
		r := b.needed(e.Args[1])
		var both []string
		for _, c := range b.needed(e.Args[0]) {
			if slices.Contains(r, c) {
				both = append(both, c)
			}
		}
		return both
	case dataset.In:
		for _, a := range e.Args[1:] {
			if a.Type == dataset.Null {
				return nil
			}
		}
		return joined(reads(e.Args[0]))
	case dataset.Compare:
		l, r := e.Args[0], e.Args[1]
		// ne matches null; eq between two non-literals is IS NOT
		// DISTINCT FROM, true for two nulls; a Boolean is compared
		// with IS.
		if e.Name == "ne" || l.Type == dataset.Null || r.Type == dataset.Null || l.Type == dataset.Bool ||
			e.Name == "eq" && l.Op != dataset.Literal && r.Op != dataset.Literal {
			return nil
		}
		return joined(append(reads(l), reads(r)...))
	case dataset.Call: // contains, startswith, endswith
		return joined(reads(e))
	}
	return nil
}

// reads returns the properties a scalar e reads when e is null wherever
// one of them is: every function [sqlBuilder.call] writes is.
func reads(e *dataset.Expr) []*dataset.Expr {
	switch e.Op {
	case dataset.Property:
		return []*dataset.Expr{e}
	case dataset.Call:
		var out []*dataset.Expr
		for _, a := range e.Args {
			out = append(out, reads(a)...)
		}
		return out
	}
	return nil
}

// keyPart is the i-th key part, column col, over alias as a comparable
// integer: a NULL part (a contract without processes) is 0.
func keyPart(alias string, i int, col string) string {
	if i == 0 {
		return alias + "." + col
	}
	return "coalesce(" + alias + "." + col + ", 0)"
}

// property writes the typed expression of the property e.
func (b *sqlBuilder) property(e *dataset.Expr) string {
	if e.Key { // the synthetic key, as text
		var parts []string
		for j, c := range b.keyColumns() {
			parts = append(parts, keyPart(b.alias, j, c)+"::text")
		}
		return "(" + strings.Join(parts, " || '-' || ") + ")"
	}
	return b.alias + "." + e.Column
}

// sortExpr returns the ordering expression of the property name and its
// text: for a personal column, null where its person is blocked.
func (b *sqlBuilder) sortExpr(name string) (string, string) {
	p := &dataset.Expr{Op: dataset.Property, Column: name, Key: name == b.set.Key && len(b.set.RowKey) > 0}
	c, _ := b.column(name)
	p.Kind = c.Kind
	e := b.property(p)
	if !p.Key && c.Personal != dataset.NotPersonal {
		// A blocked person's value sorts as null, so that neither the
		// order nor a next link's position carries it.
		e = WithheldTyped(*b.set, b.alias, name)
	}
	switch p.Kind {
	case dataset.Date:
		return e, "to_char(" + e + ", 'YYYY-MM-DD')"
	case dataset.Timestamp:
		return e, "to_char(" + e + `, 'YYYY-MM-DD"T"HH24:MI:SS.US')`
	case dataset.Timestamptz:
		return e, "to_char(" + e + ` AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`
	case dataset.Text:
		return e, e
	}
	return e, e + "::text"
}

// sortParam binds a sort value of the property name as read from a
// position.
func (b *sqlBuilder) sortParam(name string, v string) string {
	c, ok := b.column(name)
	if !ok {
		return b.param(v, "text") // the synthetic key
	}
	switch c.Kind {
	case dataset.Integer:
		n, _ := strconv.ParseInt(v, 10, 64)
		return b.param(n, "bigint")
	case dataset.Decimal:
		return b.param(v, "numeric")
	case dataset.Date:
		return b.param(v, "date")
	case dataset.Timestamp:
		return b.param(v, "timestamp")
	case dataset.Timestamptz:
		return b.param(v, "timestamptz")
	}
	return b.param(v, "text")
}

// after returns the conditions selecting the rows after the position r in
// the query's order: some leading sort values equal and the next one after,
// or all equal and the key greater. A bound on the first sort value comes
// first, so that an index on it can narrow the scan. It also returns the
// parameter of the first sort value and a condition on the key that the
// rows sharing that value meet (see bounded).
func (b *sqlBuilder) after(r *dataset.Resume, sort []string) (_ []string, first, floor string) {
	var conds, alts, eqs []string
	for j, o := range b.q.Sort {
		v := r.Values[j]
		e := sort[j]
		var p string
		if v != nil {
			p = b.sortParam(o.Property, *v)
		}
		if j == 0 && v != nil {
			first = p
		}
		if j == 0 {
			switch {
			case v != nil && !o.Desc:
				conds = append(conds, e+" >= "+p)
			case v != nil:
				conds = append(conds, "("+e+" <= "+p+" OR "+e+" IS NULL)")
			case o.Desc:
				conds = append(conds, e+" IS NULL")
			}
		}
		var next string
		switch {
		case v == nil && !o.Desc:
			next = e + " IS NOT NULL"
		case v == nil: // nulls last: nothing comes after null
		case !o.Desc:
			next = e + " > " + p
		default:
			next = "(" + e + " < " + p + " OR " + e + " IS NULL)"
		}
		if next != "" {
			alts = append(alts, strings.Join(append(eqs[:len(eqs):len(eqs)], next), " AND "))
		}
		if v == nil {
			eqs = append(eqs, e+" IS NULL")
		} else {
			eqs = append(eqs, e+" = "+p)
		}
	}
	cols := b.keyColumns()
	var left, right []string
	for i, c := range cols {
		left = append(left, keyPart(b.alias, i, c))
		right = append(right, b.param(r.Key[i], "bigint"))
	}
	if len(b.q.Sort) == 0 {
		// As for the set's own order: the bound on the first part lets the
		// index narrow the scan.
		conds = append(conds, left[0]+" >= "+right[0])
	}
	key := "(" + strings.Join(left, ", ") + ") > (" + strings.Join(right, ", ") + ")"
	if len(cols) == 1 {
		key = left[0] + " > " + right[0]
	}
	alts = append(alts, strings.Join(append(eqs, key), " AND "))
	if len(alts) == 1 {
		return append(conds, alts[0]), "", ""
	}
	if len(b.q.Sort) == 1 && first != "" {
		// Among the rows sharing the first sort value, the key is the
		// order: those after the position have a greater key. (With more
		// sort values, the next one orders them instead.)
		floor = left[0] + " >= " + right[0]
	} else {
		first = ""
	}
	// The same alternatives with the key's first part alone, which the
	// key's order implies: PostgreSQL tests this one as soon as it has
	// the sort values and that part, before it joins the rest of a row,
	// so that a page deep among rows of equal sort values passes over
	// the rows before it without reading the rest of them.
	coarse := append(slices.Clip(alts[:len(alts)-1]), strings.Join(append(slices.Clip(eqs), left[0]+" >= "+right[0]), " AND "))
	return append(conds, "(("+strings.Join(alts, ") OR (")+"))", "(("+strings.Join(coarse, ") OR (")+"))"), first, floor
}

// cond writes a condition. Its SQL value is true where OData's is true,
// and false or NULL elsewhere: NULL acts as false under AND, OR and WHERE.
// Where false and null must differ (under not, or compared with eq or ne),
// [sqlBuilder.exact] writes it.
func (b *sqlBuilder) cond(e *dataset.Expr) string {
	if s, ok := b.logical(e, b.cond); ok {
		return s
	}
	switch e.Op {
	case dataset.In:
		return b.in(e)
	case dataset.Compare:
		return b.cmp(e)
	case dataset.Some, dataset.Every:
		return b.lambda(e)
	case dataset.Literal:
		if e.Value.(bool) {
			return "TRUE"
		}
		return "FALSE"
	}
	return b.value(e)
}

// logical writes e when it is and, or or not, its operands of and and or
// written by side, and reports whether it was. not is always exact: not of
// null is null, never true.
func (b *sqlBuilder) logical(e *dataset.Expr, side func(*dataset.Expr) string) (string, bool) {
	switch e.Op {
	case dataset.And:
		return "(" + side(e.Args[0]) + " AND " + side(e.Args[1]) + ")", true
	case dataset.Or:
		return "(" + side(e.Args[0]) + " OR " + side(e.Args[1]) + ")", true
	case dataset.Not:
		return "(NOT " + b.exact(e.Args[0]) + ")", true
	}
	return "", false
}

// lambda writes any or all as EXISTS or NOT EXISTS over the target's
// typed view, aliased anew at each depth, its rows related by the
// navigation's column to this row's key: any is true where some related
// row makes the lambda expression true (any() where there is a related
// row at all); all is true where no related row makes it false or null,
// so on a row with no related rows. Neither is ever null.
func (b *sqlBuilder) lambda(e *dataset.Expr) string {
	alias := "l" + strconv.Itoa(b.depth+1)
	inner := &sqlBuilder{set: e.Target, alias: alias, q: b.q, depth: b.depth + 1}
	rel := alias + "." + e.Nav.Column + " = " + b.alias + "." + b.keyColumns()[0]
	sub := "SELECT 1 FROM " + e.Target.Typed + " " + alias + " WHERE " + rel
	if e.Op == dataset.Some && len(e.Args) == 0 {
		return "EXISTS (" + sub + ")"
	}
	// A condition on a related row's personal columns is never true of a
	// blocked person's row.
	cond := Unblocked(*e.Target, alias, inner.cond(e.Args[0]))
	if e.Op == dataset.Some {
		return "EXISTS (" + sub + " AND " + cond + ")"
	}
	return "(NOT EXISTS (" + sub + " AND (" + cond + ") IS NOT TRUE))"
}

// exact writes a condition whose SQL value is OData's, null included
// (OData 4.01, URL Conventions, 5.1.1): a comparison (eq, ne, gt, ..., in)
// is true or false, never null (null eq null is true, null gt 1 false); a
// function of null is null (contains(null,'x')); and, or and not are
// three-valued as SQL's are, so that not null is null, not true. So
// "not contains(task,'x')" keeps no row whose task is null, while
// "not (task eq 'x')" keeps them.
func (b *sqlBuilder) exact(e *dataset.Expr) string {
	if s, ok := b.logical(e, b.exact); ok {
		return s
	}
	if e.Op == dataset.Call {
		// contains, startswith, endswith: null exactly where an argument
		// is, as every function [sqlBuilder.call] writes.
		return b.cond(e)
	}
	// A comparison or a literal: cond is true where it is, and false or
	// NULL where it is false.
	return "((" + b.cond(e) + ") IS TRUE)"
}

var sqlOps = map[string]string{"eq": "=", "ne": "<>", "gt": ">", "ge": ">=", "lt": "<", "le": "<="}

// cmp writes a comparison. OData's eq and ne are two-valued: null eq null
// is true, and a null value is ne any other.
func (b *sqlBuilder) cmp(e *dataset.Expr) string {
	l, r := e.Args[0], e.Args[1]
	if l.Op == dataset.Literal && r.Op == dataset.Literal && l.Type == dataset.Instant && r.Type == dataset.Instant {
		// Two date-times, compared here at their own precision, which
		// PostgreSQL's microseconds may not hold.
		if compareInstants(l, r, e.Name) {
			return "TRUE"
		}
		return "FALSE"
	}
	if l.Op == dataset.Literal {
		l, r = r, l
		e = &dataset.Expr{Op: dataset.Compare, Name: flip(e.Name), Args: []*dataset.Expr{l, r}}
	}
	if r.Op == dataset.Literal && r.Type == dataset.Instant && subMicro(r) {
		// Date-times are stored to the microsecond: none equals a literal
		// with a finer fraction, and those after it are those after it
		// cut to the microsecond. Rounding it (as PostgreSQL does) would
		// find 12:53:36.471554 eq 12:53:36.4715544.
		floor := &dataset.Expr{Op: dataset.Literal, Type: dataset.Instant, Value: r.Value}
		switch e.Name {
		case "eq":
			return "FALSE"
		case "ne":
			return "TRUE"
		case "gt", "ge":
			e = &dataset.Expr{Op: dataset.Compare, Type: dataset.Bool, Name: "gt", Args: []*dataset.Expr{l, floor}}
		default: // lt, le
			e = &dataset.Expr{Op: dataset.Compare, Type: dataset.Bool, Name: "le", Args: []*dataset.Expr{l, floor}}
		}
		r = floor
	}
	if l.Type == dataset.Bool {
		// Conditions compared as values: null eq false is false, null eq
		// null true.
		v := b.exact(l)
		if r.Op == dataset.Literal && r.Type == dataset.Null {
			if e.Name == "eq" {
				return "(" + v + " IS NULL)"
			}
			return "(" + v + " IS NOT NULL)"
		}
		if r.Op == dataset.Literal {
			word := map[bool]string{true: "TRUE", false: "FALSE"}[r.Value.(bool)]
			if e.Name == "eq" {
				return "(" + v + " IS " + word + ")"
			}
			return "(" + v + " IS NOT " + word + ")"
		}
		w := b.exact(r)
		if e.Name == "eq" {
			return "(" + v + " IS NOT DISTINCT FROM " + w + ")"
		}
		return "(" + v + " IS DISTINCT FROM " + w + ")"
	}
	if r.Op == dataset.Literal && r.Type == dataset.Null {
		if e.Name == "eq" {
			return b.value(l) + " IS NULL"
		}
		return b.value(l) + " IS NOT NULL"
	}
	var lv, rv string
	if e.Name == "eq" || e.Name == "ne" || l.Op == dataset.Property && l.Kind == dataset.Timestamp && r.Op == dataset.Literal {
		lv, rv = b.operands(l, r)
	} else {
		lv, rv = b.value(l), b.value(r)
	}
	switch {
	case e.Name == "ne" && r.Op == dataset.Literal:
		return "(" + lv + " <> " + rv + " OR " + lv + " IS NULL)"
	case e.Name == "ne":
		return lv + " IS DISTINCT FROM " + rv
	case e.Name == "eq" && r.Op != dataset.Literal:
		return lv + " IS NOT DISTINCT FROM " + rv
	}
	return lv + " " + sqlOps[e.Name] + " " + rv
}

// operands writes the two sides of a comparison. A date-time without an
// offset (a Timestamp column, UTC wall-clock time) compared with a literal
// meets the literal's UTC wall-clock time, so that an index on the column
// serves it; a normalized property ([dataset.EntitySet.Normalized]) meets the
// literal normalized.
func (b *sqlBuilder) operands(l, r *dataset.Expr) (string, string) {
	if l.Op == dataset.Property && r.Op == dataset.Literal && r.Type == dataset.String {
		if n, ok := b.set.Normalized[l.Column]; ok && !l.Key {
			return b.alias + "." + n[0], n[1] + "(" + b.param(r.Value.(string), "text") + ")"
		}
	}
	if l.Op == dataset.Property && l.Kind == dataset.Timestamp && r.Op == dataset.Literal {
		return b.property(l), b.param(pgTimestamp(r.Value.(time.Time), false), "timestamp")
	}
	return b.value(l), b.value(r)
}

func flip(op string) string {
	switch op {
	case "gt":
		return "lt"
	case "ge":
		return "le"
	case "lt":
		return "gt"
	case "le":
		return "ge"
	}
	return op
}

// in writes "v IN (...)", with "OR v IS NULL" when the list holds null.
func (b *sqlBuilder) in(e *dataset.Expr) string {
	l := e.Args[0]
	if l.Type == dataset.Bool || l.Op == dataset.Literal {
		// Conditions as values, or a literal, each compared as eq
		// compares them.
		var parts []string
		for _, a := range e.Args[1:] {
			parts = append(parts, b.cmp(&dataset.Expr{Op: dataset.Compare, Type: dataset.Bool, Name: "eq", Args: []*dataset.Expr{l, a}}))
		}
		return "(" + strings.Join(parts, " OR ") + ")"
	}
	var items []string
	lv, null := "", false
	for _, a := range e.Args[1:] {
		if a.Type == dataset.Null {
			null = true
			continue
		}
		if subMicro(a) {
			continue // equal to no stored value: see cmp
		}
		var rv string
		if l.Op == dataset.Property || lv == "" {
			// A property's side has no parameters: the same for every
			// literal of one type. Any other is written once.
			lv, rv = b.operands(l, a)
		} else {
			rv = b.value(a)
		}
		items = append(items, rv)
	}
	var parts []string
	if len(items) > 0 {
		parts = append(parts, lv+" IN ("+strings.Join(items, ", ")+")")
	}
	if null {
		parts = append(parts, b.value(l)+" IS NULL")
	}
	if len(parts) == 0 {
		return "FALSE"
	}
	return "(" + strings.Join(parts, " OR ") + ")"
}

// subMicro reports whether e is a date-time literal with a fraction of a
// second finer than the microsecond, PostgreSQL's precision.
func subMicro(e *dataset.Expr) bool {
	return e.Op == dataset.Literal && e.Type == dataset.Instant && e.Pico != 0
}

// compareInstants reports whether l op r holds for two date-time
// literals, each at its own precision.
func compareInstants(l, r *dataset.Expr, op string) bool {
	c := l.Value.(time.Time).Compare(r.Value.(time.Time))
	if c == 0 {
		c = cmp.Compare(l.Pico, r.Pico)
	}
	switch op {
	case "eq":
		return c == 0
	case "ne":
		return c != 0
	case "gt":
		return c > 0
	case "ge":
		return c >= 0
	case "lt":
		return c < 0
	}
	return c <= 0
}

// value writes a scalar expression.
func (b *sqlBuilder) value(e *dataset.Expr) string {
	switch e.Op {
	case dataset.Property:
		c := b.property(e)
		if e.Kind == dataset.Timestamp {
			return "(" + c + " AT TIME ZONE 'UTC')" // UTC wall-clock time, as the feed writes it
		}
		return c
	case dataset.Literal:
		switch v := e.Value.(type) {
		case int64:
			return b.param(v, "bigint")
		case time.Time:
			if e.Type == dataset.Day {
				return b.param(pgDate(v), "date")
			}
			return b.param(pgTimestamp(v, true), "timestamptz")
		case string:
			return b.param(v, map[dataset.Type]string{dataset.Number: "numeric", dataset.String: "text"}[e.Type])
		case bool:
			return b.cond(e)
		}
		return "NULL"
	case dataset.Call:
		return b.call(e)
	}
	return b.cond(e)
}

// maxTextChars bounds the characters of any PostgreSQL text value: its
// bytes are fewer than 2^30.
const maxTextChars = 1<<30 - 1

// likeLiteral returns the LIKE pattern matching s itself.
func likeLiteral(s string) string {
	return strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(s)
}

// call writes a function call.
func (b *sqlBuilder) call(e *dataset.Expr) string {
	a := e.Args
	arg := func(i int) string { return b.value(a[i]) }
	switch e.Name {
	case "contains":
		return "(strpos(" + arg(0) + ", " + arg(1) + ") > 0)"
	case "startswith":
		if a[1].Op == dataset.Literal {
			return "(" + arg(0) + " LIKE " + b.param(likeLiteral(a[1].Value.(string))+"%", "text") + ")"
		}
		return "starts_with(" + arg(0) + ", " + arg(1) + ")"
	case "endswith":
		if a[1].Op == dataset.Literal {
			return "(" + arg(0) + " LIKE " + b.param("%"+likeLiteral(a[1].Value.(string)), "text") + ")"
		}
		x, y := arg(0), arg(1)
		return "(right(" + x + ", char_length(" + y + ")) = " + y + ")"
	case dataset.Fold:
		// informe_fold (migration 00013): lower case through
		// informe_case, then the Latin letters' accents taken off.
		return "informe_fold(" + arg(0) + ")"
	case "tolower", "toupper":
		// Case mapped by Unicode's rules through informe_case (migration
		// 00009), whatever the database's collation; the result compares
		// and sorts in the database's collation again, as any text.
		f := map[string]string{"tolower": "lower", "toupper": "upper"}[e.Name]
		return "(" + f + "((" + arg(0) + `) COLLATE informe_case) COLLATE "default")`
	case "trim":
		return "btrim(" + arg(0) + `, E' \t\n\r')`
	case "length":
		return "char_length(" + arg(0) + ")::bigint"
	case "concat":
		return "(" + arg(0) + " || " + arg(1) + ")"
	case "indexof":
		return "(strpos(" + arg(0) + ", " + arg(1) + ") - 1)::bigint"
	case "substring":
		// PostgreSQL's substr takes integers, and no text holds 2^30
		// characters (a value is at most 1 GB): a position past that is
		// past the end of every string, and a length past it runs to the
		// end, as a larger one does. So the literals are cut to fit,
		// meaning the same, their sum within an integer.
		s := "substr(" + arg(0) + ", " + b.param(min(a[1].Value.(int64), maxTextChars-1)+1, "integer")
		if len(a) == 3 {
			s += ", " + b.param(min(a[2].Value.(int64), maxTextChars), "integer")
		}
		return s + ")"
	case "year":
		// PostgreSQL numbers the years before Christ from -1 (1 BC);
		// OData's years are astronomical, 1 BC being 0.
		w := b.wall(a[0])
		return "(extract(year FROM " + w + ") + (extract(year FROM " + w + ") < 0)::int)::bigint"
	case "month", "day", "hour", "minute":
		return "extract(" + e.Name + " FROM " + b.wall(a[0]) + ")::bigint"
	case "second":
		return "floor(extract(second FROM " + b.wall(a[0]) + "))::bigint"
	}
	panic("dataset: function " + e.Name + " has no SQL") // the parsers admit only the functions above
}

// wall writes a date or date-time as UTC wall-clock time, as the feed
// writes it.
func (b *sqlBuilder) wall(e *dataset.Expr) string {
	if e.Op == dataset.Property && e.Kind != dataset.Timestamptz {
		return b.property(e)
	}
	if e.Type == dataset.Instant {
		return "(" + b.value(e) + " AT TIME ZONE 'UTC')"
	}
	return b.value(e)
}

// pgDate writes the date of d (its year astronomical) as PostgreSQL reads
// it: 2024-03-05, 0001-01-01 BC for OData's 0000-01-01.
func pgDate(d time.Time) string {
	y, m, day := d.Date()
	era := ""
	if y <= 0 {
		y, era = 1-y, " BC"
	}
	return fmt.Sprintf("%04d-%02d-%02d%s", y, int(m), day, era)
}

// pgTimestamp writes t in UTC to the microsecond as PostgreSQL reads a
// timestamp, with its era, and "+00" for a timestamptz when zone is true.
func pgTimestamp(t time.Time, zone bool) string {
	t = t.UTC()
	y, m, d := t.Date()
	era := ""
	if y <= 0 {
		y, era = 1-y, " BC"
	}
	z := ""
	if zone {
		z = "+00"
	}
	return fmt.Sprintf("%04d-%02d-%02d %02d:%02d:%02d.%06d%s%s", y, int(m), d, t.Hour(), t.Minute(), t.Second(), t.Nanosecond()/1000, z, era)
}
