// Package failure defines informe's one error type: a code that says what
// kind of failure it is and a message that is safe to show to a client.
// The HTTP layer maps codes to statuses in one place; anything that is not a
// *Error is an internal failure whose cause is logged, never sent.
package failure

import (
	"errors"
	"fmt"
)

// Code classifies a failure.
type Code uint8

// The failure codes.
const (
	Internal       Code = iota // a bug or an unexpected failure
	Invalid                    // a request parameter is wrong
	Unauthorized               // missing or invalid credentials
	Forbidden                  // valid credentials without the needed scope
	NotFound                   // no such thing
	NotAcceptable              // no offered representation satisfies the client
	Unavailable                // the database cannot be reached; try again later
	Conflict                   // the request conflicts with existing data
	Busy                       // informe is at capacity; try again shortly
	NotImplemented             // a valid request for something informe does not do
)

// Error is a failure with a client-safe message.
type Error struct {
	Code    Code
	Message string
	// Target names the parameter, query option or header at fault, such
	// as "$filter"; it may be empty. OData's error shape carries it.
	Target string
	// Reason is a stable, machine-readable name of what is wrong, such as
	// "rut_check_digit", for clients that word the failure themselves (the
	// web page, in its reader's language); it may be empty. Reasons are
	// part of the API: once given, one is never renamed.
	Reason string
	Err    error // the cause, for logs only; may be nil
}

func (e *Error) Error() string {
	if e.Err != nil {
		return e.Message + ": " + e.Err.Error()
	}
	return e.Message
}

func (e *Error) Unwrap() error { return e.Err }

// Errorf returns an *Error with the given code and formatted message.
func Errorf(code Code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// Wrap returns an *Error with the given code and message whose cause is err.
func Wrap(code Code, err error, message string) *Error {
	return &Error{Code: code, Message: message, Err: err}
}

// CodeOf returns the code of the first *Error in err's chain, or Internal.
func CodeOf(err error) Code {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return Internal
}

// TargetOf returns the target of the first *Error in err's chain, or "".
func TargetOf(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Target
	}
	return ""
}

// Invalidf returns an Invalid *Error about target (a parameter's name)
// with a stable reason (see [Error].Reason) and the formatted message.
func Invalidf(target, reason, format string, args ...any) *Error {
	return &Error{Code: Invalid, Target: target, Reason: reason, Message: fmt.Sprintf(format, args...)}
}

// ReasonOf returns the reason of the first *Error in err's chain, or "".
func ReasonOf(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Reason
	}
	return ""
}

// MessageOf returns the client-safe message of the first *Error in err's
// chain, or "Internal Server Error" for any other error.
func MessageOf(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Message
	}
	return "Internal Server Error"
}

// Causes of work that informe itself ends, given to the contexts it cancels
// (context.WithCancelCause, context.WithTimeoutCause) and found in the
// errors that result, so that a cut response says who cut it.
var (
	// ErrShutdown ends the requests still running at the shutdown timeout.
	ErrShutdown = errors.New("the server is shutting down")
	// ErrRequestTimeout ends a request whose database side took longer
	// than the request timeout.
	ErrRequestTimeout = errors.New("the request took longer than this server allows")
	// ErrStatementTimeout is a statement that PostgreSQL cancelled at its
	// statement_timeout.
	ErrStatementTimeout = errors.New("a statement took longer than the database allows")
	// ErrClientGone is the cause of work stopped because its client closed
	// or reset the connection.
	ErrClientGone = errors.New("the client closed the connection")
)
