package export

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/informe/informe/internal/dataset"
)

// encodeAll encodes rs with enc and closes it, failing the test on error.
func encodeAll(t testing.TB, enc Encoder, rs [][][]byte) {
	t.Helper()
	for _, r := range rs {
		if err := enc.Encode(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := enc.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestJSONGolden(t *testing.T) {
	for _, tt := range []struct {
		name string
		env  *Envelope
		rows [][][]byte
	}{
		{"json_envelope.golden", &Envelope{TotalPages: 7, CurrentPage: 2}, userRows()},
		{"json_bare.golden", nil, userRows()},
		{"json_envelope_empty.golden", &Envelope{TotalPages: 0, CurrentPage: 1}, nil},
		{"json_bare_empty.golden", nil, nil},
		{"json_tricky.golden", nil, trickyRows()},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cols := userColumns
			if strings.Contains(tt.name, "tricky") {
				cols = trickyColumns
			}
			var buf bytes.Buffer
			encodeAll(t, NewJSON(&buf, cols, tt.env), tt.rows)
			golden(t, tt.name, buf.Bytes())
			if !json.Valid(buf.Bytes()) {
				t.Fatalf("invalid JSON: %s", buf.Bytes())
			}
		})
	}
}

func TestJSONEmptyExact(t *testing.T) {
	var buf bytes.Buffer
	encodeAll(t, NewJSON(&buf, userColumns, &Envelope{TotalPages: 0, CurrentPage: 1}), nil)
	if got, want := buf.String(), `{"data":[],"totalPages":0,"currentPage":1}`; got != want {
		t.Fatalf("got %s, want %s", got, want)
	}
	buf.Reset()
	encodeAll(t, NewJSON(&buf, userColumns, nil), nil)
	if got, want := buf.String(), `[]`; got != want {
		t.Fatalf("got %s, want %s", got, want)
	}
}

// TestJSONDecodes decodes the envelope with encoding/json and checks key
// order, values and nulls.
func TestJSONDecodes(t *testing.T) {
	var buf bytes.Buffer
	rs := userRows()
	encodeAll(t, NewJSON(&buf, userColumns, &Envelope{TotalPages: 7, CurrentPage: 2}), rs)

	// Top-level keys, in order.
	dec := json.NewDecoder(bytes.NewReader(buf.Bytes()))
	var keys []string
	depth := 0
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		switch tok {
		case json.Delim('{'), json.Delim('['):
			depth++
		case json.Delim('}'), json.Delim(']'):
			depth--
		default:
			if s, ok := tok.(string); ok && depth == 1 && dec.More() {
				keys = append(keys, s)
			}
		}
	}
	if got, want := strings.Join(keys, ","), "data,totalPages,currentPage"; got != want {
		t.Fatalf("top-level keys %s, want %s", got, want)
	}

	var doc struct {
		Data        []map[string]*string
		TotalPages  int
		CurrentPage int
	}
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.TotalPages != 7 || doc.CurrentPage != 2 || len(doc.Data) != len(rs) {
		t.Fatalf("got totalPages %d currentPage %d rows %d", doc.TotalPages, doc.CurrentPage, len(doc.Data))
	}
	for i, r := range rs {
		for j, c := range userColumns {
			got := doc.Data[i][c.Name]
			switch {
			case r[j] == nil && c.Nullable:
				if got != nil {
					t.Errorf("row %d %s = %q, want null", i, c.Name, *got)
				}
			case got == nil:
				t.Errorf("row %d %s = null, want %q", i, c.Name, r[j])
			case *got != string(r[j]):
				t.Errorf("row %d %s = %q, want %q", i, c.Name, *got, r[j])
			}
		}
	}

	// Row keys are in column order.
	raw := buf.String()
	first := raw[strings.Index(raw, "{\"id\""):strings.Index(raw, "}")]
	last := -1
	for _, c := range userColumns {
		i := strings.Index(first, `"`+c.Name+`":`)
		if i <= last {
			t.Fatalf("key %s out of order in %s", c.Name, first)
		}
		last = i
	}
}

func TestJSONNilInNonNullable(t *testing.T) {
	var buf bytes.Buffer
	cols := []dataset.Column{{Name: "a", Kind: dataset.Text}, {Name: "b", Kind: dataset.Integer, Nullable: true}}
	encodeAll(t, NewJSON(&buf, cols, nil), [][][]byte{{nil, nil}})
	if got, want := buf.String(), `[{"a":"","b":null}]`; got != want {
		t.Fatalf("got %s, want %s", got, want)
	}
}

func TestNDJSONGolden(t *testing.T) {
	var buf bytes.Buffer
	encodeAll(t, NewNDJSON(&buf, userColumns), userRows())
	golden(t, "ndjson.golden", buf.Bytes())
	sc := bufio.NewScanner(&buf)
	n := 0
	for sc.Scan() {
		n++
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("line %d: %v", n, err)
		}
	}
	if n != len(userRows()) {
		t.Fatalf("%d lines, want %d", n, len(userRows()))
	}

	buf.Reset()
	encodeAll(t, NewNDJSON(&buf, userColumns), nil)
	if buf.Len() != 0 {
		t.Fatalf("no rows gave %q, want nothing", buf.String())
	}
}

