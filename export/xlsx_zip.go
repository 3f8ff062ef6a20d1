package export

import (
	"archive/zip"
	"bytes"
	"hash/crc32"
	"io"
	"math"
	"strconv"

	"github.com/klauspost/compress/flate"
)

// xlsxZip writes a workbook's parts as a zip stream: each part's local
// header, then its data deflated as it comes, then a data descriptor with
// its CRC and sizes; the central directory at the end. Nothing is kept
// but the part being written and the central directory's entries.
//
// Parts go through zip.Writer.CreateRaw, deflated here, rather than
// through zip.Writer.CreateHeader, for two reasons:
//
//   - Deflate is klauspost/compress's at level 1 (BestSpeed). The sheet's
//     deflating was most of the encoder's time with the standard library's
//     BestSpeed; BenchmarkEncode/xlsx is about twice as fast with this one,
//     for a file a few percent larger.
//
//   - The local header of a part whose size is not known when it goes out
//     (a sheet: rows are still coming) says "version needed to extract:
//     4.5" (ZIP64), since it may pass 4 GiB. Excel asks to repair a
//     workbook with a part of 4 GiB or more unless that part's local
//     header says 4.5, and it refuses local headers that carry a ZIP64
//     extra field when the sizes follow the data in a data descriptor
//     (Apache POI's bug 57342, Go issue 77060, the minizip-ng and DuckDB
//     reports). A streaming zip.Writer cannot give that form: CreateHeader
//     writes version 2.0 in the local header. CreateRaw writes the header
//     as given. Saying 4.5 on every sheet, whatever its size, is what
//     opczip does, the writer of dhatim/fastexcel's streamed workbooks,
//     which Excel opens. After the data, archive/zip writes a data
//     descriptor with 64-bit sizes for parts of 4 GiB or more and, in the
//     central directory, a ZIP64 extra field and a ZIP64 end record.
//
// Parts of known size, the workbook's small fixed parts, say 2.0 as a
// plain zip.Writer would.
//
// Measured with TestXLSXZip64 (INFORME_XLSX_ZIP64=1) on the encoder this
// one replaced, which wrote the same form: Python's zipfile and openpyxl
// in read-only mode read every cell of a 4.5 GB sheet. LibreOffice 7.4
// reads a 4.2 GB sheet but loads no workbook with a part past 4 GiB, from
// any zip writer: a limit of LibreOffice, not of this form. Excel itself
// could not be run here.
type xlsxZip struct {
	zw   *zip.Writer
	fw   *flate.Writer // reused by every part
	out  countingWriter
	fh   *zip.FileHeader // the part being written, nil between parts
	crc  uint32
	size int64 // uncompressed bytes of the part so far

	// Deflate data joined from a continuation (see join) is written raw,
	// between sync flushes of fw. idle says fw has deflated nothing since
	// its reset; stale that it has, and raw data was joined after it, so
	// that fw must start afresh before it deflates again (its history is
	// no longer what precedes its output) and must not flush meanwhile (a
	// joined piece may still be coming, not on a byte boundary).
	idle, stale bool
}

// zipOffset is where the zip starts in the writer's output, for
// archive/zip's offsets. Only tests move it, past 4 GiB, so that
// archive/zip writes its ZIP64 records on a small workbook.
var zipOffset int64

// zipDate is every part's modification date in its headers, 1980-01-01
// (the first day MS-DOS dates hold) at 00:00: a valid date, the same in
// every workbook, so that the same rows give the same bytes. archive/zip
// would write month 0 for a header without one.
const zipDate = 1<<5 | 1

// Versions needed to extract, in a part's headers.
const (
	zipVersion20 = 20 // deflate
	zipVersion45 = 45 // ZIP64
)

func newXLSXZip(w io.Writer) *xlsxZip {
	zw := zip.NewWriter(w)
	zw.SetOffset(zipOffset)
	return &xlsxZip{zw: zw}
}

// begin starts the part name, whose local header says version, 45 when
// its size is not known yet. Write then deflates its data, and end
// completes it.
func (z *xlsxZip) begin(name string, version uint16) error {
	z.fh = &zip.FileHeader{
		Name:           name,
		ModifiedDate:   zipDate,
		Method:         zip.Deflate,
		Flags:          0x8, // CRC and sizes follow the data
		CreatorVersion: version,
		ReaderVersion:  version,
	}
	w, err := z.zw.CreateRaw(z.fh)
	if err != nil {
		return err
	}
	z.out = countingWriter{w: w}
	z.crc, z.size = 0, 0
	z.idle, z.stale = true, false
	if z.fw == nil {
		z.fw, err = flate.NewWriter(&z.out, flate.BestSpeed)
		return err
	}
	z.fw.Reset(&z.out)
	return nil
}

