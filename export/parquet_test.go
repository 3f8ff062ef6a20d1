package export

import (
	"bytes"
	"errors"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"
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
		if c.Kind == Integer {
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
		if c.Kind == Date {
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
