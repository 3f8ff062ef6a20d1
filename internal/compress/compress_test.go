package compress

import (
	"bytes"
	stdgzip "compress/gzip"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"testing"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
)

// csvRows returns about n bytes of CSV shaped like a report export: ids,
// codes, RUTs, names, dates, amounts and some free text.
func csvRows(n int, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, 1))
	names := []string{"José Núñez", "Pérez, Ana", "Inversiones del Sur SpA", "Comercial Andes Ltda.", "María José Fuentes", "Estudio Jurídico Lagos"}
	states := []string{"vigente", "terminado", "suspendido", "en tramitación", "archivado"}
	notes := []string{"", "Revisar escrito de demanda", "Audiencia preparatoria fijada", "Notificación por cédula pendiente", "Cliente solicita informe mensual"}
	b := []byte("id,code_contract,rut,client,state,start_date,amount,process,task,note,updated_at\r\n")
	for i := 1; len(b) < n; i++ {
		b = fmt.Appendf(b, "%d,CT-%06d,%d.%03d.%03d-%d,%q,%s,2024-%02d-%02d,%d,C-%d-%d,%d,%s,2025-%02d-%02d %02d:%02d:%02d\r\n",
			i, i/3+1, 5+r.IntN(25), r.IntN(1000), r.IntN(1000), r.IntN(10), names[r.IntN(len(names))],
			states[r.IntN(len(states))], 1+r.IntN(12), 1+r.IntN(28), r.IntN(5_000_000),
			1+r.IntN(9999), 2015+r.IntN(10), i*7+r.IntN(7), notes[r.IntN(len(notes))],
			1+r.IntN(12), 1+r.IntN(28), r.IntN(24), r.IntN(60), r.IntN(60))
	}
	return b[:n]
}

