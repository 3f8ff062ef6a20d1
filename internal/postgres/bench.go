package postgres

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// The benchmark's statements (cmd/informe-bench): its baselines, COPY
// and EXPLAIN of informe's own queries, and what it watches of informe's
// backends (application_name informe) in pg_stat_activity.

// InformeBackends returns how many backends informe holds in the
// database db, and how many of them are not idle.
func InformeBackends(ctx context.Context, q Querier, db string) (n, active int, err error) {
	err = q.QueryRow(ctx, `SELECT count(*), count(*) FILTER (WHERE state <> 'idle') FROM pg_stat_activity
				WHERE datname = $1 AND application_name = 'informe'`, db).Scan(&n, &active)
	return n, active, err
}

// InformeWorking returns how many of informe's backends in the database
// db are not idle and not answering the pool's ping.
func InformeWorking(ctx context.Context, q Querier, db string) (int, error) {
	var n int
	err := q.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity WHERE datname = $1 AND application_name = 'informe'
				AND state <> 'idle' AND query <> '-- ping'`, db).Scan(&n)
	return n, err
}

// InformeNotIdle returns how many of informe's backends in the database
// db are not idle.
func InformeNotIdle(ctx context.Context, q Querier, db string) (int, error) {
	var n int
	err := q.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity WHERE datname = $1 AND application_name = 'informe' AND state <> 'idle'`, db).Scan(&n)
	return n, err
}

// InformeActive returns how many of informe's backends in q's database
// run a statement.
func InformeActive(ctx context.Context, q Querier) (int, error) {
	var n int
	err := q.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity
			WHERE datname = current_database() AND application_name = 'informe' AND state = 'active'`).Scan(&n)
	return n, err
}

// InformeTransactions calls each with the pid, the transaction's start
// and the clock of each of informe's backends in q's database whose
// transaction began at since or later, leaving out the pool's pings and
// the token checks. A failure ends the calls, unreported.
func InformeTransactions(ctx context.Context, q Querier, since time.Time, each func(pid int64, start, now time.Time)) {
	rows, _ := q.Query(ctx, `SELECT pid, xact_start, clock_timestamp() FROM pg_stat_activity
				WHERE datname = current_database() AND application_name = 'informe' AND xact_start >= $1
				AND query <> '-- ping' AND query NOT LIKE '%api_tokens%'`, since)
	var pid int64
	var start, now time.Time
	_, _ = pgx.ForEachRow(rows, []any{&pid, &start, &now}, func() error {
		each(pid, start, now)
		return nil
	})
}

// InformePIDs returns the pids of informe's backends in the database db.
func InformePIDs(ctx context.Context, q Querier, db string) ([]int, error) {
	rows, _ := q.Query(ctx, "SELECT pid FROM pg_stat_activity WHERE datname = $1 AND application_name = 'informe'", db) // its error comes from CollectRows
	return pgx.CollectRows(rows, pgx.RowTo[int])
}

// GiveContracts gives the client of id client every every-th contract
// (by id).
func GiveContracts(ctx context.Context, q Querier, client, every int) error {
	_, err := q.Exec(ctx, "UPDATE contracts SET client_id = $1 WHERE id % $2 = 0 AND client_id <> $1", client, every)
	return err
}

// VacuumAnalyze vacuums and analyzes q's database.
func VacuumAnalyze(ctx context.Context, q Querier) error {
	_, err := q.Exec(ctx, "VACUUM ANALYZE")
	return err
}

// CopyCSV returns the COPY TO STDOUT, as CSV, of the rows of query.
func CopyCSV(query string) string { return "COPY (" + query + ") TO STDOUT WITH CSV" }

// PsqlCopyCSV returns psql's \copy to its standard output, as CSV with a
// header, of the rows of query: the client-side copy the benchmark
// measures informe against.
func PsqlCopyCSV(query string) string { return `\copy (` + query + `) TO STDOUT WITH CSV HEADER` }

// Explain returns EXPLAIN's lines for sql, with options.
func Explain(ctx context.Context, q Querier, options, sql string) ([]string, error) {
	rows, _ := q.Query(ctx, "EXPLAIN ("+options+") "+sql) // its error comes from CollectRows
	return pgx.CollectRows(rows, pgx.RowTo[string])
}

// SelectOrdered returns the statement that reads columns of view in the
// order of keys.
func SelectOrdered(view string, columns, keys []string) string {
	return "SELECT " + SelectList(columns) + " FROM " + view + " ORDER BY " + strings.Join(keys, ", ")
}

// ReportClients returns the client whose contracts have the most report
// rows, and the client whose count is nearest near.
func ReportClients(ctx context.Context, q Querier, near int) (most, nearest int64, err error) {
	err = q.QueryRow(ctx, `
		WITH c AS (SELECT k.client_id AS id, sum(r.rows) AS n
		           FROM contracts k JOIN report_contract_rows r ON r.contract_id = k.id GROUP BY 1)
		SELECT (SELECT id FROM c ORDER BY n DESC, id LIMIT 1), (SELECT id FROM c ORDER BY abs(n - $1), id LIMIT 1)`, near).Scan(&most, &nearest)
	return most, nearest, err
}

// Folding are values of the data that the benchmark of Power Query's
// folded steps filters on.
type Folding struct {
	Status     string    // the rarest task status
	Month, Day time.Time // the busiest month of end dates, and day of execution dates
	Cost       string    // the median service cost
}

// FoldingValues reads [Folding]'s values; an error names the statement
// that failed.
func FoldingValues(ctx context.Context, q Querier) (Folding, error) {
	var f Folding
	for _, s := range []struct {
		sql  string
		dest any
	}{
		{"SELECT status FROM tasks GROUP BY 1 ORDER BY count(*), 1 LIMIT 1", &f.Status},
		{"SELECT date_trunc('month', end_date) FROM tasks WHERE end_date IS NOT NULL GROUP BY 1 ORDER BY count(*) DESC, 1 LIMIT 1", &f.Month},
		{"SELECT date_trunc('day', execution_date AT TIME ZONE 'UTC') FROM tasks WHERE execution_date IS NOT NULL GROUP BY 1 ORDER BY count(*) DESC, 1 LIMIT 1", &f.Day},
		{"SELECT percentile_disc(0.5) WITHIN GROUP (ORDER BY cost)::text FROM services", &f.Cost},
	} {
		if err := q.QueryRow(ctx, s.sql).Scan(s.dest); err != nil {
			return f, fmt.Errorf("%s: %w", s.sql, err)
		}
	}
	return f, nil
}
