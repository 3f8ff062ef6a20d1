package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/informe/informe/internal/pgserver/pgtest"
)

// countsSeeds returns the seeds the random tests run: defaults, or the one
// INFORME_COUNTS_SEED gives (a number, or "random" for one taken from the
// clock). Each run logs its seed, so that a failure can be replayed.
func countsSeeds(t *testing.T, defaults ...uint64) []uint64 {
	t.Helper()
	switch s := os.Getenv("INFORME_COUNTS_SEED"); s {
	case "":
		return defaults
	case "random":
		return []uint64{uint64(time.Now().UnixNano())}
	default:
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("INFORME_COUNTS_SEED=%q: want an unsigned integer or random", s)
		}
		return []uint64{n}
	}
}

const (
	randomOps     = 600 // operations of TestReportCountsRandomWrites, per seed
	randomWriters = 4   // writers of TestReportCountsRandomConcurrentWriters
	randomEach    = 150 // operations per writer
	// Contract ids span five buckets of report_bucket_rows (1024 ids), and
	// a few below 0.
	maxContractID = 5 * 1024
)

// randomDB returns an empty migrated database with the one client and
// service every random contract refers to.
func randomDB(t *testing.T) *pgxpool.Pool {
	t.Helper()
	pool := pgtest.New(t)
	exec(t, pool, `INSERT INTO benefit_centers (id, name) VALUES (1, 'Centro');
		INSERT INTO services (id, name, cost, benefit_center_id) VALUES (1, 'Servicio', 1000, 1);
		INSERT INTO clients (id, rut, first_name, last_name) VALUES (1, '12.345.678-5', 'Ana', 'Soto')`)
	return pool
}

// A writer runs random operations in one transaction, keeping the SQL it
// sent so that a failure can show it.
type writer struct {
	ctx context.Context
	r   *rand.Rand
	tx  pgx.Tx
	log []string
}

func (w *writer) exec(format string, args ...any) error {
	sql := fmt.Sprintf(format, args...)
	w.log = append(w.log, sql)
	_, err := w.tx.Exec(w.ctx, sql)
	return err
}

// insertReturning runs sql, an INSERT ... RETURNING id of one row.
func (w *writer) insertReturning(format string, args ...any) (int64, error) {
	sql := fmt.Sprintf(format, args...)
	w.log = append(w.log, sql)
	var id int64
	err := w.tx.QueryRow(w.ctx, sql).Scan(&id)
	return id, err
}

// ids returns the ids sql selects, in order.
func (w *writer) ids(sql string) ([]int64, error) {
	rows, err := w.tx.Query(w.ctx, sql)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[int64])
}

// pick returns a random id of those sql selects, and false when there are
// none.
func (w *writer) pick(sql string) (int64, bool, error) {
	ids, err := w.ids(sql)
	if err != nil || len(ids) == 0 {
		return 0, false, err
	}
	return ids[w.r.IntN(len(ids))], true, nil
}

const (
	allContracts = "SELECT id FROM contracts ORDER BY id"
	allProcesses = "SELECT id FROM processes ORDER BY id"
	allTasks     = "SELECT id FROM tasks ORDER BY id"
)

// contractID returns a random contract id, often next to a bucket's edge,
// now and then at or below 0 (the schema allows it).
func (w *writer) contractID() int64 {
	switch w.r.IntN(12) {
	case 0, 1, 2:
		return int64(1+w.r.IntN(maxContractID/1024))*1024 + int64(w.r.IntN(3)) - 1
	case 3:
		return []int64{-2049, -1025, -1024, -1023, -5, -1, 0}[w.r.IntN(7)]
	}
	return 1 + w.r.Int64N(maxContractID)
}

// newContractID returns a contract id not in use, as far as the
// transaction can see.
func (w *writer) newContractID() (int64, error) {
	used, err := w.ids(allContracts)
	if err != nil {
		return 0, err
	}
	for {
		if id := w.contractID(); !slices.Contains(used, id) {
			return id, nil
		}
	}
}

