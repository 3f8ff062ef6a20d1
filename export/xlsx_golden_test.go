package export

import (
	"archive/zip"
	"bytes"
	"io"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/xuri/excelize/v2"

	"github.com/informe/informe/internal/dataset"
)

// awkwardRows are tricky rows and text that XML, Excel's escapes and its
// cell limits make awkward: markup, control characters, invalid UTF-8,
// characters XML cannot hold, Excel's own _xHHHH_ escapes, whitespace at
// either end, and a value past Excel's 32,767 characters a cell.
func awkwardRows() [][][]byte {
	long := strings.Repeat("a", 32766) + "😀tail" // the emoji is two UTF-16 units: cut before it
	return append(trickyRows(), rows(
		[]string{"+7", "<script>alert('x')</script>", "a\x01b\x1fc\x7fd", "bad\xff\xfeutf8 \xe2\x82", "0012.50", "2024-03-05 ", "2024-03-05T10:20:30", "2024-03-05 10:20:30+05:30", "\x00"},
		[]string{"007", "_x0041_ _x005F_x0041_ _x00zz_ _X0041_", "  both  ", "\r\nlead", "-0", "", "", "", ""},
		[]string{"-0", "tail\n", "emoji 😀 \uFFFE\uFFFF \U0010FFFF", "&amp; ]]> \"'", "1.", ".5", "1900-02-28 00:00:00", "2024-03-05 10:20:30.1234567891+00", "9999-12-31 23:59:59"},
		[]string{"1", long, "=HYPERLINK(\"http://x\")", "\t", "", "", "", "", ""},
	)...)
}

// xlsxGoldenParts returns the parts of an xlsx file named by keep (all
// when keep is nil), sorted by name, each after a line naming it.
func xlsxGoldenParts(t *testing.T, b []byte, keep func(name string) bool) []byte {
	t.Helper()
	zr, err := zip.NewReader(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	files := slices.SortedFunc(slices.Values(zr.File), func(a, b *zip.File) int { return strings.Compare(a.Name, b.Name) })
	var out bytes.Buffer
	for _, f := range files {
		if keep != nil && !keep(f.Name) {
			continue
		}
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		part, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			t.Fatalf("%s: %v", f.Name, err)
		}
		out.WriteString("--- " + f.Name + "\n")
		out.Write(part)
		out.WriteString("\n")
	}
	return out.Bytes()
}

// TestXLSXGolden checks the workbook's parts byte for byte against
// workbooks made by excelize's stream writer, which encoded XLSX before:
// cells, types, styles, escapes and the workbook's fixed parts.
func TestXLSXGolden(t *testing.T) {
	workbookParts := func(name string) bool {
		return strings.HasPrefix(name, "xl/worksheets/") || name == "xl/workbook.xml" ||
			name == "xl/_rels/workbook.xml.rels" || name == "[Content_Types].xml"
	}
	for _, tt := range []struct {
		name      string
		cols      []dataset.Column
		rows      [][][]byte
		sheet     string
		announce  bool
		sheetRows int64 // rows a sheet holds, header included; 0 for Excel's
		keep      func(string) bool
	}{
		{"xlsx_report", reportColumns, xlsxRows(), "general-report", true, 6, nil},
		{"xlsx_awkward", trickyColumns, awkwardRows(), "tricky", false, 0, workbookParts},
		{"xlsx_users_empty", userColumns, nil, "", true, 0, workbookParts},
		{"xlsx_no_columns", nil, [][][]byte{{}, {}}, "none", true, 2, workbookParts},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if tt.sheetRows > 0 {
				setSheetRows(t, tt.sheetRows)
			}
			announced := int64(-1)
			if tt.announce {
				announced = int64(len(tt.rows))
			}
			var buf bytes.Buffer
			e, err := NewXLSX(&buf, tt.cols, XLSXOptions{Sheet: tt.sheet, Rows: announced})
			if err != nil {
				t.Fatal(err)
			}
			encodeAll(t, e, tt.rows)
			golden(t, tt.name+".golden", xlsxGoldenParts(t, buf.Bytes(), tt.keep))
		})
	}
}

// TestXLSXAwkwardText reads the awkward text back with excelize: markup
// and formulas stay text, characters XML cannot carry read as U+FFFD, and
// text past Excel's limit is cut there.
func TestXLSXAwkwardText(t *testing.T) {
	var buf bytes.Buffer
	rs := awkwardRows()
	e, err := NewXLSX(&buf, trickyColumns, XLSXOptions{Sheet: "tricky", Rows: -1})
	if err != nil {
		t.Fatal(err)
	}
	encodeAll(t, e, rs)
	f, err := excelize.OpenReader(&buf)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for i, r := range rs {
		for j, c := range trickyColumns {
			if c.Kind != dataset.Text || len(r[j]) == 0 {
				continue
			}
			ref, _ := excelize.CoordinatesToCellName(j+1, i+2)
			got, err := f.GetCellValue("tricky", ref)
			if err != nil {
				t.Fatal(err)
			}
			if want := readableText(r[j]); got != want {
				t.Errorf("%s = %.80q, want %.80q", ref, got, want)
			}
			if formula, _ := f.GetCellFormula("tricky", ref); formula != "" {
				t.Errorf("%s has formula %q", ref, formula)
			}
		}
	}
}

// readableText is v as a cell reads it back: each invalid byte and each
// character XML cannot carry as U+FFFD, cut to Excel's 32,767 UTF-16
// units.
func readableText(v []byte) string {
	var b strings.Builder
	units := 0
	for i := 0; i < len(v); {
		r, size := utf8.DecodeRune(v[i:])
		n := 1
		if r >= 0x10000 {
			n = 2
		}
		if units += n; units > maxCellChars {
			break
		}
		if r < 0x20 && r != '\t' && r != '\n' && r != '\r' || r == 0xFFFE || r == 0xFFFF {
			r = utf8.RuneError
		}
		b.WriteRune(r)
		i += size
	}
	return b.String()
}
