package destination

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"syscall"

	"github.com/informe/informe/internal/failure"
)

// The reasons ([failure.Error].Reason) of a delivery's failures, which a
// scheduler maps to what it does next. Only [ReasonUnreachable] and
// [ReasonInterrupted] are worth trying again as they are (see [Retryable]);
// the others need someone to change the destination or its server.
const (
	ReasonUnreachable = "unreachable"       // Unavailable: no connection, a timeout, the server's own failure (5xx)
	ReasonInterrupted = "interrupted"       // Unavailable: the delivery's context was cancelled
	ReasonAuth        = "auth_failed"       // Unauthorized: wrong password, key or access key
	ReasonHostKey     = "host_key_mismatch" // Unauthorized: the server's key is not the one known_hosts holds, or its certificate is not trusted
	ReasonUnknownHost = "host_unknown"      // Unauthorized: known_hosts holds no key for the server
	ReasonPermission  = "permission_denied" // Forbidden: no right to write there (a read-only folder too)
	ReasonFull        = "full"              // Conflict: no space left, a quota, a body too large
	ReasonNotFound    = "not_found"         // NotFound: no such folder or bucket
	ReasonRejected    = "rejected"          // Conflict: the receiver answered with another 4xx
	ReasonSecret      = "secret_missing"    // Invalid: a named environment variable or file gives no secret
	ReasonFailed      = "write_failed"      // Internal: anything else
)

// Retryable reports whether err, of a destination, may go away by itself,
// so that a later attempt with the same destination could succeed: its
// code is Unavailable.
func Retryable(err error) bool {
	return err != nil && failure.CodeOf(err) == failure.Unavailable
}

// lookupEnv is os.LookupEnv.
var lookupEnv = os.LookupEnv

// invalid returns an Invalid error of Parse about target.
func invalid(target, reason, format string, args ...any) *failure.Error {
	return failure.Invalidf(target, reason, format, args...)
}

// fail returns an error of a delivery with the reason's code, the message
// and err as its cause (for logs).
func fail(reason string, err error, format string, args ...any) *failure.Error {
	code := failure.Internal
	switch reason {
	case ReasonUnreachable, ReasonInterrupted:
		code = failure.Unavailable
	case ReasonAuth, ReasonHostKey, ReasonUnknownHost:
		code = failure.Unauthorized
	case ReasonPermission:
		code = failure.Forbidden
	case ReasonFull, ReasonRejected:
		code = failure.Conflict
	case ReasonNotFound:
		code = failure.NotFound
	case ReasonSecret:
		code = failure.Invalid
	}
	return &failure.Error{Code: code, Reason: reason, Message: fmt.Sprintf(format, args...), Err: err}
}

// coded reports whether err already is a *failure.Error.
func coded(err error) bool {
	var fe *failure.Error
	return errors.As(err, &fe)
}

// interrupted returns the error of work stopped because ctx was cancelled.
func interrupted(ctx context.Context, where string) error {
	return fail(ReasonInterrupted, context.Cause(ctx), "the delivery to %s was interrupted; nothing was written", where)
}

// fileReason classifies err of a local file system operation.
func fileReason(err error) string {
	switch {
	case errors.Is(err, syscall.ENOSPC), errors.Is(err, syscall.EDQUOT), errors.Is(err, syscall.EFBIG):
		return ReasonFull
	case errors.Is(err, fs.ErrPermission), errors.Is(err, syscall.EROFS):
		return ReasonPermission
	case errors.Is(err, fs.ErrNotExist), errors.Is(err, syscall.ENOTDIR):
		return ReasonNotFound
	}
	return ReasonFailed
}

// reasonWords says what a reason means, for messages.
var reasonWords = map[string]string{
	ReasonFull:       "there is no space left",
	ReasonPermission: "permission denied",
	ReasonNotFound:   "no such folder",
	ReasonFailed:     "the write failed",
}

// closeAll calls each of fs, returning the first error.
func closeAll(fs ...func() error) error {
	var first error
	for _, f := range fs {
		if err := f(); err != nil && first == nil {
			first = err
		}
	}
	return first
}
