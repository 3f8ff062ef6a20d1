package postgres_test

import (
	"context"
	"errors"
	"reflect"
	"strconv"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/informe/informe/internal/failure"
	"github.com/informe/informe/internal/pgserver/pgtest"
	"github.com/informe/informe/internal/postgres"
)

// TestStatementTimeout checks that WithStatementTimeout bounds the
// snapshot's statements with a transaction-level setting, answered as
// failure.Unavailable, and leaves the connection's own setting alone.
func TestStatementTimeout(t *testing.T) {
	t.Parallel()
	pool := pgtest.New(t)
	ctx := postgres.WithStatementTimeout(context.Background(), 50*time.Millisecond)
	snap, err := postgres.Begin(ctx, pool)
	if err != nil {
		t.Fatal(err)
	}
	var setting string
	if err := snap.QueryRow("SHOW statement_timeout", nil, &setting); err != nil || setting != "50ms" {
		t.Fatalf("statement_timeout = %q, %v; want 50ms", setting, err)
	}
	var x any
	err = snap.QueryRow("SELECT pg_sleep(5)", nil, &x)
	if failure.CodeOf(err) != failure.Unavailable {
		t.Fatalf("err = %v, want failure.Unavailable", err)
	}
	snap.Close()
	snap, err = postgres.Begin(context.Background(), pool)
	if err != nil {
		t.Fatal(err)
	}
	defer snap.Close()
	if err := snap.QueryRow("SHOW statement_timeout", nil, &setting); err != nil || setting != "0" {
		t.Fatalf("statement_timeout after = %q, %v; want the server's 0", setting, err)
	}
}

// TestBeginWithPrelude checks that a prelude runs before its snapshot, in
// a transaction of its own that has committed (another connection sees
// its row while the snapshot is open, and the snapshot, begun after it,
// sees it too), that the snapshot is REPEATABLE READ, READ ONLY as
// Begin's, that a failed prelude leaves the snapshot working, and that a
// prelude is run once and heard of once.
func TestBeginWithPrelude(t *testing.T) {
	t.Parallel()
	pool := pgtest.New(t)
	ctx := context.Background()
	if _, err := pool.Exec(ctx, "CREATE TABLE preludes (id bigint GENERATED ALWAYS AS IDENTITY, note text NOT NULL)"); err != nil {
		t.Fatal(err)
	}
	type heard struct {
		value string
		err   error
	}
	var got []heard
	pre := &postgres.Prelude{SQL: "INSERT INTO preludes (note) VALUES ($1) RETURNING id", Args: [][]byte{[]byte("before")},
		Done: func(v []byte, err error) { got = append(got, heard{string(v), err}) }}
	snap, err := postgres.BeginWith(ctx, pool, pre)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].err != nil || got[0].value != "1" {
		t.Fatalf("Done heard %+v; want once, id 1", got)
	}
	var n int
	if err := pool.QueryRow(ctx, "SELECT count(*) FROM preludes WHERE note = 'before'").Scan(&n); err != nil || n != 1 {
		t.Fatalf("another connection counts %d, %v; want the prelude's row, committed", n, err)
	}
	var iso, ro string
	if err := snap.QueryRow("SELECT current_setting('transaction_isolation'), current_setting('transaction_read_only')", nil, &iso, &ro); err != nil ||
		iso != "repeatable read" || ro != "on" {
		t.Fatalf("snapshot is %q, read only %q, %v", iso, ro, err)
	}
	if err := snap.QueryRow("SELECT count(*) FROM preludes", nil, &n); err != nil || n != 1 {
		t.Fatalf("the snapshot counts %d, %v; want the prelude's row", n, err)
	}
	snap.Close()

	// Run, a prelude is not run again, nor heard of again.
	pre.Abandon()
	snap, err = postgres.BeginWith(ctx, pool, pre)
	if err != nil {
		t.Fatal(err)
	}
	snap.Close()
	if err := pool.QueryRow(ctx, "SELECT count(*) FROM preludes").Scan(&n); err != nil || n != 1 || len(got) != 1 {
		t.Fatalf("%d rows, Done heard %d times; want the prelude run and heard of once", n, len(got))
	}

	// A failed prelude is heard of; the snapshot is as good.
	got = nil
	bad := &postgres.Prelude{SQL: "INSERT INTO preludes (note) VALUES ($1) RETURNING id", Args: [][]byte{nil},
		Done: func(v []byte, err error) { got = append(got, heard{string(v), err}) }}
	snap, err = postgres.BeginWith(ctx, pool, bad)
	if err != nil {
		t.Fatal(err)
	}
	var pe *pgconn.PgError
	if len(got) != 1 || !errors.As(got[0].err, &pe) || pe.Code != "23502" {
		t.Fatalf("Done heard %+v; want the not-null violation", got)
	}
	if err := snap.QueryRow("SELECT count(*) FROM preludes", nil, &n); err != nil || n != 1 {
		t.Fatalf("after a failed prelude the snapshot counts %d, %v", n, err)
	}
	snap.Close()

	// A prelude no snapshot ran is abandoned, once.
	got = nil
	idle := &postgres.Prelude{SQL: "SELECT 1", Done: func(v []byte, err error) { got = append(got, heard{string(v), err}) }}
	idle.Abandon()
	idle.Abandon()
	if len(got) != 1 || !errors.Is(got[0].err, postgres.ErrPreludeNotRun) {
		t.Fatalf("abandoned, Done heard %+v; want ErrPreludeNotRun once", got)
	}
	if s := pool.Stat(); s.AcquiredConns() != 0 {
		t.Fatalf("%d connections still acquired", s.AcquiredConns())
	}
}

