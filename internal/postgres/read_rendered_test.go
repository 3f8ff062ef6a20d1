package postgres_test

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/informe/informe/export"
	"github.com/informe/informe/internal/dataset"
	"github.com/informe/informe/internal/pgserver/pgtest"
	"github.com/informe/informe/internal/postgres"
	"github.com/informe/informe/internal/source"
	"github.com/informe/informe/report"
)

// edgeRows are rows whose text is easy to get wrong: accents, quotes and
// newlines, NULL and empty text in every kind of field, costs with trailing zeros
// and none, dates before Christ and past 9999, infinite dates,
// microseconds, a contract without processes, a process without tasks, a
// user with every nullable field NULL.
const edgeRows = `
INSERT INTO benefit_centers (id, name) VALUES (900001, 'Centro Ñuñoa "Sur"'), (900002, '');
INSERT INTO services (id, name, cost, benefit_center_id) VALUES
  (900001, 'Asesoría laboral, "urgente"', 1500.50, 900001),
  (900002, '', 150000.00, NULL),
  (900003, 'Mínimo', 0.01, 900002),
  (900004, 'Sin costo', 0, NULL),
  (900005, 'No es número', 'NaN', NULL);
INSERT INTO clients (id, rut, passport, first_name, second_name, last_name, second_last_name, email, phone,
  occupation, birth_date, country, marital_status, gender, region, commune, address) VALUES
  (900001, '12.345.678-5', NULL, 'José', '', 'Muñoz', NULL, 'jose@ejemplo.cl', '',
   E'línea uno\nlínea dos', '0044-03-15 BC', 'Chile', NULL, '', 'Región de Ñuble', 'Chillán', E'Calle "A", 1\r\n2'),
  (900002, '', '', '', NULL, '', '', NULL, NULL, NULL, 'infinity', '', '', NULL, NULL, NULL, NULL);
INSERT INTO contracts (id, client_id, service_id, status, code, quantity_quotas, date_first_payment, created_at,
  attended_by, client_rut, client_first_name, client_birth_date, payer_first_name, payer_birth_date) VALUES
  (900001, 900001, 900001, 'Vigente', 'C-Ñ-1', 0, '10000-01-01', '2024-02-29 23:59:59.999999',
   'Ana ''la jefa''', '12.345.678-5', 'José', '0001-01-01', '', '-infinity'),
  (900002, 900002, NULL, '', '', NULL, NULL, '1999-12-31 23:59:59.5', NULL, NULL, NULL, NULL, NULL, NULL),
  (900003, 900001, 900005, 'Terminado', 'C-3', 12, '2000-01-01', '0001-01-01 00:00:00', '', '', '', '9999-12-31', 'x', '2000-01-01'),
  (900004, 900002, 900002, 'Vigente', 'C-4', 2147483647, '1970-01-01', '2038-01-19 03:14:08', NULL, NULL, NULL, NULL, NULL, NULL);
INSERT INTO processes (id, contract_id, role, caption, process_date) VALUES
  (900001, 900001, 'Demandante', E'Pérez con Muñoz\tS.A.', '2023-06-30'),
  (900002, 900001, '', '', NULL),
  (900003, 900003, NULL, NULL, 'infinity'),
  (900004, 900004, 'Demandado', 'Rol C-1', '1900-02-28');
INSERT INTO tasks (id, process_id, name, title, detail, code, end_date, duration, status, progress, executor, execution_date) VALUES
  (900001, 900001, 'Audiencia', 'Preparación', E'Detalle con "comillas", comas; y\nsaltos', 'T-1', '2024-03-01', 0, 'Terminada', 100, 'Ana',
   '2024-03-01 12:34:56.789012+00'),
  (900002, 900001, 'Escrito', '', '', '', NULL, NULL, 'Pendiente', NULL, NULL, NULL),
  (900003, 900002, 'Ñandú', NULL, NULL, NULL, '0001-01-01 BC', 2147483647, 'En curso', 0, '', '1969-12-31 23:59:59.000001-03'),
  (900004, 900004, 'Plazo', 'x', 'y', 'z', '9999-12-31', 5, 'Terminada', 50, 'Luis', '2000-01-01 00:00:00+00'),
  (900005, 900004, 'Plazo 2', 'x', 'y', 'z', '2000-01-01', 5, 'Terminada', 50, 'Luis', '1900-01-01 00:00:00.5+05:30');
INSERT INTO users (id, name, email, username, rut, phone, last_entry, status, created_at, updated_at) VALUES
  (900001, 'Renée Ñúñez', 'renee@ejemplo.cl', 'renee', '11.111.111-1', NULL, NULL, 'A', '2024-01-01 00:00:00.999999', NULL),
  (900002, 'Quote "q"', 'q@ejemplo.cl', 'q', '', '', '0044-01-01 01:02:03 BC', 'I', '10000-01-01 00:00:00', 'infinity');
` + scheduleRuns

