package road

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/informe/informe/internal/failure"
)

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

// queueing reports whether token has big requests waiting for a turn.
func (t *turns) queueing(token string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	h := t.tokens[token]
	return h != nil && len(h.waiters) > 0
}

// others reports whether a token other than token holds or waits for a
// turn.
func (t *turns) others(token string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	for name := range t.tokens {
		if name != token {
			return true
		}
	}
	return false
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
