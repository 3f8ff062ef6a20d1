package odata

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/informe/informe/export"
	"github.com/informe/informe/internal/dataset"
)

// FeedOptions configure [NewFeed].
type FeedOptions struct {
	// ServiceRoot is the absolute URL of the OData service root, without a
	// trailing slash, e.g. "https://informe.example.cl/odata". The context
	// URL and the next link are built on it.
	ServiceRoot string

	// PageSize is the rows of one response, from [PageSize]; 0 means
	// [MaxPageSize]. It must be the size given to [Query.Limit].
	PageSize int

	// Count is the number of rows matching the query's filter, written as
	// @odata.count when the query has $count=true.
	Count int64

	// Format says how numbers are written; see [Negotiate].
	Format Format

	// AccessToken is carried into the next link as the access_token query
	// parameter when the request carried its token there (a client that
	// cannot send headers must be able to follow the link); "" otherwise,
	// and the next link then holds no credential.
	AccessToken string

	// Entity writes the one row of a request by key, /Set(key), as a
	// single entity rather than a feed: {"@odata.context":
	// "<root>/$metadata#Set/$entity","row_id":...}. The store reads at
	// most one row; with none the caller answers 404 before writing.
	Entity bool

	// Location is the time zone of Timestamp values, which carry no
	// offset; nil means UTC, the zone informe's own databases store and
	// render wall-clock times in. Timestamptz values keep the offset they
	// carry.
	Location *time.Location
}

// Feed writes a page of a feed as OData JSON (minimal metadata, streaming
// order):
//
//	{"@odata.context":"<root>/$metadata#GeneralReport","@odata.count":1234,
//	 "value":[{"row_id":"1-1-1","contract_id":1,...},...],
//	 "@odata.nextLink":"<root>/GeneralReport?$skiptoken=..."}
//
// with the context's select list, e.g. #GeneralReport(contract_id,task),
// when the query has $select, @odata.count only for $count=true, and the
// next link only when a further page exists.
//
// Values are typed from the column kinds: Edm.Int64 and Edm.Decimal as
// JSON numbers (strings with IEEE754Compatible), Edm.Date as
// "YYYY-MM-DD", Edm.DateTimeOffset as RFC 3339 ("2024-03-05T14:07:09Z",
// "2024-03-05T14:07:09.123456Z"), Edm.String as a string. Null values: see
// [dataset.EntitySet.EmptyIsNull]. Each entity lists the key property first
// unless $select names it elsewhere, then the selected properties in
// $select order, or all properties in declaration order.
//
// Like encoding/csv.Writer, a Feed buffers its output, keeps the first
// error it meets (from the writer, or from a value that does not fit its
// type, which the column list then misdescribes) and reports it from Encode
// and Close. In the steady state Encode does not allocate. It implements
// export.Encoder. A Feed is not safe for concurrent use.
type Feed struct {
	w        *export.Output
	q        *Query
	opts     FeedOptions
	out      []outProp
	expand   []feedExpansion
	rowLen   int   // values per row: the columns, a synthetic key's parts, the expansions, the sort values
	pageRows int64 // rows of this page
	peek     bool  // the store reads one row beyond the page
	header   []byte

	scratch []byte
	rows    int64 // rows written
	more    bool  // a row beyond the page arrived: write a next link
	last    [maxKeyParts]int64
	// lastSort are the last row's sort values ([dataset.Query.Position]), nil for
	// null, held in sortBuf.
	lastSort [][]byte
	sortBuf  []byte
}

// outProp is a property as a Feed writes it.
type outProp struct {
	name      []byte // `"name":`
	col       int    // index of the value in a row; -1 for the synthetic key
	kind      dataset.Kind
	nullable  bool // a nil value is null
	emptyNull bool // an empty value is null
}

// errClosed is the error of a Feed's calls after Close.
var errClosed = errors.New("odata: feed closed")

// FeedSpec is what [NewFeed] needs besides the writer.
type FeedSpec struct {
	Query   *Query
	Options FeedOptions
}

