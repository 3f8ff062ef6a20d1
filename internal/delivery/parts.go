package delivery

import (
	"errors"
	"io"
	"sync"
	"time"

	"github.com/informe/informe/export"
	"github.com/informe/informe/internal/spool"
)

// Rows are the rows of one part of a body, driven like pgx.Rows; Close
// ends them (and their snapshot) on every path.
type Rows interface {
	Next() bool
	Values() [][]byte
	Err() error
	Close() error
}

// Parts are the later parts of a body read through several cursors at
// once: each is encoded, as its rows arrive, by a goroutine of its own into
// a spool of its own (memory, then a temporary file, as [Options] bound
// it), while [Deliver] writes the first part; it then copies them into
// the body in order, live once it has caught up with a part. The nil
// *Parts has no parts.
type Parts struct {
	parts []*part
	stop  func(error)
	wg    sync.WaitGroup
}

type part struct {
	pr   *io.PipeReader
	rows int64 // set before the pipe's writer is closed
}

// A Part is a later part of a body: its rows, and the encoding that
// continues the body with them (export.Spec.Continuation).
type Part struct {
	Rows     Rows
	Encoding Encoding
}

// EncodeParts starts encoding parts, each with its encoding, which must
// continue a body (export.Options.Continue); o bounds each part's spool
// (its Coding and Held are ignored: parts are compressed, or held, as the
// body they join). A part that fails calls stop with its error, which
// should stop the others and the first part (cancel their queries); the
// body then fails with it. Every part's rows are closed by the
// time [Parts.Wait] returns.
func EncodeParts(parts []Part, o Options, stop func(error)) *Parts {
	if len(parts) == 0 {
		return nil
	}
	ps := &Parts{stop: stop}
	for _, pt := range parts {
		pr, pw := io.Pipe()
		p := &part{pr: pr}
		ps.parts = append(ps.parts, p)
		ps.wg.Add(1)
		go func() {
			defer ps.wg.Done()
			err := p.encode(pt.Rows, pw, pt.Encoding, o)
			if err != nil {
				stop(err)
			}
			pw.CloseWithError(err)
		}()
	}
	return ps
}

// encode encodes r into a spool delivering to pw, and returns once the
// reader of pw has taken every byte, or the first error.
func (p *part) encode(r Rows, pw *io.PipeWriter, e Encoding, o Options) error {
	// Nothing reads the pipe before the earlier parts end: without a
	// WriteDeadliner destination, the spool never takes that for a stall.
	sp := spool.New(pw, o.Spool, o.Budget)
	enc, err := e.NewEncoder(sp)
	if err != nil {
		r.Close()
		sp.Abort(err)
		return errors.Join(err, sp.Wait())
	}
	var n int64
	for r.Next() {
		if err = enc.Encode(r.Values()); err != nil {
			break
		}
		n++
	}
	if err == nil {
		err = r.Err()
	}
	if cerr := r.Close(); err == nil {
		err = cerr
	}
	if cerr := enc.Close(); err == nil {
		err = cerr
	}
	p.rows = n
	if err == nil {
		err = sp.Close()
	}
	if err != nil {
		sp.Abort(err)
		_ = sp.Wait()
		return err
	}
	return sp.Wait()
}

// appendTo copies the parts into w's body in order, each as fast as its
// rows come once the ones before it have ended, flushing at least every
// [FlushInterval]: after w's own bytes, or into w's encoder when it is an
// [export.Joiner] (an XLSX workbook). It returns the first error of a part
// or of w; the caller then aborts w and the parts.
func (ps *Parts) appendTo(w *Writer) error {
	if ps == nil {
		return nil
	}
	if w.flusher == nil {
		return errors.New("delivery: an encoder that cannot flush cannot be followed by parts")
	}
	if err := w.flusher.Flush(); err != nil {
		return err
	}
	joiner, _ := w.enc.(export.Joiner)
	buf := make([]byte, 32<<10)
	for _, p := range ps.parts {
		dst := io.Writer(w.zw)
		var jw io.WriteCloser
		if joiner != nil {
			jw = joiner.Join()
			dst = jw
		}
		for {
			n, err := p.pr.Read(buf)
			if n > 0 {
				if _, werr := dst.Write(buf[:n]); werr != nil {
					return werr
				}
				if time.Since(w.lastFlush) >= FlushInterval {
					if joiner != nil {
						_ = w.flusher.Flush()
					}
					_ = w.zw.Flush()
					w.lastFlush = time.Now()
				}
			}
			if err == io.EOF {
				break
			}
			if err != nil {
				return err
			}
		}
		if jw != nil {
			if err := jw.Close(); err != nil {
				return err
			}
		}
		w.rows += p.rows
	}
	return nil
}

// follow ends the first part of a body, read through first, whose loop
// over first's rows ended with err (nil when every row was encoded): when
// the part failed it stops the later parts, before first is closed (which
// would otherwise read first's remaining rows); it closes first; then it
// appends the later parts to w's body in order, stopping them if that
// fails, and waits for every part. It returns the body's error and the
// error of closing first, which the caller may weigh on its own: every row
// was read by then.
func (ps *Parts) follow(w *Writer, first Rows, err error) (bodyErr, closeErr error) {
	if err == nil {
		err = first.Err()
	}
	if err != nil {
		ps.Abort(err)
	}
	closeErr = first.Close()
	if err == nil {
		if err = ps.appendTo(w); err != nil {
			ps.Abort(err)
		}
	}
	ps.Wait()
	return err, closeErr
}

// Abort stops every part that still runs, and calls stop with err.
func (ps *Parts) Abort(err error) {
	if ps == nil {
		return
	}
	ps.stop(err)
	for _, p := range ps.parts {
		p.pr.CloseWithError(err)
	}
}

// Wait returns once every part's goroutine has ended: its rows closed
// and its spool's bytes delivered or dropped.
func (ps *Parts) Wait() {
	if ps != nil {
		ps.wg.Wait()
	}
}
