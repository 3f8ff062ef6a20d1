package api

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/informe/informe/auth"
	"github.com/informe/informe/export"
	"github.com/informe/informe/internal/failure"
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
		return nil, nil, odata.Format{}, &failure.Error{Code: failure.Invalid, Message: "the query string is malformed (a ';' must be sent as %3B)"}
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
	if !q.Plain() {
		s.odataReportSelection(c, q, f, odata.FeedOptions{})
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
			s.fail(c, &failure.Error{Code: failure.Invalid, Message: "client_rut: " + err.Error(), Target: "$filter"})
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
	s.feed(c, cur, done, q, f, size, cur.Page().Total, limit, len(report.Columns), odata.FeedOptions{})
}

// selection is what a store needs to open a cursor on the rows a $filter,
// a $orderby or a key ask for: see report.Selection and users.Selection.
type selection struct {
	sql         odata.SQL
	countWhere  string
	countArgs   []any
	skip, limit int64
	count       bool
}

// openSelection opens a cursor on sel's rows of one entity set and returns
// it with the number of matching rows (-1 when not counted).
type openSelection func(ctx context.Context, sel selection) (cursor, int64, error)

// odataReportSelection serves a page of the report that $filter or
// $orderby find and order by the typed values; with opts.Entity, the one
// row of a request by key.
func (s *Server) odataReportSelection(c *gin.Context, q *odata.Query, f odata.Format, opts odata.FeedOptions) {
	s.odataSelection(c, q, f, opts, len(report.Columns), func(ctx context.Context, sel selection) (cursor, int64, error) {
		cur, err := s.Reports.OpenSelection(ctx, report.Selection{
			Where: sel.sql.Where, Args: sel.sql.Args, Sort: sel.sql.Sort, SortText: sel.sql.SortText, Desc: sel.sql.Desc,
			After: sel.sql.After, AfterKey: sel.sql.AfterKey, Bound: sel.sql.Bound,
			Skip: sel.skip, Limit: sel.limit, Count: sel.count, CountWhere: sel.countWhere, CountArgs: sel.countArgs,
		})
		if err != nil {
			return nil, 0, err
		}
		return cur, cur.Page().Total, nil
	})
}

// odataUsersSelection is [Server.odataReportSelection] for Users.
func (s *Server) odataUsersSelection(c *gin.Context, q *odata.Query, f odata.Format, opts odata.FeedOptions) {
	s.odataSelection(c, q, f, opts, len(users.Columns), func(ctx context.Context, sel selection) (cursor, int64, error) {
		cur, err := s.Users.OpenSelection(ctx, users.Selection{
			Where: sel.sql.Where, Args: sel.sql.Args, Sort: sel.sql.Sort, SortText: sel.sql.SortText, Desc: sel.sql.Desc,
			Skip: sel.skip, Limit: sel.limit, Count: sel.count, CountWhere: sel.countWhere, CountArgs: sel.countArgs,
		})
		if err != nil {
			return nil, 0, err
		}
		return cur, cur.Total(), nil
	})
}

// odataSelection serves what q asks for through open: a page of a feed,
// or, with opts.Entity, one entity (404 when there is none).
func (s *Server) odataSelection(c *gin.Context, q *odata.Query, f odata.Format, opts odata.FeedOptions, cols int, open openSelection) {
	size, applied := odata.PageSize(c.Request.Header.Values("Prefer"))
	limit := q.Limit(size)
	if opts.Entity {
		size, applied, limit = 1, "", 1
	}
	where, args := q.CountSQL("t")
	sel := selection{sql: q.SQL("t"), countWhere: where, countArgs: args, skip: q.Skip, limit: limit, count: q.Count || opts.Entity}
	if !opts.Entity {
		s.odataHeaders(c, f, applied)
		if isHead(c) {
			varyEncoding(c.Writer.Header())
			c.Status(http.StatusOK)
			return
		}
	}
	ctx, done, err := s.admit(c.Request.Context(), big(limit, export.JSON))
	if err != nil {
		s.fail(c, err)
		return
	}
	defer done()
	cur, total, err := open(ctx, sel)
	if err != nil {
		s.fail(c, err)
		return
	}
	if opts.Entity {
		if total == 0 {
			cur.Close()
			s.fail(c, &failure.Error{Code: failure.NotFound, Message: "no entity has that key"})
			return
		}
		s.odataHeaders(c, f, "")
	}
	s.feed(c, cur, done, q, f, size, total, limit, cols, opts)
}

