package export

import (
	"errors"
	"fmt"
	"io"
	"math"
	"sync"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/metadata"
	"github.com/apache/arrow-go/v18/parquet/schema"

	"github.com/informe/informe/internal/dataset"
)

// ParquetRowGroupRows is the number of rows in each row group of a Parquet
// file but its last: an encoder holds one row group, compressed, in
// memory, never the whole file.
const ParquetRowGroupRows = 65_536

// parquetPageBytes is the size past which a column's page is written out.
const parquetPageBytes = 128 << 10

// parquetBatchRows is how many rows an encoder gathers, parsed, before it
// hands them to the writing goroutine.
const parquetBatchRows = 1024

// parquetBatchTextBytes is the room a batch first makes for a text
// column's values.
const parquetBatchTextBytes = 16 * parquetBatchRows

// parquetEncoder writes a Parquet file through arrow-go's column writers,
// in two goroutines. The caller's parses rows into typed values and
// gathers them column by column in batches; a writing goroutine, started
// by newParquet, hands each batch to the column writers of a buffered row
// group (which encode and compress it) while the next batch is gathered,
// and writes the row group out, compressed, every groupRows rows. Two
// batches exist, so at most one is written while one is gathered.
//
// The file writer writes to a sink in memory, which Encode, Flush and
// Close empty into w: w is only ever written by the caller's goroutine
// during the encoder's calls, as with every [Encoder], so the caller can
// use w between them.
type parquetEncoder struct {
	w     io.Writer
	pos   int64   // bytes written to w
	part  *frames // a continuation's output, written instead of w; see parquet_join.go
	magic int     // bytes of the file's leading magic number a continuation has dropped
	row   typedRow
	cur   *parquetBatch // the batch being gathered
	group int           // rows of the row group being gathered, handed off ones included
	// groupRows is the size of a row group, ParquetRowGroupRows but in
	// tests of many row groups.
	groupRows int
	ended     int64 // row groups handed off whole to the writing goroutine
	encoded   int64 // rows encoded, a continuation's own, the first encoder's with those joined

	parts  []*metadata.FileMetaData // the joined continuations' row groups, placed in the body
	joined bool                     // a continuation was joined: no more rows of its own

	pw    *parquetWriter
	jobs  chan parquetJob    // to the writing goroutine; closed by Close
	free  chan *parquetBatch // batches the writing goroutine is done with
	reply chan error         // the writing goroutine's error, for a job that asks
	done  chan struct{}      // closed when the writing goroutine returns

	// state holds the sticky error; Close, which has the writing
	// goroutine to stop, is the encoder's own, and leaves err as it was.
	state
}

// parquetBatch holds rows gathered column by column.
type parquetBatch struct {
	cols []parquetColumn
	rows int
}

// parquetColumn gathers one column's values of a batch: only the non-null
// ones, with a definition level per row (1 present, 0 null) in defs, which
// holds parquetBatchRows of them, the batch's rows first. Text values
// are copied, since Encode does not retain them, into text end to end; the
// writing goroutine cuts them out again at ends.
type parquetColumn struct {
	// The column's kind and whether an empty value is NULL (see
	// isNull), kept here so that Encode reads one struct per value.
	kind      dataset.Kind
	emptyNull bool
	defs      []int16
	i64       []int64
	i32       []int32
	text      []byte // the text values, end to end
	ends      []int  // where each text value ends in text
}

func (b *parquetBatch) reset() {
	for i := range b.cols {
		c := &b.cols[i]
		c.i64, c.i32, c.text, c.ends = c.i64[:0], c.i32[:0], c.text[:0], c.ends[:0]
	}
	b.rows = 0
}

// parquetJob is what the writing goroutine does next, in this order.
type parquetJob struct {
	batch    *parquetBatch // rows to write, or nil; then returned on free
	endGroup bool          // end the row group and write it to the sink
	finish   bool          // end the file: its footer
	reply    bool          // send the first error so far on reply
}

// parquetWriter is the writing goroutine's side of a parquetEncoder.
type parquetWriter struct {
	fw    *file.Writer
	rg    file.BufferedRowGroupWriter // nil between row groups
	cols  []dataset.Column
	views []parquet.ByteArray // a text column's values, made from a batch
	sink  parquetSink
	// footerAt is where the file's footer begins in the sink's bytes,
	// once the file has ended.
	footerAt int64

	groups atomic.Int64  // row groups written to the sink
	failed chan struct{} // closed at the first error, once err is set
	err    error
}

// parquetSink holds what the file writer writes until the encoder's
// caller moves it on to w.
type parquetSink struct {
	mu      sync.Mutex
	buf     []byte
	written int64 // bytes written to s, moved on or not
}

