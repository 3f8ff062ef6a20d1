package export

import (
	"bytes"
	"errors"
	"fmt"
	"math"
)

// The Decimal kind is written to the typed formats (Parquet, Arrow) as
// DECIMAL(DecimalPrecision, DecimalScale): the type of services.cost, the
// source of the only decimal column, numeric(14, 2). A value with more
// digits is refused rather than rounded.
const (
	DecimalPrecision = 14
	DecimalScale     = 2
)

// ErrValue is returned, wrapped, by the Parquet and Arrow encoders for a
// value that does not parse as its column's [Kind] or does not fit the
// type it is written as; the message names the row and the column.
var ErrValue = errors.New("value does not fit its column's type")

// typedValue is one value of a row parsed for a typed format. A Text
// value is the row's own, which is not copied here: a value that holds no
// pointer costs the garbage collector nothing to write.
type typedValue struct {
	null bool
	// n is an Integer; a Decimal times 10^DecimalScale; a Date's days
	// since 1970-01-01; a Timestamp's microseconds since 1970-01-01
	// 00:00:00 (on the wall clock) and a Timestamptz's since that instant
	// in UTC.
	n int64
}

// typedRow reads rows of text (or binary) values into typed values, for
// an encoder that keeps none of a row unless all of it reads, so that a
// bad value leaves nothing behind. The Arrow encoder reads the whole row
// with parse before it keeps any of it; the Parquet encoder reads each
// value with begin and value as it gathers it, and drops the row's values
// gathered before a bad one.
type typedRow struct {
	format string // for errors: "parquet", "arrow"
	binary bool   // values in binary (Options.Binary), not text
	cols   []Column
	vals   []typedValue // parse's
	n      int64        // rows begun so far
}

func newTypedRow(format string, cols []Column) typedRow {
	return typedRow{format: format, cols: cols}
}

// begin checks that row has a value for each column and counts it.
func (t *typedRow) begin(row [][]byte) error {
	if len(row) != len(t.cols) {
		return rowLenError(len(row), len(t.cols))
	}
	t.n++
	return nil
}

// isNull reports whether v is NULL in a column of kind k: a nil value is;
// so is an empty one, which no non-text kind can hold, and, in a column
// that is never nil (the general report's, which writes a missing value
// as empty text), an empty text.
func isNull(v []byte, k Kind, nullable bool) bool {
	return v == nil || (len(v) == 0 && (k != Text || !nullable))
}

// value reads v, a value of kind k other than Text that is not NULL, in
// binary or as text, into a typedValue's n.
func (t *typedRow) value(v []byte, k Kind) (int64, bool) {
	if t.binary {
		return binaryValue(k, v)
	}
	return ParseValue(k, v)
}

// valueError returns the error for v, the value of column i of the row
// begun last, which value refused: it wraps [ErrValue] and names the row
// (counted from 1) and the column.
func (t *typedRow) valueError(i int, v []byte) error {
	c := &t.cols[i]
	if t.binary {
		return fmt.Errorf("export: %s: row %d, column %s: %w: %d bytes are not a binary %s", t.format, t.n, c.Name, ErrValue, len(v), c.Kind)
	}
	return fmt.Errorf("export: %s: row %d, column %s: %w: %s", t.format, t.n, c.Name, ErrValue, describe(v, c.Kind))
}

// parse parses row into t.vals; see isNull for what is NULL. A Text
// value is row's own. It returns an error from begin or valueError.
func (t *typedRow) parse(row [][]byte) error {
	if err := t.begin(row); err != nil {
		return err
	}
	if t.vals == nil {
		t.vals = make([]typedValue, len(t.cols))
	}
	for i, v := range row {
		c := &t.cols[i]
		tv := &t.vals[i]
		if isNull(v, c.Kind, c.Nullable) {
			*tv = typedValue{null: true}
			continue
		}
		if c.Kind == Text {
			*tv = typedValue{}
			continue
		}
		n, ok := t.value(v, c.Kind)
		if !ok {
			return t.valueError(i, v)
		}
		*tv = typedValue{n: n}
	}
	return nil
}

