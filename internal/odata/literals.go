package odata

import (
	"errors"

	"github.com/informe/informe/internal/failure"
)

// checkLiterals returns the 400 of the first string literal that e compares
// by eq, ne or in with a property whose literals the set checks
// ([EntitySetDef.Literals]), or nil. A malformed RUT then says so, rather
// than matching nothing in silence.
func checkLiterals(e *expr, set *EntitySet, src string) error {
	if e == nil || len(set.def.Literals) == 0 {
		return nil
	}
	check := func(p, lit *expr) error {
		if p.kind != eProp || lit.kind != eLit {
			return nil
		}
		s, ok := lit.val.(string)
		name := set.props[p.prop].name
		f := set.def.Literals[name]
		if !ok || f == nil {
			return nil
		}
		if err := f(s); err != nil {
			reason, msg := reasonBadLiteral, err.Error()
			var fe *failure.Error
			if errors.As(err, &fe) {
				reason, msg = fe.Reason, fe.Message
			}
			return at(badRequest("$filter", reason, name+": "+msg), src, lit.pos)
		}
		return nil
	}
	switch {
	case e.kind == eCmp && (e.name == "eq" || e.name == "ne"):
		if err := check(e.args[0], e.args[1]); err != nil {
			return err
		}
		return check(e.args[1], e.args[0])
	case e.kind == eIn:
		for _, lit := range e.args[1:] {
			if err := check(e.args[0], lit); err != nil {
				return err
			}
		}
		return nil
	}
	for _, a := range e.args {
		if err := checkLiterals(a, set, src); err != nil {
			return err
		}
	}
	return nil
}
