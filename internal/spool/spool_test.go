package spool

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// data returns n reproducible random bytes.
func data(n int, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, 1))
	b := make([]byte, (n+7)/8*8)
	for i := 0; i < len(b); i += 8 {
		binary.LittleEndian.PutUint64(b[i:], r.Uint64())
	}
	return b[:n]
}

// produce writes b to w in pieces of random sizes up to max, with a flush
// now and then when flush is true, and closes w. It returns the first error.
func produce(w *Spool, b []byte, max int, flush bool, seed uint64) error {
	r := rand.New(rand.NewPCG(seed, 2))
	for len(b) > 0 {
		n := min(len(b), 1+r.IntN(max))
		if _, err := w.Write(b[:n]); err != nil {
			return err
		}
		b = b[n:]
		if flush && r.IntN(16) == 0 {
			if err := w.Flush(); err != nil {
				return err
			}
		}
	}
	return w.Close()
}

// sink is a destination that takes everything at once.
type sink struct {
	mu      sync.Mutex
	buf     bytes.Buffer
	flushes int
	flushed chan int // receives the bytes received at each flush, if not nil
}

func (s *sink) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.Write(p)
}

func (s *sink) Flush() error {
	s.mu.Lock()
	s.flushes++
	n := s.buf.Len()
	s.mu.Unlock()
	if s.flushed != nil {
		s.flushed <- n
	}
	return nil
}

func (s *sink) bytes() []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return bytes.Clone(s.buf.Bytes())
}

// gate is a destination whose writes block until it is opened, or until
// their write deadline passes, like a connection whose client has stopped
// reading.
type gate struct {
	sink
	open     chan struct{}
	once     sync.Once
	blocked  chan struct{} // closed when a write first blocks
	bonce    sync.Once
	mu       sync.Mutex
	deadline time.Time
	arms     int           // calls setting a deadline (not clearing it)
	changed  chan struct{} // closed and replaced when the deadline changes
}

func newGate() *gate {
	return &gate{open: make(chan struct{}), blocked: make(chan struct{}), changed: make(chan struct{})}
}

func (g *gate) Open() { g.once.Do(func() { close(g.open) }) }

func (g *gate) Write(p []byte) (int, error) {
	for {
		select {
		case <-g.open:
			return g.sink.Write(p)
		default:
		}
		g.mu.Lock()
		dl, changed := g.deadline, g.changed
		g.mu.Unlock()
		var expired <-chan time.Time
		if !dl.IsZero() {
			d := time.Until(dl)
			if d <= 0 {
				return 0, fmt.Errorf("gate: %w", os.ErrDeadlineExceeded)
			}
			t := time.NewTimer(d)
			defer t.Stop()
			expired = t.C
		}
		g.bonce.Do(func() { close(g.blocked) })
		select {
		case <-g.open:
		case <-expired:
		case <-changed:
		}
	}
}

func (g *gate) SetWriteDeadline(t time.Time) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.deadline = t
	if !t.IsZero() {
		g.arms++
	}
	close(g.changed)
	g.changed = make(chan struct{})
	return nil
}

// openFiles returns the descriptors of this process that refer to files in
// dir, deleted or not. It skips the test where /proc is not there.
func openFiles(t *testing.T, dir string) []string {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("needs /proc/self/fd")
	}
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	var open []string
	for _, e := range ents {
		target, err := os.Readlink(filepath.Join("/proc/self/fd", e.Name()))
		if err == nil && strings.HasPrefix(target, dir+string(filepath.Separator)) {
			open = append(open, target)
		}
	}
	return open
}

// checkGone fails unless dir is empty and no descriptor refers to a file in
// it: the temporary file is gone for good.
func checkGone(t *testing.T, dir string) {
	t.Helper()
	if ents, err := os.ReadDir(dir); err != nil || len(ents) != 0 {
		t.Errorf("%s holds %v (err %v), want nothing", dir, ents, err)
	}
	if open := openFiles(t, dir); len(open) != 0 {
		t.Errorf("still open: %v", open)
	}
}

