package export

import (
	"bytes"
	"errors"
	"io"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/parquet/file"

	"github.com/informe/informe/internal/dataset"
)

// checkNoGoroutines fails t if, shortly after the encoder under test was
// closed, more goroutines run than before it was made: Close must have
// stopped its writing goroutine.
func checkNoGoroutines(t *testing.T, before int) {
	t.Helper()
	// A goroutine that has signalled its end may not have exited yet.
	deadline := time.Now().Add(2 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before {
		t.Errorf("%d goroutines after Close, %d before the encoder", n, before)
	}
}

func reportRows(n int) [][][]byte {
	rs := make([][][]byte, n)
	for i := range rs {
		rs[i] = reportRow(i)
	}
	return rs
}

// TestParquetRowGroups reads back files of many row groups, whose ends
// fall inside a batch, on a batch's end, and on the file's end.
func TestParquetRowGroups(t *testing.T) {
	for _, tc := range []struct {
		name            string
		rows, groupRows int
		groups          int
	}{
		{"GroupInsideBatch", 5000, 1500, 4},
		{"GroupOfBatches", 3 * parquetBatchRows, parquetBatchRows, 3},
		{"GroupOfTwoBatches", 5*parquetBatchRows + 7, 2 * parquetBatchRows, 3},
		{"ShortOfABatch", parquetBatchRows - 1, ParquetRowGroupRows, 1},
		{"OneRow", 1, ParquetRowGroupRows, 1},
		{"GroupOfOneRow", 5, 1, 5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := runtime.NumGoroutine()
			rs := reportRows(tc.rows)
			var b bytes.Buffer
			e, err := newParquet(&b, reportColumns, tc.groupRows)
			if err != nil {
				t.Fatal(err)
			}
			encodeAll(t, e, rs)
			checkNoGoroutines(t, before)
			got, groups := readParquet(t, b.Bytes(), reportColumns)
			if groups != tc.groups {
				t.Errorf("%d row groups, want %d", groups, tc.groups)
			}
			if want := wantTyped(t, reportColumns, rs); !reflect.DeepEqual(got, want) {
				t.Errorf("the %d rows read back differ from those written", len(rs))
			}
		})
	}
}

// TestParquetDeterministic checks that the same rows make the same bytes.
func TestParquetDeterministic(t *testing.T) {
	rs := reportRows(3000)
	var files [2][]byte
	for i := range files {
		var b bytes.Buffer
		e, err := newParquet(&b, reportColumns, 1000)
		if err != nil {
			t.Fatal(err)
		}
		encodeAll(t, e, rs)
		files[i] = b.Bytes()
	}
	if !bytes.Equal(files[0], files[1]) {
		t.Errorf("two files of the same rows differ: %d and %d bytes", len(files[0]), len(files[1]))
	}
}

// TestParquetWriteError checks that a failing writer's error surfaces from
// Encode, Flush or Close, sticks, and that Close then stops the writing
// goroutine; and that Encode after Close is ErrClosed.
func TestParquetWriteError(t *testing.T) {
	for _, tc := range []struct {
		name  string
		n     int  // bytes the writer takes before it fails
		rows  int  // rows encoded, unless Encode fails first
		flush bool // Flush after each row
		inEnc bool // the error comes from Encode or Flush, not Close
	}{
		// A 1000-row group goes out during Encode after 1024 rows.
		{"ErrInEncode", 10_000, 5000, false, true},
		// The magic number, on the first Flush.
		{"ErrInFlush", 0, 1, true, true},
		// The whole file goes out at Close.
		{"ErrInClose", 10, 10, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := runtime.NumGoroutine()
			rs := reportRows(tc.rows)
			e, err := newParquet(&failWriter{n: tc.n}, reportColumns, 1000)
			if err != nil {
				t.Fatal(err)
			}
			var encErr error
			for _, r := range rs {
				if encErr = e.Encode(r); encErr == nil && tc.flush {
					encErr = e.Flush()
				}
				if encErr != nil {
					break
				}
			}
			if tc.inEnc {
				if !errors.Is(encErr, errWrite) {
					t.Fatalf("Encode or Flush: %v, want %v", encErr, errWrite)
				}
				if err := e.Encode(rs[0]); err != encErr {
					t.Errorf("Encode after the error: %v, want the same error", err)
				}
				if err := e.Flush(); err != encErr {
					t.Errorf("Flush after the error: %v, want the same error", err)
				}
			} else if encErr != nil {
				t.Fatalf("Encode: %v", encErr)
			}
			err = e.Close()
			if !errors.Is(err, errWrite) || (encErr != nil && err != encErr) {
				t.Errorf("Close: %v, want %v", err, errWrite)
			}
			if err2 := e.Close(); err2 != err {
				t.Errorf("Close again: %v, want %v", err2, err)
			}
			if err := e.Encode(rs[0]); err != ErrClosed {
				t.Errorf("Encode after Close: %v, want ErrClosed", err)
			}
			checkNoGoroutines(t, before)
		})
	}
}

