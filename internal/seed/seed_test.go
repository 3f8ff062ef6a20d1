package seed_test

import (
	"context"
	"errors"
	"regexp"
	"strings"
	"testing"

	"github.com/informe/informe/internal/seed"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/informe/informe/internal/pgserver/pgtest"
	"github.com/informe/informe/internal/rut"
)

// seeded returns a pool on a fresh copy of the shared seeded database.
func seeded(tb testing.TB) *pgxpool.Pool { return pgtest.Seeded(tb) }

// seededContracts is the size of pgtest's seeded template.
const seededContracts = pgtest.SeededContracts

func queryInt(tb testing.TB, pool *pgxpool.Pool, sql string, args ...any) int64 {
	return pgtest.Int(tb, pool, sql, args...)
}

func queryString(tb testing.TB, pool *pgxpool.Pool, sql string, args ...any) string {
	return pgtest.String(tb, pool, sql, args...)
}

// fingerprint hashes everything the seed wrote, as text, in a fixed order.
func fingerprint(tb testing.TB, pool *pgxpool.Pool) map[string]string {
	tb.Helper()
	return map[string]string{
		"general_report": queryString(tb, pool, `SELECT md5(string_agg(g::text, E'\n'
			ORDER BY key_contract_id, key_process_id, key_task_id)) FROM general_report g`),
		"user_list":       queryString(tb, pool, `SELECT md5(string_agg(u::text, E'\n' ORDER BY key_id)) FROM user_list u`),
		"clients":         queryString(tb, pool, `SELECT md5(string_agg(c::text, E'\n' ORDER BY id)) FROM clients c`),
		"services":        queryString(tb, pool, `SELECT md5(string_agg(s::text, E'\n' ORDER BY id)) FROM services s`),
		"report_counters": queryString(tb, pool, `SELECT md5(string_agg(r::text, E'\n' ORDER BY contract_id)) FROM report_contract_rows r`),
	}
}

func TestSeedDeterministic(t *testing.T) {
	ctx := context.Background()
	seed := func(s int64) (seed.Stats, map[string]string) {
		pool := pgtest.New(t)
		st, err := seed.Seed(ctx, pool, seed.Options{Contracts: 300, Seed: s})
		if err != nil {
			t.Fatal(err)
		}
		return st, fingerprint(t, pool)
	}
	st1, fp1 := seed(42)
	st2, fp2 := seed(42)
	st3, fp3 := seed(43)
	if st1 != st2 {
		t.Errorf("same seed, different stats:\n%+v\n%+v", st1, st2)
	}
	for table, want := range fp1 {
		if got := fp2[table]; got != want {
			t.Errorf("same seed, %s differs: %s vs %s", table, got, want)
		}
	}
	for _, table := range []string{"general_report", "user_list", "clients"} {
		if fp3[table] == fp1[table] {
			t.Errorf("seeds 42 and 43 give the same %s", table)
		}
	}
	if fp3["services"] != fp1["services"] {
		t.Errorf("services should not depend on the seed")
	}
	if st3.Contracts != st1.Contracts {
		t.Errorf("seed 43 made %d contracts, want %d", st3.Contracts, st1.Contracts)
	}
}

