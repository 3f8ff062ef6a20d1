package report_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/informe/informe/internal/dataset"
	"github.com/informe/informe/internal/pgserver"
	"github.com/informe/informe/internal/postgres"
	"github.com/informe/informe/internal/seed"
	"github.com/informe/informe/report"

	"github.com/informe/informe/internal/testenv"
)

// TestExportPartsOnStandby checks that a hot standby (pg_basebackup -R of
// a private primary) exports and imports a snapshot: ExportParts there
// reads the whole report through several connections, and the parts, read
// after the primary has changed the report and the standby has replayed
// it, give the rows of one connection's export taken before the change.
func TestExportPartsOnStandby(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts two PostgreSQL servers")
	}
	ctx := context.Background()
	primaryDir, standbyDir := serverDir(t), serverDir(t)
	primary := startServer(t, primaryDir)
	if err := postgres.EnsureDatabase(ctx, primary.URL("postgres"), "informe"); err != nil {
		t.Fatal(err)
	}
	writer := openPool(t, primary.URL("informe"))
	if _, err := postgres.Migrate(ctx, writer); err != nil {
		t.Fatal(err)
	}
	if _, err := seed.Seed(ctx, writer, seed.Options{Contracts: 300, Seed: 1}); err != nil {
		t.Fatal(err)
	}
	pw, err := os.ReadFile(filepath.Join(primaryDir, "password"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(standbyDir, "password"), pw, 0o600); err != nil {
		t.Fatal(err)
	}
	basebackup := exec.Command(pgBinary(t, "pg_basebackup"), "-h", "127.0.0.1", "-p", strconv.Itoa(primary.Port()), "-U", "informe",
		"-D", filepath.Join(standbyDir, "pgdata"), "-R", "-X", "stream", "-c", "fast")
	basebackup.Env = append(os.Environ(), "PGPASSWORD="+string(bytes.TrimSpace(pw)))
	basebackup.SysProcAttr = &syscall.SysProcAttr{Credential: postgresUser(t, standbyDir)}
	if out, err := basebackup.CombinedOutput(); err != nil {
		t.Fatalf("pg_basebackup: %v: %s", err, out)
	}
	standby := startServer(t, standbyDir)
	pool := openPool(t, standby.URL("informe"))
	var inRecovery bool
	if err := pool.QueryRow(ctx, "SELECT pg_is_in_recovery()").Scan(&inRecovery); err != nil || !inRecovery {
		t.Fatalf("the standby is not in recovery: %v, %v", inRecovery, err)
	}
	store := postgres.NewStore(pool)

	want, _ := readAll(t, openOne(t, store), false)
	curs, err := store.OpenParts(ctx, report.Dataset(report.Maintained), dataset.Whole(), postgres.Parts{Max: 3, MinRows: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(curs) < 2 {
		t.Fatalf("ExportParts on the standby gave %d cursor, want parts", len(curs))
	}
	// The primary deletes the report's first contracts and the standby
	// replays it while the parts are open: they read their snapshot still.
	if _, err := writer.Exec(ctx, "DELETE FROM contracts WHERE id IN (SELECT id FROM contracts ORDER BY id LIMIT 20)"); err != nil {
		t.Fatal(err)
	}
	var lsn string
	if err := writer.QueryRow(ctx, "SELECT pg_current_wal_lsn()::text").Scan(&lsn); err != nil {
		t.Fatal(err)
	}
	for replayed := false; !replayed; time.Sleep(20 * time.Millisecond) {
		if err := pool.QueryRow(ctx, "SELECT pg_last_wal_replay_lsn() >= $1::pg_lsn", lsn).Scan(&replayed); err != nil {
			t.Fatal(err)
		}
	}
	var got []string
	for _, c := range curs {
		rows, _ := readAll(t, c, false)
		got = append(got, rows...)
	}
	if len(want) < 1000 || !slices.Equal(got, want) {
		t.Fatalf("the parts gave %d rows, one connection %d (or other rows)", len(got), len(want))
	}
	if now, _ := readAll(t, openOne(t, store), false); len(now) >= len(want) {
		t.Fatalf("after the delete the standby exports %d rows, before %d: the writes did not reach it", len(now), len(want))
	}
}

// serverDir returns a folder for a private server that the postgres
// user, when tests run as root, can reach and write.
func serverDir(tb testing.TB) string {
	dir, err := os.MkdirTemp("", "report-standby-")
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		tb.Fatal(err)
	}
	return dir
}

func startServer(tb testing.TB, dir string) *pgserver.Server {
	tb.Helper()
	srv, err := pgserver.Start(context.Background(), pgserver.Options{Dir: dir, Settings: map[string]string{"fsync": "off"}})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = srv.Close() })
	return srv
}

func openPool(tb testing.TB, url string) *pgxpool.Pool {
	tb.Helper()
	pool, err := pgxpool.New(context.Background(), url)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(pool.Close)
	return pool
}

// pgBinary finds a PostgreSQL client program next to the server's.
func pgBinary(tb testing.TB, name string) string {
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	ps, _ := filepath.Glob("/usr/lib/postgresql/*/bin/" + name)
	if len(ps) == 0 {
		testenv.Missing(tb, "%s is not installed", name)
	}
	return ps[len(ps)-1]
}

// postgresUser returns the credential the servers run under when tests run
// as root (nil otherwise), and gives it dir.
func postgresUser(tb testing.TB, dir string) *syscall.Credential {
	if os.Geteuid() != 0 {
		return nil
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		tb.Fatal(err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	if err := os.Chown(dir, uid, gid); err != nil {
		tb.Fatal(err)
	}
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
}

func openOne(tb testing.TB, store *postgres.Store) *postgres.Cursor {
	tb.Helper()
	cur, err := store.Open(context.Background(), report.Dataset(report.Maintained), dataset.Whole())
	if err != nil {
		tb.Fatal(err)
	}
	return cur
}
