package api

import (
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/informe/informe/export"
	"github.com/informe/informe/internal/dataset"
	"github.com/informe/informe/internal/delivery"
	"github.com/informe/informe/internal/failure"
	"github.com/informe/informe/internal/param"
	"github.com/informe/informe/internal/road"
	"github.com/informe/informe/internal/web"
)

// output is the negotiated representation of a response.
type output struct {
	format export.Format
	csv    export.CSVOptions
	// labels is the language of the header row's labels with
	// header=labels ("es" or "en"; see catalog.Column's Label), "" for the
	// API's names.
	labels string
}

// negotiate parses the query string and chooses the response format: the
// format parameter wins over the Accept header. It fails with 400 for a bad
// parameter and 406 when nothing offered is acceptable.
func (s *Server) negotiate(c *gin.Context) (url.Values, output, error) {
	c.Header("Vary", "Accept")
	var out output
	values, err := url.ParseQuery(c.Request.URL.RawQuery)
	if err != nil {
		return nil, out, malformedQuery(c.Request.URL.RawQuery, "the query string is malformed")
	}
	if f, ok, err := param.Single(values, "format"); err != nil {
		return nil, out, err
	} else if ok {
		if out.format, err = export.ParseFormat(f); err != nil {
			return nil, out, failure.Wrap(failure.Invalid, err, err.Error())
		}
	} else if out.format, err = export.Negotiate(strings.Join(c.Request.Header.Values("Accept"), ",")); err != nil {
		return nil, out, failure.Wrap(failure.NotAcceptable, err, err.Error())
	}
	header, err := param.OneOf(values, "header", "true", "true", "false", "labels")
	if err != nil {
		return nil, out, err
	}
	out.csv.NoHeader = header == "false"
	lang, err := param.OneOf(values, "lang", "es", "es", "en")
	if err != nil {
		return nil, out, err
	}
	if header == "labels" {
		out.labels = lang
	}
	if out.csv.BOM, err = param.Bool(values, "bom", false); err != nil {
		return nil, out, err
	}
	delim, err := param.OneOf(values, "delimiter", export.DelimiterNames[0], export.DelimiterNames...)
	if err != nil {
		return nil, out, err
	}
	out.csv.Delimiter = export.Delimiter(delim)
	decimal, err := param.OneOf(values, "decimal", "point", "point", "comma")
	if err != nil {
		return nil, out, err
	}
	if decimal == "comma" {
		// A comma inside comma-separated fields would have to be quoted,
		// which the spreadsheets that read a decimal comma do not expect.
		switch {
		case out.format != export.CSV:
			return nil, out, failure.Invalidf("decimal", "csv_only", "decimal=comma is for CSV and TSV only, not %s", out.format)
		case delim == "comma":
			return nil, out, failure.Invalidf("decimal", "comma_delimiter", "decimal=comma needs delimiter=semicolon or delimiter=tab: a decimal comma between comma-separated fields would need quoting")
		}
		out.csv.DecimalComma = true
	}
	state(c).setFormat(out.format)
	return values, out, nil
}

// spec returns how a response in out's format writes the rows of cols:
// under the labels out asks for, with out's CSV options and opts.
func spec(c *gin.Context, out output, cols []dataset.Column, opts export.Options) export.Spec {
	opts.CSV = out.csv
	return export.Spec{Format: out.format, Columns: labelled(c, cols, out), Options: opts}
}

// stream answers 200 with rd's rows as sp writes them, the file named
// file when it is an attachment; stop stops every part of a parallel
// read, and done ends the request's turn at the last row. The handler has
// decided the status and set the headers that depend on the data before;
// sp.Options.Rows must hold the number of rows rd delivers.
func (s *Server) stream(c *gin.Context, rd *road.Read, sp export.Spec, stop func(error), done func(), out output, file string) {
	setContentHeaders(c, out, file)
	s.deliverRows(c, done, body{
		deliver: func(dst io.Writer, o delivery.Options, h delivery.Hooks) (delivery.Result, error) {
			return rd.Deliver(dst, sp, road.Options{Body: o, Parts: delivery.Options{Spool: s.Delivery.Spool, Budget: s.Delivery.Budget}, Stop: stop, Hooks: h})
		},
		estimate:     sp.Options.Rows * int64(len(sp.Columns)) * 8,
		compressible: !out.format.Compressed(),
	})
}

// setContentHeaders sets the Content-Type of out and the
// Content-Disposition of an attachment named for what it holds: file (the
// dataset), the main filter and the date (see [fileName]). Every format is
// an attachment, so that a browser saves JSON too, under its own name.
func setContentHeaders(c *gin.Context, out output, file string) {
	h := c.Writer.Header()
	h.Set("Content-Type", export.MediaType(out.format, out.csv))
	name := fileName(file, c.Request.URL.Query(), time.Now())
	if state(c).page {
		// The web page's own download: named in its reader's language,
		// dated in Chile.
		name = pageFileName(c.Request.URL.Path, file, c.Request.URL.Query(), time.Now(), web.Language(c.Request))
	}
	name += "." + export.Extension(out.format, out.csv)
	h.Set("Content-Disposition", contentDisposition(name))
}

// isHead reports whether c is a HEAD request, answered like GET without a
// body and without reading the rows (RFC 9110 section 9.3.2).
func isHead(c *gin.Context) bool { return c.Request.Method == http.MethodHead }

// head answers a HEAD request: the headers a GET would have, no body.
func head(c *gin.Context, out output, file string) {
	setContentHeaders(c, out, file)
	if !out.format.Compressed() {
		varyEncoding(c.Writer.Header())
	}
	c.Status(http.StatusOK)
}
