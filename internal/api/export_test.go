package api_test

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"math"
	"net/http"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/informe/informe/internal/pgserver/pgtest"
	"github.com/xuri/excelize/v2"
)

const xlsxType = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"

func TestNegotiation(t *testing.T) {
	t.Parallel()
	ts := newServer(t, pgtest.Fixture(t))
	for _, tt := range []struct {
		name   string
		query  string
		accept []string // Accept header values; none means no header
		status int
		ctype  string // the full Content-Type for 200
	}{
		{"NoAccept", "", nil, 200, "application/json; charset=utf-8"},
		{"JSON", "", []string{"application/json"}, 200, "application/json; charset=utf-8"},
		{"Any", "", []string{"*/*"}, 200, "application/json; charset=utf-8"},
		{"EmptyAccept", "", []string{""}, 200, "application/json; charset=utf-8"},
		{"CSV", "", []string{"text/csv"}, 200, "text/csv; charset=utf-8"},
		{"CSVAnyText", "", []string{"text/*"}, 200, "text/csv; charset=utf-8"},
		{"NDJSON", "", []string{"application/x-ndjson"}, 200, "application/x-ndjson; charset=utf-8"},
		{"JSONL", "", []string{"application/jsonl"}, 200, "application/x-ndjson; charset=utf-8"},
		{"XLSX", "", []string{xlsxType}, 200, xlsxType},
		{"CaseInsensitive", "", []string{"TEXT/CSV"}, 200, "text/csv; charset=utf-8"},
		{"QPrefersJSON", "", []string{"text/csv;q=0.5, application/json;q=0.9"}, 200, "application/json; charset=utf-8"},
		{"QPrefersCSV", "", []string{"application/json;q=0.1, text/csv"}, 200, "text/csv; charset=utf-8"},
		{"ListSkipsUnoffered", "", []string{"image/png, application/x-ndjson;q=0.2"}, 200, "application/x-ndjson; charset=utf-8"},
		{"SpecificBeatsWildcard", "", []string{"*/*;q=0.1, " + xlsxType}, 200, xlsxType},
		{"TiesGoToServer", "", []string{"text/csv, application/json"}, 200, "application/json; charset=utf-8"},
		{"BrowserLike", "", []string{"text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"}, 200, "application/json; charset=utf-8"},
		{"TwoHeaders", "", []string{"image/png", "text/csv"}, 200, "text/csv; charset=utf-8"},
		{"ErrImage", "", []string{"image/png"}, 406, ""},
		{"ErrJSONRefused", "", []string{"application/json;q=0"}, 406, ""},
		{"ErrAllRefused", "", []string{"*/*;q=0"}, 406, ""},
		{"ErrOnlyHTML", "", []string{"text/html, application/xml"}, 406, ""},
		{"FormatOverridesAccept", "?format=csv", []string{"application/json"}, 200, "text/csv; charset=utf-8"},
		{"FormatOverridesUnacceptable", "?format=ndjson", []string{"image/png"}, 200, "application/x-ndjson; charset=utf-8"},
		{"FormatJSON", "?format=json", []string{"text/csv"}, 200, "application/json; charset=utf-8"},
		{"FormatXLSX", "?format=xlsx", nil, 200, xlsxType},
		{"FormatUpperCase", "?format=CSV", nil, 200, "text/csv; charset=utf-8"},
		{"ErrFormatUnknown", "?format=pdf", nil, 400, ""},
		{"ErrFormatMediaType", "?format=text/csv", nil, 400, ""},
		{"ErrFormatEmpty", "?format=", nil, 400, ""},
		{"ErrFormatTwice", "?format=csv&format=csv", nil, 400, ""},
	} {
		for _, path := range []string{"/api/general-report", "/users"} {
			t.Run(tt.name+path, func(t *testing.T) {
				var header []string
				for _, a := range tt.accept {
					header = append(header, "Accept", a)
				}
				r := ts.Get(t, path+tt.query, header...)
				if r.Status != tt.status {
					t.Fatalf("status = %d, want %d; body %.300s", r.Status, tt.status, r.Body)
				}
				wantVary := "Accept"
				if r.Status == 200 {
					wantVary = varyFor(r.Header.Get("Content-Type"))
				}
				if got, want := r.Header.Get("Vary"), wantVary; got != want {
					t.Errorf("Vary = %q, want %q", got, want)
				}
				switch tt.status {
				case 200:
					if got, want := r.Header.Get("Content-Type"), tt.ctype; got != want {
						t.Errorf("Content-Type = %q, want %q", got, want)
					}
				case 406:
					msg := r.Message(t)
					for _, offered := range []string{"application/json", "text/csv", "application/x-ndjson", "application/jsonl", xlsxType} {
						if !strings.Contains(msg, offered) {
							t.Errorf("message %q does not offer %s", msg, offered)
						}
					}
				case 400:
					if msg := r.Message(t); !strings.Contains(msg, "format") {
						t.Errorf("message %q does not name format", msg)
					}
				}
			})
		}
	}
}

