// Package postgres is informe's access to PostgreSQL, and the one package
// that writes SQL: connecting a pool, reading in consistent snapshots
// through cursors, classifying errors, the schema (versioned migrations
// embedded in the binary); the read path, which writes every door's typed
// [dataset.Query] as SQL over the datasets' typed views and reads its rows
// ([Store]); and the statements of the stores (tokens, audit records,
// persons, schedules, the seed, the benchmark), each run by a function
// that takes a [Querier], so that its caller keeps its own transaction.
package postgres

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgconn/ctxwatch"
	"github.com/jackc/pgx/v5/pgxpool"
)

// PoolOptions tune [OpenPool]. Settings given in the URL win over them.
type PoolOptions struct {
	// MaxConns is the pool's size when the URL sets no pool_max_conns;
	// 0 keeps pgx's default (4, or the number of CPUs if more).
	MaxConns int32
	// Cancel is how a query whose context ends is stopped; the zero value
	// is [CancelRequest].
	Cancel Cancel
}

// Cancel is how informe stops a query whose context ended (a client gone,
// a time limit passed).
type Cancel int

const (
	// CancelRequest sends PostgreSQL a cancel request at once, on a
	// connection of its own, and keeps the query's connection until the
	// query has ended; then it closes it rather than give it to another
	// request, which a late cancel request would stop.
	CancelRequest Cancel = iota
	// CancelClose closes the query's connection instead. pgx still sends
	// a cancel request as it closes a connection, but waits for its
	// answer (up to 15 s) before it closes, where CancelRequest stops
	// waiting once the query has ended: PgBouncer 1.18 to 1.20 can crash
	// when a cancel connection closes before they have answered. Once the
	// connection is closed (and PgBouncer has closed its server
	// connection), PostgreSQL ends the backend when it next writes to it,
	// or within a second on PostgreSQL 14 and later, where [Begin] sets
	// client_connection_check_interval.
	CancelClose
)

// markCancelled is pgx's cancel-request handler that also marks its
// connection as having had a query cancelled (see [OpenPool]).
type markCancelled struct {
	pgconn.CancelRequestContextWatcherHandler
	mark func()
}

func (h *markCancelled) HandleCancel(ctx context.Context) {
	h.mark()
	h.CancelRequestContextWatcherHandler.HandleCancel(ctx)
}

// closeCancelled closes, as the pool is given it back, a connection one
// of whose queries was cancelled: the pool then drops it at once. (The
// pool's AfterRelease would do the same, but makes every release
// asynchronous.) It traces nothing else.
type closeCancelled struct{ cancelled *sync.Map }

func (closeCancelled) TraceQueryStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryStartData) context.Context {
	return ctx
}

func (closeCancelled) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

func (t closeCancelled) TraceRelease(_ *pgxpool.Pool, d pgxpool.TraceReleaseData) {
	if _, was := t.cancelled.LoadAndDelete(d.Conn.PgConn()); was {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_ = d.Conn.Close(ctx)
	}
}

// ParseCancel parses the --pg-cancel flag: "request" or "close".
func ParseCancel(s string) (Cancel, error) {
	switch s {
	case "request":
		return CancelRequest, nil
	case "close":
		return CancelClose, nil
	}
	return 0, fmt.Errorf("must be request or close, got %q", s)
}

// Open is [OpenPool] with pgx's defaults, for commands that run a few
// statements.
func Open(ctx context.Context, url string) (*pgxpool.Pool, error) {
	return OpenPool(ctx, url, PoolOptions{})
}

// OpenPool connects a pool to the database at url (a libpq URL or DSN) and
// checks that it answers. When a query's context is cancelled, as when an
// HTTP client goes away mid-page, pgx sends PostgreSQL a cancel request at
// once, so the server stops working on it, rather than only closing the
// socket, and closes the connection when it is released, so that a
// cancel request that arrives late never stops another request's query;
// with opts.Cancel [CancelClose] it closes the connection instead.
func OpenPool(ctx context.Context, url string, opts PoolOptions) (*pgxpool.Pool, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("database: parse url: %w", err)
	}
	if opts.MaxConns > 0 && !strings.Contains(url, "pool_max_conns") {
		cfg.MaxConns = opts.MaxConns
	}
	// A cancel request can reach the server after the query it was sent
	// for has ended, and then cancel whatever that backend runs next: a
	// connection one of whose queries was cancelled is closed when it is
	// released, not given to another request.
	var cancelled sync.Map // *pgconn.PgConn -> struct{}
	cfg.ConnConfig.BuildContextWatcherHandler = func(c *pgconn.PgConn) ctxwatch.Handler {
		if opts.Cancel == CancelClose {
			// The deadline fails the connection's read or write at once,
			// and pgx closes a connection whose read or write failed.
			return &pgconn.DeadlineContextWatcherHandler{Conn: c.Conn()}
		}
		return &markCancelled{
			CancelRequestContextWatcherHandler: pgconn.CancelRequestContextWatcherHandler{
				Conn: c,
				// Cancel at once; if the server has not answered the
				// cancel within DeadlineDelay, give up on the connection.
				CancelRequestDelay: 0,
				DeadlineDelay:      2 * time.Second,
			},
			mark: func() { cancelled.Store(c, struct{}{}) },
		}
	}
	if cfg.ConnConfig.Tracer == nil {
		cfg.ConnConfig.Tracer = closeCancelled{&cancelled}
	}
	cfg.BeforeClose = func(c *pgx.Conn) { cancelled.Delete(c.PgConn()) }
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
