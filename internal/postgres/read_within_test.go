package postgres

import (
	"encoding/binary"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
)

// TestWithinOrdersEachGroup feeds rows whose first key part comes in
// order and whose other parts do not, in binary and text format, and
// checks that they come out in key order, each with its own fields,
// copied (the source's buffer is overwritten after every row, as pgx's
// is).
func TestWithinOrdersEachGroup(t *testing.T) {
	t.Parallel()
	keys := [][3]int64{
		{1, 0, 0},
		{2, 5, 9}, {2, 5, 7}, {2, 3, 0}, {2, 5, 8},
		{3, 1, 1}, {3, 1, 2},
		{4, 9, 1}, {4, 2, 2},
		{7, 0, 0},
	}
	for _, binaryFormat := range []bool{true, false} {
		t.Run(fmt.Sprint("binary=", binaryFormat), func(t *testing.T) {
			format := int16(0)
			if binaryFormat {
				format = 1
			}
			fields := []pgconn.FieldDescription{{Name: "a", DataTypeOID: 25}, {Name: "b", DataTypeOID: 25}}
			for _, n := range []string{"c", "p", "t"} {
				fields = append(fields, pgconn.FieldDescription{Name: n, DataTypeOID: 20, Format: format})
			}
			w, err := newWithin(fields, 3)
			if err != nil {
				t.Fatal(err)
			}
			buf := make([]byte, 0, 64) // reused for every row, as pgx reuses its read buffer
			i := -1
			var raw [][]byte
			next := func() bool {
				if i++; i == len(keys) {
					return false
				}
				buf = buf[:0]
				raw = raw[:0]
				text := fmt.Sprintf("%d.%d.%d", keys[i][0], keys[i][1], keys[i][2])
				buf = append(buf, text...)
				raw = append(raw, buf[:len(text)], nil)
				if i%3 == 0 {
					raw[1] = buf[len(text):len(text)] // empty, not NULL
				}
				for _, k := range keys[i] {
					at := len(buf)
					if binaryFormat {
						buf = binary.BigEndian.AppendUint64(buf, uint64(k))
					} else {
						buf = fmt.Append(buf, k)
					}
					raw = append(raw, buf[at:])
				}
				return true
			}
			values := func() [][]byte { return raw }
			var got []string
			var empties int
			for {
				row := w.row()
				if row == nil {
					ok, err := w.fill(next, values)
					if err != nil {
						t.Fatal(err)
					}
					if !ok {
						break
					}
					row = w.row()
				}
				if len(row) != 2 {
					t.Fatalf("row of %d fields, want 2", len(row))
				}
				if row[1] != nil {
					empties++
				}
				got = append(got, string(row[0]))
			}
			sorted := slices.Clone(keys)
			slices.SortStableFunc(sorted, func(a, b [3]int64) int { return slices.Compare(a[:], b[:]) })
			var want []string
			for _, k := range sorted {
				want = append(want, fmt.Sprintf("%d.%d.%d", k[0], k[1], k[2]))
			}
			if strings.Join(got, " ") != strings.Join(want, " ") {
				t.Errorf("rows came out as %v, want %v", got, want)
			}
			if empties != 4 {
				t.Errorf("%d empty values kept, want 4 (an empty value is not NULL)", empties)
			}
		})
	}
}

func TestWithinRefusesOtherKeyTypes(t *testing.T) {
	t.Parallel()
	fields := []pgconn.FieldDescription{{Name: "a", DataTypeOID: 25}, {Name: "c", DataTypeOID: 23}}
	if _, err := newWithin(fields, 1); err == nil || !strings.Contains(err.Error(), "c is not a bigint") {
		t.Errorf("an int4 key part: %v, want an error naming it", err)
	}
}