// newKey returns an id for a renumbered process or task: far above what the
// identity columns hand out, and unlikely to be in use.
func (w *writer) newKey() int64 { return 1_000_000_000 + w.r.Int64N(1_000_000_000) }

func (w *writer) insertContract(id int64) error {
	return w.exec(`INSERT INTO contracts (id, client_id, service_id, status, code)
		VALUES (%d, 1, 1, 'APROBADO', 'CT-%d') ON CONFLICT (id) DO NOTHING`, id, id)
}

func (w *writer) insertTasks(process int64, n int) error {
	if n == 0 {
		return nil
	}
	return w.exec(`INSERT INTO tasks (process_id, name, status)
		SELECT %d, 'tarea', 'Pendiente' FROM generate_series(1, %d)`, process, n)
}

// op is one kind of random operation.
type op struct {
	name   string
	weight int
	run    func(w *writer) error
}

// ops are the random operations, with how often each is picked. Ids are
// picked among the rows the transaction sees.
var ops = []op{
	{"InsertContract", 6, func(w *writer) error {
		id, err := w.newContractID()
		if err != nil {
			return err
		}
		if err := w.insertContract(id); err != nil {
			return err
		}
		for range w.r.IntN(4) {
			p, err := w.insertReturning(`INSERT INTO processes (contract_id) VALUES (%d) RETURNING id`, id)
			if err != nil {
				return err
			}
			if err := w.insertTasks(p, w.r.IntN(4)); err != nil {
				return err
			}
		}
		return nil
	}},
	{"InsertContractOneStatement", 3, func(w *writer) error {
		// Contract, processes and tasks in one statement: the three
		// tables' triggers fire together at its end.
		id, err := w.newContractID()
		if err != nil {
			return err
		}
		return w.exec(`WITH c AS (
				INSERT INTO contracts (id, client_id, status, code) VALUES (%d, 1, 'APROBADO', 'CT-%d')
				ON CONFLICT (id) DO NOTHING RETURNING id
			), p AS (
				INSERT INTO processes (contract_id) SELECT c.id FROM c, generate_series(1, %d) RETURNING id
			)
			INSERT INTO tasks (process_id, name, status)
			SELECT p.id, 'tarea', 'Pendiente' FROM p, generate_series(1, (p.id %% %d)::int)`,
			id, id, w.r.IntN(4), 1+w.r.IntN(4))
	}},
	{"InsertProcess", 6, func(w *writer) error {
		c, ok, err := w.pick(allContracts)
		if !ok || err != nil {
			return err
		}
		p, err := w.insertReturning(`INSERT INTO processes (contract_id) VALUES (%d) RETURNING id`, c)
		if err != nil {
			return err
		}
		return w.insertTasks(p, w.r.IntN(4))
	}},
	{"InsertTasks", 8, func(w *writer) error {
		p, ok, err := w.pick(allProcesses)
		if !ok || err != nil {
			return err
		}
		return w.insertTasks(p, 1+w.r.IntN(3))
	}},
	{"InsertTasksManyContracts", 2, func(w *writer) error {
		a := w.contractID()
		return w.exec(`INSERT INTO tasks (process_id, name, status)
			SELECT id, 'masiva', 'Pendiente' FROM processes WHERE contract_id BETWEEN %d AND %d`, a, a+int64(w.r.IntN(1500)))
	}},
	{"DeleteTask", 6, func(w *writer) error {
		t, ok, err := w.pick(allTasks)
		if !ok || err != nil {
			return err
		}
		return w.exec(`DELETE FROM tasks WHERE id = %d`, t)
	}},
	{"DeleteTasksMany", 2, func(w *writer) error {
		m := 3 + w.r.IntN(8)
		return w.exec(`DELETE FROM tasks WHERE id %% %d = %d`, m, w.r.IntN(m))
	}},
	{"DeleteProcess", 4, func(w *writer) error {
		p, ok, err := w.pick(allProcesses)
		if !ok || err != nil {
			return err
		}
		return w.exec(`DELETE FROM processes WHERE id = %d`, p) // its tasks go with it (ON DELETE CASCADE)
	}},
	{"DeleteContract", 3, func(w *writer) error {
		c, ok, err := w.pick(allContracts)
		if !ok || err != nil {
			return err
		}
		return w.exec(`DELETE FROM contracts WHERE id = %d`, c) // processes and tasks cascade
	}},
	{"DeleteContractsRange", 1, func(w *writer) error {
		a := w.contractID()
		return w.exec(`DELETE FROM contracts WHERE id BETWEEN %d AND %d`, a, a+int64(w.r.IntN(200)))
	}},
	{"DeleteAndRecreateContract", 2, func(w *writer) error {
		c, ok, err := w.pick(allContracts)
		if !ok || err != nil {
			return err
		}
		if err := w.exec(`DELETE FROM contracts WHERE id = %d`, c); err != nil {
			return err
		}
		if err := w.insertContract(c); err != nil {
			return err
		}
		return w.exec(`INSERT INTO processes (contract_id) SELECT %d FROM generate_series(1, %d)`, c, w.r.IntN(3))
	}},
	{"MoveProcess", 6, func(w *writer) error {
		p, ok, err := w.pick(allProcesses)
		if !ok || err != nil {
			return err
		}
		c, _, err := w.pick(allContracts)
		if err != nil {
			return err
		}
		return w.exec(`UPDATE processes SET contract_id = %d WHERE id = %d`, c, p)
	}},
	{"MoveProcessesOfTwoContracts", 2, func(w *writer) error {
		a, ok, err := w.pick(allContracts)
		if !ok || err != nil {
			return err
		}
		// Every pick's error is returned: a serialization failure or a
		// deadlock aborts the transaction, and the next statement's error
		// (25P02) would hide the one that can be retried.
		b, _, err := w.pick(allContracts)
		if err != nil {
			return err
		}
		to, _, err := w.pick(allContracts)
		if err != nil {
			return err
		}
		return w.exec(`UPDATE processes SET contract_id = %d WHERE contract_id IN (%d, %d)`, to, a, b)
	}},
	{"SwapProcesses", 2, func(w *writer) error {
		a, ok, err := w.pick(allContracts)
		if !ok || err != nil {
			return err
		}
		b, _, err := w.pick(allContracts)
		if err != nil {
			return err
		}
		return w.exec(`UPDATE processes SET contract_id = CASE contract_id WHEN %d THEN %d ELSE %d END
			WHERE contract_id IN (%d, %d)`, a, b, a, a, b)
	}},
	{"MoveProcessToSameContract", 1, func(w *writer) error {
		p, ok, err := w.pick(allProcesses)
		if !ok || err != nil {
			return err
		}
		return w.exec(`UPDATE processes SET contract_id = contract_id WHERE id = %d`, p)
	}},
	{"MoveTask", 6, func(w *writer) error {
		t, ok, err := w.pick(allTasks)
		if !ok || err != nil {
			return err
		}
		p, _, err := w.pick(allProcesses)
		if err != nil {
			return err
		}
		return w.exec(`UPDATE tasks SET process_id = %d WHERE id = %d`, p, t)
	}},
	{"MoveTasksOfContract", 2, func(w *writer) error {
		c, ok, err := w.pick(allContracts)
		if !ok || err != nil {
			return err
		}
		p, _, err := w.pick(allProcesses)
		if err != nil {
			return err
		}
		return w.exec(`UPDATE tasks SET process_id = %d
			WHERE process_id IN (SELECT id FROM processes WHERE contract_id = %d)`, p, c)
	}},
	{"ScatterTasks", 2, func(w *writer) error {
		ps, err := w.ids(allProcesses)
		if err != nil || len(ps) == 0 {
			return err
		}
		to := make([]string, 3)
		for i := range to {
			to[i] = strconv.FormatInt(ps[w.r.IntN(len(ps))], 10)
		}
		m := 2 + w.r.IntN(5)
		return w.exec(`UPDATE tasks SET process_id = (ARRAY[%s])[1 + id %% 3] WHERE id %% %d = %d`,
			strings.Join(to, ", "), m, w.r.IntN(m))
	}},
	{"MovesInOneStatement", 2, func(w *writer) error {
		// A task delete, a process move and a task insert in one
		// statement.
		p1, ok, err := w.pick(allProcesses)
		if !ok || err != nil {
			return err
		}
		p2, _, err := w.pick(allProcesses)
		if err != nil {
			return err
		}
		c, _, err := w.pick(allContracts)
		if err != nil {
			return err
		}
		return w.exec(`WITH d AS (DELETE FROM tasks WHERE process_id = %d),
			m AS (UPDATE processes SET contract_id = %d WHERE id = %d)
			INSERT INTO tasks (process_id, name, status) VALUES (%d, 'cte', 'Pendiente')`, p1, c, p2, p2)
	}},
	{"RenumberContract", 2, func(w *writer) error {
		// processes.contract_id has no ON UPDATE CASCADE: only a contract
		// without processes can change its id.
		c, ok, err := w.pick(`SELECT id FROM contracts c
			WHERE NOT EXISTS (SELECT 1 FROM processes p WHERE p.contract_id = c.id) ORDER BY id`)
		if !ok || err != nil {
			return err
		}
		to, err := w.newContractID()
		if err != nil {
			return err
		}
		return w.exec(`UPDATE contracts SET id = %d WHERE id = %d`, to, c)
	}},
	{"RenumberProcess", 1, func(w *writer) error {
		p, ok, err := w.pick(`SELECT id FROM processes p
			WHERE NOT EXISTS (SELECT 1 FROM tasks t WHERE t.process_id = p.id) ORDER BY id`)
		if !ok || err != nil {
			return err
		}
		return w.exec(`UPDATE processes SET id = %d WHERE id = %d`, w.newKey(), p)
	}},
	{"RenumberTask", 1, func(w *writer) error {
		t, ok, err := w.pick(allTasks)
		if !ok || err != nil {
			return err
		}
		return w.exec(`UPDATE tasks SET id = %d WHERE id = %d`, w.newKey(), t)
	}},
	{"EditNonKeyColumns", 3, func(w *writer) error {
		m := 2 + w.r.IntN(4)
		k := w.r.IntN(m)
		switch w.r.IntN(3) {
		case 0:
			return w.exec(`UPDATE tasks SET status = 'Terminado', progress = 100 WHERE id %% %d = %d`, m, k)
		case 1:
			return w.exec(`UPDATE processes SET caption = 'editada' WHERE id %% %d = %d`, m, k)
		default:
			return w.exec(`UPDATE contracts SET status = 'TERMINADO' WHERE id %% %d = %d`, m, k)
		}
	}},
	// The values report_task_keys holds beside the keys: a task's status
	// ('' too, which the typed view shows as NULL), end date and execution
	// date, one task or several.
	{"EditFilteredValues", 4, func(w *writer) error {
		status := []string{"Pendiente", "Terminada", "", "En curso"}[w.r.IntN(4)]
		day := w.r.IntN(60)
		set := fmt.Sprintf(`status = '%s', end_date = DATE '2026-01-01' + %d,
			execution_date = CASE WHEN id %%%% 3 = 0 THEN NULL ELSE TIMESTAMPTZ '2026-01-01 10:00:00+00' + interval '1 hour' * (id %%%% 50) END`, // %%%% for exec's format
			status, day)
		if w.r.IntN(2) == 0 {
			t, ok, err := w.pick(`SELECT id FROM tasks ORDER BY random() LIMIT 1`)
			if !ok || err != nil {
				return err
			}
			return w.exec(`UPDATE tasks SET `+set+` WHERE id = %d`, t)
		}
		m := 2 + w.r.IntN(4)
		return w.exec(`UPDATE tasks SET `+set+` WHERE id %% %d = %d`, m, w.r.IntN(m))
	}},
}

