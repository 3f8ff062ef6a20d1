package odata

import (
	"strconv"
	"strings"

	"github.com/informe/informe/export"
	"github.com/informe/informe/internal/httplist"
)

// maxFilterDepth bounds the nesting of parentheses in $filter, so that a
// long run of '(' cannot make the parser recurse without end.
const maxFilterDepth = 32

type tokenKind uint8

const (
	tokEOF    tokenKind = iota
	tokIdent            // a name or keyword: contract_id, eq, and, null, Namespace.Type/prop, $it
	tokNumber           // something that starts like a number: 42, -1, 1.5, 2024-03-05
	tokString           // a string literal, unquoted and unescaped
	tokLParen
	tokRParen
	tokAlias // @p1
	tokOther // any other character
)

type token struct {
	kind tokenKind
	text string // the literal's value for tokString, else the source text
	pos  int    // byte offset in the source
	end  int    // byte offset just past the token
}

// filterParser parses the subset of the $filter grammar informe supports.
type filterParser struct {
	src string
	set *EntitySet
	tok token
	err *Error
}

// operand is one side of a comparison: a property or a literal.
type operand struct {
	prop int   // index in set.props; -1 for a literal
	lit  token // the literal, when prop is -1
}

// parseFilter parses a $filter value into equalities on set's filter
// properties. See [Parse] for what it accepts.
func parseFilter(raw string, set *EntitySet) ([]Eq, error) {
	if httplist.TrimOWS(raw) == "" {
		return nil, badRequest("$filter", "$filter is empty; "+set.filterHelp())
	}
	p := &filterParser{src: raw, set: set}
	p.next()
	var eqs []Eq
	p.and(&eqs, 0)
	if p.err == nil && p.tok.kind != tokEOF {
		p.unexpected("and or the end of the expression")
	}
	if p.err != nil {
		return nil, p.err
	}
	return eqs, nil
}

// filterHelp says what $filter supports on s.
func (s *EntitySet) filterHelp() string {
	var names []string
	for _, p := range s.props {
		if p.filter {
			names = append(names, p.name)
		}
	}
	switch len(names) {
	case 0:
		return s.def.Name + " supports no $filter"
	case 1:
		return "$filter supports eq on " + names[0] + " (integers bare, strings in single quotes)"
	}
	return "$filter supports eq on " + strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1] +
		", combined with and (integers bare, strings in single quotes)"
}

func (p *filterParser) fail(status func(string, string) *Error, msg string) {
	if p.err == nil {
		p.err = status("$filter", "$filter: "+msg)
	}
}

func (p *filterParser) syntax(msg string) {
	p.fail(badRequest, msg+" at position "+strconv.Itoa(p.tok.pos+1)+"; "+p.set.filterHelp())
}

func (p *filterParser) unsupported(msg string) {
	p.fail(notImplemented, msg+"; "+p.set.filterHelp())
}

// unexpected reports the current token where something else was expected.
func (p *filterParser) unexpected(expected string) {
	if p.tok.kind == tokEOF {
		p.syntax("expected " + expected + ", found the end")
		return
	}
	if p.tok.kind == tokIdent {
		switch w := strings.ToLower(p.tok.text); w {
		case "or":
			p.unsupported("operator or is not supported")
			return
		case "eq", "ne", "gt", "ge", "lt", "le", "has", "in", "add", "sub", "mul", "div", "divby", "mod":
			p.unsupported("operator " + w + " is not supported here")
			return
		}
	}
	p.syntax("expected " + expected + ", found " + strconv.Quote(p.src[p.tok.pos:p.tok.end]))
}

// and parses comparisons joined by "and", appending them to eqs.
func (p *filterParser) and(eqs *[]Eq, depth int) {
	for p.err == nil {
		p.term(eqs, depth)
		if p.err != nil || !p.isWord("and") {
			return
		}
		p.next()
	}
}

// term parses a parenthesized expression or a comparison.
func (p *filterParser) term(eqs *[]Eq, depth int) {
	if p.tok.kind == tokLParen {
		if depth >= maxFilterDepth {
			p.syntax("parentheses nested too deeply")
			return
		}
		p.next()
		p.and(eqs, depth+1)
		if p.err != nil {
			return
		}
		if p.tok.kind != tokRParen {
			p.unexpected("')'")
			return
		}
		p.next()
		return
	}
	if p.isWord("not") {
		p.unsupported("operator not is not supported")
		return
	}
	p.comparison(eqs)
}

