package odata

import (
	"net/url"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/informe/informe/internal/dataset"
	"github.com/informe/informe/internal/failure"
	"github.com/informe/informe/internal/httplist"
	"github.com/informe/informe/internal/secret"
)

// Query is a parsed, valid request for a feed of one [EntitySet]: what the
// store reads and the [Feed] writes. Build it with [Parse].
type Query struct {
	// Filter lists the equalities of $filter when it is nothing but
	// equalities, joined by and, on the set's filter properties
	// ([dataset.EntitySet.Filters]; ids at least 1): a row matches when all
	// hold. Each property appears at most once. nil otherwise: see
	// [Query.Compile].
	Filter []Eq

	// Top is $top, the most rows the client wants over all pages; -1
	// when absent. Use [Query.Limit] for the rows of one response.
	Top int64

	// Skip is $skip: rows to pass over, in order, after the filter and
	// After. 0 when absent. Next links never carry it.
	Skip int64

	// Count is $count=true: the feed carries @odata.count, the number of
	// rows matching Filter (ignoring Top, Skip and After).
	Count bool

	// After is the position $skiptoken resumes after: the key of the last
	// row of the previous page, one integer per key part (report:
	// contract, process and task id, 0 for an absent process or task;
	// users: the id). nil when absent. The store reads rows whose key is
	// greater, in row order; for the report:
	//
	//	(key_contract_id, coalesce(key_process_id, 0), coalesce(key_task_id, 0)) > ($1, $2, $3)
	//
	// (adding key_contract_id >= $1 lets an index on the contract id
	// narrow the scan). A contract without processes, or a process
	// without tasks, has one row, so treating its NULL id as 0 keeps the
	// order of ORDER BY key_contract_id, key_process_id, key_task_id.
	After []int64

	set *EntitySet
	// where is the $filter expression; nil when absent.
	where *expr
	// order are the $orderby items, the key's parts ordering last; nil
	// for the set's own order.
	order []orderItem
	// key is the key of a request by key, /Set(key); nil otherwise.
	key []int64
	// afterSort are the $skiptoken's sort values, one per order item, in
	// their text form; nil for null.
	afterSort []*string
	// sel lists, in $select order, the indexes in set.props of the
	// selected properties; nil when $select is absent or "*".
	sel []int
	// expand are the items of $expand, in order; nil when absent.
	expand []expansion
	// option values carried into next links: $filter, $select, $orderby
	// and $expand as the client wrote them once they have passed the
	// parser (so they hold only property names, keywords and the literals
	// of Filter), $format as informe writes it.
	filter, selectRaw, orderby, expandRaw, format string
}

// Eq is one comparison of $filter: Property eq value.
type Eq struct {
	Property string // the property name, e.g. "contract_id"
	// Text is the value: a string literal with its quotes removed and ''
	// unescaped, or an Edm.Int64 value in base 10. A client_rut is passed
	// as typed (the caller normalizes it, e.g. with package rut, and
	// answers a malformed RUT with a 400).
	Text string
	Int  int64 // the value of an Edm.Int64 property (at least 1); 0 for a string
}

// Equal returns the comparison of $filter on the named property, if any.
func (q *Query) Equal(property string) (Eq, bool) {
	for _, e := range q.Filter {
		if e.Property == property {
			return e, true
		}
	}
	return Eq{}, false
}

// Limit returns the number of rows the store should read for one response
// of pageSize rows ([PageSize]; 0 means [MaxPageSize]): the rows of the
// page, and one more when a further page may follow, so that the [Feed]
// given the same page size can tell whether to write a next link. It is
// Top when $top asks for no more than a page.
func (q *Query) Limit(pageSize int) int64 {
	n := pageRows(pageSize)
	if q.Top >= 0 && q.Top <= n {
		return q.Top
	}
	return n + 1
}

func pageRows(pageSize int) int64 {
	if pageSize <= 0 {
		return MaxPageSize
	}
	return int64(pageSize)
}

// orderByHelp says what $orderby supports.
const orderByHelp = "order by properties, each followed by asc or desc, separated by commas"

