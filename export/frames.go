package export

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// A continuation of a [Joiner] writes frames for the first encoder, not a
// part of the body: a kind byte, then fixed-size big-endian fields, and
// for a kind with a length field that many bytes of payload after them.
const (
	frameBegin = 'B' // first row: 8 bytes
	frameData  = 'D' // length: 4 bytes; payload: the body's bytes (XLSX: deflate data)
	framePiece = 'E' // XLSX: a piece's end: its CRC-32 (4 bytes), its size (8 bytes)
	frameSheet = 'S' // XLSX: the current sheet has ended; the next one begins
	frameMeta  = 'M' // Parquet: length: 4 bytes; payload: the part's file metadata
	frameRows  = 'R' // the continuation's end: its rows, 8 bytes
)

// frameLen is the length of a frame's kind and fields, 0 for an unknown
// kind.
func frameLen(kind byte) int {
	switch kind {
	case frameBegin, frameRows:
		return 9
	case frameData, frameMeta:
		return 5
	case framePiece:
		return 13
	case frameSheet:
		return 1
	}
	return 0
}

// hasPayload reports whether frames of kind are followed by the payload
// their length field gives.
func hasPayload(kind byte) bool { return kind == frameData || kind == frameMeta }

// frames gathers a continuation's frames and writes them out in chunks.
type frames struct {
	w      io.Writer
	buf    []byte
	dataAt int // where the open data frame starts in buf, when data is true
	data   bool
	err    error
}

// Write adds to the open data frame, opening one.
func (f *frames) Write(b []byte) (int, error) {
	if f.err != nil {
		return 0, f.err
	}
	if !f.data {
		f.dataAt, f.data = len(f.buf), true
		f.buf = append(f.buf, frameData, 0, 0, 0, 0)
	}
	f.buf = append(f.buf, b...)
	if len(f.buf) >= xlsxChunk {
		return len(b), f.flush()
	}
	return len(b), nil
}

// closeData completes the open data frame's length.
func (f *frames) closeData() {
	if f.data {
		binary.BigEndian.PutUint32(f.buf[f.dataAt+1:], uint32(len(f.buf)-f.dataAt-5))
		f.data = false
	}
}

// frame adds a frame of kind with its fields, each of the size its kind
// gives it; payload follows a kind that has one, its length the field.
func (f *frames) frame(kind byte, fields ...uint64) {
	f.closeData()
	f.buf = append(f.buf, kind)
	switch kind {
	case framePiece:
		f.buf = binary.BigEndian.AppendUint32(f.buf, uint32(fields[0]))
		f.buf = binary.BigEndian.AppendUint64(f.buf, fields[1])
	case frameBegin, frameRows:
		f.buf = binary.BigEndian.AppendUint64(f.buf, fields[0])
	}
}

// payload adds a frame of kind (one with a payload) holding p.
func (f *frames) payload(kind byte, p []byte) {
	f.closeData()
	f.buf = append(f.buf, kind)
	f.buf = binary.BigEndian.AppendUint32(f.buf, uint32(len(p)))
	f.buf = append(f.buf, p...)
}

// flush writes out the frames gathered.
func (f *frames) flush() error {
	if f.err != nil {
		return f.err
	}
	f.closeData()
	if len(f.buf) > 0 {
		_, f.err = f.w.Write(f.buf)
		f.buf = f.buf[:0]
	}
	return f.err
}

// errPartEnded is the error of a continuation's output that ended before
// its last frame.
var errPartEnded = errors.New("a part's output ended early")

// frameReader cuts one continuation's output, written to it in pieces of
// any size, into frames for a [Joiner]: each frame's kind and fields go to
// frame whole, its payload to payload as it comes. The first frame must be
// frameBegin, the last frameRows.
type frameReader struct {
	frame   func(f []byte) error
	payload func(kind byte, p []byte) error

	hdr   []byte // the frame being read, its kind and fields
	kind  byte   // the kind of the payload coming
	left  int    // bytes of that payload still to come
	begun bool
	done  bool
}

