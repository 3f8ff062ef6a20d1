package export

import (
	"bytes"
	"encoding/csv"
	"errors"
	"strings"
	"testing"

	"github.com/informe/informe/internal/dataset"
)

func TestCSVGolden(t *testing.T) {
	for _, tt := range []struct {
		name string
		opts CSVOptions
	}{
		{"csv_default.golden", CSVOptions{}},
		{"csv_noheader.golden", CSVOptions{NoHeader: true}},
		{"csv_bom.golden", CSVOptions{BOM: true}},
		{"csv_semicolon.golden", CSVOptions{Delimiter: ';'}},
		{"csv_tab.golden", CSVOptions{Delimiter: '\t'}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			encodeAll(t, NewCSV(&buf, trickyColumns, tt.opts), trickyRows())
			golden(t, tt.name, buf.Bytes())

			// What a CSV reader gets back: the header, then each value,
			// neutralized in Text columns.
			b := buf.Bytes()
			if tt.opts.BOM {
				if !bytes.HasPrefix(b, []byte("\xEF\xBB\xBF")) {
					t.Fatal("no BOM")
				}
				b = b[3:]
			}
			r := csv.NewReader(bytes.NewReader(b))
			r.Comma = rune(tt.opts.delimiter())
			recs, err := r.ReadAll()
			if err != nil {
				t.Fatal(err)
			}
			want := trickyRows()
			if !tt.opts.NoHeader {
				if got := strings.Join(recs[0], ","); got != strings.Join(dataset.Names(trickyColumns), ",") {
					t.Fatalf("header %q", got)
				}
				recs = recs[1:]
			}
			if len(recs) != len(want) {
				t.Fatalf("%d records, want %d", len(recs), len(want))
			}
			for i, rec := range recs {
				for j, got := range rec {
					w := want[i][j]
					if trickyColumns[j].Kind == dataset.Text {
						w = NeutralizeFormula(nil, w)
					}
					if ws := strings.ReplaceAll(string(w), "\r\n", "\n"); got != ws {
						t.Errorf("record %d field %d = %q, want %q", i, j, got, ws)
					}
				}
			}
		})
	}
}

func TestCSVUsers(t *testing.T) {
	var buf bytes.Buffer
	encodeAll(t, NewCSV(&buf, userColumns, CSVOptions{}), userRows())
	golden(t, "csv_users.golden", buf.Bytes())
}

func TestCSVEmpty(t *testing.T) {
	var buf bytes.Buffer
	encodeAll(t, NewCSV(&buf, userColumns, CSVOptions{BOM: true}), nil)
	if got, want := buf.String(), "\xEF\xBB\xBFid,name,email,username,rut,phone,last_entry,status,created_at,updated_at\r\n"; got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
	buf.Reset()
	encodeAll(t, NewCSV(&buf, userColumns, CSVOptions{NoHeader: true}), nil)
	if buf.Len() != 0 {
		t.Fatalf("got %q, want nothing", buf.String())
	}
}

func TestCSVInvalidDelimiter(t *testing.T) {
	var buf bytes.Buffer
	e := NewCSV(&buf, userColumns, CSVOptions{Delimiter: '|'})
	if err := e.Encode(userRows()[0]); !errors.Is(err, ErrInvalidDelimiter) {
		t.Fatalf("Encode err = %v, want ErrInvalidDelimiter", err)
	}
	if err := e.Close(); !errors.Is(err, ErrInvalidDelimiter) {
		t.Fatalf("Close err = %v, want ErrInvalidDelimiter", err)
	}
	if buf.Len() != 0 {
		t.Fatalf("wrote %q", buf.String())
	}
	if _, err := NewEncoder(&buf, CSV, userColumns, Options{CSV: CSVOptions{Delimiter: '"'}}); !errors.Is(err, ErrInvalidDelimiter) {
		t.Fatalf("NewEncoder err = %v, want ErrInvalidDelimiter", err)
	}
}