// supported lists the query options a feed accepts, for messages.
const supported = "supported are $select, $filter, $orderby, $expand, $top, $skip, $count, $skiptoken and $format"

// unsupported are the OData 4.0 and 4.01 system query options a feed does
// not implement: valid, so a 501 rather than a 400.
var unsupported = map[string]bool{
	"$search": true, "$apply": true, "$compute": true, "$levels": true,
	"$index": true, "$schemaversion": true, "$deltatoken": true, "$id": true, "$inlinecount": true,
}

// Parse reads the OData system query options of a request for the feed of
// set. Names are case-insensitive ($Top is $top); options that do not
// start with '$' are custom options and are ignored (access_token among
// them: next links never carry it).
//
//   - $select: comma-separated property names, in the order the entities
//     will list them, or "*". The key property is always written, first
//     when it is not selected, so no entity needs an @odata.id.
//   - $filter: a condition on any properties: eq, ne, gt, ge, lt, le and
//     in (a list of literals), and, or, not, parentheses, null (eq null,
//     ne null), and the functions contains, startswith, endswith,
//     tolower, toupper, trim, length, concat, indexof, substring (position
//     and length as literals), year, month, day (Edm.Date and
//     Edm.DateTimeOffset), hour, minute and second (Edm.DateTimeOffset).
//     Literals are OData's: integers (42), decimals (1.5, 1e5), dates
//     (2024-03-05; years are astronomical, 0000 being 1 BC), date-times
//     with an offset (2024-03-05T14:07:09Z, ...-03:00, with up to 12
//     digits of fractional seconds, compared at their own precision),
//     strings in single quotes with a quote inside written twice, null,
//     true and false; a date or date-time outside PostgreSQL's range is a
//     400. Two literals compare too (1 eq 1). Comparisons must be of one
//     type (Int64 and Decimal mix): a date compared with a string, or a
//     string property with a number, is a 400, as OData does not convert. See
//     [Query.Compile] for how it reaches the database and [Query.Filter] for
//     the plain equalities a store serves on its own.
//   - $orderby: properties, comma-separated, each optionally asc or desc;
//     nulls are smaller than any value. The key's parts order last. The
//     set's own order ([dataset.EntitySet.OrderBy]) or a prefix of it,
//     ascending, is the same as none.
//   - $expand: navigation properties of the set ([dataset.EntitySet.Navigations]),
//     comma-separated, one level, each with an optional nested $select:
//     "Client($select=client_rut,client_region),Processes". Each entity
//     then carries its related entity (null when there is none) or its
//     related entities (an array, in the target's key order) under the
//     navigation's name, after its properties. See [Query.Expansions].
//   - $top, $skip: non-negative integers.
//   - $count: true or false.
//   - $skiptoken: only as this package writes it in a next link, with the
//     same $filter, $orderby, $select and $top, and no $skip at all (not
//     even $skip=0).
//   - $format: see [Negotiate].
//
// Errors are *failure.Error values, safe to show to clients, with the
// option as Target, a Reason (see errors.go) and, where the fault is at one
// place of the option's value, its Position. A 400 names the option and
// what is wrong: anything OData's grammar does not make ($orderby=1,2,
// $expand=+1, $select=1, a date-time with 13 digits of fractional
// seconds), an unknown property, a literal of the wrong type or form,
// null with gt, ge, lt or le, a negative $top, a tampered $skiptoken or
// one beside $skip, an option given twice, an unknown $-option. A 501 says what
// is supported: has, arithmetic, other functions (round, now, ...),
// lambdas, parameter aliases, $orderby on expressions, $expand's nested
// options other than $select, nested $expand, $search, $apply, $compute
// and the rest.
func Parse(values url.Values, set *EntitySet) (*Query, error) {
	opts, err := systemOptions(values)
	if err != nil {
		return nil, err
	}
	q := &Query{set: set, Top: -1}
	for _, name := range sortedKeys(opts) {
		raw := opts[name]
		if !validText(raw) {
			// PostgreSQL refuses such text (22021); no option of informe's
			// is made of it.
			return nil, badRequest(name, reasonNotText, name+" is not UTF-8 text, or holds a NUL character: "+
				"send each character as its UTF-8 bytes, percent-encoded (%C3%B1 for ñ)")
		}
		switch name {
		case "$select":
			q.selectRaw = raw
			q.sel, err = parseSelect(raw, set)
		case "$filter":
			q.filter = raw
			if secret.MayHoldToken(raw) {
				// Next links repeat $filter: it must not carry a token.
				err = badRequest("$filter", reasonToken, "$filter holds "+secret.LooksLikeToken+
					"; send the token in the Authorization header (or the access_token parameter) only")
			} else if q.where, err = parseFilter(raw, set); err == nil {
				if err = checkLiterals(q.where, set, raw); err == nil {
					q.Filter = equalities(q.where, set)
				}
			}
		case "$orderby":
			q.orderby = raw
			q.order, err = parseOrderBy(raw, set)
		case "$expand":
			q.expandRaw = raw
			q.expand, err = parseExpand(raw, set)
		case "$top":
			q.Top, err = parseCount(name, raw)
		case "$skip":
			q.Skip, err = parseCount(name, raw)
		case "$count":
			switch strings.ToLower(raw) {
			case "true":
				q.Count = true
			case "false":
			default:
				err = badRequest(name, reasonNotBoolean, "$count must be true or false, got "+secret.Quote(raw))
			}
		case "$skiptoken":
			// Read once every option it is bound to is known.
		case "$format":
			var f Format
			f, err = parseFormatOption(raw)
			q.format = f.option()
		default:
			if unsupported[name] {
				err = notImplemented(name, reasonUnsupportedOption, name+" is not supported; "+supported)
			} else {
				err = badRequest(name, reasonUnknownOption, "unknown system query option "+name+"; "+supported)
			}
		}
		if err != nil {
			return nil, err
		}
	}
	if tok, ok := opts["$skiptoken"]; ok {
		if _, skip := opts["$skip"]; skip {
			// A next link carries no $skip: one beside its token, even
			// $skip=0, is not a link informe wrote.
			return nil, badRequest("$skiptoken", reasonBadSkipToken, "$skiptoken cannot be combined with $skip, not even $skip=0: "+
				"use the @odata.nextLink of a previous response as it is")
		}
		if q.After, q.afterSort, err = decodeSkipToken(tok, set, q.order, q.binding(q.Top, q.Skip)); err != nil {
			return nil, err
		}
	}
	return q, nil
}

