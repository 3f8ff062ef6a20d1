package api

import (
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/informe/informe/auth"
	"github.com/informe/informe/internal/audit"
	"github.com/informe/informe/internal/delivery"
)

// maxUserAgent is the most of a User-Agent a record keeps.
const maxUserAgent = 512

// newRecord returns the audit record of c's request, begun at start with
// id: who asks (the principal is added when the token is known), from
// where (the client's address after trusted proxies), with what, through
// which door. Anything that may hold a token is redacted, as in the log.
func (s *Server) newRecord(c *gin.Context, start time.Time, id string) *audit.Record {
	ua := c.Request.UserAgent()
	if len(ua) > maxUserAgent {
		ua = ua[:maxUserAgent]
	}
	if auth.MayHoldToken(ua) {
		ua = "REDACTED"
	}
	return &audit.Record{
		Started:       start,
		RequestID:     id,
		ClientAddress: c.ClientIP(),
		UserAgent:     ua,
		Path:          c.Request.Method + " " + loggedPath(c.Request.URL.Path),
		Query:         loggedQuery(c.Request.URL.RawQuery),
	}
}

// closeRecord closes the request's record, when a read opened one, with
// what was sent: status, rows, bytes, and the outcome (complete, cut with
// its reason, failed with its reason, not modified); a request refused
// before any read (a 4xx) is counted instead. It queues the close and
// returns at once.
func (s *Server) closeRecord(r *request, status, size int) {
	rec := r.audit
	if rec == nil {
		return
	}
	if !rec.Reading() {
		rec.Status = status
		if status >= 400 && status < 500 {
			if rec.Principal == "" {
				rec.Principal = "(no valid token)"
			}
			rec.Reason = r.failed
			s.Audit.Refuse(rec)
		}
		return
	}
	if !rec.Opened() { // waits for the insert: its fields are its own until then
		return
	}
	rec.Status, rec.Format = status, r.format
	rec.Rows, rec.Bytes = int64(r.rows), int64(max(size, 0))
	switch {
	case r.clientGone:
		rec.Outcome, rec.Reason = audit.Cut, delivery.ClientGone
	case r.aborted:
		rec.Outcome, rec.Reason = audit.Cut, r.reason
	case status == http.StatusNotModified:
		rec.Outcome = audit.NotModified
	case status >= 400:
		rec.Outcome, rec.Reason = audit.Failed, r.failed
		if rec.Reason == "" {
			rec.Reason = http.StatusText(status)
		}
	default:
		rec.Outcome = audit.Complete
	}
	s.Audit.Close(rec)
}
