package export

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/xuri/excelize/v2"
)

// XLSXOptions configure [NewXLSX].
type XLSXOptions struct {
	// Sheet names the workbook's first worksheet, e.g. "general-report";
	// empty means "Sheet1". Excel's rules apply: at most 31 characters,
	// none of : \ / ? * [ ], and (stricter than Excel) no apostrophe.
	// Rows beyond one sheet continue on sheets named after it with "-2",
	// "-3", ... appended (the name shortened if it would pass 31
	// characters).
	Sheet string

	// Rows is the number of rows that will be encoded, or negative when
	// it is not known. Each worksheet declares its used range (its
	// <dimension>, which openpyxl's read-only mode and Power BI rely on)
	// before its first row, so only a known count gives readers the true
	// range; with a negative Rows the sheets declare none, and readers must
	// scan the cells to find it. Zero means no rows, not unknown: encoding
	// a row then fails.
	Rows int64

	// TmpDir is the folder of excelize's temporary files for sheets too
	// large to keep in memory; empty is the system's temporary folder.
	TmpDir string
}

// ErrRowCount is wrapped by the error an XLSX encoder returns when the
// rows encoded differ from the [XLSXOptions.Rows] announced: from Encode at
// the first row past the announced count, from Close when fewer came.
var ErrRowCount = errors.New("rows encoded differ from rows announced")

// maxSheetRows is the number of rows on a worksheet, the header included:
// Excel's limit of 1,048,576. Further rows continue on another sheet.
// Tests lower it to check continuation on small workbooks.
var maxSheetRows int64 = excelize.TotalRows

// Number formats of typed cells. Dates and times are cells holding Excel
// serial numbers shown through these formats, so spreadsheets sort, filter
// and compute with them.
const (
	dateFormat     = "yyyy-mm-dd"
	dateTimeFormat = "yyyy-mm-dd hh:mm:ss"
)

// maxExactInteger bounds the integers written as numbers: Excel keeps 15
// significant digits, so larger ones (IDs, say) are written as text rather
// than silently rounded.
const maxExactInteger = 999_999_999_999_999

// xlsxEncoder streams rows into excelize StreamWriters, one per sheet, each
// of which keeps the sheet's XML in memory up to excelize.StreamChunkSize
// (16 MiB) and spills the rest to a temporary file; the workbook is zipped
// straight to the writer on Close.
type xlsxEncoder struct {
	w      io.Writer
	f      *excelize.File
	sw     *excelize.StreamWriter // the current sheet's
	base   string                 // the first sheet's name
	sheet  string                 // the current sheet's name
	sheets int                    // sheets begun
	kinds  []Kind
	names  []string
	widths []float64
	rows   int64 // announced; negative when unknown

	boldStyle, intStyle, dateStyle, dateTimeStyle int

	cellVals []excelize.Cell // reused for every row
	cells    []any           // &cellVals[i], or nil for an empty cell
	rowNum   int64           // the last row written on the current sheet; 1 is the header
	encoded  int64           // data rows encoded, on every sheet

	err      error // sticky; ErrClosed after Close
	closed   bool
	closeErr error
}

