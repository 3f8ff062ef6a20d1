package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/informe/informe/internal/delivery"
	"github.com/informe/informe/internal/failure"
	"github.com/informe/informe/internal/odata"
	"github.com/informe/informe/internal/postgres"
	"github.com/informe/informe/internal/secret"
)

var (
	errNotFound         = failure.Errorf(failure.NotFound, "Not Found")
	errMethodNotAllowed = failure.Errorf(failure.MethodNotAllowed, "Method Not Allowed")
	errHeadersTooLarge  = failure.Errorf(failure.HeadersTooLarge,
		"Request Header Fields Too Large: the request's header fields may take %d KiB at most", MaxHeaderBytes>>10)
	errURITooLong = failure.Errorf(failure.URITooLong,
		"URI Too Long: the path and query string may take %d KiB at most", MaxURIBytes>>10)
	errBodyTooLarge = failure.Errorf(failure.BodyTooLarge,
		"Content Too Large: a request body may take %d KiB at most", MaxBodyBytes>>10)
	errBodyTimeout = failure.Errorf(failure.BodyTimeout,
		"Request Timeout: the request's body did not arrive in time")
)

// MaxHeaderBytes bounds a request's header fields. informe checks it
// itself, so that the answer is JSON; the HTTP server's own limit
// (http.Server.MaxHeaderBytes) must be set above it, as a backstop.
const MaxHeaderBytes = 64 << 10

// The challenges of every 401. The Bearer challenge carries no error code:
// RFC 6750 asks for none when no credentials were sent, and one only when
// they were would tell a prober which of its guesses reached informe.
const (
	challengeBearer = `Bearer realm="informe"`
	challengeBasic  = `Basic realm="informe", charset="UTF-8"`
)

// retryAfter is the Retry-After sent with 503 and 429, in seconds.
const retryAfter = "5"

// statuses are the HTTP statuses of the failure codes; any other is 500.
var statuses = map[failure.Code]int{
	failure.Invalid:          http.StatusBadRequest,
	failure.Unauthorized:     http.StatusUnauthorized,
	failure.Forbidden:        http.StatusForbidden,
	failure.NotFound:         http.StatusNotFound,
	failure.MethodNotAllowed: http.StatusMethodNotAllowed,
	failure.HeadersTooLarge:  http.StatusRequestHeaderFieldsTooLarge,
	failure.URITooLong:       http.StatusRequestURITooLong,
	failure.BodyTooLarge:     http.StatusRequestEntityTooLarge,
	failure.BodyTimeout:      http.StatusRequestTimeout,
	failure.NotAcceptable:    http.StatusNotAcceptable,
	failure.Conflict:         http.StatusConflict,
	failure.Unavailable:      http.StatusServiceUnavailable,
	failure.Busy:             http.StatusServiceUnavailable,
	failure.TooMany:          http.StatusTooManyRequests,
	failure.NotImplemented:   http.StatusNotImplemented,
}