// scheduleRuns is a run history, which the demo data has none of: a
// schedule and runs of every outcome, NULLs and offsets included; other
// schedules, paused or not; and audit records.
const scheduleRuns = `
INSERT INTO schedules (id, name, dataset, format, cron, destination, token_name, next_run) VALUES
  (900001, 'finanzas-diario', 'general-report', 'csv', '0 6 * * *', 'file:///srv/finanzas/pendientes-{date}.csv', 'finanzas', '2026-01-02 09:00:00+00');
INSERT INTO schedules (name, dataset, format, cron, time_zone, destination, token_name, paused, next_run, created_at, changed_at)
SELECT 'cobranza-' || i || (ARRAY['', ' ñandú', ' "q"'])[1 + i % 3], (ARRAY['contracts', 'clients', 'users'])[1 + i % 3],
       (ARRAY['xlsx', 'parquet', 'ndjson', 'csv'])[1 + i % 4], '30 ' || i || ' * * 1-5',
       (ARRAY['America/Santiago', 'UTC', 'America/Punta_Arenas'])[1 + i % 3],
       's3://cobranza/reportes/{date}.xlsx', 'cobranza', i % 4 = 3,
       '2026-03-01 06:30:00.000001-03'::timestamptz + i * interval '1 day 0.5 seconds',
       '1999-12-31 23:59:59.999999+00'::timestamptz + i * interval '100 days',
       '2026-01-01 00:00:00+05:30'::timestamptz + i * interval '1 hour'
FROM generate_series(0, 11) i;
INSERT INTO schedule_runs (schedule_id, schedule_name, occurrence, attempt, outcome, started_at, ended_at, rows, bytes, destination, file_name, reason, instance)
SELECT 900001, 'finanzas-diario', '2026-01-01 09:00:00+00'::timestamptz + i * interval '1 day', 1 + i % 2,
       (ARRAY['delivered', 'unchanged', 'failed', 'retried', 'running'])[1 + i % 5],
       '2026-01-01 09:00:00.000001-03'::timestamptz + i * interval '1 day 1.5 seconds',
       CASE WHEN i % 5 = 4 THEN NULL ELSE '2026-01-01 09:00:03.5+00'::timestamptz + i * interval '1 day' END,
       CASE WHEN i % 5 < 2 THEN i * 1000 END, CASE WHEN i % 5 < 2 THEN i * 123456 END,
       'file:///srv/finanzas/pendientes-{date}.csv', CASE WHEN i % 5 <> 4 THEN 'pendientes-2026-01-' || lpad((i + 1)::text, 2, '0') || '.csv' END,
       CASE WHEN i % 5 IN (2, 3) THEN 'full: there is no space left in /srv/finanzas' END, 'informe-1'
FROM generate_series(0, 14) i;
INSERT INTO audit_records (started_at, ended_at, request_id, principal, client_address, user_agent, path, dataset, query, rules,
  format, columns, rows, bytes, status, outcome, reason, requests, instance)
SELECT '2026-01-01 09:00:00.000001-03'::timestamptz + i * interval '1 hour 0.25 seconds',
       CASE WHEN i % 6 = 5 THEN NULL ELSE '2026-01-01 12:00:03.5+00'::timestamptz + i * interval '1 hour' END,
       'req-' || i, (ARRAY['finanzas', 'ana@host', '(no valid token)'])[1 + i % 3],
       CASE WHEN i % 4 <> 3 THEN '10.0.0.' || i END, CASE WHEN i % 2 = 0 THEN E'Microsoft.Data.Mashup (Ñ "q")' END,
       'GET /api/general-report/export', 'general-report', CASE WHEN i % 3 <> 2 THEN '$filter=task_status%20eq%20%27Pendiente%27' END,
       CASE WHEN i % 5 = 1 THEN 'columns=no personal data; max_rows=5000' END,
       'csv', 'contract_id,client_rut', CASE WHEN i % 6 < 4 THEN i * 100 END, CASE WHEN i % 6 < 4 THEN i * 12345 END,
       CASE WHEN i % 6 = 5 THEN NULL ELSE 200 END,
       (ARRAY['complete', 'cut', 'failed', 'not_modified', 'refused', 'open'])[1 + i % 6],
       CASE WHEN i % 6 IN (1, 2, 4) THEN 'client_stalled' END, 1 + i % 3, 'informe-1'
FROM generate_series(0, 14) i;
`

