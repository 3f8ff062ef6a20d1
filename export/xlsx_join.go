package export

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"

	"github.com/klauspost/compress/flate"

	"github.com/informe/informe/internal/dataset"
)

// A workbook read in parts: the first encoder writes the zip, and each
// continuation (Options.Continue) encodes its own rows into the sheets'
// XML and deflates its own share of each sheet, as pigz deflates a file in
// pieces: every piece ends with a sync flush, on a byte boundary, never
// with a final block. The first encoder joins the pieces into the sheets'
// zip entries in order (see [Joiner]), combines their CRC-32s, sums their
// sizes, and ends each entry with one empty final block. The XML is the
// one a single encoder writes, byte for byte: every encoder knows where
// its rows start (Options.First), so it numbers them, and it ends a full
// sheet and begins the next one where a single encoder would. The
// continuation's output is frames (see frames.go) for the first encoder.

// A Joiner is an encoder that joins the output of its continuations
// (encoders made with [Options].Continue) into its own body itself, rather
// than having it copied after its own bytes: an XLSX encoder, whose sheets
// are entries of a zip archive, and a Parquet encoder, whose footer
// indexes every row group.
type Joiner interface {
	// Join returns a writer that takes the whole output of one
	// continuation, the next one in the body's order (their Options.First
	// must follow on from the rows before), and joins it into the body.
	// Its Close reports output that ended early. The writer's errors are
	// the encoder's own, sticky, returned by Close too. The caller may
	// flush the encoder between writes.
	Join() io.WriteCloser
}

// sheetWriter takes the worksheets' XML and deflates it: into the
// workbook's zip ([xlsxZip]), or into a continuation's frames
// ([xlsxPart]).
type sheetWriter interface {
	io.Writer
	beginSheet(n int) error // worksheet n (from 1) begins
	endSheet() error        // the current worksheet is complete
	flush() error           // push out what is deflated so far
}

// newXLSXContinuation returns an encoder continuing a workbook from its
// row first (counted from 0), writing frames to w for the first encoder to
// join.
func newXLSXContinuation(w io.Writer, cols []dataset.Column, opts XLSXOptions, first int64) (*xlsxEncoder, error) {
	if first < 0 || (opts.Rows >= 0 && first > opts.Rows) {
		return nil, fmt.Errorf("export: xlsx: a continuation cannot start at row %d of %d", first, opts.Rows)
	}
	e, err := newXLSX(cols, opts)
	if err != nil {
		return nil, err
	}
	p := &xlsxPart{f: frames{w: w}}
	p.f.frame(frameBegin, uint64(first))
	e.out = p
	e.first, e.encoded = first, first
	e.sheet, e.rowNum = sheetAt(first)
	return e, nil
}

// finishContinuation ends a continuation's last piece and says how many
// rows it encoded.
func (e *xlsxEncoder) finishContinuation() error {
	if err := e.deflate(); err != nil {
		return fmt.Errorf("export: xlsx: %w", err)
	}
	p := e.out.(*xlsxPart)
	if err := p.endPiece(); err != nil {
		return fmt.Errorf("export: xlsx: %w", err)
	}
	p.f.frame(frameRows, uint64(e.encoded-e.first))
	if err := p.f.flush(); err != nil {
		return fmt.Errorf("export: xlsx: %w", err)
	}
	return nil
}

// xlsxPart deflates a continuation's share of each sheet, a piece per
// sheet, into frames.
type xlsxPart struct {
	f    frames
	fw   *flate.Writer
	open bool // a piece is being deflated
	crc  uint32
	size int64
}

func (p *xlsxPart) Write(b []byte) (int, error) {
	if len(b) == 0 {
		return 0, nil
	}
	if !p.open {
		if p.fw == nil {
			var err error
			if p.fw, err = flate.NewWriter(&p.f, flate.BestSpeed); err != nil {
				return 0, err
			}
		} else {
			p.fw.Reset(&p.f)
		}
		p.open, p.crc, p.size = true, 0, 0
	}
	p.crc = crc32.Update(p.crc, crc32.IEEETable, b)
	p.size += int64(len(b))
	return p.fw.Write(b)
}

// endPiece ends the piece being deflated with a sync flush, and says its
// CRC and size.
func (p *xlsxPart) endPiece() error {
	if !p.open {
		return nil
	}
	p.open = false
	if err := p.fw.Flush(); err != nil {
		return err
	}
	p.f.frame(framePiece, uint64(p.crc), uint64(p.size))
	return p.f.err
}

