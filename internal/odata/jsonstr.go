package odata

import "unicode/utf8"

// appendString appends s to dst as a quoted JSON string, escaped as
// encoding/json escapes without HTML escaping: '"', '\\' and control
// characters are escaped, so are U+2028 and U+2029, and each byte of
// invalid UTF-8 becomes \ufffd. It does not allocate beyond growing dst.
//
// export has the same routine unexported (export/json.go); the two should
// become one exported helper.
func appendString(dst, s []byte) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	done := 0 // s[:done] is already in dst
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c < utf8.RuneSelf && c != '"' && c != '\\' {
			i++
			continue
		}
		var esc string // replaces s[i:i+n]
		n := 1
		switch {
		case c == '"':
			esc = `\"`
		case c == '\\':
			esc = `\\`
		case c == '\n':
			esc = `\n`
		case c == '\r':
			esc = `\r`
		case c == '\t':
			esc = `\t`
		case c < 0x20:
			dst = append(dst, s[done:i]...)
			dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			i++
			done = i
			continue
		default:
			var r rune
			r, n = utf8.DecodeRune(s[i:])
			switch {
			case r == utf8.RuneError && n == 1:
				esc = `\ufffd`
			case r == '\u2028':
				esc = `\u2028`
			case r == '\u2029':
				esc = `\u2029`
			default:
				i += n
				continue
			}
		}
		dst = append(dst, s[done:i]...)
		dst = append(dst, esc...)
		i += n
		done = i
	}
	dst = append(dst, s[done:]...)
	return append(dst, '"')
}
