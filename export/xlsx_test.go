package export

import (
	"archive/zip"
	"bytes"
	"encoding/xml"
	"errors"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/xuri/excelize/v2"

	"github.com/informe/informe/internal/dataset"
	"github.com/informe/informe/internal/testenv"
)

// xlsxRows are report rows with every kind, empty values, formula-looking
// text, a phone number, and values that do not parse as their kind.
func xlsxRows() [][][]byte {
	rs := make([][][]byte, 0, 8)
	for i := 0; i < 5; i++ {
		rs = append(rs, reportRow(i))
	}
	col := func(name string) int {
		for j, c := range reportColumns {
			if c.Name == name {
				return j
			}
		}
		panic(name)
	}
	r := reportRow(5)
	r[col("contract_id")] = []byte("42")
	r[col("contract_status")] = []byte("=1+1")
	r[col("client_phone_contract")] = []byte("+56 9 1234 5678")
	r[col("attended_by")] = []byte("@SUM(A1)")
	r[col("costo_servicio")] = []byte("1500.5")
	r[col("date_first_payment")] = []byte("2024-03-05")
	r[col("contract_creation_date")] = []byte("2024-03-05 10:20:30")
	r[col("execution_date")] = []byte("2024-03-05 13:45:12.25+00")
	r[col("task_detail")] = []byte("línea uno\nlínea dos <b>&amp;</b> \"comillas\" ñ")
	rs = append(rs, r)

	r = reportRow(6)
	for j := range r {
		if j%2 == 1 {
			r[j] = []byte{}
		}
	}
	r[col("contract_id")] = nil // NULL, though not nullable: an empty cell
	rs = append(rs, r)

	r = reportRow(7)
	r[col("quantity_quotas")] = []byte("12345678901234567890") // beyond 15 digits
	r[col("benefit_center_id_service")] = []byte("abc")
	r[col("costo_servicio")] = []byte("NaN")
	r[col("date_first_payment")] = []byte("infinity")
	r[col("client_birth_date_contract")] = []byte("1899-12-31") // before Excel's dates
	r[col("contract_creation_date")] = []byte("2024-02-30 10:00:00")
	r[col("execution_date")] = []byte("2024-03-05 22:15:00-03")
	rs = append(rs, r)
	return rs
}

// wantCell is how a value should read back: its formatted value, and
// whether it is a number cell (else a string or empty).
func wantCell(t *testing.T, k dataset.Kind, v []byte) (value string, number bool) {
	s := string(v)
	if s == "" {
		return "", false
	}
	switch k {
	case dataset.Integer:
		if len(strings.TrimPrefix(s, "-")) <= 15 {
			if _, err := strconv.ParseInt(s, 10, 64); err == nil {
				return s, true
			}
		}
	case dataset.Decimal:
		if x, err := strconv.ParseFloat(s, 64); err == nil && isPlainDecimal(v) {
			return strconv.FormatFloat(x, 'f', -1, 64), true // as General shows it
		}
	case dataset.Date:
		if s >= "1900-03-01" && len(s) == 10 && s[0] != 'i' {
			return s, true
		}
	case dataset.Timestamp:
		if s != "2024-02-30 10:00:00" {
			return s, true
		}
	case dataset.Timestamptz:
		if strings.HasSuffix(s, "-03") {
			return "2024-03-06 01:15:00", true // moved to UTC
		}
		return s[:19], true
	}
	return s, false
}

