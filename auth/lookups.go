package auth

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// What a Store keeps in memory so that tokens it does not know cost the
// database little, whatever their number. informe keeps no state but
// PostgreSQL and runs as several instances, so nothing here is shared:
// each instance remembers what it saw, for a bounded time.
const (
	// RefusalTTL is how long an instance answers a token the database
	// refused (unknown, expired or revoked) from memory. A token that the
	// database cannot yet see when it is first used (a read replica behind
	// the primary) is refused for this long after the replica sees it.
	RefusalTTL = 2 * time.Second
	// refusalsHeld bounds the refusals remembered: about 100 bytes each.
	refusalsHeld = 4096
	// knownHeld bounds the tokens remembered as seen valid.
	knownHeld = 1024
	// unseenAtOnce, unseenEvery and unseenBurst bound the lookups of
	// tokens not seen valid: so many at once, on average one every
	// unseenEvery, with bursts of unseenBurst.
	unseenAtOnce = 2
	unseenEvery  = 10 * time.Millisecond
	unseenBurst  = 10
)

// Stats counts what a Store did with the tokens it was asked about.
type Stats struct {
	// Malformed tokens were refused for their shape, before any lookup.
	Malformed uint64
	// Remembered tokens were refused from memory: the database refused
	// them within [RefusalTTL].
	Remembered uint64
	// KnownLookups are the database lookups of tokens this Store saw
	// valid before, which never wait for a turn.
	KnownLookups uint64
	// UnseenLookups are the database lookups of other tokens, which take
	// turns: a flood of them leaves the pool to the known tokens.
	UnseenLookups uint64
	// Busy tokens were never looked up: their turn did not come before
	// their context ended.
	Busy uint64
	// Waited is the time tokens not seen valid waited for their turn.
	Waited time.Duration
	// Remembering is the number of refusals held now, at most 4,096.
	Remembering int
}

// Stats returns what s did so far; a scrape of the metrics reads it.
func (s *Store) Stats() Stats {
	return Stats{
		Malformed:     s.counts.malformed.Load(),
		Remembered:    s.counts.remembered.Load(),
		KnownLookups:  s.counts.known.Load(),
		UnseenLookups: s.counts.unseen.Load(),
		Busy:          s.counts.busy.Load(),
		Waited:        time.Duration(s.counts.waited.Load()),
		Remembering:   s.refused.len(),
	}
}

// counts are the atomic counters behind [Stats].
type counts struct {
	malformed, remembered, known, unseen, busy atomic.Uint64
	waited                                     atomic.Int64 // nanoseconds
}

// hash is the SHA-256 of a token's secret: the key of what is remembered
// of it, never the secret itself.
type hash = [32]byte

// ring remembers up to a fixed number of values by token hash, forgetting
// the oldest first, so that a flood of distinct tokens never grows it.
type ring[V any] struct {
	mu    sync.Mutex
	slots []slot[V]
	index map[hash]int
	next  int
}

type slot[V any] struct {
	key  hash
	val  V
	used bool
}

func newRing[V any](n int) *ring[V] {
	return &ring[V]{slots: make([]slot[V], n), index: make(map[hash]int, n)}
}

func (r *ring[V]) get(k hash) (V, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if i, ok := r.index[k]; ok {
		return r.slots[i].val, true
	}
	var zero V
	return zero, false
}

// put remembers v for k, in place of the oldest value when r is full.
func (r *ring[V]) put(k hash, v V) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if i, ok := r.index[k]; ok {
		r.slots[i].val = v
		return
	}
	i := r.next
	r.next = (r.next + 1) % len(r.slots)
	if old := r.slots[i]; old.used {
		delete(r.index, old.key)
	}
	r.slots[i] = slot[V]{key: k, val: v, used: true}
	r.index[k] = i
}

func (r *ring[V]) remove(k hash) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if i, ok := r.index[k]; ok {
		delete(r.index, k)
		r.slots[i] = slot[V]{}
	}
}

func (r *ring[V]) len() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.index)
}

// refusal is a token the database refused, when, and why (ErrUnknown,
// ErrExpired or ErrRevoked).
type refusal struct {
	at     time.Time
	reason error
}

// gate gives the lookups of tokens not seen valid their turns: at most
// len(slots) at once, and on average one every `every` with bursts of
// burst (a generic cell rate: tat is when the next lookup would be due
// were there no bursts). A lookup waits for its turn as long as its
// context allows; one whose turn would come after its context's deadline
// takes no turn and waits for the deadline, so that a flooding client is
// slowed down rather than answered at once and free to send more.
type gate struct {
	slots chan struct{}
	every time.Duration // 0: no rate, only len(slots) at once
	burst int
	mu    sync.Mutex
	tat   time.Time
}

func newGate(atOnce int, every time.Duration, burst int) *gate {
	return &gate{slots: make(chan struct{}, atOnce), every: every, burst: max(burst, 1)}
}

// enter waits for a turn and returns the function that ends it, or ctx's
// error when ctx ends first.
func (g *gate) enter(ctx context.Context) (leave func(), err error) {
	if g.every > 0 {
		now := time.Now()
		g.mu.Lock()
		tat := g.tat
		if tat.Before(now) {
			tat = now
		}
		at := tat.Add(-time.Duration(g.burst-1) * g.every)
		if deadline, ok := ctx.Deadline(); ok && at.After(deadline) {
			g.mu.Unlock()
			<-ctx.Done()
			return nil, ctx.Err()
		}
		g.tat = tat.Add(g.every)
		g.mu.Unlock()
		if wait := at.Sub(now); wait > 0 {
			t := time.NewTimer(wait)
			select {
			case <-t.C:
			case <-ctx.Done():
				t.Stop()
				return nil, ctx.Err()
			}
		}
	}
	select {
	case g.slots <- struct{}{}:
		return func() { <-g.slots }, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}
