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
	return countUsers(snap)
}

func countUsers(snap *postgres.Snapshot) (int64, error) {
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
	total, err := countUsers(snap)
	if err != nil {
		return nil, err
	}
	cur, err := snap.Query("SELECT "+postgres.SelectList(export.Names(cols))+" FROM user_list ORDER BY key_id", nil)
	if err != nil {
		return nil, fmt.Errorf("users: %w", err)
	}
	return &Cursor{Cursor: cur, total: total}, nil
}

// OpenSlice opens a [Cursor] on at most limit users whose id is above
// after (0: from the first), skip of them passed over, in id order, all
// columns, in one snapshot; with count, Total is the number of all users,
// else -1. It costs the same wherever it starts: the scan begins at after
// through the index.
func (s *Store) OpenSlice(ctx context.Context, after, skip, limit int64, count bool) (_ *Cursor, err error) {
	snap, err := postgres.Begin(ctx, s.pool)
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			snap.Close()
		}
	}()
	total := int64(-1)
	if count {
		if total, err = countUsers(snap); err != nil {
			return nil, err
		}
	}
	if limit <= 0 {
		return &Cursor{Cursor: snap.Empty(), total: total}, nil
	}
	cur, err := snap.Query("SELECT "+postgres.SelectList(export.Names(Columns))+
		" FROM user_list WHERE key_id > $1 ORDER BY key_id OFFSET $2 LIMIT $3", []any{after, skip, limit})
	if err != nil {
		return nil, fmt.Errorf("users: %w", err)
	}
	return &Cursor{Cursor: cur, total: total}, nil
}

// Selection asks for users found and ordered by their typed values, in
// the user_list_typed view (OData's $filter and $orderby); see
// report.Selection, whose fields these are. Each row's values are those of
// all [Columns], then SortText's values.
type Selection struct {
	Where          string
	Args           []any
	Sort, SortText []string
	Desc           []bool
	Skip, Limit    int64
	Count          bool
	CountWhere     string
	CountArgs      []any
}

// OpenSelection opens a [Cursor] on the users sel asks for, in one
// snapshot; with sel.Count, Total is the number of matching users, else
// -1. Connection failures are failure.Unavailable.
func (s *Store) OpenSelection(ctx context.Context, sel Selection) (*Cursor, error) {
	cur, total, err := postgres.OpenTyped(ctx, s.pool, postgres.Typed{
		Typed: "user_list_typed", Text: "user_list", Keys: []string{"key_id"},
		Columns: export.Names(Columns),
		Where:   sel.Where, Args: sel.Args,
		Sort: sel.Sort, SortText: sel.SortText, Desc: sel.Desc,
		Skip: sel.Skip, Limit: sel.Limit,
	}, sel.Count, sel.CountWhere, sel.CountArgs)
	if err != nil {
		return nil, fmt.Errorf("users: %w", err)
	}
	return &Cursor{Cursor: cur, total: total}, nil
}
