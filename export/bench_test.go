package export

import (
	"io"
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
