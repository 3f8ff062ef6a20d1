package odata

import (
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/informe/informe/internal/dataset"
)

// Compile adds q's $filter, request by key, $orderby, $skiptoken position
// and $skip to dq, written as PostgreSQL over the entity set's typed view
// (see [dataset.EntitySet.KeyColumns]) aliased t: every literal is a bound
// parameter, never text in the statement, and every comparison is on the
// typed column, so that it is by value and an index on the column can
// serve it. The position is dq.Key under the set's own order, and
// conditions of dq.After in any order. $skip is the caller's: dq.Skip.
func (q *Query) Compile(dq *dataset.Query) {
	b := &sqlBuilder{set: q.set, alias: "t", q: dq}
	b.filter(q)
	dq.Bound = len(q.order) > 0 && q.set.sorted[q.order[0].prop]
	var sort []string
	for _, o := range q.order {
		e, t := b.sortExpr(o.prop)
		sort = append(sort, e)
		dq.Sort = append(dq.Sort, dataset.Sort{Expr: e, Text: t, Desc: o.desc})
	}
	if q.After != nil {
		if len(q.order) == 0 {
			dq.Key = q.After
		}
		after, first, floor := b.after(q, sort)
		for _, c := range after {
			dq.After(c)
		}
		dq.AfterValue, dq.AfterFloor = first, floor
	}
}

// filter adds the conditions of $filter and of a request by key to b's
// query: each operand of a $filter's outer and on its own, and those that
// compare a column with a literal as conditions on that column
// ([dataset.Query.On]).
func (b *sqlBuilder) filter(q *Query) {
	for i, c := range b.set.keyColumns() {
		if q.key != nil {
			b.q.Where(b.set.keyPart(b.alias, i, c) + " = " + b.param(q.key[i], "bigint"))
		}
	}
	if q.where == nil {
		return
	}
	var conjuncts func(e *expr)
	conjuncts = func(e *expr) {
		if e.kind == eAnd {
			conjuncts(e.args[0])
			conjuncts(e.args[1])
		} else if o, ok := b.on(e); ok {
			b.q.On(o)
		} else {
			b.q.Where(b.cond(e))
		}
	}
	conjuncts(q.where)
	seen := make(map[string]bool)
	for _, col := range b.needed(q.where) {
		if !seen[col] {
			seen[col] = true
			b.q.On(dataset.On{Column: col, Test: "IS NOT NULL"})
		}
	}
}

// on returns e as a condition on one column, when it compares a property
// with a literal by eq, gt, ge, lt or le as [sqlBuilder.cmp] writes it:
// the column, the operator and the literal's parameter.
func (b *sqlBuilder) on(e *expr) (dataset.On, bool) {
	if e.kind != eCmp {
		return dataset.On{}, false
	}
	l, r, name := e.args[0], e.args[1], e.name
	if l.kind == eLit {
		l, r, name = r, l, flip(name)
	}
	if name == "ne" || l.kind != eProp || r.kind != eLit || r.typ == tNull || l.typ == tBool || subMicro(r) {
		return dataset.On{}, false
	}
	p := b.set.props[l.prop]
	if _, normalized := b.set.def.Normalized[p.name]; p.col < 0 || p.kind == dataset.Timestamp || normalized {
		return dataset.On{}, false // cmp writes these otherwise
	}
	return dataset.On{Column: p.name, Test: sqlOps[name] + " " + b.value(r), Op: sqlOps[name], Value: r.val}, true
}

