package export

import "encoding/binary"

// Binary values: with [Options].Binary, the typed encoders (Parquet,
// Arrow) take each value of a row already typed, as the bytes
// [AppendValue] writes, rather than as the API's text, which they would
// parse: an Integer, a Decimal (times 10^DecimalScale), a Timestamp
// (microseconds since 1970-01-01 00:00:00 on the wall clock) or a
// Timestamptz (since that instant in UTC) in 8 bytes, a Date (days since
// 1970-01-01) in 4, big-endian two's complement; a Text value as its
// UTF-8 bytes. nil is NULL, and so is an empty value of a kind that is not
// Text, and an empty text in a column that is never nil, as with text.
// package render writes rows so for the typed formats, and spares both
// sides the text.

// ParseValue parses v, a value of kind k (not Text) as the API's text
// writes it, into the number [AppendValue] takes: "150000" as 150000, a
// Decimal "1500.5" as 150050, a Date as its day, a Timestamp or
// Timestamptz (with its offset) as its microsecond. A date or timestamp
// before Christ ends with " BC", which the API's text leaves out (see
// [Format.Typed]); a year past 9999 has as many digits as it needs. It
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

// binaryValue reads v, a value of kind k (not Text) that AppendValue
// wrote; false when it has the wrong length.
func binaryValue(k Kind, v []byte) (int64, bool) {
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
