package dataset

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// binaryOp reports whether o reads a typed value in binary format, which
// Typed converts without writing its text.
func binaryOp(o op) bool {
	switch o {
	case opInt2, opInt4, opInt8, opNumeric, opDate, opTimestamp, opTimestamptz:
		return true
	}
	return false
}

// The largest whole part of a Decimal the typed formats hold, and its
// scale's factor.
var (
	decimalScale = pow10i(DecimalScale)
	decimalBound = pow10i(DecimalPrecision - DecimalScale)
)

func pow10i(n int) int64 {
	p := int64(1)
	for range n {
		p *= 10
	}
	return p
}

// typedValue returns v, read in binary by f.op, as AppendValue
// takes a value of f.kind; null for an infinite date or timestamp, which
// the API's text writes as NULL.
func typedValue(f *field, v []byte) (n int64, null bool, err error) {
	switch f.op {
	case opInt2, opInt4, opInt8:
		switch {
		case f.op == opInt2 && len(v) == 2:
			n = int64(int16(binary.BigEndian.Uint16(v)))
		case f.op == opInt4 && len(v) == 4:
			n = int64(int32(binary.BigEndian.Uint32(v)))
		case f.op == opInt8 && len(v) == 8:
			n = int64(binary.BigEndian.Uint64(v))
		default:
			return 0, false, fmt.Errorf("binary integer of %d bytes", len(v))
		}
		if f.kind == Decimal {
			if n <= -decimalBound || n >= decimalBound {
				return 0, false, errDecimal
			}
			n *= decimalScale
		}
		return n, false, nil
	case opNumeric:
		n, err = numericScaled(v)
		return n, false, err
	case opDate:
		d, null, err := binaryDate(v) // past to_char's range, as the API's text refuses it
		if err != nil || null {
			return 0, null, err
		}
		return d + epochDays, false, nil
	case opTimestamp, opTimestamptz:
		us, null, err := binaryStamp(v)
		if err != nil || null {
			return 0, null, err
		}
		if us > math.MaxInt64-epochDays*usPerDay {
			return 0, false, errStampRange
		}
		us += epochDays * usPerDay // from 1970-01-01
		if f.op == opTimestamp {   // to_char's whole seconds
			us -= ((us % 1e6) + 1e6) % 1e6
		}
		return us, false, nil
	}
	return 0, false, fmt.Errorf("no typed value for op %d", f.op)
}

var errStampRange = errors.New("a timestamp past 294247-01-10, which the typed formats' microseconds since 1970 do not hold")

var errDecimal = fmt.Errorf("a decimal of more than %d digits, %d after the point, which the typed formats do not hold",
	DecimalPrecision, DecimalScale)

// numericScaled returns numeric x in binary format (see appendNumeric) times
// 10^DecimalScale, exactly: an error for NaN, an infinity, more
// decimals or more whole digits than the typed formats hold.
func numericScaled(v []byte) (int64, error) {
	n, weight, sign, err := numericHeader(v)
	if err != nil {
		return 0, err
	}
	switch sign {
	case numericNaN, numericPInf, numericNInf:
		return 0, errDecimal
	case numericPos, numericNeg:
	default:
		return 0, fmt.Errorf("binary numeric with sign word %#04x", sign)
	}
	// Digit i weighs 10000^(weight-i): the whole part's digits weigh 1 or
	// more, the first after the point 1/10000, whose scaled value is
	// d/100 with a scale of 2.
	var whole, frac int64
	for i := range n {
		d := int64(binary.BigEndian.Uint16(v[8+2*i:]))
		if d > 9999 {
			return 0, fmt.Errorf("binary numeric digit %d is past 9999", d)
		}
		if d == 0 {
			continue
		}
		switch w := weight - i; {
		case w >= 3: // 10^12 or more
			return 0, errDecimal
		case w >= 0:
			whole += d * pow10i(4*w)
		case w == -1 && d%(10000/decimalScale) == 0:
			frac = d / (10000 / decimalScale)
		default:
			return 0, errDecimal
		}
	}
	if whole >= decimalBound {
		return 0, errDecimal
	}
	x := whole*decimalScale + frac
	if sign == numericNeg {
		x = -x
	}
	return x, nil
}
