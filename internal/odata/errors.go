package odata

import (
	"io"

	"github.com/informe/informe/export"
	"github.com/informe/informe/internal/failure"
	"github.com/informe/informe/internal/secret"
)

// Errors of this package are *failure.Error values with a Target (the
// query option or header at fault): failure.Invalid for a malformed
// request (400), failure.NotAcceptable for no acceptable format (406),
// failure.NotImplemented for valid OData that informe does not support
// (501). The HTTP layer maps them, like every other error, to a status, and
// writes them in OData's shape with [WriteError].

// badRequest and notImplemented make the errors of the query options.
// Their messages name what the client wrote, quoted with [secret.Quote];
// as a last line of defence, anything in them that may hold a token is
// redacted here too.
func badRequest(target, msg string) *failure.Error {
	return &failure.Error{Code: failure.Invalid, Message: secret.Redact(msg), Target: secret.Redact(target)}
}

func notImplemented(target, msg string) *failure.Error {
	return &failure.Error{Code: failure.NotImplemented, Message: secret.Redact(msg), Target: secret.Redact(target)}
}

func notAcceptable(target, msg string) *failure.Error {
	return &failure.Error{Code: failure.NotAcceptable, Message: secret.Redact(msg), Target: secret.Redact(target)}
}

// WriteError writes an OData JSON error body,
//
//	{"error":{"code":"NotImplemented","message":"...","target":"$filter"}}
//
// with "target" only when target is set; code is the OData error code (the
// HTTP layer uses the status's name). It returns w's error.
func WriteError(w io.Writer, code, message, target string) error {
	b := append(make([]byte, 0, 64+len(message)), `{"error":{"code":`...)
	b = export.AppendJSONString(b, []byte(code))
	b = append(b, `,"message":`...)
	b = export.AppendJSONString(b, []byte(message))
	if target != "" {
		b = append(b, `,"target":`...)
		b = export.AppendJSONString(b, []byte(target))
	}
	b = append(b, "}}"...)
	_, err := w.Write(b)
	return err
}
