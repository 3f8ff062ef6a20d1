package postgres

import (
	"context"
	"fmt"
	"strings"
)

// AnyRows reports whether any of tables has a row.
func AnyRows(ctx context.Context, q Querier, tables []string) (bool, error) {
	parts := make([]string, len(tables))
	for i, t := range tables {
		parts[i] = "EXISTS (SELECT 1 FROM " + t + ")"
	}
	var has bool
	err := q.QueryRow(ctx, "SELECT "+strings.Join(parts, " OR ")).Scan(&has)
	return has, err
}

// LockTables locks tables in SHARE ROW EXCLUSIVE mode, which conflicts
// with itself, until q's transaction ends: a second locker waits for the
// first to end.
func LockTables(ctx context.Context, q Querier, tables []string) error {
	_, err := q.Exec(ctx, "LOCK TABLE "+strings.Join(tables, ", ")+" IN SHARE ROW EXCLUSIVE MODE")
	return err
}

// SetLocalWorkMem sets work_mem to 64MB until q's transaction ends.
func SetLocalWorkMem(ctx context.Context, q Querier) error {
	_, err := q.Exec(ctx, "SET LOCAL work_mem = '64MB'")
	return err
}

// ResetIdentity moves the id sequence of table past its greatest id, for
// rows inserted later without one after rows given their ids.
func ResetIdentity(ctx context.Context, q Querier, table string) error {
	_, err := q.Exec(ctx, fmt.Sprintf(
		"SELECT setval(pg_get_serial_sequence('%[1]s', 'id'), (SELECT max(id) FROM %[1]s))", table))
	return err
}

// ReportRowsTotal returns the number of the general report's rows, as the
// trigger-kept counters count them.
func ReportRowsTotal(ctx context.Context, q Querier) (int64, error) {
	var n int64
	err := q.QueryRow(ctx, "SELECT report_rows_total()").Scan(&n)
	return n, err
}

// Analyze updates the planner's statistics of tables.
func Analyze(ctx context.Context, q Querier, tables []string) error {
	_, err := q.Exec(ctx, "ANALYZE "+strings.Join(tables, ", "))
	return err
}

// CountContracts returns the number of contracts.
func CountContracts(ctx context.Context, q Querier) (int64, error) {
	var n int64
	err := q.QueryRow(ctx, "SELECT count(*) FROM contracts").Scan(&n)
	return n, err
}

// FirstClientRUT returns the RUT of the client of the lowest id, as
// stored.
func FirstClientRUT(ctx context.Context, q Querier) (string, error) {
	var s string
	err := q.QueryRow(ctx, "SELECT rut FROM clients ORDER BY id LIMIT 1").Scan(&s)
	return s, err
}