func TestXLSX(t *testing.T) {
	var buf bytes.Buffer
	rs := xlsxRows()
	e, err := NewXLSX(&buf, reportColumns, XLSXOptions{Sheet: "general-report", Rows: int64(len(rs))})
	if err != nil {
		t.Fatal(err)
	}
	encodeAll(t, e, rs)

	f, err := excelize.OpenReader(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	const sheet = "general-report"
	if got := f.GetSheetList(); len(got) != 1 || got[0] != sheet {
		t.Fatalf("sheets %q, want [%s]", got, sheet)
	}

	cell := func(col, row int) string {
		name, err := excelize.CoordinatesToCellName(col, row)
		if err != nil {
			t.Fatal(err)
		}
		return name
	}
	// Header: names, bold.
	for j, c := range reportColumns {
		ref := cell(j+1, 1)
		if got, _ := f.GetCellValue(sheet, ref); got != c.Name {
			t.Errorf("%s = %q, want %q", ref, got, c.Name)
		}
		id, err := f.GetCellStyle(sheet, ref)
		if err != nil {
			t.Fatal(err)
		}
		st, err := f.GetStyle(id)
		if err != nil {
			t.Fatal(err)
		}
		if st.Font == nil || !st.Font.Bold {
			t.Errorf("%s is not bold", ref)
		}
	}

	// Every cell: value as shown, and type.
	for i, r := range rs {
		for j, c := range reportColumns {
			ref := cell(j+1, i+2)
			want, number := wantCell(t, c.Kind, r[j])
			got, err := f.GetCellValue(sheet, ref)
			if err != nil {
				t.Fatal(err)
			}
			if got != want {
				t.Errorf("%s (%s %v) = %q, want %q", ref, c.Name, c.Kind, got, want)
			}
			typ, err := f.GetCellType(sheet, ref)
			if err != nil {
				t.Fatal(err)
			}
			raw, _ := f.GetCellValue(sheet, ref, excelize.Options{RawCellValue: true})
			switch {
			case want == "":
				if typ != excelize.CellTypeUnset || raw != "" {
					t.Errorf("%s (%s): type %v raw %q, want an empty cell", ref, c.Name, typ, raw)
				}
			case number:
				if _, err := strconv.ParseFloat(raw, 64); typ != excelize.CellTypeUnset || err != nil {
					t.Errorf("%s (%s): type %v raw %q, want a number", ref, c.Name, typ, raw)
				}
			default:
				if typ != excelize.CellTypeInlineString {
					t.Errorf("%s (%s): type %v, want a string", ref, c.Name, typ)
				}
			}
			if formula, _ := f.GetCellFormula(sheet, ref); formula != "" {
				t.Errorf("%s has formula %q", ref, formula)
			}
		}
	}

	// Dates carry a date format, so spreadsheets show dates, not serials.
	for _, ref := range []string{"E2", "F2", "BE2"} {
		id, _ := f.GetCellStyle(sheet, ref)
		st, err := f.GetStyle(id)
		if err != nil {
			t.Fatal(err)
		}
		if st.CustomNumFmt == nil || !strings.HasPrefix(*st.CustomNumFmt, "yyyy-mm-dd") {
			t.Errorf("%s: number format %v, want a yyyy-mm-dd format", ref, st.CustomNumFmt)
		}
	}
	// The timestamptz keeps its fraction of a second.
	raw, _ := f.GetCellValue(sheet, "BE7", excelize.Options{RawCellValue: true})
	serial, _ := strconv.ParseFloat(raw, 64)
	if secs := (serial - 45356) * 86400; secs < 49512.249 || secs > 49512.251 {
		t.Errorf("BE7 = %v, %v seconds into 2024-03-05, want 13:45:12.25 (49512.25)", serial, secs)
	}

	panes, err := f.GetPanes(sheet)
	if err != nil {
		t.Fatal(err)
	}
	if !panes.Freeze || panes.YSplit != 1 || panes.XSplit != 0 || panes.TopLeftCell != "A2" {
		t.Errorf("panes %+v, want the first row frozen", panes)
	}

	for col, want := range map[string]float64{"A": 15, "E": 22, "F": 26, "AX": 16, "BE": 20} {
		if got, _ := f.GetColWidth(sheet, col); got != want {
			t.Errorf("width of %s = %v, want %v", col, got, want)
		}
	}

	filterRef := "A1:BV" + strconv.Itoa(len(rs)+1)
	var defined bool
	for _, dn := range f.GetDefinedName() {
		if dn.Name == "_xlnm._FilterDatabase" && dn.RefersTo == "'"+sheet+"'!$A$1:$BV$"+strconv.Itoa(len(rs)+1) {
			defined = true
		}
	}
	if !defined {
		t.Errorf("no _xlnm._FilterDatabase for %s in %+v", filterRef, f.GetDefinedName())
	}
	// excelize writes the range with $ signs, as in the defined name.
	absRef := "$A$1:$BV$" + strconv.Itoa(len(rs)+1)
	if xml := sheetXML(t, buf.Bytes()); !strings.Contains(xml, `<autoFilter ref="`+absRef+`"`) {
		t.Errorf("sheet has no autoFilter over %s", filterRef)
	}
}

// sheetXML returns the first worksheet part of an xlsx file.
func sheetXML(t *testing.T, b []byte) string {
	t.Helper()
	return partXML(t, b, "xl/worksheets/sheet1.xml")
}

// partXML returns the part named name of an xlsx file.
func partXML(t *testing.T, b []byte, name string) string {
	t.Helper()
	zr, err := zip.NewReader(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	rc, err := zr.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	x, err := io.ReadAll(rc)
	if err != nil {
		t.Fatal(err)
	}
	return string(x)
}

// usersWorkbook returns userRows encoded as a workbook whose sheet is
// named users, and the workbook opened by excelize.
func usersWorkbook(t *testing.T) ([]byte, *excelize.File) {
	t.Helper()
	var buf bytes.Buffer
	e, err := NewEncoder(&buf, XLSX, userColumns, Options{Sheet: "users", Rows: int64(len(userRows()))})
	if err != nil {
		t.Fatal(err)
	}
	encodeAll(t, e, userRows())
	f, err := excelize.OpenReader(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return buf.Bytes(), f
}

func TestXLSXEmptyAndUsers(t *testing.T) {
	_, f := usersWorkbook(t)
	got, err := f.GetRows("users")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 4 || got[1][1] != "José Núñez" || got[3][3] != "=cmd" || got[3][1] != "Line\nbreak\ttab\\slash\u2028sep\uFFFDctl" {
		t.Fatalf("rows %q", got)
	}

	// No rows: a header only, still a valid workbook; default sheet name.
	var buf bytes.Buffer
	e, err := NewXLSX(&buf, userColumns, XLSXOptions{Rows: 0})
	if err != nil {
		t.Fatal(err)
	}
	encodeAll(t, e, nil)
	f2, err := excelize.OpenReader(&buf)
	if err != nil {
		t.Fatal(err)
	}
	defer f2.Close()
	if got := f2.GetSheetList(); len(got) != 1 || got[0] != "Sheet1" {
		t.Fatalf("sheets %q", got)
	}
	if got, _ := f2.GetRows("Sheet1"); len(got) != 1 || got[0][0] != "id" {
		t.Fatalf("rows %q", got)
	}
}

// TestXLSXProperties checks what a workbook says of itself: informe made
// it (excelize's template names its own author and a date in 2006), and
// every part's date in the zip is a valid one, 1980-01-01, the same in
// every workbook.
func TestXLSXProperties(t *testing.T) {
	workbook, f := usersWorkbook(t)
	props, err := f.GetDocProps()
	if err != nil {
		t.Fatal(err)
	}
	if props.Creator != "informe" || props.Created != "" || props.Modified != "" {
		t.Errorf("document properties: creator %q, created %q, modified %q; want informe and no dates", props.Creator, props.Created, props.Modified)
	}
	app, err := f.GetAppProps()
	if err != nil {
		t.Fatal(err)
	}
	if app.Application != "informe" {
		t.Errorf("application %q, want informe", app.Application)
	}
	zr, err := zip.NewReader(bytes.NewReader(workbook), int64(len(workbook)))
	if err != nil {
		t.Fatal(err)
	}
	for _, zf := range zr.File {
		if want := time.Date(1980, 1, 1, 0, 0, 0, 0, time.UTC); !zf.Modified.Equal(want) {
			t.Errorf("%s: modified %v (date field %#x), want %v", zf.Name, zf.Modified, zf.ModifiedDate, want)
		}
	}
}

func TestXLSXBadSheetName(t *testing.T) {
	for _, name := range []string{"a/b", "this name is far too long for excel", "it's", "x[1]"} {
		if _, err := NewXLSX(io.Discard, userColumns, XLSXOptions{Sheet: name}); err == nil {
			t.Errorf("sheet %q: no error", name)
		}
	}
}

func TestXLSXEncodeAfterError(t *testing.T) {
	e, err := NewXLSX(io.Discard, userColumns, XLSXOptions{Sheet: "users"})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Encode(userRows()[0][:2]); err == nil {
		t.Fatal("short row: no error")
	}
	if err := e.Encode(userRows()[0]); err == nil {
		t.Fatal("error did not stick")
	}
	if err := e.Close(); err == nil {
		t.Fatal("Close: no error")
	}
	if err := e.Encode(userRows()[0]); !errors.Is(err, ErrClosed) {
		t.Fatalf("Encode after Close = %v, want ErrClosed", err)
	}
}

// TestXLSXWriterErrors writes a workbook larger than the encoder's
// buffers and checks that it makes no temporary file, and that a failing
// writer or a bad row fails Close.
func TestXLSXWriterErrors(t *testing.T) {
	for _, tt := range []struct {
		name string
		w    io.Writer
		err  error
	}{
		{"OK", io.Discard, nil},
		{"ErrWriter", &failWriter{n: 1 << 20}, errWrite},
		{"ErrEncode", io.Discard, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			t.Setenv("TMPDIR", dir)
			if os.TempDir() != dir {
				testenv.Missing(t, "os.TempDir does not follow TMPDIR here")
			}
			e, err := NewXLSX(tt.w, reportColumns, XLSXOptions{Sheet: "general-report", Rows: -1})
			if err != nil {
				t.Fatal(err)
			}
			for i := 0; i < 6000; i++ {
				if err := e.Encode(reportRow(i)); err != nil {
					if tt.err == nil || !errors.Is(err, tt.err) {
						t.Fatal(err)
					}
					break
				}
			}
			if tt.name == "ErrEncode" {
				if err := e.Encode(nil); err == nil {
					t.Fatal("no error for an empty row")
				}
				tt.err = e.Encode(nil)
			}
			if n := countFiles(t, dir); n != 0 {
				t.Fatalf("%d temporary files", n)
			}
			if err := e.Close(); !errors.Is(err, tt.err) && (tt.err != nil || err != nil) {
				t.Fatalf("Close = %v, want %v", err, tt.err)
			}
		})
	}
}

func countFiles(t *testing.T, dir string) int {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	return len(ents)
}

func TestParseSerial(t *testing.T) {
	for _, tt := range []struct {
		in   string
		k    dataset.Kind
		want float64
		ok   bool
	}{
		{"1900-03-01", dataset.Date, 61, true},
		{"1900-02-28", dataset.Date, 0, false},
		{"1970-01-01", dataset.Date, 25569, true},
		{"2024-03-05", dataset.Date, 45356, true},
		{"9999-12-31", dataset.Date, 2958465, true},
		{"2024-02-29", dataset.Date, 45351, true},
		{"2023-02-29", dataset.Date, 0, false},
		{"2024-13-01", dataset.Date, 0, false},
		{"2024-03-05 ", dataset.Date, 0, false},
		{"2024-3-5", dataset.Date, 0, false},
		{"2024-03-05 12:00:00", dataset.Timestamp, 45356.5, true},
		{"2024-03-05 12:00:00.5", dataset.Timestamp, 45356.5 + 0.5/86400, true},
		{"2024-03-05 12:00:00+00", dataset.Timestamp, 0, false},
		{"2024-03-05 24:00:00", dataset.Timestamp, 0, false},
		{"2024-03-05 12:00", dataset.Timestamp, 0, false},
		{"2024-03-05 12:00:00.", dataset.Timestamp, 0, false},
		{"2024-03-05 12:00:00+00", dataset.Timestamptz, 45356.5, true},
		{"2024-03-05 12:00:00", dataset.Timestamptz, 45356.5, true},
		{"2024-03-05 12:00:00.000001+00", dataset.Timestamptz, 45356.5 + 1e-6/86400, true},
		{"2024-03-05 12:00:00-03", dataset.Timestamptz, 45356.5 + 3.0/24, true},
		{"2024-03-05 12:00:00+05:30", dataset.Timestamptz, 45356.5 - 5.5/24, true},
		{"2024-03-05 12:00:00+00:00:10", dataset.Timestamptz, 45356.5 - 10.0/86400, true},
		{"2024-03-05 12:00:00+0", dataset.Timestamptz, 0, false},
		{"2024-03-05 12:00:00Z", dataset.Timestamptz, 0, false},
		{"infinity", dataset.Timestamptz, 0, false},
	} {
		got, ok := parseSerial([]byte(tt.in), tt.k)
		if ok != tt.ok || (ok && (got-tt.want > 1e-9 || tt.want-got > 1e-9)) {
			t.Errorf("parseSerial(%q, %v) = %v, %v; want %v, %v", tt.in, tt.k, got, ok, tt.want, tt.ok)
		}
	}
}

// worksheet is what the tests check of a sheet's XML, as the part says it.
type worksheet struct {
	Dimension *struct {
		Ref string `xml:"ref,attr"`
	} `xml:"dimension"`
	Cols []struct {
		Min   int     `xml:"min,attr"`
		Max   int     `xml:"max,attr"`
		Width float64 `xml:"width,attr"`
	} `xml:"cols>col"`
	Rows []struct {
		R int64 `xml:"r,attr"`
	} `xml:"sheetData>row"`
	AutoFilter *struct {
		Ref string `xml:"ref,attr"`
	} `xml:"autoFilter"`
}

// parseSheet decodes the worksheet part named part of an xlsx file.
func parseSheet(t *testing.T, b []byte, part string) worksheet {
	t.Helper()
	var ws worksheet
	if err := xml.Unmarshal([]byte(partXML(t, b, part)), &ws); err != nil {
		t.Fatalf("%s: %v", part, err)
	}
	return ws
}

// checkSheetXML checks what readers that trust the sheet's XML need: one
// <col> per column, ascending and not overlapping; the used range as
// wantDim ("" for none); rows numbered 1 to rows; an autofilter over them.
func checkSheetXML(t *testing.T, ws worksheet, name string, ncols int, rows int64, wantDim string) {
	t.Helper()
	if len(ws.Cols) != ncols {
		t.Errorf("%s: %d <col> elements, want %d", name, len(ws.Cols), ncols)
	}
	for i, c := range ws.Cols {
		if c.Min != i+1 || c.Max != i+1 {
			t.Errorf("%s: <col> %d covers %d:%d, want %d:%d (ascending, not overlapping)", name, i, c.Min, c.Max, i+1, i+1)
			break
		}
	}
	switch {
	case wantDim == "" && ws.Dimension != nil:
		t.Errorf("%s: dimension %q, want none", name, ws.Dimension.Ref)
	case wantDim != "" && (ws.Dimension == nil || ws.Dimension.Ref != wantDim):
		t.Errorf("%s: dimension %+v, want %q", name, ws.Dimension, wantDim)
	}
	if int64(len(ws.Rows)) != rows {
		t.Errorf("%s: %d rows, want %d", name, len(ws.Rows), rows)
	}
	for i, r := range ws.Rows {
		if r.R != int64(i+1) {
			t.Errorf("%s: row %d numbered %d", name, i+1, r.R)
			break
		}
	}
	last, _ := excelize.ColumnNumberToName(ncols)
	if want := "$A$1:$" + last + "$" + strconv.FormatInt(rows, 10); ws.AutoFilter == nil || ws.AutoFilter.Ref != want {
		t.Errorf("%s: autofilter %+v, want %s", name, ws.AutoFilter, want)
	}
}

func TestXLSXSheetXML(t *testing.T) {
	for _, tt := range []struct {
		name    string
		cols    []dataset.Column
		rows    [][][]byte
		wantDim string
	}{
		{"Report", reportColumns, xlsxRows(), "A1:BV9"},
		{"Users", userColumns, userRows(), "A1:J4"},
		{"HeaderOnly", userColumns, nil, "A1:J1"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			e, err := NewXLSX(&buf, tt.cols, XLSXOptions{Sheet: "s", Rows: int64(len(tt.rows))})
			if err != nil {
				t.Fatal(err)
			}
			encodeAll(t, e, tt.rows)
			ws := parseSheet(t, buf.Bytes(), "xl/worksheets/sheet1.xml")
			checkSheetXML(t, ws, "s", len(tt.cols), int64(len(tt.rows))+1, tt.wantDim)
			for i, c := range ws.Cols {
				if want := colWidth(tt.cols[i]); c.Width != want {
					t.Errorf("column %d width %v, want %v", i+1, c.Width, want)
				}
			}
		})
	}
}

// setSheetRows lowers the rows a sheet holds, header included, for one
// test.
func setSheetRows(t *testing.T, n int64) {
	old := maxSheetRows
	maxSheetRows = n
	t.Cleanup(func() { maxSheetRows = old })
}

// numberedRows returns n user rows whose ids count from 1.
func numberedRows(n int) [][][]byte {
	rs := make([][][]byte, n)
	base := userRows()
	for i := range rs {
		r := slices.Clone(base[i%len(base)])
		r[0] = []byte(strconv.Itoa(i + 1))
		rs[i] = r
	}
	return rs
}

// TestXLSXContinuation fills sheets of 3 data rows: every row arrives
// once, in order, and each sheet has its own header, frozen row,
// autofilter and used range.
func TestXLSXContinuation(t *testing.T) {
	setSheetRows(t, 4)
	for _, tt := range []struct {
		name      string
		rows      int
		announce  bool
		wantSheet []int // data rows on each sheet
	}{
		{"Empty", 0, true, []int{0}},
		{"OneSheetFull", 3, true, []int{3}},
		{"TwoSheets", 4, true, []int{3, 1}},
		{"ThreeSheetsFull", 9, true, []int{3, 3, 3}},
		{"FourSheets", 10, true, []int{3, 3, 3, 1}},
		{"UnknownCount", 10, false, []int{3, 3, 3, 1}},
		{"UnknownCountFull", 6, false, []int{3, 3}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rs := numberedRows(tt.rows)
			announced := int64(-1)
			if tt.announce {
				announced = int64(tt.rows)
			}
			var buf bytes.Buffer
			e, err := NewXLSX(&buf, userColumns, XLSXOptions{Sheet: "users", Rows: announced})
			if err != nil {
				t.Fatal(err)
			}
			encodeAll(t, e, rs)

			f, err := excelize.OpenReader(bytes.NewReader(buf.Bytes()))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			var want []string
			for i := range tt.wantSheet {
				want = append(want, "users")
				if i > 0 {
					want[i] += "-" + strconv.Itoa(i+1)
				}
			}
			if got := f.GetSheetList(); !slices.Equal(got, want) {
				t.Fatalf("sheets %q, want %q", got, want)
			}
			next := 0 // index in rs of the next row expected
			for i, sheet := range want {
				got, err := f.GetRows(sheet)
				if err != nil {
					t.Fatal(err)
				}
				if len(got) != tt.wantSheet[i]+1 {
					t.Fatalf("%s: %d rows, want %d and a header", sheet, len(got), tt.wantSheet[i])
				}
				if !slices.Equal(got[0], dataset.Names(userColumns)) {
					t.Errorf("%s: header %q", sheet, got[0])
				}
				if st := cellStyle(t, f, sheet, "A1"); st.Font == nil || !st.Font.Bold {
					t.Errorf("%s: header not bold", sheet)
				}
				for _, r := range got[1:] {
					if want := string(rs[next][0]); r[0] != want {
						t.Errorf("%s: row id %q, want %q", sheet, r[0], want)
					}
					next++
				}
				panes, err := f.GetPanes(sheet)
				if err != nil {
					t.Fatal(err)
				}
				if !panes.Freeze || panes.YSplit != 1 || panes.TopLeftCell != "A2" {
					t.Errorf("%s: panes %+v, want the first row frozen", sheet, panes)
				}
				last := strconv.Itoa(tt.wantSheet[i] + 1)
				if !hasFilterName(f, i, "'"+sheet+"'!$A$1:$J$"+last) {
					t.Errorf("%s: no _xlnm._FilterDatabase over A1:J%s in %+v", sheet, last, f.GetDefinedName())
				}
				dim := ""
				if tt.announce {
					dim = "A1:J" + last
				}
				ws := parseSheet(t, buf.Bytes(), "xl/worksheets/sheet"+strconv.Itoa(i+1)+".xml")
				checkSheetXML(t, ws, sheet, len(userColumns), int64(tt.wantSheet[i]+1), dim)
			}
			if next != len(rs) {
				t.Errorf("read %d rows back, want %d", next, len(rs))
			}
		})
	}
}

