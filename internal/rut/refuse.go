package rut

import (
	"errors"

	"github.com/informe/informe/internal/failure"
)

// ParseAs parses s as [Parse] does, as the value of target (a parameter,
// a flag or a property; "" when the caller names it): an error is a
// [failure.Invalid] naming target, with the reason rut_check_digit when
// only the check character is wrong, else rut_malformed, and Parse's
// client-safe sentence as its message.
func ParseAs(target, s string) (RUT, error) {
	r, err := Parse(s)
	if err == nil {
		return r, nil
	}
	reason := "rut_malformed"
	if errors.Is(err, ErrCheckDigit) {
		reason = "rut_check_digit"
	}
	return RUT{}, &failure.Error{Code: failure.Invalid, Target: target, Reason: reason, Message: err.Error(), Err: err}
}