// describe says what value v of kind k should have been, quoting at most
// the start of v.
func describe(v []byte, k Kind) string {
	const max = 40
	q := v
	if len(q) > max {
		q = q[:max]
	}
	want := map[Kind]string{
		Integer:     "a 64-bit integer",
		Decimal:     fmt.Sprintf("a decimal of at most %d digits, %d after the point", DecimalPrecision, DecimalScale),
		Date:        "a date YYYY-MM-DD",
		Timestamp:   "a timestamp YYYY-MM-DD HH:MM:SS[.ffffff]",
		Timestamptz: "a timestamp YYYY-MM-DD HH:MM:SS[.ffffff]±HH[:MM[:SS]]",
	}[k]
	return fmt.Sprintf("%q is not %s", q, want)
}

// parseInt64 parses an optionally signed base-10 integer.
func parseInt64(v []byte) (int64, bool) {
	neg := false
	if len(v) > 0 && (v[0] == '-' || v[0] == '+') {
		neg = v[0] == '-'
		v = v[1:]
	}
	if len(v) == 0 {
		return 0, false
	}
	if len(v) <= 18 { // no 18 digits overflow
		var n int64
		for _, c := range v {
			c -= '0'
			if c > 9 {
				return 0, false
			}
			n = n*10 + int64(c)
		}
		if neg {
			n = -n
		}
		return n, true
	}
	var u uint64
	for _, c := range v {
		if c < '0' || c > '9' || u > (math.MaxUint64-9)/10 {
			return 0, false
		}
		u = u*10 + uint64(c-'0')
	}
	if neg {
		if u > 1<<63 {
			return 0, false
		}
		return -int64(u), true
	}
	if u > math.MaxInt64 {
		return 0, false
	}
	return int64(u), true
}

