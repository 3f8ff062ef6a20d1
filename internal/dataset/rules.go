package dataset

import (
	"bytes"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Rules are what one token may see, besides its scopes: which columns,
// which of them masked, which rows, and how many in one response. The
// zero Rules, or a nil *Rules, restricts nothing. They are plain data:
// package auth keeps them with the token, package source applies them
// (source.Restrict).
type Rules struct {
	// Columns names the columns the token may read, in any dataset; nil
	// reads them all.
	Columns []string
	// NoPersonal reads only the columns that hold no personal data
	// ([Column.Personal] is [NotPersonal]).
	NoPersonal bool
	// Mask names the columns the token sees masked ([Mask]).
	Mask []string
	// Rows is a condition in the OData feed's $filter language that every
	// read of the token is ANDed with; "" for none.
	Rows string
	// MaxRows is the most rows one response may carry; 0 for no limit.
	MaxRows int64
}

// Empty reports whether r restricts nothing.
func (r *Rules) Empty() bool {
	return r == nil || (r.Columns == nil && !r.NoPersonal && len(r.Mask) == 0 && r.Rows == "" && r.MaxRows == 0)
}

// Reads reports whether a token with rules r reads column c at all
// (masked or not).
func (r *Rules) Reads(c Column) bool {
	if r == nil {
		return true
	}
	return (r.Columns == nil || slices.Contains(r.Columns, c.Name)) && !(r.NoPersonal && c.Personal != NotPersonal)
}

// Masks reports whether a token with rules r sees column c masked: only
// a personal column is.
func (r *Rules) Masks(c Column) bool {
	return r != nil && c.Personal != NotPersonal && slices.Contains(r.Mask, c.Name)
}

// Mask is how a masked column's values are written ([Column.Mask]).
type Mask uint8

// The masks, each for a kind of value. A masked value is the same in
// every format.
const (
	Unmasked     Mask = iota
	MaskRUT           // "12.345.678-5" as "12.***.***-5": the first two digits and the check digit
	MaskEmail         // "carlos@dominio.cl" as "c***@dominio.cl": the first character and the domain
	MaskPhone         // "+56 9 1234 5678" as "***78": the last two digits
	MaskName          // "Carlos" as "C***": the initial
	MaskWithheld      // a date, a number, a time: null
	MaskOther         // any other text: "***"
)

var maskNames = [...]string{"", "rut", "email", "phone", "name", "withheld", "other"}

// String returns the mask's name, "" for [Unmasked].
func (m Mask) String() string {
	if int(m) < len(maskNames) {
		return maskNames[m]
	}
	return "unknown"
}

// MaskOf returns the mask of c's values: a value that is not text is
// withheld; a text is masked by what its name says it holds (a RUT, an
// e-mail, a phone, a name), else as "***".
func MaskOf(c Column) Mask {
	n := c.Name
	switch {
	case c.Kind != Text:
		return MaskWithheld
	case n == "rut" || strings.HasPrefix(n, "rut_") || strings.Contains(n, "_rut"):
		return MaskRUT
	case strings.Contains(n, "email"):
		return MaskEmail
	case strings.Contains(n, "phone"):
		return MaskPhone
	case n == "name" || strings.Contains(n, "name_") || strings.HasSuffix(n, "_name") || n == "attended_by":
		return MaskName
	}
	return MaskOther
}

// stars stands for what a mask hides.
const stars = "***"

// Apply returns v masked by m, appended to dst[:0]; nil when m withholds
// it. A nil value (NULL) stays nil and an empty one empty: neither says
// more than the mask would.
func (m Mask) Apply(dst, v []byte) []byte {
	if m == Unmasked {
		return v
	}
	if v == nil || m == MaskWithheld {
		return nil
	}
	dst = dst[:0]
	if len(v) == 0 {
		return append(dst, v...)
	}
	switch m {
	case MaskRUT:
		// The digits and the check digit, whatever the dots and hyphen.
		var first [2]byte
		n := 0
		var last byte
		for _, b := range v {
			if b >= '0' && b <= '9' || b == 'k' || b == 'K' {
				if n < 2 {
					first[n] = b
					n++
				}
				last = b
			}
		}
		if n < 2 {
			return append(dst, stars...)
		}
		dst = append(dst, first[:]...)
		dst = append(dst, ".***.***-"...)
		return append(dst, last)
	case MaskEmail:
		at := bytes.LastIndexByte(v, '@')
		if at < 1 {
			return append(dst, stars...)
		}
		_, n := utf8.DecodeRune(v)
		dst = append(dst, v[:n]...)
		dst = append(dst, stars...)
		return append(dst, v[at:]...)
	case MaskPhone:
		var last [2]byte
		n := 0
		for i := len(v) - 1; i >= 0 && n < 2; i-- {
			if v[i] >= '0' && v[i] <= '9' {
				n++
				last[2-n] = v[i]
			}
		}
		dst = append(dst, stars...)
		return append(dst, last[2-n:]...)
	case MaskName:
		r, n := utf8.DecodeRune(v)
		if !unicode.IsLetter(r) {
			return append(dst, stars...)
		}
		dst = append(dst, v[:n]...)
		return append(dst, stars...)
	}
	return append(dst, stars...)
}
