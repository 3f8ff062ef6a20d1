// Package delivery carries a body of rows to where it goes, an HTTP
// response or a file, by one path for both: encoder -> compressor -> spool
// -> destination. [Deliver] is that path: it reads a cursor's rows (then
// those of the later [Parts]) into a [Writer], which pushes the first row
// out at once and then at least every [FlushInterval], and finishes the
// body in one of two ways: [Writer.Close] then [Writer.Wait] when every
// row was read, [Writer.Abort] then Wait when something failed, so that a
// truncated body never looks complete. [Reason] says why a body was cut,
// the same way for every caller.
//
// The package knows nothing of HTTP or of PostgreSQL: the destination is an
// io.Writer (see package spool for what else it may implement), and the
// errors it classifies are the causes the other packages define.
package delivery

import (
	"io"
	"time"

	"github.com/informe/informe/export"
	"github.com/informe/informe/internal/compress"
	"github.com/informe/informe/internal/spool"
)

// FlushInterval bounds how long encoded rows wait in the encoder's and the
// compressor's buffers while more rows are encoded.
const FlushInterval = 100 * time.Millisecond

// Encoding makes the encoder of a body on the writer it is given;
// [export.Spec] is one.
type Encoding interface {
	NewEncoder(w io.Writer) (export.Encoder, error)
}

// Options say how a body reaches its destination.
type Options struct {
	// Coding compresses the body; the zero value sends it as it is.
	Coding compress.Coding
	// Spool bounds the bytes that wait for a destination slower than the
	// rows: in memory, then in a temporary file.
	Spool spool.Limits
	// Budget bounds the temporary files of all bodies together; nil is no
	// bound.
	Budget *spool.Budget
	// Held sends nothing until the body is complete, so that its length is
	// known first (see [spool.NewHeld]); writes past the spool's bounds fail
	// with [spool.ErrTooLarge].
	Held bool
}

// A Writer encodes rows into a body on its way to a destination. Encode,
// Close and Abort belong to the goroutine that reads the rows; Wait, Len
// and Stats may be called once Close or Abort has returned.
type Writer struct {
	enc       export.Encoder
	flusher   export.Flusher // enc's, nil when it cannot flush
	zw        *compress.Writer
	sp        *spool.Spool
	rows      int64
	lastFlush time.Time
	err       error // the first failure: Encode's, Close's or Abort's
	ended     bool  // Close or Abort has been called
}

// Start returns a [Writer] of a body encoded by e and sent to dst as o
// says. It fails when the encoder cannot be made (a bad option); nothing
// has been written to dst then.
func Start(dst io.Writer, e Encoding, o Options) (*Writer, error) {
	var sp *spool.Spool
	if o.Held {
		sp = spool.NewHeld(dst, o.Spool, o.Budget)
	} else {
		sp = spool.New(dst, o.Spool, o.Budget)
	}
	zw, err := compress.NewWriter(sp, o.Coding)
	if err != nil {
		sp.Abort(err)
		_ = sp.Wait()
		return nil, err
	}
	enc, err := e.NewEncoder(zw)
	if err != nil {
		_ = zw.Close()
		sp.Abort(err)
		_ = sp.Wait()
		return nil, err
	}
	w := &Writer{enc: enc, zw: zw, sp: sp}
	w.flusher, _ = enc.(export.Flusher)
	return w, nil
}

// Encode encodes one row. After the first row, and then whenever
// [FlushInterval] has passed since the last push, what is encoded is pushed
// on towards the destination, so that the first byte leaves at once and a
// slow database does not keep rows in buffers. It returns the first error
// of the encoder or of the delivery (a client gone or stalled); the caller
// then stops and calls [Writer.Abort].
func (w *Writer) Encode(row [][]byte) error {
	if w.err != nil {
		return w.err
	}
	if err := w.enc.Encode(row); err != nil {
		w.err = err
		return err
	}
	w.rows++
	if w.flusher != nil && (w.rows == 1 || time.Since(w.lastFlush) >= FlushInterval) {
		w.flush()
	}
	return w.err
}

// flush pushes out what the encoder and the compressor hold; errors stay in
// them, sticky, and the next Encode reports them.
func (w *Writer) flush() {
	if w.flusher.Flush() == nil {
		_ = w.zw.Flush()
	}
	w.lastFlush = time.Now()
}

// Rows returns the number of rows encoded.
func (w *Writer) Rows() int64 { return w.rows }

// Close ends a body whose every row was encoded: the encoder's closing
// bytes, the compressor's trailer, and everything into the spool. It
// returns once the bytes are in the spool's hands, not delivered: the
// caller can release the database connection then, and must call
// [Writer.Wait]. It returns the first error met; the caller then calls
// [Writer.Abort], which keeps that error.
func (w *Writer) Close() error {
	if w.ended {
		return w.err
	}
	w.ended = true
	err := w.enc.Close()
	if cerr := w.zw.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = w.sp.Close()
	}
	if w.err == nil {
		w.err = err
	}
	return w.err
}

// Abort ends a body that cannot be completed, with err as its cause (the
// first error met stays the cause if there was one): what has not been
// delivered is dropped, and no closing bytes are written, so that a
// client or a file cannot take the truncated body for a complete one.
// Call [Writer.Wait] after it.
func (w *Writer) Abort(err error) {
	if w.err == nil {
		w.err = err
	}
	if w.err == nil {
		w.err = spool.ErrAborted
	}
	// The spool first: the encoder's and the compressor's closing bytes
	// then go nowhere.
	w.sp.Abort(w.err)
	if !w.ended {
		w.ended = true
		_ = w.enc.Close() // releases what it holds
		_ = w.zw.Close()
	}
}

// Wait returns once delivery has ended: every byte at the destination and
// flushed after a successful [Writer.Close], or the body cut. It returns
// the cause of a cut: the first error met on either side, so that a
// failure of the database is not taken for a failure of the client the
// cut then caused, nor the other way round.
func (w *Writer) Wait() error {
	err := w.sp.Wait()
	if w.err != nil {
		return w.err
	}
	return err
}

// Len returns the bytes of the body so far (compressed, if it is): once
// Close has succeeded, the body's length.
func (w *Writer) Len() int64 { return w.sp.Len() }

// Stats returns what the spool did; they are final once Wait has returned.
func (w *Writer) Stats() spool.Stats { return w.sp.Stats() }
