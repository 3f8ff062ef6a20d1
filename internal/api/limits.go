package api

import (
	"context"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/informe/informe/auth"
	"github.com/informe/informe/export"
	"github.com/informe/informe/internal/failure"
	"github.com/informe/informe/internal/postgres"
)

// Limits bound the work the API takes on at once, so that a burst of big
// requests is refused clearly rather than served slowly to everyone. The
// zero value limits nothing.
type Limits struct {
	// AcquireTimeout is how long a request waits for a pool connection
	// before it is answered 503 with Retry-After; 0 waits as long as the
	// request lasts.
	AcquireTimeout time.Duration
	// StatementTimeout bounds each database statement of a request
	// (PostgreSQL's statement_timeout, set per transaction); 0 leaves the
	// server's setting.
	StatementTimeout time.Duration
	// RequestTimeout bounds the database side of a request, from its
	// arrival to its last row (delivery to a slow client is bounded by the
	// spool's no-progress cut instead); 0 is no bound.
	RequestTimeout time.Duration
	// Exports is how many big responses (whole exports, pages of more than
	// [SmallRows] rows, every XLSX) are produced at once; 0 is no limit.
	// Keep it below the pool size so that small requests (/users, small
	// pages, authentication) always find a connection.
	Exports int
	// TokenExports is how many of the Exports turns one token holds at
	// once, its exports' parts included, unless the token has a limit of
	// its own (auth.Principal.MaxExports); 0 is no limit but Exports.
	// Waiting requests are given turns in turn by token whatever it is.
	TokenExports int
	// ExportQueue is how many big requests may wait for a turn; past it
	// they are answered 503 with Retry-After at once (429 for a token
	// past its own limit), unless the token with the most requests has a
	// request waiting whose place they take (see [turns]).
	ExportQueue int
	// ExportWait is how long a big request waits for its turn at most.
	ExportWait time.Duration
	// ExportParts is how many connections an unfiltered whole export may
	// read through at once, in one snapshot; 0 and 1 read
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

// turns hands out the turns of big responses, n at once, shared by token:
// a free turn goes to the token with a request waiting that holds the
// fewest turns, and among those to the one given a turn longest ago (one
// never given one first), so a token with one request waiting gets the
// next free turn whatever another token has queued. A token holds at most
// its own limit of turns, its requests' parts included; past it, its
// requests wait in its own queue. At most queue requests wait in all;
// when that is full, a new request takes the place of the last waiting
// request of the token with the most requests running and waiting, if
// that is more than its own token would have with it, and is refused
// otherwise.
type turns struct {
	n, queue int
	wait     time.Duration
	perToken int // a token's limit unless it has its own; 0 is none
	// queued is called as a request starts waiting, and the func it
	// returns as it stops; nil calls nothing.
	queued func() func()

	mu      sync.Mutex
	held    int                // turns held, parts included
	waiting int                // requests waiting, of all tokens
	seq     uint64             // counts holders made and turns given
	tokens  map[string]*holder // the tokens holding or waiting for turns
}

// holder is what turns knows of one token while it holds or waits for
// turns: never more than its name, which no metric shows.
type holder struct {
	name    string
	limit   int // 0 is none
	held    int
	made    uint64 // when it was made
	served  uint64 // when it was last given a turn, 0 never
	waiters []*waiter
}

// waiter is a request waiting for a turn: got receives nil when it is
// given one, or its refusal when a request of another token takes its
// place.
type waiter struct{ got chan error }

func newTurns(l Limits) *turns {
	if l.Exports <= 0 {
		return nil
	}
	return &turns{n: l.Exports, queue: l.ExportQueue, wait: l.ExportWait, perToken: l.TokenExports,
		tokens: map[string]*holder{}}
}

var (
	errExportsBusy = failure.Errorf(failure.Busy,
		"Service Unavailable: too many exports are running; try again shortly, or ask for fewer rows or columns")
	errTokenBusy = failure.Errorf(failure.TooMany,
		"Too Many Requests: this token has as many exports running and waiting as it may; try again when some have ended")
)

// full reports whether h may take no more turns now.
func (h *holder) full() bool { return h.limit > 0 && h.held >= h.limit }

// inFlight is how many big requests h has running or waiting.
func (h *holder) inFlight() int { return h.held + len(h.waiters) }

// refusal is the answer to a request of h refused while ahead requests of
// its token wait before it: 429 when its token already has its limit of
// turns held or asked for before it, 503 otherwise.
func (h *holder) refusal(ahead int) error {
	if h.limit > 0 && h.held+ahead >= h.limit {
		return errTokenBusy
	}
	return errExportsBusy
}

// holderOf returns the holder of token, made if it has none, with its
// limit: its own (limit), or the default when limit is nil.
func (t *turns) holderOf(token string, limit *int) *holder {
	h := t.tokens[token]
	if h == nil {
		t.seq++
		h = &holder{name: token, made: t.seq}
		t.tokens[token] = h
	}
	h.limit = t.perToken
	if limit != nil {
		h.limit = *limit
	}
	return h
}

// forget drops h once it holds and awaits nothing.
func (t *turns) forget(h *holder) {
	if h.held == 0 && len(h.waiters) == 0 {
		delete(t.tokens, h.name)
	}
}

// before reports whether h comes before g for a free turn.
func (h *holder) before(g *holder) bool {
	if h.held != g.held {
		return h.held < g.held
	}
	if h.served != g.served {
		return h.served < g.served
	}
	return h.made < g.made
}

// dispatch gives the free turns to the waiting requests, in turn by
// token; t.mu is held.
func (t *turns) dispatch() {
	for t.held < t.n {
		var next *holder
		for _, h := range t.tokens {
			if len(h.waiters) > 0 && !h.full() && (next == nil || h.before(next)) {
				next = h
			}
		}
		if next == nil {
			return
		}
		w := next.waiters[0]
		next.waiters = slices.Delete(next.waiters, 0, 1)
		t.waiting--
		t.grant(next, 1)
		w.got <- nil
	}
}

// grant gives h k turns; t.mu is held.
func (t *turns) grant(h *holder, k int) {
	t.held += k
	h.held += k
	t.seq++
	h.served = t.seq
}

// give gives back k turns of h.
func (t *turns) give(h *holder, k int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.held -= k
	h.held -= k
	t.dispatch()
	t.forget(h)
}

// makeRoom makes room in a full queue for a request of h, refusing the
// last waiting request of the token with the most requests in flight if
// that is more than h would have; it reports whether it did. t.mu is held.
func (t *turns) makeRoom(h *holder) bool {
	var most *holder
	for _, g := range t.tokens {
		if len(g.waiters) > 0 && (most == nil || g.inFlight() > most.inFlight() ||
			g.inFlight() == most.inFlight() && g.made > most.made) {
			most = g
		}
	}
	if most == nil || most.inFlight() <= h.inFlight()+1 {
		return false
	}
	last := len(most.waiters) - 1
	w := most.waiters[last]
	most.waiters = most.waiters[:last]
	t.waiting--
	w.got <- most.refusal(last)
	return true
}

// take waits for a turn of token, whose own limit is limit (nil: the
// default), and returns the func that gives it back and whether the
// request waited. It fails with failure.Busy or failure.TooMany
// (see [holder.refusal]) when the queue is full, or the wait over, or a
// request of another token took its place, and with ctx's error when ctx
// ends first.
func (t *turns) take(ctx context.Context, token string, limit *int) (func(), bool, error) {
	if t == nil {
		return func() {}, false, nil
	}
	t.mu.Lock()
	h := t.holderOf(token, limit)
	if t.held < t.n && len(h.waiters) == 0 && !h.full() {
		t.grant(h, 1)
		t.mu.Unlock()
		return func() { t.give(h, 1) }, false, nil
	}
	if t.waiting >= t.queue && !t.makeRoom(h) {
		err := h.refusal(len(h.waiters))
		t.forget(h)
		t.mu.Unlock()
		return nil, false, err
	}
	w := &waiter{got: make(chan error, 1)}
	h.waiters = append(h.waiters, w)
	t.waiting++
	t.dispatch() // a token's limit may have changed
	t.mu.Unlock()
	if t.queued != nil {
		defer t.queued()()
	}

	var timeout <-chan time.Time
	if t.wait > 0 {
		timer := time.NewTimer(t.wait)
		defer timer.Stop()
		timeout = timer.C
	}
	var cause error // why the request stops waiting; nil: the wait is over
	select {
	case err := <-w.got:
		if err != nil {
			return nil, true, err
		}
		return func() { t.give(h, 1) }, true, nil
	case <-timeout:
	case <-ctx.Done():
		cause = ctx.Err()
	}
	t.mu.Lock()
	if i := slices.Index(h.waiters, w); i >= 0 {
		err := cause
		if err == nil {
			err = h.refusal(i)
		}
		h.waiters = slices.Delete(h.waiters, i, i+1)
		t.waiting--
		t.forget(h)
		t.mu.Unlock()
		return nil, true, err
	}
	t.mu.Unlock()
	// Given a turn, or refused, as the wait ended.
	if err := <-w.got; err != nil {
		return nil, true, err
	}
	if cause != nil {
		t.give(h, 1)
		return nil, true, cause
	}
	return func() { t.give(h, 1) }, true, nil
}

// tryTake takes for token (limit: its own limit, nil for the default) up
// to k more turns that are free now and that no waiting request can take,
// within the token's limit, without waiting, and returns how many it took;
// [turns.giveBack] returns them. The token must hold a turn already.
func (t *turns) tryTake(token string, limit *int, k int) int {
	if t == nil {
		return k
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	h := t.holderOf(token, limit)
	k = min(k, t.n-t.held)
	if h.limit > 0 {
		k = min(k, h.limit-h.held)
	}
	if k <= 0 {
		return 0
	}
	t.held += k
	h.held += k
	return k
}

// giveBack gives back k turns of token's tryTake.
func (t *turns) giveBack(token string, k int) {
	if t == nil || k == 0 {
		return
	}
	t.mu.Lock()
	h := t.tokens[token]
	t.mu.Unlock()
	t.give(h, k)
}

// big reports whether a response of rows rows (negative: all there are)
// in format f counts as big.
func big(rows int64, f export.Format) bool {
	return rows < 0 || rows > SmallRows || f == export.XLSX
}

// admit prepares the request's context for the database side, and, for a
// big response, waits for its token's turn. The returned func ends the
// turn; call it when the last row has been read. Only its first call
// counts: handlers both defer it and hand it to the cursor's Close, and a
// turn given back twice would take another request's turn.
func (s *Server) admit(ctx context.Context, isBig bool) (context.Context, func(), error) {
	if s.Limits.AcquireTimeout > 0 {
		ctx = postgres.WithAcquireTimeout(ctx, s.Limits.AcquireTimeout)
	}
	if s.Limits.StatementTimeout > 0 {
		ctx = postgres.WithStatementTimeout(ctx, s.Limits.StatementTimeout)
	}
	done := func() {}
	if !isBig {
		done = s.share.smallStarts()
	}
	if isBig && s.turns != nil {
		token, limit := turnsOf(ctx)
		start := time.Now()
		var waited bool
		var err error
		done, waited, err = s.turns.take(ctx, token, limit)
		switch failure.CodeOf(err) {
		case failure.Internal: // nil, or ctx's error
			if err == nil {
				s.Metrics.Turn(waited, time.Since(start))
			}
		case failure.Busy:
			s.Metrics.Refused("exports_busy")
		case failure.TooMany:
			s.Metrics.Refused("token_busy")
		}
		if err != nil {
			return ctx, nil, err
		}
		if r, ok := ctx.Value(requestKey{}).(*request); ok {
			sl, turn := s.share.bigStarts(token), done
			r.slot = sl
			done = func() { sl.give(); turn() }
		}
	}
	if s.Limits.RequestTimeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, s.Limits.RequestTimeout, failure.ErrRequestTimeout)
		turn := done
		done = func() { cancel(); turn() }
	}
	return ctx, sync.OnceFunc(done), nil
}

// turnsOf returns whose turns a request of ctx takes: its token's name
// and own limit (nil: the default). A request with no principal takes
// the turns of "".
func turnsOf(ctx context.Context) (string, *int) {
	if r, ok := ctx.Value(requestKey{}).(*request); ok && r.principal != nil {
		return r.principal.Name, r.principal.MaxExports
	}
	return "", nil
}

// moreTurns takes up to k more turns for the parts of a request of ctx
// that holds one, those free now that no waiting request can take, and
// returns how many it took; [Server.fewerTurns] gives them back.
func (s *Server) moreTurns(ctx context.Context, k int) int {
	token, limit := turnsOf(ctx)
	return s.turns.tryTake(token, limit, k)
}

// fewerTurns gives back k turns of [Server.moreTurns].
func (s *Server) fewerTurns(ctx context.Context, k int) {
	token, _ := turnsOf(ctx)
	s.turns.giveBack(token, k)
}

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
