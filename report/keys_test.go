package report_test

import (
	"context"
	"net/url"
	"slices"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/informe/informe/internal/odata"
	"github.com/informe/informe/internal/pgserver/pgtest"
	"github.com/informe/informe/internal/postgres"
	"github.com/informe/informe/internal/source"
	"github.com/informe/informe/report"
)

// feedPages reads the first pages (at most 6) of the feed of filter from
// src, of size rows each, following each page's last key as a next link
// does, the first page skipping skip rows; it returns their rows and the
// total the first page counted.
func feedPages(t *testing.T, store *postgres.Store, src *source.Source, filter string, skip string, size int64) ([]string, int64) {
	t.Helper()
	values := url.Values{"$filter": {filter}}
	if skip != "" {
		values.Set("$skip", skip)
	}
	q, err := odata.Parse(values, src.Set)
	if err != nil {
		t.Fatalf("%s: %v", filter, err)
	}
	var all []string
	total := int64(-1)
	for page := 0; ; page++ {
		cur, err := store.Open(context.Background(), src.Dataset, src.Feed(q, size, page == 0))
		if err != nil {
			t.Fatalf("%s: page %d: %v", filter, page+1, err)
		}
		if page == 0 {
			total = cur.Total()
		}
		rows, last := readAll(t, cur, true)
		all = append(all, rows...)
		if int64(len(rows)) < size || page == 5 {
			return all, total
		}
		q.After, q.Skip = last, 0
	}
}

// folded are the folded steps of docs/odata.md that report_task_keys
// answers, with the values of the seeded data, some combined with each
// other and with conditions it cannot answer (read through the view).
func folded(t *testing.T, pool *pgxpool.Pool) []string {
	t.Helper()
	var status string
	var month, day time.Time
	for _, q := range []struct {
		sql  string
		dest any
	}{
		{"SELECT status FROM tasks GROUP BY 1 ORDER BY count(*), 1 LIMIT 1", &status},
		{"SELECT date_trunc('month', end_date) FROM tasks WHERE end_date IS NOT NULL GROUP BY 1 ORDER BY count(*) DESC, 1 LIMIT 1", &month},
		{"SELECT date_trunc('day', execution_date AT TIME ZONE 'UTC') FROM tasks WHERE execution_date IS NOT NULL GROUP BY 1 ORDER BY count(*) DESC, 1 LIMIT 1", &day},
	} {
		if err := pool.QueryRow(context.Background(), q.sql).Scan(q.dest); err != nil {
			t.Fatal(err)
		}
	}
	const date, dateTime = "2006-01-02", "2006-01-02T15:04:05Z"
	monthOf := "task_end_date ge " + month.Format(date) + " and task_end_date lt " + month.AddDate(0, 1, 0).Format(date)
	dayOf := "execution_date ge " + day.Format(dateTime) + " and execution_date lt " + day.AddDate(0, 0, 1).Format(dateTime)
	return []string{
		"task_status eq '" + status + "'",
		"task_status eq 'Pendiente'",
		monthOf,
		dayOf,
		"task_status eq 'Pendiente' and " + monthOf,
		"task_end_date gt " + month.AddDate(0, 0, -1).Format(date) + " and task_end_date le " + month.AddDate(0, 0, 14).Format(date),
		"task_end_date ge " + month.Format(date) + " and task_end_date lt " + month.AddDate(0, 3, 0).Format(date), // longer than read by day
		"2024-06-01 le task_end_date and task_status eq 'Pendiente'",                                              // the literal first
		"task_end_date gt 2024-06-01",
		"execution_date le " + day.Format(dateTime),
		"task_status eq ''",
		// Not all on report_task_keys's columns: read through the view.
		"task_status eq 'Pendiente' and contains(task,'a')",
		"task_status eq 'Pendiente' or " + monthOf,
		"task_status ne 'Pendiente'",
	}
}

// TestTaskKeysPagesAsTheView reads every page of each folded step, and of
// its counts, from the report with maintained counts (through
// report_task_keys where it can) and with counts from the view (through
// general_report_typed alone), before and after writes of every kind to
// the tables the keys come from: the rows, their order and the counts must
// be the same.
func TestTaskKeysPagesAsTheView(t *testing.T) {
	t.Parallel()
	pool := pgtest.Seeded(t)
	store := postgres.NewStore(pool)
	keyed, plain := source.Report(report.Maintained), source.Report(report.FromView)
	compare := func(step string) {
		t.Helper()
		for _, f := range folded(t, pool) {
			for _, p := range []struct {
				size int64
				skip string
			}{{1000, ""}, {97, ""}, {97, "5"}} {
				want, wantTotal := feedPages(t, store, plain, f, p.skip, p.size)
				got, gotTotal := feedPages(t, store, keyed, f, p.skip, p.size)
				if gotTotal != wantTotal {
					t.Errorf("%s: %s, $skip=%s: counted %d rows, the view %d", step, f, p.skip, gotTotal, wantTotal)
				}
				if !slices.Equal(got, want) {
					t.Errorf("%s: %s, pages of %d, $skip=%s: %d rows, the view's statement %d (or other rows)",
						step, f, p.size, p.skip, len(got), len(want))
				}
			}
		}
	}
	compare("seeded")
	for _, w := range []string{
		`UPDATE tasks SET status = 'Pendiente' WHERE id % 7 = 0`,
		`UPDATE tasks SET end_date = end_date + 20, execution_date = execution_date - interval '13 hours' WHERE id % 5 = 1`,
		`UPDATE tasks SET status = '' WHERE id % 11 = 2`,
		`UPDATE processes SET contract_id = contract_id % 50 + 1 WHERE id % 9 = 0`,
		`UPDATE tasks SET process_id = process_id + 1 WHERE id % 13 = 3 AND process_id < (SELECT max(id) FROM processes)`,
		`DELETE FROM tasks WHERE id % 17 = 4`,
		`DELETE FROM processes WHERE id % 19 = 5`,
		`DELETE FROM contracts WHERE id % 23 = 6`,
		`INSERT INTO tasks (process_id, name, status, end_date, execution_date)
			SELECT id, 'nueva', 'Pendiente', DATE '2024-06-15', TIMESTAMPTZ '2024-06-15 12:00:00+00' FROM processes WHERE id % 3 = 0`,
	} {
		if _, err := pool.Exec(context.Background(), w); err != nil {
			t.Fatalf("%s: %v", w, err)
		}
	}
	compare("after writes")
}

// TestTaskKeysRead shows that the folded steps read report_task_keys: a
// status written there only is what the maintained report finds, and what
// the view's reading does not.
func TestTaskKeysRead(t *testing.T) {
	t.Parallel()
	pool := pgtest.Seeded(t)
	ctx := context.Background()
	if _, err := pool.Exec(ctx, `UPDATE report_task_keys SET status = 'only in the keys' WHERE task_id = (SELECT min(id) FROM tasks)`); err != nil {
		t.Fatal(err)
	}
	store := postgres.NewStore(pool)
	for _, tt := range []struct {
		counting report.Counting
		want     int
	}{{report.Maintained, 1}, {report.FromView, 0}} {
		rows, total := feedPages(t, store, source.Report(tt.counting), "task_status eq 'only in the keys'", "", 10)
		if len(rows) != tt.want || total != int64(tt.want) {
			t.Errorf("counts %v: %d rows, %d counted; want %d", tt.counting, len(rows), total, tt.want)
		}
	}
}
