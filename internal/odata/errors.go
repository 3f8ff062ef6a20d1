package odata

import (
	"errors"
	"io"
	"net/http"

	"github.com/informe/informe/export"
	"github.com/informe/informe/internal/secret"
)

// The OData error codes this package uses in [Error.Code]. OData leaves
// codes to the service; these name the HTTP status they go with.
const (
	CodeBadRequest     = "BadRequest"     // 400: a malformed request
	CodeNotAcceptable  = "NotAcceptable"  // 406: no acceptable format
	CodeNotImplemented = "NotImplemented" // 501: valid OData that informe does not support
	CodeInternal       = "InternalServerError"
)

// Error is a request that cannot be served, with a message that is safe to
// show to clients. [Parse] and [Negotiate] return *Error values; write them
// with [WriteError].
type Error struct {
	Status  int    // HTTP status: 400, 406 or 501 from this package
	Code    string // OData error code, one of the Code constants
	Message string // for the client: what is wrong and what is supported
	Target  string // the query option or header at fault, e.g. "$filter"; may be ""
}

func (e *Error) Error() string { return e.Message }

// badRequest and notImplemented make the errors of the query options.
// Their messages name what the client wrote, quoted with [secret.Quote];
// as a last line of defence, anything in them that may hold a token is
// redacted here too.
func badRequest(target, msg string) *Error {
	return &Error{Status: http.StatusBadRequest, Code: CodeBadRequest, Message: secret.Redact(msg), Target: secret.Redact(target)}
}

func notImplemented(target, msg string) *Error {
	return &Error{Status: http.StatusNotImplemented, Code: CodeNotImplemented, Message: secret.Redact(msg), Target: secret.Redact(target)}
}

// AsError returns the *Error in err's chain, or, for any other error, a 500
// Internal Server Error whose message says nothing of err: the caller logs
// the cause.
func AsError(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return &Error{Status: http.StatusInternalServerError, Code: CodeInternal, Message: "Internal Server Error"}
}

// WriteError writes e as an OData JSON error body,
//
//	{"error":{"code":"NotImplemented","message":"...","target":"$filter"}}
//
// with "target" only when e.Target is set. Send it with the status e.Status
// and the Content-Type of the zero [Format]. It returns w's error.
func WriteError(w io.Writer, e *Error) error {
	b := append(make([]byte, 0, 64+len(e.Message)), `{"error":{"code":`...)
	b = export.AppendJSONString(b, []byte(e.Code))
	b = append(b, `,"message":`...)
	b = export.AppendJSONString(b, []byte(e.Message))
	if e.Target != "" {
		b = append(b, `,"target":`...)
		b = export.AppendJSONString(b, []byte(e.Target))
	}
	b = append(b, "}}"...)
	_, err := w.Write(b)
	return err
}
