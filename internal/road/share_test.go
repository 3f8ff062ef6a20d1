package road

import (
	"testing"
	"time"
)

// waiting waits until n responses wait for a slot of s: the tests start
// each response and know it waits before they go on, so the order of
// everything is theirs, not the scheduler's.
func waiting(t *testing.T, s *share, n int) {
	t.Helper()
	for {
		s.mu.Lock()
		w := s.waiting
		s.mu.Unlock()
		if w == n {
			return
		}
		if w > n {
			t.Fatalf("%d responses wait, want %d", w, n)
		}
		time.Sleep(time.Millisecond)
	}
}

// TestShareByToken checks that a slot that comes free goes to the token
// holding the fewest, the one served longest ago first, and within a
// token to its responses in order; and that a holder gives its slot at a
// chunk only to a response of its own token or of a token holding fewer.
func TestShareByToken(t *testing.T) {
	s := newShare(1, time.Hour) // holders always move on here
	got := make(chan string, 8)
	wait := func(name string, f func()) { go func() { f(); got <- name }() }
	expect := func(name string) {
		t.Helper()
		if g := <-got; g != name {
			t.Fatalf("%s was given the slot, want %s", g, name)
		}
	}

	a1, a2, b := s.bigStarts("A"), s.bigStarts("A"), s.bigStarts("B")
	a1.take()
	wait("a2", a2.take)
	waiting(t, s, 1)
	wait("b", b.take)
	waiting(t, s, 2)
	// A holds the slot and has a response waiting, as B has: A's chunk
	// ends, and B, never served, comes first.
	wait("a1", a1.yield)
	expect("b")
	waiting(t, s, 2) // a2, then a1
	// B holds one slot and A none: B owes it, and A's first waiting
	// response takes it.
	wait("b", b.yield)
	expect("a2")
	waiting(t, s, 2) // a1, then b
	// A was served last: B comes before A's other response.
	a2.give()
	expect("b")
	b.give()
	expect("a1")
	a1.give()
	if s.held != 0 || len(s.tokens) != 0 {
		t.Errorf("after every give: %d held, %d tokens known", s.held, len(s.tokens))
	}

	// Two slots, one each for A and B, and A's second waiting: B's chunk
	// owes nothing (A holds as many as B); A's own response takes A's.
	s = newShare(2, time.Hour)
	a1, a2, b = s.bigStarts("A"), s.bigStarts("A"), s.bigStarts("B")
	a1.take()
	b.take()
	wait("a2", a2.take)
	waiting(t, s, 1)
	b.yield()
	if !b.has {
		t.Fatal("B gave its slot to A, which holds as many")
	}
	wait("a1", a1.yield)
	expect("a2")
	a2.give()
	expect("a1")
	a1.give()
	b.give()
}

// TestShareSmallFirst checks that a big response gives its slot at a
// chunk while small requests are in flight and takes it again when none
// is, and that a stream of small requests holds it up at most the pause.
func TestShareSmallFirst(t *testing.T) {
	s := newShare(1, time.Hour)
	big := s.bigStarts("A")
	big.take()
	done := s.smallStarts()
	yielded := make(chan struct{})
	go func() { big.yield(); close(yielded) }()
	for free := false; !free; time.Sleep(time.Millisecond) {
		s.mu.Lock()
		free = s.held == 0
		s.mu.Unlock()
	}
	select {
	case <-yielded:
		t.Fatal("the big response went on while a small request was in flight")
	default:
	}
	done()
	done() // counted out once
	<-yielded
	if !big.has || s.small != 0 {
		t.Errorf("after the small request: has the slot %v, %d small in flight", big.has, s.small)
	}
	big.give()

	s = newShare(1, 5*time.Millisecond)
	big = s.bigStarts("A")
	big.take()
	_ = s.smallStarts() // never ends
	big.yield()         // returns after the pause
	if !big.has {
		t.Error("after the pause, the big response has no slot")
	}
	big.give()
}

// TestShareStuckHolder checks that a response waits for a slot only while
// its holders move on: one whose holder ends no chunk for the pause goes
// on without a slot, and leaves nothing waiting behind.
func TestShareStuckHolder(t *testing.T) {
	s := newShare(1, 5*time.Millisecond)
	a, b := s.bigStarts("A"), s.bigStarts("B")
	a.take() // and never yields: it waits on its database
	b.take()
	if b.has {
		t.Fatal("B was given the slot A holds")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.waiting != 0 || s.tokens["B"] != nil {
		t.Errorf("after B gave up waiting: %d waiting, B known: %v", s.waiting, s.tokens["B"] != nil)
	}
}

// TestShareNone checks that a server without turns shares nothing.
func TestShareNone(t *testing.T) {
	var s *share
	s.smallStarts()()
	sl := s.bigStarts("A")
	sl.take()
	sl.yield()
	sl.give()
}

// BenchmarkShareYield measures a chunk's boundary when no other response
// waits and no small request is in flight: what sharing costs a lone
// export every ShareChunk rows.
func BenchmarkShareYield(b *testing.B) {
	s := newShare(2, sharePause)
	sl := s.bigStarts("A")
	sl.take()
	for b.Loop() {
		sl.yield()
	}
	sl.give()
}