// validText reports whether s is UTF-8 text without NUL characters, the
// only text PostgreSQL stores.
func validText(s string) bool {
	return utf8.ValidString(s) && strings.IndexByte(s, 0) < 0
}

// systemOptions returns the $-options of values by lower-case name. An
// option given twice, in any spelling, is a 400.
func systemOptions(values url.Values) (map[string]string, error) {
	opts := make(map[string]string)
	for _, key := range sortedKeys(values) {
		if !strings.HasPrefix(key, "$") {
			continue
		}
		name := strings.ToLower(key)
		if _, dup := opts[name]; dup || len(values[key]) > 1 {
			return nil, badRequest(name, reasonRepeated, name+" is given more than once")
		}
		if len(values[key]) == 1 {
			opts[name] = values[key][0]
		}
	}
	return opts, nil
}

// option returns the value of the system query option name (lower case)
// in values, whatever its spelling.
func option(values url.Values, name string) (string, bool, error) {
	var (
		v     string
		found bool
	)
	for key, vs := range values {
		if !strings.EqualFold(key, name) || len(vs) == 0 {
			continue
		}
		if found || len(vs) > 1 {
			return "", false, badRequest(name, reasonRepeated, name+" is given more than once")
		}
		v, found = vs[0], true
	}
	return v, found, nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// parseCount parses $top or $skip: 1*DIGIT, within int64.
func parseCount(name, raw string) (int64, error) {
	if raw == "" || strings.Trim(raw, "0123456789") != "" {
		return 0, badRequest(name, reasonNotInteger, name+" must be a non-negative integer, got "+secret.Quote(raw))
	}
	n, err := strconv.ParseInt(raw, 10, 64)
	if err != nil {
		return 0, badRequest(name, reasonOutOfRange, name+" is too large: "+raw)
	}
	return n, nil
}

// parseSelect returns the indexes in set.props of the properties raw
// selects, in order, without repeats; nil when it holds "*", which selects
// them all (every other item must still be a property).
func parseSelect(raw string, set *EntitySet) ([]int, error) {
	if httplist.TrimOWS(raw) == "" {
		return nil, badRequest("$select", reasonEmpty, "$select is empty; list property names separated by commas, or *")
	}
	sel := []int{}
	star := false
	for _, item := range splitItems(raw, ',') {
		switch {
		case item.text == "":
			return nil, at(badRequest("$select", reasonSyntax, "$select: empty item at position "+
				strconv.Itoa(position(raw, item.off))+"; list property names separated by commas"), raw, item.off)
		case item.text == "*":
			star = true
			continue
		case !isPath(item.text):
			return nil, at(badRequest("$select", reasonSyntax, "$select: "+secret.Quote(item.text)+" at position "+
				strconv.Itoa(position(raw, item.off))+" is not a property name; list property names separated by commas, or *"), raw, item.off)
		}
		i, err := set.lookup("$select", item.text)
		if err != nil {
			return nil, at(err, raw, item.off)
		}
		if !containsInt(sel, i) {
			sel = append(sel, i)
		}
	}
	if star {
		return nil, nil
	}
	return sel, nil
}

// item is one item of an option's comma-separated list: its text, without
// the whitespace around it, and the byte offset where that text begins.
type item struct {
	text string
	off  int
}

// splitItems splits raw at sep, trimming each item's whitespace.
func splitItems(raw string, sep byte) []item {
	var items []item
	start := 0
	for i := 0; i <= len(raw); i++ {
		if i < len(raw) && raw[i] != sep {
			continue
		}
		items = append(items, trimItem(raw[start:i], start))
		start = i + 1
	}
	return items
}

// trimItem returns s, found at byte offset off, without the whitespace
// around it.
func trimItem(s string, off int) item {
	t := httplist.TrimOWS(s)
	if t == "" {
		return item{off: off}
	}
	return item{text: t, off: off + strings.Index(s, t)}
}

// isPath reports whether s is made as OData writes a path of names:
// identifiers, possibly qualified by a namespace, separated by '/'.
func isPath(s string) bool {
	for _, seg := range strings.Split(s, "/") {
		for _, part := range strings.Split(seg, ".") {
			if !isIdentifier(part) {
				return false
			}
		}
	}
	return true
}

func containsInt(s []int, v int) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// lookup returns the index in props of the property named name, or a 400
// for option naming it and suggesting a property that differs only in case.
//
// Outside $select, a masked property is answered as one that does not
// exist: a condition or an order on it would tell its values.
func (s *EntitySet) lookup(option, name string) (int, *failure.Error) {
	hide := option != "$select"
	if i, ok := s.byName[name]; ok && !(hide && s.props[i].masked) {
		return i, nil
	}
	msg := option + ": " + s.def.TypeName + " has no property " + secret.Quote(name)
	for _, p := range s.props {
		if strings.EqualFold(p.name, name) && !(hide && p.masked) {
			msg += "; property names are case-sensitive: did you mean " + p.name + "?"
			break
		}
	}
	return 0, badRequest(option, reasonUnknownProperty, msg)
}

// orderItem is one $orderby item.
type orderItem struct {
	prop int // index in set.props
	desc bool
}

// parseOrderBy parses $orderby: properties, each optionally asc or desc.
// Each item is read as the expression OData's grammar makes it, so that
// ordering by an expression (valid OData) is a 501 and anything else that
// is not a property a 400. Items that restate the set's own order (a
// prefix of it, ascending) are dropped, so that such a request is served
// as a plain one.
func parseOrderBy(raw string, set *EntitySet) ([]orderItem, error) {
	if httplist.TrimOWS(raw) == "" {
		return nil, badRequest("$orderby", reasonEmpty, "$orderby is empty; "+orderByHelp)
	}
	p := &filterParser{src: raw, set: set, option: "$orderby", help: orderByHelp}
	p.next()
	var items []orderItem
	for p.err == nil {
		if p.tok.kind == tokComma || p.tok.kind == tokEOF {
			p.syntax("empty item")
			break
		}
		e := p.or()
		if p.err != nil {
			break
		}
		o := orderItem{prop: e.prop}
		switch e.kind {
		case eProp:
		case eLit:
			p.fail(badRequest, reasonNotProperty, e.pos, "the item at position "+strconv.Itoa(position(raw, e.pos))+
				" is a literal, which orders nothing; "+orderByHelp)
		default:
			p.unsupported(reasonUnsupportedExpression, e.pos, "ordering by an expression (the item at position "+
				strconv.Itoa(position(raw, e.pos))+") is not supported")
		}
		if p.err != nil {
			break
		}
		switch {
		case p.isWord("asc"):
			p.next()
		case p.isWord("desc"):
			o.desc = true
			p.next()
		}
		dup := false
		for _, x := range items {
			dup = dup || x.prop == o.prop
		}
		if !dup { // a second mention orders nothing more
			items = append(items, o)
		}
		if p.tok.kind == tokEOF {
			break
		}
		if p.tok.kind != tokComma {
			p.unexpected("asc or desc, a comma or the end")
			break
		}
		p.next()
	}
	if p.err != nil {
		return nil, p.err
	}
	// The set's own order, or a prefix of it, ascending, is no order of
	// its own.
	own := len(items) <= len(set.def.OrderBy)
	for j, o := range items {
		own = own && !o.desc && set.props[o.prop].name == set.def.OrderBy[j]
	}
	if own {
		return nil, nil
	}
	// The key orders the rows in the end; ordering by it ends the list.
	for j, o := range items {
		if o.prop == set.key && set.keyCol >= 0 && !o.desc {
			return items[:j], nil
		}
	}
	return items, nil
}

// equalities returns e as the equalities of [Query.Filter], or nil when e
// is anything more.
func equalities(e *expr, set *EntitySet) []Eq {
	var eqs []Eq
	var walk func(*expr) bool
	walk = func(e *expr) bool {
		if e.kind == eAnd {
			return walk(e.args[0]) && walk(e.args[1])
		}
		if e.kind != eCmp || e.name != "eq" {
			return false
		}
		l, r := e.args[0], e.args[1]
		if l.kind == eLit {
			l, r = r, l
		}
		if l.kind != eProp || r.kind != eLit || !set.props[l.prop].filter {
			return false
		}
		eq := Eq{Property: set.props[l.prop].name}
		switch v := r.val.(type) {
		case int64:
			if l.typ != tInt || v < 1 {
				return false
			}
			eq.Text, eq.Int = strconv.FormatInt(v, 10), v
		case string:
			if l.typ != tStr {
				return false
			}
			eq.Text = v
		default:
			return false
		}
		for _, x := range eqs {
			if x.Property == eq.Property {
				return x == eq
			}
		}
		eqs = append(eqs, eq)
		return true
	}
	if !walk(e) {
		return nil
	}
	return eqs
}

// ParseCount reads the query options of a request for /Set/$count: $filter
// alone matters; the others a feed accepts are checked and ignored. Errors
// are those of [Parse].
func ParseCount(values url.Values, set *EntitySet) (*Query, error) {
	return Parse(values, set)
}

// ParseKey reads a request for one entity by key, /Set(key): raw is what
// the parentheses hold, a quoted row_id such as '6-7-7' for a synthetic key
// or an integer, and values its query options ($select, $format). A
// malformed key is a 400 naming the form it must have.
func ParseKey(raw string, values url.Values, set *EntitySet) (*Query, error) {
	for name := range values {
		if n := strings.ToLower(name); strings.HasPrefix(n, "$") && n != "$select" && n != "$expand" && n != "$format" {
			return nil, badRequest(n, reasonNotAllowed, "a request by key accepts $select, $expand and $format only")
		}
	}
	q, err := Parse(values, set)
	if err != nil {
		return nil, err
	}
	raw, _ = url.PathUnescape(raw)
	if name, v, ok := strings.Cut(raw, "="); ok && name == set.def.Key {
		raw = v
	}
	var parts []string
	if set.keyCol >= 0 {
		parts = []string{raw}
	} else {
		if len(raw) < 2 || raw[0] != '\'' || raw[len(raw)-1] != '\'' {
			return nil, badRequest("key", reasonBadKey, set.def.Name+"'s key is a quoted "+set.def.Key+" such as '6-7-7': "+
				set.def.Name+"('6-7-7')")
		}
		parts = strings.Split(raw[1:len(raw)-1], "-")
	}
	if len(parts) != set.keyParts() {
		return nil, badRequest("key", reasonBadKey, "the key of "+set.def.Name+" has "+strconv.Itoa(set.keyParts())+" parts")
	}
	for _, part := range parts {
		n, err := strconv.ParseInt(part, 10, 64)
		if err != nil || n < 0 || strconv.FormatInt(n, 10) != part {
			return nil, badRequest("key", reasonBadKey, "the key of "+set.def.Name+" is made of integers of at least 0")
		}
		q.key = append(q.key, n)
	}
	q.order, q.After, q.afterSort = nil, nil, nil
	return q, nil
}

// ReadOptions are the query options that the paths other than the OData
// feed take, with OData's syntax and meaning: see [ParseRead].
var ReadOptions = []string{"$filter", "$orderby", "$select"}

// ParseRead reads the [ReadOptions] of a request for rows of set on a path
// other than the OData feed (the spec's JSON page, the exports, the export
// command): $filter and $orderby as [Parse] reads them, and $select, whose
// properties must be columns (a synthetic key is none). Any other
// $-option is refused, naming it: the feed's own ($top, $skip, $count,
// $skiptoken, $format) with a 400 that says what the path takes instead,
// those informe does not implement with a 501. Options that do not start
// with '$' are the caller's.
func ParseRead(values url.Values, set *EntitySet) (*Query, error) {
	opts, err := systemOptions(values)
	if err != nil {
		return nil, err
	}
	only := url.Values{}
	for _, name := range sortedKeys(opts) {
		switch name {
		case "$filter", "$orderby", "$select":
			only.Set(name, opts[name])
		case "$top", "$skip", "$count", "$skiptoken", "$format", "$expand":
			return nil, badRequest(name, reasonFeedOnly, name+" is an option of the OData feed ("+odataPath(set)+"), not of this path, which takes "+
				strings.Join(ReadOptions, ", ")+" of OData's options")
		default:
			if unsupported[name] {
				return nil, notImplemented(name, reasonUnsupportedOption, name+" is not supported; this path takes "+strings.Join(ReadOptions, ", ")+" of OData's options")
			}
			return nil, badRequest(name, reasonUnknownOption, "unknown query option "+name+"; this path takes "+strings.Join(ReadOptions, ", ")+" of OData's options")
		}
	}
	q, err := Parse(only, set)
	if err != nil {
		return nil, err
	}
	for _, i := range q.sel {
		if set.props[i].col < 0 {
			return nil, badRequest("$select", reasonNotColumn, "$select: "+set.props[i].name+" is the OData key, not a column of this path")
		}
	}
	return q, nil
}

// odataPath is the path of set's feed, for messages.
func odataPath(set *EntitySet) string { return "/odata/" + set.def.Name }

// Columns returns the columns $select chose, in its order, or nil when it
// chose them all (or was absent).
func (q *Query) Columns() []dataset.Column {
	if q.sel == nil {
		return nil
	}
	var cols []dataset.Column
	for _, i := range q.sel {
		if p := q.set.props[i]; p.col >= 0 {
			cols = append(cols, q.set.def.Columns[p.col])
		}
	}
	return cols
}

// Selected reports whether $select was given.
func (q *Query) Selected() bool { return q.selectRaw != "" }
