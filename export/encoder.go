package export

import (
	"errors"
	"fmt"
	"io"

	"github.com/informe/informe/internal/dataset"
)

// An Encoder writes rows to an io.Writer in one format.
//
// Encoders buffer their output, like encoding/csv.Writer: Encode may not
// write anything yet, and the first error an encoder meets (from the
// underlying writer or from a bad row) is kept and returned by every later
// Encode and by Close. An Encoder is not safe for concurrent use.
type Encoder interface {
	// Encode writes one row: a value per column, in column order, as text
	// in the API's formats, nil for SQL NULL (see [dataset.Column]). Encode does
	// not retain row or its byte slices after it returns, so the caller
	// may reuse them. A row with the wrong number of values is an error.
	Encode(row [][]byte) error

	// Close finishes the output (closing brackets, the workbook) and
	// flushes it to the writer, and returns the first error met by Encode
	// or Close. Close does not close the underlying writer. Callers call
	// Close on every path, also after an error; calls after the first
	// return the first call's result, and Encode after Close returns
	// [ErrClosed].
	Close() error
}

// Flusher is implemented by encoders that can push the rows encoded so far
// to their writer before Close: all of this package's. A streaming
// response flushes now and then so that a client is not kept waiting
// behind a buffer while the database is slow. An XLSX workbook is only
// complete at Close, but its rows go out as they are flushed.
type Flusher interface {
	Flush() error
}

// ErrClosed is returned by Encode on an [Encoder] that has been closed.
var ErrClosed = errors.New("export: encoder closed")

// Options configure [NewEncoder]; each format reads only its own fields.
type Options struct {
	Envelope *Envelope // JSON: wrap rows in {"data":[...], ...}; nil for a bare array
	CSV      CSVOptions
	Sheet    string // XLSX: the first worksheet's name; see [XLSXOptions]
	// Rows is the number of rows that will be encoded, or negative when
	// unknown; only XLSX reads it (see [XLSXOptions.Rows]), and its Encode
	// and Close fail when the rows encoded differ ([ErrRowCount]).
	Rows int64
	// Continue makes the encoder write the continuation of a body that
	// another encoder of the same format and columns began and will end:
	// its rows only, so that the first encoder's output, then this one's,
	// then the first one's closing bytes make the body one encoder would
	// have written. CSV leaves out the byte order mark and the header;
	// a JSON array (or envelope) puts a comma before every row, the first
	// included, and neither opens nor closes the array; NDJSON is
	// unchanged. The first encoder must have encoded a row before the
	// continuation's bytes follow its own. An Arrow stream continues
	// with record batches: the first encoder writes the schema and the
	// end of the stream. An XLSX or Parquet continuation's output is not
	// a piece of the body but what the first encoder, a [Joiner], joins
	// into its workbook or file.
	Continue bool
	// Binary makes a typed encoder (Parquet, Arrow; see [Format.Typed])
	// take each row's values in binary (see [dataset.AppendValue]), not as text;
	// the other formats ignore it.
	Binary bool
	// First is the index, from 0, of a continuation's first row in the
	// whole body; XLSX reads it to number its rows and sheets, and a
	// [Joiner] checks that its continuations follow on.
	First int64
}

// NewEncoder returns an encoder of rows of cols in format f, writing to w.
// It returns an error for a format it does not know, an invalid
// CSV delimiter (wrapping [ErrInvalidDelimiter]), a decimal comma beside
// a comma delimiter ([ErrDecimalComma]) or an invalid sheet name;
// nothing has been written to w then.
func NewEncoder(w io.Writer, f Format, cols []dataset.Column, opts Options) (Encoder, error) {
	switch f {
	case JSON:
		e := NewJSON(w, cols, opts.Envelope)
		e.(*jsonEncoder).cont = opts.Continue
		return e, nil
	case NDJSON:
		return NewNDJSON(w, cols), nil
	case CSV:
		if err := opts.CSV.validate(); err != nil {
			return nil, err
		}
		c := opts.CSV
		if opts.Continue {
			c.NoHeader, c.BOM = true, false
		}
		return NewCSV(w, cols, c), nil
	case XLSX:
		xo := XLSXOptions{Sheet: opts.Sheet, Rows: opts.Rows}
		if opts.Continue {
			return newXLSXContinuation(w, cols, xo, opts.First)
		}
		return NewXLSX(w, cols, xo)
	case Parquet:
		var e *parquetEncoder
		var err error
		if opts.Continue {
			e, err = newParquetContinuation(w, cols, opts.First)
		} else {
			e, err = newParquet(w, cols, ParquetRowGroupRows)
		}
		if err != nil {
			return nil, err
		}
		e.row.binary = opts.Binary
		return e, nil
	case Arrow:
		e := NewArrow(w, cols, opts.Continue)
		e.(*arrowEncoder).row.binary = opts.Binary
		return e, nil
	}
	return nil, fmt.Errorf("export: %w: %v", ErrUnknownFormat, f)
}

// Spec is what [NewEncoder] needs besides the writer: a body's encoding,
// decided before its first row.
type Spec struct {
	Format  Format
	Columns []dataset.Column
	Options Options
}

// NewEncoder returns the encoder of s writing to w; see [NewEncoder].
func (s Spec) NewEncoder(w io.Writer) (Encoder, error) {
	return NewEncoder(w, s.Format, s.Columns, s.Options)
}

// Continuation returns the spec of a part of s's body that continues it
// from its row first, counted from 0 (see [Options].Continue).
func (s Spec) Continuation(first int64) Spec {
	s.Options.Continue, s.Options.First = true, first
	return s
}

// rowLenError is the error for a row whose length does not match the columns.
func rowLenError(got, want int) error {
	return fmt.Errorf("export: row has %d values, want %d", got, want)
}
