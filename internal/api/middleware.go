package api

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"runtime/debug"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/informe/informe/auth"
	"github.com/informe/informe/internal/audit"
	"github.com/informe/informe/internal/dataset"
	"github.com/informe/informe/internal/failure"
	"github.com/informe/informe/internal/odata"
	"github.com/informe/informe/internal/postgres"
	"github.com/informe/informe/internal/secret"
	"github.com/informe/informe/internal/web"
	"github.com/informe/informe/metrics"
)

// observe gives each request an id (echoed in X-Request-Id), then logs it
// and records its metrics when it ends, aborted responses included.
func (s *Server) observe(c *gin.Context) {
	start := time.Now()
	id := c.GetHeader("X-Request-Id")
	if !validRequestID(id) || auth.MayHoldToken(id) {
		// An id that may be a token is replaced, never echoed or logged.
		var b [12]byte
		_, _ = rand.Read(b[:])
		id = hex.EncodeToString(b[:])
	}
	st := &request{id: id}
	if p := c.Request.URL.Path; p == odataPrefix || strings.HasPrefix(p, odataPrefix+"/") {
		st.odata = true
		c.Header("OData-Version", odata.Version)
	}
	st.page = s.Site != nil && pagePath(c.Request.URL.Path)
	ctx := withRequest(c.Request.Context(), st)
	if s.Audit.Mode() != audit.Off {
		st.audit = s.newRecord(c, start, id)
		ctx = audit.NewContext(ctx, st.audit)
	}
	c.Request = c.Request.WithContext(ctx)
	h := c.Writer.Header()
	h.Set("X-Request-Id", id)
	// Responses carry personal data: no cache may keep them, and never a
	// response to a request that carried its token in the URL.
	h.Set("Cache-Control", "private, no-store")
	// No browser may take a JSON or CSV body for a page or a script.
	h.Set("X-Content-Type-Options", "nosniff")
	w := &timingWriter{ResponseWriter: c.Writer}
	c.Writer = w
	s.inFlight.Add(1)
	defer s.inFlight.Done() // after the log line, deferred below
	done := s.Metrics.Started()
	defer func() {
		done()
		route := c.FullPath()
		if route == "" {
			route = "unmatched"
		}
		status := w.Status()
		counted := status
		switch {
		case st.clientGone:
			status, counted = statusClientGone, statusClientGone
		case st.aborted:
			// The log keeps the status sent, with the outcome cut; the
			// metric counts 0, as the client saw a cut connection.
			counted = 0
		}
		var ttfb time.Duration
		if !w.first.IsZero() {
			ttfb = w.first.Sub(start)
		}
		s.Metrics.Observe(metrics.Request{
			Route: route, Format: st.format, Status: counted,
			Rows: st.rows, Bytes: w.Size(),
			Duration: time.Since(start), FirstByte: ttfb,
		})
		attrs := []slog.Attr{
			slog.String("request_id", id),
			slog.String("method", c.Request.Method),
			slog.String("path", loggedPath(c.Request.URL.Path)),
			slog.String("query", loggedQuery(c.Request.URL.RawQuery)),
			slog.Int("status", status),
			slog.Duration("duration", time.Since(start)),
			slog.Int("bytes", max(w.Size(), 0)),
		}
		if st.principal != nil {
			attrs = append(attrs, slog.String("token", st.principal.Name))
		}
		if st.format != "" {
			attrs = append(attrs, slog.String("format", st.format), slog.Int("rows", st.rows))
		}
		if st.ticket != nil && st.ticket.Burst() {
			attrs = append(attrs, slog.Bool("burst", true))
			if st.ticket.Batches() {
				attrs = append(attrs, slog.Bool("batches", true))
			}
		}
		if st.parts > 0 {
			attrs = append(attrs, slog.Int("parts", st.parts))
		}
		if st.onePart != "" {
			attrs = append(attrs, slog.String("one_part", st.onePart))
		}
		level := slog.LevelInfo
		if st.aborted {
			attrs = append(attrs, slog.String("outcome", "cut"), slog.Bool("aborted", true), slog.String("reason", st.reason))
			level = cutLevel(st.reason)
		}
		// The record's close is queued before the line is logged: once a
		// request is logged, its record is closed or on its way.
		s.closeRecord(st, w.Status(), w.Size())
		s.Logger.LogAttrs(c.Request.Context(), level, "request", attrs...)
	}()
	c.Next()
}

// limitHeaders answers 431 in JSON when the request's header fields exceed
// [MaxHeaderBytes].
func (s *Server) limitHeaders(c *gin.Context) {
	if headerBytes(c.Request) > MaxHeaderBytes {
		s.fail(c, errHeadersTooLarge)
		return
	}
	c.Next()
}

// headerBytes is the size of r's request target and header fields, as
// [MaxHeaderBytes] counts it.
func headerBytes(r *http.Request) int {
	n := len(r.RequestURI)
	for k, vs := range r.Header {
		for _, v := range vs {
			n += len(k) + len(v) + 4 // ": " and CRLF
		}
	}
	return n
}

