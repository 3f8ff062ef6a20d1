package export

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/informe/informe/internal/dataset"
)

// CSVOptions configure [NewCSV]. The zero value writes a header row, no
// byte order mark, and commas.
type CSVOptions struct {
	// NoHeader leaves out the first record, which otherwise holds the
	// column names.
	NoHeader bool
	// BOM writes the UTF-8 byte order mark (EF BB BF) first, which makes
	// Excel on Windows read the file as UTF-8 rather than the ANSI code page.
	BOM bool
	// Delimiter separates fields: one of [Delimiters] (',' when zero).
	Delimiter byte
	// DecimalComma writes the values of Decimal columns with a comma as
	// their decimal separator ("12500,5"), and no thousands separator, as
	// spreadsheets in locales with a decimal comma (Chile's) read numbers.
	// It needs a Delimiter other than ',': see [ErrDecimalComma].
	DecimalComma bool
}

// Delimiters are the CSV delimiters, by the names the API takes: comma
// (the default), semicolon (what Excel expects in locales with a decimal
// comma, Chile's among them) and tab.
var Delimiters = []struct {
	Name string
	Byte byte
}{{"comma", ','}, {"semicolon", ';'}, {"tab", '\t'}}

// DelimiterNames are the names of [Delimiters], in order.
var DelimiterNames = func() []string {
	names := make([]string, len(Delimiters))
	for i, d := range Delimiters {
		names[i] = d.Name
	}
	return names
}()

// Delimiter returns the delimiter called name, or 0 (the default) for a
// name that is not in [Delimiters].
func Delimiter(name string) byte {
	for _, d := range Delimiters {
		if d.Name == name {
			return d.Byte
		}
	}
	return 0
}

// ErrInvalidDelimiter is returned, wrapped, for a [CSVOptions.Delimiter]
// other than ',', ';' and '\t'.
var ErrInvalidDelimiter = errors.New("export: invalid CSV delimiter")

// ErrDecimalComma is returned, wrapped, for [CSVOptions.DecimalComma]
// with the comma as delimiter: every decimal value would have to be
// quoted, which spreadsheets that expect a decimal comma, and so a
// semicolon between fields, do not expect.
var ErrDecimalComma = errors.New("export: a decimal comma needs a delimiter other than the comma")

func (o CSVOptions) delimiter() byte {
	if o.Delimiter == 0 {
		return ','
	}
	return o.Delimiter
}

func (o CSVOptions) validate() error {
	for _, d := range Delimiters {
		if o.delimiter() != d.Byte {
			continue
		}
		if o.DecimalComma && d.Byte == ',' {
			return ErrDecimalComma
		}
		return nil
	}
	return fmt.Errorf("%w %q: allowed are %s", ErrInvalidDelimiter, o.Delimiter, strings.Join(DelimiterNames, ", "))
}

// csvEncoder writes RFC 4180 CSV by hand rather than through
// encoding/csv.Writer, which takes []string and would need a string per
// field; the output is the same, byte for byte (see fieldNeedsQuotes).
type csvEncoder struct {
	out    *Output
	names  [][]byte
	guard  []bool // guard[i]: column i is Text, so values get NeutralizeFormula
	comma  []bool // comma[i]: column i is Decimal, written with a decimal comma
	opts   CSVOptions
	delim  byte
	quoted [256]bool // bytes that force a field to be quoted

	started bool
	scratch []byte
}

// NewCSV returns an encoder that writes rows of cols to w as CSV, following
// RFC 4180: records end in CRLF, and a field is enclosed in double quotes,
// with its quotes doubled, when it contains the delimiter, a double quote,
// CR or LF, or begins with a Unicode space, as encoding/csv.Writer does (so
// do the field `\.` and a record's only field when empty, so that readers
// don't take it for an end-of-data marker or a blank line). Text is UTF-8 and
// written as is, line breaks inside quoted fields included (where
// encoding/csv.Writer with UseCRLF would rewrite them); nil values are empty
// fields.
//
// The first record holds the column names unless opts.NoHeader; opts.BOM
// puts a UTF-8 byte order mark before it. Values of Text columns pass
// through [NeutralizeFormula], so that a spreadsheet opening the file does
// not run them as formulas; values of every other kind are written
// unchanged.
//
// With opts.DecimalComma, the point of a Decimal column's value is written
// as a comma.
//
// An invalid opts.Delimiter makes Encode and Close return an error
// wrapping [ErrInvalidDelimiter], and DecimalComma with a comma delimiter
// one wrapping [ErrDecimalComma]; nothing is written.
func NewCSV(w io.Writer, cols []dataset.Column, opts CSVOptions) Encoder {
	e := &csvEncoder{
		out:     NewOutput(w, nil),
		names:   make([][]byte, len(cols)),
		guard:   make([]bool, len(cols)),
		comma:   make([]bool, len(cols)),
		opts:    opts,
		delim:   opts.delimiter(),
		scratch: make([]byte, 0, 4096),
	}
	e.out.fail(opts.validate()) // an invalid delimiter is every call's error
	for i, c := range cols {
		e.names[i] = []byte(c.Name)
		e.guard[i] = c.Kind == dataset.Text
		e.comma[i] = opts.DecimalComma && c.Kind == dataset.Decimal
	}
	e.quoted[e.delim] = true
	e.quoted['"'] = true
	e.quoted['\r'] = true
	e.quoted['\n'] = true
	return e
}