// needed returns the [dataset.EntitySet.Joined] columns that are not null
// wherever e is true (some maybe twice): e reads a property of their
// table, and is false or NULL where that property is null.
func (b *sqlBuilder) needed(e *expr) []string {
	joined := func(props []int) []string {
		var cols []string
		for _, i := range props {
			if c, ok := b.set.joined[i]; ok {
				cols = append(cols, c)
			}
		}
		return cols
	}
	switch e.kind {
	case eAnd:
		return append(b.needed(e.args[0]), b.needed(e.args[1])...)
	case eOr:
		r := b.needed(e.args[1])
		var both []string
		for _, c := range b.needed(e.args[0]) {
			if slices.Contains(r, c) {
				both = append(both, c)
			}
		}
		return both
	case eIn:
		for _, a := range e.args[1:] {
			if a.typ == tNull {
				return nil
			}
		}
		return joined(reads(e.args[0]))
	case eCmp:
		l, r := e.args[0], e.args[1]
		// ne matches null; eq between two non-literals is IS NOT
		// DISTINCT FROM, true for two nulls; a Boolean is compared
		// with IS.
		if e.name == "ne" || l.typ == tNull || r.typ == tNull || l.typ == tBool ||
			e.name == "eq" && l.kind != eLit && r.kind != eLit {
			return nil
		}
		return joined(append(reads(l), reads(r)...))
	case eFunc: // contains, startswith, endswith
		return joined(reads(e))
	}
	return nil
}

// reads returns the properties a scalar e reads when e is null wherever
// one of them is: every function [sqlBuilder.call] writes is.
func reads(e *expr) []int {
	switch e.kind {
	case eProp:
		return []int{e.prop}
	case eFunc:
		var out []int
		for _, a := range e.args {
			out = append(out, reads(a)...)
		}
		return out
	}
	return nil
}

// KeyOrder returns the ORDER BY items of the key's parts over alias.
func (s *EntitySet) KeyOrder(alias string) []string {
	cols := s.keyColumns()
	out := make([]string, len(cols))
	for i, c := range cols {
		out[i] = alias + "." + c
	}
	return out
}

// keyColumns are the typed view's columns of the key's parts.
func (s *EntitySet) keyColumns() []string {
	if len(s.def.KeyColumns) > 0 {
		return s.def.KeyColumns
	}
	return []string{s.def.Key}
}

// KeyText returns the expressions of the key's parts as base-10 text over
// alias, 0 for an absent part: what a row carries after its columns.
func (s *EntitySet) KeyText(alias string) []string {
	var out []string
	for i, c := range s.keyColumns() {
		out = append(out, s.keyPart(alias, i, c)+"::text")
	}
	return out
}

// keyPart is the i-th key part as a comparable integer: an absent process
// or task is 0.
func (s *EntitySet) keyPart(alias string, i int, col string) string {
	if i == 0 {
		return alias + "." + col
	}
	return "coalesce(" + alias + "." + col + ", 0)"
}

type sqlBuilder struct {
	set   *EntitySet
	alias string
	q     *dataset.Query // where the parameters are bound
	depth int            // of lambda operators around the expressions written
}

func (b *sqlBuilder) param(v any, cast string) string { return b.q.Param(v, cast) }

// column is property i's typed expression.
func (b *sqlBuilder) column(i int) string {
	p := b.set.props[i]
	if p.col < 0 { // the synthetic key, as text
		var parts []string
		for j, c := range b.set.keyColumns() {
			parts = append(parts, b.set.keyPart(b.alias, j, c)+"::text")
		}
		return "(" + strings.Join(parts, " || '-' || ") + ")"
	}
	return b.alias + "." + p.name
}