func TestExportHeaders(t *testing.T) {
	t.Parallel()
	ts := newServer(t, pgtest.Fixture(t))
	const path = "/api/general-report"
	link := func(query, rel string) string { return "<" + path + "?" + query + `>; rel="` + rel + `"` }
	for _, tt := range []struct {
		name        string
		query       string
		disposition string
		link        string
		total       string
		pages       string
		current     string
	}{
		{"CSVMiddle", "?format=csv&result_per_page=2&page=2", attached("general-report-page-2-DATE.csv"),
			strings.Join([]string{
				link("format=csv&page=1&result_per_page=2", "first"),
				link("format=csv&page=1&result_per_page=2", "prev"),
				link("format=csv&page=3&result_per_page=2", "next"),
				link("format=csv&page=6&result_per_page=2", "last"),
			}, ", "), "11", "6", "2"},
		{"NDJSONMiddleFiltered", "?result_per_page=1&page=3&client_id=3", attached("general-report-page-3-client-3-DATE.ndjson"),
			strings.Join([]string{
				link("client_id=3&page=1&result_per_page=1", "first"),
				link("client_id=3&page=2&result_per_page=1", "prev"),
				link("client_id=3&page=4&result_per_page=1", "next"),
				link("client_id=3&page=4&result_per_page=1", "last"),
			}, ", "), "4", "4", "3"},
		{"XLSXFirst", "?format=xlsx&result_per_page=5", attached("general-report-page-1-DATE.xlsx"),
			strings.Join([]string{
				link("format=xlsx&page=1&result_per_page=5", "first"),
				link("format=xlsx&page=2&result_per_page=5", "next"),
				link("format=xlsx&page=3&result_per_page=5", "last"),
			}, ", "), "11", "3", "1"},
		{"CSVLast", "?format=csv&result_per_page=5&page=3", attached("general-report-page-3-DATE.csv"),
			strings.Join([]string{
				link("format=csv&page=1&result_per_page=5", "first"),
				link("format=csv&page=2&result_per_page=5", "prev"),
				link("format=csv&page=3&result_per_page=5", "last"),
			}, ", "), "11", "3", "3"},
		{"CSVOnlyPage", "?format=csv", attached("general-report-page-1-DATE.csv"),
			strings.Join([]string{
				link("format=csv&page=1", "first"),
				link("format=csv&page=1", "last"),
			}, ", "), "11", "1", "1"},
		{"CSVNothing", "?format=csv&contract_id=99", attached("general-report-page-1-contract-99-DATE.csv"),
			strings.Join([]string{
				link("contract_id=99&format=csv&page=1", "first"),
				link("contract_id=99&format=csv&page=1", "last"),
			}, ", "), "0", "0", "1"},
		{"CSVKnownParametersOnly", "?format=csv&contract_id=1&code_contract=CT-001&client_id=1&rut=12.345.678-5&columns=contract_id" +
			"&header=false&bom=true&delimiter=semicolon&result_per_page=2&_=1732000000000",
			attached("general-report-page-1-contract-1-DATE.csv"),
			strings.Join([]string{
				link("bom=true&client_id=1&code_contract=CT-001&columns=contract_id&contract_id=1&delimiter=semicolon&format=csv&header=false&page=1&result_per_page=2&rut=12.345.678-5", "first"),
				link("bom=true&client_id=1&code_contract=CT-001&columns=contract_id&contract_id=1&delimiter=semicolon&format=csv&header=false&page=2&result_per_page=2&rut=12.345.678-5", "next"),
				link("bom=true&client_id=1&code_contract=CT-001&columns=contract_id&contract_id=1&delimiter=semicolon&format=csv&header=false&page=2&result_per_page=2&rut=12.345.678-5", "last"),
			}, ", "), "3", "2", "1"},
		{"CSVQueryToken", "?format=csv&result_per_page=5&page=2&access_token=" + ts.Token, attached("general-report-page-2-DATE.csv"),
			strings.Join([]string{
				link("format=csv&page=1&result_per_page=5", "first"),
				link("format=csv&page=1&result_per_page=5", "prev"),
				link("format=csv&page=3&result_per_page=5", "next"),
				link("format=csv&page=3&result_per_page=5", "last"),
			}, ", "), "11", "3", "2"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			accept := "application/x-ndjson"
			r := ts.Get(t, path+tt.query, "Accept", accept)
			if r.Status != 200 {
				t.Fatalf("status = %d; body %.300s", r.Status, r.Body)
			}
			for _, h := range []struct{ name, want string }{
				{"Content-Disposition", tt.disposition},
				{"Link", tt.link},
				{"X-Total-Count", tt.total},
				{"X-Total-Pages", tt.pages},
				{"X-Current-Page", tt.current},
				{"Vary", varyFor(r.Header.Get("Content-Type"))},
				{"Cache-Control", "private, no-store"},
			} {
				if got := r.Header.Get(h.name); got != h.want && (h.name != "Content-Disposition" || undated(got) != h.want) {
					t.Errorf("%s = %q, want %q", h.name, got, h.want)
				}
			}
		})
	}
}

