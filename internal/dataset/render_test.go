package dataset_test

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/informe/informe/internal/dataset"
	"github.com/informe/informe/internal/pgserver/pgtest"
)

// The values each type is tested with: edge values, then random ones
// (random() after setseed, so every run reads the same values). Each query
// returns one column, v.
var (
	int2Values = `SELECT v FROM (VALUES (0::int2), (1), (-1), (10), (-10000), (32767), (-32768), (NULL)) e(v)
		UNION ALL SELECT (floor(random()*65536) - 32768)::int2 FROM generate_series(1, 1000)`
	int4Values = `SELECT v FROM (VALUES (0::int4), (1), (-1), (100000), (2147483647), (-2147483648), (NULL)) e(v)
		UNION ALL SELECT (floor(random()*4294967296) - 2147483648)::int4 FROM generate_series(1, 1000)`
	int8Values = `SELECT v FROM (VALUES (0::int8), (1), (-1), (9223372036854775807), (-9223372036854775808), (1000000000000), (NULL)) e(v)
		UNION ALL SELECT ((random() - 0.5) * 1.8e19)::int8 FROM generate_series(1, 1000)
		UNION ALL SELECT floor((random() - 0.5) * 2e6)::int8 FROM generate_series(1, 1000)`
	numericValues = `SELECT v FROM (VALUES (0::numeric), (0.000), (-0.5), (1500.50), (150000.00), (0.0001), (0.00010),
			(0.00000000000000000001), (-0.00000000000000000001), (10000), (100000000), (9999.9999), (10000.0001),
			(99999999999999999999.99999999999999999999), (-12345678901234567890.123), (0.1), (1), (-1), (12.3400),
			(1e100), (-1e100), (1.5e-50), (123456789012345678901234567890), (0.0000000000000000000000000000001000),
			('NaN'), ('Infinity'), ('-Infinity'), (NULL)) e(v)
		UNION ALL SELECT round(((random() - 0.5) * 10 ^ (floor(random()*40) - 20))::numeric, floor(random()*21)::int)
			FROM generate_series(1, 1500)
		UNION ALL SELECT ((CASE WHEN random() < 0.5 THEN '-' ELSE '' END) || floor(random()*1e12)::text || '.'
			|| lpad(floor(random()*1e12)::text, floor(random()*20)::int + 1, '0'))::numeric FROM generate_series(1, 1500)
		UNION ALL SELECT (floor(random()*1e7)::numeric / 100)::numeric(14,2) FROM generate_series(1, 1000)
		UNION ALL SELECT floor(random()*1e6)::numeric * 10::numeric ^ floor(random()*40 - 20)::int FROM generate_series(1, 500)`
	dateValues = `SELECT v FROM (VALUES ('4714-11-25 BC'::date), ('4713-01-01 BC'), ('0044-03-15 BC'), ('0001-12-31 BC'),
			('0001-01-01 BC'), ('0001-01-01'), ('0999-12-31'), ('1900-03-01'), ('1969-12-31'), ('1970-01-01'),
			('1999-12-31'), ('2000-01-01'), ('2000-02-29'), ('2024-01-02'), ('9999-12-31'), ('10000-01-01'),
			('294276-12-31'), ('infinity'), ('-infinity'), (NULL)) e(v)
		UNION ALL SELECT date '2000-01-01' + floor(random()*109203525 - 2451544)::int FROM generate_series(1, 1500)
		UNION ALL SELECT date '1900-01-01' + floor(random()*80000)::int FROM generate_series(1, 1500)
		UNION ALL SELECT date '0001-01-01' + floor(random()*2000 - 1000)::int FROM generate_series(1, 200)`
	timestampValues = `SELECT v FROM (VALUES ('4714-11-24 00:00:00 BC'::timestamp), ('0044-03-15 12:00:00 BC'),
			('0001-12-31 23:59:59.999999 BC'), ('0001-01-01 00:00:00'), ('1969-12-31 23:59:59.5'),
			('1999-12-31 23:59:59.999999'), ('1999-12-31 23:59:59'), ('2000-01-01 00:00:00'),
			('2000-01-01 00:00:00.000001'), ('9999-12-31 23:59:59.999999'), ('10000-01-01 00:00:00'),
			('294276-12-31 23:59:59.999999'), ('infinity'), ('-infinity'), (NULL)) e(v)
		UNION ALL SELECT timestamp '2000-01-01' + floor(random()*109203525 - 2451544)::int * interval '1 day'
			+ floor(random()*86400e6)::bigint * interval '1 microsecond' FROM generate_series(1, 1500)
		UNION ALL SELECT timestamp '1990-01-01' + floor(random()*20000)::int * interval '1 day'
			+ floor(random()*86400e6)::bigint * interval '1 microsecond' FROM generate_series(1, 1500)
		UNION ALL SELECT timestamp '2000-01-01' + floor(random()*40 - 20)::int * interval '1 year'
			+ floor((random() - 0.5)*7200e6)::bigint * interval '1 microsecond' FROM generate_series(1, 500)
		UNION ALL SELECT timestamp '0001-01-01' + floor((random() - 0.5)*2e6)::bigint * interval '1 second'
			FROM generate_series(1, 200)`
	// Timestamptz values keep a day away from the type's ends, where a
	// session's offset would take the local time it prints out of range.
	timestamptzValues = `SELECT v FROM (VALUES ('4714-11-25 00:00:00+00 BC'::timestamptz), ('0044-03-15 12:00:00+00 BC'),
			('0001-12-31 23:59:59.999999+00 BC'), ('0001-01-01 00:00:00+00'), ('1850-06-01 12:00:00.5+00'),
			('1916-10-01 02:00:00+00'), ('1969-12-31 23:59:59.5+00'), ('1999-12-31 23:59:59.999999+00'),
			('2000-01-01 00:00:00+00'), ('2000-01-01 00:00:00.000001+00'), ('2024-03-31 01:00:00+00'),
			('9999-12-31 23:59:59.999999+00'), ('10000-01-01 00:00:00+00'), ('294276-12-31 12:00:00.5+00'),
			('infinity'), ('-infinity'), (NULL)) e(v)
		UNION ALL SELECT timestamptz '2000-01-01 00:00:00+00' + floor(random()*109203524 - 2451543)::int * interval '1 day'
			+ floor(random()*86400e6)::bigint * interval '1 microsecond' FROM generate_series(1, 1500)
		UNION ALL SELECT timestamptz '1800-01-01 00:00:00+00' + floor(random()*60000)::int * interval '1 day'
			+ floor(random()*86400e6)::bigint * interval '1 microsecond' FROM generate_series(1, 1500)
		UNION ALL SELECT timestamptz '2000-01-01 00:00:00+00' + floor(random()*40 - 20)::int * interval '1 year'
			+ floor((random() - 0.5)*7200e6)::bigint * interval '1 microsecond' FROM generate_series(1, 500)`
	textValues = `SELECT v FROM (VALUES (''::text), ('a'), ('Ñuñoa'), ('comillas "dobles" y ''simples'''),
			(E'línea\nnueva\ttab\r'), ('  espacios  '), ('😀'), (repeat('x', 300)), (NULL)) e(v)
		UNION ALL SELECT md5(g::text) || repeat('é', g % 5) || repeat(' ', g % 3) FROM generate_series(1, 1500) g`
)

