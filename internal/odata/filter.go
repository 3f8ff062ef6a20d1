package odata

import (
	"strconv"
	"strings"

	"github.com/informe/informe/internal/dataset"
	"github.com/informe/informe/internal/failure"
	"github.com/informe/informe/internal/secret"

	"github.com/informe/informe/internal/httplist"
)

// maxFilterDepth bounds the nesting of parentheses, not and function calls
// in $filter, so that a long run of '(' cannot make the parser recurse
// without end.
const maxFilterDepth = 32

type tokenKind uint8

const (
	tokEOF    tokenKind = iota
	tokIdent            // a name or keyword: contract_id, eq, and, null, Namespace.Type/prop, $it
	tokNumber           // something that starts like a number: 42, -1, 1.5, 2024-03-05
	tokString           // a string literal, unquoted and unescaped
	tokLParen
	tokRParen
	tokComma
	tokAlias // @p1
	tokOther // any other character
)

type token struct {
	kind tokenKind
	text string // the literal's value for tokString, else the source text
	pos  int    // byte offset in the source
	end  int    // byte offset just past the token
}

// edm is the type of a $filter expression: the typed expressions'
// ([dataset.Type]), under short names.
type edm = dataset.Type

const (
	tNull = dataset.Null    // the null literal
	tInt  = dataset.Int     // Edm.Int64
	tDec  = dataset.Number  // Edm.Decimal
	tDate = dataset.Day     // Edm.Date
	tDTO  = dataset.Instant // Edm.DateTimeOffset
	tStr  = dataset.String  // Edm.String
	tBool = dataset.Bool    // Edm.Boolean
)

func kindType(k dataset.Kind) edm {
	switch k {
	case dataset.Integer:
		return tInt
	case dataset.Decimal:
		return tDec
	case dataset.Date:
		return tDate
	case dataset.Timestamp, dataset.Timestamptz:
		return tDTO
	}
	return tStr
}

// numeric reports whether t compares with numbers.
func numeric(t edm) bool { return t == tInt || t == tDec }

type exprKind uint8

const (
	eProp exprKind = iota // a property
	eLit                  // a literal, null included
	eFunc                 // a function call: name, args
	eCmp                  // args[0] name args[1], name one of eq ne gt ge lt le
	eIn                   // args[0] in (args[1:])
	eAnd
	eOr
	eNot
	eAny // nav/any(v:args[0]), or nav/any() with no args: some related row
	eAll // nav/all(v:args[0]): every related row
)

// expr is a parsed, type-checked $filter expression.
type expr struct {
	kind exprKind
	typ  edm
	prop int    // eProp: index in set.props
	name string // eFunc: the function; eCmp: the operator
	val  any    // eLit: int64 (tInt), string (tDec, tStr: canonical text), time.Time (tDate: midnight UTC of the day, its year astronomical; tDTO, cut to the microsecond), bool (tBool); nil for null
	pico int64  // eLit of tDTO: the rest of its fraction of a second, in picoseconds (0 to 999,999)
	args []*expr
	pos  int // byte offset of its first token in the source, for errors
	// nav and target are, for eAny and eAll, the collection navigation
	// and the set it leads to, over whose properties args[0] is written.
	nav    *dataset.Navigation
	target *EntitySet
}

// lambdaVar is a lambda operator's variable in scope: its name and the
// entity set its properties belong to.
type lambdaVar struct {
	name string
	set  *EntitySet
}

// filterParser parses $filter, and the expressions of $orderby.
type filterParser struct {
	src    string
	set    *EntitySet
	option string // the option parsed, for errors: "$filter" or "$orderby"
	help   string // what the option supports, ending messages of its syntax
	tok    token
	err    *failure.Error
	depth  int
	// vars are the lambda variables in scope, innermost last; p.set is
	// then the innermost one's set.
	vars []lambdaVar
}

