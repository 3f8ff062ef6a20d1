package export

import (
	"errors"
	"fmt"
	"strings"

	"github.com/informe/informe/internal/httplist"
	"github.com/informe/informe/internal/secret"
)

// Format is an output format an [Encoder] can write. The zero value is [JSON].
type Format int

// The formats, in declaration order. The server's preference when a client
// accepts several equally is a different order: see [Negotiate].
const (
	JSON    Format = iota // a JSON document; see [NewJSON]
	NDJSON                // one JSON object per line; see [NewNDJSON]
	CSV                   // RFC 4180 comma-separated values; see [NewCSV]
	XLSX                  // an Excel workbook; see [NewXLSX]
	Parquet               // an Apache Parquet file; see [NewParquet]
	Arrow                 // an Apache Arrow IPC stream; see [NewArrow]
)

var formatNames = [...]string{JSON: "json", NDJSON: "ndjson", CSV: "csv", XLSX: "xlsx", Parquet: "parquet", Arrow: "arrow"}

var contentTypes = [...]string{
	JSON:    "application/json; charset=utf-8",
	NDJSON:  "application/x-ndjson; charset=utf-8",
	CSV:     "text/csv; charset=utf-8",
	XLSX:    "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
	Parquet: "application/vnd.apache.parquet",
	Arrow:   "application/vnd.apache.arrow.stream",
}

func (f Format) valid() bool { return f >= 0 && int(f) < len(formatNames) }

// String returns the format's name as used in the format query parameter:
// "json", "ndjson", "csv", "xlsx", "parquet" or "arrow".
func (f Format) String() string {
	if f.valid() {
		return formatNames[f]
	}
	return fmt.Sprintf("Format(%d)", int(f))
}

// ContentType returns the Content-Type header value for a response in format
// f, with charset=utf-8 on the text formats. It returns
// "application/octet-stream" for a value that is not one of the formats.
func (f Format) ContentType() string {
	if f.valid() {
		return contentTypes[f]
	}
	return "application/octet-stream"
}

// ErrUnknownFormat is returned, wrapped, by [ParseFormat] for a name that is
// not a format.
var ErrUnknownFormat = errors.New("unknown format")

// ParseFormat returns the format named s, as given in a format query
// parameter. Names are matched case-insensitively ("CSV" is [CSV]) and must
// otherwise be exact: no spaces, no media types. An empty s is not a format;
// callers that treat a missing parameter as "negotiate" check for it first.
// Any other name gives an error wrapping [ErrUnknownFormat] whose message
// lists the allowed values; it is safe to show to clients.
func ParseFormat(s string) (Format, error) {
	for f, name := range formatNames {
		if strings.EqualFold(s, name) {
			return Format(f), nil
		}
	}
	return 0, fmt.Errorf("%w %s: allowed values are %s", ErrUnknownFormat, secret.Quote(s), strings.Join(formatNames[:], ", "))
}

// ErrNotAcceptable is returned, wrapped, by [Negotiate] when the Accept
// header excludes every media type in [Offered].
var ErrNotAcceptable = errors.New("not acceptable")

// offer is one media type the server can produce.
type offer struct {
	typ, sub string
	format   Format
}

// offers are in the server's order of preference: when a client accepts
// several formats with the same quality, the first one here wins.
var offers = [...]offer{
	{"application", "json", JSON},
	{"text", "csv", CSV},
	{"application", "x-ndjson", NDJSON},
	{"application", "jsonl", NDJSON},
	{"application", "vnd.openxmlformats-officedocument.spreadsheetml.sheet", XLSX},
	{"application", "vnd.apache.parquet", Parquet},
	{"application", "vnd.apache.arrow.stream", Arrow},
}

// Offered lists the media types [Negotiate] can choose, in the server's order
// of preference. application/jsonl is an alias of application/x-ndjson.
// It is meant for messages and documentation; changing it changes nothing.
var Offered = func() []string {
	types := make([]string, len(offers))
	for i, o := range offers {
		types[i] = o.typ + "/" + o.sub
	}
	return types
}()

var notAcceptable = fmt.Errorf("%w: the offered media types are %s", ErrNotAcceptable, strings.Join(Offered, ", "))

