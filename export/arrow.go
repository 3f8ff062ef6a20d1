package export

import (
	"bufio"
	"fmt"
	"io"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/informe/informe/internal/dataset"
)

// ArrowBatchRows is the number of rows in each record batch of an Arrow
// stream, unless [Flusher.Flush] ends one sooner: an encoder holds one
// batch in memory, never the whole stream.
const ArrowBatchRows = 8192

// arrowEOS is the end-of-stream marker of the IPC stream format: a
// continuation token and a zero length.
var arrowEOS = []byte{0xFF, 0xFF, 0xFF, 0xFF, 0, 0, 0, 0}

// arrowEncoder writes an Arrow IPC stream: the schema message, record
// batches of the rows built column by column, and the end-of-stream
// marker; a continuation writes its batches only.
type arrowEncoder struct {
	bw      *bufio.Writer
	schema  *arrow.Schema
	b       *array.RecordBuilder
	row     typedRow
	cont    bool
	started bool // the schema is written
	rows    int  // rows in b
	// batchRows is the size of a record batch, ArrowBatchRows but in
	// tests of many batches.
	batchRows int
	err       error
	closed    bool
}

// arrowType returns the Arrow type of a column of kind k.
func arrowType(k dataset.Kind) arrow.DataType {
	switch k {
	case dataset.Integer:
		return arrow.PrimitiveTypes.Int64
	case dataset.Decimal:
		return &arrow.Decimal128Type{Precision: dataset.DecimalPrecision, Scale: dataset.DecimalScale}
	case dataset.Date:
		return arrow.FixedWidthTypes.Date32
	case dataset.Timestamp:
		return &arrow.TimestampType{Unit: arrow.Microsecond}
	case dataset.Timestamptz:
		return &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}
	}
	return arrow.BinaryTypes.String
}

// NewArrow returns an encoder that writes rows of cols to w as an Apache
// Arrow IPC stream (the streaming format, not the file format), with the
// columns' real types: Integer as Int64, Decimal as
// Decimal128(dataset.DecimalPrecision, dataset.DecimalScale), Date as Date32, Timestamp as
// Timestamp(µs) without a time zone, Timestamptz as Timestamp(µs, "UTC"),
// Text as Utf8. Every field is nullable, with the same NULLs as
// [NewParquet] writes.
//
// Rows go out in record batches of [ArrowBatchRows]; Flush ends a batch
// early and writes it (so call it now and then, not after every row).
// With cont the encoder continues a body that another Arrow encoder of the
// same columns began and will end (see [Options].Continue): it writes its
// record batches only, neither the schema nor the end of the stream.
//
// Encode returns an error wrapping [ErrValue], naming the row and the
// column, for a value that does not parse as its kind. After any error
// Close writes nothing more: the stream then lacks its end-of-stream
// marker.
func NewArrow(w io.Writer, cols []dataset.Column, cont bool) Encoder {
	fields := make([]arrow.Field, len(cols))
	for i, c := range cols {
		fields[i] = arrow.Field{Name: c.Name, Type: arrowType(c.Kind), Nullable: true}
	}
	sc := arrow.NewSchema(fields, nil)
	return &arrowEncoder{
		bw:        bufio.NewWriterSize(w, 64<<10),
		schema:    sc,
		b:         array.NewRecordBuilder(memory.DefaultAllocator, sc),
		row:       newTypedRow("arrow", cols),
		cont:      cont,
		started:   cont,
		batchRows: ArrowBatchRows,
	}
}

func (e *arrowEncoder) Encode(row [][]byte) error {
	if e.closed {
		return ErrClosed
	}
	if e.err != nil {
		return e.err
	}
	if err := e.row.parse(row); err != nil {
		e.err = err
		return err
	}
	for i, v := range e.row.vals {
		switch f := e.b.Field(i).(type) {
		case *array.StringBuilder:
			if v.null {
				f.AppendNull()
			} else {
				f.BinaryBuilder.Append(row[i])
			}
		case *array.Int64Builder:
			if v.null {
				f.AppendNull()
			} else {
				f.Append(v.n)
			}
		case *array.Decimal128Builder:
			if v.null {
				f.AppendNull()
			} else {
				f.Append(decimal128.FromI64(v.n))
			}
		case *array.Date32Builder:
			if v.null {
				f.AppendNull()
			} else {
				f.Append(arrow.Date32(v.n))
			}
		case *array.TimestampBuilder:
			if v.null {
				f.AppendNull()
			} else {
				f.Append(arrow.Timestamp(v.n))
			}
		}
	}
	e.rows++
	if e.rows == e.batchRows {
		e.err = e.writeBatch()
	}
	return e.err
}

// writeBatch writes the schema if it is not written yet, then the rows
// built so far as a record batch, if there are any.
func (e *arrowEncoder) writeBatch() error {
	if !e.started {
		e.started = true
		p := ipc.GetSchemaPayload(e.schema, memory.DefaultAllocator)
		_, err := p.WritePayload(e.bw)
		p.Release()
		if err != nil {
			return fmt.Errorf("export: arrow: %w", err)
		}
	}
	if e.rows == 0 {
		return nil
	}
	rec := e.b.NewRecordBatch()
	defer rec.Release()
	e.rows = 0
	p, err := ipc.GetRecordBatchPayload(rec)
	if err != nil {
		return fmt.Errorf("export: arrow: %w", err)
	}
	defer p.Release()
	if _, err := p.WritePayload(e.bw); err != nil {
		return fmt.Errorf("export: arrow: %w", err)
	}
	return nil
}

// Flush writes the rows encoded so far as a record batch, after the
// schema when it is not written yet, and flushes; see [Flusher]. A
// continuation must not follow the first encoder's output before the
// first encoder has flushed: its schema comes first.
func (e *arrowEncoder) Flush() error {
	if e.err != nil || e.closed {
		return e.err
	}
	if e.err = e.writeBatch(); e.err == nil {
		if err := e.bw.Flush(); err != nil {
			e.err = fmt.Errorf("export: arrow: %w", err)
		}
	}
	return e.err
}

// Close writes the last record batch and, unless the encoder continues
// another's body, the end-of-stream marker, and flushes.
func (e *arrowEncoder) Close() error {
	if e.closed {
		return e.err
	}
	e.closed = true
	defer e.b.Release()
	if e.err != nil {
		return e.err
	}
	if e.err = e.writeBatch(); e.err != nil {
		return e.err
	}
	if !e.cont {
		if _, err := e.bw.Write(arrowEOS); err != nil {
			e.err = fmt.Errorf("export: arrow: %w", err)
			return e.err
		}
	}
	if err := e.bw.Flush(); err != nil {
		e.err = fmt.Errorf("export: arrow: %w", err)
	}
	return e.err
}