// parseFilter parses a $filter value into a boolean expression on set's
// properties. See [Parse] for what it accepts.
func parseFilter(raw string, set *EntitySet) (*expr, error) {
	if httplist.TrimOWS(raw) == "" {
		return nil, badRequest("$filter", reasonEmpty, "$filter is empty; "+filterHelp)
	}
	p := &filterParser{src: raw, set: set, option: "$filter", help: filterHelp}
	p.next()
	e := p.or()
	if p.err == nil && p.tok.kind != tokEOF {
		p.unexpected("and, or or the end of the expression")
	}
	if p.err == nil && e.typ != tBool {
		p.fail(badRequest, reasonTypeMismatch, e.pos, "the expression is "+e.typ.String()+", not a condition: compare it, e.g. with eq")
	}
	if p.err != nil {
		return nil, p.err
	}
	return e, nil
}

// filterHelp says what $filter supports.
const filterHelp = "$filter supports eq, ne, gt, ge, lt, le, in, and, or, not, parentheses, null, " +
	"the functions " + supportedFunctions + ", any and all on collection navigation properties, and literals of the property's type " +
	"(42, 1.5, 2024-03-05, 2024-03-05T14:07:09Z, 'text' with '' for a quote)"

const supportedFunctions = "contains, startswith, endswith, tolower, toupper, trim, length, concat, indexof, " +
	"substring, year, month, day, hour, minute, second, " + foldFunction

// foldFunction is informe's own function of $filter, qualified by its
// schema's namespace as OData requires of a custom function: its one
// parameter, text, is named in the call, Informe.fold(text=client_commune).
// It returns the text without accents and in lower case (see migration
// 00013), so that Informe.fold(text=last_name_client) eq
// Informe.fold(text='Nunez') finds Núñez.
const foldFunction = Namespace + ".fold"

// foldParameter is the name of [foldFunction]'s parameter.
const foldParameter = "text"

// fail records the parse's error, unless it has one: status (badRequest
// or notImplemented) with reason, at byte offset off of the source.
func (p *filterParser) fail(status func(string, string, string) *failure.Error, reason string, off int, msg string) {
	if p.err == nil {
		p.err = at(status(p.option, reason, p.option+": "+msg), p.src, off)
	}
}

// syntax fails with a 400 at the current token, saying where it is.
func (p *filterParser) syntax(msg string) {
	p.fail(badRequest, reasonSyntax, p.tok.pos, msg+" at position "+strconv.Itoa(position(p.src, p.tok.pos))+"; "+p.help)
}

// unsupported fails with a 501 at byte offset off.
func (p *filterParser) unsupported(reason string, off int, msg string) {
	p.fail(notImplemented, reason, off, msg+"; "+p.help)
}

// unexpected reports the current token where something else was expected.
func (p *filterParser) unexpected(expected string) {
	if p.tok.kind == tokEOF {
		p.syntax("expected " + expected + ", found the end")
		return
	}
	if p.tok.kind == tokIdent {
		switch w := strings.ToLower(p.tok.text); w {
		case "has", "add", "sub", "mul", "div", "divby", "mod":
			p.unsupported(reasonUnsupportedOperator, p.tok.pos, "operator "+w+" is not supported")
			return
		case "eq", "ne", "gt", "ge", "lt", "le", "in":
			p.syntax("operator " + w + " cannot follow a comparison: put the comparison in parentheses")
			return
		}
	}
	p.syntax("expected " + expected + ", found " + secret.Quote(p.src[p.tok.pos:p.tok.end]))
}

// enter counts one level of nesting; false, with an error, when too deep.
func (p *filterParser) enter() bool {
	p.depth++
	if p.depth > maxFilterDepth {
		p.fail(badRequest, reasonTooDeep, p.tok.pos, "expression nested too deeply at position "+
			strconv.Itoa(position(p.src, p.tok.pos))+": informe reads "+strconv.Itoa(maxFilterDepth)+" levels of parentheses, not and function calls")
		return false
	}
	return true
}

func (p *filterParser) leave() { p.depth-- }

