// Package rut parses Chilean RUTs (Rol Único Tributario, the national
// tax and identity number) and computes their modulo 11 check digits.
//
// A RUT is a body of up to eight digits and a check character, '0'-'9' or
// 'K', written "12.345.678-5", "12345678-5" or "123456785". [Parse] accepts
// the forms people type; [RUT.Key] gives the normalized form that the
// database's rut_key function gives, so RUTs compare whatever form they
// were stored or typed in.
package rut

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/informe/informe/internal/secret"
)

// MaxBody is the largest body [Parse] accepts. Personal RUTs are below
// 30 million and company RUTs below 100 million.
const MaxBody = 99_999_999

// maxDigits bounds the digits of a typed body, leading zeros included, so
// "012.345.678-5" passes and a run of zeros does not.
const maxDigits = 9

// Errors returned by [Parse], to test with errors.Is. The error's own text
// is a client-safe sentence that quotes the input and says what is wrong.
var (
	// ErrMalformed means the text is not written as a RUT.
	ErrMalformed = errors.New("rut: malformed")
	// ErrCheckDigit means the text is written as a RUT whose check
	// character does not match its body.
	ErrCheckDigit = errors.New("rut: wrong check digit")
)

// RUT is a parsed RUT. Check is the check character, '0'-'9' or 'K'.
type RUT struct {
	Body  int
	Check byte
}

// New returns the RUT with the given body and its computed check digit.
func New(body int) RUT {
	return RUT{Body: body, Check: CheckDigit(body)}
}

// CheckDigit returns the modulo 11 check character of body: '0'-'9' or
// 'K'. body must not be negative.
func CheckDigit(body int) byte {
	sum, factor := 0, 2
	for ; body > 0; body /= 10 {
		sum += body % 10 * factor
		if factor++; factor > 7 {
			factor = 2
		}
	}
	switch r := 11 - sum%11; r {
	case 11:
		return '0'
	case 10:
		return 'K'
	default:
		return byte('0' + r)
	}
}

// String returns the RUT as digits, a hyphen and the check character,
// such as "12345678-5".
func (r RUT) String() string {
	return strconv.Itoa(r.Body) + "-" + string(r.Check)
}

// Dotted returns the RUT with thousands separated by dots, such as
// "12.345.678-5".
func (r RUT) Dotted() string {
	digits := strconv.Itoa(r.Body)
	var b strings.Builder
	b.Grow(len(digits) + len(digits)/3 + 2)
	for i := 0; i < len(digits); i++ {
		if i > 0 && (len(digits)-i)%3 == 0 {
			b.WriteByte('.')
		}
		b.WriteByte(digits[i])
	}
	b.WriteByte('-')
	b.WriteByte(r.Check)
	return b.String()
}

// Key returns the body's digits followed by the check character, without
// leading zeros, such as "123456785". It equals what the database function
// rut_key returns for any form of the same RUT.
func (r RUT) Key() string {
	return strconv.Itoa(r.Body) + string(r.Check)
}

// Parse reads a RUT in the forms people type: "12.345.678-5",
// "12345678-5", "123456785", with the check character 'k' in either case
// and spaces around. Dots, when present, must separate every group of
// three digits. It returns an error that wraps [ErrMalformed] when s is not
// written as a RUT (empty, other characters, misplaced dots or hyphen, a
// body of zero or above [MaxBody]) and one that wraps [ErrCheckDigit] when
// the check character does not match the body.
func Parse(s string) (RUT, error) {
	t := strings.TrimSpace(s)
	if t == "" {
		return RUT{}, malformed(t, "it is empty")
	}
	check := t[len(t)-1]
	switch {
	case check == 'k':
		check = 'K'
	case check == 'K', check >= '0' && check <= '9':
	default:
		return RUT{}, malformed(t, "it must end in a check digit 0-9 or K")
	}
	body := strings.TrimSuffix(t[:len(t)-1], "-")
	if body == "" {
		return RUT{}, malformed(t, "it has no digits before the check digit")
	}
	digits := 0
	n := 0
	for i := 0; i < len(body); i++ {
		switch c := body[i]; {
		case c >= '0' && c <= '9':
			if digits++; digits > maxDigits {
				return RUT{}, malformed(t, "it has too many digits")
			}
			n = n*10 + int(c-'0')
		case c == '.':
		case c == '-':
			return RUT{}, malformed(t, "the hyphen must come just before the check digit")
		case c == 'k' || c == 'K':
			return RUT{}, malformed(t, "K may only be the check digit")
		default:
			r, _ := utf8.DecodeRuneInString(body[i:])
			return RUT{}, malformed(t, fmt.Sprintf("it has the character %q", r))
		}
	}
	if strings.Contains(body, ".") && !dottedWell(body) {
		return RUT{}, malformed(t, "its dots must separate groups of three digits")
	}
	if n == 0 {
		return RUT{}, malformed(t, "its number is zero")
	}
	if n > MaxBody {
		return RUT{}, malformed(t, "its number is too large")
	}
	if CheckDigit(n) != check {
		return RUT{}, &parseError{input: t, err: ErrCheckDigit}
	}
	return RUT{Body: n, Check: check}, nil
}

// dottedWell reports whether body, made of digits and dots, has a first
// group of one to three digits followed by groups of exactly three.
func dottedWell(body string) bool {
	groups := strings.Split(body, ".")
	if len(groups[0]) < 1 || len(groups[0]) > 3 {
		return false
	}
	for _, g := range groups[1:] {
		if len(g) != 3 {
			return false
		}
	}
	return true
}

// parseError is the error of [Parse]: its text is safe to show a client.
type parseError struct {
	input  string
	reason string
	err    error // ErrMalformed or ErrCheckDigit
}

func malformed(input, reason string) error {
	return &parseError{input: input, reason: reason, err: ErrMalformed}
}

func (e *parseError) Error() string {
	in := e.input
	// Quote at most a few dozen characters of whatever was sent, and
	// nothing of a token.
	if utf8.RuneCountInString(in) > 40 {
		r := []rune(in)
		in = string(r[:40]) + "…"
	}
	quoted := secret.LooksLikeToken
	if !secret.MayHoldToken(e.input) {
		quoted = strconv.Quote(in)
	}
	if e.err == ErrCheckDigit {
		return fmt.Sprintf("rut %s has a wrong check digit", quoted)
	}
	return fmt.Sprintf("rut %s is not a RUT: %s", quoted, e.reason)
}

func (e *parseError) Unwrap() error { return e.err }
