package api

import (
	"context"
	"net"
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
	report, users *entitySet
	metadata      []byte
}

// entitySet is an OData entity set and what serves it: the scope a token
// needs, its number of columns, and the store calls that open its rows.
// One code path serves every set through them.
type entitySet struct {
	def   *odata.EntitySet
	scope auth.Scope
	cols  int
	// page opens, for a query that [odata.Query.Plain] says the store
	// pages by itself (its own order, at most its equality filters), a
	// page in that order. It checks the filters' values before anything
	// is written, and returns their errors.
	page func(q *odata.Query) (opener, error)
	// selection opens the rows that a $filter, a $orderby or a key ask
	// for, and counts them when sel.count.
	selection func(ctx context.Context, sel selection) (cursor, int64, error)
	// total, when the store maintains it, counts every row at once.
	total func(ctx context.Context) (int64, error)
}

// opener opens a page of at most limit rows and returns its cursor with
// the number of matching rows when count, else -1.
type opener func(ctx context.Context, limit int64, count bool) (cursor, int64, error)

// selection is what a store needs to open a cursor on the rows a $filter,
// a $orderby or a key ask for: see report.Selection and users.Selection.
type selection struct {
	sql         odata.SQL
	countWhere  string
	countArgs   []any
	skip, limit int64
	count       bool
}

// newFeeds makes the entity sets, served by s's stores.
func (s *Server) newFeeds() *feeds {
	def := func(d odata.EntitySetDef) *odata.EntitySet {
		set, err := odata.NewEntitySet(d)
		if err != nil {
			panic(err) // the definitions are constants: a test covers them
		}
		return set
	}
	rs := &entitySet{def: def(odata.GeneralReportDef), scope: auth.ReportRead, cols: len(report.Columns),
		page: s.reportPage, selection: s.reportSelection, total: s.reportTotal}
	us := &entitySet{def: def(odata.UsersDef), scope: auth.UsersRead, cols: len(users.Columns),
		page: s.usersPage, selection: s.usersSelection}
	return &feeds{report: rs, users: us, metadata: odata.Metadata(rs.def, us.def)}
}

// set returns the entity set named name, nil when there is none.
func (f *feeds) set(name string) *entitySet {
	for _, set := range []*entitySet{f.report, f.users} {
		if set.def.Name() == name {
			return set
		}
	}
	return nil
}

// reportPage opens the report in its own order, filtered by the equalities
// its store serves: contract_id, code_contract, client_id, client_rut (a
// RUT in any typed form; a malformed one is a 400).
func (s *Server) reportPage(q *odata.Query) (opener, error) {
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
			return nil, &failure.Error{Code: failure.Invalid, Message: "client_rut: " + err.Error(), Target: "$filter"}
		}
		rq.RUTKey = r.Key()
	}
	var after *report.Key
	if q.After != nil {
		after = &report.Key{q.After[0], q.After[1], q.After[2]}
	}
	return func(ctx context.Context, limit int64, count bool) (cursor, int64, error) {
		cur, err := s.Reports.OpenSlice(ctx, report.Slice{Query: rq, After: after, Skip: q.Skip, Limit: limit, Count: count})
		if err != nil {
			return nil, 0, err
		}
		return cur, cur.Page().Total, nil
	}, nil
}

// usersPage opens the users in id order.
func (s *Server) usersPage(q *odata.Query) (opener, error) {
	var after int64
	if q.After != nil {
		after = q.After[0]
	}
	return func(ctx context.Context, limit int64, count bool) (cursor, int64, error) {
		cur, err := s.Users.OpenSlice(ctx, after, q.Skip, limit, count)
		if err != nil {
			return nil, 0, err
		}
		return cur, cur.Total(), nil
	}, nil
}

