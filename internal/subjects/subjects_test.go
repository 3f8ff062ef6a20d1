package subjects_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/informe/informe/internal/dataset"
	"github.com/informe/informe/internal/failure"
	"github.com/informe/informe/internal/pgserver/pgtest"
	"github.com/informe/informe/internal/postgres"
	"github.com/informe/informe/internal/rut"
	"github.com/informe/informe/internal/source"
	"github.com/informe/informe/internal/subjects"
	"github.com/informe/informe/report"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// TestEncodeSize checks the bound of a whole export of 100,000 contracts:
// their ids spread over 130,000, each with its client (50,000 clients of
// 80,000 ids), its client's contracts, payers on 60% of them, and 300
// users, fits in 64 KiB, and decodes to the same set.
func TestEncodeSize(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	c := subjects.NewCollector()
	contracts := r.Perm(130_000)[:100_000]
	for _, id := range contracts {
		c.Carry(dataset.ClientContractID, int64(id)+1)
		if r.IntN(10) < 6 {
			c.Carry(dataset.PayerContractID, int64(id)+1)
		}
	}
	for _, id := range r.Perm(80_000)[:50_000] {
		c.Carry(dataset.ClientID, int64(id)+1)
	}
	for id := range 300 {
		c.Carry(dataset.UserID, int64(id)+1)
		c.CarryName([]byte("Usuario " + string(rune('A'+id%26)) + strings.Repeat("x", id/26)))
	}
	s := c.Set()
	b := s.Encode()
	if got, max := len(b), 64<<10; got > max {
		t.Fatalf("encoded %d ids in %d bytes, more than %d", s.Len(), got, max)
	}
	t.Logf("%d ids in %d bytes", s.Len(), len(b))
	d, err := subjects.Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := d.Len(), s.Len(); got != want {
		t.Fatalf("decoded %d ids, want %d", got, want)
	}
	for _, id := range contracts[:1000] {
		if !d.Contains(dataset.ClientContractID, int64(id)+1) {
			t.Fatalf("contract %d missing after decoding", id+1)
		}
	}
	if d.Contains(dataset.ClientContractID, 200_000) || d.Contains(dataset.UserID, 0) {
		t.Fatal("decoded set holds an id never added")
	}
	if !d.ContainsName("Usuario A") || d.ContainsName("Nadie") {
		t.Fatal("names: wrong membership after decoding")
	}
}

func TestEncodeEmptyAndBad(t *testing.T) {
	if b := subjects.NewCollector().Set().Encode(); b != nil {
		t.Fatalf("empty set encoded as %d bytes, want none", len(b))
	}
	for _, b := range [][]byte{{2}, {1, 9, 1, 0}, {1, 0, 1, 200}, {1, 0, 7, 0}} {
		if _, err := subjects.Decode(b); err == nil {
			t.Errorf("Decode(%v): no error", b)
		}
	}
	// Consecutive ids are runs.
	c := subjects.NewCollector()
	for id := range int64(100_000) {
		c.Carry(dataset.ClientID, id+1)
	}
	if b := c.Set().Encode(); len(b) > 16 {
		t.Errorf("100,000 consecutive ids in %d bytes", len(b))
	}
}

// person is one blocked RUT of the seeded database and values of theirs
// that no other person has.
type person struct {
	rut    string
	values []string
}

// persons picks a client, a payer and a user of the seeded database, each
// with values distinctive enough to look for in every row.
func persons(t *testing.T, pool *pgxpool.Pool) (client, payer, user person) {
	t.Helper()
	ctx := context.Background()
	var email, cemail string
	if err := pool.QueryRow(ctx, `SELECT c.rut, c.email, k.client_email FROM clients c JOIN contracts k ON k.client_id = c.id
		WHERE k.client_email IS NOT NULL ORDER BY c.id LIMIT 1`).Scan(&client.rut, &email, &cemail); err != nil {
		t.Fatal(err)
	}
	client.values = []string{client.rut, email, cemail}
	var pemail string
	if err := pool.QueryRow(ctx, `SELECT payer_rut, payer_email FROM contracts WHERE payer_rut IS NOT NULL AND payer_email IS NOT NULL
		AND rut_key(payer_rut) <> rut_key($1) ORDER BY id LIMIT 1`, client.rut).Scan(&payer.rut, &pemail); err != nil {
		t.Fatal(err)
	}
	payer.values = []string{payer.rut, pemail}
	var uemail, uname string
	if err := pool.QueryRow(ctx, `SELECT u.rut, u.email, u.name FROM users u WHERE u.name IN (SELECT attended_by FROM contracts)
		AND u.name IN (SELECT executor FROM tasks) ORDER BY u.id LIMIT 1`).Scan(&user.rut, &uemail, &uname); err != nil {
		t.Fatal(err)
	}
	user.values = []string{user.rut, uemail, uname}
	return client, payer, user
}

