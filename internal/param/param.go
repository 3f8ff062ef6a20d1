// Package param reads query parameters strictly: a parameter is given at
// most once, never empty, and within its range, or the caller gets a
// failure.Invalid error whose message names the parameter and what it allows.
package param

import (
	"math"
	"net/url"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/informe/informe/internal/dataset"
	"github.com/informe/informe/internal/failure"
	"github.com/informe/informe/internal/secret"
)

// Single returns the one value of parameter name and whether it was given.
// It fails if the parameter is given more than once, with an empty value,
// with a value that is not UTF-8 text or holds a NUL, or with a value that
// may hold an access token (see [secret.MayHoldToken]): no parameter takes
// one, and a filter holding one would carry it into links and logs.
func Single(v url.Values, name string) (string, bool, error) {
	vals, ok := v[name]
	switch {
	case !ok:
		return "", false, nil
	case len(vals) > 1:
		return "", false, failure.Invalidf(name, "repeated", "%s must be given at most once", name)
	case vals[0] == "":
		return "", false, failure.Invalidf(name, "empty", "%s must not be empty", name)
	case !utf8.ValidString(vals[0]) || strings.IndexByte(vals[0], 0) >= 0:
		// PostgreSQL would refuse either (SQLSTATE 22021): say so here.
		return "", false, failure.Invalidf(name, "not_text", "%s must be UTF-8 text without NUL characters", name)
	case secret.MayHoldToken(vals[0]):
		return "", false, failure.Invalidf(name, "token_in_parameter",
			"%s: got %s; send the token in the Authorization header (or the access_token parameter) only", name, secret.LooksLikeToken)
	}
	return vals[0], true, nil
}

// Int reads parameter name as a base-10 integer (digits only) from 1 to max,
// returning def when it is absent.
func Int(v url.Values, name string, def, max int64) (int64, error) {
	s, ok, err := Single(v, name)
	if err != nil || !ok {
		return def, err
	}
	bad := failure.Invalidf(name, "not_integer", "%s must be an integer from 1 to %d, got %s", name, max, secret.Quote(s))
	if max == math.MaxInt64 {
		bad = failure.Invalidf(name, "not_integer", "%s must be an integer of 1 or more, got %s", name, secret.Quote(s))
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, bad
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 1 || n > max {
		return 0, bad
	}
	return n, nil
}

// Bool reads parameter name as true or false, returning def when absent.
func Bool(v url.Values, name string, def bool) (bool, error) {
	s, ok, err := Single(v, name)
	if err != nil || !ok {
		return def, err
	}
	switch s {
	case "true":
		return true, nil
	case "false":
		return false, nil
	}
	return false, failure.Invalidf(name, "not_boolean", "%s must be true or false, got %s", name, secret.Quote(s))
}

// OneOf reads parameter name as one of allowed (exact match), returning
// def when absent.
func OneOf(v url.Values, name, def string, allowed ...string) (string, error) {
	s, ok, err := Single(v, name)
	if err != nil || !ok {
		return def, err
	}
	for _, a := range allowed {
		if s == a {
			return s, nil
		}
	}
	return "", failure.Invalidf(name, "not_allowed", "%s must be one of %s, got %s", name, strings.Join(allowed, ", "), secret.Quote(s))
}

// Columns reads the columns parameter: field names of all, comma-separated,
// in the order wanted. It returns all when the parameter is absent, and
// fails naming an unknown or repeated field.
func Columns(v url.Values, all []dataset.Column) ([]dataset.Column, error) {
	s, ok, err := Single(v, "columns")
	if err != nil || !ok {
		return all, err
	}
	cols, err := dataset.Select(all, strings.Split(s, ","))
	if err != nil {
		return nil, &failure.Error{Code: failure.Invalid, Target: "columns", Reason: "bad_column", Message: "columns: " + err.Error(), Err: err}
	}
	return cols, nil
}