// TestRenderedInGoAsInSQL reads every dataset as informe reads it, typed
// with Go writing the text, and as its SQL text view renders it, and checks
// that both are the same row for row and, through every encoder and
// option, byte for byte: the output of the text views is the contract.
func TestRenderedInGoAsInSQL(t *testing.T) {
	t.Parallel()
	pool := edgePool(t)
	sources := append([]*source.Source{source.Report(report.Maintained)}, source.All(source.Report(report.FromView))...)
	store := postgres.NewStore(pool)
	for i, s := range sources {
		d := s.Dataset
		name := d.Name
		if i < 2 {
			name += []string{"/Maintained", "/FromView"}[i]
		}
		t.Run(name, func(t *testing.T) {
			want, order := textRows(t, pool, d)
			if len(want) < 10 {
				t.Fatalf("only %d rows in %s", len(want), d.Text)
			}
			for _, r := range readings(d) {
				t.Run(r.name, func(t *testing.T) {
					got := r.read(t, store, d)
					if r.sorted {
						if len(got) != len(order) {
							t.Fatalf("read %d rows, the text view has %d", len(got), len(order))
						}
					} else {
						keys := make([]string, len(got))
						for i, g := range got {
							keys[i] = g.key
						}
						if strings.Join(keys, " ") != strings.Join(order, " ") {
							t.Fatalf("rows in another order or number than the text view's (%d against %d)", len(keys), len(order))
						}
					}
					var gotRows, wantRows [][][]byte
					for _, g := range got {
						w, ok := want[g.key]
						if !ok {
							t.Fatalf("row %s is not in the text view", g.key)
						}
						for i, c := range d.Columns {
							if !bytes.Equal(g.values[i], w[i]) || (g.values[i] == nil) != (w[i] == nil) {
								t.Errorf("row %s, %s: Go wrote %s, SQL %s", g.key, c.Name, showValue(g.values[i]), showValue(w[i]))
							}
						}
						gotRows, wantRows = append(gotRows, g.values), append(wantRows, w)
					}
					if t.Failed() {
						return
					}
					for _, enc := range encodings() {
						g, gerr := encode(enc, d.Columns, gotRows)
						w, werr := encode(enc, d.Columns, wantRows)
						if fmt.Sprint(gerr) != fmt.Sprint(werr) {
							t.Errorf("%s: Go's rows end in %v, SQL's in %v", enc.name, gerr, werr)
						}
						if !bytes.Equal(g, w) {
							t.Errorf("%s: %d bytes from Go's rows differ from the %d of SQL's", enc.name, len(g), len(w))
						}
					}
				})
			}
		})
	}
}