// beginSheet starts the part of worksheet n (from 1).
func (z *xlsxZip) beginSheet(n int) error {
	return z.begin("xl/worksheets/sheet"+strconv.Itoa(n)+".xml", zipVersion45)
}

// endSheet completes the current worksheet's part.
func (z *xlsxZip) endSheet() error { return z.end() }

// Write deflates p into the current part.
func (z *xlsxZip) Write(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	if z.stale {
		z.fw.Reset(&z.out)
		z.stale = false
	}
	z.idle = false
	z.crc = crc32.Update(z.crc, crc32.IEEETable, p)
	z.size += int64(len(p))
	return z.fw.Write(p)
}

// pause ends what fw has deflated of the current part on a byte boundary,
// with a sync flush, so that deflate data made elsewhere can follow it
// (see joinRaw); fw starts afresh when it deflates again.
func (z *xlsxZip) pause() error {
	if z.idle || z.stale {
		return nil
	}
	z.stale = true
	return z.fw.Flush()
}

// joinRaw writes p, a piece of deflate data made elsewhere, into the
// current part after a pause; the piece's CRC and size are added by
// joined once it is complete.
func (z *xlsxZip) joinRaw(p []byte) error {
	_, err := z.out.Write(p)
	return err
}

// joined adds to the current part's CRC and size those of a joined piece
// of size uncompressed bytes whose CRC-32 is crc.
func (z *xlsxZip) joined(crc uint32, size int64) {
	z.crc = crc32Combine(z.crc, crc, size)
	z.size += size
}

// flush pushes the part's data written so far out to the underlying
// writer, as a deflate sync flush: a few bytes, and readers of the stream
// can inflate everything so far.
func (z *xlsxZip) flush() error {
	if z.fh != nil && !z.idle && !z.stale {
		if err := z.fw.Flush(); err != nil {
			return err
		}
	}
	return z.zw.Flush()
}

// end completes the current part's deflate stream and records its CRC and
// sizes in its header, which archive/zip writes out in the data descriptor
// and the central directory.
func (z *xlsxZip) end() error {
	if z.stale { // the final block, empty, after joined pieces
		z.fw.Reset(&z.out)
	}
	if err := z.fw.Close(); err != nil {
		return err
	}
	setSizes(z.fh, z.crc, z.size, z.out.n)
	z.fh = nil
	return nil
}

// setSizes records a part's CRC and sizes in its header. The 32-bit fields
// matter only below 4 GiB: from there archive/zip writes the 64-bit ones.
func setSizes(fh *zip.FileHeader, crc uint32, size, compressed int64) {
	fh.CRC32 = crc
	fh.UncompressedSize64 = uint64(size)
	fh.CompressedSize64 = uint64(compressed)
	fh.UncompressedSize = uint32(min(fh.UncompressedSize64, math.MaxUint32))
	fh.CompressedSize = uint32(min(fh.CompressedSize64, math.MaxUint32))
}

// zipPart is a part deflated once and written as it is into every workbook.
type zipPart struct {
	name       string
	deflated   []byte
	crc        uint32
	size       int64
	compressed int64
}

// newZipPart deflates data, a part of the workbook that never changes.
func newZipPart(name string, data []byte) (zipPart, error) {
	var buf bytes.Buffer
	fw, err := flate.NewWriter(&buf, flate.BestSpeed)
	if err != nil {
		return zipPart{}, err
	}
	if _, err := fw.Write(data); err != nil {
		return zipPart{}, err
	}
	if err := fw.Close(); err != nil {
		return zipPart{}, err
	}
	return zipPart{
		name:       name,
		deflated:   buf.Bytes(),
		crc:        crc32.ChecksumIEEE(data),
		size:       int64(len(data)),
		compressed: int64(buf.Len()),
	}, nil
}

// writePart writes p, deflated before, as a part of known size.
func (z *xlsxZip) writePart(p zipPart) error {
	fh := &zip.FileHeader{
		Name:           p.name,
		ModifiedDate:   zipDate,
		Method:         zip.Deflate,
		Flags:          0x8,
		CreatorVersion: zipVersion20,
		ReaderVersion:  zipVersion20,
	}
	setSizes(fh, p.crc, p.size, p.compressed)
	w, err := z.zw.CreateRaw(fh)
	if err != nil {
		return err
	}
	_, err = w.Write(p.deflated)
	return err
}

// part writes data as the part name, of known size.
func (z *xlsxZip) part(name string, data []byte) error {
	if err := z.begin(name, zipVersion20); err != nil {
		return err
	}
	if _, err := z.Write(data); err != nil {
		return err
	}
	return z.end()
}

// close writes the central directory and flushes the zip to the writer.
func (z *xlsxZip) close() error {
	return z.zw.Close()
}

// countingWriter counts the bytes written through it.
type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}