// odataCount serves GET /odata/GeneralReport/$count and /odata/Users/$count:
// the number of rows matching $filter, as text/plain.
func (s *Server) odataCount(c *gin.Context) {
	set := s.feeds.report
	if strings.HasPrefix(c.Request.URL.Path, odataPrefix+"/Users/") {
		set = s.feeds.users
	}
	values, err := url.ParseQuery(c.Request.URL.RawQuery)
	if err != nil {
		s.fail(c, &failure.Error{Code: failure.Invalid, Message: "the query string is malformed (a ';' must be sent as %3B)"})
		return
	}
	q, err := odata.ParseCount(values, set)
	if err != nil {
		s.fail(c, err)
		return
	}
	where, args := q.CountSQL("t")
	var (
		n   int64
		cur cursor
	)
	if set == s.feeds.users {
		var uc *users.Cursor
		uc, err = s.Users.OpenSelection(c.Request.Context(), users.Selection{Count: true, CountWhere: where, CountArgs: args})
		if err == nil {
			cur, n = uc, uc.Total()
		}
	} else if where == "" {
		// The whole report: the maintained counts answer at once.
		var p report.Page
		if p, err = s.Reports.Count(c.Request.Context(), report.Query{}); err == nil {
			n = p.Total
		}
	} else {
		var rc *report.Cursor
		rc, err = s.Reports.OpenSelection(c.Request.Context(), report.Selection{Count: true, CountWhere: where, CountArgs: args})
		if err == nil {
			cur, n = rc, rc.Page().Total
		}
	}
	if err != nil {
		s.fail(c, err)
		return
	}
	if cur != nil {
		cur.Close()
	}
	c.Header("OData-Version", odata.Version)
	c.Data(http.StatusOK, "text/plain;charset=utf-8", []byte(strconv.FormatInt(n, 10)))
}

// odataEntity serves GET /odata/GeneralReport('6-7-7') and /odata/Users(42):
// one entity by key, 404 when there is none.
func (s *Server) odataEntity(c *gin.Context) {
	seg := c.Param("entity")
	name, key, ok := strings.Cut(seg, "(")
	var set *odata.EntitySet
	switch name {
	case "GeneralReport":
		set = s.feeds.report
	case "Users":
		set = s.feeds.users
	}
	if set == nil || !ok || !strings.HasSuffix(key, ")") {
		s.fail(c, errNotFound)
		return
	}
	scope := auth.ReportRead
	if set == s.feeds.users {
		scope = auth.UsersRead
	}
	if s.require(scope)(c); c.IsAborted() {
		return
	}
	values, err := url.ParseQuery(c.Request.URL.RawQuery)
	if err != nil {
		s.fail(c, &failure.Error{Code: failure.Invalid, Message: "the query string is malformed (a ';' must be sent as %3B)"})
		return
	}
	q, err := odata.ParseKey(strings.TrimSuffix(key, ")"), values, set)
	if err != nil {
		s.fail(c, err)
		return
	}
	f, err := odata.Negotiate(values, c.Request.Header.Values("Accept"))
	if err != nil {
		s.fail(c, err)
		return
	}
	if set == s.feeds.users {
		s.odataUsersSelection(c, q, f, odata.FeedOptions{Entity: true})
		return
	}
	s.odataReportSelection(c, q, f, odata.FeedOptions{Entity: true})
}

// odataUsers serves GET /odata/Users.
func (s *Server) odataUsers(c *gin.Context) {
	_, q, f, err := odataQuery(c, s.feeds.users)
	if err != nil {
		s.fail(c, err)
		return
	}
	if !q.Plain() {
		s.odataUsersSelection(c, q, f, odata.FeedOptions{})
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
	s.feed(c, cur, done, q, f, size, cur.Total(), limit, len(users.Columns), odata.FeedOptions{})
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
func (s *Server) feed(c *gin.Context, cur cursor, done func(), q *odata.Query, f odata.Format, size int, count, limit int64, cols int, opts odata.FeedOptions) {
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
	opts.ServiceRoot, opts.PageSize, opts.Count, opts.Format, opts.AccessToken = root, size, count, f, token
	s.deliverRows(c, cur, done, body{
		encoding:     odata.FeedSpec{Query: q, Options: opts},
		estimate:     limit * int64(cols) * 8,
		compressible: true,
	})
}
