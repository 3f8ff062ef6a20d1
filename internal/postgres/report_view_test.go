package postgres_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/informe/informe/internal/pgserver/pgtest"
	"github.com/informe/informe/internal/rut"
)

// fixture is a small hand-made set of rows whose report is known exactly.
// Ids are chosen so that text order and numeric order differ (9 < 10 < 100).
//
//	contract 9:   no process
//	contract 10:  process 19 with tasks 31 and 30, process 20 without tasks
//	contract 100: process 5 with task 7; every nullable column NULL
const fixture = `
INSERT INTO benefit_centers (id, name) VALUES (1, 'Providencia');
INSERT INTO services (id, name, cost, benefit_center_id) VALUES
    (1, 'Divorcio de mutuo acuerdo', 350000.00, 1),
    (2, 'Certificado', 1500.50, NULL);
INSERT INTO clients (id, rut, passport, first_name, second_name, last_name, second_last_name, email, phone,
                     occupation, birth_date, country, marital_status, gender, region, commune, address, created_at)
VALUES (1, '12.345.678-5', NULL, 'José', 'María', 'Núñez', 'Ibáñez', 'jose.nunez@gmail.com', '+56 9 1234 5678',
        'Profesor', '1980-12-31', 'Chile', 'Casado', 'Masculino', 'Región de Ñuble', 'Chillán',
        'Av. O''Higgins 123, depto. 4', '2024-01-02 03:04:05'),
       (2, '10000013-k', NULL, 'Ana', NULL, 'Soto', NULL, NULL, NULL,
        NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, '2024-01-02 03:04:05');
INSERT INTO contracts (id, client_id, service_id, status, code, quantity_quotas, date_first_payment, created_at,
                       attended_by, client_rut, client_first_name, client_last_name, client_birth_date,
                       payer_rut, payer_first_name, payer_last_name, payer_birth_date)
VALUES (9, 1, 1, 'APROBADO', 'CT-2024-000009', 12, '2024-04-01', '2024-03-05 14:07:09',
        'Ana Soto', '12345678-5', 'José', 'Núñez', '1980-12-31', '7654321-6', 'Pedro', 'Pérez', '1955-01-09'),
       (10, 1, 2, 'PENDIENTE', 'CT-2024-000010', 1, '2024-04-02', '2024-03-06 23:59:59.999',
        NULL, '12345678-5', 'José', 'Núñez', NULL, NULL, NULL, NULL, NULL),
       (100, 2, NULL, 'ANULADO', 'CT-2024-000100', NULL, NULL, '2024-03-07 00:00:00',
        NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL);
INSERT INTO processes (id, contract_id, role, caption, process_date) VALUES
    (20, 10, NULL, NULL, NULL),
    (19, 10, 'Demandante', 'NÚÑEZ con PÉREZ', '2024-03-10'),
    (5, 100, NULL, NULL, NULL);
INSERT INTO tasks (id, process_id, name, title, detail, code, end_date, duration, status, progress, executor, execution_date)
VALUES (31, 19, 'Audiencia', 'Audiencia preparatoria', 'Fijada, "sin" cambios' || E'\n' || 'segunda línea', 'TK-31',
        '2024-05-31', 90, 'En Curso', 45, 'Ana Soto', '2024-06-01 00:00:00+00'),
       (30, 19, 'Demanda', 'Redacción', '=HYPERLINK("x")', 'TK-30',
        '2024-05-30', 0, 'Pendiente', 0, 'Ana Soto', '2024-03-05 14:07:09.123456-03'),
       (7, 5, 'Cierre', NULL, NULL, NULL, NULL, NULL, 'Cancelado', NULL, NULL, NULL);
`

func fixtureDB(t *testing.T) *pgxpool.Pool {
	t.Helper()
	pool := pgtest.New(t)
	if _, err := pool.Exec(context.Background(), fixture); err != nil {
		t.Fatal(err)
	}
	return pool
}

// reportColumns are the 74 report fields, in the view's order.
func reportColumns(t *testing.T, pool *pgxpool.Pool) []string {
	t.Helper()
	rows, err := pool.Query(context.Background(), "SELECT * FROM general_report LIMIT 0")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var cols []string
	for _, f := range rows.FieldDescriptions() {
		if !strings.HasPrefix(f.Name, "key_") {
			cols = append(cols, f.Name)
		}
	}
	if len(cols) != 74 {
		t.Fatalf("general_report has %d fields, want 74", len(cols))
	}
	return cols
}