// sqlCase is a type and a kind it is read as, with the SQL text view's
// expression of the value v in that kind.
type sqlCase struct {
	name   string
	kind   dataset.Kind
	values string
	expr   string
}

var sqlCases = []sqlCase{
	{"int2", dataset.Integer, int2Values, "v::text"},
	{"int4", dataset.Integer, int4Values, "v::text"},
	{"int8", dataset.Integer, int8Values, "v::text"},
	{"numeric", dataset.Decimal, numericValues, "trim_scale(v)::text"},
	{"int2 decimal", dataset.Decimal, int2Values, "trim_scale(v)::text"},
	{"int4 decimal", dataset.Decimal, int4Values, "trim_scale(v)::text"},
	{"int8 decimal", dataset.Decimal, int8Values, "trim_scale(v)::text"},
	{"date", dataset.Date, dateValues, "to_char(v, 'YYYY-MM-DD')"},
	{"timestamp", dataset.Timestamp, timestampValues, "to_char(v, 'YYYY-MM-DD HH24:MI:SS')"},
	{"timestamptz", dataset.Timestamptz, timestamptzValues, "to_char(v AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS.US') || '+00'"},
	{"text", dataset.Text, textValues, "v"},
	{"varchar", dataset.Text, "SELECT v::varchar(40) FROM (" + textValues + ") s(v)", "v"},
	{"bpchar", dataset.Text, "SELECT v::char(12) FROM (" + textValues + ") s(v)", "v"},
	{"name", dataset.Text, "SELECT v::name FROM (" + textValues + ") s(v)", "v"},
}

