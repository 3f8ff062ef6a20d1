package odata

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/informe/informe/export"
	"github.com/informe/informe/internal/dataset"
	"github.com/informe/informe/internal/failure"
	"github.com/informe/informe/internal/httplist"
	"github.com/informe/informe/internal/secret"
)

// declared are the entity sets made by mustSet, by name: the targets of
// navigations.
var declared sync.Map

// target returns the entity set nav leads to; nil when none is declared.
func target(nav *dataset.Navigation) *EntitySet {
	if v, ok := declared.Load(nav.Target); ok {
		return v.(*EntitySet)
	}
	return nil
}

// navigation returns the set's navigation named name, or nil.
func (s *EntitySet) navigation(name string) *dataset.Navigation {
	for i := range s.def.Navigations {
		if s.def.Navigations[i].Name == name {
			return &s.def.Navigations[i]
		}
	}
	return nil
}

// Collections returns the set's collection navigation properties, which
// $filter's any and all range over, in their declared order.
func (s *EntitySet) Collections() []dataset.Navigation {
	var out []dataset.Navigation
	for _, n := range s.def.Navigations {
		if n.Many {
			out = append(out, n)
		}
	}
	return out
}

// Named returns the declared entity set called name ("Contracts"), or nil.
func Named(name string) *EntitySet {
	if v, ok := declared.Load(name); ok {
		return v.(*EntitySet)
	}
	return nil
}

// expansion is one item of $expand: a navigation and the target's
// properties to write, in order, the key first unless $select put it
// elsewhere.
type expansion struct {
	nav    *dataset.Navigation
	target *EntitySet
	props  []int  // indexes in target.props
	sel    []int  // the nested $select's properties; nil for all
	raw    string // the item as the client wrote it
}

// Expansion is what a store reads for one item of $expand: for each row,
// the related rows' Columns, ordered by the target's key, as one JSON
// array of arrays of text values (null for NULL), or null for none. The
// related rows are those of the target's views whose column Remote equals
// the row's column Local.
type Expansion struct {
	// Target is the related entity set.
	Target *EntitySet
	// Columns are the target's columns to read, in order.
	Columns []dataset.Column
	// Local is this set's column and Remote the target's column that
	// relate a row to its related rows (both in the sets' views).
	Local, Remote string
	// Order is the target's key column, the order of the related rows.
	Order string
}

// Expansions returns what the store reads for q's $expand, in its order:
// one value per row, after the row's columns and a synthetic key's parts,
// before its sort values.
func (q *Query) Expansions() []Expansion {
	out := make([]Expansion, len(q.expand))
	for i, e := range q.expand {
		x := Expansion{Target: e.target, Order: e.target.keyColumns()[0]}
		for _, p := range e.props {
			x.Columns = append(x.Columns, e.target.def.Columns[e.target.props[p].col])
		}
		if e.nav.Many {
			x.Local, x.Remote = q.set.keyColumns()[0], e.nav.Column
		} else {
			x.Local, x.Remote = e.nav.Column, e.target.keyColumns()[0]
		}
		out[i] = x
	}
	return out
}

// parseExpand parses $expand: navigation properties, comma-separated,
// each optionally with a nested $select in parentheses, one level:
// "Client($select=client_rut,client_region),Processes". What OData's
// grammar does not make is a 400; valid OData beyond that (any other
// nested option, a path, *, $ref, a nested $expand or $levels, $expand on
// a set without navigations) a 501; an unknown or repeated navigation a
// 400.
func parseExpand(raw string, set *EntitySet) ([]expansion, error) {
	items, err := expandSyntax(raw)
	if err != nil {
		return nil, err
	}
	if len(set.def.Navigations) == 0 {
		return nil, notImplemented("$expand", reasonUnsupportedExpand, "$expand is not supported on "+set.def.Name+
			", which has no navigation properties (the entities at their own grain have them: Contracts, Processes, Tasks, Clients, Services); "+supported)
	}
	var out []expansion
	for _, it := range items {
		name := it.name.text
		if name == "*" || strings.Contains(name, "/") {
			return nil, at(notImplemented("$expand", reasonUnsupportedExpand, "$expand "+secret.Quote(name)+" is not supported: name navigation properties of "+
				set.def.TypeName+" ("+navNames(set)+"), one level, each with an optional $select"), raw, it.name.off)
		}
		nav := set.navigation(name)
		if nav == nil {
			return nil, at(badRequest("$expand", reasonUnknownNav, "$expand: "+set.def.TypeName+" has no navigation property "+secret.Quote(name)+
				"; it has "+navNames(set)), raw, it.name.off)
		}
		for _, e := range out {
			if e.nav == nav {
				return nil, at(badRequest("$expand", reasonRepeated, "$expand: "+name+" is given more than once"), raw, it.name.off)
			}
		}
		t := target(nav)
		if t == nil {
			panic("odata: navigation " + nav.Name + " to an undeclared set " + nav.Target) // the declarations are constants
		}
		e := expansion{nav: nav, target: t, raw: it.text}
		seen := false
		for _, o := range it.opts {
			if !strings.EqualFold(o.name, "$select") {
				return nil, at(notImplemented("$expand", reasonUnsupportedExpand, "$expand: "+secret.Quote(o.name)+" inside "+name+"(...) is not supported: "+
					"only $select is, one level deep"), raw, o.off)
			}
			if seen {
				return nil, at(badRequest("$expand", reasonRepeated, "$expand: $select is given more than once inside "+name+"(...)"), raw, o.off)
			}
			seen = true
			var err error
			if e.sel, err = parseSelect(o.value, t); err != nil {
				// The nested $select's error, placed in $expand.
				fe := err.(*failure.Error)
				pos := 0
				if fe.Position > 0 {
					pos = position(raw, o.valueOff) - 1 + fe.Position
				}
				return nil, &failure.Error{Code: fe.Code, Target: "$expand", Reason: fe.Reason, Position: pos,
					Message: "$expand: " + name + ": " + fe.Message}
			}
		}
		e.props = e.sel
		if e.props == nil {
			e.props = make([]int, len(t.props))
			for i := range e.props {
				e.props[i] = i
			}
		} else if !containsInt(e.props, t.key) {
			e.props = append([]int{t.key}, e.props...)
		}
		out = append(out, e)
	}
	return out, nil
}