// reportSelection opens the report's rows that sel asks for.
func (s *Server) reportSelection(ctx context.Context, sel selection) (cursor, int64, error) {
	cur, err := s.Reports.OpenSelection(ctx, report.Selection{
		Where: sel.sql.Where, Args: sel.sql.Args, Sort: sel.sql.Sort, SortText: sel.sql.SortText, Desc: sel.sql.Desc,
		After: sel.sql.After, AfterKey: sel.sql.AfterKey, Bound: sel.sql.Bound,
		Skip: sel.skip, Limit: sel.limit, Count: sel.count, CountWhere: sel.countWhere, CountArgs: sel.countArgs,
	})
	if err != nil {
		return nil, 0, err
	}
	return cur, cur.Page().Total, nil
}

// usersSelection opens the users that sel asks for.
func (s *Server) usersSelection(ctx context.Context, sel selection) (cursor, int64, error) {
	cur, err := s.Users.OpenSelection(ctx, users.Selection{
		Where: sel.sql.Where, Args: sel.sql.Args, Sort: sel.sql.Sort, SortText: sel.sql.SortText, Desc: sel.sql.Desc,
		Skip: sel.skip, Limit: sel.limit, Count: sel.count, CountWhere: sel.countWhere, CountArgs: sel.countArgs,
	})
	if err != nil {
		return nil, 0, err
	}
	return cur, cur.Total(), nil
}

// reportTotal counts the whole report from the maintained counts.
func (s *Server) reportTotal(ctx context.Context) (int64, error) {
	p, err := s.Reports.Count(ctx, report.Query{})
	return p.Total, err
}

// open returns what opens the rows q asks for: the store's own paging when
// q is plain, else a selection. Errors are those of set.page.
func (set *entitySet) open(q *odata.Query) (opener, error) {
	if q.Plain() {
		return set.page(q)
	}
	where, args := q.CountSQL("t")
	sql := q.SQL("t")
	return func(ctx context.Context, limit int64, count bool) (cursor, int64, error) {
		return set.selection(ctx, selection{sql: sql, countWhere: where, countArgs: args, skip: q.Skip, limit: limit, count: count})
	}, nil
}

// count returns the number of rows that the condition where, with args,
// matches ("" for every row).
func (set *entitySet) count(ctx context.Context, where string, args []any) (int64, error) {
	if where == "" && set.total != nil {
		return set.total(ctx)
	}
	cur, n, err := set.selection(ctx, selection{count: true, countWhere: where, countArgs: args})
	if err != nil {
		return 0, err
	}
	cur.Close()
	return n, nil
}

// serviceRoot returns the absolute URL of the OData service root, for the
// context URLs and next links. It is built from [Server.PublicURL] when the
// operator gave one, else from the address the connection reached (the
// listener's own, never the Host header, which anyone may write: a client
// would be handed a next link, with its token in it, to a host of an
// attacker's choosing). Behind one of the trusted proxies,
// X-Forwarded-Proto and X-Forwarded-Host say how the client reached it;
// from anyone else they are ignored.
func (s *Server) serviceRoot(r *http.Request) string {
	scheme, host, prefix := "http", "", ""
	if r.TLS != nil {
		scheme = "https"
	}
	if u := s.PublicURL; u != nil {
		scheme, host, prefix = u.Scheme, u.Host, strings.TrimSuffix(u.Path, "/")
	} else if a, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok {
		host = a.String()
	}
	if s.fromTrustedProxy(r) {
		if p := r.Header.Get("X-Forwarded-Proto"); p == "https" || p == "http" {
			scheme = p
		}
		if h := r.Header.Get("X-Forwarded-Host"); h != "" && !strings.ContainsAny(h, "/?#@ ,") {
			host = h
		}
	}
	return scheme + "://" + host + prefix + odataPrefix
}

// odataValues parses the query string of an OData request.
func odataValues(c *gin.Context) (url.Values, error) {
	values, err := url.ParseQuery(c.Request.URL.RawQuery)
	if err != nil {
		return nil, &failure.Error{Code: failure.Invalid, Message: "the query string is malformed (a ';' must be sent as %3B)"}
	}
	return values, nil
}

