package odata

import (
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/informe/informe/internal/failure"
)

// checkLiterals returns the 400 of the first string literal that e compares
// by eq, ne or in with a property whose literals the set checks
// ([dataset.EntitySet.Literals]), or nil. A malformed RUT then says so, rather
// than matching nothing in silence.
func checkLiterals(e *expr, set *EntitySet, src string) error {
	if e == nil {
		return nil
	}
	if e.kind == eAny || e.kind == eAll {
		// The lambda expression speaks of the target's properties.
		if len(e.args) == 0 {
			return nil
		}
		return checkLiterals(e.args[0], e.target, src)
	}
	if len(set.def.Literals) == 0 && !hasLambda(e) {
		return nil
	}
	check := func(p, lit *expr) error {
		if p.kind != eProp || lit.kind != eLit {
			return nil
		}
		s, ok := lit.val.(string)
		name := set.props[p.prop].name
		f := set.def.Literals[name]
		if !ok || f == nil {
			return nil
		}
		if err := f(s); err != nil {
			reason, msg := reasonBadLiteral, err.Error()
			var fe *failure.Error
			if errors.As(err, &fe) {
				reason, msg = fe.Reason, fe.Message
			}
			return at(badRequest("$filter", reason, name+": "+msg), src, lit.pos)
		}
		return nil
	}
	switch {
	case e.kind == eCmp && (e.name == "eq" || e.name == "ne"):
		if err := check(e.args[0], e.args[1]); err != nil {
			return err
		}
		return check(e.args[1], e.args[0])
	case e.kind == eIn:
		for _, lit := range e.args[1:] {
			if err := check(e.args[0], lit); err != nil {
				return err
			}
		}
		return nil
	}
	for _, a := range e.args {
		if err := checkLiterals(a, set, src); err != nil {
			return err
		}
	}
	return nil
}

// A temporal literal is an OData dateValue or dateTimeOffsetValue (OData
// ABNF):
//
//	year "-" month "-" day [ "T" hour ":" minute [ ":" second [ "." 1*12DIGIT ] ] ( "Z" / sign hour ":" minute ) ]
//	year = [ "-" ] ( "0" 3DIGIT / oneToNine 3*DIGIT )
//
// Years are astronomical, as in XML Schema 1.1, which OData's dates
// follow: 0000 is 1 BC, -0001 is 2 BC. PostgreSQL has no year 0 and
// writes those as 0001 BC and 0002 BC, so the SQL of a literal names its
// era (the store writes it so).
type temporal struct {
	typ  edm       // tDate or tDTO
	t    time.Time // the instant, in UTC, cut to the microsecond; tDate: the day's midnight
	pico int64     // tDTO: the rest of the fraction, in picoseconds (0 to 999,999)
}

// temporalFault says why text is no temporal literal informe compares.
type temporalFault uint8

const (
	temporalOK      temporalFault = iota
	notTemporal                   // not made as a date or a date-time
	tooPrecise                    // a fraction of more than 12 digits, which OData's grammar does not make
	noSuchDay                     // made as one, but no such day or time (2024-02-30, 24:00)
	outsidePostgres               // a valid one outside what PostgreSQL's date or timestamptz holds
)

// The range of PostgreSQL's date and timestamptz, in Go's (astronomical)
// years: from 4714-11-24 BC, to 5874897-12-31 for a date and to the end of
// 294276 for a date-time.
var (
	pgMinDate      = time.Date(-4713, 11, 24, 0, 0, 0, 0, time.UTC)
	pgEndDate      = time.Date(5874898, 1, 1, 0, 0, 0, 0, time.UTC)
	pgEndTimestamp = time.Date(294277, 1, 1, 0, 0, 0, 0, time.UTC)
)

// pgRange says, for messages, what PostgreSQL's dates and date-times hold.
const pgRange = "dates from -4713-11-24 (4714 BC) to 5874897-12-31, date-times from -4713-11-24T00:00:00Z to 294276-12-31T23:59:59.999999Z"

