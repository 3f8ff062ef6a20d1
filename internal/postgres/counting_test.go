package postgres_test

import (
	"context"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/informe/informe/internal/pgserver/pgtest"
	"github.com/informe/informe/internal/postgres"
)

// redefineView replaces general_report_typed, the view informe reads the
// report's rows from, with its own definition in which old
// is replaced by new, so that the columns stay exactly the same.
func redefineView(old, new string) func(*testing.T, *pgxpool.Pool) {
	return func(t *testing.T, pool *pgxpool.Pool) {
		t.Helper()
		def := queryString(t, pool, "SELECT pg_get_viewdef('general_report_typed')")
		if !strings.Contains(def, old) {
			t.Fatalf("the view's definition has no %q:\n%s", old, def)
		}
		exec(t, pool, "CREATE OR REPLACE VIEW general_report_typed AS "+strings.Replace(def, old, new, 1))
	}
}

func execAll(sql ...string) func(*testing.T, *pgxpool.Pool) {
	return func(t *testing.T, pool *pgxpool.Pool) {
		t.Helper()
		for _, q := range sql {
			exec(t, pool, q)
		}
	}
}

func exec(t *testing.T, pool *pgxpool.Pool, sql string) {
	t.Helper()
	if _, err := pool.Exec(context.Background(), sql); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}

const (
	wantMigrate = "; run informe migrate, or serve with --report-counts=view"
	wantView    = "; serve with --report-counts=view"
	wantTrigger = "; restore the trigger as migration 00002 (report_rows_*) or 00011 (report_keys_*) creates it " +
		"and recount with SELECT report_rows_rebuild(), report_keys_rebuild(), or serve with --report-counts=view"
)

