package postgres_test

import (
	"context"
	"net/url"
	"testing"
	"time"

	"github.com/informe/informe/internal/pgserver/pgtest"
	"github.com/informe/informe/internal/postgres"
)

// TestCancel checks that a query whose context ends stops in PostgreSQL,
// its backend no longer running it within seconds, whether informe sends a
// cancel request or closes the connection (--pg-cancel).
func TestCancel(t *testing.T) {
	t.Parallel()
	observer := pgtest.New(t)
	dbURL := observer.Config().ConnString()
	active := func(pid int32) bool {
		return pgtest.Int(t, observer, "SELECT count(*) FROM pg_stat_activity WHERE pid = $1 AND state = 'active'", pid) > 0
	}
	for _, tt := range []struct {
		name   string
		cancel postgres.Cancel
	}{
		{"Request", postgres.CancelRequest},
		{"Close", postgres.CancelClose},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			pool, err := postgres.OpenPool(ctx, dbURL, postgres.PoolOptions{Cancel: tt.cancel})
			if err != nil {
				t.Fatal(err)
			}
			defer pool.Close()
			qctx, cancel := context.WithCancel(ctx)
			defer cancel()
			snap, err := postgres.Begin(qctx, pool)
			if err != nil {
				t.Fatal(err)
			}
			defer snap.Close()
			var pid int32
			if err := snap.QueryRow("SELECT pg_backend_pid()", nil, &pid); err != nil {
				t.Fatal(err)
			}
			errc := make(chan error, 1)
			go func() {
				var x any
				errc <- snap.QueryRow("SELECT pg_sleep(60)", nil, &x)
			}()
			for deadline := time.Now().Add(10 * time.Second); !active(pid); time.Sleep(20 * time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatal("the query never ran")
				}
			}
			cancel()
			select {
			case err := <-errc:
				if err == nil {
					t.Fatal("the cancelled query succeeded")
				}
			case <-time.After(10 * time.Second):
				t.Fatal("the cancelled query did not return")
			}
			for deadline := time.Now().Add(10 * time.Second); active(pid); time.Sleep(50 * time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatalf("backend %d still runs the query 10 s after its context ended", pid)
				}
			}
		})
	}
}

// TestStatementTimeoutOverURL checks that --statement-timeout, set per
// transaction, wins over a statement_timeout given in the database URL.
func TestStatementTimeoutOverURL(t *testing.T) {
	t.Parallel()
	u, err := url.Parse(pgtest.New(t).Config().ConnString())
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("statement_timeout", "5000")
	u.RawQuery = q.Encode()
	ctx := context.Background()
	pool, err := postgres.Open(ctx, u.String())
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	for _, tt := range []struct {
		name    string
		timeout time.Duration
		want    string
	}{
		{"FlagWins", 50 * time.Millisecond, "50ms"},
		{"ZeroKeepsURL", 0, "5s"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			snap, err := postgres.Begin(postgres.WithStatementTimeout(ctx, tt.timeout), pool)
			if err != nil {
				t.Fatal(err)
			}
			defer snap.Close()
			var got string
			if err := snap.QueryRow("SHOW statement_timeout", nil, &got); err != nil || got != tt.want {
				t.Errorf("statement_timeout = %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}

// TestCancelledConnectionNotReused checks that a connection one of whose
// queries was cancelled is closed when released: a cancel request that
// reaches its backend late would otherwise stop the next request's query
// (57014). A pool of one connection gives the next request a new backend
// after a cancelled query, and the same backend after a query that ended.
func TestCancelledConnectionNotReused(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	observer := pgtest.New(t)
	pool, err := postgres.OpenPool(ctx, observer.Config().ConnString(), postgres.PoolOptions{MaxConns: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	// backend runs then in a snapshot under qctx, calling started with
	// the backend's pid once then is running, and returns the pid.
	backend := func(qctx context.Context, then string, started func(pid int32)) (int32, error) {
		snap, err := postgres.Begin(qctx, pool)
		if err != nil {
			t.Fatal(err)
		}
		defer snap.Close()
		var pid int32
		if err := snap.QueryRow("SELECT pg_backend_pid()", nil, &pid); err != nil {
			t.Fatal(err)
		}
		if started != nil {
			go started(pid)
		}
		var x any
		return pid, snap.QueryRow(then, nil, &x)
	}
	first, err := backend(ctx, "SELECT 1", nil)
	if err != nil {
		t.Fatal(err)
	}
	same, err := backend(ctx, "SELECT 1", nil)
	if err != nil {
		t.Fatal(err)
	}
	if same != first {
		t.Fatalf("a connection whose queries ended was not reused (backends %d, %d): the check below could not tell", first, same)
	}
	qctx, cancel := context.WithCancel(ctx)
	defer cancel()
	cancelledPID, err := backend(qctx, "SELECT pg_sleep(60)", func(pid int32) {
		// End the query's context once it runs (or the observer fails,
		// which the query's error then shows).
		defer cancel()
		for {
			var n int
			err := observer.QueryRow(ctx, "SELECT count(*) FROM pg_stat_activity WHERE pid = $1 AND query LIKE '%pg_sleep(60)%' AND state = 'active'", pid).Scan(&n)
			if err != nil || n > 0 {
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
	})
	if err == nil {
		t.Fatal("the query outlived its context")
	}
	next, err := backend(ctx, "SELECT 1", nil)
	if err != nil {
		t.Fatalf("the request after a cancelled one failed: %v", err)
	}
	if next == cancelledPID {
		t.Errorf("the connection of a cancelled query (backend %d) was given to the next request", cancelledPID)
	}
}
