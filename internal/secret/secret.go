// Package secret recognises text that may hold an informe access token, so
// that no error message, log line or link repeats one. It knows the tokens'
// visible shape only (package auth issues and checks them) and imports
// nothing of informe, so that every parser of client input can use it.
package secret

import "strconv"

// TokenPrefix starts every informe token, so that secret scanners, and
// [MayHoldToken], recognise them.
const TokenPrefix = "informe_"

// TokenBodyLen is the length of a token's body, the base64url text (no
// padding) of 32 random bytes that follows [TokenPrefix].
const TokenBodyLen = 43

// minBodyRun is the shortest run of base64url characters that
// [MayHoldToken] takes for a token's body whose prefix was stripped (or a
// good part of one) when it mixes upper- and lower-case letters: a random
// body of [TokenBodyLen] characters lacks either case with a probability
// of about 4e-10, while ids, UUIDs, names and numbers rarely have 24
// characters without a separator and both cases.
const minBodyRun = 24

// LooksLikeToken is what messages say in place of a value that may hold
// a token.
const LooksLikeToken = "a value that looks like an access token"

// MayHoldToken reports whether s may hold an informe token, or the body of
// one without its prefix: it holds [TokenPrefix] in any case, or a run of
// at least 24 base64url characters (letters, digits, '-' and '_') with
// both upper- and lower-case letters.
func MayHoldToken(s string) bool {
	for i := 0; i < len(s); {
		start, end, ok := nextSuspect(s, i)
		if ok {
			return true
		}
		if start == end {
			break
		}
		i = end
	}
	return false
}

// Quote returns s double-quoted, as strconv.Quote does, for a message
// that names a client's value; or, when s may hold a token, [LooksLikeToken]
// without any of s.
func Quote(s string) string {
	if MayHoldToken(s) {
		return LooksLikeToken
	}
	return strconv.Quote(s)
}

// Redact returns s with every run of base64url characters that may hold a
// token (see [MayHoldToken]) replaced by REDACTED. It is the last line of
// defence for text about to be logged or sent whose parts are not known.
func Redact(s string) string {
	if !MayHoldToken(s) {
		return s
	}
	var b []byte
	last := 0
	for i := 0; i < len(s); {
		start, end, ok := nextSuspect(s, i)
		if start == end {
			break
		}
		if ok {
			b = append(b, s[last:start]...)
			b = append(b, "REDACTED"...)
			last = end
		}
		i = end
	}
	return string(append(b, s[last:]...))
}

// nextSuspect finds the next maximal run of base64url characters in s from
// i, as s[start:end], and reports whether it may hold a token. start ==
// end when there is none.
func nextSuspect(s string, i int) (start, end int, suspect bool) {
	for i < len(s) && !isBase64URL(s[i]) {
		i++
	}
	start = i
	var upper, lower bool
	for i < len(s) && isBase64URL(s[i]) {
		switch c := s[i]; {
		case c >= 'A' && c <= 'Z':
			upper = true
		case c >= 'a' && c <= 'z':
			lower = true
		}
		i++
	}
	run := s[start:i]
	// The prefix alone (a message saying what a token starts with) holds
	// nothing secret; the prefix with anything after it may be a token.
	return start, i, (upper && lower && len(run) >= minBodyRun) || len(run) > len(TokenPrefix) && containsFold(run, TokenPrefix)
}

func isBase64URL(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_'
}

// containsFold reports whether s contains the lower-case ASCII text sub in
// any case.
func containsFold(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		j := 0
		for ; j < len(sub); j++ {
			c := s[i+j]
			if c >= 'A' && c <= 'Z' {
				c += 'a' - 'A'
			}
			if c != sub[j] {
				break
			}
		}
		if j == len(sub) {
			return true
		}
	}
	return false
}