func TestPassThrough(t *testing.T) {
	for _, tt := range []struct {
		name  string
		n     int
		max   int
		flush bool
	}{
		{"Empty", 0, 1, false},
		{"OneByte", 1, 1, false},
		{"LessThanAChunk", chunkSize - 1, 1000, false},
		{"OneChunk", chunkSize, chunkSize, false},
		{"SmallWrites", 300 << 10, 300, true},
		{"EncoderWrites", 4 << 20, 64 << 10, false},
		{"LargeWrites", 4 << 20, 1 << 20, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			want := data(tt.n, uint64(tt.n))
			var dst sink
			s := New(&dst, Limits{}, nil)
			if err := produce(s, want, tt.max, tt.flush, 1); err != nil {
				t.Fatal(err)
			}
			if err := s.Wait(); err != nil {
				t.Fatal(err)
			}
			if got := dst.bytes(); !bytes.Equal(got, want) {
				t.Fatalf("got %d bytes, want %d (equal prefix %d)", len(got), len(want), commonPrefix(got, want))
			}
			st := s.Stats()
			if got, want := st.Written, int64(tt.n); got != want {
				t.Errorf("Written = %d, want %d", got, want)
			}
			if got, want := st.Sent, int64(tt.n); got != want {
				t.Errorf("Sent = %d, want %d", got, want)
			}
			if st.Spilled {
				t.Error("spilled without a disk bound")
			}
			if dst.flushes == 0 {
				t.Error("the destination was never flushed")
			}
		})
	}
}

func commonPrefix(a, b []byte) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}

// TestFlushSendsAtOnce checks that a flush point reaches the client without
// waiting for a chunk to fill or for Close: the first byte leaves at once.
func TestFlushSendsAtOnce(t *testing.T) {
	dst := sink{flushed: make(chan int, 1)}
	s := New(&dst, Limits{}, nil)
	if _, err := s.Write([]byte("first row\n")); err != nil {
		t.Fatal(err)
	}
	if err := s.Flush(); err != nil {
		t.Fatal(err)
	}
	if got, want := <-dst.flushed, len("first row\n"); got != want {
		t.Errorf("flushed after %d bytes, want %d", got, want)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	<-dst.flushed // the final flush
	if err := s.Wait(); err != nil {
		t.Fatal(err)
	}
}

// TestCloseBeforeClientReads is the point of the package: the producer
// finishes, spilling to disk, while the client has read nothing; the client
// then gets every byte, and the file is gone.
func TestCloseBeforeClientReads(t *testing.T) {
	dir := t.TempDir()
	want := data(5<<20+123, 7)
	dst := newGate()
	budget := NewBudget(64 << 20)
	s := New(dst, Limits{Memory: 64 << 10, Disk: 16 << 20, Dir: dir}, budget)
	// The destination stays closed until the producer is done: if Close
	// waited for the client, this would never return.
	if err := produce(s, want, 100<<10, true, 3); err != nil {
		t.Fatal(err)
	}
	st := s.Stats()
	if !st.Spilled {
		t.Fatal("Stats.Spilled = false after writing 5 MiB behind a blocked client")
	}
	if st.Sent != 0 {
		t.Errorf("Sent = %d before the client read anything", st.Sent)
	}
	if got, want := st.Written, int64(len(want)); got != want {
		t.Errorf("Written = %d, want %d", got, want)
	}
	if budget.InUse() == 0 {
		t.Error("the budget shows no disk in use while the file holds data")
	}
	// The file is unlinked already: a crash now would leave nothing.
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("temporary file visible in %s while in use: %v", dir, ents)
	}
	if len(openFiles(t, dir)) != 1 {
		t.Errorf("open files in %s: %v, want the one temporary file", dir, openFiles(t, dir))
	}
	dst.Open()
	if err := s.Wait(); err != nil {
		t.Fatal(err)
	}
	if got := dst.bytes(); !bytes.Equal(got, want) {
		t.Fatalf("got %d bytes, want %d (equal prefix %d)", len(got), len(want), commonPrefix(got, want))
	}
	checkGone(t, dir)
	if got := budget.InUse(); got != 0 {
		t.Errorf("budget in use after Wait = %d, want 0", got)
	}
}

