package odata

import (
	"net/url"
	"strconv"
	"strings"

	"github.com/informe/informe/internal/httplist"
	"github.com/informe/informe/internal/secret"
)

// MaxPageSize is the most rows a feed response holds, and the page size
// when the client states no preference (the REST API's result_per_page
// maximum).
const MaxPageSize = 10000

// Format is the JSON flavour of a response. The zero Format writes
// Edm.Int64 and Edm.Decimal values as JSON numbers.
type Format struct {
	// IEEE754Compatible writes Edm.Int64 and Edm.Decimal values, and
	// @odata.count, as JSON strings, for clients whose numbers are IEEE 754
	// doubles (JavaScript, Excel): ids and amounts stay exact.
	IEEE754Compatible bool
}

// ContentType returns the Content-Type of a response in f, e.g.
// "application/json;odata.metadata=minimal;odata.streaming=true;IEEE754Compatible=false;charset=utf-8".
// Responses are always minimal metadata and follow the streaming payload
// order (the context first, the count before the value).
func (f Format) ContentType() string {
	if f.IEEE754Compatible {
		return "application/json;odata.metadata=minimal;odata.streaming=true;IEEE754Compatible=true;charset=utf-8"
	}
	return "application/json;odata.metadata=minimal;odata.streaming=true;IEEE754Compatible=false;charset=utf-8"
}

// option returns f as the value of a $format query option, for next
// links: written by informe, never copied from the request.
func (f Format) option() string {
	if f.IEEE754Compatible {
		return "application/json;IEEE754Compatible=true"
	}
	return "application/json"
}

// offered is what the service can write, for 406 messages.
const offered = "the service writes application/json;odata.metadata=minimal, with IEEE754Compatible=true or false"

// Negotiate chooses the [Format] of a response from the $format query
// option in values, which wins, else from the Accept header field values.
//
// $format may be "json" (any case) or "application/json" with format
// parameters, as may the Accept media ranges (Power Query sends
// "application/json;odata.metadata=minimal;q=1.0,application/json;odata=minimalmetadata;q=0.9,..."):
// odata.metadata (or metadata) minimal; IEEE754Compatible true or false;
// odata.streaming and charset, which change nothing. Format parameter
// names and values are case-insensitive. An absent Accept, "*/*" and
// "application/*" give the zero Format.
//
// Note that a ';' in a query string must be sent as %3B: Go's URL parser
// drops a query parameter holding a bare ';'.
//
// Errors are *[Error]: a $format given twice, or with a malformed
// parameter value, is a 400; a $format other than JSON, odata.metadata=full
// (which would need control information informe does not write) or none
// (which forbids the control information informe always writes), and an
// Accept header that allows neither JSON with minimal metadata nor a
// wildcard, are a 406, as OData 4.0 (Protocol, 8.2.1) says of a format
// the service does not support.
func Negotiate(values url.Values, accept []string) (Format, error) {
	if raw, ok, err := option(values, "$format"); err != nil {
		return Format{}, err
	} else if ok {
		return parseFormatOption(raw)
	}
	var (
		best     Format
		bestQ    = -1
		bestSpec = 0
		seen     bool
	)
	for _, field := range accept {
		for _, elem := range httplist.Split(field, ',') {
			mt, params, ok := parseMediaType(elem)
			if !ok {
				continue
			}
			seen = true
			spec := 0
			switch mt {
			case "*/*":
				spec = 1
			case "application/*":
				spec = 2
			case "application/json":
				spec = 3
			default:
				continue
			}
			q := 1000
			var f Format
			usable := true
			for _, p := range params {
				name, value := p[0], p[1]
				switch name {
				case "q":
					if q, ok = httplist.Quality(value); !ok {
						usable = false
					}
				case "odata.metadata", "metadata":
					if spec == 3 && value != "minimal" {
						usable = false
					}
				case "ieee754compatible":
					if spec == 3 {
						f.IEEE754Compatible = value == "true"
					}
				}
			}
			if !usable {
				continue
			}
			if spec == 3 && q == 0 {
				// An explicit refusal of JSON beats any wildcard.
				return Format{}, notAcceptable("Accept", "Accept refuses application/json: "+offered)
			}
			if q > bestQ || (q == bestQ && spec > bestSpec) {
				best, bestQ, bestSpec = f, q, spec
			}
		}
	}
	if !seen {
		return Format{}, nil
	}
	if bestQ <= 0 {
		return Format{}, notAcceptable("Accept", "Accept allows no format this service writes: "+offered)
	}
	return best, nil
}

