package export

import (
	"bufio"
	"fmt"
	"io"

	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/schema"
)

// ParquetRowGroupRows is the number of rows in each row group of a Parquet
// file but its last: an encoder holds one row group, compressed, in
// memory, never the whole file.
const ParquetRowGroupRows = 65_536

// parquetPageBytes is the size past which a column's page is written out.
const parquetPageBytes = 128 << 10

// parquetBatchRows is how many rows an encoder gathers, parsed, before it
// hands them to the column writers.
const parquetBatchRows = 1024

// parquetEncoder writes a Parquet file through arrow-go's column writers:
// rows are parsed into typed values, gathered column by column in batches,
// and written into a buffered row group that goes out whole, compressed,
// every ParquetRowGroupRows rows.
type parquetEncoder struct {
	bw    *bufio.Writer
	fw    *file.Writer
	rg    file.BufferedRowGroupWriter // nil between row groups
	row   typedRow
	cols  []parquetColumn
	batch int // rows gathered in cols
	group int // rows in rg, gathered ones included
	// groupRows is the size of a row group, ParquetRowGroupRows but in
	// tests of many row groups.
	groupRows int
	err       error
	closed    bool
}

// parquetColumn gathers one column's values of a batch: only the non-null
// ones, with a definition level per row (1 present, 0 null).
type parquetColumn struct {
	defs  []int16
	i64   []int64
	i32   []int32
	bytes []parquet.ByteArray
	arena []byte // the text values' bytes, which Encode does not retain
}

// parquetNode returns the schema node of a column: every column is
// optional, since a general report row leaves out what a contract lacks.
func parquetNode(c Column) (schema.Node, error) {
	var (
		logical  schema.LogicalType
		physical parquet.Type
	)
	switch c.Kind {
	case Integer:
		logical, physical = schema.NewIntLogicalType(64, true), parquet.Types.Int64
	case Decimal:
		logical, physical = schema.NewDecimalLogicalType(DecimalPrecision, DecimalScale), parquet.Types.Int64
	case Date:
		logical, physical = schema.DateLogicalType{}, parquet.Types.Int32
	case Timestamp:
		logical, physical = schema.NewTimestampLogicalType(false, schema.TimeUnitMicros), parquet.Types.Int64
	case Timestamptz:
		logical, physical = schema.NewTimestampLogicalType(true, schema.TimeUnitMicros), parquet.Types.Int64
	default:
		logical, physical = schema.StringLogicalType{}, parquet.Types.ByteArray
	}
	return schema.NewPrimitiveNodeLogical(c.Name, parquet.Repetitions.Optional, logical, physical, -1, -1)
}

// NewParquet returns an encoder that writes rows of cols to w as an Apache
// Parquet file, with the columns' real types: Integer as INT64, Decimal as
// DECIMAL(DecimalPrecision, DecimalScale), Date as DATE, Timestamp as
// TIMESTAMP(MICROS) not adjusted to UTC, Timestamptz as TIMESTAMP(MICROS)
// adjusted to UTC, and Text as a UTF-8 STRING. Every column is optional:
// a nil value is NULL, and so is an empty one of a non-text kind, or an
// empty text in a column that is never nil (see [Column]: the general
// report writes what a row lacks as empty text).
//
// Rows are written in row groups of [ParquetRowGroupRows] as they come,
// Snappy-compressed (which every Parquet reader reads), so memory holds
// one compressed row group at most. Values are plain-encoded.
//
// Encode returns an error wrapping [ErrValue], naming the row and the
// column, for a value that does not parse as its kind. After any error
// Close writes nothing more: what reached w by then is not a Parquet file,
// which is only complete with its footer. Flush pushes out the row groups
// already complete. It returns an error for a column name Parquet cannot
// take; nothing has been written to w then.
func NewParquet(w io.Writer, cols []Column) (Encoder, error) {
	return newParquet(w, cols, ParquetRowGroupRows)
}