// limitRequest refuses, before any work, a request larger than informe
// reads: a path and query string over [MaxURIBytes] (414), a parameter
// value over its limit (400 naming it, see [paramLimits]), a body over
// [MaxBodyBytes] (413) or one that does not arrive within the body timeout
// (408). A body within the bounds is read whole here, under a read
// deadline, so that neither a handler nor net/http (which reads what a
// handler left before it answers) waits on a client that announced a body
// it does not send.
func (s *Server) limitRequest(c *gin.Context) {
	err := error(nil)
	switch {
	case len(c.Request.RequestURI) > MaxURIBytes:
		err = errURITooLong
	default:
		err = checkParams(c.Request.URL.RawQuery)
	}
	body := c.Request.ContentLength != 0 && c.Request.Body != nil && c.Request.Body != http.NoBody
	if err == nil && body {
		err = s.readBody(c)
	}
	if err != nil {
		if body {
			// Nothing more is read from this connection, neither the rest
			// of the body (net/http would wait for it) nor another request.
			c.Header("Connection", "close")
			_ = http.NewResponseController(c.Writer).SetReadDeadline(time.Now())
		}
		s.fail(c, err)
		return
	}
	c.Next()
}

// readBody reads the request's body, at most [MaxBodyBytes], within the
// body timeout, and puts it back for the handler.
func (s *Server) readBody(c *gin.Context) error {
	if c.Request.ContentLength > MaxBodyBytes {
		return errBodyTooLarge
	}
	rc := http.NewResponseController(c.Writer)
	// Without a deadline a client could hold the connection by announcing
	// a body it never sends. The deadline is lifted once the body is in,
	// or net/http's watch for a client gone would end the request with it.
	_ = rc.SetReadDeadline(time.Now().Add(s.Limits.bodyTimeout()))
	body, err := io.ReadAll(http.MaxBytesReader(c.Writer, c.Request.Body, MaxBodyBytes))
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(err, &tooLarge):
		return errBodyTooLarge
	case err != nil:
		if ne, ok := err.(net.Error); ok && ne.Timeout() {
			return errBodyTimeout
		}
		return failure.Wrap(failure.Invalid, err, "the request's body could not be read")
	}
	_ = rc.SetReadDeadline(time.Time{})
	c.Request.Body = io.NopCloser(bytes.NewReader(body))
	return nil
}

// recoverPanics turns a panic into a 500 (or, once the response has begun,
// an aborted response) and logs it with its stack.
func (s *Server) recoverPanics(c *gin.Context) {
	defer func() {
		v := recover()
		if v == nil {
			return
		}
		if v == http.ErrAbortHandler {
			panic(v)
		}
		s.Logger.LogAttrs(c.Request.Context(), slog.LevelError, "panic",
			slog.String("request_id", state(c).id),
			slog.String("panic", secret.Redact(fmt.Sprint(v))), slog.String("stack", string(debug.Stack())))
		s.fail(c, fmt.Errorf("panic: %v", v))
	}()
	c.Next()
}

// authenticate checks the token of every request, before routing, except
// the web page's public paths (the page, its assets, signing in and out).
// The token comes from the Authorization header, as a bearer token or as
// the password of Basic credentials (any user name: Excel's credential
// dialogs offer Basic, not bearer), or, for spreadsheet tools that cannot
// send headers, from the access_token query parameter (RFC 6750 section
// 2.3), or, for the web page, from its cookie ([web.CookieName]); the header
// wins over the parameter, and either over the cookie.
func (s *Server) authenticate(c *gin.Context) {
	if s.Site != nil && publicPage(c.Request.URL.Path) {
		c.Next()
		return
	}
	token, given, ok := credentials(c.Request)
	if !given {
		if token, ok = web.SessionToken(c.Request); ok {
			state(c).page = true
		}
	}
	if !ok {
		if !given && s.signInFirst(c) {
			return
		}
		s.fail(c, failure.Errorf(failure.Unauthorized, auth.InvalidToken))
		return
	}
	p, err := s.lookUpToken(c.Request.Context(), token, s.Tokens.Authenticate)
	if err != nil {
		if !given && failure.CodeOf(err) == failure.Unauthorized && s.signInFirst(c) {
			return
		}
		s.fail(c, err)
		return
	}
	state(c).principal = &p
	if r := state(c).audit; r != nil {
		r.Principal, r.Rules = p.Name, audit.RulesText(p.Rules)
	}
	c.Next()
}

// signInFirst answers a browser's own navigation to an API path (an
// analyst who pasted an export's URL into the address bar), made without
// a token or with the page's cookie of a session that ended, with a 303 to
// the web page, whose sign-in form then comes back to the path: it
// reports whether it did. Only a top-level navigation is sent there, as
// browsers mark it (Sec-Fetch-Mode: navigate, Sec-Fetch-Dest: document,
// an Accept that names HTML, a GET); API clients (curl, Power Query,
// Excel's connectors, scripts) send none of this and keep their 401.
func (s *Server) signInFirst(c *gin.Context) bool {
	r := c.Request
	if s.Site == nil || r.Method != http.MethodGet || !browserNavigation(r) {
		return false
	}
	c.Header("Location", "/?"+url.Values{"return": {r.URL.RequestURI()}}.Encode())
	c.Header("Vary", "Accept, Sec-Fetch-Mode, Sec-Fetch-Dest")
	c.Status(http.StatusSeeOther)
	c.Abort()
	return true
}

