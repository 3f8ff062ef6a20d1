package export

import (
	"bytes"
	"testing"

	"github.com/informe/informe/internal/dataset"
)

// TestContinue checks that a body written by a first encoder, then by
// encoders continuing it (Options.Continue), then closed by the first,
// is the body one encoder writes, for every split of the rows that gives
// the first encoder a row, and continuations without rows.
func TestContinue(t *testing.T) {
	rs := trickyRows()
	for _, tc := range []struct {
		name   string
		format Format
		opts   Options
	}{
		{"csv", CSV, Options{}},
		{"csv bom semicolon", CSV, Options{CSV: CSVOptions{BOM: true, Delimiter: ';'}}},
		{"csv no header", CSV, Options{CSV: CSVOptions{NoHeader: true}}},
		{"json", JSON, Options{}},
		{"json envelope", JSON, Options{Envelope: &Envelope{TotalPages: 3, CurrentPage: 2}}},
		{"ndjson", NDJSON, Options{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var want bytes.Buffer
			enc, err := NewEncoder(&want, tc.format, trickyColumns, tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			encodeAll(t, enc, rs)
			for first := 1; first <= len(rs); first++ {
				for second := first; second <= len(rs); second++ {
					got := encodeInParts(t, tc.format, trickyColumns, tc.opts, rs, first, second)
					if !bytes.Equal(got, want.Bytes()) {
						t.Fatalf("parts %d, %d, %d rows:\n%q\nwant\n%q", first, second-first, len(rs)-second, got, want.Bytes())
					}
				}
			}
		})
	}
}

// encodeInParts writes rs in three parts, rs[:first] by a first encoder
// with opts, then rs[first:second] and rs[second:] each by an encoder
// continuing its body (Options.Continue), then closes the first, and
// returns the body.
func encodeInParts(t *testing.T, f Format, cols []dataset.Column, opts Options, rs [][][]byte, first, second int) []byte {
	t.Helper()
	var b bytes.Buffer
	head, err := NewEncoder(&b, f, cols, opts)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rs[:first] {
		if err := head.Encode(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := head.(Flusher).Flush(); err != nil {
		t.Fatal(err)
	}
	cont := opts
	cont.Continue = true
	for _, part := range [][][][]byte{rs[first:second], rs[second:]} {
		enc, err := NewEncoder(&b, f, cols, cont)
		if err != nil {
			t.Fatal(err)
		}
		encodeAll(t, enc, part)
	}
	if err := head.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}
