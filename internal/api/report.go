package api

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/informe/informe/export"
	"github.com/informe/informe/report"
)

// generalReport serves GET /api/general-report: one page of the report.
func (s *Server) generalReport(c *gin.Context) {
	values, out, err := s.negotiate(c)
	if err != nil {
		s.fail(c, err)
		return
	}
	q, err := report.ParseQuery(values)
	if err != nil {
		s.fail(c, err)
		return
	}
	ctx, done, err := s.admit(c.Request.Context(), !isHead(c) && big(q.PerPage, out.format))
	if err != nil {
		s.fail(c, err)
		return
	}
	defer done()
	if isHead(c) {
		p, err := s.Reports.Count(ctx, q)
		if err != nil {
			s.fail(c, err)
			return
		}
		setPageHeaders(c, p)
		head(c, out, pageFile(p))
		return
	}
	cur, err := s.Reports.Open(ctx, q)
	if err != nil {
		s.fail(c, err)
		return
	}
	defer cur.Close()

	p := cur.Page()
	setPageHeaders(c, p)
	s.stream(c, cur, done, out, pageFile(p), q.Columns, export.Options{
		Sheet:    "general-report",
		Rows:     p.Rows(),
		Envelope: &export.Envelope{TotalPages: int(p.TotalPages), CurrentPage: int(p.CurrentPage)},
	})
}

// setPageHeaders sets the paging headers of page p.
func setPageHeaders(c *gin.Context, p report.Page) {
	h := c.Writer.Header()
	h.Set("X-Total-Count", strconv.FormatInt(p.Total, 10))
	h.Set("X-Total-Pages", strconv.FormatInt(p.TotalPages, 10))
	h.Set("X-Current-Page", strconv.FormatInt(p.CurrentPage, 10))
	h.Set("Link", links(c.Request.URL, p))
}

// pageFile names the attachment of page p.
func pageFile(p report.Page) string { return fmt.Sprintf("general-report-page-%d", p.CurrentPage) }

// exportReport serves GET /api/general-report/export: every row matching
// the filters, in one snapshot.
func (s *Server) exportReport(c *gin.Context) {
	values, out, err := s.negotiate(c)
	if err != nil {
		s.fail(c, err)
		return
	}
	q, err := report.ParseQuery(values)
	if err != nil {
		s.fail(c, err)
		return
	}
	ctx, done, err := s.admit(c.Request.Context(), !isHead(c))
	if err != nil {
		s.fail(c, err)
		return
	}
	defer done()
	if isHead(c) {
		p, err := s.Reports.Count(ctx, q)
		if err != nil {
			s.fail(c, err)
			return
		}
		c.Writer.Header().Set("X-Total-Count", strconv.FormatInt(p.Total, 10))
		head(c, out, "general-report")
		return
	}
	cur, err := s.Reports.Export(ctx, q)
	if err != nil {
		s.fail(c, err)
		return
	}
	defer cur.Close()

	total := cur.Page().Total
	c.Writer.Header().Set("X-Total-Count", strconv.FormatInt(total, 10))
	s.stream(c, cur, done, out, "general-report", q.Columns, export.Options{Sheet: "general-report", Rows: total})
}

// links returns an RFC 8288 Link header with first, prev, next and last
// pages, as references relative to the request, without any access_token.
func links(u *url.URL, p report.Page) string {
	q := u.Query()
	q.Del("access_token")
	last := max(p.TotalPages, 1)
	ref := func(n int64, rel string) string {
		q.Set("page", strconv.FormatInt(n, 10))
		return fmt.Sprintf(`<%s?%s>; rel="%s"`, u.Path, q.Encode(), rel)
	}
	parts := []string{ref(1, "first")}
	if p.CurrentPage > 1 {
		parts = append(parts, ref(min(p.CurrentPage-1, last), "prev"))
	}
	if p.CurrentPage < p.TotalPages {
		parts = append(parts, ref(p.CurrentPage+1, "next"))
	}
	parts = append(parts, ref(last, "last"))
	return strings.Join(parts, ", ")
}
