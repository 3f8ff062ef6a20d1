// Package pgtest gives tests a real PostgreSQL: a private server, started
// from the machine's PostgreSQL binaries, and a fresh database per test,
// cloned from a migrated template.
//
// A test package calls [Main] from TestMain, then [New] in each test. The
// server is the test binary's own, or, when $INFORME_TEST_POSTGRES names
// one, a server that test binaries share (scripts/test starts one with
// [Start], through withpostgres, for all the packages it tests): each
// template is then made once for them all, and every test still has a
// database of its own.
package pgtest

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/informe/informe/internal/seed"

	"github.com/informe/informe/internal/pgserver"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"golang.org/x/sys/unix"

	"github.com/informe/informe/internal/postgres"
)

// EnvServer is the environment variable that names a shared server: the
// URL of its maintenance database, for a user that may create databases.
const EnvServer = "INFORME_TEST_POSTGRES"

var (
	server    cluster
	templates sync.Map // name -> *template
	counter   atomic.Int64
)

type template struct {
	once sync.Once
	err  error
}

const migrated = "tmpl_migrated"

// Main starts the private server, runs the tests, stops the server and
// then calls each of cleanups, for what the package's tests share.
func Main(m *testing.M, cleanups ...func()) {
	code := run(m)
	for _, c := range cleanups {
		c()
	}
	os.Exit(code)
}

func run(m *testing.M) int {
	if u := os.Getenv(EnvServer); u != "" {
		shared, err := url.Parse(u)
		if err != nil {
			fmt.Fprintf(os.Stderr, "pgtest: $%s: %v\n", EnvServer, err)
			return 1
		}
		server = sharedServer{shared}
		return m.Run()
	}
	srv, stop, err := Start()
	if err != nil {
		fmt.Fprintln(os.Stderr, "pgtest:", err)
		return 1
	}
	defer stop()
	server = srv
	return m.Run()
}

// cluster is the server the tests' databases are made on.
type cluster interface {
	// URL is the connection URL of the named database.
	URL(dbname string) string
}

// memoryDir is where [Start] makes its folder: /dev/shm when it is a
// tmpfs this process may write to with at least [memoryFree] free (a
// container's is often 64 MiB), else the temporary folder ("").
// Ext4 finds a free inode slowly among many recently removed ones, and
// the tests make and remove hundreds of thousands of files: in memory,
// the suite spends about a tenth less CPU.
func memoryDir() string {
	const shm = "/dev/shm"
	var fs unix.Statfs_t
	if err := unix.Statfs(shm, &fs); err != nil || fs.Type != unix.TMPFS_MAGIC || unix.Access(shm, unix.W_OK) != nil ||
		fs.Bavail*uint64(fs.Bsize) < memoryFree {
		return ""
	}
	return shm
}

// memoryFree is the room [memoryDir] asks of /dev/shm: the templates, the
// tests' databases at once, and PostgreSQL's write-ahead log between
// checkpoints (max_wal_size, 1 GB by default).
const memoryFree = 4 << 30

// sharedServer is a server named by $INFORME_TEST_POSTGRES.
type sharedServer struct{ maintenance *url.URL }

func (s sharedServer) URL(dbname string) string {
	u := *s.maintenance
	u.Path = "/" + dbname
	return u.String()
}

// Start starts a private server in a temporary folder, tuned for tests
// (nothing is synced to disk), and returns it with the function that
// stops it and removes the folder: [Main]'s server, or one to share, named
// by $INFORME_TEST_POSTGRES (its URL("postgres")).
//
// The folder is in memory (see [memoryDir]) where the machine has a tmpfs
// for it: every test's database is a copy of a template, a thousand files
// made and removed, which on a disk's filesystem costs more than the copy.
func Start() (*pgserver.Server, func(), error) {
	dir, err := os.MkdirTemp(memoryDir(), "informe-test-pg-")
	if err != nil {
		return nil, nil, err
	}
	srv, err := pgserver.Start(context.Background(), pgserver.Options{
		Dir: dir,
		Settings: map[string]string{
			"fsync":              "off",
			"synchronous_commit": "off",
			"full_page_writes":   "off",
			"max_connections":    "400",
		},
	})
	if err != nil {
		os.RemoveAll(dir)
		return nil, nil, err
	}
	return srv, func() { srv.Close(); os.RemoveAll(dir) }, nil
}

// New returns a pool on a new, migrated, empty database that is dropped
// when the test ends.
func New(tb testing.TB) *pgxpool.Pool {
	return NewFrom(tb, migrated, nil)
}