// comparison parses "operand eq operand".
func (p *filterParser) comparison(eqs *[]Eq) {
	left, ok := p.operand()
	if !ok {
		return
	}
	if p.tok.kind != tokIdent {
		p.unexpected("an operator such as eq")
		return
	}
	switch op := strings.ToLower(p.tok.text); op {
	case "eq":
	case "ne", "gt", "ge", "lt", "le", "has", "in":
		p.unsupported("operator " + op + " is not supported")
		return
	case "add", "sub", "mul", "div", "divby", "mod":
		p.unsupported("arithmetic (" + op + ") is not supported")
		return
	case "and", "or":
		p.syntax("a property alone is not a condition: compare it with eq")
		return
	default:
		p.unexpected("an operator such as eq")
		return
	}
	p.next()
	right, ok := p.operand()
	if !ok {
		return
	}
	switch {
	case left.prop >= 0 && right.prop >= 0:
		p.unsupported("comparing two properties is not supported")
		return
	case left.prop < 0 && right.prop < 0:
		p.unsupported("comparing two literals is not supported")
		return
	case left.prop < 0:
		left, right = right, left
	}
	eq, ok := p.typed(left.prop, right.lit)
	if !ok {
		return
	}
	for _, e := range *eqs {
		if e.Property == eq.Property {
			if e.Text != eq.Text {
				p.unsupported("comparing " + eq.Property + " with two different values is not supported")
			}
			return
		}
	}
	*eqs = append(*eqs, eq)
}

// operand parses a property or a literal. ok is false after an error.
func (p *filterParser) operand() (operand, bool) {
	t := p.tok
	switch t.kind {
	case tokString, tokNumber:
		p.next()
		return operand{prop: -1, lit: t}, true
	case tokAlias:
		p.unsupported("parameter aliases (" + t.text + ") are not supported")
		return operand{}, false
	case tokIdent:
	case tokOther:
		if t.text == "-" {
			p.unsupported("negation is not supported")
			return operand{}, false
		}
		p.unexpected("a property or a literal")
		return operand{}, false
	default:
		p.unexpected("a property or a literal")
		return operand{}, false
	}
	// An identifier: a keyword literal, a function, a path or a property.
	switch {
	case strings.HasPrefix(t.text, "$"):
		p.unsupported(t.text + " is not supported")
		return operand{}, false
	case strings.ContainsRune(t.text, '/'):
		p.unsupported("paths and lambda operators (" + t.text + ") are not supported")
		return operand{}, false
	case p.adjacent('('):
		p.unsupported("function " + t.text + "() is not supported")
		return operand{}, false
	case p.adjacent('\''):
		p.syntax("typed literals such as " + t.text + "'...' cannot be compared with these properties")
		return operand{}, false
	}
	switch t.text {
	case "null", "true", "false", "INF", "NaN":
		p.next()
		return operand{prop: -1, lit: t}, true
	}
	i, err := p.set.lookup("$filter", t.text)
	if err != nil {
		p.err = err.(*Error)
		return operand{}, false
	}
	p.next()
	return operand{prop: i}, true
}

// typed checks lit against the type of property i and returns the
// equality.
func (p *filterParser) typed(i int, lit token) (Eq, bool) {
	prop := p.set.props[i]
	if !prop.filter {
		p.unsupported("filtering on " + prop.name + " is not supported")
		return Eq{}, false
	}
	if lit.kind == tokIdent && lit.text == "null" {
		p.unsupported("comparing " + prop.name + " with null is not supported")
		return Eq{}, false
	}
	name := prop.name
	if prop.kind == export.Integer {
		if lit.kind == tokString {
			p.fail(badRequest, name+" is Edm.Int64: write the number without quotes, e.g. "+name+" eq 42")
			return Eq{}, false
		}
		n, ok := parseInt64Literal(lit.text)
		if lit.kind != tokNumber || !ok {
			p.fail(badRequest, name+" is Edm.Int64 and "+strconv.Quote(lit.text)+" is not an integer within its range")
			return Eq{}, false
		}
		if n < 1 {
			p.fail(badRequest, name+" is an id: compare it with an integer of at least 1, got "+lit.text)
			return Eq{}, false
		}
		return Eq{Property: name, Text: strconv.FormatInt(n, 10), Int: n}, true
	}
	if lit.kind != tokString {
		p.fail(badRequest, name+" is Edm.String: put the value in single quotes, e.g. "+name+" eq '"+
			strings.ReplaceAll(lit.text, "'", "''")+"'")
		return Eq{}, false
	}
	return Eq{Property: name, Text: lit.text}, true
}