func (s *parquetSink) Write(p []byte) (int, error) {
	s.mu.Lock()
	s.buf = append(s.buf, p...)
	s.written += int64(len(p))
	s.mu.Unlock()
	return len(p), nil
}

// size returns the bytes written to s so far.
func (s *parquetSink) size() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.written
}

// moveTo hands what s holds, up to its byte end (counted from the first
// byte ever written to s), to emit, and keeps the rest. The writing
// goroutine waits meanwhile if it writes to s, as it would on w itself.
func (s *parquetSink) moveTo(emit func([]byte) error, end int64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := len(s.buf) - int(min(max(s.written-end, 0), int64(len(s.buf))))
	if k == 0 {
		return nil
	}
	err := emit(s.buf[:k])
	s.buf = s.buf[:copy(s.buf, s.buf[k:])]
	return err
}

// parquetNode returns the schema node of a column: every column is
// optional, since a general report row leaves out what a contract lacks.
func parquetNode(c dataset.Column) (schema.Node, error) {
	var (
		logical  schema.LogicalType
		physical parquet.Type
	)
	switch c.Kind {
	case dataset.Integer:
		logical, physical = schema.NewIntLogicalType(64, true), parquet.Types.Int64
	case dataset.Decimal:
		logical, physical = schema.NewDecimalLogicalType(dataset.DecimalPrecision, dataset.DecimalScale), parquet.Types.Int64
	case dataset.Date:
		logical, physical = schema.DateLogicalType{}, parquet.Types.Int32
	case dataset.Timestamp:
		logical, physical = schema.NewTimestampLogicalType(false, schema.TimeUnitMicros), parquet.Types.Int64
	case dataset.Timestamptz:
		logical, physical = schema.NewTimestampLogicalType(true, schema.TimeUnitMicros), parquet.Types.Int64
	default:
		logical, physical = schema.StringLogicalType{}, parquet.Types.ByteArray
	}
	return schema.NewPrimitiveNodeLogical(c.Name, parquet.Repetitions.Optional, logical, physical, -1, -1)
}

// NewParquet returns an encoder that writes rows of cols to w as an Apache
// Parquet file, with the columns' real types: Integer as INT64, Decimal as
// DECIMAL(dataset.DecimalPrecision, dataset.DecimalScale), Date as DATE, Timestamp as
// TIMESTAMP(MICROS) not adjusted to UTC, Timestamptz as TIMESTAMP(MICROS)
// adjusted to UTC, and Text as a UTF-8 STRING. Every column is optional:
// a nil value is NULL, and so is an empty one of a non-text kind, or an
// empty text in a column that is never nil (see [Column]: the general
// report writes what a row lacks as empty text).
//
// Rows are written in row groups of [ParquetRowGroupRows] as they come,
// Snappy-compressed (which every Parquet reader reads), so memory holds
// one compressed row group (twice while it goes out) and two batches of
// rows at most. Values are plain-encoded. The encoder encodes and
// compresses columns on a goroutine of its own while Encode parses the
// next rows, so that a second core takes part; w is still written only
// during Encode, Flush and Close, by their caller. Close stops that
// goroutine, after an error too: call Close on every path, as [Encoder]
// asks.
//
// Encode returns an error wrapping [ErrValue], naming the row and the
// column, for a value that does not parse as its kind; an error of the
// column writers comes from a later Encode, or Flush or Close. After any
// error Close writes nothing more: what reached w by then is not a
// Parquet file, which is only complete with its footer. Flush pushes out
// the row groups already complete. It returns an error for a column name
// Parquet cannot take; nothing has been written to w then.
func NewParquet(w io.Writer, cols []dataset.Column) (Encoder, error) {
	return newParquet(w, cols, ParquetRowGroupRows)
}

func newParquet(w io.Writer, cols []dataset.Column, groupRows int) (*parquetEncoder, error) {
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
		props = append(props, parquet.WithStatsFor(c.Name, c.Kind != dataset.Text))
	}
	pw := &parquetWriter{cols: cols, failed: make(chan struct{})}
	// arrow-go closes its sink at the end of the file when the sink can
	// close; the sink cannot, and w stays open, the caller's.
	pw.fw, err = file.NewParquetWriterWithError(&pw.sink, root, file.WithWriterProps(parquet.NewWriterProperties(props...)))
	if err != nil {
		return nil, fmt.Errorf("export: parquet: %w", err)
	}
	e := &parquetEncoder{
		w:         w,
		row:       newTypedRow("parquet", cols),
		groupRows: groupRows,
		pw:        pw,
		jobs:      make(chan parquetJob),
		free:      make(chan *parquetBatch, 2),
		reply:     make(chan error, 1),
		done:      make(chan struct{}),
	}
	e.cur = newParquetBatch(cols)
	e.free <- newParquetBatch(cols)
	go pw.run(e.jobs, e.free, e.reply, e.done)
	return e, nil
}