// truncateTasks is run once per test, at a random point.
var truncateTasks = op{"TruncateTasks", 0, func(w *writer) error { return w.exec(`TRUNCATE tasks`) }}

// randomOp returns one of ops, picked by weight.
func randomOp(r *rand.Rand) op {
	total := 0
	for _, o := range ops {
		total += o.weight
	}
	n := r.IntN(total)
	for _, o := range ops {
		if n < o.weight {
			return o
		}
		n -= o.weight
	}
	panic("unreachable")
}

// randomIsolation returns READ COMMITTED most of the time, else REPEATABLE
// READ or SERIALIZABLE.
func randomIsolation(r *rand.Rand) pgx.TxIsoLevel {
	switch n := r.IntN(10); {
	case n < 6:
		return pgx.ReadCommitted
	case n < 8:
		return pgx.RepeatableRead
	default:
		return pgx.Serializable
	}
}

// transaction runs the operations next returns in one transaction of a
// random isolation level, some of them inside a savepoint that is rolled
// back or released, and commits or, at random, rolls back. It returns the
// SQL it sent, whether it committed, and the first error.
func transaction(ctx context.Context, pool *pgxpool.Pool, r *rand.Rand, next []op) (log []string, committed bool, err error) {
	iso := randomIsolation(r)
	tx, err := pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: iso})
	if err != nil {
		return nil, false, err
	}
	defer tx.Rollback(ctx)
	w := &writer{ctx: ctx, r: r, tx: tx, log: []string{"BEGIN ISOLATION LEVEL " + string(iso)}}
	for _, o := range next {
		savepoint := r.IntN(8) == 0
		if savepoint {
			if err := w.exec("SAVEPOINT s"); err != nil {
				return w.log, false, err
			}
		}
		w.log = append(w.log, "-- "+o.name)
		if err := o.run(w); err != nil {
			return w.log, false, fmt.Errorf("%s: %w", o.name, err)
		}
		if savepoint {
			end := "RELEASE SAVEPOINT s"
			if r.IntN(2) == 0 {
				end = "ROLLBACK TO SAVEPOINT s"
			}
			if err := w.exec("%s", end); err != nil {
				return w.log, false, err
			}
		}
	}
	if r.IntN(10) == 0 {
		w.log = append(w.log, "ROLLBACK")
		return w.log, false, tx.Rollback(ctx)
	}
	w.log = append(w.log, "COMMIT")
	return w.log, true, tx.Commit(ctx)
}

