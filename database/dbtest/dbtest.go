// Package dbtest gives tests a real PostgreSQL: a private server per test
// binary, started from the machine's PostgreSQL binaries, and a fresh
// database per test, cloned from a migrated template.
//
// A test package calls [Main] from TestMain, then [New] in each test.
package dbtest

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/informe/informe/database"
)

var (
	server    *database.Server
	templates sync.Map // name -> *template
	counter   atomic.Int64
)

type template struct {
	once sync.Once
	err  error
}

const migrated = "tmpl_migrated"

// Main starts the private server, runs the tests and stops the server.
func Main(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	dir, err := os.MkdirTemp("", "informe-test-pg-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "dbtest:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	ctx := context.Background()
	server, err = database.StartServer(ctx, database.ServerOptions{
		Dir: dir,
		Settings: map[string]string{
			"fsync":              "off",
			"synchronous_commit": "off",
			"full_page_writes":   "off",
			"max_connections":    "200",
		},
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "dbtest:", err)
		return 1
	}
	defer server.Close()
	return m.Run()
}

// Server returns the running private server.
func Server() *database.Server { return server }

// New returns a pool on a new, migrated, empty database that is dropped
// when the test ends.
func New(tb testing.TB) *pgxpool.Pool {
	return NewFrom(tb, migrated, nil)
}

// NewFrom returns a pool on a new database cloned from the named template.
// The template is made once per test binary: migrated, then passed to
// setup (which may be nil), for example to seed it.
func NewFrom(tb testing.TB, name string, setup func(context.Context, *pgxpool.Pool) error) *pgxpool.Pool {
	tb.Helper()
	if server == nil {
		tb.Fatal("dbtest: no server; call dbtest.Main from TestMain")
	}
	ctx := context.Background()
	name = "tmpl_" + strings.TrimPrefix(name, "tmpl_")
	v, _ := templates.LoadOrStore(name, &template{})
	t := v.(*template)
	t.once.Do(func() { t.err = makeTemplate(ctx, name, setup) })
	if t.err != nil {
		tb.Fatalf("dbtest: template %s: %v", name, t.err)
	}
	db := fmt.Sprintf("t_%d_%d", os.Getpid(), counter.Add(1))
	if err := exec(ctx, "CREATE DATABASE "+db+" TEMPLATE "+name); err != nil {
		tb.Fatalf("dbtest: %v", err)
	}
	pool, err := database.Open(ctx, server.URL(db))
	if err != nil {
		tb.Fatalf("dbtest: %v", err)
	}
	tb.Cleanup(func() {
		pool.Close()
		_ = exec(ctx, "DROP DATABASE IF EXISTS "+db+" WITH (FORCE)")
	})
	return pool
}

func makeTemplate(ctx context.Context, name string, setup func(context.Context, *pgxpool.Pool) error) error {
	if err := exec(ctx, "CREATE DATABASE "+name); err != nil {
		return err
	}
	pool, err := database.Open(ctx, server.URL(name))
	if err != nil {
		return err
	}
	defer pool.Close()
	if _, err := database.Migrate(ctx, pool); err != nil {
		return err
	}
	if setup != nil {
		if err := setup(ctx, pool); err != nil {
			return err
		}
	}
	if _, err := pool.Exec(ctx, "VACUUM ANALYZE"); err != nil {
		return err
	}
	return nil
}

func exec(ctx context.Context, sql string) error {
	conn, err := pgx.Connect(ctx, server.URL("postgres"))
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, sql)
	return err
}

// Columns returns the column names of relation (a table or view), in order.
func Columns(tb testing.TB, pool *pgxpool.Pool, relation string) []string {
	tb.Helper()
	rows, err := pool.Query(context.Background(), "SELECT * FROM "+pgx.Identifier{relation}.Sanitize()+" LIMIT 0")
	if err != nil {
		tb.Fatalf("dbtest: %v", err)
	}
	defer rows.Close()
	var names []string
	for _, f := range rows.FieldDescriptions() {
		names = append(names, f.Name)
	}
	return names
}
