package odata

import "github.com/informe/informe/internal/dataset"

// Compile adds q's $filter, request by key, $orderby and $skiptoken
// position to dq, typed: $filter as an [dataset.Expr] over the entity
// set's typed view (see [dataset.EntitySet.KeyColumns]), which the store
// writes as SQL with every literal a bound parameter. The position is
// dq.Key under the set's own order, and dq.Resume in any order. $skip is
// the caller's: dq.Skip.
func (q *Query) Compile(dq *dataset.Query) {
	if q.key != nil {
		dq.ByKey = q.key
	}
	if q.where != nil {
		dq.Filters = append(dq.Filters, q.set.lower(q.where))
	}
	for _, o := range q.order {
		dq.Sort = append(dq.Sort, dataset.Sort{Property: q.set.props[o.prop].name, Desc: o.desc})
	}
	if q.After != nil {
		if len(q.order) == 0 {
			dq.Key = q.After
		}
		dq.Resume = &dataset.Resume{Values: q.afterSort, Key: q.After}
	}
}

var (
	loweredOps = [...]dataset.Op{eProp: dataset.Property, eLit: dataset.Literal, eFunc: dataset.Call, eCmp: dataset.Compare, eIn: dataset.In, eAnd: dataset.And, eOr: dataset.Or, eNot: dataset.Not, eAny: dataset.Some, eAll: dataset.Every}
)

// lower returns e, parsed over s's properties, as the typed expression
// the store writes.
func (s *EntitySet) lower(e *expr) *dataset.Expr {
	x := &dataset.Expr{Op: loweredOps[e.kind], Type: e.typ, Name: e.name, Value: e.val, Pico: e.pico}
	switch e.kind {
	case eProp:
		p := s.props[e.prop]
		x.Column, x.Key, x.Kind = p.name, p.col < 0, p.kind
	case eFunc:
		if e.name == foldFunction {
			x.Name = dataset.Fold
		}
	case eAny, eAll:
		x.Nav, x.Target, s = e.nav, &e.target.def, e.target
	}
	for _, a := range e.args {
		x.Args = append(x.Args, s.lower(a))
	}
	return x
}