// NewEncoder returns the feed of s writing to w.
func (s FeedSpec) NewEncoder(w io.Writer) (export.Encoder, error) {
	return NewFeed(w, s.Query, s.Options), nil
}

// NewFeed returns a Feed writing the page q asks for to w. The rows given
// to its Encode method must be those the store read for q: matching
// q.Filter, after q.After, q.Skip rows skipped, in key order, at most
// q.Limit(opts.PageSize) of them.
func NewFeed(w io.Writer, q *Query, opts FeedOptions) *Feed {
	set := q.set
	f := &Feed{
		w:        export.NewOutput(w, errClosed),
		q:        q,
		opts:     opts,
		rowLen:   len(set.def.Columns),
		pageRows: pageRows(opts.PageSize),
		scratch:  make([]byte, 0, 4096),
	}
	if set.keyCol < 0 {
		f.rowLen += len(set.def.RowKey)
	}
	f.rowLen += len(q.expand) + len(q.order)
	if q.Top >= 0 && q.Top < f.pageRows {
		f.pageRows = q.Top
	}
	f.peek = q.Limit(opts.PageSize) > f.pageRows

	props := q.sel
	if props == nil {
		props = make([]int, len(set.props))
		for i := range props {
			props[i] = i
		}
	} else if !containsInt(props, set.key) {
		props = append([]int{set.key}, props...)
	}
	for _, i := range props {
		p := set.props[i]
		o := outProp{
			name:      append(export.AppendJSONString(nil, []byte(p.name)), ':'),
			col:       p.col,
			kind:      p.kind,
			nullable:  p.nullable,
			emptyNull: p.nullable && set.def.EmptyIsNull,
		}
		f.out = append(f.out, o)
	}

	for i := range q.expand {
		f.expand = append(f.expand, newFeedExpansion(&q.expand[i]))
	}

	ctx := opts.ServiceRoot + "/$metadata#" + set.def.Name
	if q.sel != nil || q.expand != nil {
		var names []string
		for _, p := range q.sel {
			names = append(names, set.props[p].name)
		}
		if q.sel == nil {
			names = append(names, "*")
		}
		for i := range q.expand {
			names = append(names, q.expand[i].contextItem())
		}
		ctx += "(" + strings.Join(names, ",") + ")"
	}
	if opts.Entity {
		ctx += "/$entity"
		f.header = append(append([]byte(`{"@odata.context":`), export.AppendJSONString(nil, []byte(ctx))...), ',')
		f.pageRows = 1
		f.peek = false
		return f
	}
	h := append([]byte(`{"@odata.context":`), export.AppendJSONString(nil, []byte(ctx))...)
	if q.Count {
		h = append(h, `,"@odata.count":`...)
		h = f.appendNumber(h, strconv.AppendInt(nil, opts.Count, 10))
	}
	f.header = append(h, `,"value":[`...)
	return f
}

// Rows returns the number of entities written so far.
func (f *Feed) Rows() int64 { return f.rows }