func TestSeedRefuses(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name    string
		setup   string
		opts    seed.Options
		wantErr error
		msg     string
	}{
		{name: "ErrContractsZero", opts: seed.Options{Contracts: 0},
			msg: "seed: Contracts must be at least 1, got 0"},
		{name: "ErrContracts", setup: `
			INSERT INTO clients (id, rut, first_name, last_name) VALUES (1, '12345678-5', 'Ana', 'Soto');
			INSERT INTO contracts (client_id, status, code) VALUES (1, 'APROBADO', 'X')`,
			opts: seed.Options{Contracts: 10}, wantErr: seed.ErrNotEmpty},
		{name: "ErrClientsOnly", setup: `INSERT INTO clients (rut, first_name, last_name) VALUES ('12345678-5', 'Ana', 'Soto')`,
			opts: seed.Options{Contracts: 10}, wantErr: seed.ErrNotEmpty},
		{name: "ErrUsersOnly", setup: `INSERT INTO users (name, email, username, rut, status) VALUES ('A', 'a@b.cl', 'a@b.cl', '12345678-5', 'A')`,
			opts: seed.Options{Contracts: 10}, wantErr: seed.ErrNotEmpty},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pool := pgtest.New(t)
			if tt.setup != "" {
				if _, err := pool.Exec(ctx, tt.setup); err != nil {
					t.Fatal(err)
				}
				has, err := seed.HasData(ctx, pool)
				if err != nil || !has {
					t.Fatalf("HasData = %v, %v; want true", has, err)
				}
			}
			before := queryInt(t, pool, "SELECT count(*) FROM contracts")
			_, err := seed.Seed(ctx, pool, tt.opts)
			if err == nil {
				t.Fatal("Seed succeeded, want an error")
			}
			if tt.wantErr != nil && !errors.Is(err, tt.wantErr) {
				t.Errorf("error %v, want %v", err, tt.wantErr)
			}
			if tt.msg != "" && err.Error() != tt.msg {
				t.Errorf("error %q, want %q", err.Error(), tt.msg)
			}
			if got := queryInt(t, pool, "SELECT count(*) FROM contracts"); got != before {
				t.Errorf("contracts went from %d to %d", before, got)
			}
		})
	}
}

func TestSeedTwice(t *testing.T) {
	ctx := context.Background()
	pool := pgtest.New(t)
	has, err := seed.HasData(ctx, pool)
	if err != nil || has {
		t.Fatalf("HasData on an empty database = %v, %v", has, err)
	}
	if _, err := seed.Seed(ctx, pool, seed.Options{Contracts: 20, Seed: 1}); err != nil {
		t.Fatal(err)
	}
	if has, err := seed.HasData(ctx, pool); err != nil || !has {
		t.Fatalf("HasData after Seed = %v, %v", has, err)
	}
	if _, err := seed.Seed(ctx, pool, seed.Options{Contracts: 20, Seed: 2}); !errors.Is(err, seed.ErrNotEmpty) {
		t.Fatalf("second Seed error = %v, want ErrNotEmpty", err)
	}
}

func TestSeedStats(t *testing.T) {
	ctx := context.Background()
	pool := pgtest.New(t)
	st, err := seed.Seed(ctx, pool, seed.Options{Contracts: 1500, Seed: 9})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		got  int64
		sql  string
	}{
		{"BenefitCenters", st.BenefitCenters, "SELECT count(*) FROM benefit_centers"},
		{"Services", st.Services, "SELECT count(*) FROM services"},
		{"Clients", st.Clients, "SELECT count(*) FROM clients"},
		{"Contracts", st.Contracts, "SELECT count(*) FROM contracts"},
		{"Processes", st.Processes, "SELECT count(*) FROM processes"},
		{"Tasks", st.Tasks, "SELECT count(*) FROM tasks"},
		{"Users", st.Users, "SELECT count(*) FROM users"},
		{"ReportRows", st.ReportRows, "SELECT count(*) FROM general_report"},
	}
	for _, tt := range tests {
		if want := queryInt(t, pool, tt.sql); tt.got != want {
			t.Errorf("%s = %d, %s = %d", tt.name, tt.got, tt.sql, want)
		}
	}
	if st.Contracts != 1500 || st.Users != 50 {
		t.Errorf("contracts %d, users %d; want 1500, 50", st.Contracts, st.Users)
	}
	// Later inserts without ids must not collide with the seeded ones.
	for _, sql := range []string{
		"INSERT INTO clients (rut, first_name, last_name) VALUES ('1-9', 'A', 'B') RETURNING id",
		"INSERT INTO contracts (client_id, status, code) VALUES (1, 'APROBADO', 'N') RETURNING id",
		"INSERT INTO processes (contract_id) VALUES (1) RETURNING id",
		"INSERT INTO tasks (process_id, name, status) VALUES (1, 'x', 'Pendiente') RETURNING id",
		"INSERT INTO users (name, email, username, rut, status) VALUES ('A', 'a', 'nuevo', '1-9', 'A') RETURNING id",
		"INSERT INTO services (name, cost) VALUES ('S', 1) RETURNING id",
		"INSERT INTO benefit_centers (name) VALUES ('B') RETURNING id",
	} {
		queryInt(t, pool, sql)
	}
}

