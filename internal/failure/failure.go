// Package failure defines informe's one error type: a code that says what
// kind of failure it is and a message that is safe to show to a client.
// The HTTP layer maps codes to statuses in one place; anything that is not a
// *Error is an internal failure whose cause is logged, never sent.
// [Classify] says who ended a piece of work that informe, or its client,
// ended: the one place where a cancelled context becomes a failure.
package failure

import (
	"context"
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
	TooMany                    // the caller has as much work under way as it may; try again once some ends
	NotImplemented             // a valid request for something informe does not do

	// Refusals of a request's form, made before any work. They are codes
	// like the others, not statuses kept aside by the HTTP layer, so that
	// every error is one *Error answered by one function: a second kind of
	// error (or numbers outside this list) would need a second way to
	// answer it, log it and render it for OData.
	MethodNotAllowed // the path does not take the request's method
	HeadersTooLarge  // the request's header fields are over their bound
	URITooLong       // the path and query string are over their bound
	BodyTooLarge     // the request's body is over its bound
	BodyTimeout      // the request's body did not arrive in time
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
	// Position is where in Target's value the fault is, counted in
	// characters from 1 (the unexpected token of a $filter, the item of
	// a $select); 0 when the fault is the whole value, or there is none.
	Position int
	Err      error // the cause, for logs only; may be nil
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

// PositionOf returns the position of the first *Error in err's chain, or 0.
func PositionOf(err error) int {
	var e *Error
	if errors.As(err, &e) {
		return e.Position
	}
	return 0
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

// The client's messages of the work informe ends itself.
const (
	shutdownMessage       = "Service Unavailable: the server is shutting down; try again"
	requestTimeoutMessage = "Service Unavailable: the request took longer than this server allows; ask for fewer rows, or try again"
)

// Classify returns err, the error of work run under ctx, classified by who
// ended the work. When ctx was cancelled, whatever the work then met (a
// query cancelled, a connection closed) is the cancel's doing, and the
// error says why ctx was cancelled: [ErrShutdown] and [ErrRequestTimeout]
// (a passed deadline is the request timeout) become Unavailable with a
// message for the client; a cancel without a cause of informe's is
// [ErrClientGone], since net/http cancels a request's context when its
// client goes away. Under a live ctx, an err that holds ErrRequestTimeout
// or a passed deadline is the request timeout too. Any other err, nil, and
// an err that already has a code are returned as they are.
func Classify(ctx context.Context, err error) error {
	if err == nil || CodeOf(err) != Internal {
		return err
	}
	if ctx.Err() == nil {
		if errors.Is(err, ErrRequestTimeout) || errors.Is(err, context.DeadlineExceeded) {
			return timedOut(err)
		}
		return err
	}
	cause := context.Cause(ctx)
	switch {
	case errors.Is(cause, ErrShutdown):
		return Wrap(Unavailable, fmt.Errorf("%w: %w", cause, err), shutdownMessage)
	case errors.Is(cause, ErrRequestTimeout), errors.Is(cause, context.DeadlineExceeded):
		return timedOut(err)
	case errors.Is(cause, context.Canceled):
		return fmt.Errorf("%w: %w", ErrClientGone, err)
	}
	return fmt.Errorf("%w: %w", cause, err)
}

// timedOut returns err, of work that the request timeout ended, as the
// client is told of it, with [ErrRequestTimeout] in its chain.
func timedOut(err error) error {
	if !errors.Is(err, ErrRequestTimeout) {
		err = fmt.Errorf("%w: %w", ErrRequestTimeout, err)
	}
	return Wrap(Unavailable, err, requestTimeoutMessage)
}