// logical builds "l op r" for and/or after checking both are conditions.
func (p *filterParser) logical(kind exprKind, op string, l, r *expr) *expr {
	for _, e := range []*expr{l, r} {
		if e.typ != tBool {
			p.fail(badRequest, reasonTypeMismatch, e.pos, op+" joins conditions, and one side is "+e.typ.String()+": compare it, e.g. with eq")
			return l
		}
	}
	return &expr{kind: kind, typ: tBool, args: []*expr{l, r}, pos: l.pos}
}

// or parses conditions joined by "or".
func (p *filterParser) or() *expr { return p.joined(eOr, "or", p.and) }

// and parses conditions joined by "and".
func (p *filterParser) and() *expr { return p.joined(eAnd, "and", p.not) }

// joined parses operands, each read by operand, joined by the word op,
// from left to right: "a op b op c" is (a op b) op c.
func (p *filterParser) joined(kind exprKind, op string, operand func() *expr) *expr {
	l := operand()
	for p.err == nil && p.isWord(op) {
		p.next()
		r := operand()
		if p.err != nil {
			break
		}
		l = p.logical(kind, op, l, r)
	}
	return l
}

// not parses "not" condition, or a comparison.
func (p *filterParser) not() *expr {
	if !p.isWord("not") {
		return p.comparison()
	}
	if !p.enter() {
		return &expr{}
	}
	defer p.leave()
	pos := p.tok.pos
	p.next()
	e := p.not()
	if p.err == nil && e.typ != tBool {
		p.fail(badRequest, reasonTypeMismatch, e.pos, "not applies to a condition, and its operand is "+e.typ.String())
	}
	return &expr{kind: eNot, typ: tBool, args: []*expr{e}, pos: pos}
}

var comparisonOps = map[string]bool{"eq": true, "ne": true, "gt": true, "ge": true, "lt": true, "le": true}

// comparison parses "value op value", "value in (values)" or a value.
func (p *filterParser) comparison() *expr {
	l := p.value()
	if p.err != nil || p.tok.kind != tokIdent {
		return l
	}
	op := strings.ToLower(p.tok.text)
	switch {
	case op == "in":
		return p.in(l)
	case comparisonOps[op]:
	case op == "has":
		p.unsupported(reasonUnsupportedOperator, p.tok.pos, "operator has is not supported")
		return l
	case op == "add", op == "sub", op == "mul", op == "div", op == "divby", op == "mod":
		p.unsupported(reasonUnsupportedOperator, p.tok.pos, "arithmetic ("+op+") is not supported")
		return l
	default:
		return l
	}
	p.next()
	r := p.value()
	if p.err != nil {
		return l
	}
	p.comparable(op, l, r)
	return &expr{kind: eCmp, typ: tBool, name: op, args: []*expr{l, r}, pos: l.pos}
}

// in parses "(v1, v2, ...)" after l in.
func (p *filterParser) in(l *expr) *expr {
	p.next()
	if p.tok.kind != tokLParen {
		p.unexpected("'(' and a list of values after in")
		return l
	}
	p.next()
	e := &expr{kind: eIn, typ: tBool, args: []*expr{l}, pos: l.pos}
	for p.err == nil {
		v := p.value()
		if p.err != nil {
			break
		}
		if v.kind != eLit {
			p.unsupported(reasonUnsupportedExpression, v.pos, "in lists only literals")
			break
		}
		p.comparable("in", l, v)
		e.args = append(e.args, v)
		if p.tok.kind == tokComma {
			p.next()
			continue
		}
		if p.tok.kind != tokRParen {
			p.unexpected("',' or ')'")
			break
		}
		p.next()
		break
	}
	return e
}

