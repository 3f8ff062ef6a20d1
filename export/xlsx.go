package export

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/xuri/excelize/v2"

	"github.com/informe/informe/internal/dataset"
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
}

// ErrRowCount is wrapped by the error an XLSX encoder returns when the
// rows encoded differ from the [XLSXOptions.Rows] announced: from Encode at
// the first row past the announced count, from Close when fewer came.
var ErrRowCount = errors.New("rows encoded differ from rows announced")

// maxSheetRows is the number of rows on a worksheet, the header included:
// Excel's limit of 1,048,576. Further rows continue on another sheet.
// Tests lower it to check continuation on small workbooks.
var maxSheetRows int64 = excelize.TotalRows

// maxExactInteger bounds the integers written as numbers: Excel keeps 15
// significant digits, so larger ones (IDs, say) are written as text rather
// than silently rounded.
const maxExactInteger = 999_999_999_999_999

// xlsxChunk is how much sheet XML the encoder gathers before deflating it.
const xlsxChunk = 64 << 10

// xlsxEncoder writes a workbook as a zip stream: each sheet's XML is made
// from the rows as they come and deflated into the zip in chunks of
// xlsxChunk, so that memory does not grow with the rows; the workbook's
// other parts follow the last sheet, on Close.
type xlsxEncoder struct {
	out    sheetWriter // the sheets' XML goes here: z, or a continuation's frames
	z      *xlsxZip    // the workbook; nil in a continuation
	fixed  *xlsxFixed
	base   string // the first sheet's name
	sheet  int    // sheets begun
	kinds  []dataset.Kind
	refs   [][]byte // column letters, "A", "B", ...
	widths []float64
	header []byte // the header row's cells, the same on every sheet
	rows   int64  // announced; negative when unknown

	buf     []byte // sheet XML not yet deflated
	num     []byte // the current row's number, in digits
	rowNum  int64  // the last row written on the current sheet; 1 is the header
	encoded int64  // data rows encoded, on every sheet; in a continuation, from its first
	first   int64  // a continuation's first row, counted from 0

	state
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
// Text longer than Excel's 32,767 characters a cell is cut there, and
// characters XML cannot carry (control characters, invalid UTF-8) become
// U+FFFD.
//
// The workbook is streamed: the sheets' XML is deflated into the zip as
// rows are encoded, so memory stays flat however many rows come. The
// encoder is a [Flusher]: Flush pushes the rows encoded so far out to w as
// a deflate sync flush (a few bytes of output each time, so call it now
// and then, not after every row), though the workbook is only complete at
// Close, which adds its other parts and the zip's directory. Sheets are
// ZIP64 parts, so that one may pass 4 GiB.
//
// NewXLSX returns an error for an invalid sheet name. Encode returns an
// error wrapping [ErrRowCount] for a row past opts.Rows when that is not
// negative, and Close one when fewer rows came. After any error Close
// writes nothing more: what reached w by then is not a complete workbook.
func NewXLSX(w io.Writer, cols []dataset.Column, opts XLSXOptions) (Encoder, error) {
	e, err := newXLSX(cols, opts)
	if err != nil {
		return nil, err
	}
	e.z = newXLSXZip(w)
	e.out = e.z
	if err := e.beginSheet(); err != nil {
		return nil, fmt.Errorf("export: xlsx: %w", err)
	}
	return e, nil
}

// newXLSX returns an encoder of cols with its sheets' writer still to be
// set, before its first sheet.
func newXLSX(cols []dataset.Column, opts XLSXOptions) (*xlsxEncoder, error) {
	sheet := opts.Sheet
	if sheet == "" {
		sheet = "Sheet1"
	}
	if err := checkSheetName(sheet); err != nil {
		return nil, fmt.Errorf("export: xlsx: sheet name %q: %w", sheet, err)
	}
	fixed, err := xlsxFixedParts()
	if err != nil {
		return nil, fmt.Errorf("export: xlsx: %w", err)
	}
	e := &xlsxEncoder{
		fixed:  fixed,
		base:   sheet,
		kinds:  make([]dataset.Kind, len(cols)),
		refs:   make([][]byte, len(cols)),
		widths: make([]float64, len(cols)),
		rows:   opts.Rows,
		buf:    make([]byte, 0, xlsxChunk+8<<10),
	}
	for i, c := range cols {
		e.kinds[i] = c.Kind
		e.widths[i] = colWidth(c)
		name, _ := excelize.ColumnNumberToName(i + 1)
		e.refs[i] = []byte(name)
	}
	one := []byte("1")
	for i, c := range cols {
		e.header = appendCellText(e.header, e.refs[i], one, styleBold, []byte(c.Name))
	}
	return e, nil
}

// checkSheetName applies Excel's rules for a sheet's name, as excelize
// does, and refuses apostrophes: the autofilter's defined name quotes the
// sheet's name, and an apostrophe would need doubling there.
func checkSheetName(name string) error {
	switch {
	case utf16Len(name) > 31:
		return errors.New("longer than 31 characters")
	case strings.ContainsAny(name, ":\\/?*[]"):
		return errors.New(`none of : \ / ? * [ ] is allowed`)
	case strings.Contains(name, "'"):
		return errors.New("apostrophes are not allowed")
	}
	return nil
}

// utf16Len returns the length of s in UTF-16 code units, which is how
// Excel counts characters.
func utf16Len(s string) int {
	n := 0
	for _, r := range s {
		n += max(utf16.RuneLen(r), 1)
	}
	return n
}

// Style ids of cells, as in the cached styles part (see xlsxFixedParts).
const (
	styleNone     = 0
	styleBold     = 1 // the header row
	styleInt      = 2 // number format "0"
	styleDate     = 3 // yyyy-mm-dd
	styleDateTime = 4 // yyyy-mm-dd hh:mm:ss
)

// beginSheet starts the next worksheet: names it, and writes its head
// (used range, frozen pane, column widths) and header row.
func (e *xlsxEncoder) beginSheet() error {
	e.sheet++
	first := e.sheet == 1
	if err := e.out.beginSheet(e.sheet); err != nil {
		return err
	}
	b := append(e.buf[:0], e.fixed.sheetStart...)
	if e.rows >= 0 {
		// From the announced count, as no more is known yet.
		b = append(b, `<dimension ref="A1`...)
		if len(e.kinds) > 0 {
			data := min(e.rows-e.encoded, maxSheetRows-1)
			b = append(b, ':')
			b = append(b, e.refs[len(e.refs)-1]...)
			b = strconv.AppendInt(b, data+1, 10)
		}
		b = append(b, `"></dimension>`...)
	}
	b = append(b, `<sheetViews><sheetView `...)
	if first {
		b = append(b, `tabSelected="true" `...)
	}
	b = append(b, `workbookViewId="0">`...)
	if len(e.kinds) > 0 {
		b = append(b, `<pane activePane="bottomLeft" state="frozen" topLeftCell="A2" ySplit="1"></pane>`+
			`<selection activeCell="A2" pane="bottomLeft" sqref="A2"></selection>`...)
	}
	b = append(b, `</sheetView></sheetViews>`...)
	if first {
		b = append(b, `<sheetFormatPr defaultRowHeight="15"></sheetFormatPr>`...)
	}
	if len(e.kinds) > 0 {
		b = append(b, `<cols>`...)
		for i, w := range e.widths {
			b = append(b, `<col min="`...)
			b = strconv.AppendInt(b, int64(i+1), 10)
			b = append(b, `" max="`...)
			b = strconv.AppendInt(b, int64(i+1), 10)
			b = append(b, `" width="`...)
			b = strconv.AppendFloat(b, w, 'f', -1, 64)
			b = append(b, `" customWidth="1"/>`...)
		}
		b = append(b, `</cols>`...)
	}
	b = append(b, `<sheetData><row r="1">`...)
	b = append(b, e.header...)
	b = append(b, `</row>`...)
	e.buf = b
	e.rowNum = 1
	return nil
}

// sheetNames returns the names of n sheets, the first named base: each
// next one is base and "-N", shortened to Excel's 31 characters and to
// differ from every sheet's name, which Excel compares ignoring case.
func sheetNames(base string, n int) []string {
	names := []string{base}
	for len(names) < n {
		suffix := "-" + strconv.Itoa(len(names)+1)
		b := []rune(base)
		for len(b) > 0 && utf16Len(string(b))+len(suffix) > 31 {
			b = b[:len(b)-1]
		}
		for {
			name := string(b) + suffix
			taken := false
			for _, s := range names {
				taken = taken || strings.EqualFold(s, name)
			}
			if !taken || len(b) == 0 {
				names = append(names, name)
				break
			}
			b = b[:len(b)-1]
		}
	}
	return names
}

// sheetAt returns where an encoder stands after n data rows: on its
// sheet-th sheet (from 1), whose last row written is row (1: the header).
func sheetAt(n int64) (sheet int, row int64) {
	if n == 0 {
		return 1, 1
	}
	per := maxSheetRows - 1
	return int((n-1)/per) + 1, (n-1)%per + 2
}

// endSheet completes the current sheet with its autofilter, now that its
// last row is known, and its part of the zip.
func (e *xlsxEncoder) endSheet() error {
	b := append(e.buf, `</sheetData>`...)
	if len(e.kinds) > 0 {
		b = append(b, `<autoFilter ref="`...)
		b = e.appendRange(b, e.rowNum)
		b = append(b, `"></autoFilter>`...)
	}
	e.buf = append(b, `</worksheet>`...)
	if err := e.deflate(); err != nil {
		return err
	}
	return e.out.endSheet()
}

// appendRange appends the absolute reference of a sheet's columns down to
// row last: "$A$1:$BV$9".
func (e *xlsxEncoder) appendRange(b []byte, last int64) []byte {
	b = append(b, `$A$1:$`...)
	b = append(b, e.refs[len(e.refs)-1]...)
	b = append(b, '$')
	return strconv.AppendInt(b, last, 10)
}

// deflate hands the sheet XML gathered so far to the zip.
func (e *xlsxEncoder) deflate() error {
	_, err := e.out.Write(e.buf)
	e.buf = e.buf[:0]
	return err
}

// colWidth gives a column room for its name plus the filter button, and
// for typical values of its kind, within reason.
func colWidth(c dataset.Column) float64 {
	w := utf8.RuneCountInString(c.Name) + 4
	var least int
	switch c.Kind {
	case dataset.Integer:
		least = 10
	case dataset.Decimal, dataset.Date:
		least = 12
	case dataset.Timestamp, dataset.Timestamptz:
		least = 20
	default:
		least = 16
	}
	return float64(max(min(w, 50), least))
}

func (e *xlsxEncoder) Encode(row [][]byte) error {
	if err := e.checkRow(row, len(e.kinds)); err != nil {
		return err
	}
	if e.rows >= 0 && e.encoded == e.rows {
		return e.fail(fmt.Errorf("export: xlsx: %w: a row past the %d announced", ErrRowCount, e.rows))
	}
	if e.rowNum == maxSheetRows {
		err := e.endSheet()
		if err == nil {
			err = e.beginSheet()
		}
		if err != nil {
			return e.fail(fmt.Errorf("export: xlsx: %w", err))
		}
	}
	e.rowNum++
	e.num = strconv.AppendInt(e.num[:0], e.rowNum, 10)
	b := append(e.buf, `<row r="`...)
	b = append(b, e.num...)
	b = append(b, `">`...)
	for i, v := range row {
		if len(v) > 0 {
			b = e.appendCell(b, i, v)
		}
	}
	e.buf = append(b, `</row>`...)
	e.encoded++
	if len(e.buf) >= xlsxChunk {
		if err := e.deflate(); err != nil {
			return e.fail(fmt.Errorf("export: xlsx: %w", err))
		}
	}
	return nil
}

// appendCell appends the cell of column i of the current row holding v: a
// number or a date serial when v parses as its column's kind, else v as
// text.
func (e *xlsxEncoder) appendCell(b []byte, i int, v []byte) []byte {
	switch k := e.kinds[i]; k {
	case dataset.Integer:
		if n, err := strconv.ParseInt(string(v), 10, 64); err == nil && -maxExactInteger <= n && n <= maxExactInteger {
			b = appendCellStart(b, e.refs[i], e.num, styleInt)
			b = strconv.AppendInt(append(b, `><v>`...), n, 10)
			return append(b, `</v></c>`...)
		}
	case dataset.Decimal:
		if isPlainDecimal(v) {
			if x, err := strconv.ParseFloat(string(v), 64); err == nil {
				b = appendCellStart(b, e.refs[i], e.num, styleNone)
				b = strconv.AppendFloat(append(b, `><v>`...), x, 'f', -1, 64)
				return append(b, `</v></c>`...)
			}
		}
	case dataset.Date, dataset.Timestamp, dataset.Timestamptz:
		if serial, ok := parseSerial(v, k); ok {
			if k == dataset.Date { // a whole number of days: as AppendFloat writes it, faster
				b = appendCellStart(b, e.refs[i], e.num, styleDate)
				b = strconv.AppendInt(append(b, `><v>`...), int64(serial), 10)
			} else {
				b = appendCellStart(b, e.refs[i], e.num, styleDateTime)
				b = strconv.AppendFloat(append(b, `><v>`...), serial, 'f', -1, 64)
			}
			return append(b, `</v></c>`...)
		}
	}
	return appendCellText(b, e.refs[i], e.num, styleNone, v)
}

// appendCellStart appends a cell's opening tag but its closing '>'.
func appendCellStart(b, col, row []byte, style byte) []byte {
	b = append(b, `<c r="`...)
	b = append(b, col...)
	b = append(b, row...)
	b = append(b, '"')
	if style != styleNone {
		b = append(b, ` s="`...)
		b = append(b, '0'+style)
		b = append(b, '"')
	}
	return b
}

// maxCellChars is Excel's limit of characters in a cell, in UTF-16 units.
const maxCellChars = 32767

// appendCellText appends a cell holding v as an inline string, as
// excelize writes one: cut to maxCellChars, its whitespace preserved when
// it starts or ends with some, XML-escaped, and Excel's own escapes
// (_xHHHH_) escaped.
func appendCellText(b, col, row []byte, style byte, v []byte) []byte {
	b = appendCellStart(b, col, row, style)
	b = append(b, ` t="inlineStr"><is><t`...)
	if len(v) > maxCellChars { // UTF-16 units never outnumber UTF-8 bytes
		v = cutUTF16(v, maxCellChars)
	}
	if len(v) > 0 && (isXMLSpace(v[0]) || isXMLSpace(v[len(v)-1])) {
		b = append(b, ` xml:space="preserve"`...)
	}
	b = append(b, '>')
	start := len(b)
	b = appendEscaped(b, v)
	if hasExcelEscape(v) { // escaping neither makes nor breaks "_x"
		b = append(b[:start], escapeExcelEscapes(string(b[start:]))...)
	}
	return append(b, `</t></is></c>`...)
}

func isXMLSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// cutUTF16 returns the longest prefix of v of at most n UTF-16 code units,
// each invalid byte counting as one.
func cutUTF16(v []byte, n int) []byte {
	units := 0
	for i := 0; i < len(v); {
		r, size := utf8.DecodeRune(v[i:])
		if r >= 0x10000 {
			units += 2
		} else {
			units++
		}
		if units > n {
			return v[:i]
		}
		i += size
	}
	return v
}

// asciiEscapes are the escapes of ASCII bytes in cell text: those of
// encoding/xml's EscapeText, but for newlines, which excelize writes as
// they are, and U+FFFD for control characters XML cannot carry.
var asciiEscapes = func() (t [utf8.RuneSelf]string) {
	for c := range byte(0x20) {
		t[c] = "\uFFFD"
	}
	t['\n'] = ""
	t['\t'] = "&#x9;"
	t['\r'] = "&#xD;"
	t['"'] = "&#34;"
	t['\''] = "&#39;"
	t['&'] = "&amp;"
	t['<'] = "&lt;"
	t['>'] = "&gt;"
	return t
}()

// plainText marks the bytes that appendEscaped copies as they are.
var plainText = func() (t [256]bool) {
	for c := range utf8.RuneSelf {
		t[c] = c == '\n' || asciiEscapes[c] == ""
	}
	return t
}()

// appendEscaped appends v escaped for XML text as excelize escapes a
// cell's text: encoding/xml's EscapeText (invalid UTF-8 and characters
// outside XML's range become U+FFFD), newlines left as they are.
func appendEscaped(b, v []byte) []byte {
	last := 0
	for i := 0; i < len(v); {
		if plainText[v[i]] {
			i++
			continue
		}
		if c := v[i]; c < utf8.RuneSelf {
			b = append(b, v[last:i]...)
			b = append(b, asciiEscapes[c]...)
			i++
			last = i
			continue
		}
		r, size := utf8.DecodeRune(v[i:])
		if size == 1 || r == 0xFFFE || r == 0xFFFF { // RuneError of an invalid byte
			b = append(b, v[last:i]...)
			b = append(b, "\uFFFD"...)
			last = i + size
		}
		i += size
	}
	return append(b, v[last:]...)
}

// Flush deflates the rows encoded so far and writes them out; see
// [Flusher].
func (e *xlsxEncoder) Flush() error {
	if e.err != nil {
		return e.err
	}
	err := e.deflate()
	if err == nil {
		err = e.out.flush()
	}
	if err != nil {
		return e.fail(fmt.Errorf("export: xlsx: %w", err))
	}
	return nil
}

func (e *xlsxEncoder) Close() error { return e.close(ErrClosed, e.finish) }

// finish completes the last sheet and writes the workbook's other parts
// and the zip's directory.
func (e *xlsxEncoder) finish() error {
	if e.z == nil {
		return e.finishContinuation()
	}
	if e.rows >= 0 && e.encoded != e.rows {
		return fmt.Errorf("export: xlsx: %w: %d rows encoded, %d announced", ErrRowCount, e.encoded, e.rows)
	}
	if err := e.endSheet(); err != nil {
		return fmt.Errorf("export: xlsx: %w", err)
	}
	if err := e.writeWorkbook(); err != nil {
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
// Timestamptz, in the API's formats, its year of four digits) into an
// Excel serial date: days since 1899-12-30 plus the fraction of the day.
// Timestamptz values are moved to UTC; their offset may be given as +HH,
// +HH:MM or +HH:MM:SS, or left out. It reports false for anything else,
// and for dates Excel cannot show. The date, and a timestamp to the
// second, are read by [dataset.ParseValue].
func parseSerial(v []byte, k dataset.Kind) (float64, bool) {
	if len(v) < 10 || v[4] != '-' || v[7] != '-' {
		return 0, false
	}
	if k == dataset.Date {
		days, ok := dataset.ParseValue(dataset.Date, v)
		days -= excelEpochDays
		return float64(days), ok && len(v) == 10 && days >= firstSerial
	}
	if len(v) < 19 {
		return 0, false
	}
	wall, ok := dataset.ParseValue(dataset.Timestamp, v[:19])
	if !ok {
		return 0, false
	}
	// Seconds since 1899-12-30 00:00:00 on the wall clock; a day before it
	// is before firstSerial too.
	secs := wall/1e6 - excelEpochDays*86400
	days, tod := secs/86400, secs%86400
	if days < firstSerial {
		return 0, false
	}
	v = v[19:]
	var nanos int64
	if len(v) > 0 && v[0] == '.' {
		n := 1
		for n < len(v) && n <= 9 && '0' <= v[n] && v[n] <= '9' {
			nanos = nanos*10 + int64(v[n]-'0')
			n++
		}
		if n == 1 {
			return 0, false
		}
		for i := n; i <= 9; i++ {
			nanos *= 10
		}
		v = v[n:]
	}
	if k == dataset.Timestamptz && len(v) > 0 {
		off, ok := dataset.ParseOffset(v)
		if !ok {
			return 0, false
		}
		tod -= int64(off)
		v = nil
	}
	if len(v) != 0 {
		return 0, false
	}
	return float64(days) + (float64(tod)+float64(nanos)/1e9)/86400, true
}
