package delivery

import (
	"context"
	"errors"

	"github.com/informe/informe/internal/failure"
	"github.com/informe/informe/internal/spool"
)

// Reasons a body was cut, as [Reason] names them in logs and metrics.
const (
	ClientGone          = "client_gone"          // the client closed or reset the connection
	ClientStalled       = "client_stalled"       // the client accepted nothing for the stall timeout
	DatabaseUnavailable = "database_unavailable" // the database went away or refused the work
	StatementTimeout    = "statement_timeout"    // PostgreSQL's statement_timeout
	RequestTimeout      = "request_timeout"      // the request timeout
	Shutdown            = "shutdown"             // the shutdown timeout
	TooLarge            = "too_large"            // a held body outgrew its bounds
	Internal            = "internal"             // anything else: a bug, or an unexpected failure
)

// Reason names why the work under ctx ended with err: who ended it, informe
// (a timeout, shutdown), the database, or the client. ctx is the request's
// (or the command's) context, whose cause says what informe cancelled it
// for.
//
// It names the error as [failure.Classify] classifies it; ctx's cause is
// looked at again for an error that already had a code, which Classify
// leaves as it is.
//
// A client is gone only when its side says so: ctx cancelled by net/http
// (the connection closed), or a write to the client failing, which the
// HTTP layer wraps with [failure.ErrClientGone]. An error's words or
// errno never decide it: a database connection reset is ECONNRESET too,
// and is the database's failure (DatabaseUnavailable), whatever it wraps.
func Reason(ctx context.Context, err error) string {
	err = failure.Classify(ctx, err)
	cause := context.Cause(ctx)
	switch {
	case errors.Is(err, failure.ErrShutdown) || errors.Is(cause, failure.ErrShutdown):
		return Shutdown
	case errors.Is(err, spool.ErrStalled):
		return ClientStalled
	case errors.Is(err, failure.ErrRequestTimeout) || errors.Is(cause, failure.ErrRequestTimeout):
		return RequestTimeout
	case errors.Is(err, failure.ErrStatementTimeout):
		return StatementTimeout
	case errors.Is(err, spool.ErrTooLarge):
		return TooLarge
	case errors.Is(err, failure.ErrClientGone):
		return ClientGone
	case failure.CodeOf(err) == failure.Unavailable:
		return DatabaseUnavailable
	}
	return Internal
}

// ServerSide reports whether a body cut for reason was cut by a fault on
// the server's side (informe's limits or shutdown, the database, a bug)
// rather than by its client (gone, or too slow for the stall timeout):
// the cuts an operator must be alerted to.
func ServerSide(reason string) bool {
	return reason != ClientGone && reason != ClientStalled
}
