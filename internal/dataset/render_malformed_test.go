package dataset_test

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/informe/informe/internal/dataset"
)

// wireTypes are the (kind, type, format) triples New accepts, with the
// binary length of fixed-size types (0 for variable).
var wireTypes = []struct {
	kind   dataset.Kind
	oid    uint32
	format int16
	size   int
}{
	{dataset.Text, pgtype.TextOID, 0, 0},
	{dataset.Text, pgtype.VarcharOID, 1, 0},
	{dataset.Integer, pgtype.Int2OID, 1, 2},
	{dataset.Integer, pgtype.Int4OID, 1, 4},
	{dataset.Integer, pgtype.Int8OID, 1, 8},
	{dataset.Integer, pgtype.Int8OID, 0, 0},
	{dataset.Decimal, pgtype.NumericOID, 1, 0},
	{dataset.Decimal, pgtype.NumericOID, 0, 0},
	{dataset.Decimal, pgtype.Int4OID, 1, 4},
	{dataset.Date, pgtype.DateOID, 1, 4},
	{dataset.Date, pgtype.DateOID, 0, 0},
	{dataset.Timestamp, pgtype.TimestampOID, 1, 8},
	{dataset.Timestamp, pgtype.TimestampOID, 0, 0},
	{dataset.Timestamptz, pgtype.TimestamptzOID, 1, 8},
	{dataset.Timestamptz, pgtype.TimestamptzOID, 0, 0},
}

func renderer(t *testing.T, kind dataset.Kind, oid uint32, format int16) *dataset.Row {
	t.Helper()
	r, err := dataset.NewRow([]dataset.Column{{Name: "col_x", Kind: kind}},
		[]pgconn.FieldDescription{{Name: "col_x", DataTypeOID: oid, Format: format}})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestRenderMalformed checks that bytes no PostgreSQL would send are an
// error naming the column, never a panic: random bytes of every length for
// every type and format, fixed-size binary values of the wrong length, and
// values wrong in one detail.
func TestRenderMalformed(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 2))
	const alphabet = "0123456789-:. +BCinfyNaINTEF\x00\xff"
	for _, w := range wireTypes {
		r := renderer(t, w.kind, w.oid, w.format)
		for i := 0; i < 20000; i++ {
			v := make([]byte, rng.IntN(40))
			for j := range v {
				if w.format == 1 {
					v[j] = byte(rng.Uint32())
				} else {
					v[j] = alphabet[rng.IntN(len(alphabet))]
				}
			}
			if w.oid == pgtype.NumericOID && w.format == 1 && i%2 == 0 {
				v = randomNumeric(rng)
			}
			got, err := r.Render([][]byte{v}) // must not panic
			if w.size > 0 && len(v) != w.size && err == nil {
				t.Fatalf("%s from OID %d: Render(% x) = %q, nil; want an error for the length", w.kind, w.oid, v, got)
			}
			if err != nil && !strings.Contains(err.Error(), "col_x") {
				t.Fatalf("Render(% x): %v; want the column named", v, err)
			}
		}
	}
	tests := []struct {
		name   string
		kind   dataset.Kind
		oid    uint32
		format int16
		value  string
		want   string
	}{
		{"NumericShort", dataset.Decimal, pgtype.NumericOID, 1, "\x00\x01\x00\x00\x00\x00\x00", "7 bytes"},
		{"NumericDigitsMissing", dataset.Decimal, pgtype.NumericOID, 1, "\x00\x02\x00\x00\x00\x00\x00\x00\x00\x01", "2 digits"},
		{"NumericDigitPast9999", dataset.Decimal, pgtype.NumericOID, 1, "\x00\x01\x00\x00\x00\x00\x00\x00\x27\x10", "past 9999"},
		{"NumericSign", dataset.Decimal, pgtype.NumericOID, 1, "\x00\x00\x00\x00\x12\x34\x00\x00", "sign"},
		{"NumericText", dataset.Decimal, pgtype.NumericOID, 0, "1.5e3", "numeric"},
		{"NumericTextPoint", dataset.Decimal, pgtype.NumericOID, 0, "15.", "numeric"},
		{"IntegerText", dataset.Integer, pgtype.Int4OID, 0, "12a", "integer"},
		{"IntegerTextEmpty", dataset.Integer, pgtype.Int4OID, 0, "", "integer"},
		{"DateRange", dataset.Date, pgtype.DateOID, 1, "\x7f\x00\x00\x00", "range"},
		{"DateMonth", dataset.Date, pgtype.DateOID, 0, "2024-13-01", "DateStyle ISO"},
		{"DateEra", dataset.Date, pgtype.DateOID, 0, "2024-01-01 AD", "DateStyle ISO"},
		{"TimestampRange", dataset.Timestamp, pgtype.TimestampOID, 1, "\x7f\xff\xff\xff\xff\x00\x00\x00", "range"},
		{"TimestampFraction", dataset.Timestamp, pgtype.TimestampOID, 0, "2024-01-02 03:04:05.1234567", "DateStyle ISO"},
		{"TimestampNoTime", dataset.Timestamp, pgtype.TimestampOID, 0, "2024-01-02", "DateStyle ISO"},
		{"TimestamptzNoOffset", dataset.Timestamptz, pgtype.TimestamptzOID, 0, "2024-01-02 03:04:05", "DateStyle ISO"},
		{"TimestamptzShortOffset", dataset.Timestamptz, pgtype.TimestamptzOID, 0, "2024-01-02 03:04:05+5", "DateStyle ISO"},
		{"TimestamptzOffsetParts", dataset.Timestamptz, pgtype.TimestamptzOID, 0, "2024-01-02 03:04:05+05:30:00:01", "DateStyle ISO"},
		{"TimestamptzRange", dataset.Timestamptz, pgtype.TimestamptzOID, 0, "294276-12-31 23:59:59-01", "range"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := renderer(t, tt.kind, tt.oid, tt.format).Render([][]byte{[]byte(tt.value)})
			if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), "col_x") {
				t.Errorf("Render(%q) = %q, %v; want an error naming col_x and saying %q", tt.value, got, err, tt.want)
			}
		})
	}
	t.Run("JSONBVersion", func(t *testing.T) {
		r, err := dataset.NewRow(nil, []pgconn.FieldDescription{{Name: "related", DataTypeOID: pgtype.JSONBOID, Format: 1}})
		if err != nil {
			t.Fatal(err)
		}
		if got, err := r.Render([][]byte{[]byte("\x02{}")}); err == nil || !strings.Contains(err.Error(), "version") {
			t.Errorf("Render = %q, %v; want an error about jsonb's version", got, err)
		}
	})
	t.Run("Width", func(t *testing.T) {
		r := renderer(t, dataset.Text, pgtype.TextOID, 0)
		if got, err := r.Render([][]byte{[]byte("a"), []byte("b")}); err == nil {
			t.Errorf("Render of 2 values for 1 field = %q, nil; want an error", got)
		}
	})
}

