package api

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/informe/informe/auth"
	"github.com/informe/informe/export"
	"github.com/informe/informe/internal/failure"
	"github.com/informe/informe/internal/road"
)

// Limits bound the work the API takes on at once, so that a burst of big
// requests is refused clearly rather than served slowly to everyone. The
// zero value limits nothing.
type Limits struct {
	// Limits are the bounds of every request's read and the turns of
	// big responses: see [road.Limits]. A big response is a whole
	// export, a page of more than [SmallRows] rows, or any XLSX.
	road.Limits
	// ExportParts is how many connections a whole export in the report's
	// own order, filtered or not, may read through at once, in one
	// snapshot (postgres.Unsplit); 0 and 1 read
	// through one. Each part past the first takes a turn of Exports, only
	// if one is free at once: a busy server runs exports with fewer parts.
	ExportParts int
	// ExportPartRows is the fewest rows a part of an export reads; 0 means
	// [DefaultExportPartRows].
	ExportPartRows int64
	// BodyTimeout is how long a request's body may take to arrive once
	// its header is in; 0 means [DefaultBodyTimeout].
	BodyTimeout time.Duration
}

// Bounds of a request, checked before any work (see limitRequest).
const (
	// MaxURIBytes bounds the request target, path and query string; past
	// it, 414.
	MaxURIBytes = 8 << 10
	// MaxParamBytes bounds the decoded value of a query parameter that
	// [paramLimits] does not name; past it, 400 naming the parameter.
	MaxParamBytes = 128
	// MaxBodyBytes bounds a request's body (the web page's sign-in is the
	// only one informe reads); past it, 413.
	MaxBodyBytes = 4 << 10
	// DefaultBodyTimeout is the default [Limits].BodyTimeout; past it,
	// 408 and the connection is closed.
	DefaultBodyTimeout = 10 * time.Second
)

// paramLimits are the parameters whose values may be longer than
// [MaxParamBytes]: a list of every column (1,429 bytes for the report's
// 74), an OData filter or order, an expansion (Power Query writes every
// column ticked in an expanded navigation in its $select: every
// navigation of a set with all their properties takes 1,321 bytes at
// most), and a skip token (which holds
// the sort values of a page's last row). An OData option's name is
// case-insensitive ($Expand is $expand), and so is its limit. With these limits the Link header of a
// page and an OData next link stay within a few KiB.
var paramLimits = map[string]int{
	"columns":    2 << 10,
	"$select":    2 << 10,
	"$filter":    2 << 10,
	"$orderby":   512,
	"$expand":    2 << 10,
	"$skiptoken": 2 << 10,
}

func (l Limits) bodyTimeout() time.Duration {
	if l.BodyTimeout > 0 {
		return l.BodyTimeout
	}
	return DefaultBodyTimeout
}

// checkParams returns a 400, its target naming the parameter, for the
// first parameter of the query string raw whose decoded value exceeds its
// limit, nil when none does. A query string that does not parse is left to
// the handlers, which refuse it.
func checkParams(raw string) error {
	if len(raw) <= MaxParamBytes {
		return nil // no value can be longer
	}
	q, err := url.ParseQuery(raw)
	if err != nil {
		return nil
	}
	for name, vs := range q {
		key := name
		if strings.HasPrefix(name, "$") {
			key = strings.ToLower(name)
		}
		limit, ok := paramLimits[key]
		if !ok {
			limit = MaxParamBytes
		}
		for _, v := range vs {
			if len(v) <= limit {
				continue
			}
			shown := name
			if len(name) > 64 || auth.MayHoldToken(name) {
				shown = "a parameter"
			}
			return &failure.Error{Code: failure.Invalid, Target: shown, Reason: "too_long",
				Message: fmt.Sprintf("%s: the value may take %d bytes at most", shown, limit)}
		}
	}
	return nil
}

// DefaultExportPartRows is the default [Limits].ExportPartRows: below
// it, a second connection costs more than it gains.
const DefaultExportPartRows = 50_000

// SmallRows is the largest page that is not a big response.
const SmallRows = 1000

// big reports whether a response of rows rows (negative: all there are)
// in format f counts as big.
func big(rows int64, f export.Format) bool {
	return rows < 0 || rows > SmallRows || f == export.XLSX
}

// admit admits the request's read to the database ([road.Admission.Admit])
// as its token's, waiting for its turn when it is big. The returned func
// ends the turn; call it when the last row has been read. Only its first
// call counts: handlers both defer it and hand it to the cursor's Close,
// and a turn given back twice would take another request's turn.
func (s *Server) admit(ctx context.Context, isBig bool) (context.Context, func(), error) {
	ctx, t, err := s.admission.Admit(ctx, whoOf(ctx), isBig)
	if err != nil {
		return ctx, nil, err
	}
	if r, ok := ctx.Value(requestKey{}).(*request); ok {
		r.ticket = t
	}
	return ctx, t.Done, nil
}

// whoOf returns whose turns a request of ctx takes: its token's name
// and own limit (nil: the default). A request with no principal takes
// the turns of "".
func whoOf(ctx context.Context) road.Who {
	if r, ok := ctx.Value(requestKey{}).(*request); ok && r.principal != nil {
		return road.Who{Token: r.principal.Name, Limit: r.principal.MaxExports}
	}
	return road.Who{}
}

// moreTurns takes up to k more turns for the parts of a request of ctx
// that holds one ([road.Admission.More]) and returns how many it took;
// [Server.fewerTurns] gives them back.
func (s *Server) moreTurns(ctx context.Context, k int) int { return s.admission.More(whoOf(ctx), k) }

// fewerTurns gives back k turns of [Server.moreTurns].
func (s *Server) fewerTurns(ctx context.Context, k int) { s.admission.Fewer(whoOf(ctx), k) }

// malformedQuery is the 400 of the query string raw, which does not parse,
// with message: its reason "malformed_query", and its target the first
// parameter whose name or value does not decode (a stray "%" in a $filter
// is the $filter's fault), named only when its name decodes and may not
// hold a token; the position is the character of the decoded value,
// counted from 1, where it stops decoding.
func malformedQuery(raw, message string) *failure.Error {
	e := &failure.Error{Code: failure.Invalid, Reason: "malformed_query", Message: message}
	for pair := range strings.SplitSeq(raw, "&") {
		rawName, rawValue, _ := strings.Cut(pair, "=")
		name, nameErr := url.QueryUnescape(rawName)
		_, valueErr := url.QueryUnescape(rawValue)
		if nameErr == nil && valueErr == nil && !strings.Contains(pair, ";") {
			continue
		}
		if nameErr == nil && len(name) <= 64 && !auth.MayHoldToken(name) {
			e.Target = name
			if i := badEscape(rawValue); i >= 0 {
				before, _ := url.QueryUnescape(rawValue[:i])
				e.Position = utf8.RuneCountInString(before) + 1
			}
		}
		break
	}
	return e
}

// badEscape returns the byte offset in s of its first "%" that does not
// start a percent-encoded byte, or of its first ";", or -1.
func badEscape(s string) int {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case ';':
			return i
		case '%':
			if i+2 >= len(s) || !ishex(s[i+1]) || !ishex(s[i+2]) {
				return i
			}
		}
	}
	return -1
}

func ishex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}
