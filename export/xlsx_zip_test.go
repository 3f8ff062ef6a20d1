package export

import (
	"archive/zip"
	"bytes"
	"compress/flate"
	"encoding/binary"
	"encoding/xml"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/xuri/excelize/v2"

	"github.com/informe/informe/internal/dataset"
)

// localVersions returns the "version needed to extract" of each part's
// local header, by name, after checking that every part reads back whole
// (archive/zip checks its CRC and sizes at EOF).
func localVersions(t *testing.T, r io.ReaderAt, size int64) map[string]uint16 {
	t.Helper()
	zr, err := zip.NewReader(r, size)
	if err != nil {
		t.Fatal(err)
	}
	versions := make(map[string]uint16)
	for _, f := range zr.File {
		off, err := f.DataOffset()
		if err != nil {
			t.Fatal(err)
		}
		// No part has a local extra field: the header is 30 bytes and the name.
		var h [30]byte
		if _, err := r.ReadAt(h[:], off-30-int64(len(f.Name))); err != nil {
			t.Fatal(err)
		}
		if sig := binary.LittleEndian.Uint32(h[0:]); sig != 0x04034b50 {
			t.Fatalf("%s: no local header before the data (signature %#x)", f.Name, sig)
		}
		if flags := binary.LittleEndian.Uint16(h[6:]); flags&0x8 == 0 {
			t.Errorf("%s: flags %#x, want a data descriptor", f.Name, flags)
		}
		if n := binary.LittleEndian.Uint16(h[28:]); n != 0 {
			t.Errorf("%s: local extra field of %d bytes, want none (Excel refuses ZIP64 extras there)", f.Name, n)
		}
		v := binary.LittleEndian.Uint16(h[4:])
		if f.ReaderVersion != v {
			t.Errorf("%s: version %d in the local header, %d in the central directory", f.Name, v, f.ReaderVersion)
		}
		versions[f.Name] = v
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		n, err := io.Copy(io.Discard, rc)
		if err != nil {
			t.Fatalf("%s: %v", f.Name, err)
		}
		rc.Close()
		if uint64(n) != f.UncompressedSize64 {
			t.Fatalf("%s: read %d bytes, want %d", f.Name, n, f.UncompressedSize64)
		}
	}
	return versions
}

