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
	if d.KeyColumn == "" { // the key's parts as text, 0 for NULL
		for i, k := range d.Keys {
			if i == 0 {
				list = append(list, "t."+k+"::text")
			} else {
				list = append(list, "coalesce(t."+k+", 0)::text")
			}
		}
	}
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

// scheduleRuns is a run history, which the demo data has none of: a
// schedule and runs of every outcome, NULLs and offsets included.
const scheduleRuns = `
INSERT INTO schedules (id, name, dataset, format, cron, destination, token_name, next_run) VALUES
  (900001, 'finanzas-diario', 'general-report', 'csv', '0 6 * * *', 'file:///srv/finanzas/pendientes-{date}.csv', 'finanzas', '2026-01-02 09:00:00+00');
INSERT INTO schedule_runs (schedule_id, schedule_name, occurrence, attempt, outcome, started_at, ended_at, rows, bytes, destination, file_name, reason, instance)
SELECT 900001, 'finanzas-diario', '2026-01-01 09:00:00+00'::timestamptz + i * interval '1 day', 1 + i % 2,
       (ARRAY['delivered', 'unchanged', 'failed', 'retried', 'running'])[1 + i % 5],
       '2026-01-01 09:00:00.000001-03'::timestamptz + i * interval '1 day 1.5 seconds',
       CASE WHEN i % 5 = 4 THEN NULL ELSE '2026-01-01 09:00:03.5+00'::timestamptz + i * interval '1 day' END,
       CASE WHEN i % 5 < 2 THEN i * 1000 END, CASE WHEN i % 5 < 2 THEN i * 123456 END,
       'file:///srv/finanzas/pendientes-{date}.csv', CASE WHEN i % 5 <> 4 THEN 'pendientes-2026-01-' || lpad((i + 1)::text, 2, '0') || '.csv' END,
       CASE WHEN i % 5 IN (2, 3) THEN 'full: there is no space left in /srv/finanzas' END, 'informe-1'
FROM generate_series(0, 14) i;
INSERT INTO audit_records (started_at, ended_at, request_id, principal, client_address, user_agent, path, dataset, query, rules,
  format, columns, rows, bytes, status, outcome, reason, requests, instance)
SELECT '2026-01-01 09:00:00.000001-03'::timestamptz + i * interval '1 hour 0.25 seconds',
       CASE WHEN i % 6 = 5 THEN NULL ELSE '2026-01-01 12:00:03.5+00'::timestamptz + i * interval '1 hour' END,
       'req-' || i, (ARRAY['finanzas', 'ana@host', '(no valid token)'])[1 + i % 3],
       CASE WHEN i % 4 <> 3 THEN '10.0.0.' || i END, CASE WHEN i % 2 = 0 THEN E'Microsoft.Data.Mashup (Ñ "q")' END,
       'GET /api/general-report/export', 'general-report', CASE WHEN i % 3 <> 2 THEN '$filter=task_status%20eq%20%27Pendiente%27' END,
       CASE WHEN i % 5 = 1 THEN 'columns=no personal data; max_rows=5000' END,
       'csv', 'contract_id,client_rut', CASE WHEN i % 6 < 4 THEN i * 100 END, CASE WHEN i % 6 < 4 THEN i * 12345 END,
       CASE WHEN i % 6 = 5 THEN NULL ELSE 200 END,
       (ARRAY['complete', 'cut', 'failed', 'not_modified', 'refused', 'open'])[1 + i % 6],
       CASE WHEN i % 6 IN (1, 2, 4) THEN 'client_stalled' END, 1 + i % 3, 'informe-1'
FROM generate_series(0, 14) i;
`
