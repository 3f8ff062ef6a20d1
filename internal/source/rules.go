package source

import (
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"

	"github.com/informe/informe/internal/dataset"
	"github.com/informe/informe/internal/failure"
	"github.com/informe/informe/internal/odata"
	"github.com/informe/informe/internal/param"
	"github.com/informe/informe/report"
)

// Restrict returns the sources of all that a token with rules r may read,
// each as the token sees it: where a token's rules apply, the one
// function every door takes its datasets from. A source keeps only the
// columns r lets the token read (a hidden column is then missing on every
// door, by construction: in the rows, in columns= and $select, $filter
// and $orderby, $metadata, OpenAPI), its masked columns marked
// ([dataset.Column.Mask], written masked as rows are read, named in
// neither $filter nor $orderby), r's row condition ANDed with every read,
// and r's most rows per response ([Source.MaxRows]). A dataset is left
// out when the token sees none of its columns, or not its OData key or
// order, or when the row condition names a column it lacks: a condition
// that cannot apply to a dataset must not leave it unfiltered. Its OData
// entity set has no navigations: $expand, any and all are refused as for
// an unknown navigation, since the related rows would escape the
// condition. An empty r returns all itself.
func Restrict(all []*Source, r *dataset.Rules) []*Source {
	if r.Empty() {
		return all
	}
	var out []*Source
	for _, s := range all {
		if rs := s.restrict(r); rs != nil {
			out = append(out, rs)
		}
	}
	return out
}

// MaxRows returns the most rows one response of s may carry, 0 for no
// limit: a whole export of more is refused before its first byte, and a
// page never carries more.
func (s *Source) MaxRows() int64 { return s.maxRows }

// restrict returns s as a token with rules r sees it, nil when it may not
// read it.
func (s *Source) restrict(r *dataset.Rules) *Source {
	var visible []dataset.Column
	plain := map[string]bool{} // visible and unmasked: may be filtered on
	for _, c := range s.Columns {
		if !r.Reads(c) {
			continue
		}
		if r.Masks(c) {
			c.Mask, c.Nullable = dataset.MaskOf(c), true
		} else {
			plain[c.Name] = true
		}
		visible = append(visible, c)
	}
	if len(visible) == 0 {
		return nil
	}
	var rows *odata.Query
	if r.Rows != "" {
		q, err := odata.ParseRead(url.Values{"$filter": {r.Rows}}, s.Set)
		if err != nil {
			return nil
		}
		rows = q
	}
	d := *s.Dataset
	d.Columns = visible
	d.OData.Navigations = nil // as its set's, below: what describes d (OpenAPI) says so too
	d.Params = slices.DeleteFunc(slices.Clone(d.Params), func(p string) bool { return !paramAllowed(p, plain) })
	d.PageParams = slices.DeleteFunc(slices.Clone(d.PageParams), func(p string) bool { return !paramAllowed(p, plain) })
	def := d.EntitySet()
	keep := func(names []string) []string {
		return slices.DeleteFunc(slices.Clone(names), func(n string) bool { return !plain[n] })
	}
	def.Filters, def.SortIndexed, def.Navigations = keep(def.Filters), keep(def.SortIndexed), nil
	def.Joined = prune(def.Joined, func(n string) bool {
		return plain[n] || slices.ContainsFunc(visible, func(c dataset.Column) bool { return c.Name == n })
	})
	def.Normalized = prune(def.Normalized, func(n string) bool { return plain[n] })
	def.Literals = prune(def.Literals, func(n string) bool { return plain[n] })
	set, err := odata.NewEntitySet(def)
	if err != nil {
		return nil // its key or order is hidden
	}
	parse := s.parse
	return &Source{
		Dataset: &d, Set: set, rows: rows, maxRows: r.MaxRows, restricted: true,
		parse: func(v url.Values) (dataset.Query, error) {
			for _, p := range s.Params {
				if _, given := v[p]; given && !paramAllowed(p, plain) {
					return dataset.Query{}, &failure.Error{Code: failure.Invalid, Target: p, Reason: "unknown_parameter",
						Message: "unknown query parameter " + p + "; this path accepts " + strings.Join(d.Params, ", ")}
				}
			}
			q, err := parse(v)
			if err != nil {
				return q, err
			}
			// The declaration's columns= knows the hidden ones: read it
			// again over the visible, with the same message for a hidden
			// column as for a missing one.
			q.Columns, err = param.Columns(v, visible)
			return q, err
		},
	}
}

// paramFilters are the spec's parameters that filter on a column, and
// the column: a token may give one only when it sees that column
// unmasked.
var paramFilters = map[string]string{"rut": "client_rut", "contract_id": "contract_id", "code_contract": "code_contract", "client_id": "client_id"}

// paramAllowed reports whether parameter p filters only on columns of
// plain.
func paramAllowed(p string, plain map[string]bool) bool {
	c, ok := paramFilters[p]
	return !ok || plain[c]
}