func TestCheckReportCounting(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name  string
		setup func(*testing.T, *pgxpool.Pool)
		want  string // the error's message; "" for none
	}{
		{"OK", nil, ""},
		{"OKTriggerEnabledAlways", execAll(`ALTER TABLE contracts ENABLE ALWAYS TRIGGER report_rows_ins`), ""},
		{"OKViewRedefinedOverSameTables", redefineView("LEFT JOIN clients cl", "JOIN clients cl"), ""},
		{"ErrTriggerDropped", execAll(`DROP TRIGGER report_rows_del ON tasks`),
			"report counts: table tasks has no report_rows_del trigger (the general_report_typed view reads tables " +
				"whose row counts informe does not maintain)" + wantTrigger},
		{"ErrTruncateTriggerDropped", execAll(`DROP TRIGGER report_rows_truncate ON contracts`),
			"report counts: table contracts has no report_rows_truncate trigger (the general_report_typed view reads tables " +
				"whose row counts informe does not maintain)" + wantTrigger},
		{"ErrTriggerDisabled", execAll(`ALTER TABLE processes DISABLE TRIGGER report_rows_upd`),
			"report counts: trigger report_rows_upd on table processes is disabled, " +
				"so informe's row counts miss updates of it" + wantTrigger},
		{"ErrAllTriggersDisabled", execAll(`ALTER TABLE tasks DISABLE TRIGGER ALL`),
			"report counts: trigger report_rows_ins on table tasks is disabled, " +
				"so informe's row counts miss inserts into it" + wantTrigger},
		{"ErrTriggerReplicaOnly", execAll(`ALTER TABLE contracts ENABLE REPLICA TRIGGER report_rows_del`),
			"report counts: trigger report_rows_del on table contracts fires only in replica sessions, " +
				"so informe's row counts miss ordinary deletes from it" + wantTrigger},
		{"ErrTriggerNotOurs", execAll(
			`DROP TRIGGER report_rows_ins ON tasks`,
			`CREATE FUNCTION noop() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RETURN NEW; END $$`,
			`CREATE TRIGGER report_rows_ins BEFORE INSERT ON tasks FOR EACH ROW EXECUTE FUNCTION noop()`),
			"report counts: trigger report_rows_ins on table tasks is not informe's: it must run " +
				"report_rows_on_tasks() after each statement, for inserts into the table" + wantTrigger},
		{"ErrViewOverOtherTable", func(t *testing.T, pool *pgxpool.Pool) {
			exec(t, pool, `CREATE TABLE my_tasks (LIKE tasks INCLUDING ALL)`)
			redefineView("JOIN tasks t", "JOIN my_tasks t")(t, pool)
		}, "report counts: the general_report_typed view reads my_tasks, whose rows informe does not count " +
			"(it counts the rows of contracts, processes and tasks)" + wantView},
		{"ErrViewOverTableOfOtherSchema", func(t *testing.T, pool *pgxpool.Pool) {
			exec(t, pool, `CREATE SCHEMA archive`)
			exec(t, pool, `CREATE TABLE archive.tasks (LIKE tasks INCLUDING ALL)`)
			redefineView("JOIN tasks t", "JOIN archive.tasks t")(t, pool)
		}, "report counts: table archive.tasks has no report_rows_ins trigger (the general_report_typed view reads tables " +
			"whose row counts informe does not maintain)" + wantTrigger},
		{"ErrViewOverAnotherView", func(t *testing.T, pool *pgxpool.Pool) {
			exec(t, pool, `CREATE VIEW open_tasks AS SELECT * FROM tasks WHERE status <> 'Cancelado'`)
			redefineView("JOIN tasks t", "JOIN open_tasks t")(t, pool)
		}, "report counts: the general_report_typed view reads open_tasks, whose rows informe does not count " +
			"(it counts the rows of contracts, processes and tasks)" + wantView},
		{"ErrViewIsMaterialized", execAll(
			`ALTER VIEW general_report_typed RENAME TO general_report_source`,
			`CREATE MATERIALIZED VIEW general_report_typed AS SELECT * FROM general_report_source`),
			"report counts: general_report_typed is not a view, so informe cannot tell which rows it holds" + wantView},
		{"ErrViewMissing", execAll(`DROP VIEW general_report_typed CASCADE`),
			"report counts: general_report_typed does not exist" + wantMigrate},
		{"ErrCounterTableMissing", execAll(`DROP TABLE report_bucket_rows`),
			"report counts: table report_bucket_rows does not exist: the database lacks informe's report row counts" + wantMigrate},
		{"ErrKeysTriggerDropped", execAll(`DROP TRIGGER report_keys_upd ON tasks`),
			"report counts: table tasks has no report_keys_upd trigger (the general_report_typed view reads tables " +
				"whose row counts informe does not maintain)" + wantTrigger},
		{"ErrKeysTriggerDisabled", execAll(`ALTER TABLE processes DISABLE TRIGGER report_keys_upd`),
			"report counts: trigger report_keys_upd on table processes is disabled, " +
				"so informe's row counts miss updates of it" + wantTrigger},
		{"ErrKeysTableMissing", execAll(`DROP TABLE report_task_keys`),
			"report counts: table report_task_keys does not exist: the database lacks informe's report row counts" + wantMigrate},
		{"ErrFunctionMissing", execAll(`DROP FUNCTION report_contract_at(bigint)`),
			"report counts: function report_contract_at(bigint) does not exist: the database lacks informe's report row counts" + wantMigrate},
	} {
		t.Run(tt.name, func(t *testing.T) {
			pool := pgtest.New(t)
			if tt.setup != nil {
				tt.setup(t, pool)
			}
			err := postgres.CheckReportCounting(context.Background(), pool)
			got := ""
			if err != nil {
				got = err.Error()
			}
			if got != tt.want {
				t.Fatalf("CheckReportCounting = %q\n                   want %q", got, tt.want)
			}
		})
	}
}

// TestCheckReportCountingReadOnly runs the check in a session that may not
// write at all, as on a hot standby.
func TestCheckReportCountingReadOnly(t *testing.T) {
	t.Parallel()
	pool := pgtest.New(t)
	ctx := context.Background()
	cfg := pool.Config().Copy()
	cfg.ConnConfig.RuntimeParams["default_transaction_read_only"] = "on"
	ro, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	if _, err := ro.Exec(ctx, "CREATE TABLE must_fail (x int)"); err == nil {
		t.Fatal("the read-only session could write")
	}
	if err := postgres.CheckReportCounting(ctx, ro); err != nil {
		t.Fatal(err)
	}
}