// Encode writes one row as an entity: a value per column, in column order,
// as text in the API's formats (nil for NULL), followed, for a set with a
// synthetic key, by the key's parts (see [dataset.EntitySet.RowKey]), then by
// one JSON value per item of $expand ([Query.Expansions]), then, under a
// $orderby, by its sort values ([dataset.Query.Position]). A row
// beyond the page is not written: it tells Close to write the next link.
// Encode does not retain row. It returns the Feed's first error: from the
// writer, a row of the wrong length, or a value that does not fit its
// property's type.
func (f *Feed) Encode(row [][]byte) error {
	if err := f.w.Err(); err != nil {
		return err
	}
	if len(row) != f.rowLen {
		return f.w.Fail(fmt.Errorf("odata: row has %d values, want %d", len(row), f.rowLen))
	}
	if f.rows >= f.pageRows {
		f.more = f.more || f.peek
		return nil
	}
	set := f.q.set
	var key [maxKeyParts]int64
	if set.keyCol >= 0 {
		v, ok := parseInt(row[set.keyCol])
		if !ok {
			return f.w.Fail(fmt.Errorf("odata: key %s is %q, not an integer", set.def.Key, row[set.keyCol]))
		}
		key[0] = v
	} else {
		for i := range set.def.RowKey {
			v := row[len(set.def.Columns)+i]
			if len(v) == 0 {
				continue // absent: 0
			}
			n, ok := parseInt(v)
			if !ok {
				return f.w.Fail(fmt.Errorf("odata: key part %s is %q, not an integer", set.def.RowKey[i], v))
			}
			key[i] = n
		}
	}

	b := f.scratch[:0]
	switch {
	case f.opts.Entity:
		b = append(b, f.header...)
	case f.rows == 0:
		b = append(b, f.header...)
		b = append(b, '{')
	default:
		b = append(b, ',', '{')
	}
	for i := range f.out {
		p := &f.out[i]
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, p.name...)
		if p.col < 0 {
			b = appendRowID(b, key[:len(set.def.RowKey)])
			continue
		}
		var ok bool
		if b, ok = f.appendValue(b, p, row[p.col]); !ok {
			return f.w.Fail(valueError(p, row[p.col]))
		}
	}
	if len(f.expand) > 0 {
		at := len(set.def.Columns)
		if set.keyCol < 0 {
			at += len(set.def.RowKey)
		}
		for i := range f.expand {
			var err error
			if b, err = f.appendExpansion(b, &f.expand[i], row[at+i]); err != nil {
				return f.w.Fail(err)
			}
		}
	}
	if !f.opts.Entity {
		b = append(b, '}')
	}
	f.scratch = b
	f.rows++
	f.last = key
	if n := len(f.q.order); n > 0 {
		f.sortBuf, f.lastSort = f.sortBuf[:0], f.lastSort[:0]
		for _, v := range row[len(row)-n:] {
			f.sortBuf = append(f.sortBuf, v...)
		}
		off := 0
		for _, v := range row[len(row)-n:] {
			if v == nil {
				f.lastSort = append(f.lastSort, nil)
				continue
			}
			f.lastSort = append(f.lastSort, f.sortBuf[off:off+len(v):off+len(v)])
			off += len(v)
		}
	}
	return f.w.Write(b)
}

// valueError is the error for a value v that does not fit property p.
func valueError(p *outProp, v []byte) error {
	name := p.name[1 : len(p.name)-2]
	if v == nil {
		return fmt.Errorf("odata: property %s is null but not nullable", name)
	}
	return fmt.Errorf("odata: property %s: %q is not a valid %s value", name, v, EDMType(p.kind))
}

// appendRowID appends the synthetic key "<a>-<b>-<c>" as a JSON string.
func appendRowID(b []byte, parts []int64) []byte {
	b = append(b, '"')
	for i, k := range parts {
		if i > 0 {
			b = append(b, '-')
		}
		b = strconv.AppendInt(b, k, 10)
	}
	return append(b, '"')
}

// appendValue appends v, the text of a value of p, as JSON. ok is false
// when v does not fit p's type.
func (f *Feed) appendValue(b []byte, p *outProp, v []byte) ([]byte, bool) {
	if v == nil {
		return append(b, "null"...), p.nullable
	}
	if len(v) == 0 {
		if p.emptyNull {
			return append(b, "null"...), true
		}
		if p.kind == dataset.Text {
			return append(b, `""`...), true
		}
		return b, false
	}
	switch p.kind {
	case dataset.Integer:
		if _, ok := parseInt(v); !ok {
			return b, false
		}
		return f.appendNumber(b, v), true
	case dataset.Decimal:
		if !isDecimal(v) {
			return b, false
		}
		return f.appendNumber(b, v), true
	case dataset.Date:
		if len(v) != 10 || !isDate(v) {
			return b, false
		}
		b = append(b, '"')
		b = append(b, v...)
		return append(b, '"'), true
	case dataset.Timestamp:
		return appendTimestamp(b, v, f.opts.Location, false)
	case dataset.Timestamptz:
		return appendTimestamp(b, v, nil, true)
	}
	return export.AppendJSONString(b, v), true
}

