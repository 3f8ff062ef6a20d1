package postgres

import (
	"context"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// Querier runs statements: a *pgxpool.Pool, a pgx.Tx or a *pgx.Conn. The
// functions of the stores' statements take one, so that their callers
// keep their own transactions, locks and retries.
type Querier interface {
	Execer
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// Execer runs a statement that returns no rows: a [Querier], or anything
// with its Exec.
type Execer interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
}