// status maps a failure code to its HTTP status. It is the one place where
// errors become statuses.
func status(code failure.Code) int {
	if st, ok := statuses[code]; ok {
		return st
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
// the response has begun, in which case it cuts the response. Internal
// causes are logged with the request id and never sent. A request whose
// client went away (it closed or reset the connection) is only recorded
// as such; every other cut is informe's, logged with its reason. Messages
// are built not to repeat a token (see secret.Quote); as a last line of
// defence, anything in a message, a target or a logged error that may hold
// one is redacted. Every 401 is the same, whatever the path and method.
func (s *Server) fail(c *gin.Context, err error) {
	reason := delivery.Reason(c.Request.Context(), err)
	if reason == delivery.ClientGone {
		st := state(c)
		st.clientGone = true
		s.Logger.LogAttrs(c.Request.Context(), slog.LevelInfo, "client gone",
			slog.String("request_id", st.id), loggedError(err))
		s.Metrics.Cut(delivery.ClientGone)
		// Nothing more is written, not even a status: a response that was
		// never begun must not go out as an empty 200 to a client that is,
		// after all, still there.
		panic(http.ErrAbortHandler)
	}
	err = failure.Classify(c.Request.Context(), err)
	code := failure.CodeOf(err)
	st := status(code)
	state(c).failed = failure.ReasonOf(err)
	if c.Writer.Written() {
		s.abort(c, err)
	}
	switch {
	case errors.Is(err, postgres.ErrBusy):
		s.Metrics.Refused("pool_busy")
	case reason == delivery.DatabaseUnavailable:
		s.Metrics.Refused(delivery.DatabaseUnavailable)
	}
	if st >= 500 {
		level, msg := slog.LevelError, "request failed"
		if st == http.StatusNotImplemented {
			// The client asked for something informe does not do: no
			// failure of the server.
			level, msg = slog.LevelInfo, "request not supported"
		}
		s.Logger.LogAttrs(c.Request.Context(), level, msg,
			slog.String("request_id", state(c).id), slog.Int("status", st), loggedError(err))
	}
	h := c.Writer.Header()
	// Headers a stream may have set before it failed.
	for _, k := range []string{"Content-Disposition", "Link", "X-Total-Count", "X-Total-Pages", "X-Current-Page",
		"Content-Encoding", "Content-Length", "Preference-Applied"} {
		h.Del(k)
	}
	switch st {
	case http.StatusUnauthorized:
		// A 401 tells nothing of the path, nor of what credentials were
		// sent, if any: no Allow (gin sets it on a path known under other
		// methods), no OData header or error shape, the same challenges.
		h.Del("Allow")
		h.Del("OData-Version")
		if state(c).page {
			// The page's own requests: no challenge, so that browsers
			// show the page's message, not a credential dialog (they
			// show one for a Basic challenge even to a fetch).
			break
		}
		// Both schemes are offered, so that clients that wait for a
		// challenge (Excel's Basic credential) send theirs.
		h["Www-Authenticate"] = []string{challengeBearer, challengeBasic}
	case http.StatusServiceUnavailable, http.StatusTooManyRequests:
		h.Set("Retry-After", retryAfter)
	}
	var body []byte
	message := secret.Redact(failure.MessageOf(err))
	if state(c).odata && st != http.StatusUnauthorized {
		// OData clients read errors in OData's own shape.
		var b bytes.Buffer
		// Its reason and position go in innererror, as the other paths
		// give them beside the message.
		_ = odata.WriteError(&b, odataCode(st), message, secret.Redact(failure.TargetOf(err)),
			failure.ReasonOf(err), failure.PositionOf(err))
		body = b.Bytes()
	} else {
		// A failure with a stable reason carries it as code, the
		// parameter at fault as target and the place in its value as
		// position, beside the message: clients such as the web page word
		// it in their reader's language. A 401 stays exactly
		// {"message":"Invalid Token"}.
		var code, target string
		var position int
		if st != http.StatusUnauthorized {
			code, target, position = failure.ReasonOf(err), secret.Redact(failure.TargetOf(err)), failure.PositionOf(err)
		}
		if code == "" {
			target, position = "", 0
		}
		body, _ = json.Marshal(struct {
			Message  string `json:"message"`
			Code     string `json:"code,omitempty"`
			Target   string `json:"target,omitempty"`
			Position int    `json:"position,omitempty"`
		}{message, code, target, position})
	}
	h.Set("Content-Type", "application/json; charset=utf-8")
	c.Status(st)
	_, _ = c.Writer.Write(body)
	c.Abort()
}

// writeFailure answers a request of the operations listener, which knows
// no gin, with err, a refusal before any work, in the API's JSON shape.
func writeFailure(w http.ResponseWriter, err error) {
	body, _ := json.Marshal(struct {
		Message string `json:"message"`
	}{secret.Redact(failure.MessageOf(err))})
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status(failure.CodeOf(err)))
	_, _ = w.Write(body)
}

// abort ends a response that has already begun: the connection is cut
// before the chunked body is terminated, so that no client can take a
// truncated body for a complete one. The cut is logged with its reason, at
// ERROR when the fault is informe's or the database's, at WARN when it is
// the client's (it stalled). It does not return.
func (s *Server) abort(c *gin.Context, err error) {
	st := state(c)
	st.aborted = true
	st.reason = delivery.Reason(c.Request.Context(), err)
	s.Logger.LogAttrs(c.Request.Context(), cutLevel(st.reason), "response cut",
		slog.String("request_id", st.id), slog.String("reason", st.reason), loggedError(err))
	s.Metrics.Cut(st.reason)
	panic(http.ErrAbortHandler)
}

// cutLevel is the log level of a response cut for reason: ERROR for
// informe's faults and the database's, which an operator must hear of, WARN
// for a client's, which the stall timeout decided.
func cutLevel(reason string) slog.Level {
	if delivery.ServerSide(reason) {
		return slog.LevelError
	}
	return slog.LevelWarn
}

// loggedError is err's log attribute, with anything that may hold a token
// redacted.
func loggedError(err error) slog.Attr {
	return slog.String("error", secret.Redact(err.Error()))
}
