package export

import (
	"archive/zip"
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/xuri/excelize/v2"
)

// xlsxFixed holds what every workbook has alike, made once by excelize.
type xlsxFixed struct {
	sheetStart []byte    // a worksheet's XML declaration and start tag
	theme      zipPart   // xl/theme/theme1.xml
	styles     zipPart   // xl/styles.xml: the styles of the style* constants
	docParts   []zipPart // docProps/core.xml, docProps/app.xml, _rels/.rels
}

var (
	fixedOnce sync.Once
	fixed     *xlsxFixed
	fixedErr  error
)

// xlsxFixedParts returns the workbook's fixed parts, made on first use.
func xlsxFixedParts() (*xlsxFixed, error) {
	fixedOnce.Do(func() { fixed, fixedErr = makeFixedParts() })
	return fixed, fixedErr
}

// Number formats of typed cells. Dates and times are cells holding Excel
// serial numbers shown through these formats, so spreadsheets sort, filter
// and compute with them.
const (
	dateFormat     = "yyyy-mm-dd"
	dateTimeFormat = "yyyy-mm-dd hh:mm:ss"
)

// makeFixedParts has excelize make a workbook with the cell styles and a
// streamed sheet, and keeps the parts that do not depend on the rows.
func makeFixedParts() (*xlsxFixed, error) {
	f := excelize.NewFile()
	defer f.Close()
	for _, s := range []struct {
		id    int
		style excelize.Style
	}{
		{styleBold, excelize.Style{Font: &excelize.Font{Bold: true}}},
		{styleInt, excelize.Style{NumFmt: 1}}, // "0"
		{styleDate, excelize.Style{CustomNumFmt: ptr(dateFormat)}},
		{styleDateTime, excelize.Style{CustomNumFmt: ptr(dateTimeFormat)}},
	} {
		id, err := f.NewStyle(&s.style)
		if err != nil {
			return nil, fmt.Errorf("making styles: %w", err)
		}
		if id != s.id {
			return nil, fmt.Errorf("making styles: excelize gave style id %d, want %d", id, s.id)
		}
	}
	sw, err := f.NewStreamWriter("Sheet1")
	if err != nil {
		return nil, err
	}
	if err := sw.Flush(); err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if err := f.Write(&buf); err != nil {
		return nil, err
	}
	zr, err := zip.NewReader(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	if err != nil {
		return nil, err
	}
	part := func(name string) ([]byte, error) {
		rc, err := zr.Open(name)
		if err != nil {
			return nil, err
		}
		defer rc.Close()
		return io.ReadAll(rc)
	}
	x := new(xlsxFixed)
	sheet, err := part("xl/worksheets/sheet1.xml")
	if err != nil {
		return nil, err
	}
	i := bytes.Index(sheet, []byte("<worksheet"))
	j := bytes.IndexByte(sheet[max(i, 0):], '>')
	if i < 0 || j < 0 {
		return nil, fmt.Errorf("no worksheet start tag in excelize's sheet")
	}
	x.sheetStart = sheet[:i+j+1]
	for _, p := range []struct {
		name string
		to   *zipPart
	}{
		{"xl/theme/theme1.xml", &x.theme},
		{"xl/styles.xml", &x.styles},
		{"docProps/core.xml", nil},
		{"docProps/app.xml", nil},
		{"_rels/.rels", nil},
	} {
		data, err := part(p.name)
		if err != nil {
			return nil, err
		}
		if props, ok := docProps[p.name]; ok { // not excelize's template's
			data = []byte(props)
		}
		zp, err := newZipPart(p.name, data)
		if err != nil {
			return nil, err
		}
		if p.to != nil {
			*p.to = zp
		} else {
			x.docParts = append(x.docParts, zp)
		}
	}
	return x, nil
}

func ptr[T any](v T) *T { return &v }

// docProps are the workbook's document properties: informe made it, and
// no date is given, so that the same rows give the same bytes (excelize's
// template says its author made it on 2006-09-16).
var docProps = map[string]string{
	"docProps/core.xml": xml.Header + `<cp:coreProperties xmlns:cp="http://schemas.openxmlformats.org/package/2006/metadata/core-properties"` +
		` xmlns:dc="http://purl.org/dc/elements/1.1/" xmlns:dcterms="http://purl.org/dc/terms/" xmlns:dcmitype="http://purl.org/dc/dcmitype/"` +
		` xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"><dc:creator>informe</dc:creator></cp:coreProperties>`,
	"docProps/app.xml": xml.Header + `<Properties xmlns="http://schemas.openxmlformats.org/officeDocument/2006/extended-properties"` +
		` xmlns:vt="http://schemas.openxmlformats.org/officeDocument/2006/docPropsVTypes"><Application>informe</Application></Properties>`,
}

// The parts that list the sheets, as excelize writes them.
const (
	workbookStart = xml.Header +
		`<workbook xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships" xmlns:mc="http://schemas.openxmlformats.org/markup-compatibility/2006" mc:Ignorable="x15" xmlns:x15="http://schemas.microsoft.com/office/spreadsheetml/2010/11/main">` +
		`<fileVersion appName="xl" lastEdited="6" lowestEdited="6" rupBuild="14420"></fileVersion>` +
		`<workbookPr filterPrivacy="true" defaultThemeVersion="164011"></workbookPr>` +
		`<bookViews><workbookView xWindow="0" yWindow="0" windowWidth="14805" windowHeight="8010"></workbookView></bookViews><sheets>`
	workbookEnd = `<calcPr calcId="122211"></calcPr></workbook>`

	relsStart = xml.Header +
		`<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">`
	relWorksheet = `" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/worksheet"></Relationship>`
	relsFixed    = `<Relationship Id="rId2" Target="styles.xml" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/styles"></Relationship>` +
		`<Relationship Id="rId3" Target="theme/theme1.xml" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/theme"></Relationship>`

	typesStart = xml.Header +
		`<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">` +
		`<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"></Default>` +
		`<Default Extension="xml" ContentType="application/xml"></Default>` +
		`<Override PartName="/xl/theme/theme1.xml" ContentType="application/vnd.openxmlformats-officedocument.theme+xml"></Override>` +
		`<Override PartName="/xl/styles.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.styles+xml"></Override>` +
		`<Override PartName="/xl/workbook.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"></Override>` +
		`<Override PartName="/docProps/app.xml" ContentType="application/vnd.openxmlformats-officedocument.extended-properties+xml"></Override>`
	typeWorksheet = `" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"></Override>`
	typeCore      = `<Override PartName="/docProps/core.xml" ContentType="application/vnd.openxmlformats-package.core-properties+xml"></Override>`
)

// sheetRID is the relationship id of sheet number n (from 1), as excelize
// numbers them: the first sheet rId1, then after the styles' and the
// theme's.
func sheetRID(n int) string {
	if n == 1 {
		return "rId1"
	}
	return "rId" + strconv.Itoa(n+2)
}

// writeWorkbook writes the parts after the sheets, in excelize's order:
// the workbook (its sheets and their autofilters' ranges), the theme and
// styles, the workbook's relationships, the document's properties and
// relationships, and the content types.
func (e *xlsxEncoder) writeWorkbook() error {
	names := sheetNames(e.base, e.sheet)
	b := append(e.buf[:0], workbookStart...)
	for i, name := range names {
		b = append(b, `<sheet name="`...)
		b = appendXMLEscaped(b, name)
		b = append(b, `" sheetId="`...)
		b = strconv.AppendInt(b, int64(i+1), 10)
		b = append(b, `" r:id="`...)
		b = append(b, sheetRID(i+1)...)
		b = append(b, `"></sheet>`...)
	}
	b = append(b, `</sheets>`...)
	if len(e.kinds) > 0 {
		b = append(b, `<definedNames>`...)
		for i, name := range names {
			last := maxSheetRows // sheets are ended full, but the last
			if i == len(names)-1 {
				last = e.rowNum
			}
			b = append(b, `<definedName hidden="true" localSheetId="`...)
			b = strconv.AppendInt(b, int64(i), 10)
			b = append(b, `" name="_xlnm._FilterDatabase">`...)
			b = appendXMLEscaped(b, "'"+name+"'!")
			b = e.appendRange(b, last)
			b = append(b, `</definedName>`...)
		}
		b = append(b, `</definedNames>`...)
	}
	b = append(b, workbookEnd...)
	if err := e.z.part("xl/workbook.xml", b); err != nil {
		return err
	}
	for _, p := range []zipPart{e.fixed.theme, e.fixed.styles} {
		if err := e.z.writePart(p); err != nil {
			return err
		}
	}

	b = append(b[:0], relsStart...)
	for i := range names {
		b = append(b, `<Relationship Id="`...)
		b = append(b, sheetRID(i+1)...)
		b = append(b, `" Target="worksheets/sheet`...)
		b = strconv.AppendInt(b, int64(i+1), 10)
		b = append(b, `.xml`+relWorksheet...)
		if i == 0 {
			b = append(b, relsFixed...)
		}
	}
	b = append(b, `</Relationships>`...)
	if err := e.z.part("xl/_rels/workbook.xml.rels", b); err != nil {
		return err
	}
	for _, p := range e.fixed.docParts {
		if err := e.z.writePart(p); err != nil {
			return err
		}
	}

	b = append(b[:0], typesStart...)
	for i := range names {
		b = append(b, `<Override PartName="/xl/worksheets/sheet`...)
		b = strconv.AppendInt(b, int64(i+1), 10)
		b = append(b, `.xml`+typeWorksheet...)
		if i == 0 {
			b = append(b, typeCore...)
		}
	}
	b = append(b, `</Types>`...)
	e.buf = b[:0]
	if err := e.z.part("[Content_Types].xml", b); err != nil {
		return err
	}
	return e.z.close()
}

// appendXMLEscaped appends s escaped as encoding/xml escapes text and
// attributes.
func appendXMLEscaped(b []byte, s string) []byte {
	var w bytes.Buffer
	_ = xml.EscapeText(&w, []byte(s))
	return append(b, w.Bytes()...)
}

// Excel reads _xHHHH_ in a cell's text as the character U+HHHH; excelize
// escapes such text by writing its underscore as _x005F_. These are its
// expressions, and escapeExcelEscapes its function, so that cells read
// back as they did.
var (
	excelEscape     = regexp.MustCompile(`_x[a-fA-F\d]{4}_`)
	excelEscapeTail = regexp.MustCompile(`x[a-fA-F\d]{4}_`)
)

// hasExcelEscape reports whether text may hold an _xHHHH_ escape.
func hasExcelEscape(text []byte) bool {
	return bytes.IndexByte(text, '_') >= 0 && bytes.Contains(text, []byte("_x"))
}

// escapeExcelEscapes escapes the _xHHHH_ sequences of s as excelize does
// (its bstrMarshal), odd cases included, for output identical to it.
func escapeExcelEscapes(s string) string {
	var out strings.Builder
	matches, l, cursor := excelEscape.FindAllStringSubmatchIndex(s, -1), len(s), 0
	for _, m := range matches {
		out.WriteString(s[cursor:m[0]])
		sub := s[m[0]:m[1]]
		if sub == "_x005F_" {
			cursor = m[1]
			if m[1]+6 <= l && excelEscapeTail.MatchString(s[m[1]:m[1]+6]) {
				if _, err := strconv.Unquote(`"\u` + s[m[1]+1:m[1]+5] + `"`); err == nil {
					out.WriteString(sub + "x005F" + sub)
					continue
				}
			}
			out.WriteString(sub + "x005F_")
			continue
		}
		cursor = m[1]
		if _, err := strconv.Unquote(`"\u` + s[m[0]+2:m[1]-1] + `"`); err == nil {
			out.WriteString("_x005F" + sub)
			continue
		}
		// Not a character: excelize drops it, so do we.
	}
	if cursor < l {
		out.WriteString(s[cursor:])
	}
	return out.String()
}
