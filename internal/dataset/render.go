// This file writes PostgreSQL's typed values, as they come off the
// wire (pgx's raw values and the result's field descriptions, in binary or
// text format), as the API's text ([Row]): byte for byte what the SQL text views
// (general_report, user_list, the *_list views of the grains) write with
// x::text, trim_scale(x)::text and to_char. It owns that rendering and the
// check, once per result, that each field's type can hold its column's
// kind. It decodes the bytes itself, with no allocation per row.

package dataset

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"
)

// op is how one field's bytes become the API's text.
type op uint8

const (
	opText            op = iota // text-like, either format: the bytes as they are
	opJSONB                     // jsonb in binary: the text after its version byte
	opInt2                      // int2 in binary
	opInt4                      // int4 in binary
	opInt8                      // int8 in binary
	opIntText                   // an integer in text: checked, as it is
	opNumeric                   // numeric in binary: trim_scale(x)::text
	opNumericText               // numeric in text: trailing fractional zeros cut
	opDate                      // date in binary: to_char(d, 'YYYY-MM-DD')
	opDateText                  // date in text (DateStyle ISO)
	opTimestamp                 // timestamp in binary: to_char(x, 'YYYY-MM-DD HH24:MI:SS')
	opTimestampText             // timestamp in text (DateStyle ISO)
	opTimestamptz               // timestamptz in binary: UTC with microseconds and +00
	opTimestamptzText           // timestamptz in text (DateStyle ISO), any offset
)

// field is what Render needs of one field.
type field struct {
	op       op
	kind     Kind   // its column's; Text for a pass-through field
	nullable bool   // NULL stays nil; otherwise it is written as ""
	name     string // for errors
	// A date or timestamp's last value, as its binary form and as
	// written: a contract's dates repeat on each of its rows, and finding
	// the civil date is most of their cost.
	memoOK  bool
	memoKey uint64
	memo    []byte
}

// Row renders rows of one result. It keeps one buffer for the values it
// writes, so it serves one reader of rows at a time.
type Row struct {
	era   bool // see KeepEra
	typed bool // see Typed
	// typedText says that some typed column is read in text format, whose
	// text Typed parses (typeText).
	typedText bool
	fields    []field
	out       [][]byte
	buf       []byte
	tbuf      []byte // typed values made from text (see Typed)
	// start and end place each written value in buf; start is -1 for a
	// value handed on as it came (or nil), which out already holds.
	start, end []int
}

// empty is the non-NULL empty value: what coalesce(x, ”) writes for NULL.
var empty = []byte{}

// New returns the renderer of a result whose first len(cols) fields hold
// cols' values and whose further fields are passed through as text (keys
// and sort values as text, JSON). It checks once that each field's type can
// hold its column's kind, and returns an error naming the column and the
// type it got when it cannot, or naming a pass-through field that is not
// text, varchar, bpchar, name, json or jsonb.
func NewRow(cols []Column, fields []pgconn.FieldDescription) (*Row, error) {
	if len(fields) < len(cols) {
		return nil, fmt.Errorf("render: %d columns but only %d fields", len(cols), len(fields))
	}
	r := &Row{
		fields: make([]field, len(fields)),
		out:    make([][]byte, len(fields)),
		start:  make([]int, len(fields)),
		end:    make([]int, len(fields)),
	}
	for i, f := range fields {
		var o op
		var ok bool
		if i < len(cols) {
			c := cols[i]
			o, ok = opFor(c.Kind, f.DataTypeOID, f.Format)
			if !ok {
				return nil, fmt.Errorf("render: column %s (%s) cannot be read from a %s field (%s)", c.Name, c.Kind, typeName(f.DataTypeOID), formatName(f.Format))
			}
			r.fields[i] = field{op: o, kind: c.Kind, nullable: c.Nullable, name: c.Name}
			continue
		}
		o, ok = passOp(f.DataTypeOID, f.Format)
		if !ok {
			return nil, fmt.Errorf("render: field %s after the columns is passed through as text, but it is a %s (%s)", f.Name, typeName(f.DataTypeOID), formatName(f.Format))
		}
		r.fields[i] = field{op: o, kind: Text, nullable: true, name: f.Name}
	}
	return r, nil
}