// Negotiate chooses a format from an HTTP Accept header value, following
// RFC 9110 section 12.5.1:
//
//   - The header is a comma-separated list of media ranges, each with
//     optional parameters. Parameters other than q are ignored; q is a
//     quality from 0 to 1 with at most three decimals (default 1), and q=0
//     means "not acceptable".
//   - A media type's quality is the one of the most specific range that
//     matches it: "text/csv" beats "text/*", which beats "*/*". If several
//     equally specific ranges match, the highest quality counts.
//   - The format with the highest quality wins; ties go to the server's
//     preference JSON, CSV, NDJSON, XLSX, Parquet, Arrow.
//
// Matching is case-insensitive. application/jsonl counts as NDJSON, as
// application/x-ndjson does. An empty header accepts anything and gives JSON.
//
// Negotiate is lenient, as browsers and tools send odd things: a list
// element that is not a well-formed media range (no slash, a bad q value, a
// lone "*" is read as "*/*") is skipped, and a header none of whose elements
// is well formed is treated as absent. When every offered type is
// excluded, Negotiate returns an error wrapping [ErrNotAcceptable] whose
// message lists [Offered] and is safe to show to clients.
func Negotiate(accept string) (Format, error) {
	// best[i] is the quality (in thousandths) of offers[i] and spec[i] the
	// specificity of the range that set it: 0 none, 1 */*, 2 type/*, 3 exact.
	var best [len(offers)]int
	var spec [len(offers)]int8
	seen := false
	for rest := accept; rest != ""; {
		var elem string
		elem, rest = httplist.Cut(rest, ',')
		typ, sub, q, ok := parseRange(elem)
		if !ok {
			continue
		}
		seen = true
		for i, o := range offers {
			var s int8
			switch {
			case typ == "*" && sub == "*":
				s = 1
			case !strings.EqualFold(typ, o.typ):
				continue
			case sub == "*":
				s = 2
			case strings.EqualFold(sub, o.sub):
				s = 3
			default:
				continue
			}
			if s > spec[i] || (s == spec[i] && q > best[i]) {
				spec[i], best[i] = s, q
			}
		}
	}
	if !seen {
		return JSON, nil
	}
	// Sum up per format: a format is as acceptable as its best media type.
	bestFormat, bestQ := Format(0), 0
	for i, o := range offers {
		if best[i] > bestQ {
			bestFormat, bestQ = o.format, best[i]
		}
	}
	if bestQ == 0 {
		return 0, notAcceptable
	}
	return bestFormat, nil
}

// parseRange parses one element of an Accept header: a media range with
// optional parameters. It reports ok=false for an element to skip: empty,
// malformed, or with a malformed q parameter. q is in thousandths.
func parseRange(elem string) (typ, sub string, q int, ok bool) {
	mediaRange, params, _ := strings.Cut(elem, ";")
	mediaRange = httplist.TrimOWS(mediaRange)
	if mediaRange == "*" {
		// Old Java clients send "*; q=.2" meaning */*.
		typ, sub = "*", "*"
	} else {
		var found bool
		typ, sub, found = strings.Cut(mediaRange, "/")
		if !found || !httplist.IsToken(typ) || !httplist.IsToken(sub) || (typ == "*" && sub != "*") {
			return "", "", 0, false
		}
	}
	q = 1000
	for params != "" {
		var param string
		param, params = httplist.Cut(params, ';')
		name, value, _ := strings.Cut(param, "=")
		if !strings.EqualFold(httplist.TrimOWS(name), "q") {
			continue
		}
		if q, ok = httplist.Quality(httplist.TrimOWS(value)); !ok {
			return "", "", 0, false
		}
		// RFC 9110 makes q the last media-range parameter; what follows it
		// are accept-ext parameters, which we ignore too.
		break
	}
	return typ, sub, q, true
}

// Attachment reports whether a response in format f is a file to save
// (CSV, XLSX, Parquet, Arrow) rather than data to read in place.
func (f Format) Attachment() bool { return f == CSV || f == XLSX || f == Parquet || f == Arrow }

// Compressed reports whether output in format f is compressed already
// (XLSX, Parquet), so that compressing it again does not pay.
func (f Format) Compressed() bool { return f == XLSX || f == Parquet }

// Typed reports whether f writes typed values (dates as dates): Parquet
// and Arrow. Their encoders take a row's values in binary (see
// [Options].Binary and dataset.Query.Typed) or parse them from text (see
// [dataset.ParseValue]).
func (f Format) Typed() bool { return f == Parquet || f == Arrow }

// Places reports whether a part of a body in f, written apart and joined
// ([Spec.Continuation]), must know the place of its first row in the whole
// body: XLSX numbers its rows, and starts a new sheet after a sheet's
// last; a Parquet part tells the first encoder the row it begins at.
func (f Format) Places() bool { return f == XLSX || f == Parquet }

// MediaType returns the Content-Type of output in format f with CSV
// options o: tab-separated CSV is text/tab-separated-values.
func MediaType(f Format, o CSVOptions) string {
	if f == CSV && o.delimiter() == '\t' {
		return "text/tab-separated-values; charset=utf-8"
	}
	return f.ContentType()
}

// Extension returns the file name extension of output in format f with CSV
// options o: "tsv" for tab-separated CSV, else the format's name.
func Extension(f Format, o CSVOptions) string {
	if f == CSV && o.delimiter() == '\t' {
		return "tsv"
	}
	return f.String()
}
