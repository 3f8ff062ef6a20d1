package postgres_test

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/informe/informe/internal/pgserver/pgtest"
	"github.com/informe/informe/internal/postgres"
)

// dataVersion returns the data version of views in a snapshot of its own.
func dataVersion(t *testing.T, pool *pgxpool.Pool, views ...string) string {
	t.Helper()
	snap, err := postgres.Begin(context.Background(), pool)
	if err != nil {
		t.Fatal(err)
	}
	defer snap.Close()
	v, err := snap.DataVersion(views)
	if err != nil {
		t.Fatalf("DataVersion(%q): %v", views, err)
	}
	return v
}

// statements returns how many statements wrote table, by version v.
func statements(t *testing.T, v, table string) int64 {
	t.Helper()
	for _, f := range strings.Fields(v) {
		if name, n, ok := strings.Cut(f, "="); ok && name == table {
			i, err := strconv.ParseInt(n, 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return i
		}
	}
	t.Fatalf("version %q names no table %s", v, table)
	return 0
}

// TestDataVersionFollowsWrites checks that every kind of write of a table
// a view reads changes the view's version, through views over views, as
// does a new definition of a view or of a function it calls, and that a
// write of a table it does not read leaves it.
func TestDataVersionFollowsWrites(t *testing.T) {
	pool := randomDB(t)
	exec(t, pool, raceFixture)
	exec(t, pool, `INSERT INTO users (id, name, email, username, rut, status) VALUES (1, 'A', 'a@x.cl', 'a', '1-9', 'A')`)
	for _, tt := range []struct {
		name, sql string
		changes   map[string]bool // view: whether its version changes
	}{
		{"UpdateTask", "UPDATE tasks SET status = 'Terminada' WHERE id = 1000",
			map[string]bool{"general_report_typed": true, "general_report": true, "task_list_typed": true, "user_list_typed": false, "client_list_typed": false}},
		{"InsertTask", "INSERT INTO tasks (process_id, name, status) VALUES (100, 'x', 'Pendiente')",
			map[string]bool{"general_report_typed": true, "contract_list_typed": true, "user_list_typed": false}},
		{"DeleteTask", "DELETE FROM tasks WHERE name = 'x'",
			map[string]bool{"task_list_typed": true, "service_list_typed": false}},
		{"UpdateNoRow", "UPDATE tasks SET status = 'x' WHERE false", // a statement: a version may change when no row did
			map[string]bool{"task_list_typed": true, "user_list_typed": false}},
		{"UpdateClient", "UPDATE clients SET first_name = 'Eva' WHERE id = 1",
			map[string]bool{"general_report_typed": true, "client_list_typed": true, "task_list_typed": false, "contract_list_typed": false}},
		{"UpdateBenefitCenter", "UPDATE benefit_centers SET name = 'Otro'",
			map[string]bool{"general_report_typed": true, "service_list_typed": true, "process_list_typed": false}},
		{"InsertUser", "INSERT INTO users (id, name, email, username, rut, status) VALUES (2, 'B', 'b@x.cl', 'b', '2-7', 'A')",
			map[string]bool{"user_list_typed": true, "user_list": true, "general_report_typed": false}},
		{"TruncateTasks", "TRUNCATE tasks",
			map[string]bool{"task_list_typed": true, "general_report_typed": true, "user_list_typed": false}},
		{"ReplaceView", "DO $$ BEGIN EXECUTE 'CREATE OR REPLACE VIEW user_list_typed AS ' || pg_get_viewdef('user_list_typed'); END $$",
			map[string]bool{"user_list_typed": true, "user_list": true, "general_report_typed": false}},
		{"ReplaceFunction", "DO $$ BEGIN EXECUTE pg_get_functiondef('rut_key(text)'::regprocedure); END $$",
			map[string]bool{"general_report_typed": true, "client_list_typed": true, "user_list_typed": false, "task_list_typed": false}},
		{"CascadedDelete", "DELETE FROM contracts WHERE id = 20", // its processes go too
			map[string]bool{"process_list_typed": true, "client_list_typed": true, "user_list_typed": false}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			before := map[string]string{}
			for view := range tt.changes {
				before[view] = dataVersion(t, pool, view)
			}
			exec(t, pool, tt.sql)
			for view, changes := range tt.changes {
				if after := dataVersion(t, pool, view); (after != before[view]) != changes {
					t.Errorf("%s: version %q became %q; want a change: %v", view, before[view], after, changes)
				}
			}
		})
	}
}

// TestDataVersionInSnapshot checks that a version is the snapshot's: a
// write not committed yet, or committed after the snapshot began, is not
// in it; a later snapshot sees the committed one.
func TestDataVersionInSnapshot(t *testing.T) {
	pool := randomDB(t)
	exec(t, pool, raceFixture)
	ctx := context.Background()
	snap, err := postgres.Begin(ctx, pool)
	if err != nil {
		t.Fatal(err)
	}
	defer snap.Close()
	views := []string{"task_list_typed"}
	v0, err := snap.DataVersion(views)
	if err != nil {
		t.Fatal(err)
	}
	tx, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, "UPDATE tasks SET status = 'Terminada'"); err != nil {
		t.Fatal(err)
	}
	if got := dataVersion(t, pool, views...); got != v0 {
		t.Errorf("with a write not committed: %q, want %q", got, v0)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if got, err := snap.DataVersion(views); err != nil || got != v0 {
		t.Errorf("the first snapshot after the commit: %q, %v; want %q", got, err, v0)
	}
	if got := dataVersion(t, pool, views...); got == v0 {
		t.Errorf("a snapshot after the commit: %q, the same as before it", got)
	}
}