// countsMismatch compares, in one REPEATABLE READ snapshot, the counts
// kept in report_contract_rows and report_bucket_rows, report_rows_total()
// and report_contract_at() with the general_report view itself, and the
// keys of report_task_keys and report_process_keys (keysMismatch). It
// returns a description of the first disagreements, or "" when there are
// none.
func countsMismatch(ctx context.Context, pool *pgxpool.Pool, r *rand.Rand) (string, error) {
	tx, err := pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return "", err
	}
	defer tx.Rollback(ctx)
	// TRUNCATE is not MVCC-safe: a snapshot taken before one commits sees
	// the truncated table empty. Locking the tables before the snapshot is
	// taken (LOCK takes none) keeps a TRUNCATE out of it.
	// (report_task_keys and report_process_keys are never truncated.)
	if _, err := tx.Exec(ctx, `LOCK TABLE contracts, processes, tasks, report_contract_rows, report_bucket_rows
		IN ACCESS SHARE MODE`); err != nil {
		return "", err
	}
	bad, err := keysMismatch(ctx, tx)
	if err != nil {
		return "", err
	}
	for _, c := range []struct{ what, sql string }{
		{"report_contract_rows", `
			SELECT coalesce(v.id, r.contract_id), coalesce(v.n, 0), coalesce(r.rows, 0)
			FROM (SELECT key_contract_id AS id, count(*) AS n FROM general_report GROUP BY 1) v
			FULL JOIN report_contract_rows r ON r.contract_id = v.id
			WHERE v.n IS DISTINCT FROM r.rows ORDER BY 1 LIMIT 5`},
		{"report_bucket_rows", `
			SELECT coalesce(v.bucket, b.bucket), coalesce(v.n, 0), coalesce(b.rows, 0)
			FROM (SELECT floor(key_contract_id::numeric / report_bucket_width())::bigint AS bucket, count(*) AS n
			      FROM general_report GROUP BY 1) v
			FULL JOIN report_bucket_rows b ON b.bucket = v.bucket
			WHERE coalesce(v.n, 0) <> coalesce(b.rows, 0) ORDER BY 1 LIMIT 5`},
		{"report_rows_total()", `
			SELECT 0, (SELECT count(*) FROM general_report), report_rows_total()
			WHERE (SELECT count(*) FROM general_report) <> report_rows_total()`},
	} {
		rows, err := tx.Query(ctx, c.sql)
		if err != nil {
			return "", err
		}
		var key, view, kept int64
		_, err = pgx.ForEachRow(rows, []any{&key, &view, &kept}, func() error {
			bad = append(bad, fmt.Sprintf("%s[%d] = %d, the view has %d rows", c.what, key, kept, view))
			return nil
		})
		if err != nil {
			return "", err
		}
	}

	// report_contract_at for the first and last rows, a few random ones and
	// the first and last of a random contract, against row_number() over the
	// view's order; past the end it returns no row.
	var total int64
	if err := tx.QueryRow(ctx, "SELECT count(*) FROM general_report").Scan(&total); err != nil {
		return "", err
	}
	at := []int64{total}
	if total > 0 {
		at = append(at, 0, total-1, r.Int64N(total), r.Int64N(total), r.Int64N(total))
		var contracts, first, n int64
		if err := tx.QueryRow(ctx, "SELECT count(DISTINCT key_contract_id) FROM general_report").Scan(&contracts); err != nil {
			return "", err
		}
		err := tx.QueryRow(ctx, `SELECT first, n FROM (
				SELECT row_number() OVER (ORDER BY key_contract_id, key_process_id, key_task_id) - 1 AS first,
				       count(*) OVER (PARTITION BY key_contract_id) AS n,
				       row_number() OVER (PARTITION BY key_contract_id ORDER BY key_process_id, key_task_id) AS k
				FROM general_report) v
			WHERE k = 1 ORDER BY first OFFSET $1 LIMIT 1`, r.Int64N(contracts)).Scan(&first, &n)
		if err != nil {
			return "", err
		}
		at = append(at, first, first+n-1, max(0, first-1))
	}
	for _, row := range at {
		var wantContract, wantFirst, gotContract, gotFirst *int64
		err := tx.QueryRow(ctx, `
			WITH v AS (
				SELECT key_contract_id,
				       row_number() OVER (ORDER BY key_contract_id, key_process_id, key_task_id) - 1 AS rn
				FROM general_report)
			SELECT (SELECT key_contract_id FROM v WHERE rn = $1),
			       (SELECT min(rn) FROM v WHERE key_contract_id = (SELECT key_contract_id FROM v WHERE rn = $1)),
			       (SELECT contract_id FROM report_contract_at($1)),
			       (SELECT first_row FROM report_contract_at($1))`, row).
			Scan(&wantContract, &wantFirst, &gotContract, &gotFirst)
		if err != nil {
			return "", err
		}
		if show(gotContract) != show(wantContract) || show(gotFirst) != show(wantFirst) {
			bad = append(bad, fmt.Sprintf("report_contract_at(%d) = (%s, %s), the view's row %d is contract %s's, its first row %s",
				row, show(gotContract), show(gotFirst), row, show(wantContract), show(wantFirst)))
		}
	}
	return strings.Join(bad, "; "), nil
}

