package export

import (
	"io"
	"strconv"
	"unicode/utf8"

	"github.com/informe/informe/internal/dataset"
)

// Envelope holds the paging fields that wrap a page of rows in a JSON
// response: {"data":[...],"totalPages":N,"currentPage":P}.
type Envelope struct {
	TotalPages  int
	CurrentPage int
}

// jsonEncoder writes rows as JSON objects, either as elements of one
// document (an array, maybe inside an envelope) or one per line (NDJSON).
// It writes JSON by hand: keys are quoted once, values are escaped straight
// from the row's bytes, and the row is built in a reused scratch buffer, so
// Encode does not allocate.
type jsonEncoder struct {
	out      *Output
	keys     [][]byte // `"name":`, escaped, one per column
	nullable []bool
	env      Envelope
	hasEnv   bool
	ndjson   bool
	cont     bool // continues another encoder's array: see Options.Continue

	scratch []byte
	rows    int
}

// NewJSON returns an encoder that writes rows of cols to w as one JSON
// document. With a non-nil env the document is
//
//	{"data":[{row},...],"totalPages":N,"currentPage":P}
//
// with the keys in that order, N and P taken from env when NewJSON is
// called; with a nil env it is a bare array [{row},...]. An empty page
// gives {"data":[],"totalPages":N,"currentPage":P} or [].
//
// Each row is an object whose keys are the column names in column order and
// whose values are JSON strings holding the row's text ("id":"17"); a nil
// value in a Nullable column is null, and in any other column "". Strings
// are escaped as encoding/json does, minus HTML escaping: '"', '\\' and
// control characters are escaped, so are U+2028 and U+2029, and invalid
// UTF-8 becomes U+FFFD. The output is compact, with no trailing newline.
func NewJSON(w io.Writer, cols []dataset.Column, env *Envelope) Encoder {
	e := newJSONEncoder(w, cols)
	if env != nil {
		e.env, e.hasEnv = *env, true
	}
	return e
}

// NewNDJSON returns an encoder that writes rows of cols to w as
// newline-delimited JSON: each row is the object [NewJSON] would write,
// followed by "\n". No rows give no output.
func NewNDJSON(w io.Writer, cols []dataset.Column) Encoder {
	e := newJSONEncoder(w, cols)
	e.ndjson = true
	return e
}

func newJSONEncoder(w io.Writer, cols []dataset.Column) *jsonEncoder {
	e := &jsonEncoder{
		out:      NewOutput(w, nil),
		keys:     make([][]byte, len(cols)),
		nullable: make([]bool, len(cols)),
		scratch:  make([]byte, 0, 4096),
	}
	for i, c := range cols {
		e.keys[i] = append(AppendJSONString(nil, []byte(c.Name)), ':')
		e.nullable[i] = c.Nullable
	}
	return e
}

func (e *jsonEncoder) open(b []byte) []byte {
	if e.hasEnv {
		return append(b, `{"data":[`...)
	}
	return append(b, '[')
}

func (e *jsonEncoder) Encode(row [][]byte) error {
	if err := e.out.checkRow(row, len(e.keys)); err != nil {
		return err
	}
	b := e.scratch[:0]
	if !e.ndjson {
		if e.rows == 0 && !e.cont {
			b = e.open(b)
		} else {
			b = append(b, ',')
		}
	}
	b = append(b, '{')
	for i, v := range row {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, e.keys[i]...)
		if v == nil && e.nullable[i] {
			b = append(b, "null"...)
		} else {
			b = AppendJSONString(b, v)
		}
	}
	b = append(b, '}')
	if e.ndjson {
		b = append(b, '\n')
	}
	e.scratch = b
	e.rows++
	return e.out.Write(b)
}

// Flush writes the rows encoded so far to the underlying writer and returns
// the encoder's error.
func (e *jsonEncoder) Flush() error { return e.out.Flush() }

// Close ends the array or the envelope, unless the encoder writes NDJSON
// or continues another's body, and flushes.
func (e *jsonEncoder) Close() error {
	return e.out.Close(func() error {
		if e.ndjson || e.cont {
			return nil
		}
		b := e.scratch[:0]
		if e.rows == 0 {
			b = e.open(b)
		}
		b = append(b, ']')
		if e.hasEnv {
			b = append(b, `,"totalPages":`...)
			b = strconv.AppendInt(b, int64(e.env.TotalPages), 10)
			b = append(b, `,"currentPage":`...)
			b = strconv.AppendInt(b, int64(e.env.CurrentPage), 10)
			b = append(b, '}')
		}
		return e.out.Write(b)
	})
}

const hexDigits = "0123456789abcdef"

// jsonSafe[c] is true for the ASCII bytes that appear unescaped in a JSON
// string.
var jsonSafe = func() (t [utf8.RuneSelf]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// AppendJSONString appends s to dst as a quoted JSON string. It escapes '"',
// '\\', control characters (as \n, \r, \t or \u00XX) and U+2028 and U+2029
// (which JavaScript did not allow in string literals), and replaces each
// byte of invalid UTF-8 with \ufffd, as encoding/json does. It allocates
// nothing beyond growing dst; every JSON writer of informe uses it.
func AppendJSONString(dst, s []byte) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if jsonSafe[c] {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRune(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}
