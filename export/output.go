package export

import (
	"bufio"
	"io"
)

// state is an encoder's error, kept as encoding/csv.Writer keeps its own:
// the first error met sticks, and every later call returns it.
type state struct {
	err      error // the first error; after close, the error of every call but Close
	closed   bool
	closeErr error // what close returned, which it returns again
}

// fail keeps err, unless an error came before, and returns the first
// error.
func (s *state) fail(err error) error {
	if s.err == nil {
		s.err = err
	}
	return s.err
}

// checkRow returns the first error or, for a row of other than n values,
// the error that says so, which sticks.
func (s *state) checkRow(row [][]byte, n int) error {
	if s.err == nil && len(row) != n {
		s.err = rowLenError(len(row), n)
	}
	return s.err
}

// close ends the output once: it runs finish, unless an error came
// first, and returns the first error, as every later call to close does.
// Every other call then gets closed as its error.
func (s *state) close(closed error, finish func() error) error {
	if !s.closed {
		s.closed = true
		if s.err == nil {
			s.err = finish()
		}
		s.closeErr, s.err = s.err, closed
	}
	return s.closeErr
}

// An Output is a text encoder's buffered output, kept as
// encoding/csv.Writer keeps its own: writes are buffered, the first error
// met (the writer's, or one the encoder reports with [Output.Fail])
// sticks and is returned by every later call, and Close ends the output
// once. The CSV and JSON encoders write through one, and so does the
// OData feed.
type Output struct {
	bw        *bufio.Writer
	closedErr error // what a call after Close returns
	state
}

// bufSize is the write buffer of an [Output]: large enough that a page of
// rows reaches the writer in few calls, small enough to not matter per
// request.
const bufSize = 64 << 10

// NewOutput returns an Output that buffers what goes to w. After Close,
// its calls return closed, or [ErrClosed] when closed is nil.
func NewOutput(w io.Writer, closed error) *Output {
	if closed == nil {
		closed = ErrClosed
	}
	return &Output{bw: bufio.NewWriterSize(w, bufSize), closedErr: closed}
}

// Err returns the first error met; after Close, the error NewOutput was
// given.
func (o *Output) Err() error { return o.err }

// Fail keeps err as the output's error, unless an error came before, and
// returns the first error.
func (o *Output) Fail(err error) error { return o.fail(err) }

// Write buffers b, unless an error came before, and returns the first
// error. Unlike an [io.Writer], it says nothing of the bytes written.
func (o *Output) Write(b []byte) error {
	if o.err == nil {
		_, o.err = o.bw.Write(b)
	}
	return o.err
}

// Flush writes what is buffered to the underlying writer and returns the
// first error.
func (o *Output) Flush() error {
	if o.err == nil {
		o.err = o.bw.Flush()
	}
	return o.err
}

// Close ends the output once, unless an error came first: finish, when
// not nil, writes the output's last bytes, and Close flushes. It returns
// the first error, as every later call to Close does. Close does not
// close the underlying writer.
func (o *Output) Close(finish func() error) error {
	return o.close(o.closedErr, func() error {
		if finish != nil {
			if err := finish(); err != nil {
				return err
			}
		}
		return o.bw.Flush()
	})
}