// keysMismatch compares, in tx's snapshot, report_task_keys with the task
// rows of general_report_typed (their keys, status, end date and execution
// date) and report_process_keys with processes. It returns the first
// disagreements.
func keysMismatch(ctx context.Context, tx pgx.Tx) ([]string, error) {
	var bad []string
	var keyed bool // below migration 00011 (going down) there are no keys
	if err := tx.QueryRow(ctx, `SELECT to_regclass('report_task_keys') IS NOT NULL`).Scan(&keyed); err != nil || !keyed {
		return nil, err
	}
	for _, c := range []struct{ what, sql string }{
		{"report_task_keys", `
			SELECT coalesce(v.key_task_id, k.task_id),
			       coalesce(row(v.key_contract_id, v.key_process_id, v.task_status, v.task_end_date, v.execution_date)::text, 'none'),
			       coalesce(row(k.contract_id, k.process_id, k.status, k.end_date, k.execution_date)::text, 'none')
			FROM (SELECT * FROM general_report_typed WHERE key_task_id IS NOT NULL) v
			FULL JOIN report_task_keys k ON k.task_id = v.key_task_id
			WHERE row(v.key_contract_id, v.key_process_id, v.task_status, v.task_end_date, v.execution_date)
			      IS DISTINCT FROM row(k.contract_id, k.process_id, k.status, k.end_date, k.execution_date)
			ORDER BY 1 LIMIT 5`},
		{"report_process_keys", `
			SELECT coalesce(p.id, x.process_id), coalesce(p.contract_id::text, 'none'), coalesce(x.contract_id::text, 'none')
			FROM processes p FULL JOIN report_process_keys x ON x.process_id = p.id
			WHERE p.contract_id IS DISTINCT FROM x.contract_id ORDER BY 1 LIMIT 5`},
	} {
		rows, err := tx.Query(ctx, c.sql)
		if err != nil {
			return nil, err
		}
		var key int64
		var view, kept string
		_, err = pgx.ForEachRow(rows, []any{&key, &view, &kept}, func() error {
			bad = append(bad, fmt.Sprintf("%s[%d] = %s, the tables have %s", c.what, key, kept, view))
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return bad, nil
}

func show(p *int64) string {
	if p == nil {
		return "none"
	}
	return strconv.FormatInt(*p, 10)
}

// TestReportCountsRandomWrites runs randomOps random operations (see ops,
// and one TRUNCATE of tasks) on one connection, one to four to a
// transaction of a random isolation level, some inside savepoints rolled
// back, one transaction in ten rolled back, and after each transaction
// compares every count, the total and the seek with the view. Seeds 1 and
// 2 by default.
func TestReportCountsRandomWrites(t *testing.T) {
	t.Parallel()
	for _, seed := range countsSeeds(t, 1, 2) {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			t.Logf("INFORME_COUNTS_SEED=%d reruns this", seed)
			pool := randomDB(t)
			ctx := context.Background()
			r := rand.New(rand.NewPCG(seed, 0x7265706f7274)) // "report"
			truncateAt := randomOps/3 + r.IntN(randomOps/3)
			done, txs, rolledBack := 0, 0, 0
			for done < randomOps {
				next := make([]op, 1+r.IntN(4))
				for i := range next {
					if done+i == truncateAt {
						next[i] = truncateTasks
					} else {
						next[i] = randomOp(r)
					}
				}
				log, committed, err := transaction(ctx, pool, r, next)
				txs++
				if err != nil {
					t.Fatalf("seed %d, transaction %d: %v\n%s", seed, txs, err, strings.Join(log, ";\n"))
				}
				if !committed {
					rolledBack++
				}
				done += len(next)
				bad, err := countsMismatch(ctx, pool, r)
				if err != nil {
					t.Fatalf("seed %d, transaction %d: check: %v", seed, txs, err)
				}
				if bad != "" {
					t.Fatalf("seed %d: after transaction %d: %s\n%s", seed, txs, bad, strings.Join(log, ";\n"))
				}
			}
			t.Logf("%d operations in %d transactions (%d rolled back); %d contracts, %d report rows at the end",
				done, txs, rolledBack, queryInt(t, pool, "SELECT count(*) FROM contracts"),
				queryInt(t, pool, "SELECT report_rows_total()"))
		})
	}
}

// code returns err's SQLSTATE, or "".
func code(err error) string {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return pgErr.Code
	}
	return ""
}

