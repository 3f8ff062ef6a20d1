package road

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/informe/informe/internal/failure"
)

// turnsRun drives a turns: requests are started one at a time, each
// known to wait (or to have its turn) before the next starts, so the
// order of everything is the test's, not the scheduler's.
type turnsRun struct {
	t      *turns
	queued chan struct{}
	got    chan string // the names of the requests given a turn, in order
	ends   map[string]chan error
	mu     sync.Mutex
	gives  map[string]func()
}

func (r *turnsRun) setGive(name string, give func()) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.gives[name] = give
}

func (r *turnsRun) give(name string) {
	r.mu.Lock()
	give := r.gives[name]
	r.mu.Unlock()
	give()
}

func newTurnsRun(l Limits) *turnsRun {
	r := &turnsRun{t: newTurns(l), queued: make(chan struct{}, 100), got: make(chan string, 100),
		ends: map[string]chan error{}, gives: map[string]func(){}}
	r.t.queued = func() func() { r.queued <- struct{}{}; return func() {} }
	return r
}

// ask starts request name of token (limit: its own) and reports, once it
// holds a turn (true) or waits for one (false), which; it fails the test
// if the request is refused.
func (r *turnsRun) ask(tb testing.TB, name, token string, limit *int) bool {
	tb.Helper()
	granted, err := r.start(name, token, limit)
	if err != nil {
		tb.Fatalf("%s: refused: %v", name, err)
	}
	return granted
}

// try starts request name and returns its refusal, nil once it holds a
// turn or waits.
func (r *turnsRun) try(tb testing.TB, name, token string, limit *int) error {
	tb.Helper()
	_, err := r.start(name, token, limit)
	return err
}

// start starts request name of token and returns once it holds a turn
// (true), waits, or is refused (its error).
func (r *turnsRun) start(name, token string, limit *int) (bool, error) {
	end := make(chan error, 1)
	r.ends[name] = end
	gave := make(chan func(), 1)
	go func() {
		give, _, err := r.t.take(context.Background(), token, limit)
		if err != nil {
			end <- err
			return
		}
		gave <- give
	}()
	select {
	case <-r.queued:
		go func() { r.setGive(name, <-gave); r.got <- name }()
		return false, nil
	case err := <-end:
		return false, err
	case give := <-gave:
		r.setGive(name, give)
		return true, nil
	}
}

// release gives back the turn of name and returns who got it next, ""
// for none.
func (r *turnsRun) release(tb testing.TB, name string) string {
	tb.Helper()
	r.t.mu.Lock()
	before := r.t.held
	r.t.mu.Unlock()
	r.give(name)
	r.t.mu.Lock()
	after := r.t.held
	r.t.mu.Unlock()
	if after < before {
		return ""
	}
	return <-r.got
}

func intp(n int) *int { return &n }