// prune returns the entries of m whose keys keep, and whose values, for
// a list of names, keep too.
func prune[V any](m map[string]V, keep func(string) bool) map[string]V {
	if m == nil {
		return nil
	}
	out := make(map[string]V, len(m))
	for k, v := range m {
		if !keep(k) {
			continue
		}
		if names, ok := any(v).([]string); ok {
			names = slices.DeleteFunc(slices.Clone(names), func(n string) bool { return !keep(n) })
			if len(names) == 0 {
				continue
			}
			v = any(names).(V)
		}
		out[k] = v
	}
	return out
}

// CheckRules returns an error naming what is wrong with r: a column of
// Columns or Mask that no dataset has, a masked column that holds no
// personal data, both Columns and NoPersonal, a row condition that does
// not parse on any dataset (with the parser's message for the general
// report), a negative MaxRows, or rules that leave the token no dataset
// to read. Each is a failure.Invalid.
func CheckRules(r *dataset.Rules) error {
	if r.Empty() {
		return nil
	}
	bad := func(target, format string, args ...any) error {
		return &failure.Error{Code: failure.Invalid, Target: target, Reason: "bad_rule", Message: fmt.Sprintf(format, args...)}
	}
	find := func(name string) (dataset.Column, bool) {
		for _, d := range dataset.All {
			if i := slices.IndexFunc(d.Columns, func(c dataset.Column) bool { return c.Name == name }); i >= 0 {
				return d.Columns[i], true
			}
		}
		return dataset.Column{}, false
	}
	if r.Columns != nil && r.NoPersonal {
		return bad("columns", "give the columns or no personal data, not both")
	}
	for _, n := range r.Columns {
		if _, ok := find(n); !ok {
			return bad("columns", "columns: no dataset has a column %q (the names are in docs/columns.md)", n)
		}
	}
	for _, n := range r.Mask {
		c, ok := find(n)
		if !ok {
			return bad("mask", "mask: no dataset has a column %q (the names are in docs/columns.md)", n)
		}
		if c.Personal == dataset.NotPersonal {
			return bad("mask", "mask: column %q holds no personal data: there is nothing to mask", n)
		}
	}
	if r.MaxRows < 0 {
		return bad("max-rows", "max rows must be a whole number, at least 1")
	}
	all := All(Report(report.Counting(0)))
	if r.Rows != "" {
		var first error
		parses := false
		for _, s := range all {
			_, err := odata.ParseRead(url.Values{"$filter": {r.Rows}}, s.Set)
			if err == nil {
				parses = true
				break
			}
			if first == nil {
				first = err
			}
		}
		if !parses {
			msg := first.Error()
			var f *failure.Error
			if errors.As(first, &f) {
				msg = f.Message
			}
			return bad("rows", "rows: the condition applies to no dataset: %s", msg)
		}
	}
	if len(Restrict(all, r)) == 0 {
		return bad("columns", "these rules leave the token no dataset to read (a dataset is served when the token sees some of its columns, its key and order columns, and every column the row condition names)")
	}
	return nil
}

// As returns src as a token with scopes and rules reads it (see
// [Restrict]): a failure.Forbidden when its scopes lack src's, or its
// rules leave src out. What informe export --token-name reads, and any
// reader that acts for a token outside HTTP.
func As(src *Source, scopes []dataset.Scope, r *dataset.Rules) (*Source, error) {
	if !slices.Contains(scopes, src.Scope) {
		return nil, failure.Errorf(failure.Forbidden, "this token lacks the %s scope", src.Scope)
	}
	if r.Empty() {
		return src, nil
	}
	if rs := src.restrict(r); rs != nil {
		return rs, nil
	}
	return nil, &failure.Error{Code: failure.Forbidden, Reason: "dataset_not_allowed",
		Message: "this token's rules do not let it read " + src.Name}
}

// MaskGaps returns, for rules that mask some columns, each column that
// holds the same kind of value of the same person as a masked column of
// its dataset (the client's RUT as the spec's rut_client_contract and as
// client_rut, say) and that the token reads as it is: a mask that the
// column beside it gives away. Each is said in a sentence that names
// columns and datasets, never a value.
func MaskGaps(r *dataset.Rules) []string {
	if r == nil || len(r.Mask) == 0 {
		return nil
	}
	var gaps []string
	for _, d := range dataset.All {
		for _, c := range d.Columns {
			if !r.Masks(c) {
				continue
			}
			for _, o := range d.Columns {
				if o.Name == c.Name || o.Personal != c.Personal || dataset.MaskOf(o) != dataset.MaskOf(c) || r.Masks(o) || !r.Reads(o) {
					continue
				}
				gap := fmt.Sprintf("%s: %s holds the %s's %s as %s does, and is not masked", d.Name, o.Name, c.Personal, dataset.MaskOf(c), c.Name)
				if !slices.Contains(gaps, gap) {
					gaps = append(gaps, gap)
				}
			}
		}
	}
	return gaps
}