// comparable checks that l op r compares values of one type.
func (p *filterParser) comparable(op string, l, r *expr) {
	if l.typ == tNull || r.typ == tNull {
		if op != "eq" && op != "ne" && op != "in" {
			null := l
			if r.typ == tNull {
				null = r
			}
			p.fail(badRequest, reasonTypeMismatch, null.pos, "null can only be compared with eq or ne (or listed in in)")
		}
		// null eq null is true and null ne null false, for every row.
		return
	}
	if l.typ == r.typ || numeric(l.typ) && numeric(r.typ) {
		if l.typ == tBool && op != "eq" && op != "ne" {
			p.fail(badRequest, reasonTypeMismatch, l.pos, "conditions can only be compared with eq or ne")
		}
		return
	}
	side, other := l, r
	if side.kind != eProp {
		side, other = r, l
	}
	if side.kind == eProp {
		name := p.set.props[side.prop].name
		switch side.typ {
		case tInt:
			if other.typ == tStr {
				p.fail(badRequest, reasonTypeMismatch, other.pos, name+" is Edm.Int64: write the number without quotes, e.g. "+name+" eq 42")
				return
			}
		case tStr:
			p.fail(badRequest, reasonTypeMismatch, other.pos, name+" is Edm.String: put the value in single quotes, e.g. "+name+" eq 'text'")
			return
		}
		p.fail(badRequest, reasonTypeMismatch, other.pos, name+" is "+side.typ.String()+" and cannot be compared with "+other.typ.String()+"; "+example(side.typ, name))
		return
	}
	p.fail(badRequest, reasonTypeMismatch, r.pos, "cannot compare "+l.typ.String()+" with "+r.typ.String())
}

// example shows a comparison of a property of type t.
func example(t edm, name string) string {
	switch t {
	case tInt:
		return "e.g. " + name + " eq 42"
	case tDec:
		return "e.g. " + name + " gt 1500.5"
	case tDate:
		return "e.g. " + name + " ge 2024-03-05"
	case tDTO:
		return "e.g. " + name + " ge 2024-03-05T00:00:00Z"
	}
	return "e.g. " + name + " eq 'text'"
}

// value parses a parenthesized expression, a literal, a property or a
// function call.
func (p *filterParser) value() *expr {
	t := p.tok
	switch t.kind {
	case tokLParen:
		if !p.enter() {
			return &expr{}
		}
		defer p.leave()
		p.next()
		e := p.or()
		if p.err != nil {
			return e
		}
		if p.tok.kind != tokRParen {
			p.unexpected("')'")
			return e
		}
		p.next()
		// The parenthesized expression is the operand: a fault in its
		// type is shown where it begins.
		e.pos = t.pos
		return e
	case tokString:
		p.next()
		return &expr{kind: eLit, typ: tStr, val: t.text, pos: t.pos}
	case tokNumber:
		p.next()
		return p.number(t)
	case tokAlias:
		p.unsupported(reasonUnsupportedExpression, t.pos, "parameter aliases ("+t.text+") are not supported")
		return &expr{}
	case tokIdent:
	case tokOther:
		if t.text == "-" {
			p.unsupported(reasonUnsupportedOperator, t.pos, "negation is not supported")
			return &expr{}
		}
		p.unexpected("a property, a literal or a function")
		return &expr{}
	default:
		p.unexpected("a property, a literal or a function")
		return &expr{}
	}
	// An identifier: a keyword literal, a function, a path or a property.
	switch {
	case strings.HasPrefix(t.text, "$"):
		p.unsupported(reasonUnsupportedExpression, t.pos, t.text+" is not supported")
		return &expr{}
	case strings.ContainsRune(t.text, '/'):
		return p.path(t)
	case p.adjacent('('):
		return p.call()
	case p.adjacent('\''):
		p.fail(badRequest, reasonBadLiteral, t.pos, "typed literals such as "+t.text+"'...' are not supported at position "+
			strconv.Itoa(position(p.src, t.pos))+": write dates as 2024-03-05, date-times as 2024-03-05T14:07:09Z and strings in single quotes")
		return &expr{}
	}
	switch t.text {
	case "null":
		p.next()
		return &expr{kind: eLit, typ: tNull, pos: t.pos}
	case "true", "false":
		p.next()
		return &expr{kind: eLit, typ: tBool, val: t.text == "true", pos: t.pos}
	case "INF", "NaN":
		p.fail(badRequest, reasonBadLiteral, t.pos, t.text+" is not a value of any property")
		return &expr{}
	}
	if len(p.vars) > 0 {
		v := p.vars[len(p.vars)-1]
		p.unsupported(reasonUnsupportedExpression, t.pos, "inside "+v.name+"'s lambda, name "+v.set.def.TypeName+"'s properties through its variable ("+
			v.name+"/"+t.text+"); the outer entity's properties cannot be read there")
		return &expr{}
	}
	return p.property(t, t.text)
}