// TestQueryInBatches checks that a query read in batches through a
// cursor (WithBatches) gives the rows, the columns and the values' formats
// of the same query read in one statement, with its parameters, whatever
// the batch's size against the rows' number (fewer, a multiple, more,
// none), and with pgx's modes that describe statements and that do not.
func TestQueryInBatches(t *testing.T) {
	t.Parallel()
	pool := pgtest.New(t)
	cfg := pool.Config().Copy()
	cfg.ConnConfig.DefaultQueryExecMode = pgx.QueryExecModeExec
	exec, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer exec.Close()
	const sql = `SELECT g, g::numeric / 3 AS third, 'fila ' || g || ' ñandú' AS name,
		CASE WHEN g % 5 = 0 THEN NULL ELSE date '2026-12-01' + g END AS day
		FROM generate_series(1, $1::int) g ORDER BY g DESC`
	read := func(ctx context.Context, pool *pgxpool.Pool, rows int) (fields []pgconn.FieldDescription, values [][]string) {
		t.Helper()
		snap, err := postgres.Begin(ctx, pool)
		if err != nil {
			t.Fatal(err)
		}
		cur, err := snap.Query(sql, []any{rows})
		if err != nil {
			t.Fatal(err)
		}
		defer cur.Close()
		fields = cur.Fields()
		for cur.Next() {
			var row []string
			for _, v := range cur.Values() {
				if v == nil {
					row = append(row, "NULL")
				} else {
					row = append(row, string(v))
				}
			}
			values = append(values, row)
		}
		if err := cur.Close(); err != nil {
			t.Fatal(err)
		}
		return fields, values
	}
	// The cursor is planned for all its rows, as the one statement is.
	for ctx, want := range map[context.Context]string{context.Background(): "0.1", postgres.WithBatches(context.Background(), 7): "1"} {
		snap, err := postgres.Begin(ctx, pool)
		if err != nil {
			t.Fatal(err)
		}
		var got string
		err = snap.QueryRow("SHOW cursor_tuple_fraction", nil, &got)
		snap.Close()
		if err != nil || got != want {
			t.Errorf("cursor_tuple_fraction = %q, %v; want %q", got, err, want)
		}
	}
	for name, pool := range map[string]*pgxpool.Pool{"described": pool, "exec": exec} {
		for _, rows := range []int{0, 1, 21, 30} {
			wantFields, want := read(context.Background(), pool, rows)
			if len(want) != rows {
				t.Fatalf("%s, %d rows: one statement read %d", name, rows, len(want))
			}
			for _, n := range []int{1, 7, 10, 1000} {
				fields, got := read(postgres.WithBatches(context.Background(), n), pool, rows)
				if !reflect.DeepEqual(fields, wantFields) {
					t.Errorf("%s, %d rows in batches of %d: fields\n%v\nwant\n%v", name, rows, n, fields, wantFields)
				}
				if !reflect.DeepEqual(got, want) {
					t.Errorf("%s, %d rows in batches of %d: rows\n%q\nwant\n%q", name, rows, n, got, want)
				}
			}
		}
	}
}

// TestQueryInBatchesFails checks that an error in a later batch ends the
// rows read in batches with PostgreSQL's error, after the rows before it,
// and leaves the pool's connections serving.
func TestQueryInBatchesFails(t *testing.T) {
	t.Parallel()
	pool := pgtest.New(t)
	ctx := postgres.WithBatches(context.Background(), 256)
	for range 3 { // more than once on the same connections
		snap, err := postgres.Begin(ctx, pool)
		if err != nil {
			t.Fatal(err)
		}
		cur, err := snap.Query("SELECT 1 / (600 - g) FROM generate_series(1, 1000) g", nil)
		if err != nil {
			snap.Close()
			t.Fatal(err)
		}
		rows := 0
		for cur.Next() {
			rows++
		}
		var pgErr *pgconn.PgError
		if err := cur.Err(); !errors.As(err, &pgErr) || pgErr.Code != "22012" {
			t.Errorf("err = %v, want division by zero (22012)", err)
		}
		if rows != 512 {
			t.Errorf("read %d rows before the error, want the first two batches' 512", rows)
		}
		cur.Close()
	}
	if n := pgtest.Int(t, pool, "SELECT count(*) FROM generate_series(1, 3)"); n != 3 {
		t.Fatalf("after the errors, the pool answers %d", n)
	}
}

// BenchmarkQueryInBatches reads the whole typed report of the seeded
// database in one statement and in batches (WithBatches) of 256
// (road.BurstBatch) and 1,024 rows, the values left as they arrive: what a
// burst's read costs its reader alone.
func BenchmarkQueryInBatches(b *testing.B) {
	pool := pgtest.Seeded(b)
	const sql = "SELECT * FROM general_report_typed ORDER BY key_contract_id, key_process_id, key_task_id"
	for _, n := range []int{0, 256, 1024} {
		name := "one statement"
		if n > 0 {
			name = "batches of " + strconv.Itoa(n)
		}
		b.Run(name, func(b *testing.B) {
			ctx := context.Background()
			if n > 0 {
				ctx = postgres.WithBatches(ctx, n)
			}
			var rows int64
			for b.Loop() {
				snap, err := postgres.Begin(ctx, pool)
				if err != nil {
					b.Fatal(err)
				}
				cur, err := snap.Query(sql, nil)
				if err != nil {
					snap.Close()
					b.Fatal(err)
				}
				for cur.Next() {
					rows++
				}
				if err := cur.Close(); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(rows)/b.Elapsed().Seconds(), "rows/s")
		})
	}
}