// Pass makes Render hand on field i's bytes as they came, unchecked and
// unwritten: for a field read only for its bytes (the hidden ids by which
// the store withholds a person's values, which it reads raw and strips).
func (r *Row) Pass(i int) {
	r.fields[i] = field{op: opText, kind: Text, nullable: true, name: r.fields[i].name}
}

const (
	textFormat   = pgtype.TextFormatCode
	binaryFormat = pgtype.BinaryFormatCode
)

// opFor returns how a field of type oid in format renders a column of kind.
func opFor(kind Kind, oid uint32, format int16) (op, bool) {
	if format != textFormat && format != binaryFormat {
		return 0, false
	}
	bin := format == binaryFormat
	switch kind {
	case Text:
		return opText, isText(oid)
	case Integer:
		return intOp(oid, bin)
	case Decimal:
		if oid == pgtype.NumericOID {
			if bin {
				return opNumeric, true
			}
			return opNumericText, true
		}
		return intOp(oid, bin)
	case Date:
		return pick(bin, opDate, opDateText), oid == pgtype.DateOID
	case Timestamp:
		return pick(bin, opTimestamp, opTimestampText), oid == pgtype.TimestampOID
	case Timestamptz:
		return pick(bin, opTimestamptz, opTimestamptzText), oid == pgtype.TimestamptzOID
	}
	return 0, false
}

func intOp(oid uint32, bin bool) (op, bool) {
	if !bin {
		return opIntText, oid == pgtype.Int2OID || oid == pgtype.Int4OID || oid == pgtype.Int8OID
	}
	switch oid {
	case pgtype.Int2OID:
		return opInt2, true
	case pgtype.Int4OID:
		return opInt4, true
	case pgtype.Int8OID:
		return opInt8, true
	}
	return 0, false
}

// passOp returns how a pass-through field of type oid in format is handed on.
func passOp(oid uint32, format int16) (op, bool) {
	switch {
	case format != textFormat && format != binaryFormat:
		return 0, false
	case isText(oid) || oid == pgtype.JSONOID:
		return opText, true
	case oid == pgtype.JSONBOID:
		return pick(format == binaryFormat, opJSONB, opText), true
	}
	return 0, false
}

// isText reports whether oid is a type whose binary form is its text.
func isText(oid uint32) bool {
	switch oid {
	case pgtype.TextOID, pgtype.VarcharOID, pgtype.BPCharOID, pgtype.NameOID:
		return true
	}
	return false
}

func pick(bin bool, b, t op) op {
	if bin {
		return b
	}
	return t
}

var typeNames = map[uint32]string{
	pgtype.BoolOID: "boolean", pgtype.ByteaOID: "bytea", pgtype.NameOID: "name",
	pgtype.Int8OID: "int8", pgtype.Int2OID: "int2", pgtype.Int4OID: "int4",
	pgtype.TextOID: "text", pgtype.OIDOID: "oid", pgtype.JSONOID: "json",
	pgtype.Float4OID: "float4", pgtype.Float8OID: "float8", pgtype.BPCharOID: "bpchar",
	pgtype.VarcharOID: "varchar", pgtype.DateOID: "date", pgtype.TimeOID: "time",
	pgtype.TimestampOID: "timestamp", pgtype.TimestamptzOID: "timestamptz",
	pgtype.IntervalOID: "interval", pgtype.NumericOID: "numeric", pgtype.UUIDOID: "uuid",
	pgtype.JSONBOID: "jsonb",
}

func typeName(oid uint32) string {
	if n, ok := typeNames[oid]; ok {
		return n
	}
	return "type with OID " + strconv.FormatUint(uint64(oid), 10)
}

func formatName(format int16) string {
	switch format {
	case textFormat:
		return "text format"
	case binaryFormat:
		return "binary format"
	}
	return "format " + strconv.Itoa(int(format))
}

// KeepEra makes dates and timestamps before Christ end with " BC", as
// PostgreSQL's own ISO output writes them. to_char, and so the API's text,
// writes such a year without its era ("0044-03-15" for 44 BC), which a
// reader of typed values (Parquet, Arrow) would take for a year after
// Christ; with the era it can write the right day.
func (r *Row) KeepEra() { r.era = true }

