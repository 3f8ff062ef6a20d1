package postgres_test

import (
	"context"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"
)

// These tests pin, with a fixed interleaving, the counting bugs the random
// writers found (migration 00004 fixes them), and check the migrations'
// way down.

// requireCounts fails the test when the counts disagree with the view.
func requireCounts(t *testing.T, pool *pgxpool.Pool, step string) {
	t.Helper()
	bad, err := countsMismatch(context.Background(), pool, rand.New(rand.NewPCG(1, 2)))
	if err != nil {
		t.Fatalf("%s: %v", step, err)
	}
	if bad != "" {
		t.Fatalf("%s: %s", step, bad)
	}
}

// waitForLock waits until the backend pid waits for a lock.
func waitForLock(t *testing.T, pool *pgxpool.Pool, pid uint32) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if queryInt(t, pool, `SELECT count(*) FROM pg_stat_activity WHERE pid = $1 AND wait_event_type = 'Lock'`, pid) > 0 {
			return
		}
	}
	t.Fatalf("backend %d never waited for a lock", pid)
}

// Contract 10 has process 100 with task 1000, and process 101 without
// tasks; contract 20 has process 200 with task 2000.
const raceFixture = `
	INSERT INTO contracts (id, client_id, status, code) VALUES (10, 1, 'APROBADO', 'A'), (20, 1, 'APROBADO', 'B');
	INSERT INTO processes (id, contract_id) VALUES (100, 10), (101, 10), (200, 20);
	INSERT INTO tasks (id, process_id, name, status) VALUES (1000, 100, 'a', 'Pendiente'), (2000, 200, 'b', 'Pendiente')`

// TestReportCountsTaskWrittenWhileProcessMoves writes a task of a process
// while another transaction, not yet committed, moves that process to
// another contract. The task's writer waits for the mover's counter locks
// and must then count the task where the process went.
func TestReportCountsTaskWrittenWhileProcessMoves(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ name, sql string }{
		{"InsertTask", `INSERT INTO tasks (id, process_id, name, status) VALUES (1001, 100, 'c', 'Pendiente')`},
		{"DeleteTask", `DELETE FROM tasks WHERE id = 1000`},
		{"MoveTaskIn", `UPDATE tasks SET process_id = 100 WHERE id = 2000`},
		{"MoveTaskOut", `UPDATE tasks SET process_id = 200 WHERE id = 1000`},
		// No count changes, but report_task_keys does.
		{"EditFilteredValues", `UPDATE tasks SET status = 'Terminada', end_date = '2026-02-01' WHERE id = 1000`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			pool := randomDB(t)
			exec(t, pool, raceFixture)
			ctx := context.Background()
			mover, err := pool.Begin(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer mover.Rollback(ctx)
			if _, err := mover.Exec(ctx, `UPDATE processes SET contract_id = 20 WHERE id = 100`); err != nil {
				t.Fatal(err)
			}
			conn, err := pool.Acquire(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Release()
			done := make(chan error, 1)
			go func() {
				_, err := conn.Exec(ctx, tt.sql)
				done <- err
			}()
			waitForLock(t, pool, conn.Conn().PgConn().PID())
			if err := mover.Commit(ctx); err != nil {
				t.Fatal(err)
			}
			if err := <-done; err != nil {
				t.Fatal(err)
			}
			requireCounts(t, pool, tt.name+" while process 100 moved to contract 20")
		})
	}
}

// TestReportCountsRepeatableReadWriter has a REPEATABLE READ or
// SERIALIZABLE transaction write after others committed changes its
// snapshot does not see. It must fail with a serialization failure
// (40001), to be retried, rather than keep a count its snapshot got wrong.
func TestReportCountsRepeatableReadWriter(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name      string
		iso       pgx.TxIsoLevel
		committed string // by another transaction after the snapshot
		write     string // by the REPEATABLE READ transaction
	}{
		{"FirstTasksOfProcess", pgx.RepeatableRead,
			`INSERT INTO tasks (process_id, name, status) VALUES (101, 'x', 'Pendiente')`,
			`INSERT INTO tasks (process_id, name, status) VALUES (101, 'y', 'Pendiente')`},
		{"FirstTasksOfProcessSerializable", pgx.Serializable,
			`INSERT INTO tasks (process_id, name, status) VALUES (101, 'x', 'Pendiente')`,
			`INSERT INTO tasks (process_id, name, status) VALUES (101, 'y', 'Pendiente')`},
		{"TaskMovedIntoEmptyProcess", pgx.RepeatableRead,
			`UPDATE tasks SET process_id = 101 WHERE id = 1000`,
			`INSERT INTO tasks (process_id, name, status) VALUES (101, 'y', 'Pendiente')`},
		{"ProcessMoved", pgx.RepeatableRead,
			`UPDATE processes SET contract_id = 20 WHERE id = 100`,
			`INSERT INTO tasks (process_id, name, status) VALUES (100, 'y', 'Pendiente')`},
		// The counts change in neither: report_task_keys does.
		{"StatusEditedWhileProcessMoved", pgx.RepeatableRead,
			`UPDATE processes SET contract_id = 20 WHERE id = 100`,
			`UPDATE tasks SET status = 'Terminada' WHERE id = 1000`},
		{"ProcessMovedWhileStatusEdited", pgx.RepeatableRead,
			`UPDATE tasks SET status = 'Terminada' WHERE id = 1000`,
			`UPDATE processes SET contract_id = 20 WHERE id = 100`},
		{"StatusEditedWhileProcessMovedSerializable", pgx.Serializable,
			`UPDATE processes SET contract_id = 20 WHERE id = 100`,
			`UPDATE tasks SET end_date = '2026-02-01' WHERE id = 1000`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			pool := randomDB(t)
			exec(t, pool, raceFixture)
			ctx := context.Background()
			tx, err := pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: tt.iso})
			if err != nil {
				t.Fatal(err)
			}
			defer tx.Rollback(ctx)
			if _, err := tx.Exec(ctx, `SELECT count(*) FROM general_report`); err != nil { // take the snapshot
				t.Fatal(err)
			}
			exec(t, pool, tt.committed)
			_, err = tx.Exec(ctx, tt.write)
			if err == nil {
				err = tx.Commit(ctx)
			}
			if code(err) != "40001" {
				t.Errorf("the write under an old snapshot: err = %v, want a serialization failure (40001)", err)
			}
			tx.Rollback(ctx)
			requireCounts(t, pool, "after the failed write")
			exec(t, pool, tt.write) // the retry
			requireCounts(t, pool, "after the retry")
		})
	}
}