// csvRecords parses a CSV body with delimiter d.
func csvRecords(tb testing.TB, body []byte, d rune) [][]string {
	tb.Helper()
	cr := csv.NewReader(bytes.NewReader(body))
	cr.Comma = d
	recs, err := cr.ReadAll()
	if err != nil {
		tb.Fatalf("parsing CSV: %v\n%.500s", err, body)
	}
	return recs
}

// csvNeutralized are the fixture's values that begin like a formula: CSV
// prefixes them with a quote, JSON and XLSX keep them as they are.
var csvNeutralized = map[string]string{
	"=1+1":                           "'=1+1",
	"-- revisar con el abogado jefe": "'-- revisar con el abogado jefe",
}

func TestCSV(t *testing.T) {
	t.Parallel()
	ts := newServer(t, pgtest.Fixture(t))
	cols := specColumns(t, "general-report-columns.txt")
	page := ts.getReport(t, "?result_per_page=6&page=2")

	check := func(t *testing.T, body []byte, d rune, header bool) {
		t.Helper()
		if !bytes.HasSuffix(body, []byte("\r\n")) {
			t.Errorf("records do not end in CRLF")
		}
		recs := csvRecords(t, body, d)
		if header {
			if !slices.Equal(recs[0], cols) {
				t.Fatalf("header %v, want %v", recs[0], cols)
			}
			recs = recs[1:]
		}
		if len(recs) != len(page.Rows) {
			t.Fatalf("%d records, want %d", len(recs), len(page.Rows))
		}
		for i, rec := range recs {
			for j, f := range page.Rows[i] {
				want := f.Value
				if n, ok := csvNeutralized[want]; ok {
					want = n
				}
				if rec[j] != want {
					t.Errorf("record %d field %s = %q, want %q", i, f.Key, rec[j], want)
				}
			}
		}
	}

	for _, tt := range []struct {
		name   string
		query  string
		delim  rune
		header bool
		bom    bool
	}{
		{"Default", "", ',', true, false},
		{"Comma", "&delimiter=comma", ',', true, false},
		{"Semicolon", "&delimiter=semicolon", ';', true, false},
		{"Tab", "&delimiter=tab", '\t', true, false},
		{"NoHeader", "&header=false", ',', false, false},
		{"Header", "&header=true", ',', true, false},
		{"BOM", "&bom=true", ',', true, true},
		{"NoBOM", "&bom=false", ',', true, false},
		{"All", "&bom=true&header=false&delimiter=semicolon", ';', false, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := ts.Get(t, "/api/general-report?format=csv&result_per_page=6&page=2"+tt.query)
			if r.Status != 200 {
				t.Fatalf("status = %d; body %s", r.Status, r.Body)
			}
			wantType, wantFile := "text/csv; charset=utf-8", attached("general-report-page-2-DATE.csv")
			if tt.delim == '\t' {
				wantType, wantFile = "text/tab-separated-values; charset=utf-8", attached("general-report-page-2-DATE.tsv")
			}
			if got := r.Header.Get("Content-Type"); got != wantType {
				t.Errorf("Content-Type = %q, want %q", got, wantType)
			}
			if got := undated(r.Header.Get("Content-Disposition")); got != wantFile {
				t.Errorf("Content-Disposition = %q, want %q", got, wantFile)
			}
			body := r.Body
			hasBOM := bytes.HasPrefix(body, []byte{0xEF, 0xBB, 0xBF})
			if hasBOM != tt.bom {
				t.Fatalf("BOM = %v, want %v; body starts %q", hasBOM, tt.bom, body[:min(len(body), 10)])
			}
			body = bytes.TrimPrefix(body, []byte{0xEF, 0xBB, 0xBF})
			firstLine, _, _ := bytes.Cut(body, []byte("\r\n"))
			if tt.header {
				if got, want := string(firstLine), strings.Join(cols, string(tt.delim)); got != want {
					t.Errorf("header line = %q, want %q", got, want)
				}
			} else if !bytes.HasPrefix(firstLine, []byte("4"+string(tt.delim)+"APROBADO"+string(tt.delim)+"CT-SHARED")) {
				t.Errorf("first line = %.80q, want the first row", firstLine)
			}
			check(t, body, tt.delim, tt.header)
		})
	}

	t.Run("EmptyPage", func(t *testing.T) {
		r := ts.Get(t, "/api/general-report?format=csv&contract_id=99")
		if got, want := string(r.Body), strings.Join(cols, ",")+"\r\n"; r.Status != 200 || got != want {
			t.Errorf("status %d body %q, want 200 and just the header", r.Status, got)
		}
	})

	for _, tt := range []struct {
		name  string
		query string
		param string
	}{
		{"ErrHeaderYes", "header=yes", "header"},
		{"ErrHeaderOne", "header=1", "header"},
		{"ErrHeaderEmpty", "header=", "header"},
		{"ErrHeaderTwice", "header=true&header=false", "header"},
		{"ErrBOMOne", "bom=1", "bom"},
		{"ErrBOMUpper", "bom=TRUE", "bom"},
		{"ErrBOMEmpty", "bom=", "bom"},
		{"ErrDelimiterPipe", "delimiter=pipe", "delimiter"},
		{"ErrDelimiterChar", "delimiter=%3B", "delimiter"},
		{"ErrDelimiterEmpty", "delimiter=", "delimiter"},
		{"ErrDelimiterTwice", "delimiter=tab&delimiter=tab", "delimiter"},
	} {
		for _, format := range []string{"csv", "json"} {
			t.Run(tt.name+"/"+format, func(t *testing.T) {
				r := ts.Get(t, "/api/general-report?format="+format+"&"+tt.query)
				r.WantError(t, http.StatusBadRequest, tt.param)
				if cd := r.Header.Get("Content-Disposition"); cd != "" {
					t.Errorf("error carries Content-Disposition %q", cd)
				}
			})
		}
	}
}