// TestSeedContent checks that the seeded data looks like the real thing
// and gives the report's filters and encoders something to work on.
func TestSeedContent(t *testing.T) {
	pool := seeded(t)
	n := float64(seededContracts)
	ratio := func(sql string) float64 { return float64(queryInt(t, pool, sql)) / n }
	ranges := []struct {
		name     string
		sql      string
		min, max float64 // per contract
	}{
		{"ClientsPerContract", "SELECT count(*) FROM clients", 0.6, 0.73},
		{"ReportRowsPerContract", "SELECT count(*) FROM general_report", 9, 11.5},
		{"ProcessesPerContract", "SELECT count(*) FROM processes", 1.7, 2.1},
		{"ContractsWithoutProcesses", "SELECT count(*) FROM contracts c WHERE NOT EXISTS (SELECT 1 FROM processes p WHERE p.contract_id = c.id)", 0.03, 0.07},
		{"Approved", "SELECT count(*) FROM contracts WHERE status = 'APROBADO'", 0.8, 0.9},
		{"PayerIsSomeoneElse", "SELECT count(*) FROM contracts WHERE payer_rut <> client_rut", 0.2, 0.3},
		{"SnapshotDiffers", `SELECT count(*) FROM contracts c JOIN clients cl ON cl.id = c.client_id
			WHERE c.client_address IS DISTINCT FROM cl.address OR c.client_phone IS DISTINCT FROM cl.phone`, 0.1, 0.2},
		{"DottedClientRUTs", "SELECT count(*) FROM clients WHERE rut LIKE '%.%'", 0.05, 0.12},
		{"ForeignClients", "SELECT count(*) FROM clients WHERE country <> 'Chile' AND passport IS NOT NULL", 0.02, 0.1},
	}
	for _, tt := range ranges {
		if got := ratio(tt.sql); got < tt.min || got > tt.max {
			t.Errorf("%s: %.3f per contract, want %.2f to %.2f", tt.name, got, tt.min, tt.max)
		}
	}
	exists := []struct {
		name string
		sql  string
	}{
		{"ProcessWithoutTasks", "SELECT count(*) FROM processes p WHERE NOT EXISTS (SELECT 1 FROM tasks t WHERE t.process_id = p.id)"},
		{"ClientWithSeveralContracts", "SELECT count(*) FROM (SELECT client_id FROM contracts GROUP BY 1 HAVING count(*) > 2) x"},
		{"Ñ", "SELECT count(*) FROM clients WHERE last_name LIKE '%ñ%' OR second_last_name LIKE '%ñ%' OR last_name LIKE 'Ñ%'"},
		{"AccentedCaption", "SELECT count(*) FROM processes WHERE caption ~ '[ÁÉÍÓÚÑ]'"},
		{"EmptyRole", "SELECT count(*) FROM processes WHERE role IS NULL"},
		{"EmptyCaption", "SELECT count(*) FROM processes WHERE caption IS NULL"},
		{"EmptyProcessDate", "SELECT count(*) FROM processes WHERE process_date IS NULL"},
		{"Pendiente", "SELECT count(*) FROM tasks WHERE status = 'Pendiente'"},
		{"EnCurso", "SELECT count(*) FROM tasks WHERE status = 'En Curso'"},
		{"Cancelado", "SELECT count(*) FROM tasks WHERE status = 'Cancelado'"},
		{"NullDuration", "SELECT count(*) FROM tasks WHERE duration IS NULL"},
		{"NullExecutionDate", "SELECT count(*) FROM tasks WHERE execution_date IS NULL"},
		{"DetailWithQuote", `SELECT count(*) FROM tasks WHERE detail LIKE '%"%'`},
		{"DetailWithNewline", "SELECT count(*) FROM tasks WHERE detail LIKE E'%\\n%'"},
		{"DetailWithComma", "SELECT count(*) FROM tasks WHERE detail LIKE '%,%'"},
		{"FormulaLikeDetail", "SELECT count(*) FROM tasks WHERE left(detail, 1) IN ('=', '+', '-', '@')"},
		{"ServiceCostWithCents", "SELECT count(*) FROM services WHERE cost <> trunc(cost)"},
		{"InactiveUser", "SELECT count(*) FROM users WHERE status <> 'A'"},
		{"UserNeverEntered", "SELECT count(*) FROM users WHERE last_entry IS NULL"},
		{"UserNeverUpdated", "SELECT count(*) FROM users WHERE updated_at IS NULL"},
		{"LowerCaseK", "SELECT count(*) FROM clients WHERE rut LIKE '%k'"},
	}
	for _, tt := range exists {
		if queryInt(t, pool, tt.sql) == 0 {
			t.Errorf("%s: none in the seed (%s)", tt.name, tt.sql)
		}
	}
	none := []struct {
		name string
		sql  string
	}{
		{"DuplicateClientRUT", "SELECT count(*) FROM (SELECT rut_key(rut) FROM clients GROUP BY 1 HAVING count(*) > 1) x"},
		{"DuplicateCode", "SELECT count(*) FROM (SELECT code FROM contracts GROUP BY 1 HAVING count(*) > 1) x"},
		{"BadCode", `SELECT count(*) FROM contracts WHERE code !~ '^CT-20(2[1-5])-\d{6}$'`},
		{"BadPhone", `SELECT count(*) FROM clients WHERE phone !~ '^\+56 (9 \d{4}|2 2\d{3}) \d{4}$'`},
		{"BadEmail", `SELECT count(*) FROM clients WHERE email !~ '^[a-z0-9._]+@[a-z.]+$'`},
		{"BadUsername", `SELECT count(*) FROM users WHERE username <> email OR username !~ '^[a-z0-9.]+@estudiolegal\.cl$'`},
		{"BadUserRUT", `SELECT count(*) FROM users WHERE rut !~ '^\d{7,8}-[0-9K]$'`},
		{"BadUserStatus", `SELECT count(*) FROM users WHERE status NOT IN ('A', 'I', 'B')`},
		{"CommuneOutsideRegion", `SELECT count(*) FROM clients WHERE commune = 'Temuco' AND region <> 'Región de La Araucanía'`},
		{"BadQuotas", "SELECT count(*) FROM contracts WHERE quantity_quotas NOT BETWEEN 1 AND 24"},
		{"ContractOutsideCalendar", "SELECT count(*) FROM contracts WHERE created_at < '2021-01-01' OR created_at >= '2026-01-01'"},
		{"ClientAfterFirstContract", `SELECT count(*) FROM clients cl WHERE created_at > (SELECT min(created_at) FROM contracts c WHERE c.client_id = cl.id)`},
		{"ClientWithoutContract", "SELECT count(*) FROM clients cl WHERE NOT EXISTS (SELECT 1 FROM contracts c WHERE c.client_id = cl.id)"},
	}
	for _, tt := range none {
		if got := queryInt(t, pool, tt.sql); got != 0 {
			t.Errorf("%s: %d rows (%s)", tt.name, got, tt.sql)
		}
	}

	// Every RUT stored anywhere is valid, whatever form it is in.
	rows, err := pool.Query(context.Background(), `
		SELECT rut FROM clients UNION SELECT client_rut FROM contracts
		UNION SELECT payer_rut FROM contracts UNION SELECT rut FROM users`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	form := regexp.MustCompile(`^(\d{7,8}|\d{1,2}\.\d{3}\.\d{3})-[0-9Kk]$`)
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		r, err := rut.Parse(s)
		if err != nil {
			t.Errorf("stored RUT: %v", err)
			continue
		}
		if r.Body < 5_000_000 || r.Body >= 25_000_000 || !form.MatchString(s) {
			t.Errorf("stored RUT %q out of range or form", s)
		}
		if strings.Count(s, "-") != 1 {
			t.Errorf("stored RUT %q", s)
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
}