// expandItem is one item of $expand as written: the path it names and
// the options in its parentheses.
type expandItem struct {
	text string // the whole item
	name item   // the path: a navigation property, *, Nav/$ref, ...
	opts []expandOption
}

// expandOption is one option in an item's parentheses: name=value.
type expandOption struct {
	name, value   string
	off, valueOff int // byte offsets in $expand of the name and the value
}

// expandOptions are the options OData's grammar allows inside an item of
// $expand, in lower case, with or without their '$' (OData 4.01).
var expandOptions = map[string]bool{
	"select": true, "expand": true, "filter": true, "orderby": true, "top": true, "skip": true,
	"count": true, "search": true, "levels": true, "compute": true, "apply": true,
}

// expandSyntax splits $expand into its items, or fails with a 400 at the
// first place where it is not made as OData's grammar makes it: an empty
// item, a name that is no path of identifiers, unbalanced parentheses or
// quotes, an option in parentheses that is no option of $expand.
func expandSyntax(raw string) ([]expandItem, error) {
	syntax := func(off int, msg string) error {
		return at(badRequest("$expand", reasonSyntax, "$expand: "+msg+" at position "+strconv.Itoa(position(raw, off))+
			"; list navigation properties separated by commas, each with an optional ($select=...)"), raw, off)
	}
	if httplist.TrimOWS(raw) == "" {
		return nil, badRequest("$expand", reasonEmpty, "$expand is empty; list navigation properties separated by commas")
	}
	parts, bad := splitTop(raw, 0, ',')
	if bad >= 0 {
		return nil, syntax(bad, "unbalanced parentheses or quotes")
	}
	var items []expandItem
	for _, part := range parts {
		it := expandItem{text: part.text, name: part}
		if it.name.text == "" {
			return nil, syntax(part.off, "empty item")
		}
		opts := ""
		if i := strings.IndexByte(part.text, '('); i >= 0 {
			if j := closing(part.text, i); j != len(part.text)-1 {
				return nil, syntax(part.off+j+1, "expected the end of the item after its closing parenthesis")
			}
			it.name = trimItem(part.text[:i], part.off)
			opts = part.text[i+1 : len(part.text)-1]
			if httplist.TrimOWS(opts) != "" {
				ops, _ := splitTop(opts, part.off+i+1, ';') // balanced: within the item's
				for _, o := range ops {
					k, v, ok := strings.Cut(o.text, "=")
					name := strings.ToLower(strings.TrimPrefix(httplist.TrimOWS(k), "$"))
					if !ok || !expandOptions[name] && !strings.HasPrefix(k, "@") {
						return nil, syntax(o.off, "expected an option such as $select=... inside the parentheses")
					}
					it.opts = append(it.opts, expandOption{name: httplist.TrimOWS(k), value: v, off: o.off, valueOff: o.off + len(k) + 1})
				}
			}
		}
		if !expandPath(it.name.text) {
			return nil, syntax(it.name.off, "expected a navigation property")
		}
		items = append(items, it)
	}
	return items, nil
}