// browserNavigation reports whether r is a browser's top-level navigation
// to a document, as the Fetch metadata headers and Accept say.
func browserNavigation(r *http.Request) bool {
	return r.Header.Get("Sec-Fetch-Mode") == "navigate" && r.Header.Get("Sec-Fetch-Dest") == "document" &&
		strings.Contains(strings.Join(r.Header.Values("Accept"), ","), "text/html")
}

// lookUpToken authenticates token with check (the token store's
// Authenticate, or Check when signing in), waiting for a pool connection no
// longer than the acquire timeout, like every other request of the
// database: an exhausted pool answers 503 busy, not a request that hangs.
// A token the store has not seen valid waits for its turn to be looked up
// (see [auth.Store.Check]) within the same timeout, and past it gets the
// same 503: a flood of made-up tokens waits in line, holding no
// connection, while known tokens go ahead.
func (s *Server) lookUpToken(ctx context.Context, token string, check func(context.Context, string) (auth.Principal, error)) (auth.Principal, error) {
	// The lookup is one indexed row: the whole of it, turn included, fits
	// the timeout.
	var p auth.Principal
	err := postgres.Acquiring(ctx, s.Pool, s.Limits.AcquireTimeout, func(actx context.Context) (err error) {
		p, err = check(actx, token)
		return err
	})
	return p, err
}

// credentials extracts the token, reporting whether one was given at all
// and whether it was given well-formed.
func credentials(r *http.Request) (token string, given, ok bool) {
	if hs, present := r.Header["Authorization"]; present {
		if len(hs) != 1 {
			return "", true, false
		}
		scheme, param, found := strings.Cut(hs[0], " ")
		param = strings.TrimLeft(param, " ")
		if !found || param == "" || strings.ContainsAny(param, " \t") {
			return "", true, false
		}
		switch {
		case strings.EqualFold(scheme, "Bearer"):
			return param, true, true
		case strings.EqualFold(scheme, "Basic"):
			raw, err := base64.StdEncoding.DecodeString(param)
			if err != nil {
				return "", true, false
			}
			_, password, found := strings.Cut(string(raw), ":")
			return password, true, found && password != ""
		}
		return "", true, false
	}
	q, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		return "", false, false
	}
	vals := q["access_token"]
	switch {
	case len(vals) == 0:
		return "", false, false
	case len(vals) > 1 || vals[0] == "":
		return "", true, false
	}
	return vals[0], true, true
}

// require rejects principals without scope with 403.
func (s *Server) require(scope dataset.Scope) gin.HandlerFunc {
	return func(c *gin.Context) {
		if p := state(c).principal; p == nil || !p.Allows(scope) {
			s.fail(c, failure.Errorf(failure.Forbidden, "this token lacks the %s scope", scope))
			return
		}
		c.Next()
	}
}

// loggedQuery returns the query string for a log line: decoded, with the
// value of every parameter whose decoded name folds to access_token
// (ACCESS_TOKEN, access%5Ftoken and %61ccess_token included), or that may
// hold a token (see auth.MayHoldToken), replaced, and every name that may
// hold one too, then encoded again. A query that does not parse is not
// logged at all.
func loggedQuery(raw string) string {
	if raw == "" {
		return ""
	}
	q, err := url.ParseQuery(raw)
	if err != nil {
		return "(unparsable query not logged)"
	}
	out := make(url.Values, len(q))
	for k, vs := range q {
		for i, v := range vs {
			if strings.EqualFold(k, "access_token") || auth.MayHoldToken(v) {
				vs[i] = "REDACTED"
			}
		}
		if auth.MayHoldToken(k) {
			k = "REDACTED"
		}
		out[k] = append(out[k], vs...)
	}
	return out.Encode()
}

// loggedPath returns the request's decoded path for a log line, with every
// segment that may hold a token replaced.
func loggedPath(p string) string {
	if !auth.MayHoldToken(p) {
		return p
	}
	segs := strings.Split(p, "/")
	for i, seg := range segs {
		if auth.MayHoldToken(seg) {
			segs[i] = "REDACTED"
		}
	}
	return strings.Join(segs, "/")
}

func validRequestID(id string) bool {
	if id == "" || len(id) > 64 {
		return false
	}
	for _, r := range id {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.') {
			return false
		}
	}
	return true
}

// timingWriter notes when the first body byte is written.
type timingWriter struct {
	gin.ResponseWriter
	first time.Time
}

// Unwrap gives http.ResponseController the writer beneath, for flushes and
// write deadlines.
func (w *timingWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func (w *timingWriter) Write(b []byte) (int, error) {
	if w.first.IsZero() && len(b) > 0 {
		w.first = time.Now()
	}
	return w.ResponseWriter.Write(b)
}

func (w *timingWriter) WriteString(s string) (int, error) {
	if w.first.IsZero() && len(s) > 0 {
		w.first = time.Now()
	}
	return w.ResponseWriter.WriteString(s)
}
