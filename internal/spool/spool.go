// Package spool puts a bounded buffer between the database side of a
// response and its client, as nginx's proxy buffering does: the producer
// (the encoder, behind the compressor) writes into a [Spool] at the
// database's speed, and a goroutine of the Spool delivers the bytes to the
// client at the client's pace.
//
// A Spool keeps up to [Limits].Memory bytes in memory, then appends to a
// temporary file, so the producer finishes, and the database connection is
// released, as soon as the last row is read, however slow the client. While
// the client keeps up, bytes pass straight through. Disk is bounded per
// response ([Limits].Disk) and across responses (a shared [Budget]); past
// either bound the producer waits for its client, which is how every
// response behaved before spooling (see [Spool.Write]). A client whose
// writes make no progress for [Limits].NoProgress is cut with [ErrStalled].
//
// The temporary file is unlinked right after it is created (on Linux and
// other Unix systems), before any byte is written to it, so no exit leaves
// it behind, a crash of the process included (at worst an empty file, if
// the crash falls between the two calls); its descriptor is closed when
// delivery ends on every path: success, [Spool.Abort], a failure of the
// client or of the producer.
//
// A held spool ([NewHeld]) sends nothing until the producer is done, so the
// body's length is known before the first byte: the HTTP layer uses it to
// answer HTTP/1.0 clients, which cannot tell a cut body from a complete one
// without a Content-Length.
//
// The package knows nothing of HTTP: the destination is an io.Writer that may
// also implement [Flusher] and [WriteDeadliner], as an adapter over
// net/http's ResponseController does.
package spool

