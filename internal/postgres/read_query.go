package postgres

import (
	"strconv"
	"strings"

	"github.com/informe/informe/internal/dataset"
)

// query is a [dataset.Query] as the store reads it: its typed conditions,
// order and position written as SQL over the dataset's typed view aliased
// t (see compile), with their parameters.
type query struct {
	dataset.Query
	sorts []sortSQL // Sort, written
	// bound says an index gives the order of Sort[0]: the page's first
	// sort values are found through it first (see Store.Open).
	// afterValue, when the rows start after a position whose first sort
	// value is not null, is the parameter holding it; afterFloor a
	// condition on the key that the rows sharing that value meet.
	bound                  bool
	afterValue, afterFloor string
	where                  []string // conditions on the typed view, aliased t
	on                     []On     // each condition of where on one column, Column "" when it is not
	more                   bool     // where holds more than the equalities of eq
	after                  []string // the position's conditions, after where
	// withheld says the related rows of Expand are read with the
	// personal values of withheld persons NULL (see [Withheld])
	withheld bool
	// wide says the page's rows span several values of its first sort
	// value (see bounded): reading them is sorting them
	wide bool
	// split, for a wide page of a few sort values (see bounded), holds
	// each value and how many of the page's rows have it, in the page's
	// order; splitArgs is how many of args its conditions use (those
	// before the bound's).
	split      []splitValue
	splitArgs  int
	splitFloor bool // the first value is the position's: from AfterFloor
	args       []any
	nWhere     int // args of the conditions, before the position's
}

// splitValue is one of the first sort values of a wide page, and its rows
// in the page.
type splitValue struct {
	value any
	rows  int64
}

// keyText returns the expressions of the key's parts as base-10 text over
// alias, 0 for an absent (NULL) part: what a row carries after its columns
// when [dataset.Query.Position] asks for it; none when the key is a column.
func keyText(d *dataset.Dataset, alias string) []string {
	if d.KeyColumn != "" {
		return nil
	}
	out := make([]string, len(d.Keys))
	for i, k := range d.Keys {
		out[i] = keyPart(alias, i, k) + "::text"
	}
	return out
}

// related returns the expressions, over the text view's row aliased r,
// of q's expansions: read from each target's text view, with the personal
// values of withheld persons written NULL when withheld says so (see
// [Withheld]).
func (q *query) related(withheld bool) []string {
	out := make([]string, len(q.Expand))
	for i, x := range q.Expand {
		cols := make([]string, len(x.Columns))
		for j, c := range x.Columns {
			if withheld {
				cols[j] = WithheldText(x.Target, "x", c)
			} else {
				cols[j] = "x." + ident(c.Name)
			}
		}
		out[i] = "(SELECT json_agg(ARRAY[" + strings.Join(cols, ", ") + "]::text[] ORDER BY x." + x.Order +
			") FROM " + ident(x.Target.Text) + " x WHERE x." + x.Remote + " = r." + x.Local + ")"
	}
	return out
}

// param binds v, cast to the SQL type cast, and returns its placeholder.
func (q *query) param(v any, cast string) string {
	q.args = append(q.args, v)
	return "$" + strconv.Itoa(len(q.args)) + "::" + cast
}

// On is a condition on one column of the typed view: the column, then
// what follows it ("= $1::text", "IS NOT NULL"), which reads no other
// column, only operators and parameters. A comparison with one value also
// says which (Op "=", ">", ">=", "<" or "<=", and the value as bound: for
// a date, its text "2006-01-02"). A [dataset.KeyTable] holding the column can
// test it too.
type On struct {
	Column, Test string
	Op           string
	Value        any
}

func (q *query) addWhere(cond string, o On) {
	if len(q.after) > 0 {
		panic("dataset: a condition after the position") // the doors' order
	}
	q.where = append(q.where, cond)
	q.on = append(q.on, o)
	q.more = q.more || len(q.where) > len(q.Equalities())
	q.nWhere = len(q.args)
}

// columns returns the fields q reads of d.
func (q *query) columns(d *dataset.Dataset) []dataset.Column {
	if q.Columns == nil {
		return d.Columns
	}
	return q.Columns
}

// Conditions returns q's conditions on the typed view of d aliased t,
// written, without the position's, joined by AND ("" for none), and their
// arguments.
func Conditions(d *dataset.Dataset, dq dataset.Query) (string, []any) {
	q := compile(d, dq)
	return q.conditions()
}

// Plain reports whether q asks for rows in the dataset's own order,
// filtered by nothing but equalities: what [dataset.ReportReading] reads.
func (q *query) Plain() bool { return q.FilterPlain() && len(q.Sort) == 0 && len(q.Expand) == 0 }

// FilterPlain reports whether q's conditions are nothing but equalities,
// whatever its order, and none was added to withhold persons: what
// [dataset.ReportReading] counts.
func (q *query) FilterPlain() bool { return !q.more && q.Query.FilterPlain() }

// Filtered reports whether any condition narrows the rows.
func (q *query) Filtered() bool { return q.more || q.Query.Filtered() }

func (q *query) conditions() (string, []any) {
	return strings.Join(q.where, " AND "), q.args[:q.nWhere:q.nWhere]
}
