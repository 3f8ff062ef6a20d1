package road

import (
	"sync"
	"testing"
	"time"
)

// pausesAll returns pauses of d each (Linger: none).
func pausesAll(d time.Duration) sharePauses {
	return sharePauses{Stuck: d, Outranked: d, Small: d}
}

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
	s := newShare(1, pausesAll(time.Hour)) // holders always move on here
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
	s = newShare(2, pausesAll(time.Hour))
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
	s := newShare(1, pausesAll(time.Hour))
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

	s = newShare(1, pausesAll(5*time.Millisecond))
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
	s := newShare(1, pausesAll(5*time.Millisecond))
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

// TestShareStuckBesideMoving checks that one stuck holder (a sort before
// its first row) is enough for a waiting response to go on without a
// slot, though the other holder moves on.
func TestShareStuckBesideMoving(t *testing.T) {
	s := newShare(2, sharePauses{Stuck: 5 * time.Millisecond, Outranked: time.Hour, Small: time.Hour})
	sorting, moving, next := s.bigStarts("A"), s.bigStarts("B"), s.bigStarts("A")
	sorting.take()
	moving.take()
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-stop:
				return
			default:
				moving.yield()
			}
		}
	}()
	next.take() // returns once sorting is seen stuck
	close(stop)
	<-done
	if next.has {
		t.Error("A's second response was given a slot that two others hold")
	}
	sorting.give()
	moving.give()
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
	s := newShare(2, defaultPauses)
	sl := s.bigStarts("A")
	sl.take()
	for b.Loop() {
		sl.yield()
	}
	sl.give()
}

// TestShareBurstGivesWay checks that a token with requests waiting for a
// turn (a burst) gives its slots to a token with none at its next chunk,
// is given no free slot while that token holds one, and still encodes a
// chunk once in every Outranked; and that the slots come back to it once
// the other token's response ends.
func TestShareBurstGivesWay(t *testing.T) {
	var mu sync.Mutex
	queued := map[string]bool{"A": true}
	s := newShare(2, sharePauses{Stuck: time.Hour, Outranked: time.Hour, Small: time.Hour})
	s.queueing = func(token string) bool { mu.Lock(); defer mu.Unlock(); return queued[token] }
	got := make(chan string, 8)
	wait := func(name string, f func()) { go func() { f(); got <- name }() }

	a1, a2, b := s.bigStarts("A"), s.bigStarts("A"), s.bigStarts("B")
	a1.take()
	a2.take()
	if !a1.has || !a2.has {
		t.Fatal("A alone was not given both slots")
	}
	wait("b", b.take)
	waiting(t, s, 1)
	wait("a1", a1.yield)
	if g := <-got; g != "b" {
		t.Fatalf("%s was given a1's slot, want b", g)
	}
	wait("a2", a2.yield)
	waiting(t, s, 2) // a1 and a2, with one slot free
	s.mu.Lock()
	held := s.held
	s.mu.Unlock()
	if held != 1 {
		t.Fatalf("%d slots held, want B's one: A's burst was given the free slot beside B", held)
	}
	b.yield()
	if !b.has {
		t.Fatal("B gave its slot to A's burst")
	}
	b.give()
	for range 2 {
		<-got
	}
	if !a1.has || !a2.has {
		t.Fatal("A was not given both slots back once B's response ended")
	}

	// A burst's floor: a chunk without a slot after Outranked.
	s.pause.Outranked = 5 * time.Millisecond
	b = s.bigStarts("B")
	wait("b", b.take)
	waiting(t, s, 1)
	a1.yield() // gives a1's slot to B, then waits out the floor
	<-got
	if a1.has {
		t.Fatal("a1 was given a slot while B holds one")
	}
	a2.give()
	b.give()

	// Without a queue, A is as B: B's chunk owes A nothing.
	mu.Lock()
	queued["A"] = false
	mu.Unlock()
	a1.take()
	b = s.bigStarts("B")
	b.take()
	b.yield()
	a1.yield()
	if !a1.has || !b.has {
		t.Fatalf("A holds a slot: %v, B: %v; want both, neither queued", a1.has, b.has)
	}
	a1.give()
	b.give()
	if s.held != 0 || s.waiting != 0 || len(s.tokens) != 0 {
		t.Errorf("after every give: %d held, %d waiting, %d tokens known", s.held, s.waiting, len(s.tokens))
	}
}

// TestShareSmallLinger checks that a big response waits at a chunk until
// no small request has been in flight for Linger: the next of a client
// sending them one after another, starting within it, holds it up too;
// and that Small bounds the whole wait.
func TestShareSmallLinger(t *testing.T) {
	s := newShare(1, sharePauses{Stuck: time.Hour, Outranked: time.Hour, Small: time.Second, Linger: time.Hour})
	big := s.bigStarts("A")
	big.take()
	first := s.smallStarts()
	yielded := make(chan struct{})
	began := time.Now()
	go func() { big.yield(); close(yielded) }()
	for free := false; !free; time.Sleep(time.Millisecond) {
		s.mu.Lock()
		free = s.held == 0
		s.mu.Unlock()
	}
	first()
	next := s.smallStarts() // within the linger
	next()
	select {
	case <-yielded:
		t.Fatal("the big response went on within the linger")
	default:
	}
	<-yielded
	if d := time.Since(began); d < time.Second {
		t.Errorf("the big response went on after %v, within the linger", d)
	}
	if !big.has {
		t.Error("after its wait, the big response has no slot")
	}
	big.give()
}

// TestShareCompany checks when a token has company, so that its burst is
// read in batches: another token's response holding a slot, or another
// token's request met (starting or ending) within the pause's Company,
// never its own.
func TestShareCompany(t *testing.T) {
	t.Parallel()
	p := defaultPauses
	p.Company = time.Hour
	s := newShare(2, p)
	if s.company("a") {
		t.Fatal("company on an idle share")
	}
	s.met("a")
	if s.company("a") || !s.company("b") {
		t.Errorf("a's request met: company(a) %v, company(b) %v; want false, true", s.company("a"), s.company("b"))
	}
	s.met("b")
	if !s.company("a") || !s.company("b") {
		t.Errorf("after a's and b's requests: company(a) %v, company(b) %v; want true, true", s.company("a"), s.company("b"))
	}
	s.met("b")
	if !s.company("b") {
		t.Error("a's request is no longer company for b after b's next")
	}
	s.pause.Company = 0
	if s.company("a") || s.company("b") {
		t.Error("requests past the pause's Company are company")
	}
	sl := s.bigStarts("c")
	sl.take()
	if !s.company("a") || s.company("c") {
		t.Errorf("c's response holding a slot: company(a) %v, company(c) %v; want true, false", s.company("a"), s.company("c"))
	}
	sl.give()
	if s.company("a") {
		t.Error("company after c's response gave its slot back")
	}
	var none *share
	none.met("a")
	if none.company("a") {
		t.Error("a nil share keeps company")
	}
}