// odataQuery parses the query string of an OData request to set (nil for
// the service document) and negotiates its format.
func odataQuery(c *gin.Context, set *entitySet) (*odata.Query, odata.Format, error) {
	values, err := odataValues(c)
	if err != nil {
		return nil, odata.Format{}, err
	}
	var q *odata.Query
	if set != nil {
		if q, err = odata.Parse(values, set.def); err != nil {
			return nil, odata.Format{}, err
		}
	}
	f, err := odata.Negotiate(values, c.Request.Header.Values("Accept"))
	return q, f, err
}

// odataService serves GET /odata/, the service document.
func (s *Server) odataService(c *gin.Context) {
	_, f, err := odataQuery(c, nil)
	if err != nil {
		s.fail(c, err)
		return
	}
	c.Data(http.StatusOK, f.ContentType(), odata.ServiceDocument(s.serviceRoot(c.Request), s.feeds.report.def, s.feeds.users.def))
}

// odataMetadata serves GET /odata/$metadata, the CSDL document.
func (s *Server) odataMetadata(c *gin.Context) {
	c.Data(http.StatusOK, odata.MetadataContentType, s.feeds.metadata)
}

// odataFeed serves GET /odata/<set>, e.g. /odata/GeneralReport: one
// server-driven page of the set, its next link keyed on the last row.
func (s *Server) odataFeed(set *entitySet) gin.HandlerFunc {
	return func(c *gin.Context) {
		q, f, err := odataQuery(c, set)
		if err != nil {
			s.fail(c, err)
			return
		}
		s.odataRows(c, set, q, f, odata.FeedOptions{})
	}
}

// odataEntity serves GET /odata/GeneralReport('6-7-7') and /odata/Users(42):
// one entity by key, 404 when there is none.
func (s *Server) odataEntity(c *gin.Context) {
	name, key, ok := strings.Cut(c.Param("entity"), "(")
	set := s.feeds.set(name)
	if set == nil || !ok || !strings.HasSuffix(key, ")") {
		s.fail(c, errNotFound)
		return
	}
	if s.require(set.scope)(c); c.IsAborted() {
		return
	}
	values, err := odataValues(c)
	if err != nil {
		s.fail(c, err)
		return
	}
	q, err := odata.ParseKey(strings.TrimSuffix(key, ")"), values, set.def)
	if err != nil {
		s.fail(c, err)
		return
	}
	f, err := odata.Negotiate(values, c.Request.Header.Values("Accept"))
	if err != nil {
		s.fail(c, err)
		return
	}
	s.odataRows(c, set, q, f, odata.FeedOptions{Entity: true})
}

// odataRows serves the rows of set that q asks for: a page of a feed, or,
// with opts.Entity, one entity (404 when there is none).
func (s *Server) odataRows(c *gin.Context, set *entitySet, q *odata.Query, f odata.Format, opts odata.FeedOptions) {
	open, err := set.open(q)
	if err != nil {
		s.fail(c, err)
		return
	}
	size, applied := odata.PageSize(c.Request.Header.Values("Prefer"))
	limit, count := q.Limit(size), q.Count
	if opts.Entity {
		size, limit, count = 1, 1, true
	} else {
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
	cur, total, err := open(ctx, limit, count)
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
	s.feed(c, cur, done, q, f, size, total, limit, set.cols, opts)
}

// odataCount serves GET /odata/<set>/$count: the number of rows matching
// $filter, as text/plain.
func (s *Server) odataCount(set *entitySet) gin.HandlerFunc {
	return func(c *gin.Context) {
		values, err := odataValues(c)
		if err != nil {
			s.fail(c, err)
			return
		}
		q, err := odata.ParseCount(values, set.def)
		if err != nil {
			s.fail(c, err)
			return
		}
		where, args := q.CountSQL("t")
		n, err := set.count(c.Request.Context(), where, args)
		if err != nil {
			s.fail(c, err)
			return
		}
		c.Header("OData-Version", odata.Version)
		c.Data(http.StatusOK, "text/plain;charset=utf-8", []byte(strconv.FormatInt(n, 10)))
	}
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