// write reads b, the next bytes of the output.
func (r *frameReader) write(b []byte) error {
	for len(b) > 0 {
		if r.left > 0 {
			k := min(len(b), r.left)
			if err := r.payload(r.kind, b[:k]); err != nil {
				return err
			}
			r.left -= k
			b = b[k:]
			continue
		}
		if r.done {
			return errors.New("a part's output goes on past its end")
		}
		kind := b[0]
		if len(r.hdr) > 0 {
			kind = r.hdr[0]
		}
		if frameLen(kind) == 0 {
			return fmt.Errorf("a part's output holds an unknown frame %q", kind)
		}
		k := min(len(b), frameLen(kind)-len(r.hdr))
		r.hdr = append(r.hdr, b[:k]...)
		b = b[k:]
		if len(r.hdr) < frameLen(kind) {
			continue
		}
		switch {
		case !r.begun && kind != frameBegin:
			return errors.New("a part's output does not begin with its first row")
		case r.begun && kind == frameBegin:
			return errors.New("a part's output begins twice")
		}
		r.begun = true
		r.done = kind == frameRows
		if hasPayload(kind) {
			r.kind, r.left = kind, int(binary.BigEndian.Uint32(r.hdr[1:]))
		}
		if err := r.frame(r.hdr); err != nil {
			return err
		}
		r.hdr = r.hdr[:0]
	}
	return nil
}

// ended reports whether the output ended at its last frame.
func (r *frameReader) ended() bool { return r.done && len(r.hdr) == 0 && r.left == 0 }

// A partHandler is what an encoder does with the frames of a continuation
// it joins: begin makes way for the part, once its first frame has said
// that it follows on from the encoder's rows; frame takes each later
// complete frame, payload the payload of one as it comes (see
// frameReader).
type partHandler interface {
	begin() error
	frame(f []byte) error
	payload(kind byte, p []byte) error
}

// partJoin is the writer a [Joiner]'s Join returns: it reads one
// continuation's output into the encoder, whose sticky error is its own,
// and checks that the part follows on from the encoder's rows.
type partJoin struct {
	format string // for errors: "xlsx", "parquet"
	s      *state // the encoder's
	rows   *int64 // the encoder's rows so far, the part's included once joined
	cont   bool   // the encoder continues another's body, and joins none
	h      partHandler
	r      frameReader
}

func newPartJoin(format string, s *state, rows *int64, cont bool, h partHandler) *partJoin {
	j := &partJoin{format: format, s: s, rows: rows, cont: cont, h: h}
	j.r = frameReader{frame: j.frame, payload: h.payload}
	return j
}

func (j *partJoin) Write(b []byte) (int, error) {
	switch {
	case j.s.closed:
		return 0, ErrClosed
	case j.s.err != nil:
		return 0, j.s.err
	case j.cont:
		return 0, j.s.fail(fmt.Errorf("export: %s: a continuation cannot join another", j.format))
	}
	if err := j.r.write(b); err != nil {
		return 0, j.s.fail(fmt.Errorf("export: %s: %w", j.format, err))
	}
	return len(b), nil
}

// frame checks that a part's first frame starts it where the encoder's
// rows end, and hands every frame to the encoder.
func (j *partJoin) frame(f []byte) error {
	if f[0] != frameBegin {
		return j.h.frame(f)
	}
	if first := int64(binary.BigEndian.Uint64(f[1:])); first != *j.rows {
		return fmt.Errorf("a part starting at row %d cannot follow %d rows", first, *j.rows)
	}
	return j.h.begin()
}

// Close reports a continuation's output that ended before its end.
func (j *partJoin) Close() error {
	if j.s.err == nil && !j.r.ended() {
		j.s.err = fmt.Errorf("export: %s: %w", j.format, errPartEnded)
	}
	return j.s.err
}