// reportRows reads the whole report as maps from field to text, ordered
// by the key columns, through q (a pool or a transaction).
func reportRows(t *testing.T, q interface {
	Query(context.Context, string, ...any) (pgx.Rows, error)
}, where string) []map[string]string {
	t.Helper()
	rows, err := q.Query(context.Background(), "SELECT * FROM general_report "+where+
		" ORDER BY key_contract_id, key_process_id, key_task_id")
	if err != nil {
		t.Fatal(err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (map[string]string, error) {
		vals, err := row.Values()
		if err != nil {
			return nil, err
		}
		m := make(map[string]string)
		for i, f := range row.FieldDescriptions() {
			if strings.HasPrefix(f.Name, "key_") {
				continue
			}
			s, ok := vals[i].(string)
			if !ok {
				return nil, fmt.Errorf("%s is %T (%v), want a string", f.Name, vals[i], vals[i])
			}
			m[f.Name] = s
		}
		return m, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// processAndTaskFields are the report fields that come from a process or
// a task.
var processAndTaskFields = []string{"process_id", "process_role", "caratulado_process", "process_date",
	"task", "task_title", "task_detail", "task_code", "task_end_date", "task_duration", "task_status",
	"task_progress", "task_executor", "execution_date"}

func TestReportRowSemantics(t *testing.T) {
	t.Parallel()
	pool := fixtureDB(t)
	rows := reportRows(t, pool, "")
	type key struct{ contract, process, task, taskName string }
	var got []key
	for _, r := range rows {
		got = append(got, key{r["contract_id"], r["process_id"], r["task_code"], r["task"]})
	}
	want := []key{
		{"9", "", "", ""},                // no process: one row
		{"10", "19", "TK-30", "Demanda"}, // tasks in id order
		{"10", "19", "TK-31", "Audiencia"},
		{"10", "20", "", ""}, // process without tasks: one row
		{"100", "5", "", "Cierre"},
	}
	if !slices.Equal(got, want) {
		t.Fatalf("report rows\n got %v\nwant %v", got, want)
	}
	for _, field := range processAndTaskFields {
		if v := rows[0][field]; v != "" {
			t.Errorf("contract without process: %s = %q, want empty", field, v)
		}
	}
	for _, field := range processAndTaskFields[4:] {
		if v := rows[3][field]; v != "" {
			t.Errorf("process without tasks: %s = %q, want empty", field, v)
		}
	}
	if got, want := rows[3]["process_id"], "20"; got != want {
		t.Errorf("process without tasks: process_id = %q, want %q", got, want)
	}
	// Contract, service and client fields repeat on every row of a contract.
	for _, field := range []string{"contract_id", "code_contract", "service", "costo_servicio", "client_id", "client_rut", "first_name_client"} {
		if rows[1][field] != rows[2][field] || rows[2][field] != rows[3][field] {
			t.Errorf("%s differs between rows of contract 10: %q %q %q", field, rows[1][field], rows[2][field], rows[3][field])
		}
	}
}

func TestReportFormats(t *testing.T) {
	t.Parallel()
	pool := fixtureDB(t)
	type cell struct {
		row         int
		field, want string
	}
	cells := []cell{
		{0, "contract_id", "9"},
		{0, "contract_status", "APROBADO"},
		{0, "quantity_quotas", "12"},
		{0, "date_first_payment", "2024-04-01"},
		{0, "contract_creation_date", "2024-03-05 14:07:09"},
		{0, "client_birth_date_contract", "1980-12-31"},
		{0, "payer_birth_date_contract", "1955-01-09"},
		{0, "rut_payer_contract", "7654321-6"},
		{0, "costo_servicio", "350000"},
		{0, "benefit_center_id_service", "1"},
		{0, "benefit_center_service", "Providencia"},
		{0, "client_id", "1"},
		{0, "client_rut", "12.345.678-5"},
		{0, "first_name_client", "José"},
		{0, "last_name_client", "Núñez"},
		{0, "client_birth_date", "1980-12-31"},
		{0, "client_address", "Av. O'Higgins 123, depto. 4"},
		{0, "client_region", "Región de Ñuble"},
		// Fractions of a second are cut, not rounded.
		{1, "contract_creation_date", "2024-03-06 23:59:59"},
		{1, "costo_servicio", "1500.5"},
		{1, "benefit_center_id_service", ""},
		{1, "benefit_center_service", ""},
		{1, "attended_by", ""},
		{1, "process_date", "2024-03-10"},
		{1, "caratulado_process", "NÚÑEZ con PÉREZ"},
		{1, "task_end_date", "2024-05-30"},
		{1, "task_duration", "0"},
		{1, "task_progress", "0"},
		{1, "task_detail", `=HYPERLINK("x")`},
		{1, "execution_date", "2024-03-05 17:07:09.123456+00"},
		{2, "execution_date", "2024-06-01 00:00:00.000000+00"},
		{2, "task_detail", "Fijada, \"sin\" cambios\nsegunda línea"},
		{2, "task_duration", "90"},
		{2, "task_progress", "45"},
		{2, "task_status", "En Curso"},
		{4, "contract_status", "ANULADO"},
		{4, "quantity_quotas", ""},
		{4, "date_first_payment", ""},
		{4, "contract_creation_date", "2024-03-07 00:00:00"},
		{4, "service", ""},
		{4, "costo_servicio", ""},
		{4, "process_role", ""},
		{4, "caratulado_process", ""},
		{4, "process_date", ""},
		{4, "task_title", ""},
		{4, "task_end_date", ""},
		{4, "task_duration", ""},
		{4, "task_progress", ""},
		{4, "execution_date", ""},
		{4, "client_rut", "10000013-k"},
		{4, "client_birth_date", ""},
		{4, "rut_client_contract", ""},
	}
	sessions := []struct {
		name string
		set  []string
	}{
		{"ServerDefaults", nil},
		{"SantiagoDMY", []string{"SET LOCAL TimeZone = 'America/Santiago'", "SET LOCAL DateStyle = 'SQL, DMY'"}},
		{"FarEastISO", []string{"SET LOCAL TimeZone = 'Asia/Tokyo'", "SET LOCAL DateStyle = 'German'", "SET LOCAL extra_float_digits = 3"}},
	}
	for _, s := range sessions {
		t.Run(s.name, func(t *testing.T) {
			ctx := context.Background()
			tx, err := pool.Begin(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer tx.Rollback(ctx)
			for _, q := range s.set {
				if _, err := tx.Exec(ctx, q); err != nil {
					t.Fatal(err)
				}
			}
			rows := reportRows(t, tx, "")
			if len(rows) != 5 {
				t.Fatalf("%d rows, want 5", len(rows))
			}
			for _, c := range cells {
				if got := rows[c.row][c.field]; got != c.want {
					t.Errorf("row %d %s = %q, want %q", c.row, c.field, got, c.want)
				}
			}
		})
	}
}

// TestReportFormatsSeeded checks every value of a seeded report against
// the format of its field, and that each format is actually exercised.
func TestReportFormatsSeeded(t *testing.T) {
	t.Parallel()
	pool := seeded(t)
	formats := []struct {
		re     string
		fields []string
	}{
		{`^\d{4}-\d{2}-\d{2}$`, []string{"date_first_payment", "client_birth_date_contract", "payer_birth_date_contract",
			"process_date", "task_end_date", "client_birth_date"}},
		{`^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$`, []string{"contract_creation_date"}},
		{`^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}\.\d{6}\+00$`, []string{"execution_date"}},
		{`^[1-9]\d*$`, []string{"contract_id", "quantity_quotas", "benefit_center_id_service", "process_id", "client_id"}},
		{`^(0|[1-9]\d*)$`, []string{"task_duration", "task_progress"}},
		{`^(0|[1-9]\d*)(\.\d*[1-9])?$`, []string{"costo_servicio"}},
		{`^\+56 \d`, []string{"client_phone_contract", "payer_phone_contract", "client_phone"}},
	}
	for _, f := range formats {
		for _, field := range f.fields {
			id := pgx.Identifier{field}.Sanitize()
			bad := queryInt(t, pool, fmt.Sprintf("SELECT count(*) FROM general_report WHERE %s <> '' AND %s !~ $1", id, id), f.re)
			if bad != 0 {
				ex := queryString(t, pool, fmt.Sprintf("SELECT %s FROM general_report WHERE %s <> '' AND %s !~ $1 LIMIT 1", id, id, id), f.re)
				t.Errorf("%s: %d values do not match %s, such as %q", field, bad, f.re, ex)
			}
			if queryInt(t, pool, fmt.Sprintf("SELECT count(*) FROM general_report WHERE %s <> ''", id)) == 0 {
				t.Errorf("%s: never set in the seed", field)
			}
		}
	}
	// No field is ever NULL: absent values are ''.
	cols := reportColumns(t, pool)
	var nulls []string
	for _, c := range cols {
		nulls = append(nulls, pgx.Identifier{c}.Sanitize()+" IS NULL")
	}
	if n := queryInt(t, pool, "SELECT count(*) FROM general_report WHERE "+strings.Join(nulls, " OR ")); n != 0 {
		t.Errorf("%d report rows have a NULL field", n)
	}
	// A rendered cost reads back as the stored one.
	if n := queryInt(t, pool, `SELECT count(*) FROM general_report g JOIN contracts c ON c.id = g.key_contract_id
		JOIN services s ON s.id = c.service_id WHERE g.costo_servicio::numeric <> s.cost`); n != 0 {
		t.Errorf("%d rows whose costo_servicio differs from the service's cost", n)
	}
	// The report holds every contract, each on consecutive rows.
	if got, want := queryInt(t, pool, "SELECT count(DISTINCT key_contract_id) FROM general_report"),
		queryInt(t, pool, "SELECT count(*) FROM contracts"); got != want {
		t.Errorf("report has %d contracts, the table %d", got, want)
	}
	// One row per task, per process without tasks, per contract without processes.
	tests := []struct {
		name      string
		got, want string
	}{
		{"RowsWithTask", "SELECT count(*) FROM general_report WHERE key_task_id IS NOT NULL", "SELECT count(*) FROM tasks"},
		{"RowsWithProcessOnly", "SELECT count(*) FROM general_report WHERE key_process_id IS NOT NULL AND key_task_id IS NULL",
			"SELECT count(*) FROM processes p WHERE NOT EXISTS (SELECT 1 FROM tasks t WHERE t.process_id = p.id)"},
		{"RowsWithContractOnly", "SELECT count(*) FROM general_report WHERE key_process_id IS NULL",
			"SELECT count(*) FROM contracts c WHERE NOT EXISTS (SELECT 1 FROM processes p WHERE p.contract_id = c.id)"},
		{"RowsWithoutProcessHaveEmptyFields", "SELECT count(*) FROM general_report WHERE key_process_id IS NULL AND " +
			"process_id || process_role || caratulado_process || process_date || task || task_title || task_detail || " +
			"task_code || task_end_date || task_duration || task_status || task_progress || task_executor || execution_date = ''",
			"SELECT count(*) FROM general_report WHERE key_process_id IS NULL"},
		{"ClientMatchesContract", "SELECT count(*) FROM general_report g JOIN contracts c ON c.id = g.key_contract_id WHERE g.client_id = c.client_id::text",
			"SELECT count(*) FROM general_report"},
	}
	for _, tt := range tests {
		if got, want := queryInt(t, pool, tt.got), queryInt(t, pool, tt.want); got != want || got == 0 {
			t.Errorf("%s: %d, want %d (and not 0)", tt.name, got, want)
		}
	}
}

func TestRUTKeyMatchesSQL(t *testing.T) {
	t.Parallel()
	pool := seeded(t)
	ctx := context.Background()
	forms := []string{
		"12.345.678-5", "12345678-5", "123456785", "012345678-5", "012.345.678-5", "  12.345.678-5 ",
		"10.000.013-k", "10.000.013-K", "10000013k", "10000013-K", "7.654.321-6", "1-9", "00001-9",
		"99.999.999-9",
	}
	for _, s := range forms {
		r, err := rut.Parse(s)
		if err != nil {
			t.Fatalf("Parse(%q): %v", s, err)
		}
		if got, want := r.Key(), queryString(t, pool, "SELECT rut_key($1)", s); got != want {
			t.Errorf("rut %q: Key() = %q, rut_key = %q", s, got, want)
		}
	}
	// Every stored client RUT, in whatever form the seed stored it.
	rows, err := pool.Query(ctx, "SELECT rut, rut_key(rut) FROM clients")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for rows.Next() {
		var s, key string
		if err := rows.Scan(&s, &key); err != nil {
			t.Fatal(err)
		}
		r, err := rut.Parse(s)
		if err != nil {
			t.Fatalf("stored rut: %v", err)
		}
		if r.Key() != key {
			t.Errorf("rut %q: Key() = %q, rut_key = %q", s, r.Key(), key)
		}
		n++
	}
	if err := rows.Err(); err != nil || n == 0 {
		t.Fatalf("read %d clients: %v", n, err)
	}
	// The report's key finds a dotted client by its plain form.
	dotted := queryString(t, pool, "SELECT rut FROM clients WHERE rut LIKE '%.%' ORDER BY id LIMIT 1")
	r, _ := rut.Parse(dotted)
	if got := queryInt(t, pool, "SELECT count(*) FROM general_report WHERE key_client_rut = $1", r.Key()); got == 0 {
		t.Errorf("no report rows for client rut %q by key %q", dotted, r.Key())
	}
}