// decode decompresses b in coding c with klauspost's decoders and, for
// gzip, with the standard library's too, and checks they agree.
func decode(t *testing.T, c Coding, b []byte) []byte {
	t.Helper()
	switch c {
	case Identity:
		return b
	case Gzip:
		zr, err := gzip.NewReader(bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(zr)
		if err != nil {
			t.Fatal(err)
		}
		sr, err := stdgzip.NewReader(bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		std, err := io.ReadAll(sr)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, std) {
			t.Fatal("klauspost and standard library gzip readers disagree")
		}
		return got
	case Zstd:
		zr, err := zstd.NewReader(bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		defer zr.Close()
		got, err := io.ReadAll(zr)
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	t.Fatalf("no decoder for %v", c)
	return nil
}

var codings = []Coding{Identity, Gzip, Zstd}

func TestRoundTrip(t *testing.T) {
	for _, c := range codings {
		for _, n := range []int{0, 1, 1000, 300 << 10, 3 << 20} {
			t.Run(fmt.Sprintf("%v/%d", c, n), func(t *testing.T) {
				want := csvRows(n, uint64(n))
				// Several rounds, so that pooled encoders are reused.
				for round := range 3 {
					var buf bytes.Buffer
					zw, err := NewWriter(&buf, c)
					if err != nil {
						t.Fatal(err)
					}
					if got := zw.Coding(); got != c {
						t.Errorf("Coding() = %v, want %v", got, c)
					}
					r := rand.New(rand.NewPCG(uint64(round), 2))
					for p := want; len(p) > 0; {
						k := min(len(p), 1+r.IntN(64<<10))
						if _, err := zw.Write(p[:k]); err != nil {
							t.Fatal(err)
						}
						p = p[k:]
						if r.IntN(8) == 0 {
							if err := zw.Flush(); err != nil {
								t.Fatal(err)
							}
						}
					}
					if err := zw.Close(); err != nil {
						t.Fatal(err)
					}
					if got := decode(t, c, buf.Bytes()); !bytes.Equal(got, want) {
						t.Fatalf("round %d: decoded %d bytes, want %d", round, len(got), len(want))
					}
					if c != Identity && n >= 300<<10 && buf.Len() > n/2 {
						t.Errorf("compressed %d bytes to %d", n, buf.Len())
					}
				}
			})
		}
	}
}

// flushRecorder records what had been written when it was flushed.
type flushRecorder struct {
	bytes.Buffer
	atFlush []int
}

func (f *flushRecorder) Flush() error {
	f.atFlush = append(f.atFlush, f.Len())
	return nil
}

// TestFlush checks that after Flush everything written so far can be
// decoded from what reached the underlying writer, with no Close, and that
// the underlying writer is flushed after it.
func TestFlush(t *testing.T) {
	for _, c := range codings {
		t.Run(c.String(), func(t *testing.T) {
			var dst flushRecorder
			zw, err := NewWriter(&dst, c)
			if err != nil {
				t.Fatal(err)
			}
			defer zw.Close()
			var written []byte
			for i, n := range []int{10, 5000, 100 << 10} {
				row := csvRows(n, uint64(i))
				if _, err := zw.Write(row); err != nil {
					t.Fatal(err)
				}
				written = append(written, row...)
				if err := zw.Flush(); err != nil {
					t.Fatal(err)
				}
				if got, want := dst.atFlush, i+1; len(got) != want || got[i] != dst.Len() {
					t.Fatalf("underlying flushes at %v with %d bytes out, want %d, the last after all", got, dst.Len(), want)
				}
				got := decodePrefix(t, c, dst.Bytes(), len(written))
				if !bytes.Equal(got, written) {
					t.Fatalf("after flush %d: decoded %d bytes of the partial stream, want %d", i, len(got), len(written))
				}
			}
		})
	}
}

// decodePrefix decodes the first n bytes of an unfinished stream.
func decodePrefix(t *testing.T, c Coding, b []byte, n int) []byte {
	t.Helper()
	var r io.Reader
	switch c {
	case Identity:
		r = bytes.NewReader(b)
	case Gzip:
		zr, err := stdgzip.NewReader(bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		r = zr
	case Zstd:
		zr, err := zstd.NewReader(bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		defer zr.Close()
		r = zr
	}
	got := make([]byte, n)
	if _, err := io.ReadFull(r, got); err != nil {
		t.Fatalf("reading %d bytes of the flushed stream: %v", n, err)
	}
	return got
}

// TestEmpty checks that a body with no bytes is still a valid stream.
func TestEmpty(t *testing.T) {
	for _, c := range codings[1:] {
		var buf bytes.Buffer
		zw, err := NewWriter(&buf, c)
		if err != nil {
			t.Fatal(err)
		}
		if err := zw.Close(); err != nil {
			t.Fatal(err)
		}
		if buf.Len() == 0 {
			t.Errorf("%v: no bytes for an empty body", c)
		}
		if got := decode(t, c, buf.Bytes()); len(got) != 0 {
			t.Errorf("%v: decoded %q", c, got)
		}
	}
}

type failingWriter struct{}

var errGone = errors.New("client gone")

func (failingWriter) Write([]byte) (int, error) { return 0, errGone }

func TestErrors(t *testing.T) {
	if _, err := NewWriter(io.Discard, Coding(7)); !errors.Is(err, ErrUnknownCoding) {
		t.Errorf("NewWriter(Coding(7)) = %v, want ErrUnknownCoding", err)
	}
	for _, c := range codings {
		t.Run(c.String(), func(t *testing.T) {
			zw, err := NewWriter(failingWriter{}, c)
			if err != nil {
				t.Fatal(err)
			}
			// The error shows at the latest when the data must go out.
			_, werr := zw.Write(csvRows(1<<20, 1))
			ferr := zw.Flush()
			if !errors.Is(ferr, errGone) {
				t.Errorf("Write = %v, then Flush = %v, want %v", werr, ferr, errGone)
			}
			if _, err := zw.Write([]byte("x")); !errors.Is(err, errGone) {
				t.Errorf("Write after error = %v, want %v (sticky)", err, errGone)
			}
			if err := zw.Close(); !errors.Is(err, errGone) {
				t.Errorf("Close = %v, want %v", err, errGone)
			}
			if err := zw.Close(); !errors.Is(err, errGone) {
				t.Errorf("second Close = %v, want %v", err, errGone)
			}
		})
	}
}

func TestClosed(t *testing.T) {
	for _, c := range codings {
		zw, err := NewWriter(io.Discard, c)
		if err != nil {
			t.Fatal(err)
		}
		if err := zw.Close(); err != nil {
			t.Fatal(err)
		}
		if err := zw.Close(); err != nil {
			t.Errorf("%v: second Close = %v, want nil", c, err)
		}
		if _, err := zw.Write([]byte("x")); !errors.Is(err, ErrClosed) {
			t.Errorf("%v: Write after Close = %v, want ErrClosed", c, err)
		}
		if err := zw.Flush(); !errors.Is(err, ErrClosed) {
			t.Errorf("%v: Flush after Close = %v, want ErrClosed", c, err)
		}
	}
}

func TestString(t *testing.T) {
	for _, tt := range []struct {
		c    Coding
		want string
	}{
		{Identity, "identity"}, {Gzip, "gzip"}, {Zstd, "zstd"}, {Coding(9), "Coding(9)"},
	} {
		if got := tt.c.String(); got != tt.want {
			t.Errorf("%d.String() = %q, want %q", tt.c, got, tt.want)
		}
	}
}