// encodeNumbered encodes n report rows into a workbook of sheets of
// sheetRows rows, header included, and returns it.
func encodeNumbered(t *testing.T, n int, sheetRows int64) []byte {
	t.Helper()
	setSheetRows(t, sheetRows)
	var buf bytes.Buffer
	e, err := NewXLSX(&buf, reportColumns, XLSXOptions{Sheet: "general-report", Rows: int64(n)})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < n; i++ {
		if err := e.Encode(reportRow(i)); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestXLSXZipVersions checks the zip's form: sheets, whose size is not
// known when their header goes out, say ZIP64 (4.5) in their local header
// with no ZIP64 extra field there, as Excel wants of parts that may pass
// 4 GiB; the other parts say 2.0; every part has a data descriptor and
// reads back whole.
func TestXLSXZipVersions(t *testing.T) {
	for _, tt := range []struct {
		name string
		rows int
	}{
		{"Small", 10},
		{"ManyChunks", 5_000}, // several deflated chunks, two sheets
	} {
		t.Run(tt.name, func(t *testing.T) {
			b := encodeNumbered(t, tt.rows, 4_000)
			versions := localVersions(t, bytes.NewReader(b), int64(len(b)))
			for name, v := range versions {
				want := uint16(20)
				if strings.HasPrefix(name, "xl/worksheets/") {
					want = 45
				}
				if v != want {
					t.Errorf("%s: version %d, want %d", name, v, want)
				}
			}
			f, err := excelize.OpenReader(bytes.NewReader(b))
			if err != nil {
				t.Fatal(err)
			}
			f.Close()
		})
	}
}

// paddedReader reads as b preceded by off zero bytes: a workbook written
// at offset off of its output.
type paddedReader struct {
	off int64
	b   []byte
}

func (r paddedReader) ReadAt(p []byte, off int64) (int, error) {
	n := 0
	for ; n < len(p) && off+int64(n) < r.off; n++ {
		p[n] = 0
	}
	if n < len(p) {
		if i := off + int64(n) - r.off; i < int64(len(r.b)) {
			n += copy(p[n:], r.b[i:])
		}
	}
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// TestXLSXZip64Records writes a workbook as if 5 GiB of output came before
// it, so that its offsets pass 4 GiB and archive/zip writes the ZIP64
// records (extra fields in the central directory, the ZIP64 end of central
// directory and its locator) as it does for a sheet past 4 GiB, and checks
// that archive/zip reads every part back through them.
func TestXLSXZip64Records(t *testing.T) {
	const pad = 5 << 30
	old := zipOffset
	zipOffset = pad
	t.Cleanup(func() { zipOffset = old })
	b := encodeNumbered(t, 10, 6)

	if !bytes.Contains(b, []byte{0x50, 0x4b, 0x06, 0x06}) || !bytes.Contains(b, []byte{0x50, 0x4b, 0x06, 0x07}) {
		t.Fatal("no ZIP64 end of central directory record and locator")
	}
	r := paddedReader{off: pad, b: b}
	size := pad + int64(len(b))
	zr, err := zip.NewReader(r, size)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range zr.File {
		if !hasExtra(f.Extra, 0x0001) {
			t.Errorf("%s: no ZIP64 extra field in the central directory", f.Name)
		}
		if off, _ := f.DataOffset(); off < pad {
			t.Errorf("%s: data at %d, want past the 5 GiB before the zip", f.Name, off)
		}
	}
	versions := localVersions(t, r, size)
	if got := len(versions); got != 10 {
		t.Errorf("%d parts, want 10 (two sheets)", got)
	}
	rc, err := zr.Open("xl/worksheets/sheet2.xml")
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	var ws worksheet
	if err := xml.NewDecoder(rc).Decode(&ws); err != nil {
		t.Fatal(err)
	}
	checkSheetXML(t, ws, "general-report-2", len(reportColumns), 6, "A1:BV6")
}

// hasExtra reports whether a zip extra field block holds a field of id.
func hasExtra(extra []byte, id uint16) bool {
	for len(extra) >= 4 {
		tag, n := binary.LittleEndian.Uint16(extra), int(binary.LittleEndian.Uint16(extra[2:]))
		if tag == id {
			return true
		}
		extra = extra[min(4+n, len(extra)):]
	}
	return false
}

// TestXLSXFlush checks that Flush pushes the rows encoded so far out as
// the start of the sheet's part, which a client can already inflate, and
// that the workbook is still whole at Close.
func TestXLSXFlush(t *testing.T) {
	var buf bytes.Buffer
	e, err := NewXLSX(&buf, userColumns, XLSXOptions{Sheet: "users", Rows: 3})
	if err != nil {
		t.Fatal(err)
	}
	if buf.Len() != 0 {
		t.Fatalf("%d bytes written before the first row", buf.Len())
	}
	rs := userRows()
	if err := e.Encode(rs[0]); err != nil {
		t.Fatal(err)
	}
	if err := e.(Flusher).Flush(); err != nil {
		t.Fatal(err)
	}
	const name = "xl/worksheets/sheet1.xml"
	b := buf.Bytes()
	if len(b) < 30+len(name) || string(b[30:30+len(name)]) != name {
		t.Fatalf("flushed %d bytes, want the sheet's local header first", len(b))
	}
	xmlSoFar, err := io.ReadAll(flate.NewReader(bytes.NewReader(b[30+len(name):])))
	if err != io.ErrUnexpectedEOF {
		t.Fatalf("inflating the flushed bytes: %v, want them to end mid-stream", err)
	}
	if !bytes.Contains(xmlSoFar, []byte(`<row r="2">`)) || !bytes.Contains(xmlSoFar, []byte("José Núñez")) {
		t.Errorf("flushed sheet XML has no first row: %q", xmlSoFar)
	}
	encodeAll(t, e, rs[1:])
	f, err := excelize.OpenReader(&buf)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if got, _ := f.GetRows("users"); len(got) != 4 {
		t.Errorf("%d rows, want 4", len(got))
	}
}

// TestXLSXFlatMemory checks that the sheet XML the encoder holds stays
// within its chunk however many rows come: memory flat in rows.
func TestXLSXFlatMemory(t *testing.T) {
	e, err := NewXLSX(io.Discard, reportColumns, XLSXOptions{Rows: -1})
	if err != nil {
		t.Fatal(err)
	}
	x := e.(*xlsxEncoder)
	for i := 0; i < 20_000; i++ {
		if err := e.Encode(reportRow(i)); err != nil {
			t.Fatal(err)
		}
		if c := cap(x.buf); c > 2*xlsxChunk {
			t.Fatalf("row %d: buffer of %d bytes", i, c)
		}
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestXLSXStructure checks that the package's parts agree: the content
// types list every part, the workbook lists every sheet, each through a
// relationship to a part that exists.
func TestXLSXStructure(t *testing.T) {
	b := encodeNumbered(t, 10, 4)
	zr, err := zip.NewReader(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	parts := map[string]bool{}
	for _, f := range zr.File {
		parts[f.Name] = true
	}
	var types struct {
		Override []struct {
			PartName    string `xml:",attr"`
			ContentType string `xml:",attr"`
		}
	}
	if err := xml.Unmarshal([]byte(partXML(t, b, "[Content_Types].xml")), &types); err != nil {
		t.Fatal(err)
	}
	typed := map[string]string{}
	for _, o := range types.Override {
		typed[strings.TrimPrefix(o.PartName, "/")] = o.ContentType
	}
	for name := range parts {
		if _, ok := typed[name]; !ok && !strings.HasSuffix(name, ".rels") && name != "[Content_Types].xml" {
			t.Errorf("%s has no content type", name)
		}
	}
	for name := range typed {
		if !parts[name] {
			t.Errorf("content type for %s, which is missing", name)
		}
	}
	var wb struct {
		Sheets []struct {
			Name    string `xml:"name,attr"`
			SheetID int    `xml:"sheetId,attr"`
			RID     string `xml:"http://schemas.openxmlformats.org/officeDocument/2006/relationships id,attr"`
		} `xml:"sheets>sheet"`
	}
	if err := xml.Unmarshal([]byte(partXML(t, b, "xl/workbook.xml")), &wb); err != nil {
		t.Fatal(err)
	}
	var rels struct {
		Relationship []struct {
			ID     string `xml:"Id,attr"`
			Target string `xml:",attr"`
		}
	}
	if err := xml.Unmarshal([]byte(partXML(t, b, "xl/_rels/workbook.xml.rels")), &rels); err != nil {
		t.Fatal(err)
	}
	target := map[string]string{}
	for _, r := range rels.Relationship {
		target[r.ID] = "xl/" + r.Target
		if !parts["xl/"+r.Target] {
			t.Errorf("relationship %s to %s, which is missing", r.ID, r.Target)
		}
	}
	if len(wb.Sheets) != 4 {
		t.Fatalf("workbook lists %d sheets, want 4", len(wb.Sheets))
	}
	for i, s := range wb.Sheets {
		want := "xl/worksheets/sheet" + strconv.Itoa(i+1) + ".xml"
		if target[s.RID] != want || s.SheetID != i+1 {
			t.Errorf("sheet %q: id %d, relationship %s to %q, want %d and %s", s.Name, s.SheetID, s.RID, target[s.RID], i+1, want)
		}
		if typed[want] != "application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml" {
			t.Errorf("%s: content type %q", want, typed[want])
		}
	}
}

// TestXLSXZip64 writes a sheet of more than 4 GiB of XML (1,500 rows of
// 100 cells of 30,000 characters, 4.5 GB) to a file and checks that the
// part is ZIP64 in the form Excel wants: version 4.5 in its local header,
// no ZIP64 extra field there, 64-bit sizes after the data and in the
// central directory. It takes a minute and 5 GB of temporary disk, so it
// runs only with INFORME_XLSX_ZIP64=1; INFORME_XLSX_ZIP64_OUT=path keeps
// the workbook for other readers.
func TestXLSXZip64(t *testing.T) {
	if os.Getenv("INFORME_XLSX_ZIP64") != "1" {
		t.Skip("set INFORME_XLSX_ZIP64=1 to write a sheet past 4 GiB")
	}
	const rows, ncols, cellLen = 1500, 100, 30_000
	cols := make([]dataset.Column, ncols)
	row := make([][]byte, ncols)
	for i := range cols {
		cols[i] = dataset.Column{Name: "c" + string(rune('a'+i%26)) + string(rune('a'+i/26)), Kind: dataset.Text}
		row[i] = []byte(strings.Repeat(string(rune('a'+i%26)), cellLen))
	}
	path := os.Getenv("INFORME_XLSX_ZIP64_OUT")
	if path == "" {
		path = filepath.Join(t.TempDir(), "zip64.xlsx")
	}
	out, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	e, err := NewXLSX(out, cols, XLSXOptions{Sheet: "big", Rows: rows})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < rows; i++ {
		if err := e.Encode(row); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	fi, err := out.Stat()
	if err != nil {
		t.Fatal(err)
	}
	zr, err := zip.NewReader(out, fi.Size())
	if err != nil {
		t.Fatal(err)
	}
	versions := localVersions(t, out, fi.Size())
	for _, f := range zr.File {
		t.Logf("%s: %d bytes, %d compressed, version %d", f.Name, f.UncompressedSize64, f.CompressedSize64, versions[f.Name])
		if f.Name == "xl/worksheets/sheet1.xml" {
			if f.UncompressedSize64 <= 1<<32 {
				t.Errorf("sheet of %d bytes, want more than 4 GiB", f.UncompressedSize64)
			}
			if versions[f.Name] != 45 {
				t.Errorf("sheet: version %d, want 45", versions[f.Name])
			}
		}
	}
}
