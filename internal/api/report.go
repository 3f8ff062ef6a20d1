package api

import (
	"context"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/gin-gonic/gin"

	"github.com/informe/informe/export"
	"github.com/informe/informe/internal/dataset"
	"github.com/informe/informe/internal/odata"
	"github.com/informe/informe/internal/postgres"
	"github.com/informe/informe/internal/road"
	"github.com/informe/informe/internal/source"
	"github.com/informe/informe/report"
)

// formatParams are negotiate's parameters: the format and its CSV options.
var formatParams = []string{"format", "header", "lang", "bom", "delimiter", "decimal"}

// pageParams are the parameters of a page of the report other than page:
// the spec's filters, result_per_page and columns, OData's $filter,
// $orderby and $select, and negotiate's format and CSV options. Links
// carry these and no others.
var pageParams = slices.Concat(slices.DeleteFunc(slices.Clone(dataset.GeneralReport.PageParams), func(p string) bool { return p == "page" }),
	odata.ReadOptions, formatParams)

// request returns what every request for rows of src in the API's formats
// starts from: src as the token sees it, the query string's values and
// the negotiated format.
func (s *Server) request(c *gin.Context, src *source.Source) (*source.Source, url.Values, output, error) {
	src, err := s.sourceOf(c, src)
	if err != nil {
		return nil, nil, output{}, err
	}
	values, out, err := s.negotiate(c)
	return src, values, out, err
}

// pageAccepts are the parameters a page takes: pageParams and page.
var pageAccepts = append(slices.Clip(pageParams), "page")

// generalReport serves GET /api/general-report: one page of the report.
func (s *Server) generalReport(c *gin.Context) {
	rep, values, out, err := s.request(c, s.Report)
	if err != nil {
		s.fail(c, err)
		return
	}
	err = source.Known(values, pageAccepts)
	var q dataset.Query
	var page report.Page
	if err == nil {
		q, page, err = rep.Page(values)
	}
	if err == nil {
		err = rep.Options(values, &q)
	}
	if m := rep.MaxRows(); err == nil && m > 0 && page.PerPage > m {
		err = errTooManyRows("result_per_page", page.PerPage, m)
	}
	k, ok := s.outputValidation(c, out, err)
	if !ok {
		return
	}
	ctx, done, err := s.admit(c.Request.Context(), !isHead(c) && big(page.PerPage, out.format))
	if err != nil {
		s.fail(c, err)
		return
	}
	defer done()
	q.Validate = k.Validation // a HEAD reads no rows
	rd, err := road.OpenPage(ctx, s.Data, road.Export{Dataset: rep.Dataset, Query: q, Format: out.format})
	if err != nil {
		s.fail(c, err)
		return
	}
	defer rd.Close()
	if k.answered(c, rd.First()) {
		return
	}
	page = page.WithTotal(rd.Total())
	setPageHeaders(c, values, page)
	if isHead(c) {
		head(c, out, pageFile(page))
		return
	}
	s.stream(c, rd, spec(c, out, q.Columns, export.Options{
		Sheet:    rep.Name,
		Rows:     page.Rows(),
		Envelope: &export.Envelope{TotalPages: int(page.TotalPages), CurrentPage: int(page.CurrentPage)},
	}), nil, done, out, pageFile(page))
}

// setPageHeaders sets the paging headers of page p, asked for with the
// parsed query string values.
func setPageHeaders(c *gin.Context, values url.Values, p report.Page) {
	h := c.Writer.Header()
	h.Set("X-Total-Count", strconv.FormatInt(p.Total, 10))
	h.Set("X-Total-Pages", strconv.FormatInt(p.TotalPages, 10))
	h.Set("X-Current-Page", strconv.FormatInt(p.CurrentPage, 10))
	h.Set("Link", links(c.Request.URL.Path, values, p))
}

// pageFile names the attachment of page p.
func pageFile(p report.Page) string { return fmt.Sprintf("general-report-page-%d", p.CurrentPage) }

// exportOf serves the path of a whole export of src (src.ExportPath:
// /api/general-report/export, /users, /api/contracts/export, ...): every
// row of src matching the filters, in one snapshot.
func (s *Server) exportOf(src *source.Source) gin.HandlerFunc {
	return func(c *gin.Context) { s.export(c, src) }
}

