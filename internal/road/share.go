package road

import (
	"sync"
	"time"
)

// share divides the machine between the big responses that hold turns
// ([turns]), and between them and small requests, at the boundaries of
// the chunks of rows a big response encodes ([ShareChunk] rows). A big
// response enters it as its turn is given, so that the statements it
// runs before its first row (a count, the query's own start) are shared
// too.
//
//   - At most slots big responses work at once. A slot that comes free
//     goes to a waiting response of the token that holds the fewest slots,
//     and among those to the one given a slot longest ago, so that a token
//     running many exports takes no more of the cores than one running
//     one.
//   - A token with big requests waiting for a turn (a burst) gives way to
//     the tokens with none waiting: while one of those holds or waits for
//     a slot, the burst's responses give up their slots at their next
//     chunk and are given none, and encode one chunk in every
//     [sharePauses].Outranked. A token sending its requests one at a time
//     keeps its pace beside another's burst, and the burst still moves on.
//   - A response waiting for a slot, unless a burst's, goes on without
//     one when a holder has ended no chunk for [sharePauses].Stuck: it
//     waits on its database (a sort, before its first row), or on a
//     client the spool can hold no more for.
//   - While small requests (pages of up to a thousand rows, counts, key
//     lookups, /users) are being answered, and for [sharePauses].Linger
//     after the last ends (a client sending small requests one after
//     another sends its next in that moment), a big response gives up its
//     slot at its next chunk and waits, at most [sharePauses].Small, so
//     that small requests keep their latency beside exports and an export
//     still moves on under a stream of small ones.
//
// It shares PostgreSQL's cores only as far as a big response's backend
// stops when informe stops reading it, which, for rows read in one
// statement, is once the connection's socket buffers are full: megabytes
// on loopback. So a burst with company reads its rows in batches
// ([BurstBatch], see [Admission.Admit]). A nil share shares nothing: every method is then a
// no-op.
type share struct {
	slots int
	pause sharePauses
	// queueing reports whether token has big requests waiting for a turn;
	// nil: no token has.
	queueing func(token string) bool
	// waited is told of each wait and its reason: "burst" (outranked),
	// "small" or "turn"; nil tells nothing.
	waited func(reason string, d time.Duration)

	mu      sync.Mutex
	held    int                 // slots held
	moved   map[*slot]time.Time // the holders, and when each took its slot or last ended a chunk
	waiting int                 // responses waiting for a slot
	small   int                 // small requests in flight
	idle    chan struct{}       // closed when small falls to 0
	seq     uint64              // counts slots given
	tokens  map[string]*sharer  // tokens holding or waiting for slots
	// recent are the two tokens that last started or ended a request,
	// the latest first, and when.
	recent [2]seen
}

// seen is a token's request seen starting or ending.
type seen struct {
	token string
	at    time.Time
}

// ShareChunk is how many rows a big response encodes between its turns.
const ShareChunk = 256

// sharePauses are how long share's waits last.
type sharePauses struct {
	// Stuck: a response waiting for a slot goes on without one when a
	// holder has ended no chunk for this long (see [share]).
	Stuck time.Duration
	// Outranked: the longest a burst's response waits for a slot at a
	// chunk while a token without a queue holds or waits for one.
	Outranked time.Duration
	// Small: the longest a big response waits at a chunk for the small
	// requests in flight to end.
	Small time.Duration
	// Linger: how long a big response waits on after the last small
	// request ends, for the next one of a client that sends them one after
	// another (within Small).
	Linger time.Duration
	// Company: how long after another token's last request started or
	// ended a token is not alone (see [share.company]).
	Company time.Duration
}

// defaultPauses are informe's: a burst encodes at least one chunk (256
// rows) in 50 ms beside another token's export, and a big response one in
// 50 ms under a stream of small requests.
var defaultPauses = sharePauses{Stuck: 20 * time.Millisecond, Outranked: 50 * time.Millisecond,
	Small: 50 * time.Millisecond, Linger: 3 * time.Millisecond, Company: time.Second}

// sharer is one token's place in share, while it holds or waits for
// slots.
type sharer struct {
	held     int
	starting int    // responses entered that have not ended a chunk yet
	served   uint64 // when last given a slot
	waiters  []slotWaiter
}

// idle reports whether h holds, waits for and starts nothing, and may be
// forgotten.
func (h *sharer) idle() bool { return h.held == 0 && h.starting == 0 && len(h.waiters) == 0 }

func newShare(slots int, pause sharePauses) *share {
	if slots <= 0 {
		return nil
	}
	return &share{slots: slots, pause: pause, tokens: map[string]*sharer{}, moved: map[*slot]time.Time{},
		idle: make(chan struct{})}
}