func newParquet(w io.Writer, cols []Column, groupRows int) (*parquetEncoder, error) {
	fields := make(schema.FieldList, len(cols))
	for i, c := range cols {
		n, err := parquetNode(c)
		if err != nil {
			return nil, fmt.Errorf("export: parquet: column %s: %w", c.Name, err)
		}
		fields[i] = n
	}
	root, err := schema.NewGroupNode("schema", parquet.Repetitions.Required, fields, -1)
	if err != nil {
		return nil, fmt.Errorf("export: parquet: %w", err)
	}
	props := []parquet.WriterProperty{
		parquet.WithCompression(compress.Codecs.Snappy),
		parquet.WithCreatedBy("informe"),
	}
	// Plain encoding, no dictionaries: arrow-go's dictionary encoder
	// costs a hash and an allocation per text value, about 40% more CPU
	// per report row for 30% less output (measured: docs/architecture.md).
	// Statistics (min, max) on typed columns only: readers skip row groups
	// by date or amount, rarely by a text's order.
	props = append(props, parquet.WithDictionaryDefault(false))
	// Each column buffers its page until the page is full: with 74
	// columns, arrow-go's 1 MiB default holds about 74 MiB of pages (and
	// the Go heap twice that) for every export; 128 KiB pages compress
	// about as well.
	props = append(props, parquet.WithDataPageSize(parquetPageBytes))
	for _, c := range cols {
		props = append(props, parquet.WithStatsFor(c.Name, c.Kind != Text))
	}
	// arrow-go closes its sink at the end of the file when the sink can
	// close; a bufio.Writer cannot, so w stays open, the caller's.
	bw := bufio.NewWriterSize(w, 64<<10)
	fw, err := file.NewParquetWriterWithError(bw, root, file.WithWriterProps(parquet.NewWriterProperties(props...)))
	if err != nil {
		return nil, fmt.Errorf("export: parquet: %w", err)
	}
	e := &parquetEncoder{bw: bw, fw: fw, row: newTypedRow("parquet", cols), cols: make([]parquetColumn, len(cols)), groupRows: groupRows}
	for i := range e.cols {
		e.cols[i].defs = make([]int16, 0, parquetBatchRows)
	}
	return e, nil
}

func (e *parquetEncoder) Encode(row [][]byte) error {
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
		c := &e.cols[i]
		if v.null {
			c.defs = append(c.defs, 0)
			continue
		}
		c.defs = append(c.defs, 1)
		switch e.row.cols[i].Kind {
		case Text:
			start := len(c.arena)
			c.arena = append(c.arena, v.text...)
			c.bytes = append(c.bytes, c.arena[start:len(c.arena):len(c.arena)])
		case Date:
			c.i32 = append(c.i32, int32(v.n))
		default:
			c.i64 = append(c.i64, v.n)
		}
	}
	e.batch++
	e.group++
	if e.batch == parquetBatchRows || e.group == e.groupRows {
		e.err = e.writeBatch()
	}
	if e.err == nil && e.group == e.groupRows {
		e.err = e.endGroup()
	}
	return e.err
}

// writeBatch hands the gathered rows to the row group's column writers.
func (e *parquetEncoder) writeBatch() (err error) {
	if e.batch == 0 {
		return nil
	}
	defer func() {
		// arrow-go's writers panic on some failures of their sink.
		if p := recover(); p != nil {
			err = fmt.Errorf("export: parquet: %v", p)
		}
	}()
	if e.rg == nil {
		if e.rg, err = e.fw.AppendBufferedRowGroupChecked(); err != nil {
			return fmt.Errorf("export: parquet: %w", err)
		}
	}
	for i := range e.cols {
		c := &e.cols[i]
		cw, err := e.rg.Column(i)
		if err != nil {
			return fmt.Errorf("export: parquet: %w", err)
		}
		switch w := cw.(type) {
		case *file.Int64ColumnChunkWriter:
			_, err = w.WriteBatch(c.i64, c.defs, nil)
		case *file.Int32ColumnChunkWriter:
			_, err = w.WriteBatch(c.i32, c.defs, nil)
		case *file.ByteArrayColumnChunkWriter:
			_, err = w.WriteBatch(c.bytes, c.defs, nil)
		default:
			err = fmt.Errorf("unexpected column writer %T", cw)
		}
		if err != nil {
			return fmt.Errorf("export: parquet: column %s: %w", e.row.cols[i].Name, err)
		}
		c.defs, c.i64, c.i32, c.bytes, c.arena = c.defs[:0], c.i64[:0], c.i32[:0], c.bytes[:0], c.arena[:0]
	}
	e.batch = 0
	return nil
}

// endGroup writes the row group out.
func (e *parquetEncoder) endGroup() (err error) {
	if e.rg == nil {
		return nil
	}
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("export: parquet: %v", p)
		}
	}()
	rg := e.rg
	e.rg, e.group = nil, 0
	if err := rg.Close(); err != nil {
		return fmt.Errorf("export: parquet: %w", err)
	}
	return nil
}

// Flush writes out the row groups complete so far; see [Flusher]. The
// rows of the row group being gathered stay until it is full or the file
// ends.
func (e *parquetEncoder) Flush() error {
	if e.err != nil || e.closed {
		return e.err
	}
	if err := e.bw.Flush(); err != nil {
		e.err = fmt.Errorf("export: parquet: %w", err)
	}
	return e.err
}

// Close writes the last row group and the footer, and flushes.
func (e *parquetEncoder) Close() error {
	if e.closed {
		return e.err
	}
	e.closed = true
	if e.err != nil {
		return e.err
	}
	if err := e.writeBatch(); err != nil {
		e.err = err
		return err
	}
	if err := e.endGroup(); err != nil {
		e.err = err
		return err
	}
	if err := e.fw.Close(); err != nil {
		e.err = fmt.Errorf("export: parquet: %w", err)
		return e.err
	}
	if err := e.bw.Flush(); err != nil {
		e.err = fmt.Errorf("export: parquet: %w", err)
	}
	return e.err
}
