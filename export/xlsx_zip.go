package export

import (
	"archive/zip"
	"compress/flate"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
	"io/fs"
	"math"
)

// xlsxZip is the excelize.ZipWriter that zips a workbook straight to the
// encoder's writer, rather than into the bytes.Buffer excelize would build
// the whole file in. It differs from a plain zip.Writer in two ways:
//
//   - Parts are deflated at flate.BestSpeed. Deflating is about 40% of the
//     whole encoding at the default level; BestSpeed made
//     BenchmarkEncode/xlsx a third faster (85 to 56 µs a row) for a file
//     30% larger (4.5 to 5.8 MB for 10,000 rows).
//
//   - A part that may reach 4 GiB (a sheet near Excel's row limit with
//     many columns: at 74 columns a sheet passes 4 GiB of XML at about a
//     million rows) says so in its local header, as Excel requires.
//
// Excel asks to repair a workbook with a part of 4 GiB or more unless that
// part's local header says "version needed to extract: 4.5" (ZIP64), and it
// also refuses local headers that carry a ZIP64 extra field when the sizes
// follow the data in a data descriptor. Apache POI's bug 57342 and the
// opczip library written for it, excelize's writeZip64LFH (which patches
// the version into the local headers of the workbooks it buffers), Go
// issue 77060, and the minizip-ng and DuckDB reports of Excel refusing
// workbooks with ZIP64 extras in local headers all agree on that form. A
// streaming zip.Writer cannot give it: CreateHeader always writes version
// 2.0 in the local header, sizes being unknown when it is written, and
// puts the ZIP64 sizes in the data descriptor and central directory only.
// So parts go through CreateRaw, which writes the header as given, and are
// deflated here; their header is written at their first byte, when
// excelize hands over either the whole part in one Write or a reader that
// knows its size (the sheets' temporary files), and says 4.5 when the part
// may reach 4 GiB. After the data come a data descriptor with 64-bit sizes
// and, in the central directory, a ZIP64 extra field: archive/zip's own.
//
// Measured with TestXLSXZip64 (INFORME_XLSX_ZIP64=1): a sheet of 4.5 GB of
// XML (1,500 rows of 100 cells of 30,000 characters) zips to 7.4 MB in 52 s.
// Python's zipfile (testzip) and openpyxl in read-only mode read every cell
// of it, both as written here and re-zipped by a plain streaming zip.Writer
// (version 2.0 in the local header): what differs is only the version,
// which they do not check and Excel does. LibreOffice 7.4 reads a 4.2 GB
// sheet but loads no workbook with a part past 4 GiB, neither of those nor
// one zipped by Info-ZIP's zip: a limit of LibreOffice, not of this form.
// Excel itself could not be run here; the form is the one the reports
// above found it to open.
type xlsxZip struct {
	zw    *zip.Writer
	fw    *flate.Writer // reused by every part
	entry *zipEntry     // the part being written, if any
}

// zip64Threshold is the size from which a part's local header says ZIP64:
// 4 GiB less room for deflate's worst case (stored blocks add 5 bytes in
// 65,535), so that neither size can pass 32 bits unannounced. Tests lower
// it.
var zip64Threshold int64 = math.MaxUint32 - 1<<20

func newXLSXZip(w io.Writer) *xlsxZip {
	return &xlsxZip{zw: zip.NewWriter(w)}
}

// Create starts the part name; the previous one is complete.
func (z *xlsxZip) Create(name string) (io.Writer, error) {
	if err := z.endEntry(); err != nil {
		return nil, err
	}
	z.entry = &zipEntry{z: z, name: name, crc: crc32.NewIEEE()}
	return z.entry, nil
}

// AddFS is part of excelize.ZipWriter; excelize does not call it when
// writing a workbook.
func (z *xlsxZip) AddFS(fs.FS) error {
	return errors.New("export: xlsx: AddFS is not supported")
}

// Close completes the last part and writes the central directory.
func (z *xlsxZip) Close() error {
	if err := z.endEntry(); err != nil {
		return err
	}
	return z.zw.Close()
}

// endEntry completes the current part's deflate stream and records its
// CRC and sizes in its header, which archive/zip keeps and writes out in
// the data descriptor and central directory at the next part or Close.
func (z *xlsxZip) endEntry() error {
	e := z.entry
	if e == nil {
		return nil
	}
	z.entry = nil
	if e.fh == nil {
		if err := e.begin(0); err != nil {
			return err
		}
	}
	if err := z.fw.Close(); err != nil {
		return err
	}
	fh := e.fh
	fh.CRC32 = e.crc.Sum32()
	fh.UncompressedSize64 = uint64(e.size)
	fh.CompressedSize64 = uint64(e.out.n)
	// The 32-bit fields matter only below 4 GiB: from there archive/zip
	// writes the 64-bit ones.
	fh.UncompressedSize = uint32(min(fh.UncompressedSize64, math.MaxUint32))
	fh.CompressedSize = uint32(min(fh.CompressedSize64, math.MaxUint32))
	return nil
}

// zipEntry is one part being written.
type zipEntry struct {
	z    *xlsxZip
	name string
	fh   *zip.FileHeader // nil until the first byte
	out  *countingWriter // the compressed bytes, into the zip
	crc  hash.Hash32
	size int64 // uncompressed bytes so far
}

// begin writes the part's local header for size bytes of data, or an
// unknown amount when size is negative.
func (e *zipEntry) begin(size int64) error {
	const (
		zip20 = 20 // deflate
		zip45 = 45 // ZIP64
	)
	version := uint16(zip20)
	if size < 0 || size >= zip64Threshold {
		version = zip45
	}
	e.fh = &zip.FileHeader{
		Name:           e.name,
		Method:         zip.Deflate,
		Flags:          0x8, // CRC and sizes follow the data
		CreatorVersion: version,
		ReaderVersion:  version,
	}
	w, err := e.z.zw.CreateRaw(e.fh)
	if err != nil {
		return err
	}
	e.out = &countingWriter{w: w}
	if e.z.fw == nil {
		e.z.fw, err = flate.NewWriter(e.out, flate.BestSpeed)
		return err
	}
	e.z.fw.Reset(e.out)
	return nil
}

func (e *zipEntry) Write(p []byte) (int, error) {
	if e.fh == nil {
		// excelize writes every part but the sheets in one Write.
		if err := e.begin(int64(len(p))); err != nil {
			return 0, err
		}
	}
	if e.fh.ReaderVersion < 45 && e.size+int64(len(p)) >= zip64Threshold {
		return 0, fmt.Errorf("export: xlsx: zip part %s passed 4 GiB after its header went out without ZIP64", e.name)
	}
	e.size += int64(len(p))
	e.crc.Write(p)
	return e.z.fw.Write(p)
}

// ReadFrom copies r into the part. io.Copy calls it with excelize's
// reader of a sheet's temporary file, which knows its size, so the header
// is written knowing whether the part needs ZIP64.
func (e *zipEntry) ReadFrom(r io.Reader) (int64, error) {
	if e.fh == nil {
		size := int64(-1)
		if s, ok := r.(interface{ Size() int64 }); ok {
			size = s.Size()
		}
		if err := e.begin(size); err != nil {
			return 0, err
		}
	}
	buf := make([]byte, 256<<10)
	return io.CopyBuffer(struct{ io.Writer }{e}, r, buf) // struct{}: not ReadFrom again
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
