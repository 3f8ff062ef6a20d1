package api

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/informe/informe/export"
	"github.com/informe/informe/internal/odata"
	"github.com/informe/informe/internal/rut"
	"github.com/informe/informe/report"
	"github.com/informe/informe/users"
)

// odataPrefix is the path of the OData service root.
const odataPrefix = "/odata"

// feeds are the OData entity sets, made from the one column lists.
type feeds struct {
	report, users *odata.EntitySet
	metadata      []byte
}

func newFeeds() *feeds {
	rs, err := odata.NewEntitySet(odata.GeneralReportDef)
	if err != nil {
		panic(err) // the definitions are constants: a test covers them
	}
	us, err := odata.NewEntitySet(odata.UsersDef)
	if err != nil {
		panic(err)
	}
	return &feeds{report: rs, users: us, metadata: odata.Metadata(rs, us)}
}

// serviceRoot returns the absolute URL of the OData service root as the
// client reached it, for the context URLs and next links. Behind one of
// the trusted proxies, X-Forwarded-Proto and X-Forwarded-Host say how the
// client reached it; from anyone else they are ignored, or a client could
// be handed a next link, with its token in it, to a host of an attacker's
// choosing.
func (s *Server) serviceRoot(r *http.Request) string {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	host := r.Host
	if s.fromTrustedProxy(r) {
		if p := r.Header.Get("X-Forwarded-Proto"); p == "https" || p == "http" {
			scheme = p
		}
		if h := r.Header.Get("X-Forwarded-Host"); h != "" && !strings.ContainsAny(h, "/?#@ ,") {
			host = h
		}
	}
	return scheme + "://" + host + odataPrefix
}

// odataQuery parses the query string of an OData request.
func odataQuery(c *gin.Context, set *odata.EntitySet) (url.Values, *odata.Query, odata.Format, error) {
	values, err := url.ParseQuery(c.Request.URL.RawQuery)
	if err != nil {
		return nil, nil, odata.Format{}, &odata.Error{Status: http.StatusBadRequest, Code: odata.CodeBadRequest,
			Message: "the query string is malformed (a ';' must be sent as %3B)"}
	}
	var q *odata.Query
	if set != nil {
		if q, err = odata.Parse(values, set); err != nil {
			return nil, nil, odata.Format{}, err
		}
	}
	f, err := odata.Negotiate(values, c.Request.Header.Values("Accept"))
	return values, q, f, err
}

// odataService serves GET /odata/, the service document.
func (s *Server) odataService(c *gin.Context) {
	_, _, f, err := odataQuery(c, nil)
	if err != nil {
		s.fail(c, err)
		return
	}
	c.Data(http.StatusOK, f.ContentType(), odata.ServiceDocument(s.serviceRoot(c.Request), s.feeds.report, s.feeds.users))
}

// odataMetadata serves GET /odata/$metadata, the CSDL document.
func (s *Server) odataMetadata(c *gin.Context) {
	c.Data(http.StatusOK, odata.MetadataContentType, s.feeds.metadata)
}

// odataReport serves GET /odata/GeneralReport: one server-driven page of
// the report, its next link keyed on the last row.
func (s *Server) odataReport(c *gin.Context) {
	_, q, f, err := odataQuery(c, s.feeds.report)
	if err != nil {
		s.fail(c, err)
		return
	}
	var rq report.Query
	if e, ok := q.Equal("contract_id"); ok {
		rq.ContractID = e.Int
	}
	if e, ok := q.Equal("code_contract"); ok {
		rq.CodeContract = e.Text
	}
	if e, ok := q.Equal("client_id"); ok {
		rq.ClientID = e.Int
	}
	if e, ok := q.Equal("client_rut"); ok {
		r, err := rut.Parse(e.Text)
		if err != nil {
			s.fail(c, &odata.Error{Status: http.StatusBadRequest, Code: odata.CodeBadRequest, Message: "client_rut: " + err.Error(), Target: "$filter"})
			return
		}
		rq.RUTKey = r.Key()
	}
	var after *report.Key
	if q.After != nil {
		after = &report.Key{q.After[0], q.After[1], q.After[2]}
	}
	size, applied := odata.PageSize(c.Request.Header.Values("Prefer"))
	limit := q.Limit(size)
	s.odataHeaders(c, f, applied)
	if isHead(c) {
		varyEncoding(c.Writer.Header())
		c.Status(http.StatusOK)
		return
	}
	ctx, done, err := s.admit(c.Request.Context(), big(limit, export.JSON))
	if err != nil {
		s.fail(c, err)
		return
	}
	defer done()
	cur, err := s.Reports.OpenSlice(ctx, report.Slice{Query: rq, After: after, Skip: q.Skip, Limit: limit, Count: q.Count})
	if err != nil {
		s.fail(c, err)
		return
	}
	s.feed(c, cur, done, q, f, size, cur.Page().Total, limit, len(report.Columns))
}

// odataUsers serves GET /odata/Users.
func (s *Server) odataUsers(c *gin.Context) {
	_, q, f, err := odataQuery(c, s.feeds.users)
	if err != nil {
		s.fail(c, err)
		return
	}
	var after int64
	if q.After != nil {
		after = q.After[0]
	}
	size, applied := odata.PageSize(c.Request.Header.Values("Prefer"))
	limit := q.Limit(size)
	s.odataHeaders(c, f, applied)
	if isHead(c) {
		varyEncoding(c.Writer.Header())
		c.Status(http.StatusOK)
		return
	}
	ctx, done, err := s.admit(c.Request.Context(), big(limit, export.JSON))
	if err != nil {
		s.fail(c, err)
		return
	}
	defer done()
	cur, err := s.Users.OpenSlice(ctx, after, q.Skip, limit, q.Count)
	if err != nil {
		s.fail(c, err)
		return
	}
	s.feed(c, cur, done, q, f, size, cur.Total(), limit, len(users.Columns))
}

// odataHeaders sets the headers of a feed response.
func (s *Server) odataHeaders(c *gin.Context, f odata.Format, applied string) {
	h := c.Writer.Header()
	h.Set("Vary", "Accept") // IEEE754Compatible comes from Accept
	h.Set("Content-Type", f.ContentType())
	if applied != "" {
		h.Set("Preference-Applied", applied)
	}
}

// feed delivers cur's rows as one page of an OData feed.
func (s *Server) feed(c *gin.Context, cur cursor, done func(), q *odata.Query, f odata.Format, size int, count, limit int64, cols int) {
	state(c).format = "odata"
	root := s.serviceRoot(c.Request)
	// A token that came in the query goes on in the next link, so that a
	// client that can only send URLs follows it; one that came in a
	// header does not. Only under its exact name: the next link is built
	// from the options informe parsed, never copied from the request.
	var token string
	if _, inHeader := c.Request.Header["Authorization"]; !inHeader {
		token = c.Request.URL.Query().Get("access_token")
	}
	s.deliverRows(c, cur, done, body{
		encoding:     odata.FeedSpec{Query: q, Options: odata.FeedOptions{ServiceRoot: root, PageSize: size, Count: count, Format: f, AccessToken: token}},
		estimate:     limit * int64(cols) * 8,
		compressible: true,
	})
}