// NewXLSX returns an encoder that writes rows of cols to w as an Excel
// workbook (Office Open XML). Each worksheet's first row holds the column
// names in bold, is frozen so it stays in view, and carries an autofilter
// over all columns and the sheet's rows; column widths follow each column's
// kind and name. A sheet holds at most Excel's 1,048,576 rows, the header
// included; further rows continue on the next sheet (see
// [XLSXOptions.Sheet]), which has its own header.
//
// Cells are typed by the column's [Kind]: Integer values become numbers
// (shown without decimals), Decimal values numbers, Date values dates shown
// as yyyy-mm-dd, Timestamp and Timestamptz values date-times shown as
// yyyy-mm-dd hh:mm:ss (a Timestamptz is converted to UTC, its fraction of a
// second kept in the value though not shown), and Text values string cells,
// which spreadsheets never evaluate, so "=1+1" stays text and needs no
// neutralizing. An empty or nil value leaves the cell empty. A value that
// does not parse as its kind, or that Excel cannot hold exactly (an integer
// beyond 15 digits, a date before 1900-03-01), is written as text instead.
//
// The workbook reaches w only on Close, which must be called on every path:
// it also removes the temporary files excelize makes for large sheets.
// NewXLSX returns an error for an invalid sheet name. Encode returns an
// error wrapping [ErrRowCount] for a row past opts.Rows when that is not
// negative, and Close one when fewer rows came; nothing is written to w
// then.
//
// The workbook is zipped straight to w rather than built in memory first.
// A sheet whose XML reaches 4 GiB (near the row limit with many columns)
// is zipped as ZIP64 in the form Excel opens without asking to repair it.
func NewXLSX(w io.Writer, cols []Column, opts XLSXOptions) (_ Encoder, err error) {
	sheet := opts.Sheet
	if sheet == "" {
		sheet = "Sheet1"
	}
	if strings.Contains(sheet, "'") {
		// excelize quotes the sheet in the autofilter's defined name
		// without doubling apostrophes, which would corrupt the workbook.
		return nil, fmt.Errorf("export: sheet name %q: apostrophes are not allowed", sheet)
	}
	f := excelize.NewFile(excelize.Options{TmpDir: opts.TmpDir})
	defer func() {
		if err != nil {
			_ = f.Close()
			err = fmt.Errorf("export: xlsx: %w", err)
		}
	}()
	e := &xlsxEncoder{
		w:        w,
		f:        f,
		base:     sheet,
		kinds:    make([]Kind, len(cols)),
		names:    Names(cols),
		widths:   make([]float64, len(cols)),
		rows:     opts.Rows,
		cellVals: make([]excelize.Cell, len(cols)),
		cells:    make([]any, len(cols)),
	}
	for i, c := range cols {
		e.kinds[i] = c.Kind
		e.widths[i] = colWidth(c)
	}
	// Styles are made once here: excelize dedupes NewStyle, but only by
	// comparing against every style, which is too slow per cell.
	if e.boldStyle, err = f.NewStyle(&excelize.Style{Font: &excelize.Font{Bold: true}}); err != nil {
		return nil, err
	}
	if e.intStyle, err = f.NewStyle(&excelize.Style{NumFmt: 1}); err != nil { // "0"
		return nil, err
	}
	if e.dateStyle, err = f.NewStyle(&excelize.Style{CustomNumFmt: ptr(dateFormat)}); err != nil {
		return nil, err
	}
	if e.dateTimeStyle, err = f.NewStyle(&excelize.Style{CustomNumFmt: ptr(dateTimeFormat)}); err != nil {
		return nil, err
	}
	if err := e.beginSheet(); err != nil {
		return nil, err
	}
	return e, nil
}

func ptr[T any](v T) *T { return &v }

// beginSheet starts the next worksheet: names it, declares its used range,
// and writes its column widths, frozen pane and header row.
func (e *xlsxEncoder) beginSheet() error {
	e.sheets++
	if e.sheets == 1 {
		e.sheet = e.base
		if e.sheet != "Sheet1" {
			if err := e.f.SetSheetName("Sheet1", e.sheet); err != nil {
				return err
			}
		}
	} else {
		e.sheet = e.continuationName()
		if _, err := e.f.NewSheet(e.sheet); err != nil {
			return err
		}
	}
	// The stream writer writes the dimension out when it is made, so it
	// is set first; from the announced count, as no more is known yet.
	// excelize's new sheets say "A1", which is wrong for any data.
	dim := ""
	if e.rows >= 0 {
		data := min(e.rows-e.encoded, maxSheetRows-1)
		dim = "A1"
		if len(e.kinds) > 0 {
			last, _ := excelize.ColumnNumberToName(len(e.kinds))
			dim += ":" + last + strconv.FormatInt(data+1, 10)
		}
	}
	if err := e.f.SetSheetDimension(e.sheet, dim); err != nil {
		return err
	}
	sw, err := e.f.NewStreamWriter(e.sheet)
	if err != nil {
		return err
	}
	e.sw = sw
	// Widths and panes go before the first SetRow: the stream writer
	// writes them out with it and refuses them after. excelize puts each
	// column it is given before those it has, and writes them in that
	// order, so they are given last to first to come out ascending, as
	// the schema wants and readers expect.
	for i := len(e.widths); i > 0; i-- {
		if err := sw.SetColWidth(i, i, e.widths[i-1]); err != nil {
			return err
		}
	}
	if len(e.kinds) > 0 {
		err := sw.SetPanes(&excelize.Panes{
			Freeze:      true,
			YSplit:      1,
			TopLeftCell: "A2",
			ActivePane:  "bottomLeft",
			Selection:   []excelize.Selection{{SQRef: "A2", ActiveCell: "A2", Pane: "bottomLeft"}},
		})
		if err != nil {
			return err
		}
	}
	for i, name := range e.names {
		e.cellVals[i] = excelize.Cell{StyleID: e.boldStyle, Value: name}
		e.cells[i] = &e.cellVals[i]
	}
	if err := sw.SetRow("A1", e.cells); err != nil {
		return err
	}
	e.rowNum = 1
	return nil
}