// appendNumber appends the digits of a number, quoted when the format is
// IEEE754Compatible.
func (f *Feed) appendNumber(b, digits []byte) []byte {
	if f.opts.Format.IEEE754Compatible {
		b = append(b, '"')
		b = append(b, digits...)
		return append(b, '"')
	}
	return append(b, digits...)
}

// Flush writes the entities encoded so far to the writer and returns the
// Feed's error.
func (f *Feed) Flush() error { return f.w.Flush() }

// Close finishes the page, with the next link when a row beyond it
// arrived, flushes it to the writer and returns the Feed's first error.
// It does not close the writer. Later calls return the first call's result;
// Encode after Close returns an error.
func (f *Feed) Close() error {
	return f.w.Close(func() error {
		if f.opts.Entity {
			return f.w.Write([]byte{'}'})
		}
		b := f.scratch[:0]
		if f.rows == 0 {
			b = append(b, f.header...)
		}
		b = append(b, ']')
		if f.more {
			b = append(b, `,"@odata.nextLink":`...)
			b = export.AppendJSONString(b, []byte(f.nextLink()))
		}
		b = append(b, '}')
		return f.w.Write(b)
	})
}

// nextLink returns the URL of the page after this one: the same $filter,
// $select, $orderby, $count and $format, the rest of $top, no $skip (the
// skip token is past it), and a $skiptoken after the last row written.
func (f *Feed) nextLink() string {
	q, set := f.q, f.q.set
	var b strings.Builder
	b.WriteString(f.opts.ServiceRoot + "/" + set.def.Name)
	sep := byte('?')
	add := func(name, value string) {
		b.WriteByte(sep)
		sep = '&'
		b.WriteString(name)
		b.WriteByte('=')
		b.WriteString(escapeQueryValue(value))
	}
	if q.filter != "" {
		add("$filter", q.filter)
	}
	if q.selectRaw != "" {
		add("$select", q.selectRaw)
	}
	if q.orderby != "" {
		add("$orderby", q.orderby)
	}
	if q.expandRaw != "" {
		add("$expand", q.expandRaw)
	}
	if q.Count {
		add("$count", "true")
	}
	if q.format != "" {
		add("$format", q.format)
	}
	top := int64(-1)
	if q.Top >= 0 {
		top = q.Top - f.rows
		add("$top", strconv.FormatInt(top, 10))
	}
	add("$skiptoken", string(appendSkipToken(nil, set, q.order, q.binding(top, 0), f.lastSort, f.last[:set.keyParts()])))
	if f.opts.AccessToken != "" {
		add("access_token", f.opts.AccessToken)
	}
	return b.String()
}

// escapeQueryValue percent-encodes v for a query parameter value. It
// leaves the characters OData expressions are made of that are safe in a
// query (unreserved ones and ,'()*:@/!$) as they are, for readable links,
// and encodes the rest, space as %20 (clients need not read '+' as a
// space) and ';' too (Go's URL parser drops parameters holding one).
func escapeQueryValue(v string) string {
	const hex = "0123456789ABCDEF"
	var b strings.Builder
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9',
			strings.IndexByte("-._~,'()*:@/!$", c) >= 0:
			b.WriteByte(c)
		default:
			b.WriteByte('%')
			b.WriteByte(hex[c>>4])
			b.WriteByte(hex[c&0xf])
		}
	}
	return b.String()
}

// parseInt parses a base-10 int64 as PostgreSQL writes one: an optional
// '-', then digits without leading zeros. The result is also a valid JSON
// number.
func parseInt(v []byte) (int64, bool) {
	d := v
	if len(d) > 0 && d[0] == '-' {
		d = d[1:]
	}
	if len(d) == 0 || d[0] == '+' || (d[0] == '0' && len(d) > 1) {
		return 0, false
	}
	return dataset.ParseValue(dataset.Integer, v)
}

