// Package database owns informe's PostgreSQL: connecting to it, its schema
// (versioned migrations embedded in the binary), demo data, and a private
// server started from the machine's own PostgreSQL binaries.
package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgconn/ctxwatch"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Open connects a pool to the database at url (a libpq URL or DSN) and checks
// that it answers. When a query's context is cancelled, as when an HTTP
// client goes away mid-page, pgx sends PostgreSQL a cancel request at once,
// so the server stops working on it, rather than only closing the socket.
func Open(ctx context.Context, url string) (*pgxpool.Pool, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("database: parse url: %w", err)
	}
	cfg.ConnConfig.BuildContextWatcherHandler = func(c *pgconn.PgConn) ctxwatch.Handler {
		return &pgconn.CancelRequestContextWatcherHandler{
			Conn: c,
			// Cancel at once; if the server has not answered the cancel
			// within DeadlineDelay, give up on the connection.
			CancelRequestDelay: 0,
			DeadlineDelay:      2 * time.Second,
		}
	}
	if cfg.ConnConfig.RuntimeParams["application_name"] == "" {
		cfg.ConnConfig.RuntimeParams["application_name"] = "informe"
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("database: %w", err)
	}
	pingCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := pool.Ping(pingCtx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("database: ping: %w", err)
	}
	return pool, nil
}