// export serves a whole export of src: the rows its parameters ask for,
// counted first, then streamed from one snapshot, read through parallel
// parts where the dataset can split them.
func (s *Server) export(c *gin.Context, src *source.Source) {
	src, values, out, err := s.request(c, src)
	if err != nil {
		s.fail(c, err)
		return
	}
	q, err := src.Export(values, formatParams...)
	k, ok := s.outputValidation(c, out, err)
	if !ok {
		return
	}
	// Whether the export may be read in parts, as turns are free.
	inParts := s.Limits.ExportParts > 1 && postgres.Unsplit(src.Dataset, q) == ""
	if inParts && blocksPerPart(out.format) {
		// Read in parts or not as turns are free: the same rows, but
		// other bytes.
		k.weak = true
	}
	q.Validate = k.Validation
	// A whole export is big, but one of a small dataset in a format that
	// is cheap to write.
	ctx, done, err := s.admit(c.Request.Context(), !isHead(c) && (!src.Small || out.format == export.XLSX))
	if err != nil {
		s.fail(c, err)
		return
	}
	defer done()
	if isHead(c) {
		// The count and the tag, no rows (q.Validate.Head).
		cur, err := s.validateOnly(ctx, road.Export{Dataset: src.Dataset, Query: q, Format: out.format})
		if err != nil {
			s.fail(c, err)
			return
		}
		if k.answered(c, cur) {
			return
		}
		c.Writer.Header().Set("X-Total-Count", strconv.FormatInt(cur.Total(), 10))
		head(c, out, src.Name)
		return
	}
	// Parts past the first take turns that are free now, never waiting.
	ctx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	extra := 0
	if inParts {
		extra = s.moreTurns(ctx, s.Limits.ExportParts-1)
	}
	rd, err := road.Open(ctx, s.Data, road.Export{
		Dataset: src.Dataset, Query: q, Format: out.format, Parts: postgres.Parts{Max: 1 + extra, MinRows: s.exportPartRows()},
	})
	if err != nil {
		s.fewerTurns(ctx, extra)
		s.fail(c, err)
		return
	}
	s.fewerTurns(ctx, extra-(rd.Parts()-1))
	state(c).parts, state(c).onePart = rd.Parts(), rd.OnePart()
	giveParts := sync.OnceFunc(func() { s.fewerTurns(ctx, rd.Parts()-1) })
	defer giveParts()
	defer rd.Close()
	if k.answered(c, rd.First()) {
		return
	}
	total := rd.Total()
	if m := src.MaxRows(); m > 0 && total > m {
		s.fail(c, errTooManyRows("", total, m))
		return
	}
	c.Writer.Header().Set("X-Total-Count", strconv.FormatInt(total, 10))
	s.stream(c, rd, spec(c, out, q.Columns, export.Options{Sheet: src.Name, Rows: total}), stop,
		func() { giveParts(); done() }, out, src.Name)
}

// exportPartRows is the fewest rows a part of a parallel export reads.
func (s *Server) exportPartRows() int64 {
	if s.Limits.ExportPartRows > 0 {
		return s.Limits.ExportPartRows
	}
	return DefaultExportPartRows
}

// links returns an RFC 8288 Link header with first, prev, next and last
// pages of path, as references relative to the request. They carry the
// [pageParams] of values, which the request's parsing has validated (none
// holds a token: see param.Single), and nothing else of the request: no
// access_token in any spelling, no parameter informe does not know. A
// space is written %20, as in any URI (RFC 3986).
func links(path string, values url.Values, p report.Page) string {
	q := url.Values{}
	for _, name := range pageParams {
		if v, ok := values[name]; ok {
			q[name] = v
		}
	}
	last := max(p.TotalPages, 1)
	ref := func(n int64, rel string) string {
		q.Set("page", strconv.FormatInt(n, 10))
		return fmt.Sprintf(`<%s?%s>; rel="%s"`, path, strings.ReplaceAll(q.Encode(), "+", "%20"), rel)
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
