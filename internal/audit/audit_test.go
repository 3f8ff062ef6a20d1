package audit_test

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/informe/informe/internal/audit"
	"github.com/informe/informe/internal/dataset"
	"github.com/informe/informe/internal/failure"
	"github.com/informe/informe/internal/pgserver/pgtest"
	"github.com/informe/informe/internal/postgres"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// readUsers reads up to limit users through store under ctx, as a door
// does, and returns how many rows it read and their bytes.
func readUsers(ctx context.Context, store *postgres.Store, limit int64) (rows, bytes int64, err error) {
	cur, err := store.Open(ctx, dataset.Users, dataset.Query{Limit: limit})
	if err != nil {
		return 0, 0, err
	}
	defer cur.Close()
	for cur.Next() {
		rows++
		for _, v := range cur.Values() {
			bytes += int64(len(v))
		}
	}
	return rows, bytes, cur.Err()
}

// record is a row of audit_records, as a test reads it back.
type record struct {
	principal, path, outcome string
	dataset, query, reason   *string
	rows, bytes              *int64
	ended                    *time.Time
}

func records(t *testing.T, pool *pgxpool.Pool, path string) []record {
	t.Helper()
	rs, err := pool.Query(context.Background(),
		`SELECT principal, path, outcome, dataset, query, reason, rows, bytes, ended_at FROM audit_records WHERE path = $1 ORDER BY id`, path)
	if err != nil {
		t.Fatal(err)
	}
	out, err := pgx.CollectRows(rs, func(row pgx.CollectableRow) (record, error) {
		var r record
		err := row.Scan(&r.principal, &r.path, &r.outcome, &r.dataset, &r.query, &r.reason, &r.rows, &r.bytes, &r.ended)
		return r, err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestDoRecordsTheRead checks that a read made through Do is recorded
// once, opened by the store and closed by Do with the rows and bytes the
// read reported and its outcome: complete, or failed with the error's
// reason.
func TestDoRecordsTheRead(t *testing.T) {
	t.Parallel()
	pool := pgtest.SmallSeeded(t)
	for _, onReads := range []bool{true, false} {
		name := map[bool]string{true: "OnReads", false: "OwnPool"}[onReads]
		t.Run(name, func(t *testing.T) {
			log := audit.New(pool, audit.Required, "test-instance", nil)
			if onReads {
				log = log.OnReads()
			}
			store := postgres.NewStore(pool).Told(log.Reading)
			ctx := context.Background()
			path := "test " + name

			var rows, bytes int64
			rec := &audit.Record{RequestID: "r1", Principal: "tester", Path: path, Query: audit.QueryText(url.Values{"dataset": {"users"}}), Format: "csv"}
			err := log.Do(ctx, rec, func(ctx context.Context) (int64, int64, error) {
				var err error
				rows, bytes, err = readUsers(ctx, store, 7)
				return rows, bytes, err
			})
			if err != nil {
				t.Fatal(err)
			}
			if rows != 7 || bytes == 0 {
				t.Fatalf("read %d rows, %d bytes; want 7 rows", rows, bytes)
			}

			boom := &failure.Error{Code: failure.Unavailable, Reason: "database_unavailable", Message: "the database went away", Err: errors.New("boom")}
			err = log.Do(ctx, &audit.Record{RequestID: "r2", Principal: "tester", Path: path}, func(ctx context.Context) (int64, int64, error) {
				if _, _, err := readUsers(ctx, store, 1); err != nil {
					return 0, 0, err
				}
				return 0, 0, boom
			})
			if !errors.Is(err, boom) {
				t.Fatalf("Do = %v, want the read's error", err)
			}

			got := records(t, pool, path)
			if len(got) != 2 {
				t.Fatalf("%d records, want 2: %+v", len(got), got)
			}
			ok := got[0]
			if ok.principal != "tester" || ok.outcome != string(audit.Complete) || ok.dataset == nil || *ok.dataset != "users" ||
				ok.rows == nil || *ok.rows != rows || ok.bytes == nil || *ok.bytes != bytes || ok.ended == nil ||
				ok.query == nil || *ok.query != "dataset=users" {
				t.Errorf("the complete read's record = %+v", ok)
			}
			failed := got[1]
			if failed.outcome != string(audit.Failed) || failed.reason == nil || *failed.reason != "database_unavailable" || failed.ended == nil {
				t.Errorf("the failed read's record = %+v, want failed with reason database_unavailable", failed)
			}
		})
	}
}

// TestRequiredRefusesUnrecordedReads checks that under Required a read
// made without a record is refused before any row, as informe's own
// fault, and that under best-effort and off it is served unrecorded.
func TestRequiredRefusesUnrecordedReads(t *testing.T) {
	t.Parallel()
	pool := pgtest.SmallSeeded(t)
	for _, mode := range []audit.Mode{audit.Required, audit.BestEffort, audit.Off} {
		t.Run(mode.String(), func(t *testing.T) {
			log := audit.New(pool, mode, "test-instance", nil).OnReads()
			rows, _, err := readUsers(context.Background(), postgres.NewStore(pool).Told(log.Reading), 3)
			if mode == audit.Required {
				if failure.CodeOf(err) != failure.Internal || rows != 0 {
					t.Fatalf("read without a record: %d rows, %v; want none and an internal error", rows, err)
				}
				return
			}
			if err != nil || rows != 3 {
				t.Fatalf("read without a record under %s: %d rows, %v; want 3", mode, rows, err)
			}
		})
	}
	if n := pgtest.Int(t, pool, "SELECT count(*) FROM audit_records WHERE outcome <> 'recorded'"); n != 0 {
		t.Errorf("%d records of reads made without one", n)
	}
}

// TestOffRecordsNothingButEvents checks that under off a read through Do
// is served and not recorded, while an event (the mode's own choice, a
// token's change) still is.
func TestOffRecordsNothingButEvents(t *testing.T) {
	t.Parallel()
	pool := pgtest.SmallSeeded(t)
	log := audit.New(pool, audit.Off, "test-instance", nil)
	store := postgres.NewStore(pool).Told(log.Reading)
	err := log.Do(context.Background(), &audit.Record{Principal: "tester", Path: "test off"}, func(ctx context.Context) (int64, int64, error) {
		return readUsers(ctx, store, 2)
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := records(t, pool, "test off"); len(got) != 0 {
		t.Errorf("off recorded %+v", got)
	}
	if err := log.Event(context.Background(), "tester", "test event", "mode=off", ""); err != nil {
		t.Fatal(err)
	}
	got := records(t, pool, "test event")
	if len(got) != 1 || got[0].outcome != string(audit.Recorded) || got[0].query == nil || *got[0].query != "mode=off" {
		t.Errorf("the event's record = %+v", got)
	}
}

// TestPrune checks that a prune deletes the records started before its
// time, keeps the others, and is itself recorded.
func TestPrune(t *testing.T) {
	t.Parallel()
	pool := pgtest.New(t)
	ctx := context.Background()
	log := audit.New(pool, audit.Required, "test-instance", nil)
	if err := log.Event(ctx, "tester", "test old", "", ""); err != nil {
		t.Fatal(err)
	}
	cut := time.Now()
	if err := log.Event(ctx, "tester", "test new", "", ""); err != nil {
		t.Fatal(err)
	}
	n, err := audit.Prune(ctx, pool, cut, "pruner", "test-instance")
	if err != nil {
		t.Fatal(err)
	}
	if n != 1 {
		t.Errorf("pruned %d records, want 1", n)
	}
	if len(records(t, pool, "test old")) != 0 || len(records(t, pool, "test new")) != 1 {
		t.Error("the prune did not delete exactly the older record")
	}
	if pgtest.Int(t, pool, "SELECT count(*) FROM audit_records WHERE principal = 'pruner'") != 1 {
		t.Error("the prune is not on record")
	}
}

func TestParseMode(t *testing.T) {
	for _, m := range []audit.Mode{audit.Required, audit.BestEffort, audit.Off} {
		got, err := audit.ParseMode(m.String())
		if err != nil || got != m {
			t.Errorf("ParseMode(%q) = %v, %v", m.String(), got, err)
		}
	}
	if _, err := audit.ParseMode("sometimes"); err == nil {
		t.Error(`ParseMode("sometimes") accepted it`)
	}
}

func TestRulesText(t *testing.T) {
	for _, tc := range []struct {
		rules *dataset.Rules
		want  string
	}{
		{nil, ""},
		{&dataset.Rules{}, ""},
		{&dataset.Rules{NoPersonal: true, MaxRows: 100}, "columns=no personal data; max_rows=100"},
		{&dataset.Rules{Columns: []string{"a", "b"}, Mask: []string{"client_rut"}, Rows: "client_id eq 7"},
			"columns=a,b; mask=client_rut; rows=client_id eq 7"},
	} {
		if got := audit.RulesText(tc.rules); got != tc.want {
			t.Errorf("RulesText(%+v) = %q, want %q", tc.rules, got, tc.want)
		}
	}
}

// TestRunClosesAtShutdown closes records through the queue, as the API
// does, and ends Run while it is still gathering them into a batch: the
// batch is written all the same, and every record reads as complete.
func TestRunClosesAtShutdown(t *testing.T) {
	t.Parallel()
	pool := pgtest.SmallSeeded(t)
	log := audit.New(pool, audit.Required, "test-instance", nil)
	store := postgres.NewStore(pool).Told(log.Reading)
	ctx, stop := context.WithCancel(context.Background())
	ran := make(chan struct{})
	go func() { log.Run(ctx); close(ran) }()
	defer func() { stop(); <-ran }()

	const path = "test shutdown"
	for i := range 3 {
		rec := &audit.Record{RequestID: fmt.Sprintf("s%d", i), Principal: "tester", Path: path, Started: time.Now()}
		rows, bytes, err := readUsers(audit.NewContext(context.Background(), rec), store, 5)
		if err != nil {
			t.Fatal(err)
		}
		rec.Ended, rec.Rows, rec.Bytes, rec.Outcome = time.Now(), rows, bytes, audit.Complete
		log.Close(rec)
	}
	// Run has taken them all: they are in the batch it gathers.
	for audit.Queued(log) > 0 {
		time.Sleep(time.Millisecond)
	}
	stop()
	<-ran
	got := records(t, pool, path)
	if len(got) != 3 {
		t.Fatalf("%d records, want 3: %+v", len(got), got)
	}
	for i, r := range got {
		if r.ended == nil || r.outcome != string(audit.Complete) || r.rows == nil || *r.rows != 5 {
			t.Errorf("record %d: ended %v, outcome %q, rows %v; want closed, complete, 5 rows", i, r.ended, r.outcome, r.rows)
		}
	}
}
