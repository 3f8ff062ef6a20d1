package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/informe/informe/internal/pgserver/pgtest"
	"github.com/informe/informe/internal/postgres"
)

// maintenance connects to the test server's maintenance database, where
// databases are made.
func maintenance(t *testing.T) *pgx.Conn {
	t.Helper()
	cfg := pgtest.New(t).Config().ConnConfig.Copy()
	cfg.Database = "postgres"
	conn, err := pgx.ConnectConfig(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

func databaseExists(t *testing.T, conn *pgx.Conn, name string) bool {
	t.Helper()
	var ok bool
	if err := conn.QueryRow(context.Background(), "SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)", name).Scan(&ok); err != nil {
		t.Fatal(err)
	}
	return ok
}

// TestBuildOnce has two sessions ask for the same database at once: the
// second waits for the first's build and finds the database made, with
// what the build put in it; build runs once.
func TestBuildOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	watch, first, second := maintenance(t), maintenance(t), maintenance(t)
	name := fmt.Sprintf("once_%d_%d", os.Getpid(), time.Now().UnixNano())
	t.Cleanup(func() { postgres.DropDatabase(ctx, watch, name) })

	var builds atomic.Int32
	release := make(chan struct{})
	build := func(ctx context.Context, building string) error {
		builds.Add(1)
		<-release
		c, err := pgx.ConnectConfig(ctx, func() *pgx.ConnConfig {
			cfg := first.Config().Copy()
			cfg.Database = building
			return cfg
		}())
		if err != nil {
			return err
		}
		defer c.Close(ctx)
		_, err = c.Exec(ctx, "CREATE TABLE made (n int); INSERT INTO made VALUES (42)")
		return err
	}
	var wg sync.WaitGroup
	errs := make([]error, 2)
	wg.Go(func() { errs[0] = postgres.BuildOnce(ctx, first, name, build) })
	// The first session builds (build has begun) before the second asks.
	for builds.Load() == 0 {
		time.Sleep(10 * time.Millisecond)
	}
	wg.Go(func() { errs[1] = postgres.BuildOnce(ctx, second, name, build) })
	// The second waits for the first's advisory lock.
	for waiting := false; !waiting; {
		if err := watch.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_locks
			WHERE locktype = 'advisory' AND NOT granted AND pid = $1)`, second.PgConn().PID()).Scan(&waiting); err != nil {
			t.Fatal(err)
		}
		if !waiting {
			time.Sleep(10 * time.Millisecond)
		}
	}
	if databaseExists(t, watch, name) {
		t.Fatalf("%s exists before its build ended", name)
	}
	close(release)
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	if n := builds.Load(); n != 1 {
		t.Fatalf("build ran %d times, want once", n)
	}
	if databaseExists(t, watch, name+"_building") {
		t.Fatalf("%s_building is left", name)
	}
	cfg := watch.Config().Copy()
	cfg.Database = name
	c, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	var n int
	err = c.QueryRow(ctx, "SELECT n FROM made").Scan(&n)
	c.Close(ctx)
	if err != nil || n != 42 {
		t.Fatalf("the built database reads %d, %v; want 42", n, err)
	}
}

// TestBuildOnceFailed checks that a failed build leaves no database under
// the name, and that the next call builds it again.
func TestBuildOnceFailed(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	conn := maintenance(t)
	name := fmt.Sprintf("failed_%d_%d", os.Getpid(), time.Now().UnixNano())
	t.Cleanup(func() {
		postgres.DropDatabase(ctx, conn, name)
		postgres.DropDatabase(ctx, conn, name+"_building")
	})
	broken := errors.New("the build broke")
	if err := postgres.BuildOnce(ctx, conn, name, func(context.Context, string) error { return broken }); !errors.Is(err, broken) {
		t.Fatalf("BuildOnce = %v, want the build's error", err)
	}
	if databaseExists(t, conn, name) {
		t.Fatalf("%s exists after a failed build", name)
	}
	built := false
	if err := postgres.BuildOnce(ctx, conn, name, func(context.Context, string) error { built = true; return nil }); err != nil {
		t.Fatal(err)
	}
	if !built || !databaseExists(t, conn, name) {
		t.Fatalf("after a failed build, the next call built %v, exists %v; want both", built, databaseExists(t, conn, name))
	}
}
