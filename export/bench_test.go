package export

import (
	"bytes"
	"fmt"
	"io"
	"sync"
	"testing"
)

// countWriter counts bytes written, for b.SetBytes.
type countWriter struct{ n int64 }

func (w *countWriter) Write(p []byte) (int, error) {
	w.n += int64(len(p))
	return len(p), nil
}

// BenchmarkEncode encodes benchRows report rows per iteration, so ns/op
// divided by benchRows is the cost of a row, and b.SetBytes reports the
// output rate. Parquet and Arrow parse each value by its kind first.
// Run with: go test -run '^$' -bench Encode -benchmem ./export/
func BenchmarkEncode(b *testing.B) {
	const benchRows = 10_000
	rs := make([][][]byte, 100)
	for i := range rs {
		rs[i] = reportRow(i)
	}
	for _, f := range []Format{JSON, NDJSON, CSV, XLSX, Parquet, Arrow} {
		b.Run(f.String(), func(b *testing.B) {
			encode := func(w io.Writer) {
				e, err := NewEncoder(w, f, reportColumns, Options{Envelope: &Envelope{TotalPages: 1, CurrentPage: 1}, Sheet: "general-report", Rows: benchRows})
				if err != nil {
					b.Fatal(err)
				}
				for i := 0; i < benchRows; i++ {
					if err := e.Encode(rs[i%len(rs)]); err != nil {
						b.Fatal(err)
					}
				}
				if err := e.Close(); err != nil {
					b.Fatal(err)
				}
			}
			var cw countWriter
			encode(&cw)
			b.SetBytes(cw.n)
			b.ReportAllocs()
			for b.Loop() {
				encode(io.Discard)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*benchRows), "ns/row")
			// Output per row; the 100 rows repeat, so the compressed
			// formats (XLSX, Parquet) come out smaller than on real data.
			b.ReportMetric(float64(cw.n)/benchRows, "B/row")
		})
	}
}

// BenchmarkEncodeParts encodes benchRows report rows per iteration in 1,
// 2 and 4 parts at once, as a parallel export does: the first encoder on
// the benchmark's goroutine, each continuation on its own into a buffer,
// then, in order, appended after the first one's bytes (CSV) or joined
// into its workbook (XLSX). ns/row is the wall time per row, so it falls
// with the parts as far as the machine's free cores allow. Run with:
// go test -run '^$' -bench EncodeParts -benchmem ./export/
func BenchmarkEncodeParts(b *testing.B) {
	const benchRows = 20_000
	rs := make([][][]byte, 100)
	for i := range rs {
		rs[i] = reportRow(i)
	}
	for _, f := range []Format{CSV, XLSX} {
		for _, parts := range []int{1, 2, 4} {
			b.Run(fmt.Sprintf("%s/parts=%d", f, parts), func(b *testing.B) {
				spec := Spec{Format: f, Columns: reportColumns, Options: Options{Sheet: "general-report", Rows: benchRows}}
				b.ReportAllocs()
				for b.Loop() {
					outs := make([]*bytes.Buffer, parts-1)
					var wg sync.WaitGroup
					for p := 1; p < parts; p++ {
						outs[p-1] = new(bytes.Buffer)
						wg.Add(1)
						go func() {
							defer wg.Done()
							e := encodeRange(b, spec.Continuation(int64(p*benchRows/parts)), rs, outs[p-1], p*benchRows/parts, (p+1)*benchRows/parts)
							if err := e.Close(); err != nil {
								b.Error(err)
							}
						}()
					}
					head := encodeRange(b, spec, rs, io.Discard, 0, benchRows/parts)
					wg.Wait()
					for _, out := range outs {
						var err error
						if j, ok := head.(Joiner); ok {
							jw := j.Join()
							if _, err = jw.Write(out.Bytes()); err == nil {
								err = jw.Close()
							}
						} else {
							_, err = io.Discard.Write(out.Bytes())
						}
						if err != nil {
							b.Fatal(err)
						}
					}
					if err := head.Close(); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*benchRows), "ns/row")
			})
		}
	}
}

// encodeRange encodes the rows from to to (of rs repeated) with an
// encoder of spec on w, and returns it unclosed.
func encodeRange(tb testing.TB, spec Spec, rs [][][]byte, w io.Writer, from, to int) Encoder {
	e, err := spec.NewEncoder(w)
	if err != nil {
		tb.Fatal(err)
	}
	for i := from; i < to; i++ {
		if err := e.Encode(rs[i%len(rs)]); err != nil {
			tb.Error(err)
			break
		}
	}
	return e
}