// smallStarts counts a small request in flight; the func it returns
// counts it out, once.
func (s *share) smallStarts() func() {
	if s == nil {
		return func() {}
	}
	s.mu.Lock()
	s.small++
	s.mu.Unlock()
	return sync.OnceFunc(func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.small--; s.small == 0 {
			close(s.idle)
			s.idle = make(chan struct{})
		}
	})
}

// met notes a request of token's, small or big, starting or ending now.
func (s *share) met(token string) {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.recent[0].token != token {
		s.recent[1] = s.recent[0]
	}
	s.recent[0] = seen{token: token, at: time.Now()}
}

// company reports whether a token other than token holds or waits for a
// slot, or started or ended a request within s.pause.Company: a burst of
// token's then has someone to give way to. A nil share keeps no company.
func (s *share) company(token string) bool {
	if s == nil {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for name := range s.tokens {
		if name != token {
			return true
		}
	}
	for _, r := range s.recent {
		if r.token != token && !r.at.IsZero() && time.Since(r.at) < s.pause.Company {
			return true
		}
	}
	return false
}

// slotWaiter is a response waiting for a slot: got is closed when it is
// given one.
type slotWaiter struct {
	sl  *slot
	got chan struct{}
}

// slot is one big response's place in share: it holds a slot between
// [slot.take] and [slot.give], and yields it at each chunk.
type slot struct {
	s        *share
	token    string
	has      bool
	starting bool // entered, before its first chunk
}

// bigStarts returns the slot of a big response of token.
func (s *share) bigStarts(token string) *slot {
	if s == nil {
		return nil
	}
	return &slot{s: s, token: token}
}

// take waits for a slot, given in turn by token, while the slots' holders
// move on (see [share]).
func (sl *slot) take() {
	if sl == nil || sl.has {
		return
	}
	s := sl.s
	s.mu.Lock()
	h := s.sharerOf(sl.token)
	outranked := s.outranked(sl.token, s.queues())
	if s.held < s.slots && s.waiting == 0 && !outranked {
		s.grant(h, sl)
		s.mu.Unlock()
		sl.has = true
		return
	}
	got := make(chan struct{})
	h.waiters = append(h.waiters, slotWaiter{sl, got})
	s.waiting++
	s.dispatch()
	reason := "turn"
	if outranked {
		reason = "burst"
	}
	s.mu.Unlock()
	defer s.report(reason, time.Now())
	stuck, floor := time.NewTimer(s.pause.Stuck), time.NewTimer(s.pause.Outranked)
	defer stuck.Stop()
	defer floor.Stop()
	for {
		ticked := false // the stuck timer, not the floor's
		select {
		case <-got:
			sl.has = true
			return
		case <-stuck.C:
			ticked = true
		case <-floor.C:
		}
		s.mu.Lock()
		select {
		case <-got: // given as the wait ended
			s.mu.Unlock()
			sl.has = true
			return
		default:
		}
		outranked := s.outranked(sl.token, s.queues())
		if !ticked && outranked {
			break // its chunk of a burst's floor
		}
		if ticked && !outranked && s.stuck() {
			break // a holder is stuck: take its place
		}
		if ticked {
			stuck.Reset(s.pause.Stuck)
		}
		s.mu.Unlock()
	}
	defer s.mu.Unlock()
	for i, w := range h.waiters {
		if w.got == got {
			h.waiters = append(h.waiters[:i:i], h.waiters[i+1:]...)
			break
		}
	}
	s.waiting--
	if h.idle() {
		delete(s.tokens, sl.token)
	}
	s.dispatch()
}

// give gives the slot back, if held, and ends an entered response's
// start.
func (sl *slot) give() {
	if sl == nil || !sl.has && !sl.starting {
		return
	}
	s := sl.s
	s.mu.Lock()
	defer s.mu.Unlock()
	sl.started()
	if sl.has {
		sl.has = false
		h := s.tokens[sl.token]
		delete(s.moved, sl)
		s.held--
		h.held--
		if h.idle() {
			delete(s.tokens, sl.token) // before dispatch: it outranks none now
		}
	}
	s.dispatch()
}

// enter is a big response's entry into the share, as its turn is given:
// it waits as at a chunk (out the small requests in flight, then for a
// slot, which a burst waits for at most its floor), and gives the slot
// back; then, holding none until its first chunk (its database may sort
// for long), it counts as present, so that a burst gives way to it from
// its first statement.
func (sl *slot) enter() {
	if sl == nil {
		return
	}
	sl.yield()
	sl.give()
	s := sl.s
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sharerOf(sl.token).starting++
	sl.starting = true
}

// sharerOf returns token's sharer, made if it has none. s.mu is held.
func (s *share) sharerOf(token string) *sharer {
	h := s.tokens[token]
	if h == nil {
		h = &sharer{}
		s.tokens[token] = h
	}
	return h
}

// started ends the start of an entered response, at its first chunk or
// its end. s.mu is held.
func (sl *slot) started() {
	if !sl.starting {
		return
	}
	sl.starting = false
	h := sl.s.tokens[sl.token]
	h.starting--
	if h.idle() {
		delete(sl.s.tokens, sl.token)
	}
}

// yield is the boundary of a chunk: the slot goes to a response waiting
// for one, or waits out the small requests in flight, then is taken again.
func (sl *slot) yield() {
	if sl == nil {
		return
	}
	s := sl.s
	s.mu.Lock()
	sl.started()
	if sl.has {
		s.moved[sl] = time.Now()
	}
	busy, small := sl.has && s.owed(sl.token), s.small > 0
	s.mu.Unlock()
	if sl.has && !busy && !small {
		return
	}
	sl.give()
	if small {
		s.smallEnd()
	}
	sl.take()
}

// smallEnd waits until no small request is in flight, and none has been
// for s.pause.Linger, at most s.pause.Small.
func (s *share) smallEnd() {
	defer s.report("small", time.Now())
	over := time.NewTimer(s.pause.Small)
	defer over.Stop()
	for {
		s.mu.Lock()
		small, idle := s.small > 0, s.idle
		s.mu.Unlock()
		if small {
			select {
			case <-idle:
			case <-over.C:
				return
			}
		}
		linger := time.NewTimer(s.pause.Linger)
		select {
		case <-linger.C:
		case <-over.C:
			linger.Stop()
			return
		}
		s.mu.Lock()
		small = s.small > 0
		s.mu.Unlock()
		if !small {
			return
		}
	}
}

// owed reports whether a holder of token owes its slot: to a token without
// a queue holding or waiting for a slot, if token has one, or to a waiting
// response of its own token's (which take turns), or of a token holding
// fewer slots and as queued as token. s.mu is held.
func (s *share) owed(token string) bool {
	if len(s.tokens) == 1 && s.waiting == 0 {
		return false
	}
	q := s.queues()
	if s.outranked(token, q) {
		return true
	}
	mine := s.tokens[token]
	for name, h := range s.tokens {
		if len(h.waiters) > 0 && (h == mine || q[name] == q[token] && h.held < mine.held) {
			return true
		}
	}
	return false
}

// queues returns which tokens holding, waiting for or starting slots have big
// requests waiting for a turn; nil when one token holds or waits. s.mu is
// held.
func (s *share) queues() map[string]bool {
	if s.queueing == nil || len(s.tokens) < 2 {
		return nil
	}
	q := make(map[string]bool, len(s.tokens))
	for name := range s.tokens {
		q[name] = s.queueing(name)
	}
	return q
}

// outranked reports whether token has a queue (q) and a token without one
// holds, waits for or starts a slot. s.mu is held.
func (s *share) outranked(token string, q map[string]bool) bool {
	if !q[token] {
		return false
	}
	for name := range s.tokens {
		if !q[name] {
			return true
		}
	}
	return false
}

// report tells s.waited of a wait for reason that began then.
func (s *share) report(reason string, began time.Time) {
	if s.waited != nil {
		s.waited(reason, time.Since(began))
	}
}

// stuck reports whether a holder has ended no chunk for s.pause.Stuck
// since it took its slot: it waits on its database (a sort, before its
// first row) or on a client the spool can hold no more for. s.mu is held.
func (s *share) stuck() bool {
	now := time.Now()
	for _, t := range s.moved {
		if now.Sub(t) >= s.pause.Stuck {
			return true
		}
	}
	return false
}

// grant gives h a slot; s.mu is held.
func (s *share) grant(h *sharer, sl *slot) {
	s.moved[sl] = time.Now()
	s.held++
	h.held++
	s.seq++
	h.served = s.seq
}

// dispatch gives the free slots to waiting responses, in turn by token;
// s.mu is held.
func (s *share) dispatch() {
	q := s.queues()
	for s.held < s.slots && s.waiting > 0 {
		var next *sharer
		for name, h := range s.tokens {
			if len(h.waiters) == 0 || s.outranked(name, q) {
				continue
			}
			if next == nil || h.held < next.held || h.held == next.held && h.served < next.served {
				next = h
			}
		}
		if next == nil {
			return // those waiting are outranked
		}
		w := next.waiters[0]
		next.waiters = next.waiters[1:]
		s.waiting--
		s.grant(next, w.sl)
		close(w.got)
	}
}