// seen reads every row of every dataset, in text and typed, through one
// cursor and through parts, and returns how many values of its personal
// columns equal one of values, and the sum of the contracts' costs.
func seen(t *testing.T, pool *pgxpool.Pool, values []string) (n int, cost string) {
	t.Helper()
	store := postgres.NewStore(pool)
	ctx := context.Background()
	want := map[string]bool{}
	for _, v := range values {
		want[v] = true
	}
	rep := source.Report(report.Maintained)
	for _, s := range source.All(rep) {
		for _, typed := range []bool{false, true} {
			q := dataset.Whole()
			q.Typed = typed
			curs, err := store.OpenParts(ctx, s.Dataset, q, postgres.Parts{Max: 2, MinRows: 100})
			if err != nil {
				t.Fatalf("%s: %v", s.Name, err)
			}
			for _, cur := range curs {
				for cur.Next() {
					vals := cur.Values()
					if len(vals) != len(s.Columns) {
						t.Fatalf("%s: %d values, want %d", s.Name, len(vals), len(s.Columns))
					}
					for i, c := range s.Columns {
						if c.Personal != dataset.NotPersonal && want[string(vals[i])] {
							n++
						}
					}
				}
				if err := cur.Close(); err != nil {
					t.Fatalf("%s: %v", s.Name, err)
				}
			}
		}
	}
	return n, pgtest.String(t, pool, "SELECT sum(costo_servicio)::text FROM contract_list_typed")
}

// TestBlock blocks a client, a payer and a user of the seeded database:
// their personal values are read nowhere, in any dataset, as text or
// typed, through one cursor or parts, while every row stays (the costs
// sum as before); a condition on their personal columns does not find
// them; unblocked, they return.
func TestBlock(t *testing.T) {
	ctx := context.Background()
	pool := pgtest.SmallSeeded(t)
	store := postgres.NewStore(pool)
	client, payer, user := persons(t, pool)
	all := slices.Concat(client.values, payer.values, user.values)

	before, cost := seen(t, pool, all)
	if before == 0 {
		t.Fatal("the persons' values are in no row: the test proves nothing")
	}
	for _, p := range []person{client, payer, user} {
		r, err := rut.ParseAs("rut", p.rut)
		if err != nil {
			t.Fatal(err)
		}
		if err := subjects.Block(ctx, pool, r, "solicitud de bloqueo", "test@host"); err != nil {
			t.Fatal(err)
		}
	}
	n, blockedCost := seen(t, pool, all)
	if n != 0 {
		t.Errorf("blocked: %d personal values of the blocked persons read", n)
	}
	if blockedCost != cost {
		t.Errorf("blocked: costs sum %s, want %s", blockedCost, cost)
	}
	for _, s := range source.All(source.Report(report.Maintained)) {
		want := pgtest.Int(t, pool, "SELECT count(*) FROM "+s.Typed)
		got, err := countRows(ctx, store, s.Dataset, dataset.Whole())
		if err != nil || got != want {
			t.Errorf("%s: count %d (%v), want %d", s.Name, got, err, want)
		}
	}

	// Conditions on personal columns.
	key := func(p person) string { r, _ := rut.Parse(p.rut); return r.Key() }
	conds := []struct {
		name string
		d    *dataset.Dataset
		add  func(q *dataset.Query)
	}{
		{"client email", dataset.Clients, func(q *dataset.Query) {
			q.Filters = append(q.Filters, textEq("client_email", client.values[1]))
		}},
		{"report rut", dataset.GeneralReport, func(q *dataset.Query) { q.Equal("key_client_rut", key(client)) }},
		{"payer rut", dataset.Contracts, func(q *dataset.Query) {
			// Not a condition on one column: written as any condition.
			eq := textEq("rut_payer_contract", payer.rut)
			q.Filters = append(q.Filters, &dataset.Expr{Op: dataset.Or, Type: dataset.Bool, Args: []*dataset.Expr{eq, eq}})
		}},
		{"attended by", dataset.Contracts, func(q *dataset.Query) {
			q.Filters = append(q.Filters, textEq("attended_by", user.values[2]))
		}},
		{"user email", dataset.Users, func(q *dataset.Query) {
			q.Filters = append(q.Filters, textEq("email", user.values[1]))
		}},
	}
	counts := func() []int64 {
		var out []int64
		for _, c := range conds {
			q := dataset.Whole()
			c.add(&q)
			n, err := countRows(ctx, store, c.d, q)
			if err != nil {
				t.Fatalf("%s: %v", c.name, err)
			}
			out = append(out, n)
		}
		return out
	}
	for i, n := range counts() {
		if n != 0 {
			t.Errorf("blocked: a condition on %s found %d rows", conds[i].name, n)
		}
	}

	blocks, err := subjects.List(ctx, pool)
	if err != nil || len(blocks) != 3 || blocks[0].Reason != "solicitud de bloqueo" || blocks[0].By != "test@host" {
		t.Errorf("List: %+v, %v", blocks, err)
	}
	for _, p := range []person{client, payer, user} {
		r, _ := rut.Parse(p.rut)
		if err := subjects.Unblock(ctx, pool, r, "test@host"); err != nil {
			t.Fatal(err)
		}
	}
	if after, _ := seen(t, pool, all); after != before {
		t.Errorf("unblocked: %d personal values read, want %d as before", after, before)
	}
	for i, n := range counts() {
		if n == 0 {
			t.Errorf("unblocked: a condition on %s found no rows", conds[i].name)
		}
	}
	if got := pgtest.Int(t, pool, "SELECT count(*) FROM subject_block_events"); got != 6 {
		t.Errorf("%d events recorded, want 6 (3 blocks, 3 unblocks)", got)
	}
	r, _ := rut.Parse(client.rut)
	if err := subjects.Unblock(ctx, pool, r, "test@host"); failure.CodeOf(err) != failure.NotFound {
		t.Errorf("unblocking again: %v, want not found", err)
	}
}