// showValue writes a value for a message: NULL, or quoted.
func showValue(v []byte) string {
	if v == nil {
		return "NULL"
	}
	return fmt.Sprintf("%q", v)
}

// edgePool returns a pool on the small seeded demo with the edge rows.
func edgePool(t *testing.T) *pgxpool.Pool {
	t.Helper()
	pool := pgtest.SmallSeeded(t)
	if _, err := pool.Exec(context.Background(), edgeRows); err != nil {
		t.Fatal(err)
	}
	return pool
}

// keyPart is the i-th key part over alias as an integer, 0 for NULL.
func keyPart(alias string, i int, col string) string {
	if i == 0 {
		return alias + "." + col
	}
	return "coalesce(" + alias + "." + col + ", 0)"
}

// keyText returns d's key over alias r as one text, for matching rows.
func keyText(d *dataset.Dataset) string {
	parts := make([]string, len(d.Keys))
	for i, k := range d.Keys {
		parts[i] = keyPart("r", i, k) + "::text"
	}
	return strings.Join(parts, " || ',' || ")
}

// textRows returns the rows of d's text view by key, and the keys in d's
// order.
func textRows(t *testing.T, pool *pgxpool.Pool, d *dataset.Dataset) (map[string][][]byte, []string) {
	t.Helper()
	cols := make([]string, len(d.Columns))
	for i, c := range d.Columns {
		cols[i] = "r." + pgx.Identifier{c.Name}.Sanitize()
	}
	var order []string
	for i, k := range d.Keys {
		order = append(order, keyPart("r", i, k))
	}
	sql := "SELECT " + strings.Join(cols, ", ") + ", " + keyText(d) + " FROM " + pgx.Identifier{d.Text}.Sanitize() +
		" r ORDER BY " + strings.Join(order, ", ")
	rows, err := pool.Query(context.Background(), sql, pgx.QueryExecModeSimpleProtocol)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	m := map[string][][]byte{}
	var keys []string
	for rows.Next() {
		raw := rows.RawValues()
		vals := make([][]byte, len(d.Columns))
		for i := range vals {
			if raw[i] != nil {
				vals[i] = bytes.Clone(raw[i])
				if vals[i] == nil {
					vals[i] = []byte{}
				}
			}
		}
		key := string(raw[len(d.Columns)])
		m[key] = vals
		keys = append(keys, key)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return m, keys
}

type row struct {
	key    string
	values [][]byte
}

type reading struct {
	name   string
	sorted bool // in another order than the key's
	read   func(t *testing.T, store *postgres.Store, d *dataset.Dataset) []row
}

// readings are the ways informe reads a dataset: its plain reading, the
// typed statement of a filtered export, a sorted one, and pages of 997
// rows one after the other.
func readings(d *dataset.Dataset) []reading {
	whole := func(build func(q *dataset.Query)) func(t *testing.T, store *postgres.Store, d *dataset.Dataset) []row {
		return func(t *testing.T, store *postgres.Store, d *dataset.Dataset) []row {
			q := dataset.Whole()
			q.Position = true
			build(&q)
			return readAll(t, store, d, q)
		}
	}
	return []reading{
		{"Plain", false, whole(func(q *dataset.Query) {})},
		{"Typed", false, whole(func(q *dataset.Query) {
			q.Filters = append(q.Filters, &dataset.Expr{Op: dataset.Literal, Type: dataset.Bool, Value: true})
		})},
		{"Sorted", true, whole(func(q *dataset.Query) {
			q.Sort = []dataset.Sort{{Property: d.Columns[len(d.Columns)/2].Name, Desc: true}}
		})},
		{"Pages", false, func(t *testing.T, store *postgres.Store, d *dataset.Dataset) []row {
			var out []row
			for skip := int64(0); ; skip += 997 {
				q := dataset.Query{Skip: skip, Limit: 997, Count: true, Position: true}
				page := readAll(t, store, d, q)
				out = append(out, page...)
				if len(page) < 997 {
					return out
				}
			}
		}},
	}
}

// readAll reads q's rows of d, each with its key as keyText writes it.
func readAll(t *testing.T, store *postgres.Store, d *dataset.Dataset, q dataset.Query) []row {
	t.Helper()
	cur, err := store.Open(context.Background(), d, q)
	if err != nil {
		t.Fatal(err)
	}
	defer cur.Close()
	var out []row
	for cur.Next() {
		v := cur.Values()
		vals := make([][]byte, len(d.Columns))
		for i := range vals {
			if v[i] != nil {
				vals[i] = append([]byte{}, v[i]...)
			}
		}
		var key string
		if d.KeyColumn != "" {
			for i, c := range d.Columns {
				if c.Name == d.KeyColumn {
					key = string(v[i])
				}
			}
		} else {
			parts := make([]string, len(d.Keys))
			for i := range parts {
				parts[i] = string(v[len(d.Columns)+i])
			}
			key = strings.Join(parts, ",")
		}
		out = append(out, row{key: key, values: vals})
	}
	if err := cur.Close(); err != nil {
		t.Fatal(err)
	}
	return out
}

type encoding struct {
	name   string
	format export.Format
	opts   export.Options
}

// encodings are every format with every option.
func encodings() []encoding {
	out := []encoding{
		{"JSON", export.JSON, export.Options{Rows: -1}},
		{"JSONPage", export.JSON, export.Options{Rows: -1, Envelope: &export.Envelope{TotalPages: 1, CurrentPage: 1}}},
		{"NDJSON", export.NDJSON, export.Options{Rows: -1}},
		{"XLSX", export.XLSX, export.Options{Rows: -1, Sheet: "datos"}},
		{"Parquet", export.Parquet, export.Options{Rows: -1}},
		{"Arrow", export.Arrow, export.Options{Rows: -1}},
	}
	for _, d := range export.Delimiters {
		for _, bom := range []bool{false, true} {
			for _, noHeader := range []bool{false, true} {
				out = append(out, encoding{fmt.Sprintf("CSV/%s/bom=%v/noheader=%v", d.Name, bom, noHeader), export.CSV,
					export.Options{Rows: -1, CSV: export.CSVOptions{Delimiter: d.Byte, BOM: bom, NoHeader: noHeader}}})
			}
		}
	}
	return out
}

// encode writes rows of cols as enc says, returning the bytes and the
// encoder's error.
func encode(enc encoding, cols []dataset.Column, rows [][][]byte) ([]byte, error) {
	var buf bytes.Buffer
	e, err := export.NewEncoder(&buf, enc.format, cols, enc.opts)
	if err != nil {
		return nil, err
	}
	for _, r := range rows {
		if err := e.Encode(r); err != nil {
			e.Close()
			return buf.Bytes(), err
		}
	}
	err = e.Close()
	return buf.Bytes(), err
}

// TestTypedValues reads the report with [dataset.Query.Typed], as the
// typed formats do: every text value is the API's text, and every other
// one the binary value of that text (dataset.ParseValue,
// dataset.AppendValue), but for the dates and timestamps before Christ of
// the edge rows, which are the values of their text with its era, where
// the API's text writes their year alone. A NaN cost, which no typed
// format holds, is refused, naming its column.
func TestTypedValues(t *testing.T) {
	t.Parallel()
	pool := edgePool(t)
	store := postgres.NewStore(pool)
	d := source.Report(report.Maintained).Dataset
	plain := readings(d)[0].read(t, store, d)
	byKey := map[string]row{}
	for _, r := range plain {
		byKey[r.key] = r
	}

	q := dataset.Whole()
	q.Position, q.Typed = true, true
	cur, err := store.Open(context.Background(), d, q)
	if err != nil {
		t.Fatal(err)
	}
	for cur.Next() {
	}
	if err := cur.Close(); err == nil || !strings.Contains(err.Error(), "costo_servicio") {
		t.Fatalf("reading a NaN cost typed: error %v, want one naming costo_servicio", err)
	}

	q.Filters = append(q.Filters, &dataset.Expr{Op: dataset.Compare, Type: dataset.Bool, Name: "ne", Args: []*dataset.Expr{
		{Op: dataset.Property, Type: dataset.Number, Column: "costo_servicio", Kind: dataset.Decimal},
		{Op: dataset.Literal, Type: dataset.Number, Value: "NaN"},
	}})
	typed := readAll(t, store, d, q)
	if len(typed) == 0 || len(typed) >= len(plain) {
		t.Fatalf("read %d rows typed but the NaN cost's, %d as text", len(typed), len(plain))
	}
	bc, values := 0, 0
	for _, k := range typed {
		p, ok := byKey[k.key]
		if !ok {
			t.Fatalf("row %s was read typed, not as text", k.key)
		}
		for j, c := range d.Columns {
			v, p := k.values[j], p.values[j]
			binary := func(text []byte) []byte {
				x, ok := dataset.ParseValue(c.Kind, text)
				if !ok {
					return nil
				}
				return dataset.AppendValue(nil, c.Kind, x)
			}
			switch {
			case c.Kind == dataset.Text || len(p) == 0:
				if !bytes.Equal(v, p) || (v == nil) != (p == nil) {
					t.Errorf("row %s, %s: %s typed, %s as text", k.key, c.Name, showValue(v), showValue(p))
				}
			case bytes.Equal(v, binary(p)):
				values++
			case bytes.Equal(v, binary(append(bytes.Clone(p), " BC"...))):
				bc++
			default:
				t.Errorf("row %s, %s: %s typed, %s as text", k.key, c.Name, showValue(v), showValue(p))
			}
		}
	}
	if bc < 2 || values < 1000 {
		t.Errorf("%d typed values, %d before Christ; want 1000 and the edge rows' 2 or more", values, bc)
	}
}

// TestSortedPages reads the report sorted, in pages of 997 rows, as OData
// pages a sorted feed: by a cost that many rows share (through its index's
// bound and without it), by a status, and by a date that is often NULL,
// each way up. The pages, those whose rows span several sort values read
// through their keys first (sortedKeys), those of one value read whole,
// must give the rows of one sorted reading of them all, in its order.
func TestSortedPages(t *testing.T) {
	t.Parallel()
	pool := edgePool(t)
	store := postgres.NewStore(pool)
	d := source.Report(report.Maintained).Dataset
	for _, col := range []string{"costo_servicio", "task_status", "task_end_date"} {
		for _, desc := range []bool{false, true} {
			for _, bound := range []bool{false, true} {
				t.Run(fmt.Sprintf("%s/desc=%v/bound=%v", col, desc, bound), func(t *testing.T) {
					// An index's bound is taken where the dataset declares
					// one on the column: declared here, or not.
					d := *d
					d.OData.SortIndexed = nil
					if bound {
						d.OData.SortIndexed = []string{col}
					}
					sort := []dataset.Sort{{Property: col, Desc: desc}}
					whole := dataset.Whole()
					whole.Position, whole.Sort = true, sort
					want := readAll(t, store, &d, whole)
					var got []row
					for skip := int64(0); ; skip += 997 {
						q := dataset.Query{Skip: skip, Limit: 997, Position: true, Sort: sort}
						page := readAll(t, store, &d, q)
						got = append(got, page...)
						if len(page) < 997 {
							break
						}
					}
					if len(got) != len(want) {
						t.Fatalf("pages gave %d rows, one reading %d", len(got), len(want))
					}
					for i := range got {
						if got[i].key != want[i].key {
							t.Fatalf("row %d: key %s in the pages, %s in one reading", i, got[i].key, want[i].key)
						}
						for j, c := range d.Columns {
							if !bytes.Equal(got[i].values[j], want[i].values[j]) || (got[i].values[j] == nil) != (want[i].values[j] == nil) {
								t.Fatalf("row %s, %s: %s in the pages, %s in one reading", got[i].key, c.Name, showValue(got[i].values[j]), showValue(want[i].values[j]))
							}
						}
					}
				})
			}
		}
	}
}
