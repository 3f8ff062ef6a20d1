package export

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/big"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"

	"github.com/informe/informe/internal/dataset"
)

// typedColumns have every kind, in a column that is never nil (where an
// empty value is NULL) and in a nullable one.
var typedColumns = []dataset.Column{
	{Name: "id", Kind: dataset.Integer},
	{Name: "name", Kind: dataset.Text},
	{Name: "note", Kind: dataset.Text, Nullable: true},
	{Name: "cost", Kind: dataset.Decimal},
	{Name: "day", Kind: dataset.Date},
	{Name: "created_at", Kind: dataset.Timestamp},
	{Name: "executed_at", Kind: dataset.Timestamptz},
	{Name: "last_entry", Kind: dataset.Timestamp, Nullable: true},
	{Name: "quotas", Kind: dataset.Integer, Nullable: true},
}

// typedRows are values as the API renders them, with NULLs, empty values
// and the edges of each kind.
func typedRows() [][][]byte {
	return rows(
		[]string{"1", "José Núñez", "she said \"hola\"\nbye", "150000", "2024-03-05", "2024-03-05 10:20:30", "2024-03-05 10:20:30.123456+00", "2024-03-05 10:20:30", "12"},
		[]string{"2", "", "", "1500.5", "1999-12-31", "1999-12-31 23:59:59", "1999-12-31 23:59:59+00", "\x00", "\x00"},
		[]string{"-9223372036854775808", "año ñandú", "\x00", "0.01", "", "", "", "", ""},
		[]string{"9223372036854775807", "=1+1", "x", "999999999999.99", "0001-01-01", "0001-01-01 00:00:00", "2000-02-29 00:00:00.5-03", "9999-12-31 23:59:59.999999", "+5"},
		[]string{"5", "😀 emoji", "\t", "-3.25", "2000-02-29", "1969-12-31 23:59:59.000001", "2024-06-01 12:00:00+05:30", "\x00", "007"},
		[]string{"6", "trailing ", "end", "12.300", "9999-12-31", "2024-01-01 00:00:00", "1970-01-01 00:00:00-00:19:32", "\x00", "-0"},
		// Before Christ, with the era ParseValue reads (dataset.Row.KeepEra writes it).
		[]string{"7", "era", "", "1", "0044-03-15 BC", "0001-12-31 23:59:59.5 BC", "4713-01-01 00:00:00+00 BC", "0001-01-01 00:00:00 BC", "1"},
	)
}

// wantTyped is what a reader should find for rows of cols: nil for NULL,
// int64 for integers, timestamps (µs) and decimals (scaled), int32 days
// for dates, string for text; worked out with the standard library,
// not with the encoders' parsers.
func wantTyped(t *testing.T, cols []dataset.Column, rs [][][]byte) [][]any {
	t.Helper()
	out := make([][]any, len(rs))
	for i, r := range rs {
		out[i] = make([]any, len(r))
		for j, v := range r {
			c := cols[j]
			if v == nil || (len(v) == 0 && (c.Kind != dataset.Text || !c.Nullable)) {
				continue
			}
			s := string(v)
			var err error
			bc := false
			if c.Kind == dataset.Date || c.Kind == dataset.Timestamp || c.Kind == dataset.Timestamptz {
				s, bc = strings.CutSuffix(s, " BC")
			}
			// The year y before Christ is the year 1-y of time's proleptic
			// calendar.
			era := func(d time.Time) time.Time {
				if bc {
					return d.AddDate(1-2*d.Year(), 0, 0)
				}
				return d
			}
			switch c.Kind {
			case dataset.Text:
				out[i][j] = s
			case dataset.Integer:
				var n big.Int
				if _, ok := n.SetString(strings.TrimPrefix(s, "+"), 10); !ok || !n.IsInt64() {
					err = fmt.Errorf("bad integer")
				}
				out[i][j] = n.Int64()
			case dataset.Decimal:
				r, ok := new(big.Rat).SetString(s)
				if !ok {
					err = fmt.Errorf("bad decimal")
				} else {
					r.Mul(r, big.NewRat(100, 1))
					out[i][j] = r.Num().Int64()
				}
			case dataset.Date:
				var d time.Time
				d, err = time.Parse("2006-01-02", s)
				d = era(d)
				out[i][j] = int32(d.Unix() / 86400)
				if d.Unix() < 0 && d.Unix()%86400 != 0 {
					out[i][j] = int32(d.Unix()/86400 - 1)
				}
			case dataset.Timestamp:
				var d time.Time
				d, err = time.Parse("2006-01-02 15:04:05.999999", s)
				out[i][j] = era(d).UnixMicro()
			case dataset.Timestamptz:
				var d time.Time
				layout := "2006-01-02 15:04:05.999999-07"
				switch strings.Count(s[19:], ":") {
				case 1:
					layout += ":00"
				case 2:
					layout += ":00:00"
				}
				d, err = time.Parse(layout, s)
				out[i][j] = era(d).UnixMicro()
			}
			if err != nil {
				t.Fatalf("row %d column %s: %v", i, c.Name, err)
			}
		}
	}
	return out
}

