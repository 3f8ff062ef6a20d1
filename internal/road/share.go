package road

import (
	"sync"
	"time"
)

// share divides the machine between the big responses that hold turns
// ([turns]) and between them and small requests, at the boundaries of the
// chunks of rows a big response encodes ([ShareChunk] rows):
//
//   - At most slots big responses encode at once. A slot that comes free
//     goes to a waiting response of the token that holds the fewest slots,
//     and among those to the one given a slot longest ago: two tokens with
//     responses waiting encode in turn whatever either has running, so that
//     a token running many exports takes no more of the cores than one
//     running one.
//   - While small requests (pages of up to a thousand rows, counts, key
//     lookups, /users) are being answered, a big response gives up its
//     slot at its next chunk and waits until none is, at most pause, so
//     that small requests keep their latency beside exports and an export
//     still moves on under a stream of small ones.
//
// It shares PostgreSQL's cores only as far as a big response's backend
// stops when informe stops reading it, which is once the connection's
// socket buffers are full: megabytes on loopback, so a short export's
// backend runs ahead. A nil share shares nothing: every method is then a
// no-op.
type share struct {
	slots int
	pause time.Duration

	mu      sync.Mutex
	held    int                // slots held
	chunks  uint64             // chunks ended by the slots' holders
	waiting int                // responses waiting for a slot
	small   int                // small requests in flight
	idle    chan struct{}      // closed when small falls to 0
	seq     uint64             // counts slots given
	tokens  map[string]*sharer // tokens holding or waiting for slots
}

// ShareChunk is how many rows a big response encodes between its turns.
const ShareChunk = 256

// sharePause is the longest a big response waits, at a chunk, for a slot
// or for small requests to end.
const sharePause = 20 * time.Millisecond

// sharer is one token's place in share, while it holds or waits for
// slots.
type sharer struct {
	held    int
	served  uint64 // when last given a slot
	waiters []chan struct{}
}

func newShare(slots int, pause time.Duration) *share {
	if slots <= 0 {
		return nil
	}
	return &share{slots: slots, pause: pause, tokens: map[string]*sharer{}, idle: make(chan struct{})}
}

// smallStarts counts a small request in flight; the func it returns counts
// it out, once.
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

// slot is one big response's place in share: it holds a slot between
// [slot.take] and [slot.give], and yields it at each chunk.
type slot struct {
	s     *share
	token string
	has   bool
}

// bigStarts returns the slot of a big response of token.
func (s *share) bigStarts(token string) *slot {
	if s == nil {
		return nil
	}
	return &slot{s: s, token: token}
}

// take waits for a slot, given in turn by token, while the slots' holders
// move on: when none has ended a chunk for s.pause (each waits on its
// database, or on a client the spool can hold no more for), it encodes its
// chunk without one.
func (sl *slot) take() {
	if sl == nil || sl.has {
		return
	}
	s := sl.s
	s.mu.Lock()
	h := s.tokens[sl.token]
	if h == nil {
		h = &sharer{}
		s.tokens[sl.token] = h
	}
	if s.held < s.slots && s.waiting == 0 {
		s.grant(h)
		s.mu.Unlock()
		sl.has = true
		return
	}
	got := make(chan struct{})
	h.waiters = append(h.waiters, got)
	s.waiting++
	s.dispatch()
	seen := s.chunks
	s.mu.Unlock()
	t := time.NewTimer(s.pause)
	defer t.Stop()
	for {
		select {
		case <-got:
			sl.has = true
			return
		case <-t.C:
		}
		s.mu.Lock()
		select {
		case <-got: // given as the wait ended
			s.mu.Unlock()
			sl.has = true
			return
		default:
		}
		if s.chunks == seen {
			break // the holders are stuck
		}
		seen = s.chunks
		s.mu.Unlock()
		t.Reset(s.pause)
	}
	defer s.mu.Unlock()
	for i, w := range h.waiters {
		if w == got {
			h.waiters = append(h.waiters[:i:i], h.waiters[i+1:]...)
			break
		}
	}
	s.waiting--
	if h.held == 0 && len(h.waiters) == 0 {
		delete(s.tokens, sl.token)
	}
}

// give gives the slot back, if held.
func (sl *slot) give() {
	if sl == nil || !sl.has {
		return
	}
	sl.has = false
	s := sl.s
	s.mu.Lock()
	defer s.mu.Unlock()
	h := s.tokens[sl.token]
	s.held--
	h.held--
	s.dispatch()
	if h.held == 0 && len(h.waiters) == 0 {
		delete(s.tokens, sl.token)
	}
}

// yield is the boundary of a chunk: the slot goes to a response waiting
// for one, or waits out the small requests in flight (at most pause),
// then is taken again.
func (sl *slot) yield() {
	if sl == nil {
		return
	}
	s := sl.s
	s.mu.Lock()
	if sl.has {
		s.chunks++
	}
	busy, small, idle := sl.has && s.owed(sl.token), s.small > 0, s.idle
	s.mu.Unlock()
	if sl.has && !busy && !small {
		return
	}
	sl.give()
	if small {
		t := time.NewTimer(s.pause)
		select {
		case <-idle:
		case <-t.C:
		}
		t.Stop()
	}
	sl.take()
}

// owed reports whether a holder of token owes its slot to a waiting
// response: one of its own token's (which take turns), or of a token
// holding fewer slots. s.mu is held.
func (s *share) owed(token string) bool {
	if s.waiting == 0 {
		return false
	}
	mine := s.tokens[token]
	for _, h := range s.tokens {
		if len(h.waiters) > 0 && (h == mine || h.held < mine.held) {
			return true
		}
	}
	return false
}

// grant gives h a slot; s.mu is held.
func (s *share) grant(h *sharer) {
	s.held++
	h.held++
	s.seq++
	h.served = s.seq
}

// dispatch gives the free slots to waiting responses, in turn by token;
// s.mu is held.
func (s *share) dispatch() {
	for s.held < s.slots && s.waiting > 0 {
		var next *sharer
		for _, h := range s.tokens {
			if len(h.waiters) > 0 && (next == nil || h.held < next.held || h.held == next.held && h.served < next.served) {
				next = h
			}
		}
		got := next.waiters[0]
		next.waiters = next.waiters[1:]
		s.waiting--
		s.grant(next)
		close(got)
	}
}