// A way pgx reads a result: the default (binary for every type that has a
// binary format; asked for explicitly so that text types are read in binary
// too), and the two text modes used behind PgBouncer.
type readMode struct {
	name   string
	args   []any // the query's options, before its arguments
	binary bool
}

var readModes = []readMode{
	{"binary", []any{pgx.QueryExecModeCacheStatement, pgx.QueryResultFormats{1, 0, 0, 0}}, true},
	{"exec", []any{pgx.QueryExecModeExec}, false},
	{"simple", []any{pgx.QueryExecModeSimpleProtocol}, false},
}

var timeZones = []string{"UTC", "America/Santiago", "Asia/Kolkata", "Europe/Dublin"}

// TestRenderMatchesSQL reads thousands of values of every type next to the
// SQL text views' expression of them, in both wire formats and under
// several session time zones, and checks that Render writes the same bytes:
// as a Nullable column (NULL stays NULL) and as a column that is not
// (NULL is the empty text), with the expression passed through.
func TestRenderMatchesSQL(t *testing.T) {
	t.Parallel()
	matchesSQL(t, sqlCases, false)
}

// matchesSQL runs checkMatchesSQL on every case under each session time
// zone and way of reading.
func matchesSQL(t *testing.T, cases []sqlCase, era bool) {
	eachReading(t, cases, func(t *testing.T, conn *pgx.Conn, m readMode, c sqlCase) {
		checkMatchesSQL(t, conn, m.args, m.binary, c.kind, c.values, c.expr, era)
	})
}

// eachReading runs check, in a subtest, on every case under each session
// time zone and way of reading, on one connection.
func eachReading(t *testing.T, cases []sqlCase, check func(t *testing.T, conn *pgx.Conn, m readMode, c sqlCase)) {
	pool := pgtest.New(t)
	ctx := context.Background()
	conn := acquire(t, pool)
	for _, tz := range timeZones {
		if _, err := conn.Exec(ctx, "SET TimeZone = '"+tz+"'"); err != nil {
			t.Fatal(err)
		}
		for _, m := range readModes {
			for _, c := range cases {
				t.Run(tz+"/"+m.name+"/"+c.name, func(t *testing.T) { check(t, conn, m, c) })
			}
		}
	}
}