// parseTemporal parses s as a temporal literal.
func parseTemporal(s string) (temporal, temporalFault) {
	r := &digitReader{s: s}
	neg := r.skip('-')
	yd := r.digits()
	if len(yd) < 4 || len(yd) > 4 && yd[0] == '0' || !r.skip('-') {
		return temporal{}, notTemporal
	}
	year := 1_000_000_000 // past any year PostgreSQL holds
	if len(yd) < 10 {
		year, _ = strconv.Atoi(yd)
	}
	if neg {
		year = -year
	}
	month, day, ok := r.monthDay()
	if !ok {
		return temporal{}, notTemporal
	}
	d := time.Date(year, time.Month(month), day, 0, 0, 0, 0, time.UTC)
	valid := d.Day() == day
	if r.i == len(s) {
		switch {
		case !valid:
			return temporal{}, noSuchDay
		case d.Before(pgMinDate) || !d.Before(pgEndDate):
			return temporal{}, outsidePostgres
		}
		return temporal{typ: tDate, t: d}, temporalOK
	}
	if !r.skipFold('T') {
		return temporal{}, notTemporal
	}
	hour, ok1 := r.two()
	ok2 := r.skip(':')
	minute, ok3 := r.two()
	if !ok1 || !ok2 || !ok3 {
		return temporal{}, notTemporal
	}
	var second int
	var frac string
	if r.skip(':') {
		var ok bool
		if second, ok = r.two(); !ok {
			return temporal{}, notTemporal
		}
		if r.skip('.') {
			if frac = r.digits(); frac == "" {
				return temporal{}, notTemporal
			}
		}
	}
	var offset int // seconds east of UTC
	switch {
	case r.skipFold('Z'):
	case r.i < len(s) && (s[r.i] == '+' || s[r.i] == '-'):
		sign := 1
		if s[r.i] == '-' {
			sign = -1
		}
		r.i++
		oh, ok1 := r.two()
		ok2 := r.skip(':')
		om, ok3 := r.two()
		if !ok1 || !ok2 || !ok3 {
			return temporal{}, notTemporal
		}
		if oh > 23 || om > 59 {
			valid = false
		}
		offset = sign * (oh*3600 + om*60)
	default:
		return temporal{}, notTemporal
	}
	if r.i != len(s) {
		return temporal{}, notTemporal
	}
	if len(frac) > 12 {
		return temporal{}, tooPrecise
	}
	if !valid || hour > 23 || minute > 59 || second > 59 {
		return temporal{}, noSuchDay
	}
	frac += strings.Repeat("0", 12-len(frac))
	micro, _ := strconv.Atoi(frac[:6])
	pico, _ := strconv.ParseInt(frac[6:], 10, 64)
	t := time.Date(year, time.Month(month), day, hour, minute, second, micro*1000, time.UTC).Add(-time.Duration(offset) * time.Second)
	if t.Before(pgMinDate) || !t.Before(pgEndTimestamp) {
		return temporal{}, outsidePostgres
	}
	return temporal{typ: tDTO, t: t, pico: pico}, temporalOK
}

// digitReader reads a literal's text from its start.
type digitReader struct {
	s string
	i int
}

func (r *digitReader) skip(c byte) bool {
	if r.i < len(r.s) && r.s[r.i] == c {
		r.i++
		return true
	}
	return false
}

// skipFold skips c, an upper-case letter, in either case: OData's ABNF is
// case-insensitive.
func (r *digitReader) skipFold(c byte) bool { return r.skip(c) || r.skip(c+'a'-'A') }

// digits reads a run of digits.
func (r *digitReader) digits() string {
	j := r.i
	for j < len(r.s) && isDigit(r.s[j]) {
		j++
	}
	d := r.s[r.i:j]
	r.i = j
	return d
}

// two reads exactly two digits.
func (r *digitReader) two() (int, bool) {
	if r.i+2 > len(r.s) || !isDigit(r.s[r.i]) || !isDigit(r.s[r.i+1]) {
		return 0, false
	}
	n := int(r.s[r.i]-'0')*10 + int(r.s[r.i+1]-'0')
	r.i += 2
	return n, true
}

// monthDay reads month "-" day as OData's grammar makes them: 01 to 12,
// 01 to 31.
func (r *digitReader) monthDay() (int, int, bool) {
	m, ok1 := r.two()
	ok2 := r.skip('-')
	d, ok3 := r.two()
	return m, d, ok1 && ok2 && ok3 && m >= 1 && m <= 12 && d >= 1 && d <= 31
}

// hasLambda reports whether e holds a lambda operator.
func hasLambda(e *expr) bool {
	if e.kind == eAny || e.kind == eAll {
		return true
	}
	for _, a := range e.args {
		if hasLambda(a) {
			return true
		}
	}
	return false
}