import (
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// chunkSize is the unit of memory and of wake-ups: the producer fills a
// chunk, then hands it over. It matches the encoders' writes (64 KiB) well
// enough that a page passes through in a couple of writes per block.
const chunkSize = 32 << 10

// Defaults for the zero values of [Limits] fields.
const (
	DefaultMemory = 256 << 10 // bytes queued in memory per response
	// A client's kernel accepts bytes in steps as large as its receive
	// buffer: it keeps its window closed until much of the buffer has been
	// read (a 128 KiB buffer read at 2 KB/s accepts nothing for about a
	// minute). Five minutes leaves room for that; a stalled client holds
	// only its spool, not a database connection, while it waits.
	DefaultNoProgress = 5 * time.Minute // see Limits.NoProgress
)

var (
	// ErrStalled is returned, wrapped with the destination's own error, by
	// [Spool.Wait] and by later writes when a write to the destination
	// made no progress for Limits.NoProgress.
	ErrStalled = errors.New("spool: client made no progress")

	// ErrTooLarge is returned, wrapped, by the writes and Close of a held
	// spool ([NewHeld]) whose body exceeds its disk bound or the shared
	// [Budget]: a held spool cannot wait for its client, who reads nothing
	// until the body is complete. Nothing has been sent then.
	ErrTooLarge = errors.New("spool: body too large to hold")

	// ErrAborted is the error [Spool.Abort] records when given nil.
	ErrAborted = errors.New("spool: aborted")

	// ErrClosed is returned by Write and Flush after Close.
	ErrClosed = errors.New("spool: write after close")
)

// Flusher is implemented by destinations that buffer: Flush pushes buffered
// bytes to the client. http.ResponseController's Flush has this signature.
// A Flush that returns an error wrapping errors.ErrUnsupported (as
// http.ErrNotSupported does) is taken as "nothing to flush".
type Flusher interface {
	Flush() error
}

// Roomer is implemented by destinations that can tell how many bytes a
// write would take now without blocking, such as a TCP connection (its
// free send buffer). Only a destination with a Roomer gets bytes passed
// straight through by the producer; any other is always written by the
// spool's own goroutine, so that the producer never waits for a client.
type Roomer interface {
	Room() int
}

// Progresser is implemented by destinations that count the bytes their peer
// has accepted so far, such as a TCP connection (the bytes acknowledged).
// Progress must be safe to call while a Write is blocked in another
// goroutine. Without one, a write that completes is the only progress
// there is.
type Progresser interface {
	Progress() (int64, error)
}

// DiskReporter is implemented by destinations that want to hear that the
// temporary file failed (a full disk, an I/O error) when it happens, not
// when the response ends: from then on the producer waits for the client
// instead, holding whatever it holds (a database connection, a turn).
// DiskFailed is called with the spool's lock held, once each time the
// file fails after it worked; it must not call the spool.
type DiskReporter interface {
	DiskFailed(err error)
}

// WriteDeadliner is implemented by destinations whose writes can be given a
// deadline, as http.ResponseController's SetWriteDeadline and net.Conn's
// can. A write that misses the deadline must return an error wrapping
// os.ErrDeadlineExceeded. SetWriteDeadline must be safe to call while a
// Write is blocked in another goroutine, so that [Spool.Abort] can end it.
// An error wrapping errors.ErrUnsupported means the destination has no
// deadlines after all; the spool then cannot cut a stalled client.
type WriteDeadliner interface {
	SetWriteDeadline(t time.Time) error
}

// Limits bound a [Spool]. The zero value keeps [DefaultMemory] in memory,
// never spills to disk (the producer waits for the client once memory is
// full) and cuts a client after [DefaultNoProgress] without progress.
type Limits struct {
	// Memory is how many bytes the spool queues in memory before it
	// spills to the temporary file; 0 means DefaultMemory. It is rounded
	// down to a multiple of 32 KiB, with a minimum of 32 KiB. A spool uses
	// at most Memory plus 64 KiB: the chunk being filled and, once it has
	// spilled, a buffer to read the file back.
	Memory int

	// Disk bounds the temporary file of one response, in bytes; 0 means no
	// file at all. The file shrinks back to nothing each time the client
	// catches up with it.
	Disk int64

	// Dir is where temporary files are created; "" means os.TempDir().
	// On a tmpfs the "disk" is memory: point it at a real disk.
	Dir string

	// NoProgress is how long the destination may accept no bytes at all,
	// while bytes wait for it, before the client is cut with ErrStalled; 0
	// means DefaultNoProgress and a negative value never cuts. Progress is
	// what a [Progresser] destination reports, else each write that
	// completes. The cut comes within NoProgress plus a second. It needs a
	// destination implementing [WriteDeadliner].
	NoProgress time.Duration
}

func (l Limits) normalized() Limits {
	if l.Memory == 0 {
		l.Memory = DefaultMemory
	}
	l.Memory = max(l.Memory/chunkSize*chunkSize, chunkSize)
	if l.Disk < 0 {
		l.Disk = 0
	}
	if l.NoProgress == 0 {
		l.NoProgress = DefaultNoProgress
	}
	return l
}

// chunk is the unit of memory a spool queues; chunks are pooled across
// responses so that a steady stream allocates nothing.
type chunk [chunkSize]byte

var chunks = sync.Pool{New: func() any { return new(chunk) }}

// segment is a run of queued bytes: [r, end) of chunk c, or of the
// temporary file when c is nil.
type segment struct {
	c      *chunk
	r, end int64
}

// Stats describe a spool's work so far, for metrics and logs.
type Stats struct {
	Written     int64         // bytes the producer wrote: the body's length once closed
	Sent        int64         // bytes delivered to the destination
	Direct      int64         // of those, bytes the producer passed straight through
	Spilled     bool          // some bytes went through the temporary file
	DiskWritten int64         // bytes written to the temporary file
	DiskPeak    int64         // the temporary file's largest size
	Waited      time.Duration // time the producer spent waiting at a bound
	DiskErr     error         // the latest failure of the temporary file, which made the producer wait instead
}

// A Spool carries one response body from a producer to a destination; see
// the package documentation. Write, Flush and Close belong to the producer
// and must not be called concurrently with each other; Abort, Wait, Len and
// Stats may be called from any goroutine.
type Spool struct {
	dst        io.Writer
	flusher    Flusher
	deadliner  WriteDeadliner
	roomer     Roomer
	progresser Progresser
	reporter   DiskReporter
	lim        Limits
	budget     *Budget
	held       bool

	// Owned by the producer.
	tail     *chunk
	tailN    int
	pclosed  bool
	closeErr error

	written atomic.Int64
	failed  atomic.Bool // err != nil, for Write's fast path

	mu         sync.Mutex
	queue      []segment
	memBytes   int // chunk capacity queued
	fileSegs   int // file segments in queue
	f          *os.File
	fname      string // the file's name while it still has one (it could not be unlinked)
	fsize      int64  // the file's size, all of it reserved from budget
	diskFailed bool   // the file failed; no spilling until the client catches up
	readBuf    *chunk
	sent       int64
	flushTo    int64 // the producer's latest flush point
	flushed    int64 // the latest flush point delivered
	closed     bool  // the producer is done
	started    bool  // the drain goroutine runs
	writing    bool  // the drain, or the producer passing bytes through, is in a call to the destination
	finished   bool  // delivery has ended and released everything
	err        error
	stats      Stats

	// The no-progress watch, armed while the drain is in a call to the
	// destination.
	watch      *time.Timer
	watching   bool
	progress   int64     // the latest progress seen
	progressAt time.Time // when it was seen to change

	wake chan struct{} // to the drain: more data, a flush point, close or abort
	room chan struct{} // to the producer: memory or disk freed, or abort
	done chan struct{} // closed when delivery has ended

	onWait func() // test hook: the producer is about to wait at a bound
}

// New returns a spool that delivers to dst: bytes pass straight through
// while dst has room (see [Roomer]), and otherwise leave as soon as a 32
// KiB chunk is full, at each [Spool.Flush] and at [Spool.Close]. budget
// bounds the disk of all spools sharing it; nil means no shared bound.
func New(dst io.Writer, lim Limits, budget *Budget) *Spool {
	s := newSpool(dst, lim, budget)
	s.roomer, _ = dst.(Roomer)
	return s
}

// NewHeld returns a spool that sends nothing until [Spool.Wait] is called,
// so that once the producer has closed it, [Spool.Len] is the body's final
// length, for a Content-Length header. Its writes fail with [ErrTooLarge]
// instead of waiting when the body outgrows memory and disk. Flush points
// are ignored.
func NewHeld(dst io.Writer, lim Limits, budget *Budget) *Spool {
	s := newSpool(dst, lim, budget)
	s.held = true
	return s
}

func newSpool(dst io.Writer, lim Limits, budget *Budget) *Spool {
	s := &Spool{
		dst:    dst,
		lim:    lim.normalized(),
		budget: budget,
		wake:   make(chan struct{}, 1),
		room:   make(chan struct{}, 1),
		done:   make(chan struct{}),
	}
	s.flusher, _ = dst.(Flusher)
	s.deadliner, _ = dst.(WriteDeadliner)
	s.progresser, _ = dst.(Progresser)
	s.reporter, _ = dst.(DiskReporter)
	return s
}

func signal(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}

// Write hands p to the spool; it does not retain p. It does not wait for
// the client: it writes p straight to the destination when the spool is
// empty and the destination has room for it, and otherwise returns once p
// is queued in memory or written to the temporary file, except when both
// are full, that is when the client is further behind than Limits.Memory
// plus Limits.Disk, the shared [Budget] is spent or the disk fails. Write
// then waits until the client has read enough; the database side then runs
// at the client's pace, as it would without a spool. (Refusing instead
// would need the body's size before it starts, and a response cut half-way
// would be worse than a slow one; the no-progress cut still bounds the
// wait.) A held spool never waits: it fails with [ErrTooLarge].
//
// Write returns the spool's error once it has failed: the destination's
// error (wrapping [ErrStalled] for a stalled client) or the error given to
// [Spool.Abort]. It returns [ErrClosed] after Close.
func (s *Spool) Write(p []byte) (int, error) {
	if s.pclosed {
		return 0, ErrClosed
	}
	if s.failed.Load() {
		return 0, s.Err()
	}
	if s.roomer != nil {
		if ok, err := s.passThrough(p); ok {
			if err != nil {
				return 0, err
			}
			return len(p), nil
		}
	}
	n := 0
	for len(p) > 0 {
		if s.tail == nil {
			s.tail, s.tailN = chunks.Get().(*chunk), 0
		}
		c := copy(s.tail[s.tailN:], p)
		s.tailN += c
		p = p[c:]
		n += c
		s.written.Add(int64(c))
		if s.tailN == chunkSize {
			if err := s.commit(); err != nil {
				return n, err
			}
		}
	}
	return n, nil
}

// passThrough writes the tail chunk's bytes, then p, to the destination in
// the producer's goroutine when nothing is queued, no call to the
// destination is under way and the destination has room for them all. It
// reports whether it did (and the spool's error if the write failed).
func (s *Spool) passThrough(p []byte) (bool, error) {
	s.mu.Lock()
	if len(s.queue) != 0 || s.writing || s.flushed < s.flushTo || s.err != nil ||
		s.roomer.Room() < s.tailN+len(p) {
		s.mu.Unlock()
		return false, nil
	}
	s.writing = true
	s.armLocked()
	s.mu.Unlock()
	var n int
	var err error
	if s.tailN > 0 {
		n, err = s.write(s.tail[:s.tailN])
		s.tailN = 0
	}
	if err == nil && len(p) > 0 {
		var m int
		m, err = s.write(p)
		n += m
		s.written.Add(int64(m))
	}
	s.mu.Lock()
	s.writing = false
	s.progressAt = time.Now()
	s.sent += int64(n)
	s.stats.Direct += int64(n)
	if err != nil {
		s.failLocked(err)
		err = s.err
	}
	s.mu.Unlock()
	return true, err
}

// write writes p to the destination whole.
func (s *Spool) write(p []byte) (int, error) {
	n, err := s.dst.Write(p)
	if err == nil && n < len(p) {
		err = io.ErrShortWrite
	}
	return n, err
}

// Flush marks a flush point: everything written so far is handed to the
// destination, which is flushed once it has it. Flush does not wait for
// the client. On a held spool it does nothing. It returns what Write would.
func (s *Spool) Flush() error {
	if s.pclosed {
		return ErrClosed
	}
	if s.held {
		return s.Err()
	}
	if s.roomer != nil {
		if ok, err := s.passThrough(nil); ok {
			if err == nil {
				err = s.flushDirect()
			}
			return err
		}
	}
	if err := s.commit(); err != nil {
		return err
	}
	s.mu.Lock()
	s.flushTo = s.written.Load()
	err := s.err
	s.mu.Unlock()
	signal(s.wake)
	return err
}

// flushDirect flushes the destination in the producer's goroutine, once
// everything written has passed straight through.
func (s *Spool) flushDirect() error {
	s.mu.Lock()
	if len(s.queue) != 0 || s.writing || s.err != nil {
		err := s.err
		s.mu.Unlock()
		return err
	}
	s.writing = true
	s.armLocked()
	s.mu.Unlock()
	err := s.flush()
	s.mu.Lock()
	s.writing = false
	s.progressAt = time.Now()
	if err != nil {
		s.failLocked(err)
		err = s.err
	}
	s.flushTo, s.flushed = s.written.Load(), s.written.Load()
	s.mu.Unlock()
	return err
}

// Close tells the spool that the body is complete. It returns once every
// byte is in the spool's hands, not once delivered: the caller can release
// the database connection then, and call [Spool.Wait] for the delivery.
// It returns the spool's error if it has failed, as Write does; later calls
// return the first call's result.
func (s *Spool) Close() error {
	if s.pclosed {
		return s.closeErr
	}
	err := s.commit()
	s.pclosed = true
	if s.tail != nil {
		chunks.Put(s.tail)
		s.tail, s.tailN = nil, 0
	}
	s.mu.Lock()
	s.closed = true
	if err == nil {
		err = s.err
	}
	s.mu.Unlock()
	signal(s.wake)
	s.closeErr = err
	return err
}

// commit hands the filled part of the tail chunk over: to the memory queue
// while it has room, else to the temporary file, else it waits for room.
// It starts the delivery goroutine if it is not running.
func (s *Spool) commit() error {
	n := s.tailN
	if n == 0 {
		return s.Err()
	}
	var waitStart time.Time
	s.mu.Lock()
	for {
		if s.err != nil {
			err := s.err
			s.mu.Unlock()
			return err
		}
		if s.memBytes+chunkSize <= s.lim.Memory {
			s.queue = append(s.queue, segment{c: s.tail, end: int64(n)})
			s.memBytes += chunkSize
			s.tail, s.tailN = nil, 0
			break
		}
		// budgetFreed is taken with the failed reservation, so that a
		// release in between cannot be missed.
		var budgetFreed <-chan struct{}
		if !s.diskFailed && s.fsize+int64(n) <= s.lim.Disk {
			ok, freed := s.budget.tryAcquire(int64(n))
			if ok {
				err := s.spill(s.tail[:n])
				if err == nil {
					s.tailN = 0
					break
				}
				// A full or failing disk is a bound like the others: this
				// response waits for its client until the file has been
				// read back to nothing, then tries the disk again.
				s.budget.release(int64(n))
				s.diskFailedLocked(err)
				continue
			}
			budgetFreed = freed
		}
		if s.held {
			err := fmt.Errorf("%w: more than %d bytes in memory and %d on disk", ErrTooLarge, s.lim.Memory, min(s.lim.Disk, s.fsize))
			if s.stats.DiskErr != nil {
				err = fmt.Errorf("%w (the temporary file failed: %w)", err, s.stats.DiskErr)
			}
			s.failLocked(err)
			s.mu.Unlock()
			return err
		}
		if waitStart.IsZero() {
			waitStart = time.Now()
			if s.onWait != nil {
				s.onWait()
			}
		}
		s.startLocked()
		s.mu.Unlock()
		select {
		case <-s.room:
		case <-budgetFreed:
		case <-s.done:
		}
		s.mu.Lock()
	}
	if !waitStart.IsZero() {
		s.stats.Waited += time.Since(waitStart)
	}
	if !s.held {
		s.startLocked()
	}
	s.mu.Unlock()
	signal(s.wake)
	return nil
}

// startLocked starts the delivery goroutine unless it runs. The caller
// holds s.mu.
func (s *Spool) startLocked() {
	if !s.started {
		s.started = true
		go s.drain()
	}
}

// spill appends p to the temporary file, creating it on first use. The
// caller holds s.mu and has reserved len(p) bytes of the budget.
func (s *Spool) spill(p []byte) error {
	if s.f == nil {
		f, err := createTemp(s.lim.Dir, "informe-spool-*")
		if err != nil {
			return fmt.Errorf("spool: creating the temporary file: %w", err)
		}
		// An unlinked file lives as long as its descriptor: no exit, crash
		// included, leaves it behind. Where that is not allowed (Windows),
		// the drain removes it by name when it ends.
		if os.Remove(f.Name()) != nil {
			s.fname = f.Name()
		}
		s.f = f
	}
	if _, err := writeAt(s.f, p, s.fsize); err != nil {
		return fmt.Errorf("spool: writing the temporary file: %w", err)
	}
	end := s.fsize + int64(len(p))
	if last := len(s.queue) - 1; last >= 0 && s.queue[last].c == nil && s.queue[last].end == s.fsize {
		s.queue[last].end = end
	} else {
		s.queue = append(s.queue, segment{r: s.fsize, end: end})
		s.fileSegs++
	}
	s.fsize = end
	s.stats.Spilled = true
	s.stats.DiskWritten += int64(len(p))
	s.stats.DiskPeak = max(s.stats.DiskPeak, s.fsize)
	return nil
}

// The temporary file's calls, replaced by tests to make the disk fail.
var (
	createTemp = os.CreateTemp
	writeAt    = (*os.File).WriteAt
)

// diskFailedLocked records that the temporary file failed with err: no
// spilling until the client catches up, and the destination told at once
// if it listens ([DiskReporter]). The caller holds s.mu.
func (s *Spool) diskFailedLocked(err error) {
	s.diskFailed = true
	s.stats.DiskErr = err
	if s.reporter != nil {
		s.reporter.DiskFailed(err)
	}
}

// failLocked records err as the spool's error unless it has one. The caller
// holds s.mu.
func (s *Spool) failLocked(err error) {
	if s.err == nil {
		s.err = err
		s.failed.Store(true)
	}
}

// abortLocked fails the spool with err and ends a write to the destination
// in progress, through its write deadline if it has one. The caller holds
// s.mu.
func (s *Spool) abortLocked(err error) {
	s.failLocked(err)
	if s.writing && s.deadliner != nil {
		_ = s.deadliner.SetWriteDeadline(time.Unix(1, 0))
	}
}

// Abort discards whatever has not been delivered and stops the delivery,
// recording err (ErrAborted if nil) as the spool's error, which later
// writes and Wait return. A write to the destination in progress is ended
// through its write deadline, when it has one. Abort does not wait for the
// delivery to end: call [Spool.Wait] for that before the response is
// finished. Abort after the delivery ended does nothing.
func (s *Spool) Abort(err error) {
	if err == nil {
		err = ErrAborted
	}
	s.mu.Lock()
	if s.finished {
		s.mu.Unlock()
		return
	}
	s.abortLocked(err)
	s.startLocked() // releases the file and chunks at once
	s.mu.Unlock()
	signal(s.wake)
	signal(s.room)
}

// Wait delivers what is left and returns once the spool has ended: every
// byte delivered and the destination flushed after [Spool.Close], or the
// spool failed. It starts the delivery of a held spool. It returns nil on
// success, else the spool's error: the destination's (wrapping
// [ErrStalled] if the client made no progress) or Abort's. The temporary
// file is gone and the spool's memory released when Wait returns. Call
// Wait on every path, after Close or Abort, before the response is
// finished: until then the spool may still write to the destination.
func (s *Spool) Wait() error {
	s.mu.Lock()
	if !s.started && !s.held && s.closed && len(s.queue) == 0 && !s.writing {
		// Everything passed straight through: finish here.
		s.started = true
		if s.err == nil {
			s.call(s.flush)
		} else {
			s.mu.Unlock()
		}
		s.release()
		return s.Err()
	}
	s.startLocked()
	s.mu.Unlock()
	<-s.done
	return s.Err()
}

// Err returns the spool's error, nil while it has none.
func (s *Spool) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

// Len returns how many bytes the producer has written: once [Spool.Close]
// has returned nil, the body's length.
func (s *Spool) Len() int64 { return s.written.Load() }

// Stats returns the spool's figures so far; they are final once
// [Spool.Wait] has returned.
func (s *Spool) Stats() Stats {
	s.mu.Lock()
	st := s.stats
	st.Sent = s.sent
	s.mu.Unlock()
	st.Written = s.written.Load()
	return st
}

// drain is the delivery goroutine: it writes queued segments to the
// destination in order, flushes at flush points and at the end, and
// releases everything when it ends.
func (s *Spool) drain() {
	defer s.release()
	for {
		s.mu.Lock()
		if s.err != nil {
			s.mu.Unlock()
			return
		}
		if s.writing {
			// The producer is passing bytes through; it signals when done
			// only if it queued something, which it cannot while writing.
			s.mu.Unlock()
			<-s.wake
			continue
		}
		if s.flushed < s.flushTo && s.sent >= s.flushTo {
			s.flushed = s.flushTo
			if !s.call(s.flush) {
				return
			}
			continue
		}
		if len(s.queue) == 0 {
			if s.closed {
				s.call(s.flush)
				return
			}
			s.mu.Unlock()
			<-s.wake
			continue
		}
		seg := s.queue[0]
		var p []byte
		if seg.c != nil {
			p = seg.c[seg.r:seg.end]
		} else {
			if s.readBuf == nil {
				s.readBuf = chunks.Get().(*chunk)
			}
			p = s.readBuf[:min(seg.end-seg.r, chunkSize)]
			s.mu.Unlock()
			// The producer only appends past seg.end, and truncation waits
			// for this segment to be consumed, so no lock is needed here.
			if _, err := s.f.ReadAt(p, seg.r); err != nil {
				s.fail(fmt.Errorf("spool: reading the temporary file: %w", err))
				return
			}
			s.mu.Lock()
			if s.err != nil {
				s.mu.Unlock()
				return
			}
		}
		var n int
		ok := s.call(func() error {
			var err error
			n, err = s.write(p)
			return err
		})
		s.mu.Lock()
		s.sent += int64(n)
		s.queue[0].r += int64(n)
		if s.queue[0].r == s.queue[0].end {
			s.pop()
		}
		s.mu.Unlock()
		if !ok {
			return
		}
	}
}

// call runs fn, a call to the destination, under the no-progress watch.
// The caller holds s.mu, which call releases. It reports whether fn
// succeeded; if not, the spool has failed.
func (s *Spool) call(fn func() error) bool {
	s.writing = true
	s.armLocked()
	s.mu.Unlock()
	err := fn()
	s.mu.Lock()
	s.writing = false
	s.progressAt = time.Now() // a call that returns is progress
	if err != nil {
		if errors.Is(err, os.ErrDeadlineExceeded) && s.err == nil {
			err = fmt.Errorf("spool: write deadline: %w", err)
		}
		s.failLocked(err)
	}
	s.mu.Unlock()
	return err == nil
}

// watchTick is how often the no-progress watch looks at the destination's
// progress: the cut comes at most this long after NoProgress.
func (s *Spool) watchTick() time.Duration {
	return min(max(s.lim.NoProgress/8, 10*time.Millisecond), time.Second)
}

// armLocked starts the no-progress watch unless it runs. The caller holds
// s.mu.
func (s *Spool) armLocked() {
	if s.watching || s.lim.NoProgress < 0 || s.deadliner == nil {
		return
	}
	s.watching = true
	s.progress = s.peerProgress()
	s.progressAt = time.Now()
	if s.watch == nil {
		s.watch = time.AfterFunc(s.watchTick(), s.check)
	} else {
		s.watch.Reset(s.watchTick())
	}
}

// peerProgress is the destination's count of accepted bytes, or the bytes
// delivered when it cannot tell.
func (s *Spool) peerProgress() int64 {
	if s.progresser != nil {
		if n, err := s.progresser.Progress(); err == nil {
			return n
		}
	}
	return s.sent
}

// check is the no-progress watch: while a call to the destination is under
// way, it cuts the client once the destination accepted nothing for
// NoProgress.
func (s *Spool) check() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.finished || s.err != nil || !s.writing {
		s.watching = false
		return
	}
	now := time.Now()
	if p := s.peerProgress(); p != s.progress {
		s.progress, s.progressAt = p, now
	} else if idle := now.Sub(s.progressAt); idle >= s.lim.NoProgress {
		s.abortLocked(fmt.Errorf("%w for %v", ErrStalled, idle.Round(time.Millisecond)))
		s.watching = false
		return
	}
	s.watch.Reset(s.watchTick())
}