// retryable reports whether err is a deadlock or a serialization failure,
// after which a writer tries the transaction again.
func retryable(err error) bool { c := code(err); return c == "40P01" || c == "40001" }

// conflict reports whether err is a foreign-key or unique violation: a
// writer picked a row another writer deleted or an id another one took.
func conflict(err error) bool { c := code(err); return c == "23503" || c == "23505" }

// TestReportCountsRandomConcurrentWriters has four writers run random
// operations at once, in transactions of random isolation levels, retrying
// deadlocks and serialization failures, while a reader checks that every
// REPEATABLE READ snapshot sees counts that agree with its rows; at the end
// the counts must agree with the view.
func TestReportCountsRandomConcurrentWriters(t *testing.T) {
	t.Parallel()
	for _, seed := range countsSeeds(t, 1) {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			t.Logf("INFORME_COUNTS_SEED=%d reruns these operations (not their interleaving)", seed)
			pool := randomDB(t)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			// Writers retry deadlocks; find them sooner than the default 1s.
			cfg := pool.Config().Copy()
			cfg.ConnConfig.RuntimeParams["deadlock_timeout"] = "20ms"
			pool, err := pgxpool.NewWithConfig(ctx, cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer pool.Close()
			// Start from a few contracts in every bucket.
			setup := rand.New(rand.NewPCG(seed, 0))
			for range 40 {
				if _, _, err := transaction(ctx, pool, setup, []op{ops[0]}); err != nil {
					t.Fatal(err)
				}
			}
			var deadlocks, serialization, conflicts, committed atomic.Int64
			var mu sync.Mutex
			var failures []string
			fail := func(format string, args ...any) {
				mu.Lock()
				defer mu.Unlock()
				failures = append(failures, fmt.Sprintf(format, args...))
			}
			var writers sync.WaitGroup
			for i := range randomWriters {
				writers.Go(func() {
					r := rand.New(rand.NewPCG(seed, uint64(i+1)))
					truncateAt := -1
					if i == 0 {
						truncateAt = r.IntN(randomEach)
					}
					for done := 0; done < randomEach; {
						next := make([]op, 1+r.IntN(3))
						for k := range next {
							if done+k == truncateAt {
								next[k] = truncateTasks
							} else {
								next[k] = randomOp(r)
							}
						}
						for attempt := 1; ; attempt++ {
							log, ok, err := transaction(ctx, pool, r, next)
							switch {
							case err == nil:
								if ok {
									committed.Add(1)
								}
							case retryable(err) && attempt < 100:
								if code(err) == "40P01" {
									deadlocks.Add(1)
								} else {
									serialization.Add(1)
								}
								continue
							case conflict(err):
								conflicts.Add(1)
							default:
								fail("writer %d: %v\n%s", i, err, strings.Join(log, ";\n"))
								return
							}
							break
						}
						done += len(next)
					}
				})
			}
			readerDone := make(chan struct{})
			checks := 0
			go func() {
				defer close(readerDone)
				r := rand.New(rand.NewPCG(seed, 0xc0ffee))
				for ctx.Err() == nil {
					bad, err := countsMismatch(ctx, pool, r)
					switch {
					case ctx.Err() != nil:
						return
					case err != nil:
						fail("reader: %v", err)
						return
					case bad != "":
						fail("reader: a snapshot's counts disagree with its rows: %s", bad)
					}
					checks++
				}
			}()
			writers.Wait()
			cancel()
			<-readerDone
			for _, f := range failures {
				t.Error(f)
			}
			bad, err := countsMismatch(context.Background(), pool, rand.New(rand.NewPCG(seed, 1<<32)))
			if err != nil {
				t.Fatal(err)
			}
			if bad != "" {
				t.Errorf("after the writers: %s", bad)
			}
			t.Logf("%d operations by %d writers: %d transactions committed, retried %d after a deadlock and %d after a serialization failure, %d given up on a foreign-key or unique conflict; %d snapshots checked meanwhile",
				randomWriters*randomEach, randomWriters, committed.Load(), deadlocks.Load(), serialization.Load(), conflicts.Load(), checks)
		})
	}
}