// continuationName returns the name of sheet number e.sheets: the first
// sheet's name and "-N", shortened to Excel's 31 characters and to differ
// from every sheet's name, which Excel compares ignoring case.
func (e *xlsxEncoder) continuationName() string {
	suffix := "-" + strconv.Itoa(e.sheets)
	base := []rune(e.base)
	base = base[:min(len(base), 31-len(suffix))]
	for {
		name := string(base) + suffix
		if i, _ := e.f.GetSheetIndex(name); i == -1 || len(base) == 0 {
			return name
		}
		base = base[:len(base)-1]
	}
}

// endSheet completes the current sheet: its autofilter, set last, when
// the sheet's last row is known, but before Flush, which writes it out.
func (e *xlsxEncoder) endSheet() error {
	if len(e.kinds) > 0 {
		last, _ := excelize.ColumnNumberToName(len(e.kinds))
		if err := e.f.AutoFilter(e.sheet, "A1:"+last+strconv.FormatInt(e.rowNum, 10), nil); err != nil {
			return err
		}
	}
	return e.sw.Flush()
}

// colWidth gives a column room for its name plus the filter button, and
// for typical values of its kind, within reason.
func colWidth(c Column) float64 {
	w := utf8.RuneCountInString(c.Name) + 4
	var least int
	switch c.Kind {
	case Integer:
		least = 10
	case Decimal, Date:
		least = 12
	case Timestamp, Timestamptz:
		least = 20
	default:
		least = 16
	}
	return float64(max(min(w, 50), least))
}

func (e *xlsxEncoder) Encode(row [][]byte) error {
	if e.err != nil {
		return e.err
	}
	if len(row) != len(e.kinds) {
		e.err = rowLenError(len(row), len(e.kinds))
		return e.err
	}
	if e.rows >= 0 && e.encoded == e.rows {
		e.err = fmt.Errorf("export: xlsx: %w: a row past the %d announced", ErrRowCount, e.rows)
		return e.err
	}
	if e.rowNum == maxSheetRows {
		if err := e.endSheet(); err != nil {
			e.err = fmt.Errorf("export: xlsx: %w", err)
			return e.err
		}
		if err := e.beginSheet(); err != nil {
			e.err = fmt.Errorf("export: xlsx: %w", err)
			return e.err
		}
	}
	for i, v := range row {
		e.cells[i] = nil
		if len(v) == 0 {
			continue
		}
		c := &e.cellVals[i]
		c.StyleID, c.Value = e.typed(e.kinds[i], v)
		e.cells[i] = c
	}
	e.rowNum++
	if err := e.sw.SetRow("A"+strconv.FormatInt(e.rowNum, 10), e.cells); err != nil {
		e.err = fmt.Errorf("export: xlsx: %w", err)
		return e.err
	}
	e.encoded++
	return nil
}

// typed returns the style and value of a cell for v of kind k: a number or
// a date serial when v parses as its kind, else v as text.
func (e *xlsxEncoder) typed(k Kind, v []byte) (style int, value any) {
	switch k {
	case Integer:
		if n, err := strconv.ParseInt(string(v), 10, 64); err == nil && -maxExactInteger <= n && n <= maxExactInteger {
			return e.intStyle, n
		}
	case Decimal:
		if isPlainDecimal(v) {
			if x, err := strconv.ParseFloat(string(v), 64); err == nil {
				return 0, x
			}
		}
	case Date:
		if serial, ok := parseSerial(v, Date); ok {
			return e.dateStyle, serial
		}
	case Timestamp, Timestamptz:
		if serial, ok := parseSerial(v, k); ok {
			return e.dateTimeStyle, serial
		}
	}
	return 0, string(v)
}

func (e *xlsxEncoder) Close() error {
	if e.closed {
		return e.closeErr
	}
	e.closed = true
	if e.err == nil {
		e.err = e.finish()
	}
	// Close removes excelize's temporary files, whatever happened before.
	if err := e.f.Close(); err != nil && e.err == nil {
		e.err = fmt.Errorf("export: xlsx: removing temporary files: %w", err)
	}
	e.closeErr, e.err = e.err, ErrClosed
	return e.closeErr
}

// finish completes the last sheet and writes the workbook to w.
func (e *xlsxEncoder) finish() error {
	if e.rows >= 0 && e.encoded != e.rows {
		return fmt.Errorf("export: xlsx: %w: %d rows encoded, %d announced", ErrRowCount, e.encoded, e.rows)
	}
	if err := e.endSheet(); err != nil {
		return fmt.Errorf("export: xlsx: %w", err)
	}
	// File.Write builds the whole zip in a bytes.Buffer before copying it
	// out; a zip writer on w instead streams it, and the buffer stays empty.
	w := e.w
	e.f.SetZipWriter(func(io.Writer) excelize.ZipWriter { return newXLSXZip(w) })
	if err := e.f.Write(io.Discard); err != nil {
		return fmt.Errorf("export: xlsx: writing workbook: %w", err)
	}
	return nil
}