func cellStyle(t *testing.T, f *excelize.File, sheet, ref string) *excelize.Style {
	t.Helper()
	id, err := f.GetCellStyle(sheet, ref)
	if err != nil {
		t.Fatal(err)
	}
	st, err := f.GetStyle(id)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// hasFilterName reports whether the workbook defines the autofilter range
// of sheet number index as refersTo.
func hasFilterName(f *excelize.File, index int, refersTo string) bool {
	for _, dn := range f.GetDefinedName() {
		if dn.Name == "_xlnm._FilterDatabase" && dn.Scope == f.GetSheetName(index) && dn.RefersTo == refersTo {
			return true
		}
	}
	return false
}

// TestXLSXContinuationNames checks the names of further sheets when the
// first sheet's name leaves no room for "-N".
func TestXLSXContinuationNames(t *testing.T) {
	setSheetRows(t, 2)
	for _, tt := range []struct {
		name, sheet string
		want        []string
	}{
		{"Default", "", []string{"Sheet1", "Sheet1-2", "Sheet1-3"}},
		{"Long", strings.Repeat("a", 31), []string{strings.Repeat("a", 31), strings.Repeat("a", 29) + "-2", strings.Repeat("a", 29) + "-3"}},
		// "…-2" shortened and suffixed would be the first sheet's name.
		{"Clash", strings.Repeat("a", 29) + "-2", []string{strings.Repeat("a", 29) + "-2", strings.Repeat("a", 28) + "-2", strings.Repeat("a", 29) + "-3"}},
		{"ClashCase", strings.Repeat("A", 29) + "-2", []string{strings.Repeat("A", 29) + "-2", strings.Repeat("A", 28) + "-2", strings.Repeat("A", 29) + "-3"}},
		{"Runes", strings.Repeat("ñ", 31), []string{strings.Repeat("ñ", 31), strings.Repeat("ñ", 29) + "-2", strings.Repeat("ñ", 29) + "-3"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			e, err := NewXLSX(&buf, userColumns, XLSXOptions{Sheet: tt.sheet, Rows: 3})
			if err != nil {
				t.Fatal(err)
			}
			encodeAll(t, e, numberedRows(3))
			f, err := excelize.OpenReader(&buf)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if got := f.GetSheetList(); !slices.Equal(got, tt.want) {
				t.Fatalf("sheets %q, want %q", got, tt.want)
			}
		})
	}
}

// TestXLSXRowCount checks that a count announced wrong fails, and that
// Close then writes nothing more (here nothing at all: the few rows are
// still in the encoder's buffers), so no workbook whose declared used
// range is wrong is completed.
func TestXLSXRowCount(t *testing.T) {
	for _, tt := range []struct {
		name      string
		announced int64
		rows      int
		encodeErr int // the row (from 1) whose Encode fails; 0 for none
	}{
		{"More", 2, 3, 3},
		{"NoneAnnounced", 0, 1, 1},
		{"Fewer", 3, 2, 0},
		{"FewerNone", 3, 0, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			e, err := NewXLSX(&buf, userColumns, XLSXOptions{Rows: tt.announced})
			if err != nil {
				t.Fatal(err)
			}
			for i, r := range numberedRows(tt.rows) {
				err := e.Encode(r)
				if i+1 < tt.encodeErr || tt.encodeErr == 0 {
					if err != nil {
						t.Fatalf("row %d: %v", i+1, err)
					}
				} else if !errors.Is(err, ErrRowCount) {
					t.Fatalf("row %d: err = %v, want ErrRowCount", i+1, err)
				}
			}
			if err := e.Close(); !errors.Is(err, ErrRowCount) {
				t.Fatalf("Close = %v, want ErrRowCount", err)
			}
			if buf.Len() != 0 {
				t.Errorf("%d bytes written", buf.Len())
			}
		})
	}
}