func TestAppendJSONString(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"", `""`},
		{"plain", `"plain"`},
		{`q"b\s`, `"q\"b\\s"`},
		{"\n\r\t", `"\n\r\t"`},
		{"\x00\x01\x1f\x7f", `"\u0000\u0001\u001f` + "\x7f" + `"`},
		{"á ñ €", `"á ñ €"`},
		{"a\u2028b\u2029c", `"a\u2028b\u2029c"`},
		{"bad\xffbyte", `"bad\ufffdbyte"`},
		{"trunc\xe2\x82", `"trunc\ufffd\ufffd"`},
		{"<&>", `"<&>"`},
	} {
		if got := string(AppendJSONString(nil, []byte(tt.in))); got != tt.want {
			t.Errorf("AppendJSONString(%q) = %s, want %s", tt.in, got, tt.want)
		}
	}
}

// failWriter fails every write after n bytes.
type failWriter struct{ n int }

var errWrite = errors.New("write failed")

func (w *failWriter) Write(p []byte) (int, error) {
	if len(p) > w.n {
		n := w.n
		w.n = 0
		return n, errWrite
	}
	w.n -= len(p)
	return len(p), nil
}

func TestTextEncodersStickyError(t *testing.T) {
	for name, enc := range map[string]func(io.Writer) Encoder{
		"json":   func(w io.Writer) Encoder { return NewJSON(w, reportColumns, &Envelope{1, 1}) },
		"ndjson": func(w io.Writer) Encoder { return NewNDJSON(w, reportColumns) },
		"csv":    func(w io.Writer) Encoder { return NewCSV(w, reportColumns, CSVOptions{}) },
	} {
		t.Run(name, func(t *testing.T) {
			e := enc(&failWriter{n: 1000})
			var err error
			for i := 0; i < 200 && err == nil; i++ {
				err = e.Encode(reportRow(i))
			}
			if !errors.Is(err, errWrite) {
				t.Fatalf("Encode err = %v, want %v", err, errWrite)
			}
			if err := e.Encode(reportRow(0)); !errors.Is(err, errWrite) {
				t.Fatalf("Encode after error = %v, want sticky %v", err, errWrite)
			}
			if err := e.Close(); !errors.Is(err, errWrite) {
				t.Fatalf("Close = %v, want %v", err, errWrite)
			}
			if err := e.Close(); !errors.Is(err, errWrite) {
				t.Fatalf("second Close = %v, want %v", err, errWrite)
			}
			if err := e.Encode(reportRow(0)); !errors.Is(err, ErrClosed) {
				t.Fatalf("Encode after Close = %v, want ErrClosed", err)
			}

			// A short row is an error, and sticks.
			e = enc(io.Discard)
			if err := e.Encode(reportRow(0)[:3]); err == nil || !strings.Contains(err.Error(), "row has 3 values, want 74") {
				t.Fatalf("short row: err = %v", err)
			}
			if err := e.Close(); err == nil {
				t.Fatal("Close after a short row: want the error")
			}
		})
	}
}

// TestZeroAllocs checks that encoding a row allocates nothing once the
// encoder's buffers have grown.
func TestZeroAllocs(t *testing.T) {
	row := reportRow(3)
	for name, e := range map[string]Encoder{
		"json":   NewJSON(io.Discard, reportColumns, &Envelope{1, 1}),
		"ndjson": NewNDJSON(io.Discard, reportColumns),
		"csv":    NewCSV(io.Discard, reportColumns, CSVOptions{BOM: true}),
	} {
		_ = e.Encode(row)
		if n := testing.AllocsPerRun(100, func() { _ = e.Encode(row) }); n != 0 {
			t.Errorf("%s: %v allocations per row, want 0", name, n)
		}
	}
}

func FuzzJSON(f *testing.F) {
	f.Add([]byte("plain"), []byte("José \"x\"\n"), true)
	f.Add([]byte("\xff\xfe"), []byte("\u2028\x00"), false)
	f.Fuzz(func(t *testing.T, a, b []byte, null bool) {
		cols := []dataset.Column{{Name: "a", Kind: dataset.Text}, {Name: "b", Kind: dataset.Text, Nullable: true}}
		var bv []byte
		if !null {
			bv = b
			if bv == nil {
				bv = []byte{}
			}
		}
		var buf bytes.Buffer
		encodeAll(t, NewJSON(&buf, cols, &Envelope{TotalPages: 1, CurrentPage: 1}), [][][]byte{{a, bv}, {b, nil}})
		if !json.Valid(buf.Bytes()) {
			t.Fatalf("invalid JSON %q", buf.Bytes())
		}
		var doc struct{ Data []map[string]*string }
		if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
			t.Fatal(err)
		}
		want := func(v []byte) string { return toValidUTF8(v) }
		check := func(got *string, v []byte, isNull bool) {
			t.Helper()
			if isNull {
				if got != nil {
					t.Fatalf("got %q, want null", *got)
				}
				return
			}
			if got == nil || *got != want(v) {
				t.Fatalf("got %v, want %q", got, want(v))
			}
		}
		check(doc.Data[0]["a"], a, false)
		check(doc.Data[0]["b"], b, null)
		check(doc.Data[1]["a"], b, false)
		check(doc.Data[1]["b"], nil, true)

		var nd bytes.Buffer
		encodeAll(t, NewNDJSON(&nd, cols), [][][]byte{{a, b}})
		if bytes.Count(nd.Bytes(), []byte("\n")) != 1 || !json.Valid(nd.Bytes()) {
			t.Fatalf("bad NDJSON line %q", nd.Bytes())
		}
	})
}

// toValidUTF8 replaces each invalid byte with U+FFFD, as encoding/json
// does (strings.ToValidUTF8 would replace a run of them with one).
func toValidUTF8(v []byte) string {
	var sb strings.Builder
	for len(v) > 0 {
		r, size := utf8.DecodeRune(v)
		sb.WriteRune(r)
		v = v[size:]
	}
	return sb.String()
}