// TestSpillReadBackWhileWriting has the client start reading the file while
// the producer still appends to it, many times over, so that the queue goes
// from memory to file and back to memory when the client catches up.
func TestSpillReadBackWhileWriting(t *testing.T) {
	dir := t.TempDir()
	for i := range 20 {
		want := data(1<<20+i*997, uint64(i))
		dst := newGate()
		s := New(dst, Limits{Memory: 32 << 10, Disk: 512 << 10, Dir: dir}, nil)
		r := rand.New(rand.NewPCG(uint64(i), 3))
		head := 64<<10 + r.IntN(400<<10) // written while the client reads nothing
		if _, err := s.Write(want[:head]); err != nil {
			t.Fatal(err)
		}
		dst.Open()
		if err := produce(s, want[head:], 20<<10, i%2 == 0, uint64(i)); err != nil {
			t.Fatal(err)
		}
		if err := s.Wait(); err != nil {
			t.Fatal(err)
		}
		if got := dst.bytes(); !bytes.Equal(got, want) {
			t.Fatalf("run %d: got %d bytes, want %d (equal prefix %d)", i, len(got), len(want), commonPrefix(got, want))
		}
		if st := s.Stats(); !st.Spilled || st.DiskPeak > 512<<10 {
			t.Errorf("run %d: Stats = %+v, want Spilled and DiskPeak within the bound", i, st)
		}
	}
	checkGone(t, dir)
}

func TestAbortRemovesFile(t *testing.T) {
	dir := t.TempDir()
	dst := newGate()
	s := New(dst, Limits{Memory: 32 << 10, Disk: 1 << 20, Dir: dir}, nil)
	if _, err := s.Write(data(512<<10, 1)); err != nil {
		t.Fatal(err)
	}
	<-dst.blocked // the drain is stuck in a write to the client
	dbErr := errors.New("database went away")
	s.Abort(dbErr)
	if err := s.Wait(); !errors.Is(err, dbErr) {
		t.Fatalf("Wait = %v, want %v", err, dbErr)
	}
	if _, err := s.Write([]byte("x")); !errors.Is(err, dbErr) {
		t.Errorf("Write after Abort = %v, want %v", err, dbErr)
	}
	if err := s.Close(); !errors.Is(err, dbErr) {
		t.Errorf("Close after Abort = %v, want %v", err, dbErr)
	}
	checkGone(t, dir)
	s.Abort(errors.New("again")) // after the end: nothing
	if err := s.Wait(); !errors.Is(err, dbErr) {
		t.Errorf("Wait = %v, want %v", err, dbErr)
	}
}

// failing is a destination that fails after taking limit bytes, like a
// client that went away.
type failing struct {
	n, limit int
}

var errClientGone = errors.New("connection reset by peer")

func (f *failing) Write(p []byte) (int, error) {
	if f.n+len(p) > f.limit {
		return 0, errClientGone
	}
	f.n += len(p)
	return len(p), nil
}

func TestClientErrorRemovesFile(t *testing.T) {
	dir := t.TempDir()
	s := New(&failing{limit: 100 << 10}, Limits{Memory: 32 << 10, Disk: 64 << 20, Dir: dir}, nil)
	perr := produce(s, data(8<<20, 2), 64<<10, false, 2)
	werr := s.Wait()
	if !errors.Is(werr, errClientGone) {
		t.Fatalf("Wait = %v, want %v", werr, errClientGone)
	}
	// The producer may have finished before the client failed; if not, it
	// was told.
	if perr != nil && !errors.Is(perr, errClientGone) {
		t.Errorf("producer got %v, want nil or %v", perr, errClientGone)
	}
	checkGone(t, dir)
}

func TestDiskBound(t *testing.T) {
	const disk = 96 << 10
	dir := t.TempDir()
	dst := newGate()
	s := New(dst, Limits{Memory: 32 << 10, Disk: disk, Dir: dir}, nil)
	waiting := make(chan struct{}, 1)
	s.onWait = func() { signal(waiting) }
	want := data(1<<20, 5)
	perr := make(chan error, 1)
	go func() { perr <- produce(s, want, 10<<10, false, 5) }()
	<-waiting // the producer is held at the bound
	st := s.Stats()
	if st.DiskPeak > disk {
		t.Errorf("DiskPeak = %d, want at most %d", st.DiskPeak, disk)
	}
	if st.Written >= int64(len(want)) {
		t.Errorf("Written = %d: the producer wrote everything past the bound", st.Written)
	}
	select {
	case err := <-perr:
		t.Fatalf("the producer finished (%v) while its client read nothing and the spool was full", err)
	default:
	}
	dst.Open()
	if err := <-perr; err != nil {
		t.Fatal(err)
	}
	if err := s.Wait(); err != nil {
		t.Fatal(err)
	}
	if got := dst.bytes(); !bytes.Equal(got, want) {
		t.Fatalf("got %d bytes, want %d", len(got), len(want))
	}
	if st := s.Stats(); st.Waited <= 0 || st.DiskPeak > disk {
		t.Errorf("Stats = %+v, want Waited > 0 and DiskPeak ≤ %d", st, disk)
	}
	checkGone(t, dir)
}