// randomNumeric returns a binary numeric of the right length whose header
// and digits are random: weights PostgreSQL would never send, digits past
// 9999, sign words that are none.
func randomNumeric(rng *rand.Rand) []byte {
	n := rng.IntN(12)
	v := binary.BigEndian.AppendUint16(nil, uint16(n))
	v = binary.BigEndian.AppendUint16(v, uint16(rng.IntN(64)-32))
	signs := []uint16{0, 0x4000, 0xC000, 0xD000, 0xF000, uint16(rng.Uint32())}
	v = binary.BigEndian.AppendUint16(v, signs[rng.IntN(len(signs))])
	v = binary.BigEndian.AppendUint16(v, uint16(rng.IntN(40)))
	for range n {
		d := uint16(rng.IntN(10000))
		if rng.IntN(50) == 0 {
			d = uint16(rng.Uint32())
		}
		v = binary.BigEndian.AppendUint16(v, d)
	}
	return v
}

// TestRenderAllocates checks that a row rendered after the first allocates
// nothing.
func TestRenderAllocates(t *testing.T) {
	var cols []dataset.Column
	var fields []pgconn.FieldDescription
	var raw [][]byte
	add := func(kind dataset.Kind, oid uint32, format int16, v string) {
		cols = append(cols, dataset.Column{Name: "c", Kind: kind, Nullable: len(cols)%2 == 0})
		fields = append(fields, pgconn.FieldDescription{DataTypeOID: oid, Format: format})
		if v == "NULL" {
			raw = append(raw, nil)
		} else {
			raw = append(raw, []byte(v))
		}
	}
	add(dataset.Text, pgtype.TextOID, 0, "Ñuñoa")
	add(dataset.Integer, pgtype.Int8OID, 1, "\x00\x00\x00\x00\x00\x01\xe2\x40")
	add(dataset.Decimal, pgtype.NumericOID, 1, "\x00\x02\x00\x00\x00\x00\x00\x02\x05\xdc\x13\x88") // 1500.50
	add(dataset.Date, pgtype.DateOID, 1, "\x00\x00\x22\x9b")
	add(dataset.Timestamp, pgtype.TimestampOID, 1, "\x00\x02\xb5\x4e\x1d\x8f\x4a\x40")
	add(dataset.Timestamptz, pgtype.TimestamptzOID, 1, "\x00\x02\xb5\x4e\x1d\x8f\x4a\x41")
	add(dataset.Timestamptz, pgtype.TimestamptzOID, 0, "2024-01-02 03:04:05.25-03")
	add(dataset.Date, pgtype.DateOID, 0, "0044-03-15 BC")
	add(dataset.Decimal, pgtype.NumericOID, 0, "1500.50")
	add(dataset.Date, pgtype.DateOID, 1, "NULL")
	add(dataset.Text, pgtype.TextOID, 0, "NULL")
	r, err := dataset.NewRow(cols, fields)
	if err != nil {
		t.Fatal(err)
	}
	got, err := r.Render(raw)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"Ñuñoa", "123456", "1500.5", "2024-04-03", "2024-02-26 21:11:01", "2024-02-26 21:11:01.427777+00",
		"2024-01-02 06:04:05.250000+00", "0044-03-15", "1500.5", "", "NULL"}
	for i, w := range want {
		if g := show(got[i]); g != w && g != fmt.Sprintf("%q", w) {
			t.Errorf("value %d = %s, want %q", i, g, w)
		}
	}
	if n := testing.AllocsPerRun(100, func() {
		if _, err := r.Render(raw); err != nil {
			t.Fatal(err)
		}
	}); n != 0 {
		t.Errorf("Render allocates %v times a row, want 0", n)
	}
}