// NewFrom returns a pool on a new database cloned from the named template.
// The template is made once per server: migrated, then passed to setup
// (which may be nil), for example to seed it. On a shared server the test
// binaries of every package find it by its name, so a name must mean the
// same content wherever it is used.
func NewFrom(tb testing.TB, name string, setup func(context.Context, *pgxpool.Pool) error) *pgxpool.Pool {
	tb.Helper()
	if server == nil {
		tb.Fatal("pgtest: no server; call pgtest.Main from TestMain")
	}
	ctx := context.Background()
	name = "tmpl_" + strings.TrimPrefix(name, "tmpl_")
	v, _ := templates.LoadOrStore(name, &template{})
	t := v.(*template)
	t.once.Do(func() { t.err = makeTemplate(ctx, name, setup) })
	if t.err != nil {
		tb.Fatalf("pgtest: template %s: %v", name, t.err)
	}
	db := fmt.Sprintf("t_%d_%d", os.Getpid(), counter.Add(1))
	if err := exec(ctx, func(c *pgx.Conn) error { return postgres.CreateDatabase(ctx, c, db, name) }); err != nil {
		tb.Fatalf("pgtest: %v", err)
	}
	pool, err := postgres.Open(ctx, server.URL(db))
	if err != nil {
		tb.Fatalf("pgtest: %v", err)
	}
	tb.Cleanup(func() {
		pool.Close()
		_ = exec(ctx, func(c *pgx.Conn) error { return postgres.DropDatabase(ctx, c, db) })
	})
	return pool
}

// makeTemplate makes the template name, migrated and passed to setup, once
// per server: another test binary on a shared server may have made it, or
// be making it.
func makeTemplate(ctx context.Context, name string, setup func(context.Context, *pgxpool.Pool) error) error {
	return exec(ctx, func(c *pgx.Conn) error {
		return postgres.BuildOnce(ctx, c, name, func(ctx context.Context, building string) error {
			pool, err := postgres.Open(ctx, server.URL(building))
			if err != nil {
				return err
			}
			defer pool.Close()
			if _, err := postgres.Migrate(ctx, pool); err != nil {
				return err
			}
			if setup != nil {
				if err := setup(ctx, pool); err != nil {
					return err
				}
			}
			_, err = pool.Exec(ctx, "VACUUM ANALYZE")
			return err
		})
	})
}

// exec runs do on a connection to the server's maintenance database.
func exec(ctx context.Context, do func(*pgx.Conn) error) error {
	conn, err := pgx.Connect(ctx, server.URL("postgres"))
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	return do(conn)
}

// Columns returns the column names of relation (a table or view), in order.
func Columns(tb testing.TB, pool *pgxpool.Pool, relation string) []string {
	tb.Helper()
	rows, err := pool.Query(context.Background(), postgres.NoRows(relation))
	if err != nil {
		tb.Fatalf("pgtest: %v", err)
	}
	defer rows.Close()
	var names []string
	for _, f := range rows.FieldDescriptions() {
		names = append(names, f.Name)
	}
	return names
}

// Fixture returns a pool on a fresh copy of the tests' small data set
// ([postgres.LoadFixture]), whose every report row and user is known. The
// database's sessions run in America/Santiago time, so that a door must
// render times in UTC whatever the session's TimeZone.
func Fixture(tb testing.TB) *pgxpool.Pool {
	tb.Helper()
	pool := NewFrom(tb, "api_fixture", postgres.LoadFixture)
	if err := postgres.SetDatabaseTimeZone(context.Background(), pool, "America/Santiago"); err != nil {
		tb.Fatal(err)
	}
	return pool
}

// SeededContracts is the number of contracts in the database [Seeded] copies.
const SeededContracts = 2000

// Seeded returns a pool on a fresh copy of a database seeded once per
// server with [SeededContracts] contracts (seed 1).
func Seeded(tb testing.TB) *pgxpool.Pool {
	tb.Helper()
	return SeededWith(tb, SeededContracts)
}

// SmallSeededContracts is the number of contracts in the database
// [SmallSeeded] copies: about 3,000 report rows, several pages of 1,000.
const SmallSeededContracts = 300

// SmallSeeded returns a pool on a fresh copy of a database seeded once per
// server with [SmallSeededContracts] contracts (seed 1): for tests
// that compare every row with a model, where more rows would prove nothing
// more and cost time on every request.
func SmallSeeded(tb testing.TB) *pgxpool.Pool {
	tb.Helper()
	return SeededWith(tb, SmallSeededContracts)
}

// SeededWith returns a pool on a fresh copy of a database seeded once per
// server with contracts contracts (seed 1).
func SeededWith(tb testing.TB, contracts int) *pgxpool.Pool {
	tb.Helper()
	return NewFrom(tb, "seed"+strconv.Itoa(contracts), func(ctx context.Context, pool *pgxpool.Pool) error {
		_, err := seed.Seed(ctx, pool, seed.Options{Contracts: contracts, Seed: 1})
		return err
	})
}

// Int runs sql, which must return one integer, and returns it; it fails the
// test on error.
func Int(tb testing.TB, pool *pgxpool.Pool, sql string, args ...any) int64 {
	tb.Helper()
	return one[int64](tb, pool, sql, args...)
}

// String runs sql, which must return one text value, and returns it; it
// fails the test on error.
func String(tb testing.TB, pool *pgxpool.Pool, sql string, args ...any) string {
	tb.Helper()
	return one[string](tb, pool, sql, args...)
}

// one runs sql, which must return one value of type T, and returns it; it
// fails the test on error.
func one[T any](tb testing.TB, pool *pgxpool.Pool, sql string, args ...any) T {
	tb.Helper()
	var v T
	if err := pool.QueryRow(context.Background(), sql, args...).Scan(&v); err != nil {
		tb.Fatalf("%s: %v", sql, err)
	}
	return v
}