// property returns the property name of p.set, the current token t, or
// fails naming what there is.
func (p *filterParser) property(t token, name string) *expr {
	i, err := p.set.lookup(p.option, name)
	if err != nil {
		p.err = at(err, p.src, t.pos)
		return &expr{}
	}
	p.next()
	return &expr{kind: eProp, typ: kindType(p.set.props[i].kind), prop: i, pos: t.pos}
}

// path parses an identifier with a '/', the current token t: a lambda
// variable's property (d/task_status) inside its lambda, or a lambda
// operator on a collection navigation property, Tasks/any(d:d/task_status
// eq 'Pendiente'), of the entity or, inside a lambda, of its variable
// (d/Tasks/any(...)). Other paths (a to-one navigation's property, a cast)
// are valid OData informe does not implement: a 501.
func (p *filterParser) path(t token) *expr {
	segs := strings.Split(t.text, "/")
	if len(p.vars) > 0 {
		v := p.vars[len(p.vars)-1]
		if segs[0] != v.name {
			p.unsupported(reasonUnsupportedExpression, t.pos, "inside "+v.name+"'s lambda, paths start with its variable, "+v.name+
				"/...: "+secret.Quote(segs[0])+" is not it (an outer variable's or entity's properties cannot be read there)")
			return &expr{}
		}
		segs = segs[1:]
		if len(segs) == 1 {
			return p.property(t, segs[0])
		}
	}
	if len(segs) != 2 || (segs[1] != "any" && segs[1] != "all") || !p.adjacent('(') {
		p.unsupported(reasonUnsupportedExpression, t.pos, "the path "+secret.Quote(t.text)+" is not supported: paths are lambda operators, "+
			"Navigation/any(d:d/property eq value) and Navigation/all(...), on a collection navigation property")
		return &expr{}
	}
	nav := p.set.navigation(segs[0])
	if nav == nil || !nav.Many {
		has := "no collection navigation properties"
		if names := collectionNames(p.set); names != "" {
			has = "its collection navigation properties are " + names
		}
		what := "no collection navigation property"
		if nav != nil {
			what = "a single-valued navigation property"
		}
		p.fail(badRequest, reasonUnknownNav, t.pos, p.set.def.TypeName+" has "+what+" "+secret.Quote(segs[0])+" for "+segs[1]+" to range over; "+has)
		return &expr{}
	}
	if !p.enter() {
		return &expr{}
	}
	defer p.leave()
	e := &expr{kind: eAny, typ: tBool, nav: nav, target: target(nav), pos: t.pos}
	if segs[1] == "all" {
		e.kind = eAll
	}
	p.next() // the path
	p.next() // '('
	if p.tok.kind == tokRParen {
		if e.kind == eAll {
			p.syntax("all needs a lambda expression, all(d:d/property eq value),")
			return e
		}
		p.next()
		return e
	}
	v := p.tok
	if v.kind != tokIdent || !isIdentifier(v.text) {
		p.unexpected("a lambda variable and ':', as in " + segs[0] + "/" + segs[1] + "(d:d/property eq value),")
		return e
	}
	for _, o := range p.vars {
		if o.name == v.text {
			p.fail(badRequest, reasonSyntax, v.pos, "the lambda variable "+v.text+" is already in scope: name it otherwise")
			return e
		}
	}
	_, outerProp := p.set.byName[v.text]
	_, innerProp := e.target.byName[v.text]
	if outerProp || innerProp {
		p.fail(badRequest, reasonSyntax, v.pos, "the lambda variable "+v.text+" is the name of a property: name it otherwise")
		return e
	}
	p.next() // the variable
	if p.tok.kind != tokOther || p.tok.text != ":" {
		p.unexpected("':' after the lambda variable " + v.text)
		return e
	}
	p.next() // ':'
	outer := p.set
	p.vars = append(p.vars, lambdaVar{name: v.text, set: e.target})
	p.set = e.target
	body := p.or()
	p.vars = p.vars[:len(p.vars)-1]
	p.set = outer
	if p.err != nil {
		return e
	}
	if body.typ != tBool {
		p.fail(badRequest, reasonTypeMismatch, body.pos, "the lambda expression is "+body.typ.String()+", not a condition: compare it, e.g. with eq")
		return e
	}
	if p.tok.kind != tokRParen {
		p.unexpected("')'")
		return e
	}
	p.next()
	e.args = []*expr{body}
	return e
}