// parseFormatOption parses the value of $format.
func parseFormatOption(raw string) (Format, error) {
	if strings.EqualFold(raw, "json") {
		return Format{}, nil
	}
	mt, params, ok := parseMediaType(raw)
	if !ok || mt != "application/json" {
		return Format{}, notAcceptable("$format", "$format "+secret.Quote(raw)+" is not supported: use json or application/json; "+offered)
	}
	var f Format
	for _, p := range params {
		name, value := p[0], p[1]
		switch name {
		case "odata.metadata", "metadata":
			switch value {
			case "minimal":
			case "full", "none":
				return Format{}, notAcceptable("$format", "$format: odata.metadata="+value+" is not supported; "+offered)
			default:
				return Format{}, badRequest("$format", reasonNotAllowed, "$format: odata.metadata must be minimal, none or full")
			}
		case "ieee754compatible":
			switch value {
			case "true":
				f.IEEE754Compatible = true
			case "false":
			default:
				return Format{}, badRequest("$format", reasonNotAllowed, "$format: IEEE754Compatible must be true or false")
			}
		case "odata.streaming", "streaming":
			if value != "true" && value != "false" {
				return Format{}, badRequest("$format", reasonNotAllowed, "$format: odata.streaming must be true or false")
			}
		}
	}
	return f, nil
}

// parseMediaType parses "type/subtype;name=value;..." into the lower-case
// media type and its parameters as lower-case [name, value] pairs, quotes
// removed from values. ok is false for an element without a type/subtype
// or with a parameter that has no '='. A lone "*" reads as "*/*".
func parseMediaType(s string) (mt string, params [][2]string, ok bool) {
	parts := httplist.Split(s, ';')
	mt = strings.ToLower(httplist.TrimOWS(parts[0]))
	if mt == "*" {
		mt = "*/*"
	}
	typ, sub, found := strings.Cut(mt, "/")
	if !found || typ == "" || sub == "" || strings.ContainsAny(mt, " \t\"") {
		return "", nil, false
	}
	for _, p := range parts[1:] {
		p = httplist.TrimOWS(p)
		if p == "" {
			continue
		}
		name, value, found := strings.Cut(p, "=")
		if !found {
			return "", nil, false
		}
		value = httplist.TrimOWS(value)
		if len(value) >= 2 && value[0] == '"' && value[len(value)-1] == '"' {
			value = strings.ReplaceAll(value[1:len(value)-1], `\`, "")
		}
		params = append(params, [2]string{strings.ToLower(httplist.TrimOWS(name)), strings.ToLower(value)})
	}
	return mt, params, true
}

// PageSize returns the rows per response for a request with the given
// Prefer header field values, and the Preference-Applied value to answer
// with ("" for none).
//
// The preference odata.maxpagesize=N (or maxpagesize=N) with N from 1 to
// MaxPageSize-1 makes pages of N rows, and is applied:
// "odata.maxpagesize=N". Without it, or with N at or above [MaxPageSize],
// pages are MaxPageSize rows and nothing is applied (a page never exceeds
// N either way). As RFC 7240 says, the first instance of a preference
// counts and a malformed one is ignored; other preferences are ignored.
func PageSize(prefer []string) (size int, applied string) {
	for _, field := range prefer {
		for _, pref := range httplist.Split(field, ',') {
			tok, _, _ := strings.Cut(pref, ";") // preference parameters do not matter here
			name, value, hasValue := strings.Cut(tok, "=")
			name = strings.ToLower(httplist.TrimOWS(name))
			if name != "odata.maxpagesize" && name != "maxpagesize" {
				continue
			}
			value = strings.Trim(httplist.TrimOWS(value), `"`)
			n, err := strconv.Atoi(value)
			if !hasValue || err != nil || n < 1 || value[0] < '1' || value[0] > '9' {
				return MaxPageSize, "" // the first instance is malformed: ignore the preference
			}
			if n >= MaxPageSize {
				return MaxPageSize, ""
			}
			return n, "odata.maxpagesize=" + strconv.Itoa(n)
		}
	}
	return MaxPageSize, ""
}