func TestTurnsByToken(t *testing.T) {
	t.Parallel()
	t.Run("NextTurnToAnotherToken", func(t *testing.T) {
		r := newTurnsRun(Limits{Exports: 1, ExportQueue: 16})
		r.ask(t, "a1", "A", nil)
		for _, name := range []string{"a2", "a3", "a4"} {
			if r.ask(t, name, "A", nil) {
				t.Fatalf("%s got a turn while a1 held the only one", name)
			}
		}
		r.ask(t, "b1", "B", nil)
		var order []string
		for who := "a1"; ; {
			next := r.release(t, who)
			if next == "" {
				break
			}
			order = append(order, next)
			who = next
		}
		if got, want := order, []string{"b1", "a2", "a3", "a4"}; !equal(got, want) {
			t.Errorf("turns given in order %v, want %v", got, want)
		}
	})
	t.Run("FewestTurnsFirst", func(t *testing.T) {
		// A holds two turns, B one; B's ends: the free turn goes to B's
		// waiting request though A's waited longer.
		r := newTurnsRun(Limits{Exports: 3, ExportQueue: 16})
		r.ask(t, "a1", "A", nil)
		r.ask(t, "a2", "A", nil)
		r.ask(t, "b1", "B", nil)
		r.ask(t, "a3", "A", nil)
		r.ask(t, "b2", "B", nil)
		if got, want := r.release(t, "b1"), "b2"; got != want {
			t.Errorf("the free turn went to %q, want %q", got, want)
		}
	})
	t.Run("OwnLimit", func(t *testing.T) {
		r := newTurnsRun(Limits{Exports: 4, ExportQueue: 16, TokenExports: 1})
		r.ask(t, "a1", "A", nil)
		if r.ask(t, "a2", "A", nil) {
			t.Fatal("a2 got a turn past A's limit")
		}
		if !r.ask(t, "b1", "B", nil) {
			t.Fatal("b1 waits, within B's limit with turns free")
		}
		// C's own limit, 0: none but Exports.
		if !r.ask(t, "c1", "C", intp(0)) || !r.ask(t, "c2", "C", intp(0)) {
			t.Fatal("C, with no limit of its own, waits with turns free")
		}
		if got := r.t.tryTake("A", nil, 3); got != 0 {
			t.Errorf("A at its limit took %d more turns for parts", got)
		}
		if got, want := r.release(t, "a1"), "a2"; got != want {
			t.Errorf("A's freed turn went to %q, want %q", got, want)
		}
	})
	t.Run("Parts", func(t *testing.T) {
		r := newTurnsRun(Limits{Exports: 4, ExportQueue: 16, TokenExports: 2})
		r.ask(t, "a1", "A", nil)
		if got, want := r.t.tryTake("A", nil, 3), 1; got != want {
			t.Errorf("A took %d turns for parts, want %d (its limit)", got, want)
		}
		r.ask(t, "b1", "B", nil)
		if got, want := r.t.tryTake("B", nil, 3), 1; got != want {
			t.Errorf("B took %d turns for parts, want %d (the turns left)", got, want)
		}
		r.ask(t, "c1", "C", nil)
		if got := r.t.tryTake("C", nil, 1); got != 0 {
			t.Errorf("C took %d turns for parts with a request of its own waiting", got)
		}
		r.t.giveBack("A", 1)
		if got, want := <-r.got, "c1"; got != want {
			t.Errorf("A's part's turn went to %q, want %q", got, want)
		}
	})
	t.Run("FullQueue", func(t *testing.T) {
		r := newTurnsRun(Limits{Exports: 1, ExportQueue: 2, TokenExports: 1})
		r.ask(t, "a1", "A", nil)
		r.ask(t, "a2", "A", nil)
		r.ask(t, "a3", "A", nil)
		// The queue is full of A's: B's request takes a3's place.
		r.ask(t, "b1", "B", nil)
		wantRefused(t, <-r.ends["a3"], failure.TooMany)
		// A's next request finds no place of another token's to take.
		wantRefused(t, r.try(t, "a4", "A", nil), failure.TooMany)
		// C's takes a2's: A has the most in flight.
		r.ask(t, "c1", "C", nil)
		wantRefused(t, <-r.ends["a2"], failure.TooMany)
		// D's finds B and C with one waiting each: no place to take, and
		// D is within its limit.
		wantRefused(t, r.try(t, "d1", "D", nil), failure.Busy)
		if got, want := r.release(t, "a1"), "b1"; got != want {
			t.Errorf("the free turn went to %q, want %q", got, want)
		}
		if got, want := r.release(t, "b1"), "c1"; got != want {
			t.Errorf("the free turn went to %q, want %q", got, want)
		}
	})
	t.Run("NoLimitOfItsOwn", func(t *testing.T) {
		r := newTurnsRun(Limits{Exports: 1})
		r.ask(t, "a1", "A", nil)
		wantRefused(t, r.try(t, "a2", "A", nil), failure.Busy)
	})
	t.Run("WaitOver", func(t *testing.T) {
		r := newTurnsRun(Limits{Exports: 1, ExportQueue: 4, ExportWait: 1, TokenExports: 1})
		r.ask(t, "a1", "A", nil)
		r.ask(t, "b1", "B", nil)
		r.ask(t, "a2", "A", nil)
		wantRefused(t, <-r.ends["b1"], failure.Busy)
		wantRefused(t, <-r.ends["a2"], failure.TooMany)
		if got := r.release(t, "a1"); got != "" {
			t.Errorf("%s got a turn after its wait was over", got)
		}
		if got := len(r.t.tokens); got != 0 {
			t.Errorf("%d tokens still known with nothing held or waiting", got)
		}
	})
	t.Run("ContextEnds", func(t *testing.T) {
		r := newTurnsRun(Limits{Exports: 1, ExportQueue: 4})
		r.ask(t, "a1", "A", nil)
		ctx, cancel := context.WithCancel(context.Background())
		end := make(chan error, 1)
		go func() { _, _, err := r.t.take(ctx, "B", nil); end <- err }()
		<-r.queued
		r.ask(t, "c1", "C", nil)
		cancel()
		if err := <-end; !errors.Is(err, context.Canceled) {
			t.Fatalf("B's request ended with %v, want context.Canceled", err)
		}
		if got, want := r.release(t, "a1"), "c1"; got != want {
			t.Errorf("the free turn went to %q, want %q", got, want)
		}
		r.release(t, "c1")
		if r.t.held != 0 || r.t.waiting != 0 || len(r.t.tokens) != 0 {
			t.Errorf("after every request: %d held, %d waiting, %d tokens known", r.t.held, r.t.waiting, len(r.t.tokens))
		}
	})
}

func wantRefused(tb testing.TB, err error, code failure.Code) {
	tb.Helper()
	if err == nil || failure.CodeOf(err) != code {
		tb.Errorf("refusal %v, want code %v", err, code)
	}
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestTurnsOthers checks that a token sees others while another token
// holds a turn, and not for its own.
func TestTurnsOthers(t *testing.T) {
	t.Parallel()
	tr := newTurns(Limits{Exports: 2})
	done, _, err := tr.take(context.Background(), "a", nil)
	if err != nil {
		t.Fatal(err)
	}
	if tr.others("a") || !tr.others("b") {
		t.Errorf("a holding a turn: others(a) %v, others(b) %v; want false, true", tr.others("a"), tr.others("b"))
	}
	done()
	if tr.others("b") {
		t.Error("others after a gave its turn back")
	}
}
