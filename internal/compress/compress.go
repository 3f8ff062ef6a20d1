// Package compress chooses and applies the content coding of a response:
// gzip or zstd when the client accepts it ([Negotiate]), identity
// otherwise. [NewWriter] compresses a stream with settings made for text
// produced at database speed: fast levels, a small window, no goroutines,
// encoders pooled across responses, and Flush to push out what is buffered.
//
// The package knows nothing of HTTP beyond the Accept-Encoding syntax; the
// HTTP layer decides which responses are worth compressing, sets
// Content-Encoding from [Coding.String] and adds Vary: Accept-Encoding.
package compress

import (
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
)

// Coding is a content coding. The zero value is [Identity].
type Coding uint8

// The codings informe produces.
const (
	Identity Coding = iota // no coding: the bytes as they are
	Gzip                   // RFC 1952 gzip
	Zstd                   // RFC 8878 Zstandard
)

var codingNames = [...]string{Identity: "identity", Gzip: "gzip", Zstd: "zstd"}

// String returns the coding's token as used in Content-Encoding and
// Accept-Encoding: "identity", "gzip" or "zstd". A response in identity
// carries no Content-Encoding header at all.
func (c Coding) String() string {
	if int(c) < len(codingNames) {
		return codingNames[c]
	}
	return fmt.Sprintf("Coding(%d)", int(c))
}

// Settings, from trials on 8 MiB of CSV shaped like a report, by CPU time
// per core: gzip level 1 (BestSpeed) compresses about 245 MB/s to 27.7%;
// level 6 takes twice the time for 26.1%; level 2 is as fast for 27.1%
// but needs half again as much memory. zstd's fastest level compresses
// about 210 MB/s to 26.1%, level 6's size at nearly level 1's speed; its
// default level costs half again as much time for 26.0%. zstd's window is
// 64 KiB instead of 8 MiB: rows repeat what is near them, so larger
// windows gained nothing (the output grew by 2%), and the window is most
// of a writer's memory; with the lower-memory option, which cost no
// measurable time, a writer holds about 1 MiB (gzip: 0.8 MiB) instead of
// 18 MiB. Concurrency 1 makes the zstd encoder synchronous: no goroutine
// per response, and one response's compression takes one core at most.
const (
	gzipLevel  = gzip.BestSpeed
	zstdWindow = 64 << 10
)

var zstdOptions = []zstd.EOption{
	zstd.WithEncoderLevel(zstd.SpeedFastest),
	zstd.WithEncoderConcurrency(1),
	zstd.WithWindowSize(zstdWindow),
	zstd.WithLowerEncoderMem(true),
	// A body with no bytes is still a valid frame, which every decoder
	// accepts, rather than no bytes at all.
	zstd.WithZeroFrames(true),
}

// Encoders are pooled: most of a writer's memory is its tables, which
// Reset keeps.
var (
	gzipPool = sync.Pool{New: func() any {
		w, err := gzip.NewWriterLevel(io.Discard, gzipLevel)
		if err != nil {
			panic(err) // a constant level
		}
		return w
	}}
	zstdPool = sync.Pool{New: func() any {
		w, err := zstd.NewWriter(io.Discard, zstdOptions...)
		if err != nil {
			panic(err) // constant options
		}
		return w
	}}
)

// ErrUnknownCoding is returned, wrapped, by [NewWriter] for a value that is
// not one of the codings.
var ErrUnknownCoding = errors.New("compress: unknown coding")

// ErrClosed is returned by Write and Flush on a closed [Writer].
var ErrClosed = errors.New("compress: writer closed")

// A Writer compresses what is written to it in one coding and writes the
// result to an underlying writer. Its writes to the underlying writer are
// small (a few hundred bytes for gzip): give it a buffered writer, such as
// a spool. The first error it meets is kept and returned by every later
// call. A Writer is not safe for concurrent use.
type Writer struct {
	coding   Coding
	w        io.Writer
	gz       *gzip.Writer
	zs       *zstd.Encoder
	err      error // sticky; ErrClosed after a clean Close
	closed   bool
	closeErr error
}

// NewWriter returns a writer that compresses into w in coding c; with
// [Identity] it passes bytes through unchanged. It returns an error
// wrapping [ErrUnknownCoding] for a value of c that is not a coding. The
// caller must Close the writer on every path, also after an error, so that
// its encoder goes back to the pool.
func NewWriter(w io.Writer, c Coding) (*Writer, error) {
	zw := &Writer{coding: c, w: w}
	switch c {
	case Identity:
	case Gzip:
		zw.gz = gzipPool.Get().(*gzip.Writer)
		zw.gz.Reset(w)
	case Zstd:
		zw.zs = zstdPool.Get().(*zstd.Encoder)
		zw.zs.Reset(w)
	default:
		return nil, fmt.Errorf("%w: %v", ErrUnknownCoding, c)
	}
	return zw, nil
}

// Coding returns the writer's coding.
func (zw *Writer) Coding() Coding { return zw.coding }

// Write compresses p. Compressed bytes reach the underlying writer as the
// encoder's buffers fill, not at every Write. It returns the underlying
// writer's error, or [ErrClosed] after Close.
func (zw *Writer) Write(p []byte) (int, error) {
	if zw.err != nil {
		return 0, zw.err
	}
	var n int
	switch {
	case zw.gz != nil:
		n, zw.err = zw.gz.Write(p)
	case zw.zs != nil:
		n, zw.err = zw.zs.Write(p)
	default:
		n, zw.err = zw.w.Write(p)
	}
	return n, zw.err
}

// Flush writes out everything written so far, compressed so that a decoder
// can decode all of it at once (a gzip sync flush, a zstd block), and then
// flushes the underlying writer if it has a Flush() error method, as a
// spool does. Flushing often costs compression: call it where latency
// matters, such as after the first rows. It returns the first error met.
func (zw *Writer) Flush() error {
	if zw.err != nil {
		return zw.err
	}
	switch {
	case zw.gz != nil:
		zw.err = zw.gz.Flush()
	case zw.zs != nil:
		zw.err = zw.zs.Flush()
	}
	if f, ok := zw.w.(interface{ Flush() error }); ok && zw.err == nil {
		zw.err = f.Flush()
	}
	return zw.err
}

// Close finishes the stream (the gzip trailer, the zstd frame's end) and
// returns the encoder to the pool. It does not close or flush the
// underlying writer. It returns the first error met; later calls return
// the same, and Write and Flush then return [ErrClosed].
func (zw *Writer) Close() error {
	if zw.closed {
		return zw.closeErr
	}
	zw.closed = true
	switch {
	case zw.gz != nil:
		if zw.err == nil {
			zw.err = zw.gz.Close()
		}
		zw.gz.Reset(io.Discard) // let go of w
		gzipPool.Put(zw.gz)
		zw.gz = nil
	case zw.zs != nil:
		if zw.err == nil {
			zw.err = zw.zs.Close()
		}
		zw.zs.Reset(io.Discard)
		zstdPool.Put(zw.zs)
		zw.zs = nil
	}
	zw.closeErr = zw.err
	if zw.err == nil {
		zw.err = ErrClosed
	}
	return zw.closeErr
}