func acquire(t *testing.T, pool *pgxpool.Pool) *pgx.Conn {
	t.Helper()
	c, err := pool.Acquire(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	// The session's settings stay with this connection, which is not
	// given back to the pool.
	conn := c.Hijack()
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

// checkMatchesSQL reads values with expr beside each, and checks Render,
// with [dataset.Row.KeepEra] when era.
func checkMatchesSQL(t *testing.T, conn *pgx.Conn, opts []any, binary bool, kind dataset.Kind, values, expr string, era bool) {
	ctx := context.Background()
	if _, err := conn.Exec(ctx, "SELECT setseed(0.5)"); err != nil {
		t.Fatal(err)
	}
	sql := "SELECT v, " + expr + ", coalesce(" + expr + ", ''), v::text FROM (" + values + ") s(v)"
	rows, err := conn.Query(ctx, sql, opts...)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	fields := rows.FieldDescriptions()
	if want := int16(0); binary {
		want = 1
		if fields[0].Format != want {
			t.Fatalf("the value came in format %d, want %d", fields[0].Format, want)
		}
	} else if fields[0].Format != want {
		t.Fatalf("the value came in format %d, want %d", fields[0].Format, want)
	}
	nullable, err := dataset.NewRow([]dataset.Column{{Name: "v", Kind: kind, Nullable: true}}, fields)
	if err != nil {
		t.Fatal(err)
	}
	notNull, err := dataset.NewRow([]dataset.Column{{Name: "v", Kind: kind}}, fields[:1])
	if err != nil {
		t.Fatal(err)
	}
	if era {
		nullable.KeepEra()
		notNull.KeepEra()
	}
	n, bad := 0, 0
	for rows.Next() {
		raw := rows.RawValues()
		n++
		// Twice: the second time, a date or timestamp is the field's memo.
		for range 2 {
			got, err := nullable.Render(raw)
			if err != nil {
				t.Fatalf("value %s: %v", show(raw[3]), err)
			}
			if !same(got[0], raw[1]) || !same(got[1], raw[1]) || !same(got[2], raw[2]) {
				if bad++; bad <= 10 {
					t.Errorf("value %s: Render wrote %s, SQL %s", show(raw[3]), show(got[0]), show(raw[1]))
				}
			}
		}
		got, err := notNull.Render(raw[:1])
		if err != nil {
			t.Fatalf("value %s, not nullable: %v", show(raw[3]), err)
		}
		if !same(got[0], raw[2]) {
			if bad++; bad <= 10 {
				t.Errorf("value %s, not nullable: Render wrote %s, SQL %s", show(raw[3]), show(got[0]), show(raw[2]))
			}
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if n < 1000 {
		t.Fatalf("read %d values, want more than 1000", n)
	}
	if bad > 0 {
		t.Errorf("%d of %d values differ", bad, n)
	}
}

// same reports whether a and b are equal and both NULL (nil) or both not.
func same(a, b []byte) bool {
	return (a == nil) == (b == nil) && bytes.Equal(a, b)
}

// TestRenderKeepEra checks that with KeepEra a date or timestamp before
// Christ ends with " BC" after what to_char writes, and no other value
// changes: in both wire formats, under several session time zones (a
// timestamptz is before Christ in UTC).
func TestRenderKeepEra(t *testing.T) {
	t.Parallel()
	matchesSQL(t, []sqlCase{
		{"date", dataset.Date, dateValues, "to_char(v, 'YYYY-MM-DD') || CASE WHEN v < '0001-01-01' THEN ' BC' ELSE '' END"},
		{"timestamp", dataset.Timestamp, timestampValues,
			"to_char(v, 'YYYY-MM-DD HH24:MI:SS') || CASE WHEN v < '0001-01-01' THEN ' BC' ELSE '' END"},
		{"timestamptz", dataset.Timestamptz, timestamptzValues,
			"to_char(v AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS.US') || '+00' || CASE WHEN v < '0001-01-01 00:00:00+00' THEN ' BC' ELSE '' END"},
	}, true)
}

// TestRenderOutOfToChar checks the dates to_char refuses (past a
// timestamp's last day): Render refuses them too, in both formats.
func TestRenderOutOfToChar(t *testing.T) {
	t.Parallel()
	pool := pgtest.New(t)
	conn := acquire(t, pool)
	ctx := context.Background()
	if _, err := conn.Exec(ctx, "SELECT to_char('294277-01-01'::date, 'YYYY-MM-DD')"); err == nil {
		t.Fatal("PostgreSQL's to_char wrote a date past 294276, which this test says it refuses")
	}
	for _, m := range readModes {
		t.Run(m.name, func(t *testing.T) {
			rows, err := conn.Query(ctx, "SELECT v FROM (VALUES ('294277-01-01'::date), ('5874897-12-31')) e(v)", m.args[:1]...)
			if err != nil {
				t.Fatal(err)
			}
			defer rows.Close()
			r, err := dataset.NewRow([]dataset.Column{{Name: "due", Kind: dataset.Date}}, rows.FieldDescriptions())
			if err != nil {
				t.Fatal(err)
			}
			for rows.Next() {
				got, err := r.Render(rows.RawValues())
				if err == nil || !strings.Contains(err.Error(), "due") || !strings.Contains(err.Error(), "294276") {
					t.Errorf("Render = %q, %v; want an error naming due and to_char's last year", got, err)
				}
			}
			if err := rows.Err(); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestRenderRefusesOtherDateStyles checks that a date or timestamp read in
// text format under a DateStyle other than ISO is an error that says so.
func TestRenderRefusesOtherDateStyles(t *testing.T) {
	t.Parallel()
	pool := pgtest.New(t)
	conn := acquire(t, pool)
	ctx := context.Background()
	for _, style := range []string{"SQL, DMY", "SQL, MDY", "German", "Postgres, MDY"} {
		if _, err := conn.Exec(ctx, "SET DateStyle = '"+style+"'"); err != nil {
			t.Fatal(err)
		}
		for _, m := range readModes[1:] {
			for _, c := range []struct {
				kind  dataset.Kind
				value string
			}{
				{dataset.Date, "'2024-01-02'::date"},
				{dataset.Date, "'0044-03-15 BC'::date"},
				{dataset.Timestamp, "'2024-01-02 03:04:05.5'::timestamp"},
				{dataset.Timestamptz, "'2024-01-02 03:04:05.5+00'::timestamptz"},
			} {
				t.Run(style+"/"+m.name+"/"+c.value, func(t *testing.T) {
					rows, err := conn.Query(ctx, "SELECT "+c.value, m.args...)
					if err != nil {
						t.Fatal(err)
					}
					defer rows.Close()
					r, err := dataset.NewRow([]dataset.Column{{Name: "when", Kind: c.kind}}, rows.FieldDescriptions())
					if err != nil {
						t.Fatal(err)
					}
					if !rows.Next() {
						t.Fatal(rows.Err())
					}
					raw := rows.RawValues()
					got, err := r.Render(raw)
					if err == nil || !strings.Contains(err.Error(), "DateStyle ISO") || !strings.Contains(err.Error(), "when") {
						t.Errorf("Render(%q) = %q, %v; want an error naming the column and DateStyle ISO", raw[0], got, err)
					}
				})
			}
		}
	}
}

// TestRenderRefusesWrongTypes checks that New refuses a field whose type
// cannot hold its column's kind, and a pass-through field that is not
// text, naming the column or field and the type.
func TestRenderRefusesWrongTypes(t *testing.T) {
	t.Parallel()
	pool := pgtest.New(t)
	conn := acquire(t, pool)
	tests := []struct {
		name  string
		kind  dataset.Kind
		value string // a SELECT list: the column's field, then any pass-through
		want  []string
	}{
		{"TextAsDate", dataset.Date, "'2024-01-02'::text", []string{"col_x", "date", "text"}},
		{"DateAsDecimal", dataset.Decimal, "'2024-01-02'::date", []string{"col_x", "decimal", "date"}},
		{"NumericAsInteger", dataset.Integer, "1.5::numeric", []string{"col_x", "integer", "numeric"}},
		{"TextAsInteger", dataset.Integer, "'1'::text", []string{"col_x", "integer", "text"}},
		{"FloatAsDecimal", dataset.Decimal, "1.5::float8", []string{"col_x", "decimal", "float8"}},
		{"TimestamptzAsTimestamp", dataset.Timestamp, "now()", []string{"col_x", "timestamp", "timestamptz"}},
		{"TimestampAsTimestamptz", dataset.Timestamptz, "localtimestamp", []string{"col_x", "timestamptz", "timestamp"}},
		{"DateAsTimestamp", dataset.Timestamp, "current_date", []string{"col_x", "timestamp", "date"}},
		{"IntegerAsText", dataset.Text, "1", []string{"col_x", "text", "int4"}},
		{"UUIDAsText", dataset.Text, "gen_random_uuid()", []string{"col_x", "text", "uuid"}},
		{"IntegerPassedThrough", dataset.Text, "'a'::text, 42 AS sort_1", []string{"sort_1", "int4", "passed through"}},
		{"DatePassedThrough", dataset.Text, "'a'::text, current_date AS sort_1", []string{"sort_1", "date", "passed through"}},
	}
	for _, m := range readModes {
		for _, tt := range tests {
			t.Run(m.name+"/"+tt.name, func(t *testing.T) {
				rows, err := conn.Query(context.Background(), "SELECT "+tt.value, m.args[:1]...)
				if err != nil {
					t.Fatal(err)
				}
				fields := rows.FieldDescriptions()
				rows.Close()
				r, err := dataset.NewRow([]dataset.Column{{Name: "col_x", Kind: tt.kind}}, fields)
				if err == nil {
					t.Fatalf("New = %v, nil; want an error", r)
				}
				for _, w := range tt.want {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("New: %v; want it to say %q", err, w)
					}
				}
			})
		}
	}
}

// TestRenderNull checks NULL in every kind: nil in a Nullable column and
// a pass-through field, an empty non-nil value in other columns.
func TestRenderNull(t *testing.T) {
	t.Parallel()
	pool := pgtest.New(t)
	conn := acquire(t, pool)
	kinds := []struct {
		kind dataset.Kind
		typ  string
	}{
		{dataset.Text, "text"}, {dataset.Integer, "int8"}, {dataset.Decimal, "numeric"}, {dataset.Decimal, "int4"},
		{dataset.Date, "date"}, {dataset.Timestamp, "timestamp"}, {dataset.Timestamptz, "timestamptz"},
	}
	for _, m := range readModes {
		for _, k := range kinds {
			t.Run(m.name+"/"+k.typ, func(t *testing.T) {
				rows, err := conn.Query(context.Background(), "SELECT NULL::"+k.typ+", NULL::"+k.typ+", NULL::text", m.args[:1]...)
				if err != nil {
					t.Fatal(err)
				}
				defer rows.Close()
				cols := []dataset.Column{{Name: "a", Kind: k.kind, Nullable: true}, {Name: "b", Kind: k.kind}}
				r, err := dataset.NewRow(cols, rows.FieldDescriptions())
				if err != nil {
					t.Fatal(err)
				}
				if !rows.Next() {
					t.Fatal(rows.Err())
				}
				got, err := r.Render(rows.RawValues())
				if err != nil {
					t.Fatal(err)
				}
				if got[0] != nil || got[1] == nil || len(got[1]) != 0 || got[2] != nil {
					t.Errorf("Render = %q (nil: %t, %t, %t), want [nil, empty, nil]", got, got[0] == nil, got[1] == nil, got[2] == nil)
				}
			})
		}
	}
}

// TestRenderPassThrough checks the fields after the columns: text and json
// as they come, jsonb without the version byte of its binary format.
func TestRenderPassThrough(t *testing.T) {
	t.Parallel()
	pool := pgtest.New(t)
	conn := acquire(t, pool)
	const sql = `SELECT 'x'::text, '42'::text, 'k'::varchar, 'n'::name, '{"a": [1, "é"]}'::json, '{"a": [1, "é"]}'::jsonb, '{"a": [1, "é"]}'::jsonb::text`
	for _, m := range append(readModes, struct {
		name   string
		args   []any
		binary bool
	}{"all binary", []any{pgx.QueryResultFormats{1}}, true}) {
		t.Run(m.name, func(t *testing.T) {
			rows, err := conn.Query(context.Background(), sql, m.args[:1]...)
			if err != nil {
				t.Fatal(err)
			}
			defer rows.Close()
			fields := rows.FieldDescriptions()
			r, err := dataset.NewRow([]dataset.Column{{Name: "a", Kind: dataset.Text}}, fields[:6])
			if err != nil {
				t.Fatal(err)
			}
			if !rows.Next() {
				t.Fatal(rows.Err())
			}
			raw := rows.RawValues()
			got, err := r.Render(raw[:6])
			if err != nil {
				t.Fatal(err)
			}
			want := []string{"x", "42", "k", "n", `{"a": [1, "é"]}`, string(raw[6])}
			for i, w := range want {
				if string(got[i]) != w {
					t.Errorf("field %d (%s) = %q, want %q", i, fields[i].Name, got[i], w)
				}
			}
			if &got[0][0] != &raw[0][0] {
				t.Error("a text value was copied; want it handed on as it came")
			}
		})
	}
}

// TestRenderTyped reads every typed case's values in both wire formats and
// under several session time zones, and checks that Typed writes each
// value as dataset.AppendValue writes what dataset.ParseValue makes of the
// text KeepEra writes, and refuses it exactly when that text is refused or
// does not parse: the typed formats get the same values by either path.
func TestRenderTyped(t *testing.T) {
	t.Parallel()
	var typed []sqlCase
	for _, c := range sqlCases {
		if c.kind != dataset.Text {
			typed = append(typed, c)
		}
	}
	eachReading(t, typed, func(t *testing.T, conn *pgx.Conn, m readMode, c sqlCase) {
		checkTyped(t, conn, m.args, c)
	})
}

func checkTyped(t *testing.T, conn *pgx.Conn, opts []any, c sqlCase) {
	ctx := context.Background()
	if _, err := conn.Exec(ctx, "SELECT setseed(0.5)"); err != nil {
		t.Fatal(err)
	}
	rows, err := conn.Query(ctx, c.values, opts[:1]...)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	renderers := func(nullable bool) (typed, text *dataset.Row) {
		cols := []dataset.Column{{Name: "v", Kind: c.kind, Nullable: nullable}}
		var err error
		if typed, err = dataset.NewRow(cols, rows.FieldDescriptions()); err != nil {
			t.Fatal(err)
		}
		if text, err = dataset.NewRow(cols, rows.FieldDescriptions()); err != nil {
			t.Fatal(err)
		}
		typed.Typed()
		text.KeepEra()
		return typed, text
	}
	nt, nx := renderers(true)
	ft, fx := renderers(false)
	n, values, refused, bad := 0, 0, 0, 0
	for rows.Next() {
		raw := rows.RawValues()
		n++
		for _, r := range [][2]*dataset.Row{{nt, nx}, {ft, fx}} {
			got, err := r[0].Render(raw)
			text, terr := r[1].Render(raw)
			var want []byte
			if terr == nil {
				want = text[0]
				if len(want) > 0 {
					x, ok := dataset.ParseValue(c.kind, want)
					if !ok {
						terr = fmt.Errorf("%q does not parse", want)
					} else {
						want = dataset.AppendValue(nil, c.kind, x)
					}
				}
			}
			switch {
			case (err == nil) != (terr == nil):
				if bad++; bad <= 10 {
					t.Errorf("value %s: typed error %v, through text %v", show(raw[0]), err, terr)
				}
			case err != nil:
				refused++
			case !same(got[0], want):
				if bad++; bad <= 10 {
					t.Errorf("value %s: typed %s, through text %s", show(raw[0]), show(got[0]), show(want))
				}
			default:
				values++
			}
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if n < 1000 || values < 1000 {
		t.Fatalf("read %d values, %d typed, want more than 1000 each", n, values)
	}
	// These corpora hold decimals of more digits than the typed formats
	// hold.
	if past := map[string]bool{"numeric": true, "int8 decimal": true}; past[c.name] && refused == 0 {
		t.Errorf("no value was refused")
	}
	if bad > 0 {
		t.Errorf("%d of %d values differ (%d refused by both)", bad, 2*n, refused)
	}
}

func TestMain(m *testing.M) { pgtest.Main(m) }

// show writes a value for a message: NULL, or quoted.
func show(v []byte) string {
	if v == nil {
		return "NULL"
	}
	return fmt.Sprintf("%q", v)
}
