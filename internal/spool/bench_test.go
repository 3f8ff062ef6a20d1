package spool_test

import (
	"fmt"
	"io"
	"net"
	"testing"
	"time"

	"github.com/informe/informe/internal/spool"
)

// BenchmarkPassThrough compares writing a body straight to a destination
// with writing it through a Spool whose client keeps up, in the encoders'
// 64 KiB writes: the difference is the spool's cost on the fast path. The
// destinations are io.Discard (the spool's own cost, nothing else) and a
// loopback TCP connection read as fast as it comes (a real client).
// Run with: go test -run '^$' -bench PassThrough -benchmem ./internal/spool/
func BenchmarkPassThrough(b *testing.B) {
	const body, block = 16 << 20, 64 << 10
	buf := random(block, 1)
	write := func(b *testing.B, w io.Writer) {
		for n := 0; n < body; n += block {
			if _, err := w.Write(buf); err != nil {
				b.Fatal(err)
			}
		}
	}
	direct := func(b *testing.B, dst io.Writer) {
		b.SetBytes(body)
		b.ReportAllocs()
		for b.Loop() {
			write(b, dst)
		}
	}
	spooled := func(b *testing.B, dst io.Writer) {
		b.SetBytes(body)
		b.ReportAllocs()
		for b.Loop() {
			s := spool.New(dst, spool.Limits{}, nil)
			write(b, s)
			if err := s.Close(); err != nil {
				b.Fatal(err)
			}
			if err := s.Wait(); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.Run("Discard/Direct", func(b *testing.B) { direct(b, io.Discard) })
	b.Run("Discard/Spool", func(b *testing.B) { spooled(b, io.Discard) })
	b.Run("TCP/Direct", func(b *testing.B) { direct(b, loopback(b)) })
	b.Run("TCP/Spool", func(b *testing.B) { spooled(b, loopback(b)) })
}

// loopback returns the writing end of a loopback TCP connection whose other
// end is read and discarded as fast as possible.
func loopback(b *testing.B) net.Conn {
	b.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, err := l.Accept()
		if err != nil {
			close(accepted)
			return
		}
		accepted <- c
		io.Copy(io.Discard, c)
		c.Close()
	}()
	w, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		b.Fatal(err)
	}
	if <-accepted == nil {
		b.Fatal("accept failed")
	}
	b.Cleanup(func() { w.Close() })
	return w
}

// slowClient takes bytes at about rate bytes per second.
type slowClient struct{ rate int }

func (c slowClient) Write(p []byte) (int, error) {
	time.Sleep(time.Duration(len(p)) * time.Second / time.Duration(c.rate))
	return len(p), nil
}

// BenchmarkSlowClient measures what the disk bound means for the database
// side: an 8 MiB body written at full speed to a client reading 32 MiB/s.
// producer-ms is how long the producer (and so the database connection) is
// held, deliver-ms how long the client takes. Within the bound the
// producer is done in a few milliseconds; past it, it waits for the client
// for the part that does not fit.
// Run with: go test -run '^$' -bench SlowClient ./internal/spool/
func BenchmarkSlowClient(b *testing.B) {
	const body, block = 8 << 20, 64 << 10
	buf := random(block, 1)
	dir := b.TempDir()
	for _, disk := range []int64{0, 4 << 20, 16 << 20} {
		b.Run(fmt.Sprintf("Disk=%dMiB", disk>>20), func(b *testing.B) {
			var produced, delivered time.Duration
			for b.Loop() {
				start := time.Now()
				s := spool.New(slowClient{32 << 20}, spool.Limits{Disk: disk, Dir: dir}, nil)
				for n := 0; n < body; n += block {
					if _, err := s.Write(buf); err != nil {
						b.Fatal(err)
					}
				}
				if err := s.Close(); err != nil {
					b.Fatal(err)
				}
				produced += time.Since(start)
				if err := s.Wait(); err != nil {
					b.Fatal(err)
				}
				delivered += time.Since(start)
			}
			b.ReportMetric(float64(produced.Milliseconds())/float64(b.N), "producer-ms")
			b.ReportMetric(float64(delivered.Milliseconds())/float64(b.N), "deliver-ms")
		})
	}
}

// heldBack is a client that reads nothing until it is let go.
type heldBack struct{ go_ chan struct{} }

func (c heldBack) Write(p []byte) (int, error) {
	<-c.go_
	return len(p), nil
}

// BenchmarkSpilled writes a 64 MiB body while the client reads nothing,
// then lets the client read it all: B/op is the memory a response costs
// however large its body, the bytes going through the temporary file.
// Run with: go test -run '^$' -bench Spilled -benchmem ./internal/spool/
func BenchmarkSpilled(b *testing.B) {
	const body, block = 64 << 20, 64 << 10
	buf := random(block, 1)
	dir := b.TempDir()
	b.SetBytes(body)
	b.ReportAllocs()
	for b.Loop() {
		client := heldBack{make(chan struct{})}
		s := spool.New(client, spool.Limits{Disk: body, Dir: dir}, nil)
		for n := 0; n < body; n += block {
			if _, err := s.Write(buf); err != nil {
				b.Fatal(err)
			}
		}
		if err := s.Close(); err != nil {
			b.Fatal(err)
		}
		close(client.go_)
		if err := s.Wait(); err != nil {
			b.Fatal(err)
		}
		if st := s.Stats(); st.DiskPeak < body-spool.DefaultMemory-64<<10 {
			b.Fatalf("DiskPeak = %d: the body did not go through the file", st.DiskPeak)
		}
	}
}
