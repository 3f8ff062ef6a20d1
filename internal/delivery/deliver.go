package delivery

import (
	"fmt"
	"io"

	"github.com/informe/informe/internal/spool"
)

// Hooks are a caller's own steps inside [Deliver]; each may be nil.
type Hooks struct {
	// Row follows each row of the first part once it is encoded, with the
	// number of rows encoded so far: for a progress display.
	Row func(rows int64)
	// Read follows the end of the reading, before the body is ended: every
	// cursor is closed by then, their connections released. It gets the
	// body's error so far (nil when every row was encoded) and the error
	// of closing the first cursor, which ended its snapshot after its last
	// row was read, and returns the body's error. Without it, a failed
	// close fails the body.
	Read func(err, closeErr error) error
	// Closed follows a successful [Writer.Close], before [Writer.Wait]:
	// the body's length (compressed, if it is) is known, and nothing of a
	// held body has been sent.
	Closed func(length int64)
}

// Result says what [Deliver] did.
type Result struct {
	// Started is false when the encoder could not be made: nothing was
	// written then, and Stats are empty.
	Started bool
	Rows    int64       // rows encoded, of every part
	Bytes   int64       // the body's bytes, compressed if it is
	Stats   spool.Stats // what the spool did
}

// Deliver sends first's rows, then those of the later parts (nil for
// none), as one body encoded by e and sent to dst as o says, and ends it
// the one way every body ends: [Writer.Close] when every row was read and
// encoded, [Writer.Abort] otherwise, then [Writer.Wait]. A failing part
// stops the others and first; first and every part are closed on every
// path, before h.Read. When the encoder cannot be made, nothing is written
// to dst.
//
// It returns the body's error: the first met by the rows, the encoder, the
// delivery (a destination gone or stalled) or h.Read; [Reason] says whose
// it was.
func Deliver(dst io.Writer, e Encoding, o Options, first Rows, parts *Parts, h Hooks) (Result, error) {
	w, err := Start(dst, e, o)
	if err != nil {
		err = fmt.Errorf("encoder: %w", err)
		parts.Abort(err)
		closeErr := first.Close()
		parts.Wait()
		return Result{}, h.read(err, closeErr)
	}
	for first.Next() {
		if err = w.Encode(first.Values()); err != nil {
			break
		}
		if h.Row != nil {
			h.Row(w.rows)
		}
	}
	err = h.read(parts.follow(w, first, err))
	if err == nil {
		if err = w.Close(); err == nil && h.Closed != nil {
			h.Closed(w.Len())
		}
	}
	if err != nil {
		w.Abort(err)
	}
	err = w.Wait()
	return Result{Started: true, Rows: w.rows, Bytes: w.Len(), Stats: w.Stats()}, err
}

// read is h.Read, or, without it, the first of err and closeErr.
func (h Hooks) read(err, closeErr error) error {
	if h.Read != nil {
		return h.Read(err, closeErr)
	}
	if err == nil {
		return closeErr
	}
	return err
}