// readParquet reads every value of a Parquet file with arrow-go's column
// readers, checking each column's schema against its kind, and returns
// them in wantTyped's shapes, and the number of row groups.
func readParquet(t *testing.T, b []byte, cols []dataset.Column) ([][]any, int) {
	t.Helper()
	r, err := file.NewParquetReader(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("reading the Parquet file: %v", err)
	}
	defer r.Close()
	sc := r.MetaData().Schema
	if sc.NumColumns() != len(cols) {
		t.Fatalf("%d columns, want %d", sc.NumColumns(), len(cols))
	}
	for i, c := range cols {
		d := sc.Column(i)
		want := map[dataset.Kind]string{
			dataset.Integer: "Int(bitWidth=64, isSigned=true)", dataset.Decimal: "Decimal(precision=14, scale=2)", dataset.Date: "Date",
			dataset.Timestamp:   "Timestamp(isAdjustedToUTC=false, timeUnit=microseconds, is_from_converted_type=false, force_set_converted_type=false)",
			dataset.Timestamptz: "Timestamp(isAdjustedToUTC=true, timeUnit=microseconds, is_from_converted_type=false, force_set_converted_type=false)",
			dataset.Text:        "String",
		}[c.Kind]
		if d.Name() != c.Name || d.LogicalType().String() != want || d.SchemaNode().RepetitionType() != parquet.Repetitions.Optional {
			t.Errorf("column %d: %s %s %v, want %s %s optional", i, d.Name(), d.LogicalType(), d.SchemaNode().RepetitionType(), c.Name, want)
		}
	}
	var out [][]any
	for g := 0; g < r.NumRowGroups(); g++ {
		rg := r.RowGroup(g)
		n := rg.NumRows()
		group := make([][]any, n)
		for i := range group {
			group[i] = make([]any, len(cols))
		}
		for j := range cols {
			cr, err := rg.Column(j)
			if err != nil {
				t.Fatal(err)
			}
			defs := make([]int16, n)
			var vals []any
			switch cr := cr.(type) {
			case *file.Int64ColumnChunkReader:
				vs := make([]int64, n)
				_, k, err := cr.ReadBatch(n, vs, defs, nil)
				if err != nil {
					t.Fatal(err)
				}
				for _, v := range vs[:k] {
					vals = append(vals, v)
				}
			case *file.Int32ColumnChunkReader:
				vs := make([]int32, n)
				_, k, err := cr.ReadBatch(n, vs, defs, nil)
				if err != nil {
					t.Fatal(err)
				}
				for _, v := range vs[:k] {
					vals = append(vals, v)
				}
			case *file.ByteArrayColumnChunkReader:
				vs := make([]parquet.ByteArray, n)
				_, k, err := cr.ReadBatch(n, vs, defs, nil)
				if err != nil {
					t.Fatal(err)
				}
				for _, v := range vs[:k] {
					vals = append(vals, string(v))
				}
			default:
				t.Fatalf("column %d: reader %T", j, cr)
			}
			for i := range group {
				if defs[i] == 1 {
					group[i][j], vals = vals[0], vals[1:]
				}
			}
		}
		out = append(out, group...)
	}
	return out, r.NumRowGroups()
}

