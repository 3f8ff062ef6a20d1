package dataset

import "errors"

// Dates and timestamps in text format, as PostgreSQL writes them under
// DateStyle ISO: pgx's exec and simple_protocol modes (behind PgBouncer)
// read every value in text.

var (
	errNotISODate  = errors.New("not a date in DateStyle ISO (YYYY-MM-DD); informe's sessions need DateStyle ISO")
	errNotISOStamp = errors.New("not a timestamp in DateStyle ISO (YYYY-MM-DD HH:MM:SS); informe's sessions need DateStyle ISO")
)

// isoDate reads the "YYYY-MM-DD" that starts v (four or more year digits)
// and returns its year as written, month, day and length; ok is false when
// v does not start with one.
func isoDate(v []byte) (year int64, month, day, n int, ok bool) {
	for n < len(v) && v[n] >= '0' && v[n] <= '9' {
		if n == 7 { // past any year PostgreSQL writes
			return 0, 0, 0, 0, false
		}
		year = year*10 + int64(v[n]-'0')
		n++
	}
	if n < 4 || len(v) < n+6 || v[n] != '-' || v[n+3] != '-' {
		return 0, 0, 0, 0, false
	}
	month, ok1 := two(v[n+1:])
	day, ok2 := two(v[n+4:])
	if !ok1 || !ok2 || month < 1 || month > 12 || day < 1 || day > 31 {
		return 0, 0, 0, 0, false
	}
	return year, month, day, n + 6, true
}

// two reads two decimal digits.
func two(v []byte) (int, bool) {
	if len(v) < 2 || v[0] < '0' || v[0] > '9' || v[1] < '0' || v[1] > '9' {
		return 0, false
	}
	return int(v[0]-'0')*10 + int(v[1]-'0'), true
}

// hasBC reports whether v is " BC", the era PostgreSQL's ISO output writes
// after a date before Christ.
func hasBC(v []byte) bool {
	return len(v) == 3 && v[0] == ' ' && v[1] == 'B' && v[2] == 'C'
}

func isInfinity(v []byte) bool {
	return string(v) == "infinity" || string(v) == "-infinity"
}

// dateText returns to_char(d, 'YYYY-MM-DD') of date d in text format, a
// slice of v: the date without its " BC" (to_char writes the year alone).
// null is true for an infinite date.
func dateText(v []byte) (out []byte, null bool, err error) {
	if isInfinity(v) {
		return nil, true, nil
	}
	year, _, _, n, ok := isoDate(v)
	if !ok || (n != len(v) && !hasBC(v[n:])) {
		return nil, false, errNotISODate
	}
	if year > lastYear && n == len(v) {
		return nil, false, errToChar
	}
	return v[:n:n], false, nil
}

// isoTime reads the "HH:MM:SS" and optional fraction (1 to 6 digits) that
// start v and returns the time of day in microseconds and its length.
func isoTime(v []byte) (us int64, n int, ok bool) {
	if len(v) < 8 || v[2] != ':' || v[5] != ':' {
		return 0, 0, false
	}
	h, ok1 := two(v)
	m, ok2 := two(v[3:])
	s, ok3 := two(v[6:])
	if !ok1 || !ok2 || !ok3 || h > 24 || m > 59 || s > 60 {
		return 0, 0, false
	}
	us = int64(h*3600+m*60+s) * 1_000_000
	n = 8
	if n < len(v) && v[n] == '.' {
		n++
		scale := int64(100_000)
		for n < len(v) && v[n] >= '0' && v[n] <= '9' {
			if scale == 0 {
				return 0, 0, false
			}
			us += int64(v[n]-'0') * scale
			scale /= 10
			n++
		}
		if scale == 100_000 {
			return 0, 0, false
		}
	}
	return us, n, true
}

// timestampText returns to_char(x, 'YYYY-MM-DD HH24:MI:SS') of timestamp x
// in text format, a slice of v: its date and time to the second, without
// the fraction (to_char's SS cuts it) or the " BC". null is true for an
// infinite timestamp.
func timestampText(v []byte) (out []byte, null bool, err error) {
	if isInfinity(v) {
		return nil, true, nil
	}
	_, _, _, n, ok := isoDate(v)
	if !ok || n == len(v) || v[n] != ' ' {
		return nil, false, errNotISOStamp
	}
	_, t, ok := isoTime(v[n+1:])
	if !ok {
		return nil, false, errNotISOStamp
	}
	if end := n + 1 + t; end != len(v) && !hasBC(v[end:]) {
		return nil, false, errNotISOStamp
	}
	return v[: n+9 : n+9], false, nil
}

// appendTimestamptzText appends to_char(x AT TIME ZONE 'UTC',
// 'YYYY-MM-DD HH24:MI:SS.US') || '+00' of timestamptz x in text format,
// written in the session's TimeZone with its offset from UTC ("-03",
// "+05:30", a local mean time's "-00:25:21"). null is true for an infinite
// timestamptz, bc for one before Christ in UTC.
func appendTimestamptzText(b, v []byte) (_ []byte, null, bc bool, err error) {
	if isInfinity(v) {
		return b, true, false, nil
	}
	year, month, day, n, ok := isoDate(v)
	if !ok || n == len(v) || v[n] != ' ' {
		return b, false, false, errNotISOStamp
	}
	tod, t, ok := isoTime(v[n+1:])
	if !ok {
		return b, false, false, errNotISOStamp
	}
	rest := v[n+1+t:]
	// The offset: +HH, +HH:MM or +HH:MM:SS.
	if len(rest) < 3 || (rest[0] != '+' && rest[0] != '-') {
		return b, false, false, errNotISOStamp
	}
	east := rest[0] == '+'
	var off int64
	for i := 0; i < 3; i++ {
		x, ok := two(rest[1:])
		if !ok {
			return b, false, false, errNotISOStamp
		}
		off = off*60 + int64(x)
		rest = rest[3:]
		if len(rest) == 0 || rest[0] != ':' {
			for ; i < 2; i++ {
				off *= 60
			}
			break
		}
	}
	if len(rest) != 0 && !hasBC(rest) {
		return b, false, false, errNotISOStamp
	}
	if len(rest) != 0 {
		year = 1 - year
	}
	if !east {
		off = -off
	}
	us := (daysFromCivil(year, month, day)-epochDays)*usPerDay + tod - off*1_000_000
	if us < minStamp || us >= endStamp {
		return b, false, false, errors.New("timestamp out of PostgreSQL's range")
	}
	return appendStamp(b, us, true), false, us < int64(firstADDay)*usPerDay, nil
}