// start writes what comes before the first row: the BOM and the header.
func (e *csvEncoder) start() error {
	e.started = true
	b := e.scratch[:0]
	if e.opts.BOM {
		b = append(b, 0xEF, 0xBB, 0xBF)
	}
	if !e.opts.NoHeader {
		for i, name := range e.names {
			if i > 0 {
				b = append(b, e.delim)
			}
			b = e.appendField(b, name, false, len(e.names) == 1)
		}
		b = append(b, '\r', '\n')
	}
	e.scratch = b
	return e.out.Write(b)
}

func (e *csvEncoder) Encode(row [][]byte) error {
	if err := e.out.checkRow(row, len(e.names)); err != nil {
		return err
	}
	if !e.started {
		if err := e.start(); err != nil {
			return err
		}
	}
	b := e.scratch[:0]
	for i, v := range row {
		if i > 0 {
			b = append(b, e.delim)
		}
		if e.comma[i] && len(v) > 0 {
			// A number holds no delimiter, quote or space: never quoted.
			b = appendDecimalComma(b, v)
			continue
		}
		b = e.appendField(b, v, e.guard[i], len(row) == 1)
	}
	b = append(b, '\r', '\n')
	e.scratch = b
	return e.out.Write(b)
}

// appendDecimalComma appends the decimal number v with its point written
// as a comma.
func appendDecimalComma(b, v []byte) []byte {
	if i := bytes.IndexByte(v, '.'); i >= 0 {
		b = append(b, v[:i]...)
		b = append(b, ',')
		return append(b, v[i+1:]...)
	}
	return append(b, v...)
}

// Flush writes the records encoded so far to the underlying writer and
// returns the encoder's error.
func (e *csvEncoder) Flush() error { return e.out.Flush() }

// Close writes the BOM and the header, when no row came, and flushes.
func (e *csvEncoder) Close() error {
	return e.out.Close(func() error {
		if e.started {
			return nil
		}
		return e.start()
	})
}

// appendField appends one field, neutralized if guard and quoted if need
// be. only says the field is its record's only one.
func (e *csvEncoder) appendField(b, v []byte, guard, only bool) []byte {
	prefix := guard && needsFormulaGuard(v)
	if !e.needsQuotes(v, prefix, only) {
		if prefix {
			b = append(b, '\'')
		}
		return append(b, v...)
	}
	b = append(b, '"')
	if prefix {
		b = append(b, '\'')
	}
	for {
		i := bytes.IndexByte(v, '"')
		if i < 0 {
			break
		}
		b = append(b, v[:i+1]...)
		b = append(b, '"')
		v = v[i+1:]
	}
	b = append(b, v...)
	return append(b, '"')
}

// needsQuotes reports whether a field must be quoted, following
// encoding/csv's fieldNeedsQuotes: it holds the delimiter, a quote, CR or
// LF, begins with a Unicode space (unless prefixed, as the quote then comes
// first), or is `\.`; and, unlike encoding/csv, the only field of a record
// when empty, since an empty line is no record for most readers.
func (e *csvEncoder) needsQuotes(v []byte, prefixed, only bool) bool {
	if len(v) == 0 {
		return only
	}
	for _, c := range v {
		if e.quoted[c] {
			return true
		}
	}
	if prefixed {
		return false
	}
	if len(v) == 2 && v[0] == '\\' && v[1] == '.' {
		return true
	}
	if c := v[0]; c < utf8.RuneSelf {
		return c == ' ' || c == '\t' || c == '\v' || c == '\f' // \r and \n are caught above
	}
	r, _ := utf8.DecodeRune(v)
	return unicode.IsSpace(r)
}

// NeutralizeFormula appends v to dst as it goes into a Text field of a CSV
// file, so that a spreadsheet opening the file shows it as text and does
// not evaluate it as a formula (OWASP "CSV Injection"). The rule:
//
//   - A value that begins with '=', '+', '-', '@', a tab or a carriage
//     return gets a single quote (') in front of it: "=1+1" becomes "'=1+1",
//     "@SUM(A1)" becomes "'@SUM(A1)".
//   - Except a value that is plainly a number or a phone number: a leading
//     '+' or '-' followed only by digits, spaces, dots, parentheses and
//     hyphens, with at least one digit, is left as is: "-12", "+56 9 1234
//     5678" and "+1 (555) 010-9999" stay unchanged, but "-" and "+A1" do not.
//   - Every other value is left as is.
//
// Only CSV applies the rule, and only to Text columns: numbers, dates and
// timestamps are written unchanged, JSON carries values exactly, and XLSX
// stores text as string cells, which spreadsheets never evaluate.
func NeutralizeFormula(dst, v []byte) []byte {
	if needsFormulaGuard(v) {
		dst = append(dst, '\'')
	}
	return append(dst, v...)
}

// needsFormulaGuard reports whether [NeutralizeFormula] prefixes v.
func needsFormulaGuard(v []byte) bool {
	if len(v) == 0 {
		return false
	}
	switch v[0] {
	case '=', '@', '\t', '\r':
		return true
	case '+', '-':
		return !isPlainNumber(v[1:])
	}
	return false
}

// isPlainNumber reports whether v holds only digits, spaces, dots,
// parentheses and hyphens, with at least one digit.
func isPlainNumber(v []byte) bool {
	digit := false
	for _, c := range v {
		switch {
		case '0' <= c && c <= '9':
			digit = true
		case c == ' ', c == '.', c == '(', c == ')', c == '-':
		default:
			return false
		}
	}
	return digit
}