// ndjsonLines splits an NDJSON body into its lines, checking each ends in
// a newline.
func ndjsonLines(tb testing.TB, body []byte) [][]byte {
	tb.Helper()
	if len(body) == 0 {
		return nil
	}
	if !bytes.HasSuffix(body, []byte("\n")) {
		tb.Fatalf("NDJSON does not end in a newline: %.100q", body[max(0, len(body)-100):])
	}
	return bytes.Split(bytes.TrimSuffix(body, []byte("\n")), []byte("\n"))
}

func TestNDJSON(t *testing.T) {
	t.Parallel()
	ts := newServer(t, pgtest.Fixture(t))
	for _, query := range []string{"", "?result_per_page=3&page=2", "?client_id=3", "?result_per_page=2&page=99"} {
		t.Run(query, func(t *testing.T) {
			page := ts.getReport(t, query)
			sep := "?"
			if query != "" {
				sep = "&"
			}
			r := ts.Get(t, "/api/general-report"+query+sep+"format=ndjson")
			if r.Status != 200 {
				t.Fatalf("status = %d; body %s", r.Status, r.Body)
			}
			lines := ndjsonLines(t, r.Body)
			if len(lines) != len(page.Raw) {
				t.Fatalf("%d lines, want %d", len(lines), len(page.Raw))
			}
			for i, line := range lines {
				// The same object, byte for byte: same keys, order and values.
				if !bytes.Equal(line, page.Raw[i]) {
					t.Errorf("line %d = %s\nwant %s", i, line, page.Raw[i])
				}
				var got, want map[string]any
				if err := json.Unmarshal(line, &got); err != nil {
					t.Fatalf("line %d: %v", i, err)
				}
				if err := json.Unmarshal(page.Raw[i], &want); err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(got, want) || len(got) != 74 {
					t.Errorf("line %d decodes to %v\nwant %v", i, got, want)
				}
			}
		})
	}
}