// collectionNames lists set's collection navigation properties.
func collectionNames(set *EntitySet) string {
	var names []string
	for _, n := range set.def.Navigations {
		if n.Many {
			names = append(names, n.Name)
		}
	}
	return strings.Join(names, ", ")
}

// number types a number-like literal: an integer, a decimal, a date or a
// date-time with an offset.
func (p *filterParser) number(t token) *expr {
	s := t.text
	if n, ok := parseInt64Literal(s); ok {
		return &expr{kind: eLit, typ: tInt, val: n, pos: t.pos}
	}
	if d, ok := decimalLiteral(s); ok {
		return &expr{kind: eLit, typ: tDec, val: d, pos: t.pos}
	}
	switch v, fault := parseTemporal(s); fault {
	case temporalOK:
		if v.typ == tDate {
			return &expr{kind: eLit, typ: tDate, val: v.t, pos: t.pos}
		}
		return &expr{kind: eLit, typ: tDTO, val: v.t, pico: v.pico, pos: t.pos}
	case tooPrecise:
		p.fail(badRequest, reasonSyntax, t.pos, "the date-time "+secret.Quote(s)+" at position "+strconv.Itoa(position(p.src, t.pos))+
			" has more than 12 digits of fractional seconds, which OData's grammar does not allow")
		return &expr{}
	case outsidePostgres:
		p.fail(badRequest, reasonBadLiteral, t.pos, secret.Quote(s)+" is outside the range of PostgreSQL's dates and date-times: "+pgRange)
		return &expr{}
	}
	if isIntegerText(s) {
		p.fail(badRequest, reasonBadLiteral, t.pos, secret.Quote(s)+" is not an integer within Edm.Int64's range")
	} else {
		p.fail(badRequest, reasonBadLiteral, t.pos, secret.Quote(s)+" is not a valid literal: write integers as 42, decimals as 1.5, "+
			"dates as 2024-03-05 and date-times as 2024-03-05T14:07:09Z or 2024-03-05T14:07:09-03:00")
	}
	return &expr{}
}

func isIntegerText(s string) bool {
	s = strings.TrimLeft(s, "+-")
	return s != "" && strings.Trim(s, "0123456789") == ""
}

// decimalLiteral returns s, an OData decimal (digits, a point, digits, an
// optional exponent), as PostgreSQL reads a numeric.
func decimalLiteral(s string) (string, bool) {
	t := strings.TrimPrefix(s, "+")
	body := strings.TrimPrefix(t, "-")
	mant, exp, hasExp := strings.Cut(strings.ToLower(body), "e")
	ip, fp, hasPoint := strings.Cut(mant, ".")
	if ip == "" || strings.Trim(ip, "0123456789") != "" || hasPoint && (fp == "" || strings.Trim(fp, "0123456789") != "") {
		return "", false
	}
	if hasExp {
		e := strings.TrimLeft(exp, "+-")
		if len(exp)-len(e) > 1 || e == "" || len(e) > 4 || strings.Trim(e, "0123456789") != "" {
			return "", false
		}
	} else if !hasPoint {
		return "", false
	}
	return t, true
}