// TestParquetWriterGoroutineError checks that a failure of arrow-go's
// column writers, in the writing goroutine, surfaces from Encode and Close,
// sticks, and leaves no goroutine behind. A batch whose column holds fewer
// values than its definition levels promise makes one fail.
func TestParquetWriterGoroutineError(t *testing.T) {
	before := runtime.NumGoroutine()
	var b bytes.Buffer
	e, err := newParquet(&b, reportColumns, ParquetRowGroupRows)
	if err != nil {
		t.Fatal(err)
	}
	id := -1
	for i, c := range reportColumns {
		if c.Kind == dataset.Integer {
			id = i
			break
		}
	}
	if id < 0 {
		t.Fatal("no integer column in reportColumns")
	}
	var encErr error
	for i := 0; i < 3*parquetBatchRows && encErr == nil; i++ {
		if i == parquetBatchRows-1 {
			e.cur.cols[id].i64 = nil // and the values its definition levels promise
		}
		encErr = e.Encode(reportRow(i))
	}
	if encErr == nil || !strings.HasPrefix(encErr.Error(), "export: parquet: ") {
		t.Fatalf("Encode: %v, want the column writer's error", encErr)
	}
	if err := e.Encode(reportRow(0)); err != encErr {
		t.Errorf("Encode after the error: %v, want the same error", err)
	}
	if err := e.Close(); err != encErr {
		t.Errorf("Close: %v, want the same error", err)
	}
	checkNoGoroutines(t, before)
	if bytes.HasSuffix(b.Bytes(), []byte("PAR1")) && b.Len() > 4 {
		t.Errorf("the Parquet file has its footer after an error")
	}
}

// TestParquetCloseAfterBadValue checks that Close after a bad value, with
// a batch in the writing goroutine's hands, writes no footer and leaves
// no goroutine behind; and so does Close of an encoder given no rows.
func TestParquetCloseAfterBadValue(t *testing.T) {
	before := runtime.NumGoroutine()
	var b bytes.Buffer
	e, err := newParquet(&b, reportColumns, 2*parquetBatchRows)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2*parquetBatchRows+10; i++ {
		if err := e.Encode(reportRow(i)); err != nil {
			t.Fatal(err)
		}
	}
	bad := reportRow(0)
	for i, c := range reportColumns {
		if c.Kind == dataset.Date {
			bad[i] = []byte("yesterday")
		}
	}
	err = e.Encode(bad)
	if !errors.Is(err, ErrValue) {
		t.Fatalf("Encode: %v, want ErrValue", err)
	}
	if err2 := e.Close(); err2 != err {
		t.Errorf("Close: %v, want %v", err2, err)
	}
	if bytes.HasSuffix(b.Bytes(), []byte("PAR1")) && b.Len() > 4 {
		t.Errorf("the Parquet file has its footer after an error")
	}
	checkNoGoroutines(t, before)

	e, err = newParquet(&b, reportColumns, ParquetRowGroupRows)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	checkNoGoroutines(t, before)
}

// TestParquetRefusedRow checks that a row refused for a bad value in
// any column leaves none of its values in the batch being gathered: the
// values parsed before the bad one are dropped again.
func TestParquetRefusedRow(t *testing.T) {
	good := typedRows()
	for col, bad := range []string{"x", "", "", "1.234", "2024-02-30", "24:00", "2024-01-01 10:00:00", "x", "x"} {
		if bad == "" {
			continue // a text column takes any value
		}
		e, err := newParquet(io.Discard, typedColumns, ParquetRowGroupRows)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range good {
			if err := e.Encode(r); err != nil {
				t.Fatal(err)
			}
		}
		want := slices.Clone(e.cur.cols)
		row := slices.Clone(good[3]) // no NULLs
		row[col] = []byte(bad)
		if err := e.Encode(row); !errors.Is(err, ErrValue) {
			t.Fatalf("column %s: Encode: %v, want ErrValue", typedColumns[col].Name, err)
		}
		for i, c := range e.cur.cols {
			w := want[i]
			if len(c.i64) != len(w.i64) || len(c.i32) != len(w.i32) || len(c.text) != len(w.text) || len(c.ends) != len(w.ends) {
				t.Errorf("bad column %s: column %s holds %d, %d, %d, %d values, bytes, ends; want %d, %d, %d, %d",
					typedColumns[col].Name, typedColumns[i].Name, len(c.i64), len(c.i32), len(c.text), len(c.ends), len(w.i64), len(w.i32), len(w.text), len(w.ends))
			}
		}
		if got := e.cur.rows; got != len(good) {
			t.Errorf("bad column %s: %d rows in the batch, want %d", typedColumns[col].Name, got, len(good))
		}
		e.Close()
	}
}

