package report_test

import (
	"context"
	"fmt"
	"strconv"
	"testing"

	"github.com/informe/informe/internal/dataset"
	"github.com/informe/informe/internal/pgserver/pgtest"
	"github.com/informe/informe/internal/postgres"
	"github.com/informe/informe/report"
)

// readAll reads every row of cur as joined text, and the key of the last
// when the rows carry their position.
func readAll(t *testing.T, cur *postgres.Cursor, keyed bool) (rows []string, last []int64) {
	t.Helper()
	defer cur.Close()
	for cur.Next() {
		v := cur.Values()
		n := len(v)
		if keyed {
			n -= 3
			k := make([]int64, 3)
			for i := range k {
				x, err := strconv.ParseInt(string(v[n+i]), 10, 64)
				if err != nil {
					t.Fatalf("key part %d: %v", i, err)
				}
				k[i] = x
			}
			last = k
		}
		rows = append(rows, fmt.Sprintf("%q", v[:n]))
	}
	if err := cur.Err(); err != nil {
		t.Fatal(err)
	}
	return rows, last
}

// filters are the spec's equalities the walks are filtered by.
var filters = []struct {
	name   string
	column string
	value  any
}{
	{"all", "", nil},
	{"client 3", "key_client_id", int64(3)},
	{"contract 10", "key_contract_id", int64(10)},
}

// query returns the query for every row matching filter f, as the spec's
// equality (plain) or as a condition on the typed view.
func query(f int, typed bool) dataset.Query {
	q := dataset.Whole()
	switch {
	case filters[f].column == "" && typed:
		q.Filters = append(q.Filters, compare("ge", "key_contract_id", 0)) // every row
	case filters[f].column == "":
	case typed:
		q.Filters = append(q.Filters, compare("eq", filters[f].column, filters[f].value.(int64)))
	default:
		q.Equal(filters[f].column, filters[f].value)
	}
	return q
}

// compare returns the condition that the integer column compares with v
// by op.
func compare(op, column string, v int64) *dataset.Expr {
	return &dataset.Expr{Op: dataset.Compare, Type: dataset.Bool, Name: op, Args: []*dataset.Expr{
		{Op: dataset.Property, Type: dataset.Int, Column: column, Kind: dataset.Integer},
		{Op: dataset.Literal, Type: dataset.Int, Value: v},
	}}
}

// TestSliceWalk pages through the report by keyset at several page sizes,
// unfiltered and filtered, through the plain reading with and without
// maintained counts and through the typed view, and checks that the
// slices concatenate to the whole export, in order.
func TestSliceWalk(t *testing.T) {
	t.Parallel()
	pool := pgtest.Seeded(t)
	ctx := context.Background()
	store := postgres.NewStore(pool)
	for _, c := range []report.Counting{report.Maintained, report.FromView} {
		ds := report.Dataset(c)
		for f := range filters {
			cur, err := store.Open(ctx, ds, query(f, false))
			if err != nil {
				t.Fatal(err)
			}
			want, _ := readAll(t, cur, false)
			if len(want) == 0 {
				t.Fatalf("%s: the export is empty", filters[f].name)
			}
			// Small slices on the small filtered reports; the whole
			// seeded report (about 20,000 rows) in slices of hundreds.
			sizes := []int64{1, 7, 100000}
			if filters[f].column == "" {
				sizes = []int64{997, 100000}
			}
			for _, typed := range []bool{false, true} {
				for _, size := range sizes {
					t.Run(fmt.Sprintf("%d/%s/typed=%v/%d", c, filters[f].name, typed, size), func(t *testing.T) {
						var got []string
						var after []int64
						for pages := 0; ; pages++ {
							if pages > len(want)+1 {
								t.Fatal("the walk does not end")
							}
							q := query(f, typed)
							q.Limit, q.Count, q.Position, q.Key = size, pages == 0, true, after
							if after != nil {
								q.Resume = &dataset.Resume{Key: after}
							}
							if got := q.Plain(); got != !typed {
								t.Fatalf("Plain() = %v", got)
							}
							cur, err := store.Open(ctx, ds, q)
							if err != nil {
								t.Fatal(err)
							}
							if pages == 0 {
								if got, want := cur.Total(), int64(len(want)); got != want {
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
}

// TestPages checks that numbered pages (Skip and Limit) of the plain
// reading, through the maintained counts or the view, and of the typed
// view hold the rows of the whole export at their places, past the last
// row included.
func TestPages(t *testing.T) {
	t.Parallel()
	pool := pgtest.Seeded(t)
	ctx := context.Background()
	store := postgres.NewStore(pool)
	cur, err := store.Open(ctx, report.Dataset(report.Maintained), dataset.Whole())
	if err != nil {
		t.Fatal(err)
	}
	all, _ := readAll(t, cur, false)
	n := int64(len(all))
	for _, c := range []report.Counting{report.Maintained, report.FromView} {
		for _, typed := range []bool{false, true} {
			for _, pg := range []struct{ skip, limit int64 }{{0, 30}, {12, 5}, {n - 3, 10}, {n, 10}, {n + 50, 10}} {
				t.Run(fmt.Sprintf("%d/typed=%v/%d+%d", c, typed, pg.skip, pg.limit), func(t *testing.T) {
					q := dataset.Query{Skip: pg.skip, Limit: pg.limit, Count: true}
					if typed {
						q.Filters = append(q.Filters, compare("ge", "key_contract_id", 0))
					}
					cur, err := store.Open(ctx, report.Dataset(c), q)
					if err != nil {
						t.Fatal(err)
					}
					if got := cur.Total(); got != n {
						t.Errorf("Total = %d, want %d", got, n)
					}
					got, _ := readAll(t, cur, false)
					want := all[min(pg.skip, n):min(pg.skip+pg.limit, n)]
					if len(got) != len(want) {
						t.Fatalf("got %d rows, want %d", len(got), len(want))
					}
					for i := range got {
						if got[i] != want[i] {
							t.Fatalf("row %d = %s, want %s", i, got[i], want[i])
						}
					}
				})
			}
		}
	}
}