// signature is a function's argument types and result.
type signature struct {
	args   [][]edm // allowed types of each argument
	min    int     // fewest arguments
	result edm     // tInt etc.; 0 (tNull) means "the first argument's type"
}

var (
	str1     = []edm{tStr}
	dateLike = []edm{tDate, tDTO}
)

// odataFunctions are the canonical functions of OData 4.01 that
// informe does not implement: a call of one is valid OData, a 501, where a
// call of any other name is a 400.
var odataFunctions = map[string]bool{
	"round": true, "floor": true, "ceiling": true, "now": true, "date": true, "time": true,
	"totaloffsetminutes": true, "totalseconds": true, "fractionalseconds": true,
	"maxdatetime": true, "mindatetime": true, "cast": true, "isof": true, "matchesPattern": true,
	"hassubset": true, "hassubsequence": true, "case": true,
	"geo.distance": true, "geo.intersects": true, "geo.length": true,
}

var functions = map[string]signature{
	"contains":   {args: [][]edm{str1, str1}, min: 2, result: tBool},
	"startswith": {args: [][]edm{str1, str1}, min: 2, result: tBool},
	"endswith":   {args: [][]edm{str1, str1}, min: 2, result: tBool},
	"tolower":    {args: [][]edm{str1}, min: 1, result: tStr},
	"toupper":    {args: [][]edm{str1}, min: 1, result: tStr},
	"trim":       {args: [][]edm{str1}, min: 1, result: tStr},
	"length":     {args: [][]edm{str1}, min: 1, result: tInt},
	"concat":     {args: [][]edm{str1, str1}, min: 2, result: tStr},
	"indexof":    {args: [][]edm{str1, str1}, min: 2, result: tInt},
	"substring":  {args: [][]edm{str1, {tInt}, {tInt}}, min: 2, result: tStr},
	"year":       {args: [][]edm{dateLike}, min: 1, result: tInt},
	"month":      {args: [][]edm{dateLike}, min: 1, result: tInt},
	"day":        {args: [][]edm{dateLike}, min: 1, result: tInt},
	"hour":       {args: [][]edm{{tDTO}}, min: 1, result: tInt},
	"minute":     {args: [][]edm{{tDTO}}, min: 1, result: tInt},
	"second":     {args: [][]edm{{tDTO}}, min: 1, result: tInt},
}