func (p *xlsxPart) beginSheet(int) error {
	p.f.frame(frameSheet)
	return p.f.err
}

func (p *xlsxPart) endSheet() error { return p.endPiece() }

func (p *xlsxPart) flush() error {
	if p.open {
		if err := p.fw.Flush(); err != nil {
			return err
		}
	}
	return p.f.flush()
}

// Join returns the writer joining a continuation's frames into e's
// workbook; see [Joiner].
func (e *xlsxEncoder) Join() io.WriteCloser {
	return newPartJoin("xlsx", &e.state, &e.encoded, e.z == nil, &xlsxJoin{e})
}

// xlsxJoin joins the pieces of one continuation into the workbook.
type xlsxJoin struct{ e *xlsxEncoder }

// payload joins deflate data of a piece.
func (j *xlsxJoin) payload(kind byte, p []byte) error {
	if kind != frameData {
		return fmt.Errorf("a part's output holds a frame %q, not one of a workbook", kind)
	}
	return j.e.z.joinRaw(p)
}

// begin deflates the XML this encoder holds, which goes before the
// part's, and pauses the sheet's entry for the part's pieces.
func (j *xlsxJoin) begin() error {
	if err := j.e.deflate(); err != nil {
		return err
	}
	return j.e.z.pause()
}

// frame joins the complete frame f.
func (j *xlsxJoin) frame(f []byte) error {
	e := j.e
	switch f[0] {
	case framePiece:
		e.z.joined(binary.BigEndian.Uint32(f[1:]), int64(binary.BigEndian.Uint64(f[5:])))
	case frameSheet:
		if err := e.z.endSheet(); err != nil {
			return err
		}
		e.sheet++
		return e.z.beginSheet(e.sheet)
	case frameRows:
		e.encoded += int64(binary.BigEndian.Uint64(f[1:]))
		if e.rows >= 0 && e.encoded > e.rows {
			return fmt.Errorf("%w: %d rows encoded, %d announced", ErrRowCount, e.encoded, e.rows)
		}
		sheet, row := sheetAt(e.encoded)
		if sheet != e.sheet {
			return fmt.Errorf("a part's output ends on sheet %d, its rows on sheet %d", e.sheet, sheet)
		}
		e.rowNum = row
	case frameMeta:
		return errors.New("a part's output holds a Parquet file's metadata, not a workbook's")
	}
	return nil
}

// crc32Combine returns the CRC-32 (IEEE) of the concatenation of two byte
// sequences, A then B, from crc1, A's CRC, crc2, B's, and len2, B's length,
// as zlib's crc32_combine computes it (its GF(2) matrix method): A's CRC
// is carried past len2 zero bytes by an operator squared for each bit of
// len2, then B's CRC is added. It takes O(log len2) 32x32 matrix
// products, whatever the lengths.
func crc32Combine(crc1, crc2 uint32, len2 int64) uint32 {
	if len2 <= 0 { // B is empty: crc2 is 0
		return crc1 ^ crc2
	}
	var even, odd [32]uint32 // operators for 2^k and 2^(k+1) zero bits
	odd[0] = crc32.IEEE      // the operator for one zero bit
	row := uint32(1)
	for n := 1; n < 32; n++ {
		odd[n] = row
		row <<= 1
	}
	gf2Square(&even, &odd) // two zero bits
	gf2Square(&odd, &even) // four zero bits
	// Apply len2 zero bytes, a bit of len2 at a time: the first square
	// below gives one zero byte. The two operators take turns as the
	// square and its root.
	sq, root := &even, &odd
	for ; len2 != 0; len2 >>= 1 {
		gf2Square(sq, root)
		if len2&1 != 0 {
			crc1 = gf2Times(sq, crc1)
		}
		sq, root = root, sq
	}
	return crc1 ^ crc2
}

// gf2Times returns the product of the 32x32 GF(2) matrix mat (a column a
// word) with vec.
func gf2Times(mat *[32]uint32, vec uint32) uint32 {
	var sum uint32
	for i := 0; vec != 0; i, vec = i+1, vec>>1 {
		if vec&1 != 0 {
			sum ^= mat[i]
		}
	}
	return sum
}

// gf2Square sets square to mat times mat.
func gf2Square(square, mat *[32]uint32) {
	for n := range 32 {
		square[n] = gf2Times(mat, mat[n])
	}
}