// TestMemoryOnly checks the zero Disk: the producer waits once memory is
// full and never creates a file.
func TestMemoryOnly(t *testing.T) {
	dir := t.TempDir()
	dst := newGate()
	s := New(dst, Limits{Memory: 64 << 10, Dir: dir}, nil)
	waiting := make(chan struct{}, 1)
	s.onWait = func() { signal(waiting) }
	want := data(1<<20, 6)
	perr := make(chan error, 1)
	go func() { perr <- produce(s, want, 64<<10, false, 6) }()
	<-waiting
	if open := openFiles(t, dir); len(open) != 0 {
		t.Errorf("a file was created: %v", open)
	}
	dst.Open()
	if err := <-perr; err != nil {
		t.Fatal(err)
	}
	if err := s.Wait(); err != nil {
		t.Fatal(err)
	}
	if got := dst.bytes(); !bytes.Equal(got, want) {
		t.Fatalf("got %d bytes, want %d", len(got), len(want))
	}
	if s.Stats().Spilled {
		t.Error("Spilled with Disk 0")
	}
}

// TestBudgetShared checks the bound across spools: a second spool waits
// while a first one holds the budget, and goes on when it gives it back.
func TestBudgetShared(t *testing.T) {
	dir := t.TempDir()
	budget := NewBudget(64 << 10)
	lim := Limits{Memory: 32 << 10, Disk: 1 << 20, Dir: dir}

	dstA := newGate()
	a := New(dstA, lim, budget)
	if _, err := a.Write(data(32<<10+64<<10, 1)); err != nil { // memory, then the whole budget
		t.Fatal(err)
	}
	if got, want := budget.InUse(), int64(64<<10); got != want {
		t.Fatalf("InUse = %d, want %d", got, want)
	}

	dstB := newGate()
	b := New(dstB, lim, budget)
	waiting := make(chan struct{}, 1)
	b.onWait = func() { signal(waiting) }
	wantB := data(32<<10+64<<10, 2)
	perr := make(chan error, 1)
	go func() { perr <- produce(b, wantB, 32<<10, false, 2) }()
	<-waiting // B is full in memory and finds the budget spent
	if got := budget.InUse(); got > budget.Limit() {
		t.Errorf("InUse = %d over the limit %d", got, budget.Limit())
	}

	a.Abort(nil) // A's client goes away: its file goes, and B can spill
	if err := a.Wait(); !errors.Is(err, ErrAborted) {
		t.Errorf("A: Wait = %v, want ErrAborted", err)
	}
	if err := <-perr; err != nil { // B's producer finishes; its client still reads nothing
		t.Fatal(err)
	}
	if !b.Stats().Spilled {
		t.Error("B did not spill once the budget was free")
	}
	dstB.Open()
	if err := b.Wait(); err != nil {
		t.Fatal(err)
	}
	if got := dstB.bytes(); !bytes.Equal(got, wantB) {
		t.Fatalf("B: got %d bytes, want %d", len(got), len(wantB))
	}
	if got := budget.InUse(); got != 0 {
		t.Errorf("InUse after both = %d, want 0", got)
	}
	checkGone(t, dir)
}

func TestStalled(t *testing.T) {
	dst := newGate() // never opened
	s := New(dst, Limits{Memory: 32 << 10, NoProgress: 20 * time.Millisecond}, nil)
	perr := produce(s, data(1<<20, 1), 64<<10, false, 1) // waits at the memory bound until the cut
	if !errors.Is(perr, ErrStalled) {
		t.Errorf("producer got %v, want ErrStalled", perr)
	}
	if err := s.Wait(); !errors.Is(err, ErrStalled) {
		t.Errorf("Wait = %v, want ErrStalled", err)
	}
}