// call parses a function call; the current token is its name.
func (p *filterParser) call() *expr {
	name, pos := p.tok.text, p.tok.pos
	if name == foldFunction {
		return p.fold()
	}
	sig, ok := functions[name]
	if !ok {
		if strings.HasPrefix(name, Namespace+".") || strings.Contains(name, ".") && !odataFunctions[name] {
			p.fail(badRequest, reasonUnknownFunction, pos, secret.Quote(name)+" at position "+strconv.Itoa(position(p.src, pos))+
				" is no function of this service: its own function is "+foldFunction+"("+foldParameter+"=...), and OData's are "+supportedFunctions)
			return &expr{}
		}
		if odataFunctions[name] {
			p.unsupported(reasonUnsupportedFunction, pos, "function "+name+"() is not supported (supported are "+supportedFunctions+")")
		} else {
			p.fail(badRequest, reasonUnknownFunction, pos, secret.Quote(name)+" at position "+strconv.Itoa(position(p.src, pos))+
				" is no OData function: the functions are "+supportedFunctions)
		}
		return &expr{}
	}
	if !p.enter() {
		return &expr{}
	}
	defer p.leave()
	p.next() // the name
	p.next() // '('
	e := &expr{kind: eFunc, typ: sig.result, name: name, pos: pos}
	for p.err == nil && p.tok.kind != tokRParen {
		if len(e.args) > 0 {
			if p.tok.kind != tokComma {
				p.unexpected("',' or ')'")
				break
			}
			p.next()
		}
		a := p.or()
		if p.err != nil {
			break
		}
		if len(e.args) == len(sig.args) {
			p.fail(badRequest, reasonArgumentCount, a.pos, name+"() takes at most "+strconv.Itoa(len(sig.args))+" arguments")
			break
		}
		if !containsType(sig.args[len(e.args)], a.typ) {
			p.fail(badRequest, reasonTypeMismatch, a.pos, "argument "+strconv.Itoa(len(e.args)+1)+" of "+name+"() must be "+typeList(sig.args[len(e.args)])+
				", not "+a.typ.String())
			break
		}
		e.args = append(e.args, a)
	}
	if p.err != nil {
		return e
	}
	if len(e.args) < sig.min {
		p.fail(badRequest, reasonArgumentCount, pos, name+"() takes "+strconv.Itoa(sig.min)+" arguments or more, got "+strconv.Itoa(len(e.args)))
		return e
	}
	p.next() // ')'
	if name == "substring" {
		for _, a := range e.args[1:] {
			if n, ok := a.val.(int64); a.kind != eLit || !ok || n < 0 {
				p.fail(badRequest, reasonBadArgument, a.pos, "substring() takes its position and length as integer literals of at least 0")
				return e
			}
		}
	}
	return e
}

// fold parses a call of [foldFunction], the current token its name: a
// custom function, whose one parameter is named, as OData's inline
// parameter syntax has it: Informe.fold(text=client_commune).
func (p *filterParser) fold() *expr {
	pos := p.tok.pos
	if !p.enter() {
		return &expr{}
	}
	defer p.leave()
	p.next() // the name
	p.next() // '('
	if !p.isWord(foldParameter) || p.tok.text != foldParameter || p.tok.end >= len(p.src) || p.src[p.tok.end] != '=' {
		p.unexpected(foldParameter + "= and the text, as in " + foldFunction + "(" + foldParameter + "=client_commune),")
		return &expr{}
	}
	p.next() // text
	p.next() // '='
	a := p.or()
	if p.err != nil {
		return &expr{}
	}
	if a.typ != tStr && a.typ != tNull {
		p.fail(badRequest, reasonTypeMismatch, a.pos, foldFunction+"'s "+foldParameter+" must be Edm.String, not "+a.typ.String())
		return &expr{}
	}
	if p.tok.kind != tokRParen {
		p.unexpected("')': " + foldFunction + " takes one parameter, " + foldParameter)
		return &expr{}
	}
	p.next()
	return &expr{kind: eFunc, typ: tStr, name: foldFunction, args: []*expr{a}, pos: pos}
}

func containsType(ts []edm, t edm) bool {
	for _, x := range ts {
		if x == t {
			return true
		}
	}
	return false
}

func typeList(ts []edm) string {
	names := make([]string, len(ts))
	for i, t := range ts {
		names[i] = t.String()
	}
	return strings.Join(names, " or ")
}

// parseInt64Literal parses an OData integer literal: an optional sign and
// digits, within int64.
func parseInt64Literal(s string) (int64, bool) {
	if !isIntegerText(s) || strings.Count(s, "+")+strings.Count(s, "-") > 1 {
		return 0, false
	}
	n, err := strconv.ParseInt(strings.TrimPrefix(s, "+"), 10, 64)
	return n, err == nil
}

// isWord reports whether the current token is the keyword w, in any case.
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
	case c == ',':
		p.tok = token{kind: tokComma, text: ",", pos: i, end: i + 1}
	case c == '\'':
		var b strings.Builder
		for i++; ; i++ {
			if i == len(s) {
				p.tok = token{kind: tokEOF, pos: start, end: len(s)}
				p.fail(badRequest, reasonSyntax, start, "string literal starting at position "+strconv.Itoa(position(s, start))+
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
