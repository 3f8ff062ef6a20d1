// Package httplist reads the lexical parts of HTTP header fields that
// informe negotiates on (Accept, Accept-Encoding, Prefer) or is asked
// conditions in (If-None-Match): comma-separated
// lists whose elements carry semicolon-separated parameters, quoted
// strings, tokens and quality values, as RFC 9110 sections 5.6 and 12.4.2
// define them. What the elements mean is the caller's business.
package httplist

import "strings"

// Cut splits off the first sep-separated part of s, skipping separators
// inside quoted strings (with their backslash escapes), and returns it and
// the rest after the separator.
func Cut(s string, sep byte) (part, rest string) {
	quoted := false
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case quoted && c == '\\':
			i++ // skip the escaped byte
		case c == '"':
			quoted = !quoted
		case c == sep && !quoted:
			return s[:i], s[i+1:]
		}
	}
	return s, ""
}

// Split returns the sep-separated parts of s, as [Cut] finds them.
func Split(s string, sep byte) []string {
	var parts []string
	for {
		var p string
		p, s = Cut(s, sep)
		parts = append(parts, p)
		if s == "" {
			return parts
		}
	}
}

// Quality parses a qvalue into thousandths. It accepts RFC 9110's grammar
// ("0", "0.5", "1.000") and, leniently, a missing leading zero (".5") and
// more than three decimals (truncated), but nothing above 1.
func Quality(s string) (int, bool) {
	intPart, frac, hasDot := strings.Cut(s, ".")
	var q int
	switch intPart {
	case "0", "":
		if intPart == "" && (!hasDot || frac == "") {
			return 0, false
		}
	case "1":
		q = 1000
	default:
		return 0, false
	}
	scale := 100
	for i := 0; i < len(frac); i++ {
		c := frac[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		q += int(c-'0') * scale
		scale /= 10
	}
	if q > 1000 {
		return 0, false
	}
	return q, true
}

// TrimOWS trims RFC 9110 optional whitespace (spaces and tabs).
func TrimOWS(s string) string { return strings.Trim(s, " \t") }

// IsToken reports whether s is a non-empty RFC 9110 token.
func IsToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0:
		default:
			return false
		}
	}
	return true
}

// EntityTags reads an If-None-Match field value (its lines joined by
// commas), as RFC 9110 section 13.1.2 defines it: "*", or a list of
// entity tags, each an opaque tag in double quotes, weak with a "W/"
// before it. It returns the opaque tags without their quotes or W/ (If-
// None-Match compares weakly), any for "*", and ok false when the value
// is neither; empty list elements are skipped, as RFC 9110 section 5.6.1
// allows.
func EntityTags(s string) (tags []string, any bool, ok bool) {
	if TrimOWS(s) == "*" {
		return nil, true, true
	}
	for i := 0; ; {
		for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == ',') {
			i++
		}
		if i == len(s) {
			return tags, false, true
		}
		if strings.HasPrefix(s[i:], "W/") {
			i += 2
		}
		if i == len(s) || s[i] != '"' {
			return nil, false, false
		}
		end := strings.IndexByte(s[i+1:], '"')
		if end < 0 {
			return nil, false, false
		}
		tag := s[i+1 : i+1+end]
		for j := 0; j < len(tag); j++ {
			// etagc: %x21 / %x23-7E / obs-text
			if c := tag[j]; c < 0x21 || c == 0x7f {
				return nil, false, false
			}
		}
		tags = append(tags, tag)
		i += end + 2
		for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
			i++
		}
		if i < len(s) && s[i] != ',' {
			return nil, false, false
		}
	}
}