// sortExpr returns the ordering expression of property i and its text:
// for a personal column, null where its person is blocked.
func (b *sqlBuilder) sortExpr(i int) (string, string) {
	e := b.column(i)
	if p := b.set.props[i]; p.col >= 0 && b.set.def.Columns[p.col].Personal != dataset.NotPersonal {
		// A blocked person's value sorts as null, so that neither the
		// order nor a next link's position carries it.
		e = dataset.WithheldTyped(b.set.def, b.alias, p.name)
	}
	switch b.set.props[i].kind {
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

// sortParam binds a sort value of property i as read from a $skiptoken.
func (b *sqlBuilder) sortParam(i int, v string) string {
	switch b.set.props[i].kind {
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

// after returns the conditions selecting the rows after q.After in q's
// order: some leading sort values equal and the next one after, or all
// equal and the key greater. A bound on the first sort value comes first,
// so that an index on it can narrow the scan. It also returns
// [dataset.Query.AfterValue] and [dataset.Query.AfterFloor].
func (b *sqlBuilder) after(q *Query, sort []string) (_ []string, first, floor string) {
	var conds, alts, eqs []string
	for j, o := range q.order {
		v := q.afterSort[j]
		e := sort[j]
		var p string
		if v != nil {
			p = b.sortParam(o.prop, *v)
		}
		if j == 0 && v != nil {
			first = p
		}
		if j == 0 {
			switch {
			case v != nil && !o.desc:
				conds = append(conds, e+" >= "+p)
			case v != nil:
				conds = append(conds, "("+e+" <= "+p+" OR "+e+" IS NULL)")
			case o.desc:
				conds = append(conds, e+" IS NULL")
			}
		}
		var next string
		switch {
		case v == nil && !o.desc:
			next = e + " IS NOT NULL"
		case v == nil: // nulls last: nothing comes after null
		case !o.desc:
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
	cols := b.set.keyColumns()
	var left, right []string
	for i, c := range cols {
		left = append(left, b.set.keyPart(b.alias, i, c))
		right = append(right, b.param(q.After[i], "bigint"))
	}
	if len(q.order) == 0 {
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
	if len(q.order) == 1 && first != "" {
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
func (b *sqlBuilder) cond(e *expr) string {
	if s, ok := b.logical(e, b.cond); ok {
		return s
	}
	switch e.kind {
	case eIn:
		return b.in(e)
	case eCmp:
		return b.cmp(e)
	case eAny, eAll:
		return b.lambda(e)
	case eLit:
		if e.val.(bool) {
			return "TRUE"
		}
		return "FALSE"
	}
	return b.value(e)
}

// logical writes e when it is and, or or not, its operands of and and or
// written by side, and reports whether it was. not is always exact: not of
// null is null, never true.
func (b *sqlBuilder) logical(e *expr, side func(*expr) string) (string, bool) {
	switch e.kind {
	case eAnd:
		return "(" + side(e.args[0]) + " AND " + side(e.args[1]) + ")", true
	case eOr:
		return "(" + side(e.args[0]) + " OR " + side(e.args[1]) + ")", true
	case eNot:
		return "(NOT " + b.exact(e.args[0]) + ")", true
	}
	return "", false
}

// lambda writes any or all as EXISTS or NOT EXISTS over the target's
// typed view, aliased anew at each depth, its rows related by the
// navigation's column to this row's key: any is true where some related
// row makes the lambda expression true (any() where there is a related
// row at all); all is true where no related row makes it false or null,
// so on a row with no related rows. Neither is ever null.
func (b *sqlBuilder) lambda(e *expr) string {
	alias := "l" + strconv.Itoa(b.depth+1)
	inner := &sqlBuilder{set: e.target, alias: alias, q: b.q, depth: b.depth + 1}
	rel := alias + "." + e.nav.Column + " = " + b.alias + "." + b.set.keyColumns()[0]
	sub := "SELECT 1 FROM " + e.target.def.Typed + " " + alias + " WHERE " + rel
	if e.kind == eAny && len(e.args) == 0 {
		return "EXISTS (" + sub + ")"
	}
	// A condition on a related row's personal columns is never true of a
	// blocked person's row.
	cond := dataset.Unblocked(e.target.def, alias, inner.cond(e.args[0]))
	if e.kind == eAny {
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
func (b *sqlBuilder) exact(e *expr) string {
	if s, ok := b.logical(e, b.exact); ok {
		return s
	}
	switch e.kind {
	case eFunc:
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
func (b *sqlBuilder) cmp(e *expr) string {
	l, r := e.args[0], e.args[1]
	if l.kind == eLit && r.kind == eLit && l.typ == tDTO && r.typ == tDTO {
		// Two date-times, compared here at their own precision, which
		// PostgreSQL's microseconds may not hold.
		if compareInstants(l, r, e.name) {
			return "TRUE"
		}
		return "FALSE"
	}
	if l.kind == eLit {
		l, r = r, l
		e = &expr{kind: eCmp, name: flip(e.name), args: []*expr{l, r}}
	}
	if r.kind == eLit && r.typ == tDTO && subMicro(r) {
		// Date-times are stored to the microsecond: none equals a literal
		// with a finer fraction, and those after it are those after it
		// cut to the microsecond. Rounding it (as PostgreSQL does) would
		// find 12:53:36.471554 eq 12:53:36.4715544.
		floor := &expr{kind: eLit, typ: tDTO, val: r.val}
		switch e.name {
		case "eq":
			return "FALSE"
		case "ne":
			return "TRUE"
		case "gt", "ge":
			e = &expr{kind: eCmp, typ: tBool, name: "gt", args: []*expr{l, floor}}
		default: // lt, le
			e = &expr{kind: eCmp, typ: tBool, name: "le", args: []*expr{l, floor}}
		}
		r = floor
	}
	if l.typ == tBool {
		// Conditions compared as values: null eq false is false, null eq
		// null true.
		v := b.exact(l)
		if r.kind == eLit && r.typ == tNull {
			if e.name == "eq" {
				return "(" + v + " IS NULL)"
			}
			return "(" + v + " IS NOT NULL)"
		}
		if r.kind == eLit {
			word := map[bool]string{true: "TRUE", false: "FALSE"}[r.val.(bool)]
			if e.name == "eq" {
				return "(" + v + " IS " + word + ")"
			}
			return "(" + v + " IS NOT " + word + ")"
		}
		w := b.exact(r)
		if e.name == "eq" {
			return "(" + v + " IS NOT DISTINCT FROM " + w + ")"
		}
		return "(" + v + " IS DISTINCT FROM " + w + ")"
	}
	if r.kind == eLit && r.typ == tNull {
		if e.name == "eq" {
			return b.value(l) + " IS NULL"
		}
		return b.value(l) + " IS NOT NULL"
	}
	var lv, rv string
	if e.name == "eq" || e.name == "ne" || l.kind == eProp && b.set.props[l.prop].kind == dataset.Timestamp && r.kind == eLit {
		lv, rv = b.operands(l, r)
	} else {
		lv, rv = b.value(l), b.value(r)
	}
	switch {
	case e.name == "ne" && r.kind == eLit:
		return "(" + lv + " <> " + rv + " OR " + lv + " IS NULL)"
	case e.name == "ne":
		return lv + " IS DISTINCT FROM " + rv
	case e.name == "eq" && r.kind != eLit:
		return lv + " IS NOT DISTINCT FROM " + rv
	}
	return lv + " " + sqlOps[e.name] + " " + rv
}

// operands writes the two sides of a comparison. A date-time without an
// offset (a Timestamp column, UTC wall-clock time) compared with a literal
// meets the literal's UTC wall-clock time, so that an index on the column
// serves it; a normalized property ([dataset.EntitySet.Normalized]) meets the
// literal normalized.
func (b *sqlBuilder) operands(l, r *expr) (string, string) {
	if l.kind == eProp && r.kind == eLit && r.typ == tStr {
		if n, ok := b.set.def.Normalized[b.set.props[l.prop].name]; ok {
			return b.alias + "." + n[0], n[1] + "(" + b.param(r.val.(string), "text") + ")"
		}
	}
	if l.kind == eProp && b.set.props[l.prop].kind == dataset.Timestamp && r.kind == eLit {
		return b.column(l.prop), b.param(pgTimestamp(r.val.(time.Time), false), "timestamp")
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
func (b *sqlBuilder) in(e *expr) string {
	l := e.args[0]
	if l.typ == tBool || l.kind == eLit {
		// Conditions as values, or a literal, each compared as eq
		// compares them.
		var parts []string
		for _, a := range e.args[1:] {
			parts = append(parts, b.cmp(&expr{kind: eCmp, typ: tBool, name: "eq", args: []*expr{l, a}}))
		}
		return "(" + strings.Join(parts, " OR ") + ")"
	}
	var items []string
	lv, null := "", false
	for _, a := range e.args[1:] {
		if a.typ == tNull {
			null = true
			continue
		}
		if subMicro(a) {
			continue // equal to no stored value: see cmp
		}
		var rv string
		if l.kind == eProp || lv == "" {
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
func subMicro(e *expr) bool {
	return e.kind == eLit && e.typ == tDTO && e.pico != 0
}

// compareInstants reports whether l op r holds for two date-time
// literals, each at its own precision.
func compareInstants(l, r *expr, op string) bool {
	c := l.val.(time.Time).Compare(r.val.(time.Time))
	if c == 0 {
		c = cmpInt(l.pico, r.pico)
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

func cmpInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// value writes a scalar expression.
func (b *sqlBuilder) value(e *expr) string {
	switch e.kind {
	case eProp:
		c := b.column(e.prop)
		if b.set.props[e.prop].kind == dataset.Timestamp {
			return "(" + c + " AT TIME ZONE 'UTC')" // UTC wall-clock time, as the feed writes it
		}
		return c
	case eLit:
		switch v := e.val.(type) {
		case int64:
			return b.param(v, "bigint")
		case time.Time:
			return b.param(pgTimestamp(v, true), "timestamptz")
		case string:
			return b.param(v, map[edm]string{tDec: "numeric", tDate: "date", tStr: "text"}[e.typ])
		case bool:
			return b.cond(e)
		}
		return "NULL"
	case eFunc:
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
func (b *sqlBuilder) call(e *expr) string {
	a := e.args
	arg := func(i int) string { return b.value(a[i]) }
	switch e.name {
	case "contains":
		return "(strpos(" + arg(0) + ", " + arg(1) + ") > 0)"
	case "startswith":
		if a[1].kind == eLit {
			return "(" + arg(0) + " LIKE " + b.param(likeLiteral(a[1].val.(string))+"%", "text") + ")"
		}
		return "starts_with(" + arg(0) + ", " + arg(1) + ")"
	case "endswith":
		if a[1].kind == eLit {
			return "(" + arg(0) + " LIKE " + b.param("%"+likeLiteral(a[1].val.(string)), "text") + ")"
		}
		x, y := arg(0), arg(1)
		return "(right(" + x + ", char_length(" + y + ")) = " + y + ")"
	case foldFunction:
		// informe_fold (migration 00013): lower case through
		// informe_case, then the Latin letters' accents taken off.
		return "informe_fold(" + arg(0) + ")"
	case "tolower", "toupper":
		// Case mapped by Unicode's rules through informe_case (migration
		// 00009), whatever the database's collation; the result compares
		// and sorts in the database's collation again, as any text.
		f := map[string]string{"tolower": "lower", "toupper": "upper"}[e.name]
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
		s := "substr(" + arg(0) + ", " + b.param(min(a[1].val.(int64), maxTextChars-1)+1, "integer")
		if len(a) == 3 {
			s += ", " + b.param(min(a[2].val.(int64), maxTextChars), "integer")
		}
		return s + ")"
	case "year":
		// PostgreSQL numbers the years before Christ from -1 (1 BC);
		// OData's years are astronomical, 1 BC being 0.
		w := b.wall(a[0])
		return "(extract(year FROM " + w + ") + (extract(year FROM " + w + ") < 0)::int)::bigint"
	case "month", "day", "hour", "minute":
		return "extract(" + e.name + " FROM " + b.wall(a[0]) + ")::bigint"
	case "second":
		return "floor(extract(second FROM " + b.wall(a[0]) + "))::bigint"
	}
	panic("odata: function " + e.name + " has no SQL") // the parser admits only the functions above
}

// wall writes a date or date-time as UTC wall-clock time, as the feed
// writes it.
func (b *sqlBuilder) wall(e *expr) string {
	if e.kind == eProp && b.set.props[e.prop].kind != dataset.Timestamptz {
		return b.column(e.prop)
	}
	if e.typ == tDTO {
		return "(" + b.value(e) + " AT TIME ZONE 'UTC')"
	}
	return b.value(e)
}