// TestNoProgressOnlyWhileWriting checks that the no-progress watch only
// runs while bytes wait for the client: while the drain waits for the
// producer (the database), however long, the client is not cut, and no
// write deadline is set until the end.
func TestNoProgressOnlyWhileWriting(t *testing.T) {
	dst := newGate()
	dst.Open()
	flushed := make(chan int, 1)
	dst.flushed = flushed
	s := New(dst, Limits{NoProgress: 20 * time.Millisecond}, nil)
	for range 3 {
		if _, err := s.Write([]byte("row\n")); err != nil {
			t.Fatal(err)
		}
		if err := s.Flush(); err != nil {
			t.Fatal(err)
		}
		<-flushed
		time.Sleep(100 * time.Millisecond) // a slow query
	}
	dst.mu.Lock()
	arms := dst.arms
	dst.mu.Unlock()
	if arms != 0 {
		t.Errorf("%d write deadlines set while delivering, want 0", arms)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	<-flushed
	if err := s.Wait(); err != nil {
		t.Fatalf("Wait = %v, want nil", err)
	}
}

func TestHeld(t *testing.T) {
	dir := t.TempDir()
	dst := &sink{}
	s := NewHeld(dst, Limits{Memory: 32 << 10, Disk: 1 << 20, Dir: dir}, nil)
	want := data(700<<10, 9)
	if err := produce(s, want, 50<<10, true, 9); err != nil {
		t.Fatal(err)
	}
	if got, want := s.Len(), int64(len(want)); got != want {
		t.Errorf("Len = %d, want %d", got, want)
	}
	if got := dst.bytes(); len(got) != 0 {
		t.Errorf("%d bytes sent before Wait", len(got))
	}
	if err := s.Wait(); err != nil {
		t.Fatal(err)
	}
	if got := dst.bytes(); !bytes.Equal(got, want) {
		t.Fatalf("got %d bytes, want %d", len(got), len(want))
	}
	if dst.flushes != 1 {
		t.Errorf("%d flushes, want 1 at the end (flush points are ignored)", dst.flushes)
	}
	checkGone(t, dir)
}

func TestHeldTooLarge(t *testing.T) {
	for _, tt := range []struct {
		name   string
		disk   int64
		budget *Budget
	}{
		{"Disk", 64 << 10, nil},
		{"Budget", 1 << 20, NewBudget(64 << 10)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			dst := &sink{}
			s := NewHeld(dst, Limits{Memory: 32 << 10, Disk: tt.disk, Dir: dir}, tt.budget)
			err := produce(s, data(200<<10, 1), 8<<10, false, 1)
			if !errors.Is(err, ErrTooLarge) {
				t.Fatalf("producer got %v, want ErrTooLarge", err)
			}
			s.Abort(err)
			if err := s.Wait(); !errors.Is(err, ErrTooLarge) {
				t.Errorf("Wait = %v, want ErrTooLarge", err)
			}
			if got := dst.bytes(); len(got) != 0 {
				t.Errorf("%d bytes sent, want none", len(got))
			}
			checkGone(t, dir)
			if got := tt.budget.InUse(); got != 0 {
				t.Errorf("budget in use = %d, want 0", got)
			}
		})
	}
}

func TestWriteAfterClose(t *testing.T) {
	s := New(io.Discard, Limits{}, nil)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Write([]byte("x")); !errors.Is(err, ErrClosed) {
		t.Errorf("Write after Close = %v, want ErrClosed", err)
	}
	if err := s.Flush(); !errors.Is(err, ErrClosed) {
		t.Errorf("Flush after Close = %v, want ErrClosed", err)
	}
	if err := s.Wait(); err != nil {
		t.Fatal(err)
	}
}

func TestLimitsNormalized(t *testing.T) {
	for _, tt := range []struct {
		name      string
		in        Limits
		mem       int
		noProgess time.Duration
	}{
		{"Zero", Limits{}, DefaultMemory, DefaultNoProgress},
		{"Tiny", Limits{Memory: 1}, chunkSize, DefaultNoProgress},
		{"RoundedDown", Limits{Memory: 3*chunkSize - 1}, 2 * chunkSize, DefaultNoProgress},
		{"NeverCut", Limits{NoProgress: -1}, DefaultMemory, -1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.in.normalized()
			if got.Memory != tt.mem || got.NoProgress != tt.noProgess {
				t.Errorf("got Memory %d NoProgress %v, want %d %v", got.Memory, got.NoProgress, tt.mem, tt.noProgess)
			}
		})
	}
}

