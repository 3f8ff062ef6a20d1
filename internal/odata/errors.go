package odata

import (
	"io"
	"strconv"
	"unicode/utf8"

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
//
// The errors of the query options also carry a Reason, a stable name of
// what is wrong (the reason* constants), and, when the fault is at one
// place of the option's value, its Position, in characters from 1.

// The reasons of the query options' errors. They are part of the API:
// once given, one is never renamed.
const (
	// 400: the request is malformed.
	reasonEmpty           = "empty"              // the option's value is empty
	reasonRepeated        = "repeated"           // an option, or a name in it, is given more than once
	reasonNotText         = "not_text"           // the value is not UTF-8 text, or holds a NUL
	reasonToken           = "token_in_parameter" // the value looks like an access token
	reasonSyntax          = "syntax"             // the value does not follow OData's grammar
	reasonUnknownOption   = "unknown_option"     // no such system query option
	reasonFeedOnly        = "feed_only"          // an option of the OData feed, given to another path
	reasonUnknownProperty = "unknown_property"   // the entity type has no such property
	reasonNotColumn       = "not_column"         // a property that is not a column of this path (a synthetic key)
	reasonUnknownNav      = "unknown_navigation" // the entity type has no such navigation property
	reasonUnknownFunction = "unknown_function"   // no OData function has this name
	reasonTypeMismatch    = "type_mismatch"      // operands or arguments of types that do not go together
	reasonArgumentCount   = "argument_count"     // a function given too few or too many arguments
	reasonBadArgument     = "bad_argument"       // an argument outside what the function takes
	reasonBadLiteral      = "bad_literal"        // a literal of no OData form, or out of its type's range
	reasonNotProperty     = "not_property"       // $orderby by a literal, which orders nothing
	reasonTooDeep         = "too_deep"           // $filter nested more deeply than informe reads
	reasonNotInteger      = "not_integer"        // $top or $skip is not a non-negative integer
	reasonOutOfRange      = "out_of_range"       // $top or $skip is too large
	reasonNotBoolean      = "not_boolean"        // $count is not true or false
	reasonNotAllowed      = "not_allowed"        // a value outside those the option takes ($format's parameters)
	reasonBadSkipToken    = "bad_skiptoken"      // $skiptoken is not one informe wrote for this query
	reasonBadKey          = "bad_key"            // the key of a request by key is malformed

	// 501: valid OData that informe does not implement.
	reasonUnsupportedOption     = "unsupported_option"     // $search, $apply, ...
	reasonUnsupportedOperator   = "unsupported_operator"   // arithmetic, has, negation
	reasonUnsupportedFunction   = "unsupported_function"   // an OData function informe lacks: round, now, ...
	reasonUnsupportedExpression = "unsupported_expression" // lambdas, paths, aliases, $it, ordering by an expression, ...
	reasonUnsupportedExpand     = "unsupported_expand"     // $expand beyond one level of navigations with $select
)

// badRequest and notImplemented make the errors of the query options.
// Their messages name what the client wrote, quoted with [secret.Quote];
// as a last line of defence, anything in them that may hold a token is
// redacted here too.
func badRequest(target, reason, msg string) *failure.Error {
	return &failure.Error{Code: failure.Invalid, Message: secret.Redact(msg), Target: secret.Redact(target), Reason: reason}
}

func notImplemented(target, reason, msg string) *failure.Error {
	return &failure.Error{Code: failure.NotImplemented, Message: secret.Redact(msg), Target: secret.Redact(target), Reason: reason}
}

func notAcceptable(target, msg string) *failure.Error {
	return &failure.Error{Code: failure.NotAcceptable, Message: secret.Redact(msg), Target: secret.Redact(target)}
}

// at sets e's position to that of byte offset off of src, the option's
// value, counted in characters from 1, and returns e.
func at(e *failure.Error, src string, off int) *failure.Error {
	e.Position = position(src, off)
	return e
}

// position is byte offset off of src in characters, from 1.
func position(src string, off int) int {
	off = min(max(off, 0), len(src))
	return utf8.RuneCountInString(src[:off]) + 1
}

// WriteError writes an OData JSON error body,
//
//	{"error":{"code":"BadRequest","message":"...","target":"$orderby",
//	  "innererror":{"code":"syntax","position":12}}}
//
// with "target" only when target is set, and "innererror" only when reason
// is: it carries the reason (see [failure.Error].Reason) and the position,
// when not 0, as the other paths' error body carries them. code is the
// OData error code (the HTTP layer uses the status's name). It returns w's
// error.
func WriteError(w io.Writer, code, message, target, reason string, position int) error {
	b := append(make([]byte, 0, 64+len(message)), `{"error":{"code":`...)
	b = export.AppendJSONString(b, []byte(code))
	b = append(b, `,"message":`...)
	b = export.AppendJSONString(b, []byte(message))
	if target != "" {
		b = append(b, `,"target":`...)
		b = export.AppendJSONString(b, []byte(target))
	}
	if reason != "" {
		b = append(b, `,"innererror":{"code":`...)
		b = export.AppendJSONString(b, []byte(reason))
		if position > 0 {
			b = append(b, `,"position":`...)
			b = strconv.AppendInt(b, int64(position), 10)
		}
		b = append(b, '}')
	}
	b = append(b, "}}"...)
	_, err := w.Write(b)
	return err
}
