package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/informe/informe/internal/pgserver/pgtest"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// checkCounts asserts that the trigger-kept report_contract_rows and
// report_bucket_rows agree with a count over the general_report view.
func checkCounts(t *testing.T, pool *pgxpool.Pool, step string) {
	t.Helper()
	ctx := context.Background()
	readMap := func(sql string) map[int64]int64 {
		rows, err := pool.Query(ctx, sql)
		if err != nil {
			t.Fatalf("%s: %v", step, err)
		}
		m := make(map[int64]int64)
		var k, v int64
		_, err = pgx.ForEachRow(rows, []any{&k, &v}, func() error {
			m[k] = v
			return nil
		})
		if err != nil {
			t.Fatalf("%s: %v", step, err)
		}
		return m
	}
	want := readMap("SELECT key_contract_id, count(*) FROM general_report GROUP BY 1")
	got := readMap("SELECT contract_id, rows FROM report_contract_rows")
	bad := 0
	for id, w := range want {
		if g := got[id]; g != w && bad < 5 {
			t.Errorf("%s: report_contract_rows[%d] = %d, view has %d rows", step, id, g, w)
			bad++
		}
	}
	for id, g := range got {
		if _, ok := want[id]; !ok && bad < 5 {
			t.Errorf("%s: report_contract_rows[%d] = %d for a contract not in the view", step, id, g)
			bad++
		}
	}
	wantBuckets := readMap("SELECT key_contract_id >> 10, count(*) FROM general_report GROUP BY 1")
	gotBuckets := readMap("SELECT bucket, rows FROM report_bucket_rows")
	for b, g := range gotBuckets {
		if w := wantBuckets[b]; g != w {
			t.Errorf("%s: report_bucket_rows[%d] = %d, view has %d rows", step, b, g, w)
		}
	}
	for b, w := range wantBuckets {
		if _, ok := gotBuckets[b]; !ok {
			t.Errorf("%s: report_bucket_rows has no bucket %d, view has %d rows", step, b, w)
		}
	}
	total := queryInt(t, pool, "SELECT coalesce(sum(rows), 0) FROM report_bucket_rows")
	if view := queryInt(t, pool, "SELECT count(*) FROM general_report"); total != view {
		t.Errorf("%s: sum of report_bucket_rows = %d, view has %d rows", step, total, view)
	}
	tx, err := pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		t.Fatalf("%s: %v", step, err)
	}
	defer tx.Rollback(ctx)
	bad2, err := keysMismatch(ctx, tx)
	if err != nil {
		t.Fatalf("%s: %v", step, err)
	}
	for _, b := range bad2 {
		t.Errorf("%s: %s", step, b)
	}
}

// TestReportCountsFollowWrites runs, in order, writes of every kind on a
// seeded database and checks the counters after each one.
func TestReportCountsFollowWrites(t *testing.T) {
	t.Parallel()
	pool := seeded(t)
	checkCounts(t, pool, "after seed")
	// Contract 1 has no process in the seed; contracts 2 and 3 have some.
	steps := []struct {
		name string
		sql  string
	}{
		{"InsertContract", `INSERT INTO contracts (id, client_id, status, code) VALUES (5000, 1, 'APROBADO', 'CT-A')`},
		{"InsertContractsTwoBuckets", `INSERT INTO contracts (id, client_id, status, code) VALUES
			(5001, 1, 'APROBADO', 'CT-B'), (5002, 1, 'APROBADO', 'CT-D'), (900000, 2, 'APROBADO', 'CT-C')`},
		{"InsertProcessWithoutTasks", `INSERT INTO processes (id, contract_id) VALUES (90000, 5000)`},
		{"InsertSecondProcess", `INSERT INTO processes (id, contract_id) VALUES (90001, 5000)`},
		{"InsertTasks", `INSERT INTO tasks (id, process_id, name, status) VALUES
			(900000, 90000, 'a', 'Pendiente'), (900001, 90000, 'b', 'Pendiente'), (900002, 90001, 'c', 'Pendiente')`},
		{"InsertTaskAlone", `INSERT INTO tasks (id, process_id, name, status) VALUES (900003, 90000, 'd', 'En Curso')`},
		{"InsertTasksSeveralContracts", `INSERT INTO tasks (process_id, name, status)
			SELECT id, 'e', 'Pendiente' FROM processes WHERE contract_id IN (2, 3, 1500, 900000)`},
		{"UpdateTaskInPlace", `UPDATE tasks SET status = 'Cancelado' WHERE id = 900000`},
		{"MoveTaskToOtherContract", `UPDATE tasks SET process_id = (SELECT min(id) FROM processes WHERE contract_id = 2) WHERE id = 900001`},
		{"MoveLastTaskOutOfProcess", `UPDATE tasks SET process_id = 90000 WHERE id = 900002`},
		{"MoveTasksAcrossBuckets", `UPDATE tasks SET process_id = 90001 WHERE process_id IN (SELECT id FROM processes WHERE contract_id = 1500)`},
		{"MoveProcessToContractWithout", `UPDATE processes SET contract_id = 1 WHERE id = 90001`},
		{"MoveProcessesAcrossBuckets", `UPDATE processes SET contract_id = 900000 WHERE contract_id = 3`},
		{"MoveOnlyProcessAway", `UPDATE processes SET contract_id = 5001 WHERE contract_id = 1`},
		{"UpdateContractInPlace", `UPDATE contracts SET status = 'TERMINADO' WHERE id IN (4, 5, 1100)`},
		{"RenumberContractAcrossBuckets", `UPDATE contracts SET id = 2000000 WHERE id = 5002`},
		{"DeleteTask", `DELETE FROM tasks WHERE id = 900003`},
		{"DeleteAllTasksOfProcess", `DELETE FROM tasks WHERE process_id = 90000`},
		{"DeleteProcessWithTasks", `DELETE FROM processes WHERE id = (SELECT min(id) FROM processes WHERE contract_id = 2)`},
		{"DeleteProcessesSeveralContracts", `DELETE FROM processes WHERE contract_id IN (6, 7, 1600)`},
		{"DeleteContractWithProcesses", `DELETE FROM contracts WHERE id = 8`},
		{"DeleteContractWithoutProcesses", `DELETE FROM contracts WHERE id = 5001`},
		{"DeleteContractsAcrossBuckets", `DELETE FROM contracts WHERE id BETWEEN 1000 AND 1100 OR id = 900000`},
		{"NoOpUpdate", `UPDATE tasks SET progress = progress WHERE false`},
		{"TruncateTasks", `TRUNCATE tasks`},
		{"InsertAfterTruncate", `INSERT INTO tasks (process_id, name, status) SELECT id, 'f', 'Pendiente' FROM processes WHERE id % 3 = 0`},
		{"TruncateProcesses", `TRUNCATE processes CASCADE`},
		{"TruncateContracts", `TRUNCATE contracts CASCADE`},
		{"InsertIntoEmpty", `INSERT INTO contracts (id, client_id, status, code) VALUES (1, 1, 'APROBADO', 'CT-Z')`},
	}
	ctx := context.Background()
	for _, s := range steps {
		tag, err := pool.Exec(ctx, s.sql)
		if err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		if tag.RowsAffected() == 0 && s.name != "NoOpUpdate" && s.name[:8] != "Truncate" {
			t.Fatalf("%s changed no rows; the step tests nothing", s.name)
		}
		checkCounts(t, pool, s.name)
	}
	if got := queryInt(t, pool, "SELECT coalesce(sum(rows), 0) FROM report_bucket_rows"); got != 1 {
		t.Errorf("after the last step the counters hold %d rows, want 1", got)
	}
}