// parseInt64Literal parses OData's int64 literal: an optional sign and 1 to
// 19 digits, within int64.
func parseInt64Literal(s string) (int64, bool) {
	digits := strings.TrimLeft(s, "+-")
	if len(s)-len(digits) > 1 || digits == "" || len(digits) > 19 || strings.Trim(digits, "0123456789") != "" {
		return 0, false
	}
	n, err := strconv.ParseInt(strings.TrimPrefix(s, "+"), 10, 64)
	return n, err == nil
}

// isWord reports whether the current token is the keyword w, in any case
// (ABNF literals are case-insensitive).
func (p *filterParser) isWord(w string) bool {
	return p.tok.kind == tokIdent && strings.EqualFold(p.tok.text, w)
}

// adjacent reports whether the byte right after the current token is c.
func (p *filterParser) adjacent(c byte) bool {
	return p.tok.end < len(p.src) && p.src[p.tok.end] == c
}

// next reads the next token into p.tok. A malformed string literal sets
// p.err and yields tokEOF.
func (p *filterParser) next() {
	s, i := p.src, p.tok.end
	for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
		i++
	}
	start := i
	if i == len(s) {
		p.tok = token{kind: tokEOF, pos: i, end: i}
		return
	}
	switch c := s[i]; {
	case c == '(':
		p.tok = token{kind: tokLParen, text: "(", pos: i, end: i + 1}
	case c == ')':
		p.tok = token{kind: tokRParen, text: ")", pos: i, end: i + 1}
	case c == '\'':
		var b strings.Builder
		for i++; ; i++ {
			if i == len(s) {
				p.tok = token{kind: tokEOF, pos: start, end: len(s)}
				p.fail(badRequest, "string literal starting at position "+strconv.Itoa(start+1)+
					" has no closing quote (write a quote inside a string as '')")
				return
			}
			if s[i] == '\'' {
				if i+1 < len(s) && s[i+1] == '\'' {
					b.WriteByte('\'')
					i++
					continue
				}
				break
			}
			b.WriteByte(s[i])
		}
		p.tok = token{kind: tokString, text: b.String(), pos: start, end: i + 1}
	case isDigit(c) || (c == '-' || c == '+') && i+1 < len(s) && isDigit(s[i+1]):
		for i++; i < len(s) && isNumberByte(s[i]); i++ {
		}
		p.tok = token{kind: tokNumber, text: s[start:i], pos: start, end: i}
	case isNameByte(c) || c == '$':
		for i++; i < len(s) && (isNameByte(s[i]) || isDigit(s[i]) || s[i] == '.' || s[i] == '/'); i++ {
		}
		p.tok = token{kind: tokIdent, text: s[start:i], pos: start, end: i}
	case c == '@':
		for i++; i < len(s) && (isNameByte(s[i]) || isDigit(s[i])); i++ {
		}
		p.tok = token{kind: tokAlias, text: s[start:i], pos: start, end: i}
	default:
		p.tok = token{kind: tokOther, text: s[i : i+1], pos: i, end: i + 1}
	}
}

func isDigit(c byte) bool    { return '0' <= c && c <= '9' }
func isNameByte(c byte) bool { return c == '_' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }

// isNumberByte reports whether c continues a number-like token, which
// takes in what other literals (dates, decimals, exponents, GUIDs) are made
// of, so that they are reported whole.
func isNumberByte(c byte) bool {
	return isDigit(c) || isNameByte(c) || c == '.' || c == '-' || c == '+' || c == ':'
}