// isDecimal reports whether v is a decimal as PostgreSQL writes a numeric,
// which is also a valid JSON number: [-]digits[.digits], no leading zeros.
func isDecimal(v []byte) bool {
	if len(v) > 0 && v[0] == '-' {
		v = v[1:]
	}
	intPart, frac := v, []byte(nil)
	for i, c := range v {
		if c == '.' {
			intPart, frac = v[:i], v[i+1:]
			if len(frac) == 0 {
				return false
			}
			break
		}
	}
	if len(intPart) == 0 || (intPart[0] == '0' && len(intPart) > 1) {
		return false
	}
	return allDigits(intPart) && allDigits(frac)
}

func allDigits(v []byte) bool {
	for _, c := range v {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// isDate reports whether v is "YYYY-MM-DD" with a month from 01 to 12 and
// a day from 01 to 31.
func isDate(v []byte) bool {
	if len(v) != 10 || v[4] != '-' || v[7] != '-' ||
		!allDigits(v[:4]) || !allDigits(v[5:7]) || !allDigits(v[8:]) {
		return false
	}
	m, d := num2(v[5:]), num2(v[8:])
	return m >= 1 && m <= 12 && d >= 1 && d <= 31
}

func num2(v []byte) int { return int(v[0]-'0')*10 + int(v[1]-'0') }

// appendTimestamp appends v, "YYYY-MM-DD HH:MM:SS[.f...]" followed, when
// withOffset, by an offset "+HH", "+HH:MM" or "+HH:MM:SS" (PostgreSQL's
// forms; "-" too), as an RFC 3339 JSON string. Without an offset in v the
// offset is loc's at that wall-clock time (UTC when loc is nil; in a
// daylight-saving gap or overlap time.Date picks one). Offsets are written
// to the minute, as RFC 3339 has them; 0 is written "Z".
// maxOffset is the largest UTC offset, in seconds, that a timestamp of
// the feed may carry: 18 hours.
const maxOffset = 18 * 3600

func appendTimestamp(b, v []byte, loc *time.Location, withOffset bool) ([]byte, bool) {
	if len(v) < 19 || !isDate(v[:10]) || (v[10] != ' ' && v[10] != 'T') ||
		v[13] != ':' || v[16] != ':' || !allDigits(v[11:13]) || !allDigits(v[14:16]) || !allDigits(v[17:19]) {
		return b, false
	}
	hh, mm, ss := num2(v[11:]), num2(v[14:]), num2(v[17:])
	if hh > 23 || mm > 59 || ss > 59 {
		return b, false
	}
	end := 19
	if end < len(v) && v[end] == '.' {
		end++
		for end < len(v) && v[end] >= '0' && v[end] <= '9' {
			end++
		}
		if end == 20 {
			return b, false
		}
	}
	var offset int // seconds east of UTC
	if withOffset {
		o, ok := dataset.ParseOffset(v[end:])
		if !ok || o > maxOffset || o < -maxOffset {
			return b, false
		}
		offset = o
	} else {
		if end != len(v) {
			return b, false
		}
		if loc != nil && loc != time.UTC {
			y := int(v[0]-'0')*1000 + int(v[1]-'0')*100 + num2(v[2:])
			t := time.Date(y, time.Month(num2(v[5:])), num2(v[8:]), hh, mm, ss, 0, loc)
			_, offset = t.Zone()
		}
	}
	b = append(b, '"')
	b = append(b, v[:10]...)
	b = append(b, 'T')
	b = append(b, v[11:end]...)
	if offset/60 == 0 {
		b = append(b, 'Z')
	} else {
		sign := byte('+')
		if offset < 0 {
			sign, offset = '-', -offset
		}
		h, m := offset/3600, offset%3600/60
		b = append(b, sign, byte('0'+h/10), byte('0'+h%10), ':', byte('0'+m/10), byte('0'+m%10))
	}
	return append(b, '"'), true
}