// TestCSVDecimalComma checks that DecimalComma writes a comma for the
// point of Decimal values only, with no thousands separator, and is
// refused beside a comma delimiter.
func TestCSVDecimalComma(t *testing.T) {
	cols := []dataset.Column{{Name: "n", Kind: dataset.Integer}, {Name: "cost", Kind: dataset.Decimal, Nullable: true}, {Name: "note", Kind: dataset.Text}}
	for _, tt := range []struct {
		name  string
		delim byte
		row   []string
		want  string
	}{
		{"Fraction", ';', []string{"1", "12500.5", "1.5"}, "1;12500,5;1.5\r\n"},
		{"Whole", ';', []string{"2", "1000000", "x"}, "2;1000000;x\r\n"},
		{"Negative", ';', []string{"3", "-0.25", ""}, "3;-0,25;\r\n"},
		{"Null", ';', []string{"4", "", "a;b"}, "4;;\"a;b\"\r\n"},
		{"Tab", '\t', []string{"5", "350000.75", "y"}, "5\t350000,75\ty\r\n"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			e, err := NewEncoder(&buf, CSV, cols, Options{CSV: CSVOptions{Delimiter: tt.delim, DecimalComma: true, NoHeader: true}})
			if err != nil {
				t.Fatal(err)
			}
			row := make([][]byte, len(tt.row))
			for i, v := range tt.row {
				if v != "" {
					row[i] = []byte(v)
				}
			}
			if err := e.Encode(row); err != nil {
				t.Fatal(err)
			}
			if err := e.Close(); err != nil {
				t.Fatal(err)
			}
			if got, want := buf.String(), tt.want; got != want {
				t.Errorf("got %q, want %q", got, want)
			}
		})
	}
	t.Run("ErrCommaDelimiter", func(t *testing.T) {
		for _, d := range []byte{0, ','} {
			var buf bytes.Buffer
			if _, err := NewEncoder(&buf, CSV, cols, Options{CSV: CSVOptions{Delimiter: d, DecimalComma: true}}); !errors.Is(err, ErrDecimalComma) {
				t.Errorf("delimiter %q: NewEncoder err = %v, want ErrDecimalComma", d, err)
			}
		}
	})
}

func TestNeutralizeFormula(t *testing.T) {
	for _, tt := range []struct{ name, in, want string }{
		{"Empty", "", ""},
		{"Plain", "hola", "hola"},
		{"Equals", "=1+1", "'=1+1"},
		{"EqualsAlone", "=", "'="},
		{"PlusFunction", "+SUM(A1:A9)", "'+SUM(A1:A9)"},
		{"MinusDDE", "-2+3+cmd|' /C calc'!A0", "'-2+3+cmd|' /C calc'!A0"},
		{"At", "@HYPERLINK(\"http://x\")", "'@HYPERLINK(\"http://x\")"},
		{"Tab", "\tx", "'\tx"},
		{"CR", "\rx", "'\rx"},
		{"DashAlone", "-", "'-"},
		{"PlusLetters", "+A1", "'+A1"},
		{"PlusNoDigit", "+ ()", "'+ ()"},
		{"PhoneChile", "+56 9 1234 5678", "+56 9 1234 5678"},
		{"PhoneUS", "+1 (555) 010-9999", "+1 (555) 010-9999"},
		{"PhoneSpaceAfterPlus", "+ 56", "+ 56"},
		{"NegativeInteger", "-12", "-12"},
		{"NegativeDecimal", "-3.25", "-3.25"},
		{"MinusMinus", "--5", "--5"},
		{"PlusExponent", "+1e5", "'+1e5"},
		{"PlusComma", "+1,5", "'+1,5"},
		{"EqualsLater", "a=1", "a=1"},
		{"LeadingSpaceEquals", " =1", " =1"},
		{"FullWidthEquals", "＝1", "＝1"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := string(NeutralizeFormula(nil, []byte(tt.in))); got != tt.want {
				t.Fatalf("NeutralizeFormula(%q) = %q, want %q", tt.in, got, tt.want)
			}
			if got := string(NeutralizeFormula([]byte("x"), []byte(tt.in))); got != "x"+tt.want {
				t.Fatalf("did not append to dst: %q", got)
			}
		})
	}
}

// TestCSVNonTextUnchanged checks that values of other kinds are never
// neutralized, even when they look like formulas.
func TestCSVNonTextUnchanged(t *testing.T) {
	for _, k := range []dataset.Kind{dataset.Integer, dataset.Decimal, dataset.Date, dataset.Timestamp, dataset.Timestamptz} {
		var buf bytes.Buffer
		encodeAll(t, NewCSV(&buf, []dataset.Column{{Name: "v", Kind: k}, {Name: "w", Kind: k}}, CSVOptions{NoHeader: true}),
			rows([]string{"-5", "=1+1"}, []string{"+1", "@x"}))
		if got, want := buf.String(), "-5,=1+1\r\n+1,@x\r\n"; got != want {
			t.Errorf("%v: got %q, want %q", k, got, want)
		}
	}
}