// TestReport records responses in an audit_records table made as the
// audit's, each with the set its collector built from a real read, and
// checks that the report names exactly those that carried the person.
func TestReport(t *testing.T) {
	ctx := context.Background()
	pool := pgtest.SmallSeeded(t)
	store := postgres.NewStore(pool)
	client, _, _ := persons(t, pool)
	clientID := pgtest.Int(t, pool, "SELECT id FROM clients WHERE rut = $1", client.rut)
	other := pgtest.Int(t, pool, "SELECT min(id) FROM clients WHERE id <> $1", clientID)
	read := func(d *dataset.Dataset, cols []string, cond func(q *dataset.Query)) []byte {
		q := dataset.Whole()
		var err error
		if cols != nil {
			if q.Columns, err = dataset.Select(d.Columns, cols); err != nil {
				t.Fatal(err)
			}
		}
		cond(&q)
		c := subjects.NewCollector()
		q.Carried = c
		cur, err := store.Open(ctx, d, q)
		if err != nil {
			t.Fatal(err)
		}
		for cur.Next() {
		}
		if err := cur.Close(); err != nil {
			t.Fatal(err)
		}
		return c.Set().Encode()
	}
	byClient := func(id int64) func(q *dataset.Query) {
		return func(q *dataset.Query) {
			q.Filters = append(q.Filters, &dataset.Expr{Op: dataset.Compare, Type: dataset.Bool, Name: "eq", Args: []*dataset.Expr{
				{Op: dataset.Property, Type: dataset.Int, Column: "client_id", Kind: dataset.Integer},
				{Op: dataset.Literal, Type: dataset.Int, Value: id},
			}})
		}
	}
	none := func(*dataset.Query) {}
	records := []struct {
		id      string
		subj    []byte
		carried bool
	}{
		{"whole-report", read(dataset.GeneralReport, nil, none), true},
		{"client-page", read(dataset.Clients, nil, byClient(clientID)), true},
		{"other-client", read(dataset.Clients, nil, byClient(other)), false},
		{"no-personal", read(dataset.Contracts, []string{"contract_id", "costo_servicio"}, none), false},
		{"process-captions", read(dataset.Processes, []string{"process_id", "caratulado_process"}, none), true},
		{"services", read(dataset.Services, nil, none), false},
	}
	start := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	for i, r := range records {
		if got := r.subj == nil; got != (r.id == "no-personal" || r.id == "services") {
			t.Errorf("%s: set of %d bytes", r.id, len(r.subj))
		}
		at := start.Add(time.Duration(i) * time.Minute)
		if _, err := pool.Exec(ctx, `INSERT INTO audit_records (started_at, ended_at, request_id, principal, client_address,
  path, dataset, columns, outcome, instance, subjects)
VALUES ($1, $2, $3, 'token-a', '127.0.0.1', '/x', 'general-report', 'contract_id,client_rut,task_status', 'complete', 'test', $4)`,
			at, at.Add(time.Second), r.id, r.subj); err != nil {
			t.Fatal(err)
		}
	}
	r, _ := rut.Parse(client.rut)
	report := func(since time.Time) []string {
		var b bytes.Buffer
		if err := subjects.Report(ctx, pool, r, since, &b); err != nil {
			t.Fatal(err)
		}
		rows, err := csv.NewReader(&b).ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		if strings.Join(rows[0], ",") != "started_at,ended_at,request_id,principal,client_address,path,dataset,columns,outcome" {
			t.Fatalf("header %v", rows[0])
		}
		var ids []string
		for _, row := range rows[1:] {
			ids = append(ids, row[2])
			if row[2] == "killed-personal" {
				if row[7] != "client_email" || row[8] != "unfinished: may have carried" || row[1] != "" {
					t.Errorf("killed-personal: %v", row)
				}
				continue
			}
			if row[7] != "client_rut" || row[8] != "complete" {
				t.Errorf("%s: columns %q, outcome %q; want client_rut (the personal columns sent), complete", row[2], row[7], row[8])
			}
		}
		return ids
	}
	var want []string
	for _, r := range records {
		if r.carried {
			want = append(want, r.id)
		}
	}
	if got := report(time.Time{}); !slices.Equal(got, want) {
		t.Errorf("report: %v, want %v", got, want)
	}
	if got := report(start.Add(90 * time.Second)); !slices.Equal(got, want[2:]) {
		t.Errorf("report since: %v, want %v", got, want[2:])
	}
	// Responses that never finished (open records): one that could carry
	// personal columns is named, as one that may have carried the person;
	// one without any is not.
	later := start.Add(time.Hour)
	if _, err := pool.Exec(ctx, `INSERT INTO audit_records (started_at, request_id, principal, path, dataset, columns, instance)
VALUES ($1, 'killed-personal', 'token-a', '/x', 'general-report', 'contract_id,client_email', 'test'),
       ($1, 'killed-plain', 'token-a', '/x', 'general-report', 'contract_id,task_status', 'test')`, later); err != nil {
		t.Fatal(err)
	}
	if got := report(later); !slices.Equal(got, []string{"killed-personal"}) {
		t.Errorf("report of unfinished responses: %v, want [killed-personal]", got)
	}
}