// Kinds of XLSX cells, by field, as the spec describes the values.
const (
	kText = iota
	kInteger
	kDecimal
	kDate
	kTimestamp
	kTimestamptz
)

func reportKinds() map[string]int {
	k := map[string]int{"costo_servicio": kDecimal, "execution_date": kTimestamptz}
	for _, n := range dateFields {
		k[n] = kDate
	}
	for _, n := range timestampFields {
		k[n] = kTimestamp
	}
	for _, n := range integerFields {
		k[n] = kInteger
	}
	return k
}

var userKinds = map[string]int{"id": kInteger, "last_entry": kTimestamp, "created_at": kTimestamp, "updated_at": kTimestamp}

// excelSerial returns the Excel serial date of a value in the API's date
// or timestamp formats, in UTC.
func excelSerial(tb testing.TB, v string) float64 {
	tb.Helper()
	var tm time.Time
	var err error
	switch len(v) {
	case 10:
		tm, err = time.Parse(time.DateOnly, v)
	case 19:
		tm, err = time.Parse(time.DateTime, v)
	default:
		tm, err = time.Parse("2006-01-02 15:04:05.999999-07", v)
	}
	if err != nil {
		tb.Fatalf("parsing %q: %v", v, err)
	}
	epoch := time.Date(1899, 12, 30, 0, 0, 0, 0, time.UTC)
	return tm.Sub(epoch).Hours() / 24
}