// Typed makes Render write the columns' values typed, as the typed
// formats take them (see [AppendValue] and export.Options.Binary),
// not as text: a column of kind Integer, Decimal, Date, Timestamp or
// Timestamptz gets the binary value of what its text would be (its value
// read from the wire, or, in text format, the text KeepEra writes,
// parsed), and Text columns and pass-through fields their text. NULL and
// an infinite date or timestamp are nil or empty as with text. A decimal
// the typed formats do not hold (more than DecimalPrecision digits
// or DecimalScale decimals) is an error naming its column.
func (r *Row) Typed() {
	r.typed, r.era = true, true
	for _, f := range r.fields {
		r.typedText = r.typedText || typedFromText(&f)
	}
}

// Render returns the row's values as the API's text, one per field: a
// column's as its text view writes it, a pass-through field's as it came.
// NULL (and an infinite date or timestamp, which to_char writes as NULL) is
// nil in a Nullable column and a pass-through field, an empty non-nil value
// in other columns. The result and its byte slices are valid until the next
// call to Render; values that need no change are raw's own. An error names
// the column and what was wrong with its bytes.
func (r *Row) Render(raw [][]byte) ([][]byte, error) {
	if len(raw) != len(r.fields) {
		return nil, fmt.Errorf("render: %d values for %d fields", len(raw), len(r.fields))
	}
	if r.typed && !r.typedText {
		return r.renderTyped(raw)
	}
	r.buf = r.buf[:0]
	copied := false
	for i, v := range raw {
		f := &r.fields[i]
		r.start[i] = -1
		if v == nil {
			r.out[i] = r.null(f)
			continue
		}
		if r.typed && f.kind != Text && binaryOp(f.op) {
			s := len(r.buf)
			n, null, err := typedValue(f, v)
			switch {
			case err != nil:
				return nil, r.bad(f, v, err.Error())
			case null:
				r.out[i] = r.null(f)
			default:
				r.buf = AppendValue(r.buf, f.kind, n)
				r.start[i], r.end[i] = s, len(r.buf)
				copied = true
			}
			continue
		}
		switch f.op {
		case opText:
			r.out[i] = v
			continue
		case opJSONB:
			if len(v) == 0 || v[0] != 1 {
				return nil, r.bad(f, v, "jsonb in binary format must start with version 1")
			}
			r.out[i] = v[1:]
			continue
		case opIntText:
			if !isInteger(v) {
				return nil, r.bad(f, v, "not a base-10 integer")
			}
			r.out[i] = v
			continue
		case opNumericText:
			t, ok := trimNumeric(v)
			if !ok {
				return nil, r.bad(f, v, "not a numeric in PostgreSQL's text output")
			}
			r.out[i] = t
			continue
		case opDateText, opTimestampText:
			text := dateText
			if f.op == opTimestampText {
				text = timestampText
			}
			t, null, err := text(v)
			switch {
			case err != nil:
				return nil, r.bad(f, v, err.Error())
			case null:
				r.out[i] = r.null(f)
			case r.era && len(v) > 3 && hasBC(v[len(v)-3:]):
				s := len(r.buf)
				r.buf = append(append(r.buf, t...), bc...)
				r.start[i], r.end[i] = s, len(r.buf)
				copied = true
			default:
				r.out[i] = t
			}
			continue
		}
		// The rest write into buf.
		s := len(r.buf)
		var err error
		null := false
		key, memo := memoKey(f.op, v)
		if memo {
			if f.memoOK && key == f.memoKey {
				r.buf = append(r.buf, f.memo...)
				r.start[i], r.end[i] = s, len(r.buf)
				copied = true
				continue
			}
		}
		switch f.op {
		case opInt2:
			if len(v) != 2 {
				err = errLength(2, len(v))
				break
			}
			r.buf = strconv.AppendInt(r.buf, int64(int16(binary.BigEndian.Uint16(v))), 10)
		case opInt4:
			if len(v) != 4 {
				err = errLength(4, len(v))
				break
			}
			r.buf = strconv.AppendInt(r.buf, int64(int32(binary.BigEndian.Uint32(v))), 10)
		case opInt8:
			if len(v) != 8 {
				err = errLength(8, len(v))
				break
			}
			r.buf = strconv.AppendInt(r.buf, int64(binary.BigEndian.Uint64(v)), 10)
		case opNumeric:
			r.buf, err = appendNumeric(r.buf, v)
		case opDate:
			r.buf, null, err = appendDate(r.buf, v)
			if r.era && !null && err == nil && int32(binary.BigEndian.Uint32(v)) < firstADDay {
				r.buf = append(r.buf, bc...)
			}
		case opTimestamp, opTimestamptz:
			r.buf, null, err = appendTimestamp(r.buf, v, f.op == opTimestamptz)
			if r.era && !null && err == nil && int64(binary.BigEndian.Uint64(v)) < int64(firstADDay)*usPerDay {
				r.buf = append(r.buf, bc...)
			}
		case opTimestamptzText:
			var before bool
			r.buf, null, before, err = appendTimestamptzText(r.buf, v)
			if r.era && before && !null && err == nil {
				r.buf = append(r.buf, bc...)
			}
		}
		if err != nil {
			return nil, r.bad(f, v, err.Error())
		}
		if null {
			r.buf = r.buf[:s]
			r.out[i] = r.null(f)
			continue
		}
		if memo {
			f.memo = append(f.memo[:0], r.buf[s:]...)
			f.memoKey, f.memoOK = key, true
		}
		r.start[i], r.end[i] = s, len(r.buf)
		copied = true
	}
	if copied {
		for i, s := range r.start {
			if s >= 0 {
				r.out[i] = r.buf[s:r.end[i]:r.end[i]]
			}
		}
	}
	if r.typedText {
		if err := r.typeText(); err != nil {
			return nil, err
		}
	}
	return r.out, nil
}