// closing returns the index in s of the parenthesis that closes the one
// at open, outside quoted strings; s is balanced (see [splitTop]).
func closing(s string, open int) int {
	depth, quoted := 0, false
	for i := open; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\'':
			quoted = !quoted
		case quoted:
		case c == '(':
			depth++
		case c == ')':
			if depth--; depth == 0 {
				return i
			}
		}
	}
	return len(s) - 1
}

// expandPath reports whether s is a path OData's $expand may name: *, or
// identifiers (qualified or not) separated by '/', the last of which may
// be *, $ref, $count or $value.
func expandPath(s string) bool {
	segs := strings.Split(s, "/")
	for i, seg := range segs {
		last := i == len(segs)-1
		switch {
		case seg == "*" && (last || i == len(segs)-2 && segs[i+1] == "$ref"):
		case (seg == "$ref" || seg == "$count" || seg == "$value") && last && i > 0:
		case seg == "$value" && len(segs) == 1:
		case isPath(seg):
		default:
			return false
		}
	}
	return true
}

// splitTop splits s, found at byte offset off of its option, at sep
// outside parentheses and quoted strings, each item without the
// whitespace around it. bad is the byte offset where parentheses or quotes
// fail to balance, or -1.
func splitTop(s string, off int, sep byte) (items []item, bad int) {
	depth, start, quoted, open := 0, 0, false, -1
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\'':
			if !quoted {
				open = i
			}
			quoted = !quoted
		case quoted:
		case c == '(':
			if depth == 0 {
				open = i
			}
			depth++
		case c == ')':
			if depth--; depth < 0 {
				return nil, off + i
			}
		case c == sep && depth == 0:
			items = append(items, trimItem(s[start:i], off+start))
			start = i + 1
		}
	}
	if depth != 0 || quoted {
		return nil, off + open
	}
	return append(items, trimItem(s[start:], off+start)), -1
}

// navNames lists set's navigation properties, for messages.
func navNames(set *EntitySet) string {
	names := make([]string, len(set.def.Navigations))
	for i, n := range set.def.Navigations {
		names[i] = n.Name
	}
	return strings.Join(names, ", ")
}

// contextItem returns e as the context URL lists it: the navigation, then
// its nested select list in parentheses, empty for all properties.
func (e *expansion) contextItem() string {
	names := make([]string, len(e.sel))
	for i, p := range e.sel {
		names[i] = e.target.props[p].name
	}
	return e.nav.Name + "(" + strings.Join(names, ",") + ")"
}

// feedExpansion is an expansion as a [Feed] writes it.
type feedExpansion struct {
	name []byte // `,"Client":`
	many bool
	out  []outProp // the target's properties, col indexing the related row
	rows [][]*string
}

// newFeedExpansion returns e ready for a Feed.
func newFeedExpansion(e *expansion) feedExpansion {
	fe := feedExpansion{name: append(append([]byte{','}, export.AppendJSONString(nil, []byte(e.nav.Name))...), ':'), many: e.nav.Many}
	for i, p := range e.props {
		tp := e.target.props[p]
		fe.out = append(fe.out, outProp{
			name:      append(export.AppendJSONString(nil, []byte(tp.name)), ':'),
			col:       i,
			kind:      tp.kind,
			nullable:  tp.nullable,
			emptyNull: tp.nullable && e.target.def.EmptyIsNull,
		})
	}
	return fe
}

// appendExpansion appends the related entities of one row, v being the
// JSON text the store read ([Expansion]): an object or null to-one, an
// array to-many.
func (f *Feed) appendExpansion(b []byte, fe *feedExpansion, v []byte) ([]byte, error) {
	b = append(b, fe.name...)
	fe.rows = fe.rows[:0]
	if v != nil {
		if err := json.Unmarshal(v, &fe.rows); err != nil {
			return b, fmt.Errorf("odata: expansion %s: %w", fe.name, err)
		}
	}
	if !fe.many {
		if len(fe.rows) == 0 {
			return append(b, "null"...), nil
		}
		if len(fe.rows) > 1 {
			return b, fmt.Errorf("odata: expansion %s: %d related rows, want at most 1", fe.name, len(fe.rows))
		}
	} else {
		b = append(b, '[')
	}
	for i, r := range fe.rows {
		if i > 0 {
			b = append(b, ',')
		}
		if len(r) != len(fe.out) {
			return b, fmt.Errorf("odata: expansion %s: a related row has %d values, want %d", fe.name, len(r), len(fe.out))
		}
		b = append(b, '{')
		for j := range fe.out {
			p := &fe.out[j]
			if j > 0 {
				b = append(b, ',')
			}
			b = append(b, p.name...)
			var val []byte
			if r[j] != nil {
				val = []byte(*r[j])
			}
			var ok bool
			if b, ok = f.appendValue(b, p, val); !ok {
				return b, valueError(p, val)
			}
		}
		b = append(b, '}')
	}
	if fe.many {
		b = append(b, ']')
	}
	return b, nil
}