// readArrow reads every record batch of an Arrow IPC stream, checking the
// schema against cols, and returns the values in wantTyped's shapes and
// the number of batches.
func readArrow(t *testing.T, b []byte, cols []dataset.Column) ([][]any, int) {
	t.Helper()
	r, err := ipc.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("reading the Arrow stream: %v", err)
	}
	defer r.Release()
	for i, f := range r.Schema().Fields() {
		if want := arrowType(cols[i].Kind); f.Name != cols[i].Name || !arrow.TypeEqual(f.Type, want) || !f.Nullable {
			t.Errorf("field %d: %s %s, want %s %s nullable", i, f.Name, f.Type, cols[i].Name, want)
		}
	}
	var out [][]any
	batches := 0
	for r.Next() {
		rec := r.RecordBatch()
		batches++
		for i := 0; i < int(rec.NumRows()); i++ {
			row := make([]any, len(cols))
			for j := range cols {
				col := rec.Column(j)
				if col.IsNull(i) {
					continue
				}
				switch a := col.(type) {
				case *array.Int64:
					row[j] = a.Value(i)
				case *array.Decimal128:
					row[j] = a.Value(i).BigInt().Int64()
				case *array.Date32:
					row[j] = int32(a.Value(i))
				case *array.Timestamp:
					row[j] = int64(a.Value(i))
				case *array.String:
					row[j] = a.Value(i)
				default:
					t.Fatalf("column %d: array %T", j, col)
				}
			}
			out = append(out, row)
		}
	}
	if err := r.Err(); err != nil && err != io.EOF {
		t.Fatalf("reading the Arrow stream: %v", err)
	}
	if !bytes.HasSuffix(b, arrowEOS) {
		t.Errorf("the stream does not end with the end-of-stream marker")
	}
	return out, batches
}

func encodeTyped(t *testing.T, f Format, cols []dataset.Column, rs [][][]byte) []byte {
	t.Helper()
	var b bytes.Buffer
	e, err := NewEncoder(&b, f, cols, Options{})
	if err != nil {
		t.Fatal(err)
	}
	encodeAll(t, e, rs)
	return b.Bytes()
}

// TestTypedRoundTrip writes values of every kind as Parquet and as Arrow
// and reads every one back with arrow-go's readers, with its type.
func TestTypedRoundTrip(t *testing.T) {
	rs := typedRows()
	want := wantTyped(t, typedColumns, rs)
	for _, tc := range []struct {
		format Format
		read   func(*testing.T, []byte, []dataset.Column) ([][]any, int)
	}{{Parquet, readParquet}, {Arrow, readArrow}} {
		t.Run(tc.format.String(), func(t *testing.T) {
			got, _ := tc.read(t, encodeTyped(t, tc.format, typedColumns, rs), typedColumns)
			if !reflect.DeepEqual(got, want) {
				t.Errorf("read back\n%v\nwant\n%v", got, want)
			}
		})
		t.Run(tc.format.String()+"/empty", func(t *testing.T) {
			got, _ := tc.read(t, encodeTyped(t, tc.format, typedColumns, nil), typedColumns)
			if len(got) != 0 {
				t.Errorf("%d rows read back from an empty export", len(got))
			}
		})
	}
}

// TestTypedReport round-trips many realistic general report rows, over
// several row groups and record batches.
func TestTypedReport(t *testing.T) {
	const n, groupRows, batchRows = 2500, 1000, 300
	rs := make([][][]byte, n)
	for i := range rs {
		rs[i] = reportRow(i)
	}
	want := wantTyped(t, reportColumns, rs)

	var b bytes.Buffer
	pe, err := newParquet(&b, reportColumns, groupRows)
	if err != nil {
		t.Fatal(err)
	}
	encodeAll(t, pe, rs)
	got, groups := readParquet(t, b.Bytes(), reportColumns)
	if groups != 3 || !reflect.DeepEqual(got, want) {
		t.Errorf("parquet: %d row groups, want 3; values equal: %v", groups, reflect.DeepEqual(got, want))
	}

	b.Reset()
	ae := NewArrow(&b, reportColumns, false)
	ae.(*arrowEncoder).batchRows = batchRows
	encodeAll(t, ae, rs)
	got, batches := readArrow(t, b.Bytes(), reportColumns)
	if batches != 9 || !reflect.DeepEqual(got, want) {
		t.Errorf("arrow: %d batches, want 9; values equal: %v", batches, reflect.DeepEqual(got, want))
	}
}