func errorsAs(err error, f **failure.Error) bool { return errors.As(err, f) }

// TestCollectorParts checks that a whole export read in parts, each
// cursor on its own goroutine, collects the persons one cursor does.
func TestCollectorParts(t *testing.T) {
	ctx := context.Background()
	store := postgres.NewStore(pgtest.SmallSeeded(t))
	collect := func(p postgres.Parts) []byte {
		c := subjects.NewCollector()
		q := dataset.Whole()
		q.Carried = c
		curs, err := store.OpenParts(ctx, source.Report(report.Maintained).Dataset, q, p)
		if err != nil {
			t.Fatal(err)
		}
		done := make(chan error, len(curs))
		for _, cur := range curs {
			go func() {
				for cur.Next() {
				}
				done <- cur.Close()
			}()
		}
		for range curs {
			if err := <-done; err != nil {
				t.Fatal(err)
			}
		}
		if p.Max > 1 && len(curs) < 2 {
			t.Fatalf("%d parts: the test reads no parts at once", len(curs))
		}
		return c.Set().Encode()
	}
	one, parts := collect(postgres.Parts{Max: 1}), collect(postgres.Parts{Max: 3, MinRows: 100})
	if len(one) == 0 || !bytes.Equal(one, parts) {
		t.Fatalf("parts collected %d bytes, one cursor %d, not the same", len(parts), len(one))
	}
}

// countRows returns the number of d's rows matching q, as a count of a
// page of none.
func countRows(ctx context.Context, store *postgres.Store, d *dataset.Dataset, q dataset.Query) (int64, error) {
	q.Count, q.Limit = true, 0
	cur, err := store.Open(ctx, d, q)
	if err != nil {
		return 0, err
	}
	if err := cur.Close(); err != nil {
		return 0, err
	}
	return cur.Total(), nil
}

// textEq returns the condition that the text column equals v.
func textEq(column, v string) *dataset.Expr {
	return &dataset.Expr{Op: dataset.Compare, Type: dataset.Bool, Name: "eq", Args: []*dataset.Expr{
		{Op: dataset.Property, Type: dataset.String, Column: column, Kind: dataset.Text},
		{Op: dataset.Literal, Type: dataset.String, Value: v},
	}}
}
