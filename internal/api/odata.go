package api

import (
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/informe/informe/export"
	"github.com/informe/informe/internal/delivery"
	"github.com/informe/informe/internal/failure"
	"github.com/informe/informe/internal/odata"
	"github.com/informe/informe/internal/road"
	"github.com/informe/informe/internal/source"
)

// odataPrefix is the path of the OData service root.
const odataPrefix = "/odata"

// feeds are the OData entity sets of the datasets informe serves
// (dataset.All), with the report as [Server.Report] counts it.
type feeds struct {
	all      []*source.Source
	sets     []*odata.EntitySet
	metadata []byte
}

// newFeeds makes the entity sets of s's datasets.
func (s *Server) newFeeds() *feeds {
	f := &feeds{all: source.All(s.Report)}
	for _, src := range f.all {
		f.sets = append(f.sets, src.Set)
	}
	f.metadata = odata.Metadata(f.sets...)
	return f
}

// set returns the entity set named name, nil when there is none.
func (f *feeds) set(name string) *source.Source {
	for _, set := range f.all {
		if set.Set.Name() == name {
			return set
		}
	}
	return nil
}

// serviceRoot returns the absolute URL of the OData service root, for the
// context URLs and next links. It is built from [Server.PublicURL] when the
// operator gave one, else from the address the connection reached (the
// listener's own, never the Host header, which anyone may write: a client
// would be handed a next link, with its token in it, to a host of an
// attacker's choosing). Behind one of the trusted proxies,
// X-Forwarded-Proto and X-Forwarded-Host say how the client reached it
// (one that is not http or https, or not a host name with an optional
// port, is ignored as if absent; see validHost); from anyone else they are
// ignored.
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
		if h := r.Header.Get("X-Forwarded-Host"); validHost(h) {
			host = h
		}
	}
	return scheme + "://" + host + prefix + odataPrefix
}

// odataRequest returns what an OData request for rows of set starts
// from: set as the token sees it, and the query string's values.
func (s *Server) odataRequest(c *gin.Context, set *source.Source) (*source.Source, url.Values, error) {
	set, err := s.sourceOf(c, set)
	if err != nil {
		return nil, nil, err
	}
	values, err := odataValues(c)
	return set, values, err
}

// odataValues parses the query string of an OData request.
func odataValues(c *gin.Context) (url.Values, error) {
	values, err := url.ParseQuery(c.Request.URL.RawQuery)
	if err != nil {
		return nil, malformedQuery(c.Request.URL.RawQuery, "the query string is malformed (a ';' must be sent as %3B)")
	}
	// OData allows custom query options; informe has none, so one is a
	// name informe would ignore: a 400, as on every path.
	if err := source.Known(values, nil); err != nil {
		return nil, err
	}
	return values, nil
}

