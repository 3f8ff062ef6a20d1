package dataset_test

import (
	"context"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/informe/informe/internal/dataset"
	"github.com/informe/informe/internal/pgserver/pgtest"
	"github.com/informe/informe/report"
)

// selectTyped is the SELECT of d's columns from its typed view, then its
// key parts as text (the pass-through fields a page's position needs),
// over the alias t.
func selectTyped(d *dataset.Dataset) string {
	list := make([]string, 0, len(d.Columns)+len(d.Keys))
	for _, c := range d.Columns {
		list = append(list, "t."+pgx.Identifier{c.Name}.Sanitize())
	}
	list = append(list, d.KeyText("t")...)
	return "SELECT " + strings.Join(list, ", ") + " FROM " + pgx.Identifier{d.Typed}.Sanitize() + " t"
}

// TestTypedViewsFit checks that every dataset's typed view gives each
// column a type its kind can be rendered from, in both formats, and that
// the seeded rows dataset.
func TestTypedViewsFit(t *testing.T) {
	t.Parallel()
	pool := pgtest.SmallSeeded(t)
	if _, err := pool.Exec(context.Background(), scheduleRuns); err != nil {
		t.Fatal(err)
	}
	conn := acquire(t, pool)
	all := append([]*dataset.Dataset{report.Dataset(report.Maintained)}, dataset.All[1:]...)
	for _, d := range all {
		for _, m := range readModes {
			t.Run(d.Name+"/"+m.name, func(t *testing.T) {
				rows, err := conn.Query(context.Background(), selectTyped(d)+" LIMIT 500", m.args[:1]...)
				if err != nil {
					t.Fatal(err)
				}
				defer rows.Close()
				r, err := dataset.NewRow(d.Columns, rows.FieldDescriptions())
				if err != nil {
					t.Fatal(err)
				}
				n := 0
				for rows.Next() {
					got, err := r.Render(rows.RawValues())
					if err != nil {
						t.Fatal(err)
					}
					for i, c := range d.Columns {
						if got[i] == nil && !c.Nullable {
							t.Fatalf("row %d: %s is nil, but the column is not Nullable", n, c.Name)
						}
					}
					n++
				}
				if err := rows.Err(); err != nil {
					t.Fatal(err)
				}
				if n == 0 {
					t.Fatal("no rows")
				}
			})
		}
	}
}

// TestTypedViewsRenderAsTextViews reads the seeded rows of each dataset's
// typed view and of its text view in the same order, and checks that
// Render writes the text view's bytes.
func TestTypedViewsRenderAsTextViews(t *testing.T) {
	t.Parallel()
	pool := pgtest.SmallSeeded(t)
	if _, err := pool.Exec(context.Background(), scheduleRuns); err != nil {
		t.Fatal(err)
	}
	conn := acquire(t, pool)
	all := append([]*dataset.Dataset{report.Dataset(report.Maintained)}, dataset.All[1:]...)
	for _, d := range all {
		for _, m := range readModes {
			t.Run(d.Name+"/"+m.name, func(t *testing.T) {
				checkAsTextView(t, conn, d, m.args[:1])
			})
		}
	}
}

func checkAsTextView(t *testing.T, conn *pgx.Conn, d *dataset.Dataset, opts []any) {
	ctx := context.Background()
	order := make([]string, len(d.Keys))
	for i, k := range d.Keys {
		order[i] = pgx.Identifier{k}.Sanitize()
	}
	by := " ORDER BY " + strings.Join(order, ", ")
	text := make([]string, len(d.Columns))
	for i, c := range d.Columns {
		text[i] = pgx.Identifier{c.Name}.Sanitize()
	}
	want, err := conn.Query(ctx, "SELECT "+strings.Join(text, ", ")+" FROM "+pgx.Identifier{d.Text}.Sanitize()+by, pgx.QueryExecModeSimpleProtocol)
	if err != nil {
		t.Fatal(err)
	}
	var rowsWant [][][]byte
	for want.Next() {
		rowsWant = append(rowsWant, copyRow(want.RawValues()))
	}
	if err := want.Err(); err != nil {
		t.Fatal(err)
	}
	rows, err := conn.Query(ctx, selectTyped(d)+strings.ReplaceAll(by, `"key`, `t."key`), opts...)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	r, err := dataset.NewRow(d.Columns, rows.FieldDescriptions())
	if err != nil {
		t.Fatal(err)
	}
	n, bad := 0, 0
	for rows.Next() {
		got, err := r.Render(rows.RawValues())
		if err != nil {
			t.Fatal(err)
		}
		if n >= len(rowsWant) {
			t.Fatalf("the typed view has more rows than the text view's %d", len(rowsWant))
		}
		for i, c := range d.Columns {
			w := rowsWant[n][i]
			if w == nil && !c.Nullable {
				t.Fatalf("the text view's %s is NULL, but the column is not Nullable", c.Name)
			}
			if !same(got[i], w) {
				if bad++; bad <= 10 {
					t.Errorf("row %d, %s: Render wrote %s, the text view %s", n, c.Name, show(got[i]), show(w))
				}
			}
		}
		n++
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if n != len(rowsWant) || n == 0 {
		t.Fatalf("the typed view has %d rows, the text view %d", n, len(rowsWant))
	}
	if bad > 0 {
		t.Errorf("%d values differ", bad)
	}
}

func copyRow(raw [][]byte) [][]byte {
	out := make([][]byte, len(raw))
	for i, v := range raw {
		if v != nil {
			out[i] = append([]byte{}, v...)
		}
	}
	return out
}