// renderTyped is Render for Typed when every typed column is read in
// binary: text and pass-through fields as they came (jsonb without its
// version byte), the others' binary values written into buf, which holds
// 8 bytes for each field, so that it never moves.
func (r *Row) renderTyped(raw [][]byte) ([][]byte, error) {
	if cap(r.buf) < 8*len(raw) {
		r.buf = make([]byte, 0, 8*len(raw))
	}
	b := r.buf[:0]
	for i, v := range raw {
		f := &r.fields[i]
		switch {
		case v == nil:
			r.out[i] = r.null(f)
		case f.op == opText:
			r.out[i] = v
		case f.op == opJSONB:
			if len(v) == 0 || v[0] != 1 {
				return nil, r.bad(f, v, "jsonb in binary format must start with version 1")
			}
			r.out[i] = v[1:]
		default:
			n, null, err := typedValue(f, v)
			if err != nil {
				return nil, r.bad(f, v, err.Error())
			}
			if null {
				r.out[i] = r.null(f)
				continue
			}
			s := len(b)
			b = AppendValue(b, f.kind, n)
			r.out[i] = b[s:len(b):len(b)]
		}
	}
	r.buf = b
	return r.out, nil
}

// typedFromText reports whether f is a typed column read in text format,
// whose text Typed parses.
func typedFromText(f *field) bool { return f.kind != Text && !binaryOp(f.op) }

// typeText replaces the text Render wrote of the typed columns read in
// text format by their binary values (see Typed), written into tbuf,
// which holds 8 bytes for each field, so that it never moves.
func (r *Row) typeText() error {
	if cap(r.tbuf) < 8*len(r.fields) {
		r.tbuf = make([]byte, 0, 8*len(r.fields))
	}
	b := r.tbuf[:0]
	for i := range r.fields {
		f := &r.fields[i]
		if !typedFromText(f) || len(r.out[i]) == 0 {
			continue
		}
		n, ok := ParseValue(f.kind, r.out[i])
		if !ok {
			return r.bad(f, r.out[i], "not a value the typed formats hold")
		}
		s := len(b)
		b = AppendValue(b, f.kind, n)
		r.out[i] = b[s:len(b):len(b)]
	}
	r.tbuf = b
	return nil
}

// memoKey returns v, a binary date's 4 bytes or a timestamp's 8, as one
// number, the key of its field's memo; memo is false for other fields and
// for a value of the wrong length (an error).
func memoKey(o op, v []byte) (key uint64, memo bool) {
	switch {
	case o == opDate && len(v) == 4:
		return uint64(binary.BigEndian.Uint32(v)), true
	case (o == opTimestamp || o == opTimestamptz) && len(v) == 8:
		return binary.BigEndian.Uint64(v), true
	}
	return 0, false
}