// parseDecimal parses an optionally signed decimal "123", "1500.5" into
// its value times 10^DecimalScale. Digits past the scale must be zeros,
// and the integer part has at most DecimalPrecision-DecimalScale digits.
func parseDecimal(v []byte) (int64, bool) {
	neg := false
	if len(v) > 0 && (v[0] == '-' || v[0] == '+') {
		neg = v[0] == '-'
		v = v[1:]
	}
	whole, frac, point := bytes.Cut(v, []byte{'.'})
	if len(whole) == 0 || (point && len(frac) == 0) {
		return 0, false
	}
	for len(frac) > DecimalScale && frac[len(frac)-1] == '0' {
		frac = frac[:len(frac)-1]
	}
	whole = bytes.TrimLeft(whole, "0")
	if len(frac) > DecimalScale || len(whole) > DecimalPrecision-DecimalScale {
		return 0, false
	}
	var n int64
	for _, c := range whole {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	for i := range DecimalScale {
		n *= 10
		if i < len(frac) {
			c := frac[i]
			if c < '0' || c > '9' {
				return 0, false
			}
			n += int64(c - '0')
		}
	}
	if neg {
		n = -n
	}
	return n, true
}

// cutEra returns a date's or timestamp's text without the " BC" that
// ends one before Christ in the text [ParseValue] reads, and whether it
// had one.
func cutEra(v []byte) ([]byte, bool) {
	if n := len(v); n >= 3 && v[n-1] == 'C' && v[n-2] == 'B' && v[n-3] == ' ' {
		return v[:n-3], true
	}
	return v, false
}

// digits2 parses the two decimal digits a and b.
func digits2(a, b byte) (int, bool) {
	a, b = a-'0', b-'0'
	return int(a)*10 + int(b), a <= 9 && b <= 9
}

// parseDate parses "YYYY-MM-DD" (a year of four digits or, past 9999, as
// many as PostgreSQL's dates have, up to seven; before Christ when bc)
// into days since 1970-01-01 in the proleptic Gregorian calendar, where
// 1 BC is the year 0.
func parseDate(v []byte, bc bool) (int32, bool) {
	var y, m, d int
	if len(v) == 10 && v[4] == '-' && v[7] == '-' {
		// A year of four digits, the common case, read at once.
		c, ok1 := digits2(v[0], v[1])
		yy, ok2 := digits2(v[2], v[3])
		var ok3, ok4 bool
		m, ok3 = digits2(v[5], v[6])
		d, ok4 = digits2(v[8], v[9])
		if !ok1 || !ok2 || !ok3 || !ok4 {
			return 0, false
		}
		y = c*100 + yy
	} else {
		n := dateLen(v)
		if n == 0 || len(v) != n {
			return 0, false
		}
		var ok1, ok2, ok3 bool
		y, ok1 = atoi(v[0 : n-6])
		m, ok2 = atoi(v[n-5 : n-3])
		d, ok3 = atoi(v[n-2 : n])
		if !ok1 || !ok2 || !ok3 || (n > 10 && (v[0] == '0' || bc)) {
			return 0, false
		}
	}
	if y < 1 {
		return 0, false
	}
	if bc {
		y = 1 - y
	}
	if m < 1 || m > 12 || d < 1 || d > daysIn(m, y) {
		return 0, false
	}
	return int32(daysFromCivil(y, m, d)), true
}

// dateLen returns the length of the date "YYYY-MM-DD" that v starts with,
// its year of 4 to 7 digits (see parseDate), or 0 when v does not start
// with one's dashes.
func dateLen(v []byte) int {
	y := bytes.IndexByte(v, '-')
	if y < 4 || y > 7 || len(v) < y+6 || v[y+3] != '-' {
		return 0
	}
	return y + 6
}

// pow10 holds the powers of ten that scale a fraction of n digits to
// microseconds, at pow10[6-n].
var pow10 = [...]int64{1, 10, 100, 1000, 10_000, 100_000, 1_000_000}

// parseTimestamp parses "YYYY-MM-DD HH:MM:SS" (before Christ when bc),
// with an optional fraction of up to six digits and, when zoned, a UTC
// offset as PostgreSQL prints one (see parseOffset), into microseconds
// since 1970-01-01 00:00:00 (in UTC when zoned).
func parseTimestamp(v []byte, bc, zoned bool) (int64, bool) {
	// A year of four digits, the common case, is found without dateLen;
	// a dash before v[4] would fail parseDate as dateLen fails it.
	n := 10
	if len(v) < 10 || v[4] != '-' || v[7] != '-' {
		n = dateLen(v)
	}
	if n == 0 || len(v) < n+9 || v[n] != ' ' || v[n+3] != ':' || v[n+6] != ':' {
		return 0, false
	}
	days, ok := parseDate(v[:n], bc)
	h, ok1 := digits2(v[n+1], v[n+2])
	mi, ok2 := digits2(v[n+4], v[n+5])
	s, ok3 := digits2(v[n+7], v[n+8])
	if !ok || !ok1 || !ok2 || !ok3 || h > 23 || mi > 59 || s > 59 {
		return 0, false
	}
	secs := ((int64(days)*24+int64(h))*60+int64(mi))*60 + int64(s)
	rest := v[n+9:]
	var us int64
	if len(rest) > 0 && rest[0] == '.' {
		i := 1
		for ; i < len(rest); i++ {
			c := rest[i] - '0'
			if c > 9 {
				break
			}
			if i > 6 {
				return 0, false
			}
			us = us*10 + int64(c)
		}
		if i == 1 {
			return 0, false
		}
		us *= pow10[7-i]
		rest = rest[i:]
	}
	if zoned {
		off, ok := parseOffset(rest)
		if !ok {
			return 0, false
		}
		secs -= int64(off)
		rest = nil
	}
	if n > 10 && secs > (math.MaxInt64-us)/1e6 { // past 294247-01-10
		return 0, false
	}
	return secs*1e6 + us, len(rest) == 0
}
