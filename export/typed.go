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

// typedValue is one value of a row parsed for a typed format.
type typedValue struct {
	null bool
	// n is an Integer; a Decimal times 10^DecimalScale; a Date's days
	// since 1970-01-01; a Timestamp's microseconds since 1970-01-01
	// 00:00:00 (on the wall clock) and a Timestamptz's since that instant
	// in UTC.
	n    int64
	text []byte // Text: the value, not retained past Encode
}

// typedRow parses rows of text values into typed values, the whole row
// before any of it is kept, so that a bad value leaves nothing behind.
type typedRow struct {
	format string // for errors: "parquet", "arrow"
	binary bool   // values in binary (Options.Binary), not text
	cols   []Column
	vals   []typedValue
	n      int64 // rows parsed so far
}

func newTypedRow(format string, cols []Column) typedRow {
	return typedRow{format: format, cols: cols, vals: make([]typedValue, len(cols))}
}

// parse parses row into t.vals. A nil value is NULL; so is an empty one,
// which no non-text kind can hold, and, in a column that is never nil (the
// general report's, which writes a missing value as empty text), an
// empty text. It returns an error wrapping [ErrValue] that names the row
// (counted from 1) and the column, or a row length error.
func (t *typedRow) parse(row [][]byte) error {
	if len(row) != len(t.cols) {
		return rowLenError(len(row), len(t.cols))
	}
	t.n++
	for i, v := range row {
		c := &t.cols[i]
		tv := &t.vals[i]
		*tv = typedValue{}
		if v == nil || (len(v) == 0 && (c.Kind != Text || !c.Nullable)) {
			tv.null = true
			continue
		}
		ok := true
		switch {
		case c.Kind == Text:
			tv.text = v
		case t.binary:
			if tv.n, ok = binaryValue(c.Kind, v); !ok {
				return fmt.Errorf("export: %s: row %d, column %s: %w: %d bytes are not a binary %s", t.format, t.n, c.Name, ErrValue, len(v), c.Kind)
			}
		default:
			tv.n, ok = ParseValue(c.Kind, v)
		}
		if !ok {
			return fmt.Errorf("export: %s: row %d, column %s: %w: %s", t.format, t.n, c.Name, ErrValue, describe(v, c.Kind))
		}
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

// cutEra returns a date's or timestamp's text without the " BC" that the
// rows of typed formats carry after one before Christ ([Format.Typed]),
// and whether it had one.
func cutEra(v []byte) ([]byte, bool) {
	if t, ok := bytes.CutSuffix(v, []byte(" BC")); ok {
		return t, true
	}
	return v, false
}

// parseDate parses "YYYY-MM-DD" (a year of four digits or, past 9999, as
// many as PostgreSQL's dates have, up to seven; before Christ when bc)
// into days since 1970-01-01 in the proleptic Gregorian calendar, where
// 1 BC is the year 0.
func parseDate(v []byte, bc bool) (int32, bool) {
	n := dateLen(v)
	if len(v) != n {
		return 0, false
	}
	y, ok1 := atoi(v[0 : n-6])
	m, ok2 := atoi(v[n-5 : n-3])
	d, ok3 := atoi(v[n-2 : n])
	if !ok1 || !ok2 || !ok3 || y < 1 || (n > 10 && (v[0] == '0' || bc)) {
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

// parseTimestamp parses "YYYY-MM-DD HH:MM:SS" (before Christ when bc),
// with an optional fraction of up to six digits and, when zoned, a UTC
// offset as PostgreSQL prints one (see parseOffset), into microseconds
// since 1970-01-01 00:00:00 (in UTC when zoned).
func parseTimestamp(v []byte, bc, zoned bool) (int64, bool) {
	n := dateLen(v)
	if n == 0 || len(v) < n+9 || v[n] != ' ' || v[n+3] != ':' || v[n+6] != ':' {
		return 0, false
	}
	days, ok := parseDate(v[:n], bc)
	h, ok1 := atoi(v[n+1 : n+3])
	mi, ok2 := atoi(v[n+4 : n+6])
	s, ok3 := atoi(v[n+7 : n+9])
	if !ok || !ok1 || !ok2 || !ok3 || h > 23 || mi > 59 || s > 59 {
		return 0, false
	}
	secs := ((int64(days)*24+int64(h))*60+int64(mi))*60 + int64(s)
	rest := v[n+9:]
	var us int64
	if len(rest) > 0 && rest[0] == '.' {
		i := 1
		for i < len(rest) && '0' <= rest[i] && rest[i] <= '9' {
			i++
		}
		if i == 1 || i > 7 {
			return 0, false
		}
		f, _ := atoi(rest[1:i])
		for n := i - 1; n < 6; n++ {
			f *= 10
		}
		us, rest = int64(f), rest[i:]
	}
	if zoned {
		off, ok := parseOffset(rest)
		if !ok {
			return 0, false
		}
		secs -= int64(off)
		rest = nil
	}
	if secs > (math.MaxInt64-us)/1e6 { // past 294247-01-10
		return 0, false
	}
	return secs*1e6 + us, len(rest) == 0
}
