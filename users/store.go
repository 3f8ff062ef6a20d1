// Package users serves the listing of users (GET /users), ordered by id and
// read row by row from the user_list view.
package users

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/informe/informe/export"
	"github.com/informe/informe/internal/postgres"
)

// Store reads users.
type Store struct {
	pool *pgxpool.Pool
}

// NewStore returns a Store reading from pool.
func NewStore(pool *pgxpool.Pool) *Store { return &Store{pool: pool} }

// Cursor reads users, driven like pgx.Rows (see report.Cursor): Next,
// Values (one value per selected column, nil for NULL), Err, and Close on
// every path.
type Cursor struct {
	*postgres.Cursor
	total int64
}

// Total returns the number of users the cursor reads.
func (c *Cursor) Total() int64 { return c.total }

// Count returns the number of users, without reading them: what a HEAD
// request needs.
func (s *Store) Count(ctx context.Context) (int64, error) {
	snap, err := postgres.Begin(ctx, s.pool)
	if err != nil {
		return 0, err
	}
	defer snap.Close()
	return count(snap)
}

func count(snap *postgres.Snapshot) (int64, error) {
	var total int64
	if err := snap.QueryRow("SELECT count(*) FROM user_list", nil, &total); err != nil {
		return 0, fmt.Errorf("users: count: %w", err)
	}
	return total, nil
}

// Open counts the users and opens a [Cursor] over them, reading cols (all
// [Columns] when nil), in one REPEATABLE READ, READ ONLY snapshot.
// Connection failures are failure.Unavailable.
func (s *Store) Open(ctx context.Context, cols []export.Column) (_ *Cursor, err error) {
	if cols == nil {
		cols = Columns
	}
	snap, err := postgres.Begin(ctx, s.pool)
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			snap.Close()
		}
	}()
	total, err := count(snap)
	if err != nil {
		return nil, err
	}
	cur, err := snap.Query("SELECT "+postgres.SelectList(export.Names(cols))+" FROM user_list ORDER BY key_id", nil)
	if err != nil {
		return nil, fmt.Errorf("users: %w", err)
	}
	return &Cursor{Cursor: cur, total: total}, nil
}
