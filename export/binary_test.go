package export

import (
	"bytes"
	"math/rand/v2"
	"testing"
	"time"
)

// TestParseValue checks ParseValue's days and microseconds against the
// time package's, for years of four to seven digits and before Christ.
func TestParseValue(t *testing.T) {
	day := func(y int, m time.Month, d int) int64 {
		return time.Date(y, m, d, 0, 0, 0, 0, time.UTC).Unix() / 86400
	}
	for _, tc := range []struct {
		kind Kind
		text string
		want int64
	}{
		{Date, "1970-01-02", 1},
		{Date, "0044-03-15 BC", day(-43, 3, 15)},
		{Date, "10000-01-01", day(10000, 1, 1)},
		{Date, "294276-12-31", day(294276, 12, 31)},
		{Date, "5874897-12-31", day(5874897, 12, 31)},
		{Timestamp, "12345-06-07 08:09:10", time.Date(12345, 6, 7, 8, 9, 10, 0, time.UTC).UnixMicro()},
		{Timestamptz, "12345-06-07 08:09:10.5-03", time.Date(12345, 6, 7, 11, 9, 10, 500_000_000, time.UTC).UnixMicro()},
		{Decimal, "-1500.5", -150050},
		{Integer, "+7", 7},
	} {
		got, ok := ParseValue(tc.kind, []byte(tc.text))
		if !ok || got != tc.want {
			t.Errorf("ParseValue(%s, %q) = %d, %v; want %d", tc.kind, tc.text, got, ok, tc.want)
		}
	}
	for _, tc := range []struct {
		kind Kind
		text string
	}{
		{Date, "010000-01-01"}, {Date, "10000-01-01 BC"}, {Date, "12345678-01-01"},
		{Timestamp, "294248-01-01 00:00:00"}, {Text, "x"}, {Decimal, "NaN"},
		{Date, ""}, {Date, " BC"}, {Timestamp, ""}, {Integer, ""}, {Decimal, ""},
	} {
		if got, ok := ParseValue(tc.kind, []byte(tc.text)); ok {
			t.Errorf("ParseValue(%s, %q) = %d, want false", tc.kind, tc.text, got)
		}
	}
}

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
			if k == Text || len(v) == 0 {
				bin[i][j] = v
				continue
			}
			n, ok := ParseValue(k, v)
			if !ok {
				t.Fatalf("row %d, %s: %q does not parse", i, typedColumns[j].Name, v)
			}
			bin[i][j] = AppendValue(nil, k, n)
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