func (s *Spool) flush() error {
	if s.flusher == nil {
		return nil
	}
	if err := s.flusher.Flush(); err != nil && !errors.Is(err, errors.ErrUnsupported) {
		return err
	}
	return nil
}

func (s *Spool) fail(err error) {
	s.mu.Lock()
	s.failLocked(err)
	s.mu.Unlock()
}

// pop drops the consumed head segment, giving back its memory, and empties
// the file once no segment refers to it. The caller holds s.mu.
func (s *Spool) pop() {
	seg := s.queue[0]
	// The queue is short (Memory/32 KiB segments and a few of the file):
	// shifting it keeps its array for good.
	n := copy(s.queue, s.queue[1:])
	s.queue[n] = segment{}
	s.queue = s.queue[:n]
	if seg.c != nil {
		chunks.Put(seg.c)
		s.memBytes -= chunkSize
	} else if s.fileSegs--; s.fileSegs == 0 {
		// The client has caught up with the file: start it again from
		// nothing, so that it only ever holds how far the client is behind,
		// and let a failed disk be tried again.
		if err := s.f.Truncate(0); err != nil {
			s.diskFailedLocked(fmt.Errorf("spool: truncating the temporary file: %w", err))
		} else {
			s.diskFailed = false
		}
		s.budget.release(s.fsize)
		s.fsize = 0
	}
	signal(s.room)
}

// release ends the delivery: it gives back the queued memory, closes (and,
// if it still has a name, removes) the temporary file, returns its disk to
// the budget and wakes a waiting producer.
func (s *Spool) release() {
	s.mu.Lock()
	for _, seg := range s.queue {
		if seg.c != nil {
			chunks.Put(seg.c)
		}
	}
	s.queue, s.memBytes, s.fileSegs = nil, 0, 0
	if s.readBuf != nil {
		chunks.Put(s.readBuf)
		s.readBuf = nil
	}
	if s.f != nil {
		s.f.Close()
		if s.fname != "" {
			os.Remove(s.fname)
		}
		s.f = nil
		s.budget.release(s.fsize)
		s.fsize = 0
	}
	if s.watch != nil {
		s.watch.Stop()
	}
	if s.err == nil && s.deadliner != nil && s.lim.NoProgress > 0 {
		// What the destination writes after the body (HTTP's chunked
		// trailer) must not block for ever on a client that stopped
		// reading either; net/http clears the deadline once the response
		// is finished.
		_ = s.deadliner.SetWriteDeadline(time.Now().Add(s.lim.NoProgress))
	}
	s.finished = true
	s.mu.Unlock()
	close(s.done)
}