func (r *Row) null(f *field) []byte {
	if f.nullable {
		return nil
	}
	return empty
}

// bad is the error of a value whose bytes f cannot read; it shows at most
// the first 32 bytes of them.
func (r *Row) bad(f *field, v []byte, what string) error {
	shown := v
	if len(shown) > 32 {
		shown = shown[:32]
	}
	return fmt.Errorf("render: column %s: %s (value %q)", f.name, what, shown)
}

func errLength(want, got int) error {
	return fmt.Errorf("binary value of %d bytes, want %d", got, want)
}

// isInteger reports whether v is an optional minus and base-10 digits, as
// PostgreSQL writes an integer.
func isInteger(v []byte) bool {
	if len(v) > 0 && v[0] == '-' {
		v = v[1:]
	}
	if len(v) == 0 || len(v) > 19 {
		return false
	}
	for _, c := range v {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// trimNumeric returns numeric text output with trim_scale's result: the
// fraction's trailing zeros cut, and its point when nothing is left of it.
// It is a slice of v.
func trimNumeric(v []byte) ([]byte, bool) {
	switch string(v) {
	case "NaN", "Infinity", "-Infinity":
		return v, true
	}
	digits := v
	if len(digits) > 0 && digits[0] == '-' {
		digits = digits[1:]
	}
	point := -1
	for i, c := range digits {
		if c == '.' && point < 0 && i > 0 {
			point = i
		} else if c < '0' || c > '9' {
			return nil, false
		}
	}
	if len(digits) == 0 {
		return nil, false
	}
	if point < 0 {
		return v, true
	}
	if point == len(digits)-1 {
		return nil, false
	}
	end := len(v)
	for v[end-1] == '0' {
		end--
	}
	if v[end-1] == '.' {
		end--
	}
	return v[:end:end], true
}

// Numeric's binary sign words.
const (
	numericPos  = 0x0000
	numericNeg  = 0x4000
	numericNaN  = 0xC000
	numericPInf = 0xD000
	numericNInf = 0xF000
)

// appendNumeric appends trim_scale(x)::text of numeric x in binary format:
// ndigits, weight, sign and dscale (16 bits each), then ndigits base-10000
// digits, the first weighing 10000^weight.
func appendNumeric(b, v []byte) ([]byte, error) {
	n, weight, sign, err := numericHeader(v)
	if err != nil {
		return b, err
	}
	switch sign {
	case numericNaN:
		return append(b, "NaN"...), nil
	case numericPInf:
		return append(b, "Infinity"...), nil
	case numericNInf:
		return append(b, "-Infinity"...), nil
	case numericPos, numericNeg:
	default:
		return b, fmt.Errorf("binary numeric with sign word %#04x", sign)
	}
	d := v[8:]
	digit := func(i int) int { // the i-th base-10000 digit, 0 past the stored ones
		if i < 0 || i >= n {
			return 0
		}
		return int(binary.BigEndian.Uint16(d[2*i:]))
	}
	for i := 0; i < n; i++ {
		if digit(i) > 9999 {
			return b, fmt.Errorf("binary numeric digit %d is past 9999", digit(i))
		}
	}
	// Skip leading zero digits, which PostgreSQL does not store but a
	// sender could.
	first := 0
	for first < n && digit(first) == 0 {
		first++
	}
	// Drop trailing zero digits: trim_scale.
	last := n - 1
	for last >= first && digit(last) == 0 {
		last--
	}
	if first > last {
		return append(b, '0'), nil
	}
	if sign == numericNeg {
		b = append(b, '-')
	}
	// Digit i weighs 10000^(weight-i).
	if weight-first < 0 {
		b = append(b, '0')
	} else {
		b = strconv.AppendInt(b, int64(digit(first)), 10)
		for i := first + 1; i <= weight; i++ {
			b = append4(b, digit(i))
		}
	}
	fracFirst := weight + 1 // the index of the first digit after the point
	if last < fracFirst {
		return b, nil
	}
	b = append(b, '.')
	for i := fracFirst; i < last; i++ {
		b = append4(b, digit(i))
	}
	// The last digit without its trailing zeros.
	x := digit(last)
	w := 4
	for x%10 == 0 {
		x /= 10
		w--
	}
	for p := w - 1; p >= 0; p-- {
		b = append(b, byte('0'+x/pow10[p]%10))
	}
	return b, nil
}

var pow10 = [...]int{1, 10, 100, 1000}

func append4(b []byte, x int) []byte {
	return append(b, byte('0'+x/1000), byte('0'+x/100%10), byte('0'+x/10%10), byte('0'+x%10))
}

func append2(b []byte, x int) []byte {
	return append(b, byte('0'+x/10), byte('0'+x%10))
}

// Ranges of PostgreSQL's dates and timestamps, counted from its epoch,
// 2000-01-01 (src/include/datatype/timestamp.h).
const (
	epochDays   = 10957                // 2000-01-01 in days since 1970-01-01
	minDay      = -2451545             // 4714-11-24 BC, Julian day 0
	endDay      = 2147483494 - 2451545 // past the last date, 5874897-12-31
	endStampDay = 109203528 - 2451545  // past a timestamp's last day, 294276-12-31
	usPerDay    = 86_400_000_000       // microseconds in a day
	minStamp    = -211813488000000000  // 4714-11-24 00:00:00 BC
	endStamp    = 9223371331200000000  // 294277-01-01 00:00:00
	lastYear    = 294276               // a timestamp's last year
	dateInf     = 1<<31 - 1            // date 'infinity' in binary
	dateNegInf  = -1 << 31             // date '-infinity'
	stampInf    = 1<<63 - 1            // timestamp 'infinity' in binary
	stampNegInf = -1 << 63             // timestamp '-infinity'
)

// bc is the era PostgreSQL's ISO output writes after a value before
// Christ, and what KeepEra appends.
const bc = " BC"

// firstADDay is 0001-01-01 in days since 2000-01-01: dates and timestamps
// before it are before Christ.
var firstADDay = int32(daysFromCivil(1, 1, 1) - epochDays)

var errToChar = errors.New("date out of range for to_char (past 294276-12-31, as PostgreSQL's to_char refuses it)")

// numericHeader reads the header of numeric x in binary format, ndigits,
// weight and sign (16 bits each, then dscale), and checks that x holds
// its digits, base-10000 in 16 bits each; the caller reads the sign word.
func numericHeader(v []byte) (n, weight int, sign uint16, err error) {
	if len(v) < 8 {
		return 0, 0, 0, errLength(8, len(v))
	}
	n = int(binary.BigEndian.Uint16(v))
	weight = int(int16(binary.BigEndian.Uint16(v[2:])))
	sign = binary.BigEndian.Uint16(v[4:])
	if len(v) != 8+2*n {
		return 0, 0, 0, fmt.Errorf("binary numeric of %d bytes for %d digits, want %d", len(v), n, 8+2*n)
	}
	return n, weight, sign, nil
}

// appendDate appends to_char(d, 'YYYY-MM-DD') of date d in binary format
// (days since 2000-01-01); null when d is infinite, as to_char's NULL.
func appendDate(b, v []byte) ([]byte, bool, error) {
	d, null, err := binaryDate(v)
	if err != nil || null {
		return b, null, err
	}
	return appendCivil(b, d+epochDays), false, nil
}

// binaryDate returns date d in binary format, in days since 2000-01-01;
// null when d is infinite. to_char reads a date as a timestamp, so a date
// past a timestamp's last day is an error, as it is in PostgreSQL.
func binaryDate(v []byte) (d int64, null bool, err error) {
	if len(v) != 4 {
		return 0, false, errLength(4, len(v))
	}
	d = int64(int32(binary.BigEndian.Uint32(v)))
	switch {
	case d == dateInf || d == dateNegInf:
		return 0, true, nil
	case d < minDay || d >= endDay:
		return 0, false, errors.New("binary date out of PostgreSQL's range")
	case d >= endStampDay:
		return 0, false, errToChar
	}
	return d, false, nil
}

// appendTimestamp appends to_char(x, 'YYYY-MM-DD HH24:MI:SS') of timestamp
// x in binary format (microseconds since 2000-01-01 00:00:00), and for a
// timestamptz (whose binary form is in UTC) the microseconds and "+00":
// to_char(x AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS.US') || '+00'. An
// infinite one is null.
func appendTimestamp(b, v []byte, tz bool) ([]byte, bool, error) {
	us, null, err := binaryStamp(v)
	if err != nil || null {
		return b, null, err
	}
	return appendStamp(b, us, tz), false, nil
}

// binaryStamp returns timestamp x in binary format, in microseconds since
// 2000-01-01 00:00:00; null when x is infinite.
func binaryStamp(v []byte) (us int64, null bool, err error) {
	if len(v) != 8 {
		return 0, false, errLength(8, len(v))
	}
	us = int64(binary.BigEndian.Uint64(v))
	switch {
	case us == stampInf || us == stampNegInf:
		return 0, true, nil
	case us < minStamp || us >= endStamp:
		return 0, false, errors.New("binary timestamp out of PostgreSQL's range")
	}
	return us, false, nil
}

// appendStamp appends us, microseconds since 2000-01-01 00:00:00 within
// PostgreSQL's range, as "YYYY-MM-DD HH:MM:SS", and with tz as
// "YYYY-MM-DD HH:MM:SS.ffffff+00".
func appendStamp(b []byte, us int64, tz bool) []byte {
	days := us / usPerDay
	rem := us % usPerDay
	if rem < 0 {
		days--
		rem += usPerDay
	}
	b = appendCivil(b, days+epochDays)
	secs := int(rem / 1_000_000)
	b = append(b, ' ')
	b = append2(b, secs/3600)
	b = append(b, ':')
	b = append2(b, secs/60%60)
	b = append(b, ':')
	b = append2(b, secs%60)
	if tz {
		f := int(rem % 1_000_000)
		b = append(b, '.')
		b = append2(b, f/10000)
		b = append2(b, f/100%100)
		b = append2(b, f%100)
		b = append(b, "+00"...)
	}
	return b
}

// appendCivil appends day z (days since 1970-01-01, proleptic Gregorian) as
// to_char's 'YYYY-MM-DD': the year zero-padded to four digits, wider when
// it needs more, and a year before Christ as its number without the era
// (to_char's YYYY: year 0 is 1 BC, written 0001).
func appendCivil(b []byte, z int64) []byte {
	y, m, d := civil(z)
	if y <= 0 {
		y = 1 - y
	}
	if y <= 9999 {
		b = append4(b, int(y))
	} else {
		b = strconv.AppendInt(b, y, 10)
	}
	b = append(b, '-')
	b = append2(b, m)
	b = append(b, '-')
	return append2(b, d)
}

// civil returns the year (astronomical: 0 is 1 BC), month and day of day z,
// counted from 1970-01-01 in the proleptic Gregorian calendar (Howard
// Hinnant's civil_from_days).
func civil(z int64) (y int64, m, d int) {
	z += 719468
	era := z / 146097
	if z < 0 && z%146097 != 0 {
		era--
	}
	doe := z - era*146097                                  // [0, 146096]
	yoe := (doe - doe/1460 + doe/36524 - doe/146096) / 365 // [0, 399]
	doy := doe - (365*yoe + yoe/4 - yoe/100)               // [0, 365]
	mp := (5*doy + 2) / 153                                // [0, 11], from March
	d = int(doy - (153*mp+2)/5 + 1)
	m = int(mp + 3)
	if m > 12 {
		m -= 12
	}
	y = yoe + era*400
	if m <= 2 {
		y++
	}
	return y, m, d
}

// daysFromCivil returns the day of y-m-d (astronomical year) counted from
// 1970-01-01 (Howard Hinnant's days_from_civil).
func daysFromCivil(y int64, m, d int) int64 {
	if m <= 2 {
		y--
	}
	era := y / 400
	if y < 0 && y%400 != 0 {
		era--
	}
	yoe := y - era*400
	mp := int64(m + 9)
	if m > 2 {
		mp = int64(m - 3)
	}
	doy := (153*mp+2)/5 + int64(d) - 1
	doe := yoe*365 + yoe/4 - yoe/100 + doy
	return era*146097 + doe - 719468
}