// TestParquetPartsRowGroups reads back a file read in two parts, each of
// more rows than a row group: the first encoder ends its own short row
// group before the part's, and the footer numbers every row group in
// order.
func TestParquetPartsRowGroups(t *testing.T) {
	const groupRows, first = 1000, 2500
	rs := reportRows(4700)
	var out, part bytes.Buffer
	head, err := newParquet(&out, reportColumns, groupRows)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rs[:first] {
		if err := head.Encode(r); err != nil {
			t.Fatal(err)
		}
	}
	cont, err := newParquetContinuation(&part, reportColumns, first)
	if err != nil {
		t.Fatal(err)
	}
	cont.groupRows = groupRows
	encodeAll(t, cont, rs[first:])
	jw := head.Join()
	if _, err := jw.Write(part.Bytes()); err != nil {
		t.Fatal(err)
	}
	if err := jw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := head.Close(); err != nil {
		t.Fatal(err)
	}
	got, _ := readParquet(t, out.Bytes(), reportColumns)
	if want := wantTyped(t, reportColumns, rs); !reflect.DeepEqual(got, want) {
		t.Errorf("the %d rows read back differ from those written", len(rs))
	}
	r, err := file.NewParquetReader(bytes.NewReader(out.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	want := []int64{1000, 1000, 500, 1000, 1000, 200}
	if n := r.NumRowGroups(); n != len(want) {
		t.Fatalf("%d row groups, want %d", n, len(want))
	}
	for i, n := range want {
		rg := r.MetaData().RowGroup(i)
		if rg.NumRows() != n || rg.Ordinal() != int16(i) {
			t.Errorf("row group %d: %d rows, ordinal %d; want %d rows", i, rg.NumRows(), rg.Ordinal(), n)
		}
	}
}

// TestParquetJoinErrors checks that a first encoder refuses a part's
// output that is not the next part of its file, and keeps the error.
func TestParquetJoinErrors(t *testing.T) {
	rs := typedRows()
	spec := Spec{Format: Parquet, Columns: typedColumns, Options: Options{Rows: -1}}
	part := func(f Format, first int) []byte {
		var b bytes.Buffer
		s := spec
		s.Format = f
		cont, err := s.Continuation(int64(first)).NewEncoder(&b)
		if err != nil {
			t.Fatal(err)
		}
		encodeAll(t, cont, rs[first:])
		return b.Bytes()
	}
	good := part(Parquet, 3)
	for _, tt := range []struct {
		name   string
		output []byte
		want   string
		is     error
	}{
		{"OutOfOrder", part(Parquet, 2), "a part starting at row 2 cannot follow 3 rows", nil},
		{"CutShort", good[:len(good)-1], "ended early", errPartEnded},
		{"NoMetadata", good[:len(good)-9], "ended early", errPartEnded},
		{"NotFrames", []byte("PAR1"), "unknown frame", nil},
		{"NoBegin", good[9:], "does not begin with its first row", nil},
		{"PastItsEnd", append(slices.Clone(good), 'D'), "goes on past its end", nil},
		{"Workbook", part(XLSX, 3), "workbook", nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			before := runtime.NumGoroutine()
			joinFails(t, spec, rs[:3], tt.output, tt.want, tt.is)
			checkNoGoroutines(t, before)
		})
	}
	t.Run("RowAfterJoin", func(t *testing.T) {
		head, err := spec.NewEncoder(io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		defer head.Close()
		for _, r := range rs[:3] {
			if err := head.Encode(r); err != nil {
				t.Fatal(err)
			}
		}
		jw := head.(Joiner).Join()
		if _, err := jw.Write(part(Parquet, 3)); err != nil {
			t.Fatal(err)
		}
		if err := jw.Close(); err != nil {
			t.Fatal(err)
		}
		if err := head.Encode(rs[0]); err == nil || !strings.Contains(err.Error(), "after a continuation was joined") {
			t.Fatalf("a row after a joined part: error %v", err)
		}
	})
	t.Run("ContinuationJoins", func(t *testing.T) {
		var b bytes.Buffer
		cont, err := spec.Continuation(0).NewEncoder(&b)
		if err != nil {
			t.Fatal(err)
		}
		defer cont.Close()
		if _, err := cont.(Joiner).Join().Write(good); err == nil || !strings.Contains(err.Error(), "cannot join") {
			t.Fatalf("a continuation joining a part: error %v", err)
		}
	})
}