// csvWriterOutput is what encoding/csv.Writer writes for recs, with CRLF
// record ends but line breaks inside fields kept as they are. (With
// UseCRLF it would also turn a field's LF into CRLF and drop its lone CRs.)
func csvWriterOutput(t *testing.T, comma byte, recs [][]string) []byte {
	var out []byte
	for _, rec := range recs {
		var buf bytes.Buffer
		w := csv.NewWriter(&buf)
		w.Comma = rune(comma)
		if err := w.Write(rec); err != nil {
			t.Fatal(err)
		}
		w.Flush()
		out = append(out, bytes.TrimSuffix(buf.Bytes(), []byte("\n"))...)
		out = append(out, '\r', '\n')
	}
	return out
}

func FuzzCSV(f *testing.F) {
	f.Add([]byte("plain"), []byte("José, \"x\"\r\n"), []byte("=1+1"), byte(','))
	f.Add([]byte(" lead"), []byte("+56 9 1234 5678"), []byte(`\.`), byte(';'))
	f.Add([]byte("\tx"), []byte("-12"), []byte("a\rb"), byte('\t'))
	f.Fuzz(func(t *testing.T, a, b, c []byte, delim byte) {
		opts := CSVOptions{Delimiter: delim}
		if opts.validate() != nil {
			return
		}
		cols := []dataset.Column{{Name: "a", Kind: dataset.Text}, {Name: "b", Kind: dataset.Integer}, {Name: "c", Kind: dataset.Text}}
		var buf bytes.Buffer
		encodeAll(t, NewCSV(&buf, cols, opts), [][][]byte{{a, b, c}, {c, a, b}})

		r := csv.NewReader(bytes.NewReader(buf.Bytes()))
		r.Comma = rune(opts.delimiter())
		recs, err := r.ReadAll()
		if err != nil {
			t.Fatalf("reading back %q: %v", buf.Bytes(), err)
		}
		// encoding/csv's reader turns CRLF into LF, even inside quotes.
		norm := func(v []byte) string { return strings.ReplaceAll(string(v), "\r\n", "\n") }
		want := [][]string{
			{"a", "b", "c"},
			{norm(NeutralizeFormula(nil, a)), norm(b), norm(NeutralizeFormula(nil, c))},
			{norm(NeutralizeFormula(nil, c)), norm(a), norm(NeutralizeFormula(nil, b))},
		}
		if len(recs) != len(want) {
			t.Fatalf("read %d records from %q, want %d", len(recs), buf.Bytes(), len(want))
		}
		for i := range want {
			for j := range want[i] {
				if recs[i][j] != want[i][j] {
					t.Fatalf("record %d field %d = %q, want %q (output %q)", i, j, recs[i][j], want[i][j], buf.Bytes())
				}
			}
		}

		// Without neutralization the bytes are encoding/csv.Writer's.
		plain := []dataset.Column{{Name: "a", Kind: dataset.Integer}, {Name: "b", Kind: dataset.Date}}
		buf.Reset()
		encodeAll(t, NewCSV(&buf, plain, opts), [][][]byte{{a, b}, {c, a}})
		if want := csvWriterOutput(t, opts.delimiter(), [][]string{{"a", "b"}, {string(a), string(b)}, {string(c), string(a)}}); !bytes.Equal(buf.Bytes(), want) {
			t.Fatalf("got %q, encoding/csv writes %q", buf.Bytes(), want)
		}
	})
}

func TestCSVSingleEmptyField(t *testing.T) {
	var buf bytes.Buffer
	encodeAll(t, NewCSV(&buf, []dataset.Column{{Name: "note", Kind: dataset.Text}}, CSVOptions{}), rows([]string{""}, []string{"x"}, []string{"\x00"}))
	if got, want := buf.String(), "note\r\n\"\"\r\nx\r\n\"\"\r\n"; got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
	recs, err := csv.NewReader(&buf).ReadAll()
	if err != nil || len(recs) != 4 {
		t.Fatalf("read back %q, %v", recs, err)
	}
}