// isPlainDecimal reports whether v is an optionally signed decimal number
// in plain notation ("-1500.5"): what PostgreSQL prints for numeric, and
// not the NaN, Infinity or exponents strconv.ParseFloat would also accept.
func isPlainDecimal(v []byte) bool {
	if len(v) > 0 && (v[0] == '-' || v[0] == '+') {
		v = v[1:]
	}
	digits, dot := 0, false
	for _, c := range v {
		switch {
		case '0' <= c && c <= '9':
			digits++
		case c == '.' && !dot:
			dot = true
		default:
			return false
		}
	}
	return digits > 0
}

// Excel's 1900 date system counts days from 1899-12-30 for dates from
// 1900-03-01 on; earlier dates are off by its fictitious 1900-02-29.
const (
	excelEpochDays = -25569 // days from 1970-01-01 back to 1899-12-30
	firstSerial    = 61     // 1900-03-01
)

// parseSerial parses v as a value of kind k (Date, Timestamp or
// Timestamptz, in the API's formats) into an Excel serial date: days since
// 1899-12-30 plus the fraction of the day. Timestamptz values are moved to
// UTC; their offset may be given as +HH, +HH:MM or +HH:MM:SS, or left out.
// It reports false for anything else, and for dates Excel cannot show.
func parseSerial(v []byte, k Kind) (float64, bool) {
	if len(v) < 10 || v[4] != '-' || v[7] != '-' {
		return 0, false
	}
	y, ok1 := atoi(v[0:4])
	m, ok2 := atoi(v[5:7])
	d, ok3 := atoi(v[8:10])
	if !ok1 || !ok2 || !ok3 || m < 1 || m > 12 || d < 1 || d > daysIn(m, y) {
		return 0, false
	}
	days := daysFromCivil(y, m, d) - excelEpochDays
	if days < firstSerial {
		return 0, false
	}
	v = v[10:]
	if k == Date {
		return float64(days), len(v) == 0
	}
	if len(v) < 9 || v[0] != ' ' || v[3] != ':' || v[6] != ':' {
		return 0, false
	}
	hh, ok1 := atoi(v[1:3])
	mm, ok2 := atoi(v[4:6])
	ss, ok3 := atoi(v[7:9])
	if !ok1 || !ok2 || !ok3 || hh > 23 || mm > 59 || ss > 59 {
		return 0, false
	}
	secs := hh*3600 + mm*60 + ss
	v = v[9:]
	var nanos int
	if len(v) > 0 && v[0] == '.' {
		n := 1
		for n < len(v) && n <= 9 && '0' <= v[n] && v[n] <= '9' {
			n++
		}
		if n == 1 {
			return 0, false
		}
		nanos, _ = atoi(v[1:n])
		for i := n; i <= 9; i++ {
			nanos *= 10
		}
		v = v[n:]
	}
	if k == Timestamptz && len(v) > 0 {
		off, ok := parseOffset(v)
		if !ok {
			return 0, false
		}
		secs -= off
		v = nil
	}
	if len(v) != 0 {
		return 0, false
	}
	return float64(days) + (float64(secs)+float64(nanos)/1e9)/86400, true
}

// parseOffset parses a UTC offset as PostgreSQL prints it: +HH, +HH:MM or
// +HH:MM:SS, with + or -. It returns it in seconds.
func parseOffset(v []byte) (int, bool) {
	if len(v) != 3 && len(v) != 6 && len(v) != 9 || (v[0] != '+' && v[0] != '-') {
		return 0, false
	}
	secs := 0
	for i, unit := 1, 3600; i < len(v); i, unit = i+3, unit/60 {
		if i > 1 && v[i-1] != ':' {
			return 0, false
		}
		n, ok := atoi(v[i : i+2])
		if !ok || (i > 1 && n > 59) {
			return 0, false
		}
		secs += n * unit
	}
	if v[0] == '-' {
		secs = -secs
	}
	return secs, true
}

// atoi parses unsigned decimal digits, all of v.
func atoi(v []byte) (int, bool) {
	n := 0
	for _, c := range v {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, len(v) > 0
}

func daysIn(m, y int) int {
	switch m {
	case 2:
		if y%4 == 0 && (y%100 != 0 || y%400 == 0) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}

// daysFromCivil returns the number of days from 1970-01-01 to y-m-d in the
// proleptic Gregorian calendar (Howard Hinnant's algorithm).
func daysFromCivil(y, m, d int) int {
	if m <= 2 {
		y--
	}
	era := y / 400 // y >= 0 here: callers pass four-digit years
	yoe := y - era*400
	mp := (m + 9) % 12
	doy := (153*mp+2)/5 + d - 1
	doe := yoe*365 + yoe/4 - yoe/100 + doy
	return era*146097 + doe - 719468
}