// TestDiskFailureIsABound checks that a spool whose temporary file cannot
// be created or written (a missing folder, a full disk) does not fail the
// response: the producer waits for the client, as at the disk bound, and
// the client gets every byte.
func TestDiskFailureIsABound(t *testing.T) {
	full := func(*os.File, []byte, int64) (int, error) {
		return 0, &os.PathError{Op: "write", Path: "spool", Err: syscall.ENOSPC}
	}
	for _, tt := range []struct {
		name   string
		dir    func(t *testing.T) string
		fail   func(*os.File, []byte, int64) (int, error)
		target error
	}{
		{"NoFolder", func(t *testing.T) string { return filepath.Join(t.TempDir(), "missing") }, nil, os.ErrNotExist},
		{"DiskFull", func(t *testing.T) string { return t.TempDir() }, full, syscall.ENOSPC},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if tt.fail != nil {
				writeAt = tt.fail
				defer func() { writeAt = (*os.File).WriteAt }()
			}
			want := data(1<<20, 3)
			dst := newGate()
			waiting := make(chan struct{}, 1)
			s := New(dst, Limits{Memory: 64 << 10, Disk: 16 << 20, Dir: tt.dir(t), NoProgress: -1}, nil)
			s.onWait = func() { signal(waiting) }
			perr := make(chan error, 1)
			go func() { perr <- produce(s, want, 64<<10, false, 1) }()
			<-waiting // the producer waits at the failed disk, not failed
			dst.Open()
			if err := <-perr; err != nil {
				t.Fatalf("producer: %v", err)
			}
			if err := s.Wait(); err != nil {
				t.Fatalf("Wait = %v", err)
			}
			if got := dst.bytes(); !bytes.Equal(got, want) {
				t.Fatalf("got %d bytes, want %d", len(got), len(want))
			}
			if st := s.Stats(); !errors.Is(st.DiskErr, tt.target) {
				t.Errorf("Stats().DiskErr = %v, want one wrapping %v", st.DiskErr, tt.target)
			}
		})
	}
}

// TestHeldDiskFailure checks that a held spool (an HTTP/1.0 body) whose disk
// fails refuses the body before anything is sent.
func TestHeldDiskFailure(t *testing.T) {
	var dst sink
	s := NewHeld(&dst, Limits{Memory: 32 << 10, Disk: 1 << 20, Dir: filepath.Join(t.TempDir(), "missing")}, nil)
	err := produce(s, data(256<<10, 1), 64<<10, false, 1)
	if !errors.Is(err, ErrTooLarge) || !errors.Is(err, os.ErrNotExist) {
		t.Errorf("producer got %v, want ErrTooLarge wrapping os.ErrNotExist", err)
	}
	s.Abort(err)
	_ = s.Wait()
	if dst.buf.Len() != 0 {
		t.Errorf("%d bytes sent, want none", dst.buf.Len())
	}
}

// roomy is a destination that says how much room it has.
type roomy struct {
	sink
	room atomic.Int64
}

func (d *roomy) Room() int { return int(d.room.Load()) }

// TestStraightThrough checks that a destination with room gets the bytes
// from the producer's own calls, not through the spool's goroutine, and
// that one that falls behind gets them through the spool and then straight
// again, every byte in order either way.
func TestStraightThrough(t *testing.T) {
	for _, tt := range []struct {
		name     string
		room     func(i int) int64 // room before the i-th write
		all, any bool              // every byte passed straight through; some did
	}{
		{"KeepsUp", func(int) int64 { return 1 << 30 }, true, true},
		{"FallsBehindThenCatchesUp", func(i int) int64 {
			if i >= 20 && i < 40 {
				return 0
			}
			return 1 << 30
		}, false, true},
		{"NeverRoom", func(int) int64 { return 0 }, false, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			want := data(4<<20, 9)
			dst := &roomy{}
			s := New(dst, Limits{}, nil)
			for i, p := 0, want; len(p) > 0; i++ {
				n := min(len(p), 64<<10)
				dst.room.Store(tt.room(i))
				if _, err := s.Write(p[:n]); err != nil {
					t.Fatal(err)
				}
				if i%7 == 0 {
					if err := s.Flush(); err != nil {
						t.Fatal(err)
					}
				}
				p = p[n:]
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			if err := s.Wait(); err != nil {
				t.Fatal(err)
			}
			if got := dst.bytes(); !bytes.Equal(got, want) {
				t.Fatalf("got %d bytes, want %d (equal prefix %d)", len(got), len(want), commonPrefix(got, want))
			}
			st := s.Stats()
			if got := st.Direct == int64(len(want)); got != tt.all {
				t.Errorf("%d of %d bytes passed straight through; want all: %v", st.Direct, len(want), tt.all)
			}
			if got := st.Direct > 0; got != tt.any {
				t.Errorf("%d bytes passed straight through; want some: %v", st.Direct, tt.any)
			}
		})
	}
}