// newParquetBatch returns a batch for rows of cols, with room for the
// values of parquetBatchRows rows but for text, which grows as it needs.
func newParquetBatch(cols []dataset.Column) *parquetBatch {
	b := &parquetBatch{cols: make([]parquetColumn, len(cols))}
	for i, c := range cols {
		pc := parquetColumn{kind: c.Kind, emptyNull: isNull([]byte{}, c.Kind, c.Nullable), defs: make([]int16, parquetBatchRows)}
		switch c.Kind {
		case dataset.Text:
			pc.ends = make([]int, 0, parquetBatchRows)
			pc.text = make([]byte, 0, parquetBatchTextBytes)
		case dataset.Date:
			pc.i32 = make([]int32, 0, parquetBatchRows)
		default:
			pc.i64 = make([]int64, 0, parquetBatchRows)
		}
		b.cols[i] = pc
	}
	return b
}

func (e *parquetEncoder) Encode(row [][]byte) error {
	if e.closed {
		return ErrClosed
	}
	if e.err != nil {
		return e.err
	}
	if e.joined {
		e.err = errors.New("export: parquet: a row after a continuation was joined")
		return e.err
	}
	if err := e.row.begin(row); err != nil {
		e.err = err
		return err
	}
	// Each value is read straight into its column; a definition level
	// goes in once the value is in, so that at a bad value refuse knows
	// which of the row's values, those before it, to drop.
	b, r := e.cur, e.cur.rows
	cols := b.cols[:len(row)]
	for i, v := range row {
		c := &cols[i]
		k := c.kind
		// isNull, with its answer for an empty value worked out in advance.
		if len(v) == 0 && (v == nil || c.emptyNull) {
			c.defs[r] = 0
			continue
		}
		switch k {
		case dataset.Text:
			// c.text = append(c.text, v...) would store the slice's
			// pointer every time, with a GC write barrier; reslicing
			// c.text to itself stores its length only.
			if n := len(c.text) + len(v); n <= cap(c.text) {
				c.text = c.text[:n]
				copy(c.text[n-len(v):], v)
			} else {
				c.text = append(c.text, v...)
			}
			c.ends = append(c.ends, len(c.text))
		default:
			n, ok := e.row.value(v, k)
			if !ok {
				return e.refuse(i, v)
			}
			if k == dataset.Date {
				c.i32 = append(c.i32, int32(n))
			} else {
				c.i64 = append(c.i64, n)
			}
		}
		c.defs[r] = 1
	}
	b.rows++
	e.group++
	e.encoded++
	if b.rows == parquetBatchRows || e.group == e.groupRows {
		j := parquetJob{batch: b}
		if e.group == e.groupRows {
			j.endGroup = true
			e.group = 0
			e.ended++
		}
		e.err = e.handOff(j)
	}
	return e.err
}

// refuse drops the values of the row being gathered from the columns
// before column i, whose value v does not parse, and returns the error
// that names them, which sticks.
func (e *parquetEncoder) refuse(i int, v []byte) error {
	b := e.cur
	for j := range i {
		c := &b.cols[j]
		if c.defs[b.rows] == 0 {
			continue
		}
		switch c.kind {
		case dataset.Text:
			c.ends = c.ends[:len(c.ends)-1]
			end := 0
			if len(c.ends) > 0 {
				end = c.ends[len(c.ends)-1]
			}
			c.text = c.text[:end]
		case dataset.Date:
			c.i32 = c.i32[:len(c.i32)-1]
		default:
			c.i64 = c.i64[:len(c.i64)-1]
		}
	}
	e.err = e.row.valueError(i, v)
	return e.err
}

// handOff gives the writing goroutine a full batch, takes the other one to
// gather the next rows, and writes out what the writing goroutine has
// written so far. It waits while the writing goroutine is busy with the
// batch before.
func (e *parquetEncoder) handOff(j parquetJob) error {
	// The writing goroutine takes jobs after it failed too; the first
	// select makes sure a failure is seen once it has happened.
	select {
	case <-e.pw.failed:
		return e.pw.err
	default:
	}
	select {
	case <-e.pw.failed:
		return e.pw.err
	case e.jobs <- j:
	}
	if j.batch != nil {
		e.cur = <-e.free
		e.cur.reset()
	}
	return e.drain()
}

// drain writes out what the writing goroutine has written to the sink.
func (e *parquetEncoder) drain() error {
	return e.drainTo(math.MaxInt64)
}

// drainTo writes out the sink's bytes up to end (see parquetSink.moveTo).
func (e *parquetEncoder) drainTo(end int64) error {
	if err := e.pw.sink.moveTo(e.emit, end); err != nil {
		return fmt.Errorf("export: parquet: %w", err)
	}
	return nil
}