// TestXLSXRowLimit encodes past Excel's real limit of 1,048,576 rows a
// sheet, header included, with one column.
func TestXLSXRowLimit(t *testing.T) {
	if testing.Short() {
		t.Skip("encodes and reads back a million rows")
	}
	cols := []dataset.Column{{Name: "n", Kind: dataset.Integer}}
	const perSheet = 1_048_575 // data rows
	n := int64(perSheet + 2)
	var buf bytes.Buffer
	e, err := NewXLSX(&buf, cols, XLSXOptions{Sheet: "big", Rows: n})
	if err != nil {
		t.Fatal(err)
	}
	row := [][]byte{nil}
	for i := int64(1); i <= n; i++ {
		row[0] = strconv.AppendInt(row[0][:0], i, 10)
		if err := e.Encode(row); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}

	f, err := excelize.OpenReader(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if got, want := f.GetSheetList(), []string{"big", "big-2"}; !slices.Equal(got, want) {
		t.Fatalf("sheets %q, want %q", got, want)
	}
	next := int64(1)
	for i, sheet := range []string{"big", "big-2"} {
		rows, err := f.Rows(sheet)
		if err != nil {
			t.Fatal(err)
		}
		var r int64
		for ; rows.Next(); r++ {
			cells, err := rows.Columns()
			if err != nil {
				t.Fatal(err)
			}
			want := strconv.FormatInt(next, 10)
			if r == 0 {
				want = "n"
			} else {
				next++
			}
			if len(cells) != 1 || cells[0] != want {
				t.Fatalf("%s row %d: %q, want %q", sheet, r+1, cells, want)
			}
		}
		if err := rows.Close(); err != nil {
			t.Fatal(err)
		}
		wantRows := []int64{perSheet + 1, 3}[i]
		if r != wantRows {
			t.Errorf("%s: %d rows, want %d", sheet, r, wantRows)
		}
		dim, err := f.GetSheetDimension(sheet)
		if err != nil {
			t.Fatal(err)
		}
		if want := "A1:A" + strconv.FormatInt(wantRows, 10); dim != want {
			t.Errorf("%s: dimension %q, want %q", sheet, dim, want)
		}
	}
	if next != n+1 {
		t.Errorf("read %d rows back, want %d", next-1, n)
	}
}