// TestReportCountsInTransaction checks writes that add and remove rows
// within one transaction, and one that is rolled back.
func TestReportCountsInTransaction(t *testing.T) {
	t.Parallel()
	pool := seeded(t)
	ctx := context.Background()
	err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		for _, q := range []string{
			`INSERT INTO contracts (id, client_id, status, code) VALUES (7000, 1, 'APROBADO', 'T')`,
			`INSERT INTO processes (id, contract_id) VALUES (70000, 7000), (70001, 7000)`,
			`INSERT INTO tasks (process_id, name, status) SELECT 70000, 'x', 'Pendiente' FROM generate_series(1, 5)`,
			`DELETE FROM processes WHERE id = 70001`,
			`UPDATE tasks SET process_id = 70000 WHERE process_id IN (SELECT id FROM processes WHERE contract_id = 10)`,
		} {
			if _, err := tx.Exec(ctx, q); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	checkCounts(t, pool, "committed")
	tx, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, `DELETE FROM contracts WHERE id < 100`); err != nil {
		t.Fatal(err)
	}
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	checkCounts(t, pool, "rolled back")
}

// TestReportCountsConcurrentWriters has several connections add, move and
// delete tasks at once, each statement in its own transaction, and checks
// that no count is lost. A deadlock PostgreSQL resolves by aborting one
// transaction is an error here: single-statement writers must not
// deadlock on the counters.
func TestReportCountsConcurrentWriters(t *testing.T) {
	t.Parallel()
	pool := seeded(t)
	ctx := context.Background()
	const writers, statements = 6, 60
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for w := range writers {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(w), 1))
			for range statements {
				// Contracts in both buckets of the seed, listed in either order.
				a, b := 1+r.IntN(pgtest.SeededContracts), 1+r.IntN(pgtest.SeededContracts)
				var sql string
				switch r.IntN(3) {
				case 0:
					sql = fmt.Sprintf(`INSERT INTO tasks (process_id, name, status)
						SELECT id, 'w', 'Pendiente' FROM processes WHERE contract_id IN (%d, %d)`, a, b)
				case 1:
					sql = fmt.Sprintf(`UPDATE tasks SET process_id = (SELECT min(id) FROM processes WHERE contract_id = %d)
						WHERE id IN (SELECT t.id FROM tasks t JOIN processes p ON p.id = t.process_id WHERE p.contract_id = %d LIMIT 2)
						AND EXISTS (SELECT 1 FROM processes WHERE contract_id = %d)`, a, b, a)
				default:
					sql = fmt.Sprintf(`DELETE FROM tasks WHERE id IN (SELECT t.id FROM tasks t JOIN processes p ON p.id = t.process_id
						WHERE p.contract_id IN (%d, %d) LIMIT 1)`, b, a)
				}
				if _, err := pool.Exec(ctx, sql); err != nil {
					var pgErr *pgconn.PgError
					if errors.As(err, &pgErr) {
						err = fmt.Errorf("SQLSTATE %s: %w", pgErr.Code, err)
					}
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	checkCounts(t, pool, "after concurrent writers")
}
