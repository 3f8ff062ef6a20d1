package export

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/xuri/excelize/v2"
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

// TestXLSXZipVersions lowers the size from which parts say ZIP64 in their
// local header, and checks that only parts that big do, whether excelize
// gives them in one Write (small sheets) or from a temporary file.
func TestXLSXZipVersions(t *testing.T) {
	old := zip64Threshold
	t.Cleanup(func() { zip64Threshold = old })
	for _, tt := range []struct {
		name      string
		rows      int // 10,000 rows pass excelize.StreamChunkSize: a temporary file
		threshold int64
		sheet     uint16 // the version the sheet's local header should say
	}{
		{"InMemory", 10, 50_000, 45},
		{"InMemorySmall", 10, 1 << 40, 20},
		{"TempFile", 10_000, 50_000, 45},
		// The size of the temporary file is known before the header goes out.
		{"TempFileSmall", 10_000, 1 << 40, 20},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if testing.Short() && tt.rows > 100 {
				t.Skip("writes more than excelize.StreamChunkSize")
			}
			zip64Threshold = tt.threshold
			var buf bytes.Buffer
			e, err := NewXLSX(&buf, reportColumns, XLSXOptions{Sheet: "general-report", Rows: int64(tt.rows)})
			if err != nil {
				t.Fatal(err)
			}
			for i := 0; i < tt.rows; i++ {
				if err := e.Encode(reportRow(i)); err != nil {
					t.Fatal(err)
				}
			}
			if err := e.Close(); err != nil {
				t.Fatal(err)
			}
			zr, err := zip.NewReader(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
			if err != nil {
				t.Fatal(err)
			}
			versions := localVersions(t, bytes.NewReader(buf.Bytes()), int64(buf.Len()))
			for _, f := range zr.File {
				want := uint16(20)
				if int64(f.UncompressedSize64) >= zip64Threshold {
					want = 45
				}
				if got := versions[f.Name]; got != want {
					t.Errorf("%s (%d bytes): version %d, want %d", f.Name, f.UncompressedSize64, got, want)
				}
			}
			if got := versions["xl/worksheets/sheet1.xml"]; got != tt.sheet {
				t.Errorf("sheet: version %d, want %d", got, tt.sheet)
			}
			f, err := excelize.OpenReader(&buf)
			if err != nil {
				t.Fatal(err)
			}
			f.Close()
		})
	}
}

// TestXLSXZip64 writes a sheet of more than 4 GiB of XML (1,500 rows of
// 100 cells of 30,000 characters, 4.5 GB) to a file and checks that the
// part is ZIP64 in the form Excel wants: version 4.5 in its local header,
// no ZIP64 extra field there, 64-bit sizes after the data and in the
// central directory. It takes minutes and 5 GB of temporary disk, so it
// runs only with INFORME_XLSX_ZIP64=1; INFORME_XLSX_ZIP64_OUT=path keeps
// the workbook for other readers.
func TestXLSXZip64(t *testing.T) {
	if os.Getenv("INFORME_XLSX_ZIP64") != "1" {
		t.Skip("set INFORME_XLSX_ZIP64=1 to write a sheet past 4 GiB")
	}
	const rows, ncols, cellLen = 1500, 100, 30_000
	cols := make([]Column, ncols)
	row := make([][]byte, ncols)
	for i := range cols {
		cols[i] = Column{Name: "c" + string(rune('a'+i%26)) + string(rune('a'+i/26)), Kind: Text}
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