// TestParquetRowGroupsGoOut checks that memory is bounded by a row group:
// each one reaches the writer once it is full, before the file ends.
func TestParquetRowGroupsGoOut(t *testing.T) {
	const groupRows = 2000
	rs := make([][][]byte, 3*groupRows+10)
	for i := range rs {
		rs[i] = reportRow(i)
	}
	var w countWriter
	e, err := newParquet(&w, reportColumns, groupRows)
	if err != nil {
		t.Fatal(err)
	}
	var afterGroup []int64 // bytes written after each full row group
	for i, r := range rs {
		if err := e.Encode(r); err != nil {
			t.Fatal(err)
		}
		if err := e.Flush(); err != nil {
			t.Fatal(err)
		}
		if i == 0 && w.n != 4 {
			t.Errorf("after the first row %d bytes were written, want the 4 of the magic number", w.n)
		}
		last := int64(4)
		if len(afterGroup) > 0 {
			last = afterGroup[len(afterGroup)-1]
		}
		switch {
		case (i+1)%groupRows == 0:
			afterGroup = append(afterGroup, w.n)
		case w.n != last:
			t.Fatalf("a row group's rows were written before it was full: %d bytes after %d rows", w.n, i+1)
		}
	}
	// Each row group reaches the writer when full, with about the
	// bytes of the one before: none is held back.
	for i, n := range afterGroup {
		prev := int64(4)
		if i > 0 {
			prev = afterGroup[i-1]
		}
		if n-prev < 10_000 || (i > 0 && n-prev < (afterGroup[0]-4)/2) {
			t.Errorf("row group %d added %d bytes (after each: %v)", i+1, n-prev, afterGroup)
		}
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	if w.n <= afterGroup[2] {
		t.Errorf("Close wrote nothing after the last full row group: %d bytes", w.n)
	}
}

// TestTypedBadValue checks that a value that does not parse as its kind
// is an error naming the row and the column, that the error sticks, and
// that Close then writes no ending: no Parquet footer, no end of the
// Arrow stream.
func TestTypedBadValue(t *testing.T) {
	for _, tc := range []struct {
		column int
		value  string
	}{
		{0, "12a"}, {0, "9223372036854775808"}, {0, "1.5"},
		{3, "1e3"}, {3, "1.234"}, {3, "1000000000000"}, {3, "."}, {3, "1,5"},
		{4, "2024-02-30"}, {4, "24-01-01"}, {4, "infinity"}, {4, "00010000-01-01"}, {4, "010000-01-01"}, {4, "10000-01-01 BC"}, {4, "2024-1-01"}, {5, "294248-01-01 00:00:00"}, {6, "294276-12-31 23:59:59.999999+00"},
		{4, "0000-01-01"}, {4, "0000-01-01 BC"}, {4, "0044-03-15BC"}, {4, "0044-03-15 AD"}, {4, "0005-02-29"},
		{5, "2024-01-01 10:00:00 bc"}, {6, "2024-01-01 10:00:00 BC+00"},
		{5, "2024-01-01"}, {5, "2024-01-01 24:00:00"}, {5, "2024-01-01 10:00:00+00"}, {5, "2024-01-01 10:00:00.1234567"},
		{6, "2024-01-01 10:00:00"}, {6, "2024-01-01 10:00:00+0"}, {6, "2024-01-01 10:00:00+05:60"},
	} {
		for _, f := range []Format{Parquet, Arrow} {
			name := fmt.Sprintf("%s/%s=%s", f, typedColumns[tc.column].Name, tc.value)
			t.Run(name, func(t *testing.T) {
				good := typedRows()[0]
				bad := slices.Clone(good)
				bad[tc.column] = []byte(tc.value)
				var b bytes.Buffer
				e, err := NewEncoder(&b, f, typedColumns, Options{})
				if err != nil {
					t.Fatal(err)
				}
				if err := e.Encode(good); err != nil {
					t.Fatal(err)
				}
				err = e.Encode(bad)
				if !errors.Is(err, ErrValue) || !strings.Contains(err.Error(), "row 2, column "+typedColumns[tc.column].Name+":") {
					t.Fatalf("error %v, want ErrValue naming row 2 and the column", err)
				}
				if err2 := e.Encode(good); err2 != err {
					t.Errorf("Encode after the error: %v, want the same error", err2)
				}
				if err2 := e.Close(); err2 != err {
					t.Errorf("Close: %v, want the same error", err2)
				}
				if f == Parquet && bytes.HasSuffix(b.Bytes(), []byte("PAR1")) && b.Len() > 4 {
					t.Errorf("the Parquet file has its footer after an error")
				}
				if f == Arrow && bytes.HasSuffix(b.Bytes(), arrowEOS) {
					t.Errorf("the Arrow stream has its end after an error")
				}
			})
		}
	}
}

// TestParseDecimal checks the decimals DECIMAL(14,2) holds exactly, and
// refuses the others rather than rounding.
func TestParseDecimal(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int64
		ok   bool
	}{
		{"0", 0, true}, {"150000", 15000000, true}, {"1500.5", 150050, true}, {"0.01", 1, true},
		{"-3.25", -325, true}, {"+7", 700, true}, {"12.300", 1230, true}, {"007.10", 710, true},
		{"999999999999.99", 99999999999999, true}, {"-999999999999.99", -99999999999999, true},
		{"1000000000000", 0, false}, {"1.234", 0, false}, {"1.", 0, false}, {".5", 0, false},
		{"1e3", 0, false}, {"", 0, false}, {"-", 0, false}, {"1.2.3", 0, false}, {"NaN", 0, false},
	} {
		got, ok := dataset.ParseValue(dataset.Decimal, []byte(tc.in))
		if got != tc.want || ok != tc.ok {
			t.Errorf("ParseValue(Decimal, %q) = %d, %v; want %d, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

// TestArrowContinue checks that an Arrow stream written in parts (a first
// encoder, continuations, then the first one's Close) is one stream that
// holds every row, in order, for every split.
func TestArrowContinue(t *testing.T) {
	rs := typedRows()
	want := wantTyped(t, typedColumns, rs)
	for first := 0; first <= len(rs); first++ {
		for second := first; second <= len(rs); second++ {
			body := encodeInParts(t, Arrow, typedColumns, Options{}, rs, first, second)
			got, _ := readArrow(t, body, typedColumns)
			if len(got) == 0 {
				got = nil
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("parts %d, %d, %d rows: read back\n%v\nwant\n%v", first, second-first, len(rs)-second, got, want)
			}
		}
	}
}

// TestParquetParts checks that a Parquet file read in parts holds every
// row, in order, with a row group for each part that has rows, for every
// split of the typed rows into 1 to 3 parts, joined in chunks of random
// sizes with flushes between them.
func TestParquetParts(t *testing.T) {
	rs := typedRows()
	want := wantTyped(t, typedColumns, rs)
	rng := rand.New(rand.NewPCG(3, 5))
	for k := 1; k <= 3; k++ {
		splits(len(rs), k, func(bounds []int) {
			body := encodeParts(t, Parquet, typedColumns, Options{}, rs, bounds, rng, 50)
			got, groups := readParquet(t, body, typedColumns)
			if len(got) == 0 {
				got = nil
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("parts from %v: read back\n%v\nwant\n%v", bounds, got, want)
			}
			nonEmpty := 0
			for i, b := range append([]int{0}, bounds...) {
				end := len(rs)
				if i < len(bounds) {
					end = bounds[i]
				}
				if end > b {
					nonEmpty++
				}
			}
			if groups != nonEmpty {
				t.Fatalf("parts from %v: %d row groups, want %d", bounds, groups, nonEmpty)
			}
		})
	}
}
