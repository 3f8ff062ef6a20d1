package spool

import "sync"

// A Budget bounds the disk used by the temporary files of all the spools
// that share it, a semaphore counted in bytes. A spool reserves its file's
// bytes as it writes them and gives them back when its client catches up
// with the file or when it ends. A spool that finds the budget spent keeps
// queueing in memory, then waits for its own client or for another spool to
// give bytes back, as [Spool.Write] says; a held spool fails instead.
//
// A nil *Budget is no bound. A Budget is safe for concurrent use.
type Budget struct {
	mu      sync.Mutex
	limit   int64
	used    int64
	changed chan struct{} // closed and replaced when bytes are given back
}

// NewBudget returns a budget of limit bytes; limit ≤ 0 allows no disk at
// all, so spools sharing it never spill.
func NewBudget(limit int64) *Budget {
	return &Budget{limit: max(limit, 0), changed: make(chan struct{})}
}

// InUse returns the bytes reserved now by spools' temporary files, for a
// gauge.
func (b *Budget) InUse() int64 {
	if b == nil {
		return 0
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.used
}

// Limit returns the budget's bound in bytes.
func (b *Budget) Limit() int64 {
	if b == nil {
		return 0
	}
	return b.limit
}

// tryAcquire reserves n bytes if they are free. If not, it returns a
// channel closed the next time bytes are given back (nil, never ready, for
// a nil budget, which never refuses).
func (b *Budget) tryAcquire(n int64) (ok bool, freed <-chan struct{}) {
	if b == nil {
		return true, nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.used+n > b.limit {
		return false, b.changed
	}
	b.used += n
	return true, nil
}

// release gives n bytes back and wakes the spools waiting for some.
func (b *Budget) release(n int64) {
	if b == nil || n == 0 {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.used -= n
	close(b.changed)
	b.changed = make(chan struct{})
}
