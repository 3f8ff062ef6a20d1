package spool_test

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"log"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/informe/informe/internal/spool"
)

// responseDest is the adapter the HTTP layer puts between a Spool and a
// ResponseWriter: http.ResponseController gives it flushes and write
// deadlines.
type responseDest struct {
	http.ResponseWriter
	rc *http.ResponseController
}

func newResponseDest(w http.ResponseWriter) responseDest {
	return responseDest{w, http.NewResponseController(w)}
}

func (d responseDest) Flush() error                       { return d.rc.Flush() }
func (d responseDest) SetWriteDeadline(t time.Time) error { return d.rc.SetWriteDeadline(t) }

func random(n int, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, 1))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

// serve runs handler on a loopback server for the test's duration.
func serve(t *testing.T, handler http.HandlerFunc) *httptest.Server {
	t.Helper()
	srv := httptest.NewUnstartedServer(handler)
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // aborted handlers are expected
	srv.Start()
	t.Cleanup(srv.Close)
	return srv
}

// TestHTTP streams through a real server to a real client, over chunked
// HTTP/1.1, with flush points and the temporary file in use.
func TestHTTP(t *testing.T) {
	dir := t.TempDir()
	want := random(3<<20, 1)
	srv := serve(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/octet-stream")
		s := spool.New(newResponseDest(w), spool.Limits{Memory: 64 << 10, Disk: 1 << 20, Dir: dir}, nil)
		for b := want; len(b) > 0; {
			n := min(len(b), 48<<10)
			if _, err := s.Write(b[:n]); err != nil {
				s.Abort(err)
				break
			}
			b = b[n:]
			if len(b)%5 == 0 {
				s.Flush()
			}
		}
		s.Close()
		if err := s.Wait(); err != nil {
			t.Errorf("Wait: %v", err)
			panic(http.ErrAbortHandler)
		}
	})
	resp, err := http.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	got, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("got %d bytes, want %d", len(got), len(want))
	}
	if resp.ContentLength != -1 {
		t.Errorf("ContentLength = %d, want -1 (chunked)", resp.ContentLength)
	}
}

// TestHTTPStalledClient has a client that sends a request and reads
// nothing: once the socket buffers are full, the spool's write makes no
// progress and the client is cut, while the producer, waiting at the memory
// bound, is told.
func TestHTTPStalledClient(t *testing.T) {
	type result struct{ produce, wait error }
	done := make(chan result, 1)
	srv := serve(t, func(w http.ResponseWriter, r *http.Request) {
		s := spool.New(newResponseDest(w), spool.Limits{Memory: 64 << 10, NoProgress: 200 * time.Millisecond}, nil)
		block := bytes.Repeat([]byte("0123456789abcdef"), 4<<10)
		var err error
		for i := 0; i < 4096 && err == nil; i++ { // 256 MiB: more than any socket buffers
			_, err = s.Write(block)
		}
		if err == nil {
			err = s.Close()
		} else {
			s.Abort(err)
		}
		done <- result{err, s.Wait()}
		panic(http.ErrAbortHandler)
	})
	conn, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "GET / HTTP/1.1\r\nHost: informe\r\n\r\n")
	res := <-done
	if !errors.Is(res.wait, spool.ErrStalled) {
		t.Errorf("Wait = %v, want ErrStalled", res.wait)
	}
	if !errors.Is(res.produce, spool.ErrStalled) {
		t.Errorf("producer got %v, want ErrStalled", res.produce)
	}
}

// TestHTTP10 answers an HTTP/1.0 client from a held spool with a
// Content-Length, and an HTTP/1.1 client as a stream, from the same
// handler.
func TestHTTP10(t *testing.T) {
	dir := t.TempDir()
	want := random(1<<20+17, 2)
	srv := serve(t, func(w http.ResponseWriter, r *http.Request) {
		dst, lim := newResponseDest(w), spool.Limits{Memory: 64 << 10, Disk: 4 << 20, Dir: dir}
		var s *spool.Spool
		if r.ProtoAtLeast(1, 1) {
			s = spool.New(dst, lim, nil)
		} else {
			s = spool.NewHeld(dst, lim, nil)
		}
		if _, err := s.Write(want); err != nil {
			s.Abort(err)
		}
		if err := s.Close(); err != nil {
			s.Abort(err)
			s.Wait()
			http.Error(w, "too large", http.StatusServiceUnavailable)
			return
		}
		if !r.ProtoAtLeast(1, 1) {
			w.Header().Set("Content-Length", strconv.FormatInt(s.Len(), 10))
		}
		if err := s.Wait(); err != nil {
			panic(http.ErrAbortHandler)
		}
	})
	for _, tt := range []struct {
		proto   string
		length  int64
		chunked bool
	}{
		{"HTTP/1.0", int64(len(want)), false},
		{"HTTP/1.1", -1, true},
	} {
		t.Run(tt.proto, func(t *testing.T) {
			conn, err := net.Dial("tcp", srv.Listener.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			fmt.Fprintf(conn, "GET / %s\r\nHost: informe\r\nConnection: close\r\n\r\n", tt.proto)
			resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
			if err != nil {
				t.Fatal(err)
			}
			got, err := io.ReadAll(resp.Body)
			if err != nil {
				t.Fatal(err)
			}
			if resp.ContentLength != tt.length {
				t.Errorf("ContentLength = %d, want %d", resp.ContentLength, tt.length)
			}
			if chunked := len(resp.TransferEncoding) > 0; chunked != tt.chunked {
				t.Errorf("chunked = %v, want %v", chunked, tt.chunked)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("got %d bytes, want %d", len(got), len(want))
			}
		})
	}
}

// TestUnsupportedDeadline checks a destination whose adapter reports no
// deadlines (a ResponseRecorder's ResponseController does): the spool
// delivers all the same, and cannot cut.
func TestUnsupportedDeadline(t *testing.T) {
	rec := httptest.NewRecorder()
	want := random(200<<10, 3)
	s := spool.New(newResponseDest(rec), spool.Limits{}, nil)
	if _, err := s.Write(want); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Wait(); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(rec.Body.Bytes(), want) {
		t.Errorf("got %d bytes, want %d", rec.Body.Len(), len(want))
	}
	if !rec.Flushed {
		t.Error("the recorder was not flushed")
	}
}