// emit writes p, the next bytes of the file, to w; a continuation writes
// them in data frames instead, without the file's leading magic number.
func (e *parquetEncoder) emit(p []byte) error {
	if e.part == nil {
		n, err := e.w.Write(p)
		e.pos += int64(n)
		return err
	}
	k := min(len(parquetMagic)-e.magic, len(p))
	e.magic += k
	if len(p) == k {
		return nil
	}
	_, err := e.part.Write(p[k:])
	return err
}

// Flush writes out the row groups complete so far, waiting for the
// writing goroutine to end the last one; see [Flusher]. The rows of the
// row group being gathered stay until it is full or the file ends.
func (e *parquetEncoder) Flush() error {
	if e.err != nil || e.closed {
		return e.err
	}
	if e.pw.groups.Load() < e.ended {
		e.jobs <- parquetJob{reply: true}
		e.err = <-e.reply
	}
	if e.err == nil {
		e.err = e.drain()
	}
	if e.err == nil && e.part != nil {
		e.err = e.part.flush()
	}
	return e.err
}

// Close writes the last row group and the footer, writes them out, and
// returns once the writing goroutine has returned. After an error it only
// stops the writing goroutine.
func (e *parquetEncoder) Close() error {
	if e.closed {
		return e.err
	}
	e.closed = true
	if e.err == nil {
		j := parquetJob{endGroup: true, finish: true, reply: true}
		if e.cur.rows > 0 {
			j.batch = e.cur
		}
		e.jobs <- j
		e.err = <-e.reply
	}
	// After an error, the writing goroutine ends the job it may be doing
	// (jobs holds none waiting), and what it writes stays in the sink.
	close(e.jobs)
	<-e.done
	if e.err == nil {
		e.err = e.end()
	}
	return e.err
}

// run does the jobs until jobs is closed, and then closes done. After an
// error it only hands the batches back.
func (pw *parquetWriter) run(jobs <-chan parquetJob, free chan<- *parquetBatch, reply chan<- error, done chan<- struct{}) {
	defer close(done)
	for j := range jobs {
		if pw.err == nil {
			if err := pw.do(j); err != nil {
				pw.err = err
				close(pw.failed)
			}
		}
		if j.batch != nil {
			free <- j.batch
		}
		if j.reply {
			reply <- pw.err
		}
	}
}

func (pw *parquetWriter) do(j parquetJob) (err error) {
	defer func() {
		// arrow-go's writers panic on some failures.
		if p := recover(); p != nil {
			err = fmt.Errorf("export: parquet: %v", p)
		}
	}()
	if j.batch != nil && j.batch.rows > 0 {
		if err := pw.write(j.batch); err != nil {
			return err
		}
	}
	if j.endGroup {
		if pw.rg != nil {
			rg := pw.rg
			pw.rg = nil
			if err := rg.Close(); err != nil {
				return fmt.Errorf("export: parquet: %w", err)
			}
		}
		pw.groups.Add(1)
	}
	if j.finish {
		pw.footerAt = pw.sink.size()
		if err := pw.fw.Close(); err != nil {
			return fmt.Errorf("export: parquet: %w", err)
		}
	}
	return nil
}

// write hands a batch's rows to the row group's column writers.
func (pw *parquetWriter) write(b *parquetBatch) error {
	if pw.rg == nil {
		rg, err := pw.fw.AppendBufferedRowGroupChecked()
		if err != nil {
			return fmt.Errorf("export: parquet: %w", err)
		}
		pw.rg = rg
	}
	for i := range b.cols {
		c := &b.cols[i]
		cw, err := pw.rg.Column(i)
		if err != nil {
			return fmt.Errorf("export: parquet: %w", err)
		}
		switch w := cw.(type) {
		case *file.Int64ColumnChunkWriter:
			_, err = w.WriteBatch(c.i64, c.defs[:b.rows], nil)
		case *file.Int32ColumnChunkWriter:
			_, err = w.WriteBatch(c.i32, c.defs[:b.rows], nil)
		case *file.ByteArrayColumnChunkWriter:
			// The writer copies the values into its page; text columns
			// keep no statistics that would hold on to them.
			pw.views = pw.views[:0]
			start := 0
			for _, end := range c.ends {
				pw.views = append(pw.views, c.text[start:end:end])
				start = end
			}
			_, err = w.WriteBatch(pw.views, c.defs[:b.rows], nil)
		default:
			err = fmt.Errorf("unexpected column writer %T", cw)
		}
		if err != nil {
			return fmt.Errorf("export: parquet: column %s: %w", pw.cols[i].Name, err)
		}
	}
	return nil
}
