// Package users serves the listing of users (GET /users), ordered by id and
// streamed row by row from the user_list view.
package users

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/informe/informe/database"
	"github.com/informe/informe/export"
)

// Store reads users.
type Store struct {
	pool *pgxpool.Pool
}

// NewStore returns a Store reading from pool.
func NewStore(pool *pgxpool.Pool) *Store { return &Store{pool: pool} }

var listSQL = "SELECT " + database.SelectList(export.Names(Columns)) + " FROM user_list ORDER BY key_id"

// Stream reads all users in one REPEATABLE READ, READ ONLY snapshot: it
// counts them, calls begin with the count, then calls row with each user's
// values (in [Columns] order, nil for NULL, valid only during the call).
// Errors are handled as in report.Store.Stream. It returns the number of
// rows passed to row.
func (s *Store) Stream(ctx context.Context, begin func(total int64) error, row func([][]byte) error) (int, error) {
	n := 0
	err := database.Snapshot(ctx, s.pool, func(tx pgx.Tx) error {
		var total int64
		if err := tx.QueryRow(ctx, "SELECT count(*) FROM user_list").Scan(&total); err != nil {
			return fmt.Errorf("users: count: %w", err)
		}
		if err := begin(total); err != nil {
			return err
		}
		var err error
		n, err = database.ForEachRaw(ctx, tx, listSQL, nil, row)
		return err
	})
	return n, err
}
