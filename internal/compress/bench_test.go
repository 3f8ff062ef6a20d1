package compress

import (
	"io"
	"testing"
)

// counter counts the bytes written to it.
type counter struct{ n int64 }

func (c *counter) Write(p []byte) (int, error) {
	c.n += int64(len(p))
	return len(p), nil
}

// BenchmarkWriter compresses 8 MiB of report-like CSV in the encoders'
// 64 KiB writes: MB/s is input compressed per second, ratio the output's
// size over the input's. Writers come from the pool, so B/op is what a
// response allocates once the pool is warm.
// Run with: go test -run '^$' -bench Writer -benchmem ./internal/compress/
func BenchmarkWriter(b *testing.B) {
	data := csvRows(8<<20, 1)
	for _, c := range codings {
		b.Run(c.String(), func(b *testing.B) {
			var out counter
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				out.n = 0
				compress(b, &out, c, data)
			}
			b.ReportMetric(float64(out.n)/float64(len(data)), "ratio")
		})
	}
}

// BenchmarkWriterMemory measures a writer's own memory: each iteration
// builds an encoder as the pool does when it is empty and compresses 1 MiB
// with it (tables are allocated on first use), so B/op is the memory a
// concurrent response holds for compression.
func BenchmarkWriterMemory(b *testing.B) {
	data := csvRows(1<<20, 1)
	for _, tt := range []struct {
		c    Coding
		pool interface{ New() any }
	}{
		{Gzip, poolFunc(gzipPool.New)},
		{Zstd, poolFunc(zstdPool.New)},
	} {
		b.Run(tt.c.String(), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				w := tt.pool.New().(interface {
					io.WriteCloser
					Reset(io.Writer)
				})
				w.Reset(io.Discard)
				for i := 0; i < len(data); i += 64 << 10 {
					if _, err := w.Write(data[i:min(len(data), i+64<<10)]); err != nil {
						b.Fatal(err)
					}
				}
				if err := w.Close(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

type poolFunc func() any

func (f poolFunc) New() any { return f() }

func compress(b *testing.B, w io.Writer, c Coding, data []byte) {
	zw, err := NewWriter(w, c)
	if err != nil {
		b.Fatal(err)
	}
	for i := 0; i < len(data); i += 64 << 10 {
		if _, err := zw.Write(data[i:min(len(data), i+64<<10)]); err != nil {
			b.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		b.Fatal(err)
	}
}