// TestReportCountsNegativeContractIDs uses contract ids at and below 0,
// which the schema allows: each must be counted in the bucket whose id
// range report_contract_at reads.
func TestReportCountsNegativeContractIDs(t *testing.T) {
	t.Parallel()
	pool := randomDB(t)
	exec(t, pool, `
		INSERT INTO contracts (id, client_id, status, code)
		SELECT id, 1, 'APROBADO', 'N' FROM unnest(ARRAY[-2049, -2048, -1025, -1024, -1023, -5, -1, 0, 1, 1023, 1024]) id;
		INSERT INTO processes (contract_id) SELECT id FROM contracts WHERE id % 2 = 0;
		INSERT INTO tasks (process_id, name, status) SELECT id, 't', 'Pendiente' FROM processes, generate_series(1, 3)`)
	requireCounts(t, pool, "after inserts")
	for _, id := range []int64{-2049, -1025, -1024, -1023, -1, 0} {
		if got, want := queryInt(t, pool, "SELECT report_bucket($1)", id), floorDiv(id, 1024); got != want {
			t.Errorf("report_bucket(%d) = %d, want %d", id, got, want)
		}
	}
	exec(t, pool, `UPDATE contracts SET id = -3000 WHERE id = -5`)
	exec(t, pool, `DELETE FROM contracts WHERE id = -1024`)
	requireCounts(t, pool, "after renumbering and deleting")
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && a < 0 {
		q--
	}
	return q
}

// migrations returns a goose provider of the migrations on pool's
// database, read from the source folder (the embedded copy is not
// exported), for going down, which informe itself never does.
func migrations(t *testing.T, pool *pgxpool.Pool) *goose.Provider {
	t.Helper()
	db := stdlib.OpenDBFromPool(pool)
	t.Cleanup(func() { db.Close() })
	p, err := goose.NewProvider(goose.DialectPostgres, db, os.DirFS("migrations"))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestMigrateDownAndUpKeepsCounts goes down to each earlier version that
// keeps counts, writes, checks the counts, and comes back up: each way
// down must leave working triggers behind (00003's once left 00002's
// functions calling the ones it dropped).
func TestMigrateDownAndUpKeepsCounts(t *testing.T) {
	t.Parallel()
	pool := randomDB(t)
	exec(t, pool, raceFixture)
	exec(t, pool, `INSERT INTO contracts (id, client_id, status, code) VALUES (-7, 1, 'APROBADO', 'N'), (3000, 1, 'APROBADO', 'N');
		INSERT INTO processes (contract_id) VALUES (-7), (-7), (3000)`)
	ctx := context.Background()
	p := migrations(t, pool)
	_, latest, err := p.GetVersions(ctx)
	if err != nil {
		t.Fatal(err)
	}
	requireCounts(t, pool, "at the latest version")
	for v := latest - 1; v >= 2; v-- {
		if _, err := p.DownTo(ctx, v); err != nil {
			t.Fatalf("down to %d: %v", v, err)
		}
		// Writes go through the triggers of version v.
		exec(t, pool, `INSERT INTO tasks (process_id, name, status) SELECT id, 'd', 'Pendiente' FROM processes`)
		exec(t, pool, `UPDATE processes SET contract_id = 3000 WHERE id = (SELECT min(id) FROM processes WHERE contract_id = -7)`)
		exec(t, pool, `DELETE FROM tasks WHERE id = (SELECT max(id) FROM tasks)`)
		at := "at version " + strconv.FormatInt(v, 10)
		switch v {
		case 2: // buckets of id >> 10
			checkCounts(t, pool, at)
		case 3: // buckets of contract ids below 0 are 00003's bug; the rest must hold
			if n := queryInt(t, pool, `SELECT count(*) FROM (
					SELECT key_contract_id, count(*) FROM general_report GROUP BY 1
					EXCEPT SELECT contract_id, rows FROM report_contract_rows) x`); n != 0 {
				t.Errorf("%s: %d contracts counted wrong", at, n)
			}
			if got, want := queryInt(t, pool, "SELECT report_rows_total()"), queryInt(t, pool, "SELECT count(*) FROM general_report"); got != want {
				t.Errorf("%s: report_rows_total() = %d, the view has %d rows", at, got, want)
			}
		default:
			requireCounts(t, pool, at)
		}
		if _, err := p.Up(ctx); err != nil {
			t.Fatalf("up from %d: %v", v, err)
		}
		requireCounts(t, pool, "up again from version "+strconv.FormatInt(v, 10))
		exec(t, pool, `UPDATE processes SET contract_id = -7 WHERE contract_id = 3000`)
		requireCounts(t, pool, "writing after up again from version "+strconv.FormatInt(v, 10))
		if t.Failed() {
			return
		}
	}
}
