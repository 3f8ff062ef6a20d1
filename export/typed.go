package export

import (
	"errors"
	"fmt"

	"github.com/informe/informe/internal/dataset"
)

// ErrValue is returned, wrapped, by the Parquet and Arrow encoders for a
// value that does not parse as its column's [dataset.Kind] or does not fit the
// type it is written as; the message names the row and the column.
var ErrValue = errors.New("value does not fit its column's type")

// typedValue is one value of a row parsed for a typed format. A Text
// value is the row's own, which is not copied here: a value that holds no
// pointer costs the garbage collector nothing to write.
type typedValue struct {
	null bool
	// n is an Integer; a Decimal times 10^dataset.DecimalScale; a Date's days
	// since 1970-01-01; a Timestamp's microseconds since 1970-01-01
	// 00:00:00 (on the wall clock) and a Timestamptz's since that instant
	// in UTC.
	n int64
}

// typedRow reads rows of text (or binary) values into typed values, for
// an encoder that keeps none of a row unless all of it reads, so that a
// bad value leaves nothing behind. The Arrow encoder reads the whole row
// with parse before it keeps any of it; the Parquet encoder reads each
// value with begin and value as it gathers it, and drops the row's values
// gathered before a bad one.
type typedRow struct {
	format string // for errors: "parquet", "arrow"
	binary bool   // values in binary (Options.Binary), not text
	cols   []dataset.Column
	vals   []typedValue // parse's
	n      int64        // rows begun so far
}

func newTypedRow(format string, cols []dataset.Column) typedRow {
	return typedRow{format: format, cols: cols}
}

// begin checks that row has a value for each column and counts it.
func (t *typedRow) begin(row [][]byte) error {
	if len(row) != len(t.cols) {
		return rowLenError(len(row), len(t.cols))
	}
	t.n++
	return nil
}

// isNull reports whether v is NULL in a column of kind k: a nil value is;
// so is an empty one, which no non-text kind can hold, and, in a column
// that is never nil (the general report's, which writes a missing value
// as empty text), an empty text.
func isNull(v []byte, k dataset.Kind, nullable bool) bool {
	return v == nil || (len(v) == 0 && (k != dataset.Text || !nullable))
}

// value reads v, a value of kind k other than Text that is not NULL, in
// binary or as text, into a typedValue's n.
func (t *typedRow) value(v []byte, k dataset.Kind) (int64, bool) {
	if t.binary {
		return dataset.BinaryValue(k, v)
	}
	return dataset.ParseValue(k, v)
}

// valueError returns the error for v, the value of column i of the row
// begun last, which value refused: it wraps [ErrValue] and names the row
// (counted from 1) and the column.
func (t *typedRow) valueError(i int, v []byte) error {
	c := &t.cols[i]
	if t.binary {
		return fmt.Errorf("export: %s: row %d, column %s: %w: %d bytes are not a binary %s", t.format, t.n, c.Name, ErrValue, len(v), c.Kind)
	}
	return fmt.Errorf("export: %s: row %d, column %s: %w: %s", t.format, t.n, c.Name, ErrValue, describe(v, c.Kind))
}

// parse parses row into t.vals; see isNull for what is NULL. A Text
// value is row's own. It returns an error from begin or valueError.
func (t *typedRow) parse(row [][]byte) error {
	if err := t.begin(row); err != nil {
		return err
	}
	if t.vals == nil {
		t.vals = make([]typedValue, len(t.cols))
	}
	for i, v := range row {
		c := &t.cols[i]
		tv := &t.vals[i]
		if isNull(v, c.Kind, c.Nullable) {
			*tv = typedValue{null: true}
			continue
		}
		if c.Kind == dataset.Text {
			*tv = typedValue{}
			continue
		}
		n, ok := t.value(v, c.Kind)
		if !ok {
			return t.valueError(i, v)
		}
		*tv = typedValue{n: n}
	}
	return nil
}

// describe says what value v of kind k should have been, quoting at most
// the start of v.
func describe(v []byte, k dataset.Kind) string {
	const max = 40
	q := v
	if len(q) > max {
		q = q[:max]
	}
	want := map[dataset.Kind]string{
		dataset.Integer:     "a 64-bit integer",
		dataset.Decimal:     fmt.Sprintf("a decimal of at most %d digits, %d after the point", dataset.DecimalPrecision, dataset.DecimalScale),
		dataset.Date:        "a date YYYY-MM-DD",
		dataset.Timestamp:   "a timestamp YYYY-MM-DD HH:MM:SS[.ffffff]",
		dataset.Timestamptz: "a timestamp YYYY-MM-DD HH:MM:SS[.ffffff]±HH[:MM[:SS]]",
	}[k]
	return fmt.Sprintf("%q is not %s", q, want)
}
