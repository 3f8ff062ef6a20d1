package api

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"os"
	"runtime/debug"
	"strings"
	"sync"

	"github.com/gin-gonic/gin"

	"github.com/informe/informe/export"
	"github.com/informe/informe/internal/compress"
	"github.com/informe/informe/internal/dataset"
	"github.com/informe/informe/internal/failure"
	"github.com/informe/informe/internal/httplist"
	"github.com/informe/informe/internal/postgres"
	"github.com/informe/informe/internal/road"
)

// build identifies informe's build, a part of every entity tag: a new
// build may write other bytes from the same rows. It is a digest of the
// module's build information (its version, its dependencies', the
// commit); a build without a commit, or from a modified tree, adds its
// executable's size and time.
var build = sync.OnceValue(func() string {
	sum := sha256.Sum256([]byte(buildInfo()))
	return hex.EncodeToString(sum[:])
})

func buildInfo() string {
	b, clean := "no build information", false
	if info, ok := debug.ReadBuildInfo(); ok {
		b = info.String()
		for _, s := range info.Settings {
			if s.Key == "vcs.modified" {
				clean = s.Value == "false"
			}
		}
	}
	if !clean {
		if exe, err := os.Executable(); err == nil {
			if fi, err := os.Stat(exe); err == nil {
				b += fmt.Sprintf("\nexecutable %d %d", fi.Size(), fi.ModTime().UnixNano())
			}
		}
	}
	return b
}

// conditional is a response's validation: the rows' tag asked of the
// store with the representation's own parts, and the client's
// If-None-Match.
type conditional struct {
	*dataset.Validation
	// weak says the tag is weak: the same rows may come as other bytes.
	// A compressor's bytes depend on when the delivery flushes it; see
	// also blocksPerPart.
	weak bool
	// compressible says the body may be compressed (Vary: Accept-Encoding).
	compressible bool
}

// validation returns the conditional of c's response, whose bytes, beyond
// the rows and the query, are decided by parts (the format and its
// options), informe's build and, when compressible, the content coding
// that Accept-Encoding negotiates. A malformed If-None-Match is a 400.
func validation(c *gin.Context, compressible bool, parts ...string) (conditional, error) {
	coding := compress.Identity
	if compressible {
		coding = compress.Negotiate(c.Request.Header.Values("Accept-Encoding")...)
	}
	k := conditional{
		Validation: &dataset.Validation{
			Representation: strings.Join(append([]string{build(), coding.String()}, parts...), "\x00"),
			Head:           isHead(c),
		},
		weak:         coding != compress.Identity,
		compressible: compressible,
	}
	if lines := c.Request.Header.Values("If-None-Match"); len(lines) > 0 {
		tags, any, ok := httplist.EntityTags(strings.Join(lines, ","))
		if !ok {
			return k, failure.Invalidf("If-None-Match", "if_none_match",
				`If-None-Match must be "*" or a list of entity tags, each in double quotes, W/ before a weak one`)
		}
		k.Held, k.Any = tags, any
	}
	return k, nil
}

// blocksPerPart reports whether a whole export in format f read in parts
// writes other bytes than one read through one connection: each part of
// an XLSX, Parquet or Arrow export writes blocks of its own (row groups,
// record batches, compressed runs), the same rows in another layout.
func blocksPerPart(f export.Format) bool {
	return f == export.XLSX || f == export.Parquet || f == export.Arrow
}

// outputValidation is [validation] of a body in out's representation,
// whose format, CSV options and labels decide its bytes, once a request's
// parameters were read with err: an error, err's or the validation's,
// fails c and reports false.
func (s *Server) outputValidation(c *gin.Context, out output, err error) (conditional, bool) {
	var k conditional
	if err == nil {
		k, err = validation(c, !out.format.Compressed(), out.format.String(), fmt.Sprintf("%+v", out.csv), out.labels)
	}
	if err != nil {
		s.fail(c, err)
		return k, false
	}
	return k, true
}

// answered sets the ETag of cur's rows, when they have one, and, when
// the client holds it, answers 304 Not Modified, with the fields a 200
// would have that RFC 9110 section 15.4.5 asks for (ETag, Vary) and no
// body, and reports true.
func (k conditional) answered(c *gin.Context, cur *postgres.Cursor) bool {
	h := c.Writer.Header()
	if tag := cur.ETag(); tag != "" {
		if k.weak {
			h.Set("ETag", `W/"`+tag+`"`)
		} else {
			h.Set("ETag", `"`+tag+`"`)
		}
	}
	if !cur.NotModified() {
		return false
	}
	h.Del("Content-Type")
	if k.compressible {
		varyEncoding(h)
	}
	c.Status(http.StatusNotModified)
	return true
}

// validateOnly reads the tag and, with e.Query.Count, the count of e's
// rows, for a query that reads no rows (Validate.Head, or a Limit of 0):
// what a HEAD request and OData's /$count answer, as a read of e's
// format would tag them. The cursor returned is closed; its ETag,
// NotModified and Total stand.
func (s *Server) validateOnly(ctx context.Context, e road.Export) (*postgres.Cursor, error) {
	rd, err := road.OpenPage(ctx, s.Data, e)
	if err != nil {
		return nil, err
	}
	err = rd.Close()
	return rd.First(), err
}
