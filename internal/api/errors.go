package api

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/informe/informe/internal/failure"
	"github.com/informe/informe/internal/odata"
	"github.com/informe/informe/internal/postgres"
)

var (
	errNotFound         = failure.Errorf(failure.NotFound, "Not Found")
	errMethodNotAllowed = &failure.Error{Code: methodNotAllowed, Message: "Method Not Allowed"}
	errHeadersTooLarge  = &failure.Error{Code: headersTooLarge,
		Message: fmt.Sprintf("Request Header Fields Too Large: the request's header fields may take %d KiB at most", MaxHeaderBytes>>10)}
)

// HTTP-only codes, outside the domain's codes.
const (
	methodNotAllowed failure.Code = 255
	headersTooLarge  failure.Code = 254
)

// MaxHeaderBytes bounds a request's header fields. informe checks it
// itself, so that the answer is JSON; the HTTP server's own limit
// (http.Server.MaxHeaderBytes) must be set above it, as a backstop.
const MaxHeaderBytes = 64 << 10

// retryAfter is the Retry-After sent with 503, in seconds.
const retryAfter = "5"

// status maps a failure code to its HTTP status. It is the one place where
// errors become statuses.
func status(code failure.Code) int {
	switch code {
	case failure.Invalid:
		return http.StatusBadRequest
	case failure.Unauthorized:
		return http.StatusUnauthorized
	case failure.Forbidden:
		return http.StatusForbidden
	case failure.NotFound:
		return http.StatusNotFound
	case methodNotAllowed:
		return http.StatusMethodNotAllowed
	case headersTooLarge:
		return http.StatusRequestHeaderFieldsTooLarge
	case failure.NotAcceptable:
		return http.StatusNotAcceptable
	case failure.Conflict:
		return http.StatusConflict
	case failure.Unavailable, failure.Busy:
		return http.StatusServiceUnavailable
	}
	return http.StatusInternalServerError
}

// odataCode is the OData error code of an error with HTTP status st that
// did not come from the odata package: the status's name without spaces.
func odataCode(st int) string {
	return strings.ReplaceAll(http.StatusText(st), " ", "")
}

// statusClientGone is logged and counted for a request whose client went
// away before its response was complete (nginx's 499); it is never sent.
const statusClientGone = 499

// fail answers the request with err as a JSON {"message": ...} body, unless
// the response has begun, in which case it aborts the response. Internal
// causes are logged with the request id and never sent. A request whose
// client has gone is only recorded as such.
func (s *Server) fail(c *gin.Context, err error) {
	if c.Request.Context().Err() != nil {
		st := state(c)
		st.clientGone = true
		s.Logger.LogAttrs(c.Request.Context(), slog.LevelInfo, "client gone",
			slog.String("request_id", st.id), slog.Any("error", err))
		if c.Writer.Written() {
			s.abort(c, err)
		}
		c.Abort()
		return
	}
	switch {
	case errors.Is(err, postgres.ErrBusy):
		s.Metrics.Refused("pool_busy")
	case errors.Is(err, context.DeadlineExceeded) && failure.CodeOf(err) == failure.Internal && c.Request.Context().Err() == nil:
		err = failure.Wrap(failure.Unavailable, err, "Service Unavailable: the request took longer than this server allows; ask for fewer rows, or try again")
	}
	code := failure.CodeOf(err)
	st := status(code)
	var oerr *odata.Error
	if errors.As(err, &oerr) {
		st = oerr.Status
	}
	if c.Writer.Written() {
		s.abort(c, err)
	}
	if st >= 500 && !errors.Is(err, context.Canceled) {
		s.Logger.LogAttrs(c.Request.Context(), slog.LevelError, "request failed",
			slog.String("request_id", state(c).id), slog.Int("status", st), slog.Any("error", err))
	}
	h := c.Writer.Header()
	// Headers a stream may have set before it failed.
	for _, k := range []string{"Content-Disposition", "Link", "X-Total-Count", "X-Total-Pages", "X-Current-Page",
		"Content-Encoding", "Content-Length", "Preference-Applied"} {
		h.Del(k)
	}
	switch st {
	case http.StatusUnauthorized:
		if state(c).page {
			break
		}
		// Both schemes are offered, so that clients that wait for a
		// challenge (Excel's Basic credential) send theirs.
		bearer := `Bearer realm="informe"`
		if state(c).tokenGiven {
			bearer += `, error="invalid_token"`
		}
		h["Www-Authenticate"] = []string{bearer, `Basic realm="informe", charset="UTF-8"`}
	case http.StatusServiceUnavailable:
		h.Set("Retry-After", retryAfter)
	}
	var body []byte
	if state(c).odata {
		// OData clients read errors in OData's own shape.
		if oerr == nil {
			oerr = &odata.Error{Status: st, Code: odataCode(st), Message: failure.MessageOf(err)}
		}
		var b bytes.Buffer
		_ = odata.WriteError(&b, oerr)
		body = b.Bytes()
	} else {
		body, _ = json.Marshal(struct {
			Message string `json:"message"`
		}{failure.MessageOf(err)})
	}
	h.Set("Content-Type", "application/json; charset=utf-8")
	c.Status(st)
	_, _ = c.Writer.Write(body)
	c.Abort()
}

// abort ends a response that has already begun: the connection is cut
// before the chunked body is terminated, so that no client can take a
// truncated body for a complete one. It does not return.
func (s *Server) abort(c *gin.Context, err error) {
	st := state(c)
	st.aborted = true
	if !errors.Is(err, context.Canceled) {
		s.Logger.LogAttrs(c.Request.Context(), slog.LevelError, "response aborted mid-stream",
			slog.String("request_id", st.id), slog.Any("error", err))
	}
	panic(http.ErrAbortHandler)
}