// odataQuery parses the query string of an OData request to set (nil for
// the service document) and negotiates its format.
func odataQuery(c *gin.Context, set *source.Source) (*odata.Query, odata.Format, error) {
	values, err := odataValues(c)
	if err != nil {
		return nil, odata.Format{}, err
	}
	var q *odata.Query
	if set != nil {
		if q, err = odata.Parse(values, set.Set); err != nil {
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
	c.Data(http.StatusOK, f.ContentType(), odata.ServiceDocument(s.serviceRoot(c.Request), s.feedsOf(c).sets...))
}

// odataMetadata serves GET /odata/$metadata, the CSDL document; an
// unknown parameter is a 400, a $format other than XML a 406.
func (s *Server) odataMetadata(c *gin.Context) {
	values, err := odataValues(c)
	if err == nil {
		err = odata.ParseMetadata(values)
	}
	if err != nil {
		s.fail(c, err)
		return
	}
	c.Data(http.StatusOK, odata.MetadataContentType, s.feedsOf(c).metadata)
}

// odataFeed serves GET /odata/<set>, e.g. /odata/GeneralReport: one
// server-driven page of the set, its next link keyed on the last row.
func (s *Server) odataFeed(set *source.Source) gin.HandlerFunc {
	return func(c *gin.Context) {
		set, err := s.sourceOf(c, set)
		if err != nil {
			s.fail(c, err)
			return
		}
		q, f, err := odataQuery(c, set)
		if err != nil {
			s.fail(c, err)
			return
		}
		s.odataRows(c, set, q, f, odata.FeedOptions{})
	}
}

// odataEntity serves GET /odata/GeneralReport('6-7-7'), /odata/Users(42),
// /odata/Contracts(7) and the other sets':
// one entity by key, 404 when there is none.
func (s *Server) odataEntity(c *gin.Context) {
	name, key, ok := strings.Cut(c.Param("entity"), "(")
	set := s.feeds.set(name)
	if set == nil || !ok || !strings.HasSuffix(key, ")") {
		s.fail(c, errNotFound)
		return
	}
	if s.require(set.Scope)(c); c.IsAborted() {
		return
	}
	set, values, err := s.odataRequest(c, set)
	if err != nil {
		s.fail(c, err)
		return
	}
	q, err := odata.ParseKey(strings.TrimSuffix(key, ")"), values, set.Set)
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
func (s *Server) odataRows(c *gin.Context, set *source.Source, q *odata.Query, f odata.Format, opts odata.FeedOptions) {
	size, applied := odata.PageSize(c.Request.Header.Values("Prefer"))
	if m := set.MaxRows(); m > 0 && !opts.Entity {
		// A token's most rows per response caps the server-driven page;
		// a $top past it asks for more than one response may carry.
		if q.Top > m {
			s.fail(c, errTooManyRows("$top", q.Top, m))
			return
		}
		if int64(size) > m {
			size, applied = int(m), ""
		}
	}
	limit, count := q.Limit(size), q.Count
	if opts.Entity {
		size, limit, count = 1, 1, true
	}
	dq := set.Feed(q, limit, count)
	var k conditional
	if !opts.Entity {
		// A page's tag: everything its body is written from but the rows
		// and the count, which the data version stands for.
		var err error
		if k, err = validation(c, true, "odata", s.serviceRoot(c.Request), strconv.Itoa(size),
			strconv.FormatBool(f.IEEE754Compatible), feedToken(c), opts.Location.String()); err != nil {
			s.fail(c, err)
			return
		}
		dq.Validate = k.Validation // a HEAD reads no rows
		s.odataHeaders(c, f, applied)
	}
	ctx, done, err := s.admit(c.Request.Context(), !isHead(c) && big(limit, export.JSON))
	if err != nil {
		s.fail(c, err)
		return
	}
	defer done()
	// The feed writes the API's text, as JSON does.
	rd, err := road.OpenPage(ctx, s.Data, road.Export{Dataset: set.Dataset, Query: dq, Format: export.JSON})
	if err != nil {
		s.fail(c, err)
		return
	}
	cur := rd.First()
	if k.Validation != nil && k.answered(c, cur) {
		cur.Close()
		return
	}
	if isHead(c) && !opts.Entity {
		if err := cur.Close(); err != nil {
			s.fail(c, err)
			return
		}
		varyEncoding(c.Writer.Header())
		c.Status(http.StatusOK)
		return
	}
	total := cur.Total()
	if opts.Entity {
		if total == 0 {
			cur.Close()
			s.fail(c, &failure.Error{Code: failure.NotFound, Message: "no entity has that key"})
			return
		}
		s.odataHeaders(c, f, "")
	}
	s.feed(c, rd, done, q, f, size, total, limit, len(set.Columns), opts)
}

// odataCount serves GET /odata/<set>/$count: the number of rows matching
// $filter, as text/plain. It is bounded as a feed's page is (statement
// and request timeouts), and a count under a $filter, which reads every
// matching row as an export does, waits for a turn of the big responses.
func (s *Server) odataCount(set *source.Source) gin.HandlerFunc {
	return func(c *gin.Context) {
		set, values, err := s.odataRequest(c, set)
		if err != nil {
			s.fail(c, err)
			return
		}
		q, err := odata.ParseCount(values, set.Set)
		if err != nil {
			s.fail(c, err)
			return
		}
		k, err := validation(c, false, "odata count")
		if err != nil {
			s.fail(c, err)
			return
		}
		dq := set.Feed(q, 0, true)
		dq.Validate = k.Validation
		ctx, done, err := s.admit(c.Request.Context(), dq.Filtered())
		if err != nil {
			s.fail(c, err)
			return
		}
		defer done()
		cur, err := s.validateOnly(ctx, road.Export{Dataset: set.Dataset, Query: dq})
		if err != nil {
			s.fail(c, err)
			return
		}
		if k.answered(c, cur) {
			c.Header("OData-Version", odata.Version)
			return
		}
		n := cur.Total()
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

// feedToken returns the token that goes on in a feed's next link: one
// that came in the query, so that a client that can only send URLs
// follows it; "" for one that came in a header. Only under its exact
// name: the next link is built from the options informe parsed, never
// copied from the request.
func feedToken(c *gin.Context) string {
	if _, inHeader := c.Request.Header["Authorization"]; inHeader {
		return ""
	}
	return c.Request.URL.Query().Get("access_token")
}

// feed delivers rd's rows as one page of an OData feed.
func (s *Server) feed(c *gin.Context, rd *road.Read, done func(), q *odata.Query, f odata.Format, size int, count, limit int64, cols int, opts odata.FeedOptions) {
	state(c).format = "odata"
	root := s.serviceRoot(c.Request)
	opts.ServiceRoot, opts.PageSize, opts.Count, opts.Format, opts.AccessToken = root, size, count, f, feedToken(c)
	s.deliverRows(c, done, body{
		deliver: func(dst io.Writer, o delivery.Options, h delivery.Hooks) (delivery.Result, error) {
			return rd.DeliverFeed(dst, odata.FeedSpec{Query: q, Options: opts}, road.Options{Body: o, Hooks: h})
		},
		estimate:     limit * int64(cols) * 8,
		compressible: true,
	})
}