// checkXLSX compares every cell of the workbook's one sheet with the rows
// of the same page as JSON: a header of cols, then numbers as numbers,
// dates as dates shown yyyy-mm-dd or yyyy-mm-dd hh:mm:ss, text as text and
// absent values as empty cells. A nil value is JSON null.
func checkXLSX(tb testing.TB, body []byte, sheet string, cols []string, kinds map[string]int, rows [][]*string) {
	tb.Helper()
	f, err := excelize.OpenReader(bytes.NewReader(body))
	if err != nil {
		tb.Fatalf("opening workbook: %v", err)
	}
	defer f.Close()
	if got, want := f.GetSheetList(), []string{sheet}; !slices.Equal(got, want) {
		tb.Fatalf("sheets %v, want %v", got, want)
	}
	all, err := f.GetRows(sheet)
	if err != nil {
		tb.Fatal(err)
	}
	if got, want := len(all), len(rows)+1; got != want {
		tb.Fatalf("%d rows in the sheet, want %d", got, want)
	}
	cell := func(c, r int) string {
		name, err := excelize.CoordinatesToCellName(c+1, r+1)
		if err != nil {
			tb.Fatal(err)
		}
		return name
	}
	for j, c := range cols {
		if got, _ := f.GetCellValue(sheet, cell(j, 0)); got != c {
			tb.Errorf("header %s = %q, want %q", cell(j, 0), got, c)
		}
	}
	// The sheet has nothing to the right of the columns.
	if got, _ := f.GetCellValue(sheet, cell(len(cols), 0)); got != "" {
		tb.Errorf("extra header cell %q", got)
	}
	for i, row := range rows {
		for j, c := range cols {
			name := cell(j, i+1)
			shown, err := f.GetCellValue(sheet, name)
			if err != nil {
				tb.Fatal(err)
			}
			raw, _ := f.GetCellValue(sheet, name, excelize.Options{RawCellValue: true})
			typ, _ := f.GetCellType(sheet, name)
			if row[j] == nil || *row[j] == "" {
				if shown != "" || raw != "" {
					tb.Errorf("%s (%s) = %q, want an empty cell", name, c, raw)
				}
				continue
			}
			want := *row[j]
			kind := kinds[c]
			isNumber := typ == excelize.CellTypeUnset || typ == excelize.CellTypeNumber
			if kind == kText {
				if isNumber {
					tb.Errorf("%s (%s) = %q is a number cell (type %v), want text", name, c, raw, typ)
				}
				if shown != want {
					tb.Errorf("%s (%s) = %q, want %q", name, c, shown, want)
				}
				continue
			}
			if !isNumber {
				tb.Errorf("%s (%s) = %q has type %v, want a number", name, c, raw, typ)
				continue
			}
			x, err := strconv.ParseFloat(raw, 64)
			if err != nil {
				tb.Errorf("%s (%s) raw value %q: %v", name, c, raw, err)
				continue
			}
			switch kind {
			case kInteger, kDecimal:
				if w, _ := strconv.ParseFloat(want, 64); x != w {
					tb.Errorf("%s (%s) = %v, want %s", name, c, x, want)
				}
				if shown != want {
					tb.Errorf("%s (%s) shows %q, want %q", name, c, shown, want)
				}
			case kDate, kTimestamp, kTimestamptz:
				if w := excelSerial(tb, want); math.Abs(x-w) > 1e-9 {
					tb.Errorf("%s (%s) = serial %v, want %v (%s)", name, c, x, w, want)
				}
				wantShown := want
				if kind == kTimestamptz {
					wantShown = want[:19] // shown to the second, in UTC
				}
				if shown != wantShown {
					tb.Errorf("%s (%s) shows %q, want %q", name, c, shown, wantShown)
				}
			}
		}
	}
}

func reportRowsForXLSX(p reportPage) [][]*string {
	var rows [][]*string
	for _, r := range p.Rows {
		var row []*string
		for _, f := range r {
			row = append(row, &f.Value)
		}
		rows = append(rows, row)
	}
	return rows
}