// TestDataVersionWritersDoNotWait checks that two writers of one table,
// neither committed, do not wait for each other, in READ COMMITTED and
// REPEATABLE READ, and that the REPEATABLE READ writer commits after the
// other folded the rows (which every 128th statement of a READ COMMITTED
// writer does): each statement counts once, folded or not, and the rows
// stay few.
func TestDataVersionWritersDoNotWait(t *testing.T) {
	pool := randomDB(t)
	exec(t, pool, raceFixture)
	ctx := context.Background()
	start := statements(t, dataVersion(t, pool, "task_list_typed"), "tasks")
	rr, err := pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead})
	if err != nil {
		t.Fatal(err)
	}
	defer rr.Rollback(ctx)
	if _, err := rr.Exec(ctx, "UPDATE tasks SET status = 'En Curso' WHERE id = 1000"); err != nil {
		t.Fatal(err)
	}
	// A writer that waited would fail here, not hang the test.
	const n = 300
	for i := range n {
		sql := "SET LOCAL lock_timeout = '20s'; UPDATE tasks SET progress = " + strconv.Itoa(i%100) + " WHERE id = 2000"
		if _, err := pool.Exec(ctx, "BEGIN; "+sql+"; COMMIT"); err != nil {
			t.Fatalf("statement %d of the other writer: %v", i, err)
		}
	}
	if _, err := rr.Exec(ctx, "UPDATE tasks SET status = 'Terminada' WHERE id = 1000"); err != nil {
		t.Fatal(err)
	}
	if err := rr.Commit(ctx); err != nil {
		t.Fatalf("the REPEATABLE READ writer: %v", err)
	}
	if got, want := statements(t, dataVersion(t, pool, "task_list_typed"), "tasks"), start+n+2; got != want {
		t.Errorf("tasks' statements = %d, want %d", got, want)
	}
	if rows := queryInt(t, pool, "SELECT count(*) FROM data_changes"); rows > 140 {
		t.Errorf("%d rows in data_changes after %d statements; folding keeps them under 140", rows, n+2)
	}
}

// TestDataVersionNone checks that views reading a relation whose writes
// no version follows have none: a table of the operator's own, a table
// whose trigger is disabled.
func TestDataVersionNone(t *testing.T) {
	pool := pgtest.New(t)
	exec(t, pool, `CREATE TABLE own (id bigint); CREATE VIEW own_list AS SELECT u.id FROM user_list_typed u JOIN own o ON o.id = u.key_id;
		CREATE VIEW later_own AS SELECT u.key_id AS id FROM user_list_typed u`)
	ctx := context.Background()
	version := func(t *testing.T, view string) (string, error) {
		t.Helper()
		snap, err := postgres.Begin(ctx, pool)
		if err != nil {
			t.Fatal(err)
		}
		defer snap.Close()
		return snap.DataVersion([]string{view})
	}
	for _, tt := range []struct {
		name, sql, view string
		known           bool // its version read before sql
	}{
		{"OwnTable", "", "own_list", false},
		// Known first as reading watched tables only: what a view reads
		// is found again when it changes.
		{"ViewReplaced", "CREATE OR REPLACE VIEW later_own AS SELECT u.key_id AS id FROM user_list_typed u JOIN own o ON o.id = u.key_id", "later_own", true},
		{"DisabledTrigger", "ALTER TABLE users DISABLE TRIGGER data_version", "user_list_typed", true},
		{"ReplicaOnlyTrigger", "ALTER TABLE users ENABLE REPLICA TRIGGER data_version", "user_list", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if tt.known {
				if _, err := version(t, tt.view); err != nil {
					t.Fatalf("before %s: %v", tt.sql, err)
				}
			}
			if tt.sql != "" {
				exec(t, pool, tt.sql)
			}
			snap, err := postgres.Begin(ctx, pool)
			if err != nil {
				t.Fatal(err)
			}
			defer snap.Close()
			if v, err := snap.DataVersion([]string{tt.view}); !errors.Is(err, postgres.ErrNoDataVersion) {
				t.Errorf("DataVersion(%s) = %q, %v; want ErrNoDataVersion", tt.view, v, err)
			}
		})
	}
}

// TestDataVersionWriterWithoutGrants checks that a role that may write a
// table but nothing of informe's own changes its version: the trigger's
// function runs with its owner's rights.
func TestDataVersionWriterWithoutGrants(t *testing.T) {
	pool := pgtest.New(t)
	exec(t, pool, `INSERT INTO users (id, name, email, username, rut, status) VALUES (1, 'A', 'a@x.cl', 'a', '1-9', 'A')`)
	role := "writer_" + strconv.FormatInt(queryInt(t, pool, "SELECT oid::bigint FROM pg_database WHERE datname = current_database()"), 10)
	exec(t, pool, "CREATE ROLE "+role)
	t.Cleanup(func() {
		pool.Exec(context.Background(), "DROP OWNED BY "+role)
		pool.Exec(context.Background(), "DROP ROLE "+role)
	})
	exec(t, pool, "GRANT USAGE ON SCHEMA "+queryString(t, pool, "SELECT quote_ident(current_schema())")+" TO "+role+"; GRANT SELECT, UPDATE ON users TO "+role)
	before := dataVersion(t, pool, "user_list_typed")
	ctx := context.Background()
	err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "SET LOCAL ROLE "+role); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, "UPDATE users SET name = 'B' WHERE id = 1")
		return err
	})
	if err != nil {
		t.Fatalf("the writer's update: %v", err)
	}
	if after := dataVersion(t, pool, "user_list_typed"); after == before {
		t.Errorf("version %q unchanged after the writer's update", after)
	}
}
