package api

import (
	"context"

	"github.com/gin-gonic/gin"

	"github.com/informe/informe/auth"
	"github.com/informe/informe/export"
	"github.com/informe/informe/internal/audit"
	"github.com/informe/informe/internal/road"
)

// request is what informe keeps about a request while serving it: set by
// the middleware and the handlers, read by the request's log line and
// metrics. It travels in the request's own context.
type request struct {
	id         string
	principal  *auth.Principal // nil until authenticated
	format     string          // the negotiated format, "" before negotiation
	rows       int             // rows written to the response
	parts      int             // connections a whole export was read through, 0 for other requests
	onePart    string          // why a whole export was read through one (postgres.Unsplit)
	aborted    bool            // the response was cut mid-stream
	reason     string          // why it was cut (delivery.Reason)
	clientGone bool            // the client went away first (logged as 499)
	odata      bool            // an OData request: errors in OData's shape
	// page: a request of the web page (its own paths, or credentials from
	// its cookie): a 401 carries no challenge, so that the browser shows no
	// credential dialog over the page (browsers show one for a Basic
	// challenge to the page's own fetches).
	page bool
	// audit is the request's record (internal/audit), nil when the
	// server keeps none; failed is the reason of the error it answered.
	audit  *audit.Record
	failed string
	// ticket is the request's admission to the database (see
	// [Server.admit]), nil before it is admitted
	ticket *road.Ticket
}

type requestKey struct{}

// withRequest returns ctx carrying r.
func withRequest(ctx context.Context, r *request) context.Context {
	return context.WithValue(ctx, requestKey{}, r)
}

// state returns the request state of c; observe sets it first of all, so it
// is always there. Outside observe (tests of a single handler) it returns a
// throwaway state.
func state(c *gin.Context) *request {
	if r, ok := c.Request.Context().Value(requestKey{}).(*request); ok {
		return r
	}
	return &request{}
}

// setFormat records the negotiated format for the log line and metrics.
func (r *request) setFormat(f export.Format) {
	r.format = f.String()
	if r.audit != nil {
		r.audit.Format = r.format
	}
}
