package dataset

import (
	"bytes"
	"encoding/binary"
	"math"
)

// This file says what a value of each [Kind] is, as a number: the one
// reading of the API's text (ParseValue) and the binary form (AppendValue,
// BinaryValue) that the read side writes and the typed formats' encoders
// (package export) take.

// The Decimal kind is written to the typed formats (Parquet, Arrow) as
// DECIMAL(DecimalPrecision, DecimalScale): the type of services.cost, the
// source of the only decimal column, numeric(14, 2). A value with more
// digits is refused rather than rounded.
const (
	DecimalPrecision = 14
	DecimalScale     = 2
)

// Binary values: with [Options].Binary, the typed encoders (Parquet,
// Arrow) take each value of a row already typed, as the bytes
// [AppendValue] writes, rather than as the API's text, which they would
// parse: an Integer, a Decimal (times 10^DecimalScale), a Timestamp
// (microseconds since 1970-01-01 00:00:00 on the wall clock) or a
// Timestamptz (since that instant in UTC) in 8 bytes, a Date (days since
// 1970-01-01) in 4, big-endian two's complement; a Text value as its
// UTF-8 bytes. nil is NULL, and so is an empty value of a kind that is not
// Text, and an empty text in a column that is never nil, as with text.
// [Row.Typed] writes rows so for the typed formats, and spares both
// sides the text.

// ParseValue parses v, a value of kind k (not Text) as the API's text
// writes it, into the number [AppendValue] takes: "150000" as 150000, a
// Decimal "1500.5" as 150050, a Date as its day, a Timestamp or
// Timestamptz (with its offset) as its microsecond. A date or timestamp
// before Christ ends with " BC", which the API's text leaves out (see
// export.Format.Typed); a year past 9999 has as many digits as it needs. It
// reports false for text that is not a value of k, or a value the typed
// formats do not hold: a Decimal of more than DecimalPrecision digits or
// DecimalScale decimals, a timestamp past 294247-01-10 (microseconds
// since 1970 in 64 bits).
func ParseValue(k Kind, v []byte) (int64, bool) {
	switch k {
	case Integer:
		return parseInt64(v)
	case Decimal:
		return parseDecimal(v)
	case Date:
		v, bc := cutEra(v)
		d, ok := parseDate(v, bc)
		return int64(d), ok
	case Timestamp, Timestamptz:
		v, bc := cutEra(v)
		return parseTimestamp(v, bc, k == Timestamptz)
	}
	return 0, false
}

// AppendValue appends n, a value of kind k (not Text), in binary: 4 bytes
// for a Date, 8 for the other kinds.
func AppendValue(b []byte, k Kind, n int64) []byte {
	if k == Date {
		return binary.BigEndian.AppendUint32(b, uint32(int32(n)))
	}
	return binary.BigEndian.AppendUint64(b, uint64(n))
}

// BinaryValue reads v, a value of kind k (not Text) that AppendValue
// wrote; false when it has the wrong length.
func BinaryValue(k Kind, v []byte) (int64, bool) {
	if k == Date {
		if len(v) != 4 {
			return 0, false
		}
		return int64(int32(binary.BigEndian.Uint32(v))), true
	}
	if len(v) != 8 {
		return 0, false
	}
	return int64(binary.BigEndian.Uint64(v)), true
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
	if m < 1 || m > 12 || d < 1 || d > daysInMonth(m, y) {
		return 0, false
	}
	return int32(daysFromCivil(int64(y), m, d)), true
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

// usPow10 holds the powers of ten that scale a fraction of n digits to
// microseconds, at usPow10[6-n].
var usPow10 = [...]int64{1, 10, 100, 1000, 10_000, 100_000, 1_000_000}

// parseTimestamp parses "YYYY-MM-DD HH:MM:SS" (before Christ when bc),
// with an optional fraction of up to six digits and, when zoned, a UTC
// offset as PostgreSQL prints one (see ParseOffset), into microseconds
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
		us *= usPow10[7-i]
		rest = rest[i:]
	}
	if zoned {
		off, ok := ParseOffset(rest)
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

// ParseOffset parses a UTC offset as PostgreSQL prints it: +HH, +HH:MM or
// +HH:MM:SS, with + or -. It returns it in seconds.
func ParseOffset(v []byte) (int, bool) {
	if len(v) != 3 && len(v) != 6 && len(v) != 9 || (v[0] != '+' && v[0] != '-') {
		return 0, false
	}
	secs := 0
	for i, unit := 1, 3600; i < len(v); i, unit = i+3, unit/60 {
		if i > 1 && v[i-1] != ':' {
			return 0, false
		}
		n, ok := atoi(v[i : i+2])
		if !ok || (i > 1 && n > 59) {
			return 0, false
		}
		secs += n * unit
	}
	if v[0] == '-' {
		secs = -secs
	}
	return secs, true
}

// atoi parses unsigned decimal digits, all of v.
func atoi(v []byte) (int, bool) {
	n := 0
	for _, c := range v {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, len(v) > 0
}

// daysInMonth returns the number of days of month m of year y.
func daysInMonth(m, y int) int {
	switch m {
	case 2:
		if y%4 == 0 && (y%100 != 0 || y%400 == 0) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}