func TestXLSX(t *testing.T) {
	t.Parallel()
	ts := newServer(t, pgtest.Fixture(t))
	cols := specColumns(t, "general-report-columns.txt")
	for _, query := range []string{"?result_per_page=11", "?result_per_page=4&page=2", "?client_id=3", "?contract_id=99"} {
		t.Run(query, func(t *testing.T) {
			page := ts.getReport(t, query)
			r := ts.Get(t, "/api/general-report"+query, "Accept", xlsxType)
			if r.Status != 200 {
				t.Fatalf("status = %d; body %.300s", r.Status, r.Body)
			}
			if got, want := r.Header.Get("Content-Type"), xlsxType; got != want {
				t.Errorf("Content-Type = %q, want %q", got, want)
			}
			checkXLSX(t, r.Body, "general-report", cols, reportKinds(), reportRowsForXLSX(page))
		})
	}
}

func TestUsersFormats(t *testing.T) {
	t.Parallel()
	ts := newServer(t, pgtest.Fixture(t))
	cols := specColumns(t, "users-columns.txt")
	r := ts.Get(t, "/users")
	if r.Status != 200 {
		t.Fatalf("status = %d; body %s", r.Status, r.Body)
	}
	var raw []json.RawMessage
	if err := json.Unmarshal(r.Body, &raw); err != nil {
		t.Fatal(err)
	}
	var users [][]*string // values in column order; nil for null
	for _, u := range raw {
		var m map[string]*string
		if err := json.Unmarshal(u, &m); err != nil {
			t.Fatal(err)
		}
		var row []*string
		for _, c := range cols {
			row = append(row, m[c])
		}
		users = append(users, row)
	}
	if len(users) != 3 {
		t.Fatalf("%d users, want 3", len(users))
	}

	headers := func(t *testing.T, r response, ctype, disposition string) {
		t.Helper()
		if r.Status != 200 {
			t.Fatalf("status = %d; body %.300s", r.Status, r.Body)
		}
		for _, h := range []struct{ name, want string }{
			{"Content-Type", ctype},
			{"Content-Disposition", disposition},
			{"X-Total-Count", "3"},
			{"Vary", varyFor(ctype)},
			{"Link", ""}, // the listing is not paged
			{"X-Total-Pages", ""},
		} {
			if got := r.Header.Get(h.name); got != h.want && (h.name != "Content-Disposition" || undated(got) != h.want) {
				t.Errorf("%s = %q, want %q", h.name, got, h.want)
			}
		}
	}

	t.Run("JSON", func(t *testing.T) {
		headers(t, ts.Get(t, "/users?format=json"), "application/json; charset=utf-8", attached("users-DATE.json"))
	})
	t.Run("CSV", func(t *testing.T) {
		r := ts.Get(t, "/users", "Accept", "text/csv")
		headers(t, r, "text/csv; charset=utf-8", attached("users-DATE.csv"))
		recs := csvRecords(t, r.Body, ',')
		if !slices.Equal(recs[0], cols) {
			t.Fatalf("header %v, want %v", recs[0], cols)
		}
		if len(recs) != len(users)+1 {
			t.Fatalf("%d records, want %d", len(recs), len(users)+1)
		}
		for i, u := range users {
			for j, v := range u {
				want := ""
				if v != nil {
					want = *v
				}
				if got := recs[i+1][j]; got != want {
					t.Errorf("user %d %s = %q, want %q", i, cols[j], got, want)
				}
			}
		}
	})
	t.Run("NDJSON", func(t *testing.T) {
		r := ts.Get(t, "/users?format=ndjson")
		headers(t, r, "application/x-ndjson; charset=utf-8", attached("users-DATE.ndjson"))
		lines := ndjsonLines(t, r.Body)
		if len(lines) != len(raw) {
			t.Fatalf("%d lines, want %d", len(lines), len(raw))
		}
		for i := range lines {
			if !bytes.Equal(lines[i], raw[i]) {
				t.Errorf("line %d = %s\nwant %s", i, lines[i], raw[i])
			}
		}
	})
	t.Run("XLSX", func(t *testing.T) {
		r := ts.Get(t, "/users?format=xlsx")
		headers(t, r, xlsxType, attached("users-DATE.xlsx"))
		checkXLSX(t, r.Body, "users", cols, userKinds, users)
	})
}
