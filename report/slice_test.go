package report_test

import (
	"context"
	"fmt"
	"strconv"
	"testing"

	"github.com/informe/informe/internal/pgserver/pgtest"
	"github.com/informe/informe/report"
)

// readAll reads every row of cur as joined text, and the key of the last.
func readAll(t *testing.T, cur *report.Cursor, keyed bool) (rows []string, last *report.Key) {
	t.Helper()
	defer cur.Close()
	for cur.Next() {
		v := cur.Values()
		n := len(v)
		if keyed {
			n -= 3
			var k report.Key
			for i := range k {
				x, err := strconv.ParseInt(string(v[n+i]), 10, 64)
				if err != nil {
					t.Fatalf("key part %d: %v", i, err)
				}
				k[i] = x
			}
			last = &k
		}
		rows = append(rows, fmt.Sprintf("%q", v[:n]))
	}
	if err := cur.Err(); err != nil {
		t.Fatal(err)
	}
	return rows, last
}

// TestSliceWalk pages through the report by keyset at several page sizes,
// unfiltered and filtered, with and without maintained counts, and checks
// that the slices concatenate to the whole export, in order.
func TestSliceWalk(t *testing.T) {
	pool := pgtest.Seeded(t)
	ctx := context.Background()
	for _, c := range []report.Counting{report.Maintained, report.FromView} {
		store := report.NewStore(pool, c)
		for _, q := range []report.Query{{}, {ClientID: 3}, {ContractID: 10}} {
			cur, err := store.Export(ctx, q)
			if err != nil {
				t.Fatal(err)
			}
			want, _ := readAll(t, cur, false)
			if len(want) == 0 {
				t.Fatalf("%+v: the export is empty", q)
			}
			// Small slices on the small filtered reports; the whole
			// seeded report (about 20,000 rows) in slices of hundreds.
			sizes := []int64{1, 7, 100000}
			if !q.Filtered() {
				sizes = []int64{997, 100000}
			}
			for _, size := range sizes {
				t.Run(fmt.Sprintf("%d/%+v/%d", c, q, size), func(t *testing.T) {
					var got []string
					var after *report.Key
					for pages := 0; ; pages++ {
						if pages > len(want)+1 {
							t.Fatal("the walk does not end")
						}
						cur, err := store.OpenSlice(ctx, report.Slice{Query: q, After: after, Limit: size, Count: pages == 0})
						if err != nil {
							t.Fatal(err)
						}
						if pages == 0 {
							if got, want := cur.Page().Total, int64(len(want)); got != want {
								t.Fatalf("Total = %d, want %d", got, want)
							}
						}
						rows, last := readAll(t, cur, true)
						got = append(got, rows...)
						if int64(len(rows)) < size {
							break
						}
						after = last
					}
					if len(got) != len(want) {
						t.Fatalf("walked %d rows, the export has %d", len(got), len(want))
					}
					for i := range got {
						if got[i] != want[i] {
							t.Fatalf("row %d: walked %s, export %s", i, got[i], want[i])
						}
					}
				})
			}
		}
	}
}

// TestSliceSkip checks that Skip passes over rows after the key.
func TestSliceSkip(t *testing.T) {
	pool := pgtest.Seeded(t)
	ctx := context.Background()
	store := report.NewStore(pool, report.Maintained)
	cur, err := store.OpenSlice(ctx, report.Slice{Limit: 30})
	if err != nil {
		t.Fatal(err)
	}
	all, _ := readAll(t, cur, true)
	cur, err = store.OpenSlice(ctx, report.Slice{Skip: 12, Limit: 5})
	if err != nil {
		t.Fatal(err)
	}
	got, _ := readAll(t, cur, true)
	if len(got) != 5 {
		t.Fatalf("got %d rows, want 5", len(got))
	}
	for i := range got {
		if got[i] != all[12+i] {
			t.Fatalf("row %d = %s, want %s", i, got[i], all[12+i])
		}
	}
}
