package database

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/informe/informe/failure"
)

// Snapshot runs fn in one REPEATABLE READ, READ ONLY transaction, so that
// everything fn reads (a count and the page it describes) comes from the
// same snapshot. Connection failures come back as failure.Unavailable.
func Snapshot(ctx context.Context, pool *pgxpool.Pool, fn func(pgx.Tx) error) error {
	tx, err := pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return Classify(fmt.Errorf("begin: %w", err))
	}
	defer tx.Rollback(context.WithoutCancel(ctx)) //nolint:errcheck // after Commit this is a no-op
	if err := fn(tx); err != nil {
		return Classify(err)
	}
	if err := tx.Commit(ctx); err != nil {
		return Classify(fmt.Errorf("commit: %w", err))
	}
	return nil
}

// ForEachRaw runs sql and calls fn with each row's raw values, one per
// column: the bytes PostgreSQL sent (text columns arrive as UTF-8), nil for
// NULL. The values are only valid until fn returns. It closes the rows and
// reports the first error of the query, of fn or of the iteration, and the
// number of rows passed to fn.
func ForEachRaw(ctx context.Context, q interface {
	Query(context.Context, string, ...any) (pgx.Rows, error)
}, sql string, args []any, fn func([][]byte) error) (int, error) {
	rows, err := q.Query(ctx, sql, args...)
	if err != nil {
		return 0, fmt.Errorf("query: %w", err)
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		if err := fn(rows.RawValues()); err != nil {
			return n, err
		}
		n++
	}
	if err := rows.Err(); err != nil {
		return n, fmt.Errorf("rows: %w", err)
	}
	return n, nil
}

// Classify turns errors that mean "the database cannot be reached or is not
// accepting work now" into failure.Unavailable, keeping the cause. Other
// errors are returned unchanged.
func Classify(err error) error {
	if err == nil || failure.CodeOf(err) != failure.Internal {
		return err
	}
	if errors.Is(err, context.Canceled) {
		return err
	}
	var connectErr *pgconn.ConnectError
	var netErr net.Error
	var pgErr *pgconn.PgError
	switch {
	case errors.As(err, &connectErr), errors.As(err, &netErr):
		return failure.Wrap(failure.Unavailable, err, "Service Unavailable: the database cannot be reached")
	case errors.As(err, &pgErr):
		// Class 08 is connection exception; 57P01-57P03 are shutdowns and
		// "cannot connect now"; 53300 is too many connections.
		switch {
		case len(pgErr.Code) == 5 && pgErr.Code[:2] == "08",
			pgErr.Code == "57P01", pgErr.Code == "57P02", pgErr.Code == "57P03", pgErr.Code == "53300":
			return failure.Wrap(failure.Unavailable, err, "Service Unavailable: the database cannot be reached")
		}
	}
	return err
}

// SelectList returns names as a comma-separated list of quoted identifiers.
func SelectList(names []string) string {
	quoted := make([]string, len(names))
	for i, n := range names {
		quoted[i] = pgx.Identifier{n}.Sanitize()
	}
	return strings.Join(quoted, ", ")
}
