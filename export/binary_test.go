package export

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"github.com/informe/informe/internal/dataset"
)

// TestBinaryRows checks that the typed encoders write the same bytes from
// rows of binary values (Options.Binary) as from the same rows as text,
// in one part and in parts, and refuse a binary value of the wrong length.
func TestBinaryRows(t *testing.T) {
	rs := typedRows()
	bin := make([][][]byte, len(rs))
	for i, r := range rs {
		bin[i] = make([][]byte, len(r))
		for j, v := range r {
			k := typedColumns[j].Kind
			if k == dataset.Text || len(v) == 0 {
				bin[i][j] = v
				continue
			}
			n, ok := dataset.ParseValue(k, v)
			if !ok {
				t.Fatalf("row %d, %s: %q does not parse", i, typedColumns[j].Name, v)
			}
			bin[i][j] = dataset.AppendValue(nil, k, n)
		}
	}
	for _, f := range []Format{Parquet, Arrow} {
		encode := func(rows [][][]byte, binary bool, bounds []int) []byte {
			opts := Options{Binary: binary}
			if bounds == nil {
				var b bytes.Buffer
				e, err := NewEncoder(&b, f, typedColumns, opts)
				if err != nil {
					t.Fatal(err)
				}
				encodeAll(t, e, rows)
				return b.Bytes()
			}
			if f == Arrow {
				return encodeInParts(t, f, typedColumns, opts, rows, bounds[0], bounds[1])
			}
			return encodeParts(t, f, typedColumns, opts, rows, bounds, rand.New(rand.NewPCG(7, 7)), 1<<20)
		}
		for _, bounds := range [][]int{nil, {2, 5}} {
			if got, want := encode(bin, true, bounds), encode(rs, false, bounds); !bytes.Equal(got, want) {
				t.Errorf("%s, parts from %v: %d bytes from binary rows differ from the %d from text", f, bounds, len(got), len(want))
			}
		}
		var b bytes.Buffer
		e, err := NewEncoder(&b, f, typedColumns, Options{Binary: true})
		if err != nil {
			t.Fatal(err)
		}
		bad := append([][]byte(nil), bin[0]...)
		bad[4] = bad[3] // 8 bytes where a date has 4
		if err := e.Encode(bad); err == nil || !bytes.Contains([]byte(err.Error()), []byte("column day: value does not fit its column's type: 8 bytes are not a binary date")) {
			t.Errorf("%s: a date of 8 bytes: error %v", f, err)
		}
		e.Close()
	}
}
