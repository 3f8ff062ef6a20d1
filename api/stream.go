package api

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strconv"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/informe/informe/export"
	"github.com/informe/informe/failure"
	"github.com/informe/informe/param"
	"github.com/informe/informe/report"
	"github.com/informe/informe/users"
)

// generalReport serves GET /api/general-report.
func (s *Server) generalReport(c *gin.Context) {
	values, out, err := s.prepare(c)
	if err != nil {
		s.fail(c, err)
		return
	}
	q, err := report.ParseQuery(values)
	if err != nil {
		s.fail(c, err)
		return
	}
	s.stream(c, out, "general-report", report.Columns, func(ctx context.Context, begin func(page) error, row func([][]byte) error) (int, error) {
		return s.Reports.Stream(ctx, q, func(p report.Page) error {
			return begin(page{
				total: p.Total, totalPages: p.TotalPages, current: p.CurrentPage, paged: true,
			})
		}, row)
	})
}

// listUsers serves GET /users.
func (s *Server) listUsers(c *gin.Context) {
	_, out, err := s.prepare(c)
	if err != nil {
		s.fail(c, err)
		return
	}
	s.stream(c, out, "users", users.Columns, func(ctx context.Context, begin func(page) error, row func([][]byte) error) (int, error) {
		return s.Users.Stream(ctx, func(total int64) error {
			return begin(page{total: total})
		}, row)
	})
}

// output is the negotiated representation of a response.
type output struct {
	format export.Format
	csv    export.CSVOptions
}

// prepare parses the query string and negotiates the response format: the
// format parameter wins over the Accept header. It fails with 400 for a bad
// parameter and 406 when nothing offered is acceptable.
func (s *Server) prepare(c *gin.Context) (url.Values, output, error) {
	c.Header("Vary", "Accept")
	var out output
	values, err := url.ParseQuery(c.Request.URL.RawQuery)
	if err != nil {
		return nil, out, failure.Errorf(failure.Invalid, "the query string is malformed")
	}
	// Several Accept lines make one comma-separated list (RFC 9110
	// section 5.3).
	accept := strings.Join(c.Request.Header.Values("Accept"), ",")
	if f, ok, err := param.Single(values, "format"); err != nil {
		return nil, out, err
	} else if ok {
		if out.format, err = export.ParseFormat(f); err != nil {
			return nil, out, failure.Wrap(failure.Invalid, err, err.Error())
		}
	} else if out.format, err = export.Negotiate(accept); err != nil {
		return nil, out, failure.Wrap(failure.NotAcceptable, err, err.Error())
	}
	header, err := param.Bool(values, "header", true)
	if err != nil {
		return nil, out, err
	}
	out.csv.NoHeader = !header
	if out.csv.BOM, err = param.Bool(values, "bom", false); err != nil {
		return nil, out, err
	}
	delim, err := param.OneOf(values, "delimiter", "comma", "comma", "semicolon", "tab")
	if err != nil {
		return nil, out, err
	}
	out.csv.Delimiter = map[string]byte{"comma": ',', "semicolon": ';', "tab": '\t'}[delim]
	c.Set(ctxFormat, out.format.String())
	return values, out, nil
}

// page is what a store knows before its first row.
type page struct {
	total      int64
	totalPages int64
	current    int64
	paged      bool // the report is paged; the users listing is not
}

// streamFunc runs a store's read: begin once before the first row, then
// row for each row. It returns the number of rows passed to row.
type streamFunc func(ctx context.Context, begin func(page) error, row func([][]byte) error) (int, error)

// stream runs read and encodes the rows of the table called name into the
// response as they arrive, in the negotiated format. The status and headers are decided in begin, before the first byte; a
// failure before any byte is sent is an ordinary JSON error, a failure after
// it aborts the response.
func (s *Server) stream(c *gin.Context, out output, name string, cols []export.Column, read streamFunc) {
	w := &gate{w: c.Writer}
	var enc export.Encoder
	n, err := read(c.Request.Context(), func(p page) error {
		h := c.Writer.Header()
		h.Set("Content-Type", out.format.ContentType())
		h.Set("X-Total-Count", strconv.FormatInt(p.total, 10))
		opts := export.Options{CSV: out.csv, Sheet: name}
		file := name
		if p.paged {
			file = fmt.Sprintf("%s-page-%d", name, p.current)
			h.Set("X-Total-Pages", strconv.FormatInt(p.totalPages, 10))
			h.Set("X-Current-Page", strconv.FormatInt(p.current, 10))
			h.Set("Link", links(c.Request.URL, p))
			opts.Envelope = &export.Envelope{TotalPages: int(p.totalPages), CurrentPage: int(p.current)}
		}
		if out.format == export.CSV || out.format == export.XLSX {
			h.Set("Content-Disposition", fmt.Sprintf(`attachment; filename="%s.%s"`, file, out.format))
		}
		var err error
		enc, err = export.NewEncoder(w, out.format, cols, opts)
		if err != nil {
			return fmt.Errorf("encoder: %w", err)
		}
		c.Status(200)
		return nil
	}, func(row [][]byte) error {
		return enc.Encode(row)
	})
	c.Set(ctxRows, n)
	if enc != nil {
		if err != nil {
			w.closed = true // let Close clean up without writing a trailer
		}
		if cerr := enc.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		if ctxErr := c.Request.Context().Err(); ctxErr != nil && !errors.Is(err, ctxErr) {
			err = fmt.Errorf("%w (client gone: %w)", err, ctxErr)
		}
		s.fail(c, err)
	}
}

// links returns an RFC 8288 Link header with first, prev, next and last
// pages, as references relative to the request, without any access_token.
func links(u *url.URL, p page) string {
	q := u.Query()
	q.Del("access_token")
	last := max(p.totalPages, 1)
	ref := func(n int64, rel string) string {
		q.Set("page", strconv.FormatInt(n, 10))
		return fmt.Sprintf(`<%s?%s>; rel="%s"`, u.Path, q.Encode(), rel)
	}
	parts := []string{ref(1, "first")}
	if p.current > 1 {
		parts = append(parts, ref(min(p.current-1, last), "prev"))
	}
	if p.current < p.totalPages {
		parts = append(parts, ref(p.current+1, "next"))
	}
	parts = append(parts, ref(last, "last"))
	return strings.Join(parts, ", ")
}

// gate passes writes through until it is closed, then discards them.
type gate struct {
	w      io.Writer
	closed bool
}

func (g *gate) Write(b []byte) (int, error) {
	if g.closed {
		return len(b), nil
	}
	return g.w.Write(b)
}
