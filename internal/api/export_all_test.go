package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/xuri/excelize/v2"

	"github.com/informe/informe/internal/api/apitest"
	"github.com/informe/informe/internal/dataset"
	"github.com/informe/informe/internal/pgserver/pgtest"
)

// table is a response body's rows, each as one string, so that the rows
// of pages and of an export compare whatever the format: a JSON or NDJSON
// row is its object exactly as sent, a CSV or XLSX row its cells joined by
// a unit separator (XLSX cells as stored: numbers and dates as numbers).
type table struct {
	Header []string // CSV and XLSX: the header row; nil for JSON and NDJSON
	Rows   []string
}

// readTable parses body in format: JSON as a general report page (an
// envelope) or as a bare array, NDJSON lines, CSV with delimiter d, or an
// XLSX workbook whose one sheet is sheet.
func readTable(tb testing.TB, format string, body []byte, d rune, sheet string) table {
	tb.Helper()
	var t table
	switch format {
	case "json":
		var raw []json.RawMessage
		if bytes.HasPrefix(body, []byte("{")) {
			raw = decodeReport(tb, body).Raw
		} else {
			raw = decodeArray(tb, body)
		}
		for _, r := range raw {
			t.Rows = append(t.Rows, string(r))
		}
	case "ndjson":
		for _, l := range ndjsonLines(tb, body) {
			t.Rows = append(t.Rows, string(l))
		}
	case "csv":
		recs := csvRecords(tb, body, d)
		if len(recs) == 0 {
			tb.Fatal("CSV without a header")
		}
		t.Header = recs[0]
		for _, r := range recs[1:] {
			t.Rows = append(t.Rows, strings.Join(r, "\x1f"))
		}
	case "xlsx":
		rows := xlsxRows(tb, body, sheet)
		if len(rows) == 0 {
			tb.Fatal("workbook without a header row")
		}
		t.Header = rows[0]
		for _, r := range rows[1:] {
			t.Rows = append(t.Rows, strings.Join(r, "\x1f"))
		}
	default:
		tb.Fatalf("readTable: unknown format %q", format)
	}
	return t
}

// xlsxRows returns the cells of the workbook's only sheet, which must be
// named sheet, as stored (RawCellValue), each row padded to the width of
// the header.
func xlsxRows(tb testing.TB, body []byte, sheet string) [][]string {
	tb.Helper()
	f, err := excelize.OpenReader(bytes.NewReader(body))
	if err != nil {
		tb.Fatalf("opening workbook: %v", err)
	}
	defer f.Close()
	if got, want := f.GetSheetList(), []string{sheet}; !slices.Equal(got, want) {
		tb.Fatalf("sheets %v, want %v", got, want)
	}
	rows, err := f.GetRows(sheet, excelize.Options{RawCellValue: true})
	if err != nil {
		tb.Fatal(err)
	}
	for i := 1; i < len(rows); i++ {
		// GetRows leaves out empty cells at the end of a row.
		for len(rows[i]) < len(rows[0]) {
			rows[i] = append(rows[i], "")
		}
	}
	return rows
}

// decodeArray decodes a body that must be a bare JSON array of objects.
func decodeArray(tb testing.TB, body []byte) []json.RawMessage {
	tb.Helper()
	if !bytes.HasPrefix(body, []byte("[")) {
		tb.Fatalf("body starts %.20q, want a JSON array", body)
	}
	var raw []json.RawMessage
	if err := json.Unmarshal(body, &raw); err != nil {
		tb.Fatalf("decoding %.300s: %v", body, err)
	}
	for i, r := range raw {
		if !bytes.HasPrefix(r, []byte("{")) {
			tb.Fatalf("element %d is %.100s, want an object", i, r)
		}
	}
	return raw
}

// equalRows fails the test unless got and want hold the same rows in the
// same order, showing the first difference.
func equalRows(tb testing.TB, what string, got, want []string) {
	tb.Helper()
	if len(got) != len(want) {
		tb.Errorf("%s: %d rows, want %d", what, len(got), len(want))
	}
	for i := range min(len(got), len(want)) {
		if got[i] != want[i] {
			tb.Errorf("%s: row %d differs:\n got %.300s\nwant %.300s", what, i, got[i], want[i])
			return
		}
	}
}

// walkPages fetches every page of the report for query (filters, format
// and options) at per rows a page and returns their rows in order, the
// header of the first page, and X-Total-Count.
func (ts *testServer) walkPages(tb testing.TB, format, query string, per int) (table, string) {
	tb.Helper()
	var all table
	total := ""
	for page := 1; ; page++ {
		r := ts.Get(tb, fmt.Sprintf("/api/general-report?format=%s&result_per_page=%d&page=%d%s", format, per, page, query))
		if r.Status != http.StatusOK {
			tb.Fatalf("page %d: status = %d; body %.300s", page, r.Status, r.Body)
		}
		t := readTable(tb, format, r.Body, ',', "general-report")
		if page == 1 {
			all.Header = t.Header
			total = r.Header.Get("X-Total-Count")
		} else if !slices.Equal(t.Header, all.Header) {
			tb.Fatalf("page %d header %v, page 1 header %v", page, t.Header, all.Header)
		}
		if len(t.Rows) > per {
			tb.Fatalf("page %d has %d rows, more than %d", page, len(t.Rows), per)
		}
		all.Rows = append(all.Rows, t.Rows...)
		pages, err := strconv.Atoi(r.Header.Get("X-Total-Pages"))
		if err != nil {
			tb.Fatalf("X-Total-Pages %q: %v", r.Header.Get("X-Total-Pages"), err)
		}
		if page >= pages {
			return all, total
		}
	}
}

// headerTokens splits the comma-separated values of a header.
func headerTokens(values []string) []string {
	var out []string
	for _, v := range values {
		for _, t := range strings.Split(v, ",") {
			out = append(out, strings.TrimSpace(t))
		}
	}
	return out
}

var formats = []string{"json", "ndjson", "csv", "xlsx"}

// exportFile is the Content-Disposition of an export in format with the
// query string query, as [undated] leaves it: named for its first filter.
func exportFile(format, query string) string {
	v, _ := url.ParseQuery(strings.TrimPrefix(query, "&"))
	name := "general-report"
	for _, f := range [][2]string{{"contract_id", "contract"}, {"code_contract", "code"}, {"client_id", "client"}, {"rut", "rut"}} {
		if x := v.Get(f[0]); x != "" {
			name += "-" + f[1] + "-" + x
			break
		}
	}
	return attached(name + "-DATE." + format)
}

var mediaTypes = map[string]string{
	"json":   "application/json; charset=utf-8",
	"ndjson": "application/x-ndjson; charset=utf-8",
	"csv":    "text/csv; charset=utf-8",
	"xlsx":   xlsxType,
}

// TestExportEqualsPages checks that an export, in every format, holds
// exactly the rows of the report's pages walked in order, with the count
// of the pages in X-Total-Count, unfiltered and with every filter.
func TestExportEqualsPages(t *testing.T) {
	t.Parallel()
	ts := newServer(t, pgtest.Fixture(t))
	for _, tt := range []struct {
		name   string
		query  string // of the export
		filter string // of the pages
		rows   int
	}{
		{"Unfiltered", "", "", 11},
		{"ContractID", "&contract_id=1", "&contract_id=1", 3},
		{"CodeContract", "&code_contract=CT-SHARED", "&code_contract=CT-SHARED", 3},
		{"ClientID", "&client_id=3", "&client_id=3", 4},
		{"RUT", "&rut=12345678-5", "&rut=12345678-5", 4},
		{"RUTLowerK", "&rut=17.000.003-k", "&rut=17.000.003-k", 4},
		{"AllFour", "&contract_id=4&code_contract=CT-SHARED&client_id=2&rut=98765433", "&contract_id=4&code_contract=CT-SHARED&client_id=2&rut=98765433", 2},
		{"NoMatch", "&contract_id=99", "&contract_id=99", 0},
		{"NoMatchTogether", "&contract_id=1&client_id=2", "&contract_id=1&client_id=2", 0},
	} {
		for _, format := range formats {
			t.Run(tt.name+"/"+format, func(t *testing.T) {
				r := ts.Get(t, "/api/general-report/export?format="+format+tt.query)
				if r.Status != http.StatusOK {
					t.Fatalf("status = %d; body %.300s", r.Status, r.Body)
				}
				for _, h := range []struct{ name, want string }{
					{"Content-Type", mediaTypes[format]},
					{"Content-Disposition", exportFile(format, tt.query)},
					{"X-Total-Count", strconv.Itoa(tt.rows)},
					{"Cache-Control", "private, no-store"},
				} {
					if got := r.Header.Get(h.name); got != h.want && (h.name != "Content-Disposition" || undated(got) != h.want) {
						t.Errorf("%s = %q, want %q", h.name, got, h.want)
					}
				}
				if vary := r.Header.Values("Vary"); !slices.Contains(headerTokens(vary), "Accept") {
					t.Errorf("Vary = %q, want it to name Accept", vary)
				}
				if tt.rows == 0 {
					want := map[string]string{"json": "[]", "ndjson": ""}
					if w, ok := want[format]; ok && string(r.Body) != w {
						t.Errorf("body = %q, want %q", r.Body, w)
					}
				}
				got := readTable(t, format, r.Body, ',', "general-report")
				if len(got.Rows) != tt.rows {
					t.Errorf("%d rows, want %d", len(got.Rows), tt.rows)
				}
				for _, per := range []int{1, 3, 4, 10000} {
					want, total := ts.walkPages(t, format, tt.filter, per)
					if !slices.Equal(got.Header, want.Header) {
						t.Errorf("header %v, pages' header %v", got.Header, want.Header)
					}
					equalRows(t, fmt.Sprintf("export vs pages of %d", per), got.Rows, want.Rows)
					if got, want := r.Header.Get("X-Total-Count"), total; got != want {
						t.Errorf("X-Total-Count = %q, pages say %q", got, want)
					}
				}
			})
		}
	}

	// A larger report, whose unfiltered pages the store reaches through
	// the maintained counts and the export in one scan.
	t.Run("Seeded", func(t *testing.T) {
		pool := pgtest.Seeded(t)
		ts := newServer(t, pool)
		// The client with the most rows.
		client := pgtest.Int(t, pool, "SELECT key_client_id FROM general_report GROUP BY 1 ORDER BY count(*) DESC, 1 LIMIT 1")
		// JSON and XLSX of every field are checked on the small report.
		const someColumns = "&columns=contract_id,process_id,task_code,execution_date,client_rut"
		for _, tt := range []struct {
			format string
			query  string
		}{
			{"csv", ""},
			{"ndjson", someColumns},
			{"xlsx", someColumns},
			{"json", fmt.Sprintf("&client_id=%d", client)},
		} {
			t.Run(tt.format+tt.query, func(t *testing.T) {
				r := ts.Get(t, "/api/general-report/export?format="+tt.format+tt.query)
				if r.Status != http.StatusOK {
					t.Fatalf("status = %d; body %.300s", r.Status, r.Body)
				}
				got := readTable(t, tt.format, r.Body, ',', "general-report")
				want, total := ts.walkPages(t, tt.format, tt.query, 7000)
				if len(want.Rows) < 10 {
					t.Fatalf("only %d rows: the check proves little", len(want.Rows))
				}
				if !slices.Equal(got.Header, want.Header) {
					t.Errorf("header %v, pages' header %v", got.Header, want.Header)
				}
				equalRows(t, "export vs pages", got.Rows, want.Rows)
				if got, want := r.Header.Get("X-Total-Count"), strconv.Itoa(len(want.Rows)); got != want || total != want {
					t.Errorf("X-Total-Count = %q, pages' %q, want %q", got, total, want)
				}
			})
		}
	})
}

// TestExportParameters checks that the export validates its parameters,
// and authenticates, exactly as the paged report does.
func TestExportParameters(t *testing.T) {
	t.Parallel()
	ts := newServer(t, pgtest.Fixture(t))
	for _, tt := range []struct {
		name  string
		query string
	}{
		{"ErrContractIDZero", "contract_id=0"},
		{"ErrContractIDWord", "contract_id=abc"},
		{"ErrContractIDEmpty", "contract_id="},
		{"ErrContractIDTwice", "contract_id=1&contract_id=1"},
		{"ErrContractIDHuge", "contract_id=9223372036854775808"},
		{"ErrClientIDNegative", "client_id=-1"},
		{"ErrClientIDFraction", "client_id=1.5"},
		{"ErrCodeContractEmpty", "code_contract="},
		{"ErrCodeContractTwice", "code_contract=CT-001&code_contract=CT-002"},
		{"ErrRUTCheckDigit", "rut=12.345.678-4"},
		{"ErrRUTWord", "rut=abc"},
		{"ErrRUTEmpty", "rut="},
		{"ErrFormat", "format=pdf"},
		{"ErrDelimiter", "format=csv&delimiter=pipe"},
		{"ErrHeader", "format=csv&header=yes"},
		{"ErrBOM", "format=csv&bom=1"},
		{"ErrColumns", "columns=nope"},
		{"ErrMalformedQuery", "contract_id=%zz"},
		{"ErrSecondFilterBad", "client_id=1&rut=12.345.678-4"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			paged := ts.Get(t, "/api/general-report?"+tt.query)
			if paged.Status != http.StatusBadRequest {
				t.Fatalf("paged status = %d, want 400; body %s", paged.Status, paged.Body)
			}
			r := ts.Get(t, "/api/general-report/export?"+tt.query)
			r.WantError(t, http.StatusBadRequest, "")
			if got, want := r.Message(t), paged.Message(t); got != want {
				t.Errorf("message = %q, the paged report says %q", got, want)
			}
			for _, h := range []string{"Content-Disposition", "X-Total-Count"} {
				if v := r.Header.Get(h); v != "" {
					t.Errorf("error carries %s: %q", h, v)
				}
			}
		})
	}

	usersOnly := ts.NewToken(t, "users-only", []dataset.Scope{dataset.UsersRead}, time.Time{})
	reportOnly := ts.NewToken(t, "report-only", []dataset.Scope{dataset.ReportRead}, time.Time{})
	for _, tt := range []struct {
		name   string
		target string
		header []string
		status int
		msg    string
	}{
		{"ErrNoToken", "/api/general-report/export", nil, 401, "Invalid Token"},
		{"ErrNoTokenCSV", "/api/general-report/export?format=csv", nil, 401, "Invalid Token"},
		{"ErrBadToken", "/api/general-report/export", []string{"Authorization", "Bearer " + apitest.WellFormedToken()}, 401, "Invalid Token"},
		{"ErrNoScope", "/api/general-report/export", []string{"Authorization", "Bearer " + usersOnly}, 403, "this token lacks the report:read scope"},
		{"ErrNoScopeQueryToken", "/api/general-report/export?format=csv&access_token=" + usersOnly, nil, 403, "this token lacks the report:read scope"},
		{"ErrNotAcceptable", "/api/general-report/export", []string{"Authorization", "Bearer " + ts.Token, "Accept", "image/png"}, 406, "text/csv"},
		{"ErrTrailingSlash", "/api/general-report/export/", []string{"Authorization", "Bearer " + ts.Token}, 404, "Not Found"},
		{"OKReportScope", "/api/general-report/export?format=ndjson", []string{"Authorization", "Bearer " + reportOnly}, 200, ""},
		{"OKQueryToken", "/api/general-report/export?format=csv&access_token=" + reportOnly, nil, 200, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := ts.Do(t, http.MethodGet, tt.target, tt.header...)
			if tt.status == 200 {
				if r.Status != 200 {
					t.Fatalf("status = %d; body %s", r.Status, r.Body)
				}
				if got, want := r.Header.Get("X-Total-Count"), "11"; got != want {
					t.Errorf("X-Total-Count = %q, want %q", got, want)
				}
				return
			}
			r.WantError(t, tt.status, tt.msg)
			if tt.status == 401 {
				if got, want := string(r.Body), `{"message":"Invalid Token"}`; got != want {
					t.Errorf("body = %s, want %s", got, want)
				}
				if got := r.Header.Values("WWW-Authenticate"); len(got) != 2 {
					t.Errorf("WWW-Authenticate = %q, want a Bearer and a Basic challenge", got)
				}
			}
		})
	}
	t.Run("ErrPost", func(t *testing.T) {
		r := ts.Do(t, http.MethodPost, "/api/general-report/export", "Authorization", "Bearer "+ts.Token)
		r.WantError(t, http.StatusMethodNotAllowed, "Method Not Allowed")
	})
}

// The gated database: gatedContracts contracts of two processes of five
// tasks each (ten report rows a contract, about 2.4 KB of JSON each),
// clients 1 (even contracts) and 2 (odd ones), and a gate that stops
// informe's reads of the report inside PostgreSQL until the test lets
// them go.
//
// The gate is a function in the WHERE clause of a general_report_typed that
// wraps the real view, and in report_rows_total. At most once per
// transaction, and only in connections named informe, it waits for a
// shared advisory lock on gateLock that the test holds exclusively:
//
//   - stage 'count': at its first call, which is in the export's count,
//     the first statement of its snapshot;
//   - stage 'rows': at the first row of a contract >= gateAt read by the
//     rows query (not by the count).
//
// With enable_sort off (for the server's connections only), the rows
// reach the client as PostgreSQL produces them (an incremental sort by
// contract, not a full sort), so at stage 'rows' the client has received
// the rows of the contracts before the gate's while the export waits.
const (
	gatedContracts = 120
	gateAt         = 90 // the contract where stage 'rows' waits
	gateLock       = 4242
)

var gatedSQL = fmt.Sprintf(`
INSERT INTO clients (id, rut, first_name, last_name) VALUES
 (1, '12.345.678-5', 'María', 'González'), (2, '9876543-3', 'Juan', 'Pérez');
INSERT INTO services (id, name, cost) VALUES (1, 'Divorcio de mutuo acuerdo', 350000);
INSERT INTO contracts (id, client_id, service_id, status, code, created_at)
SELECT i, 1 + i %% 2, 1, 'APROBADO', 'CT-' || i, '2024-01-01'::timestamp + i * interval '1 hour'
FROM generate_series(1, %[1]d) AS i;
INSERT INTO processes (id, contract_id, role) SELECT i, (i + 1) / 2, 'Demandante' FROM generate_series(1, 2 * %[1]d) AS i;
INSERT INTO tasks (id, process_id, name, detail, code, status, execution_date)
SELECT i, (i + 4) / 5, 'Tarea ' || i, repeat('x', 500), 'T' || i, 'Pendiente', '2024-03-05 14:07:09+00'
FROM generate_series(1, 10 * %[1]d) AS i;

CREATE TABLE api_test_gate (stage text NOT NULL CHECK (stage IN ('count', 'rows')), contract bigint);
CREATE FUNCTION api_test_gate(contract bigint) RETURNS boolean LANGUAGE plpgsql VOLATILE AS $$
DECLARE
	g_stage text;
	g_at bigint;
BEGIN
	IF current_setting('application_name') <> 'informe'
	   OR coalesce(current_setting('api_test.passed', true), '') = 'yes' THEN
		RETURN true;
	END IF;
	SELECT g.stage, g.contract INTO g_stage, g_at FROM api_test_gate g;
	IF g_stage IS NULL THEN
		PERFORM set_config('api_test.passed', 'yes', true);
	ELSIF g_stage = 'count'
	   OR (g_stage = 'rows' AND contract >= g_at AND current_query() NOT ILIKE 'SELECT count(%%') THEN
		PERFORM set_config('api_test.passed', 'yes', true);
		PERFORM pg_advisory_xact_lock_shared(%[2]d);
	END IF;
	RETURN true;
END $$;
ALTER VIEW general_report_typed RENAME TO general_report_base;
CREATE VIEW general_report_typed AS SELECT * FROM general_report_base WHERE api_test_gate(key_contract_id);
ALTER FUNCTION report_rows_total() RENAME TO report_rows_total_base;
CREATE FUNCTION report_rows_total() RETURNS bigint LANGUAGE plpgsql VOLATILE AS $$
BEGIN
	PERFORM api_test_gate(NULL);
	RETURN report_rows_total_base();
END $$;
`, gatedContracts, gateLock)

// gatedDB returns a pool for the server on a fresh copy of the gated
// database, its gate open, and a monitor connection of its own (not named
// informe, so the gate lets it through). Only the server's connections
// run with enable_sort off: the writes' triggers need their sorts.
func gatedDB(tb testing.TB) (*pgxpool.Pool, *pgx.Conn) {
	tb.Helper()
	pool := pgtest.NewFrom(tb, "api_gated", func(ctx context.Context, pool *pgxpool.Pool) error {
		_, err := pool.Exec(ctx, gatedSQL)
		return err
	})
	cfg := pool.Config().Copy()
	cfg.ConnConfig.RuntimeParams["enable_sort"] = "off"
	server, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(server.Close)
	return server, monitor(tb, pool)
}

// closeGate makes informe's next reads of the report wait at stage
// ('count' or 'rows') until the returned func is called; the test's end
// calls it too.
func closeGate(tb testing.TB, mon *pgx.Conn, stage string) (open func()) {
	tb.Helper()
	return closeGateAt(tb, mon, stage, gateAt)
}

// closeGateAt is closeGate with the gate of stage 'rows' at contract,
// replacing any gate closed before.
func closeGateAt(tb testing.TB, mon *pgx.Conn, stage string, contract int) (open func()) {
	tb.Helper()
	ctx := context.Background()
	if _, err := mon.Exec(ctx, "DELETE FROM api_test_gate"); err != nil {
		tb.Fatal(err)
	}
	if _, err := mon.Exec(ctx, "INSERT INTO api_test_gate (stage, contract) VALUES ($1, $2)", stage, contract); err != nil {
		tb.Fatal(err)
	}
	if _, err := mon.Exec(ctx, "SELECT pg_advisory_lock($1)", gateLock); err != nil {
		tb.Fatal(err)
	}
	open = sync.OnceFunc(func() {
		if _, err := mon.Exec(ctx, "SELECT pg_advisory_unlock($1)", gateLock); err != nil {
			tb.Error(err)
		}
	})
	tb.Cleanup(open)
	return open
}

// waitingAtGate returns the process id of the informe backend waiting at
// the gate, failing the test if none comes within 10s.
func waitingAtGate(tb testing.TB, mon *pgx.Conn) int {
	tb.Helper()
	var pid int
	ok := waitFor(10*time.Second, func() bool {
		err := mon.QueryRow(context.Background(), `
			SELECT coalesce(max(a.pid), 0) FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
			WHERE l.locktype = 'advisory' AND NOT l.granted AND l.objid = $1
			  AND a.application_name = 'informe' AND a.datname = current_database()`, gateLock).Scan(&pid)
		if err != nil {
			tb.Fatal(err)
		}
		return pid != 0
	})
	if !ok {
		tb.Fatal("no informe backend came to wait at the gate")
	}
	return pid
}

// busyBackends returns how many of informe's backends in mon's database
// are running a statement or inside a transaction.
func busyBackends(tb testing.TB, mon *pgx.Conn) int {
	tb.Helper()
	var n int
	err := mon.QueryRow(context.Background(), `
		SELECT count(*) FROM pg_stat_activity
		WHERE datname = current_database() AND application_name = 'informe' AND state <> 'idle'`).Scan(&n)
	if err != nil {
		tb.Fatal(err)
	}
	return n
}

// viewRows reads the report's rows matching where, all 74 fields as text,
// in one REPEATABLE READ transaction of mon.
func viewRows(tb testing.TB, mon *pgx.Conn, where string) [][]string {
	tb.Helper()
	ctx := context.Background()
	cols := specColumns(tb, "general-report-columns.txt")
	var out [][]string
	err := pgx.BeginTxFunc(ctx, mon, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, "SELECT "+strings.Join(cols, ", ")+" FROM general_report "+where+
			" ORDER BY key_contract_id, key_process_id, key_task_id")
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			vals := make([]string, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := rows.Scan(ptrs...); err != nil {
				return err
			}
			out = append(out, vals)
		}
		return rows.Err()
	})
	if err != nil {
		tb.Fatal(err)
	}
	return out
}

// writer commits, in a loop on a connection of its own, transactions that
// each insert a contract with a process and two tasks (rows at the end of
// the report), insert tasks into the first processes of both clients (rows
// at the start), delete a task and a whole contract past gateAt, and
// change a task past gateAt, until it is stopped or has run 30 times.
type writer struct {
	commits chan int // receives the number of each commit
	stop    chan struct{}
	done    chan error
}

func startWriter(tb testing.TB, pool *pgxpool.Pool) *writer {
	tb.Helper()
	cfg := pool.Config().ConnConfig.Copy()
	cfg.RuntimeParams["application_name"] = "api-test-writer"
	cfg.RuntimeParams["enable_sort"] = "on"
	conn, err := pgx.ConnectConfig(context.Background(), cfg)
	if err != nil {
		tb.Fatal(err)
	}
	w := &writer{commits: make(chan int, 100), stop: make(chan struct{}), done: make(chan error, 1)}
	go func() {
		ctx := context.Background()
		defer conn.Close(ctx)
		for i := 1; i <= 30; i++ {
			select {
			case <-w.stop:
				w.done <- nil
				return
			default:
			}
			err := pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
				for _, q := range []string{
					fmt.Sprintf(`INSERT INTO contracts (id, client_id, status, code) VALUES (%d, %d, 'APROBADO', 'NEW-%[1]d')`, 1000+i, 1+i%2),
					fmt.Sprintf(`INSERT INTO processes (id, contract_id) VALUES (%d, %d)`, 10000+i, 1000+i),
					fmt.Sprintf(`INSERT INTO tasks (id, process_id, name, status) VALUES (%d, %d, 'Nueva', 'Pendiente'), (%d, %[2]d, 'Nueva', 'En Curso')`,
						100000+2*i, 10000+i, 100001+2*i),
					fmt.Sprintf(`INSERT INTO tasks (id, process_id, name, status) VALUES (%d, 1, 'Temprana', 'Pendiente'), (%d, 3, 'Temprana', 'Pendiente')`,
						200000+2*i, 200001+2*i),
					fmt.Sprintf(`DELETE FROM tasks WHERE id = (SELECT max(id) FROM tasks WHERE id <= %d)`, 10*gatedContracts),
					fmt.Sprintf(`DELETE FROM contracts WHERE id = %d`, gatedContracts-2*i),
					fmt.Sprintf(`UPDATE tasks SET status = 'Cancelado', progress = %d WHERE id = %d`, i, 10*gateAt+5*i),
				} {
					if _, err := tx.Exec(ctx, q); err != nil {
						return fmt.Errorf("%s: %w", q, err)
					}
				}
				return nil
			})
			if err != nil {
				w.done <- err
				return
			}
			w.commits <- i
		}
		<-w.stop
		w.done <- nil
	}()
	return w
}

// waitCommits waits for n more commits of the writer.
func (w *writer) waitCommits(tb testing.TB, n int) {
	tb.Helper()
	for range n {
		select {
		case <-w.commits:
		case err := <-w.done:
			tb.Fatalf("writer stopped: %v", err)
		case <-time.After(30 * time.Second):
			tb.Fatal("the writer made no commit in 30s")
		}
	}
}

// finish stops the writer and reports its error.
func (w *writer) finish(tb testing.TB) {
	tb.Helper()
	close(w.stop)
	if err := <-w.done; err != nil {
		tb.Fatalf("writer: %v", err)
	}
}

// streamed is a response whose body a goroutine reads as it comes.
type streamed struct {
	header http.Header
	status int
	got    atomic.Int64 // body bytes read so far
	body   bytes.Buffer // valid after done
	err    error        // the body's read error, after done
	done   chan struct{}
	cancel context.CancelFunc
}

// start sends GET target with the server's token and the given header
// pairs, and reads the response in a goroutine.
func (ts *testServer) start(tb testing.TB, target string, header ...string) *streamed {
	tb.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	tb.Cleanup(cancel)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, ts.URL+target, nil)
	if err != nil {
		tb.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+ts.Token)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	s := &streamed{done: make(chan struct{}), cancel: cancel}
	go s.read(req)
	return s
}

// read sends req and reads its response into s, then closes s.done.
func (s *streamed) read(req *http.Request) {
	defer close(s.done)
	resp, err := apitest.Client.Do(req)
	if err != nil {
		s.err = err
		return
	}
	defer resp.Body.Close()
	s.status, s.header = resp.StatusCode, resp.Header
	buf := make([]byte, 32<<10)
	for {
		n, err := resp.Body.Read(buf)
		s.body.Write(buf[:n])
		s.got.Add(int64(n))
		if err == io.EOF {
			return
		}
		if err != nil {
			s.err = err
			return
		}
	}
}

// wait waits for the whole response, failing the test after 60s.
func (s *streamed) wait(tb testing.TB) {
	tb.Helper()
	select {
	case <-s.done:
	case <-time.After(60 * time.Second):
		tb.Fatal("the response did not end within 60s")
	}
}

// TestExportSnapshot checks that an export reads one snapshot, taken
// before its count, while another connection commits inserts, deletes and
// updates: writes committed between the count and the rows (stage count),
// or while the rows stream (stage rows), change neither X-Total-Count nor
// any row, in every format, unfiltered (maintained counts) and filtered
// (counted in the view). The writes are committed while the export
// waits at the gate inside PostgreSQL, and the writer keeps committing
// while the rest of the export streams; an export that read its count and
// rows in separate snapshots, or its rows in several queries, would see
// them.
func TestExportSnapshot(t *testing.T) {
	t.Parallel()
	for _, stage := range []string{"count", "rows"} {
		for _, filter := range []struct{ query, where string }{{"", ""}, {"&client_id=1", "WHERE key_client_id = 1"}} {
			for _, format := range formats {
				t.Run(fmt.Sprintf("%s/%s%s", stage, format, filter.query), func(t *testing.T) {
					t.Parallel() // each on a database of its own
					pool, mon := gatedDB(t)
					ts := newServer(t, pool)
					target := "/api/general-report/export?format=" + format + filter.query

					// What the export must hold: the rows before any write,
					// as the view and the same export read them.
					view := viewRows(t, mon, filter.where)
					before := ts.Get(t, target)
					if before.Status != http.StatusOK {
						t.Fatalf("status = %d; body %.300s", before.Status, before.Body)
					}
					want := readTable(t, format, before.Body, ',', "general-report")
					if len(want.Rows) != len(view) {
						t.Fatalf("the export before the writes has %d rows, the view %d", len(want.Rows), len(view))
					}
					if format == "json" || format == "ndjson" {
						checkRowValues(t, want.Rows, view)
					}

					open := closeGate(t, mon, stage)
					r := ts.start(t, target)
					waitingAtGate(t, mon)
					if stage == "rows" && format != "xlsx" {
						// The export is mid-stream: the client has its first
						// row (the rows after it wait in the encoder's buffer
						// until the database sends more).
						if !waitFor(10*time.Second, func() bool { return r.got.Load() > 0 }) {
							t.Fatal("the client got nothing before the gate, want the first row")
						}
					}
					w := startWriter(t, pool)
					w.waitCommits(t, 3)
					if now := viewRows(t, mon, filter.where); slices.EqualFunc(now, view, slices.Equal) {
						t.Fatal("the writes changed no row the export reads: the test proves nothing")
					}
					open()
					w.waitCommits(t, 1) // the writer goes on as the rest streams
					r.wait(t)
					w.finish(t)

					if r.err != nil {
						t.Fatalf("reading the export: %v", r.err)
					}
					if r.status != http.StatusOK {
						t.Fatalf("status = %d; body %.300s", r.status, r.body.Bytes())
					}
					got := readTable(t, format, r.body.Bytes(), ',', "general-report")
					if got, want := r.header.Get("X-Total-Count"), strconv.Itoa(len(view)); got != want {
						t.Errorf("X-Total-Count = %s, want %s, the rows before the writes", got, want)
					}
					if got, want := strconv.Itoa(len(got.Rows)), r.header.Get("X-Total-Count"); got != want {
						t.Errorf("%s rows, X-Total-Count %s", got, want)
					}
					if !slices.Equal(got.Header, want.Header) {
						t.Errorf("header %v, want %v", got.Header, want.Header)
					}
					equalRows(t, "export during the writes vs before them", got.Rows, want.Rows)
				})
			}
		}
	}
}

// checkRowValues checks that JSON rows hold the view's values, in order.
func checkRowValues(tb testing.TB, rows []string, view [][]string) {
	tb.Helper()
	for i, raw := range rows {
		keys, vals := decodeObject(tb, []byte(raw))
		if len(vals) != len(view[i]) {
			tb.Fatalf("row %d has %d fields, the view %d", i, len(vals), len(view[i]))
		}
		for j, v := range vals {
			if v == nil || *v != view[i][j] {
				tb.Fatalf("row %d %s = %v, the view has %q", i, keys[j], v, view[i][j])
			}
		}
	}
}

// decodeObject decodes a JSON object, returning its keys in the order
// sent and their values, nil for null; any other type of value fails the
// test.
func decodeObject(tb testing.TB, raw []byte) ([]string, []*string) {
	tb.Helper()
	dec := json.NewDecoder(bytes.NewReader(raw))
	next := func() json.Token {
		tb.Helper()
		tok, err := dec.Token()
		if err != nil {
			tb.Fatalf("decoding %.300s: %v", raw, err)
		}
		return tok
	}
	if next() != json.Delim('{') {
		tb.Fatalf("%.100s is not an object", raw)
	}
	var keys []string
	var vals []*string
	for dec.More() {
		k, ok := next().(string)
		if !ok {
			tb.Fatalf("want a key in %.300s", raw)
		}
		keys = append(keys, k)
		switch v := next().(type) {
		case nil:
			vals = append(vals, nil)
		case string:
			vals = append(vals, &v)
		default:
			tb.Fatalf("%s = %v (%T), want a string or null", k, v, v)
		}
	}
	if next() != json.Delim('}') {
		tb.Fatalf("%.100s: object not closed", raw)
	}
	return keys, vals
}

// TestExportFailureMidStream checks the abort rule on the export: when
// PostgreSQL ends the export's backend (pg_terminate_backend) after the
// first bytes were sent, the connection is cut before the chunked body is
// terminated, so the client reads an unexpected EOF, in every format (XLSX
// is streamed too).
func TestExportFailureMidStream(t *testing.T) {
	t.Parallel()
	for _, format := range formats {
		t.Run(format, func(t *testing.T) {
			pool, mon := gatedDB(t)
			ts := newServer(t, pool)
			open := closeGate(t, mon, "rows")
			r := ts.start(t, "/api/general-report/export?format="+format)
			pid := waitingAtGate(t, mon)
			if !waitFor(10*time.Second, func() bool { return r.got.Load() >= 64<<10 }) {
				t.Fatalf("the client got %d bytes before the gate, want more than 64 KiB", r.got.Load())
			}
			var ok bool
			if err := mon.QueryRow(context.Background(), "SELECT pg_terminate_backend($1)", pid).Scan(&ok); err != nil || !ok {
				t.Fatalf("pg_terminate_backend(%d) = %v, %v", pid, ok, err)
			}
			open()
			r.wait(t)

			if r.status != http.StatusOK {
				t.Fatalf("status = %d, want the 200 sent before the failure", r.status)
			}
			if !errors.Is(r.err, io.ErrUnexpectedEOF) {
				t.Fatalf("body read ended with %v after %d bytes, want an unexpected EOF", r.err, r.body.Len())
			}
			// Contract gateAt's first task is 10*gateAt-9.
			if strings.Contains(r.body.String(), fmt.Sprintf("Tarea %d", 10*gateAt-9)) {
				t.Error("rows of the gate's contract reached the client")
			}
			logs := ts.Logs.String()
			if !strings.Contains(logs, `"level":"ERROR","msg":"response cut"`) || !strings.Contains(logs, `"reason":"database_unavailable"`) || !strings.Contains(logs, "57P01") {
				t.Errorf("abort not logged with its cause:\n%s", logs)
			}
			// The server goes on serving from a fresh connection.
			if got := ts.Get(t, "/api/general-report/export?format=csv&columns=contract_id"); got.Status != http.StatusOK {
				t.Errorf("next export: status %d; body %s", got.Status, got.Body)
			}
		})
	}
}

// TestExportClientGoneCancelsQuery checks that a client that goes away
// mid-export has its query cancelled in PostgreSQL: the export's backend,
// waiting at a gate the test keeps closed, stops waiting and ends its
// transaction, which only a cancellation can make it do.
func TestExportClientGoneCancelsQuery(t *testing.T) {
	t.Parallel()
	for _, format := range formats {
		t.Run(format, func(t *testing.T) {
			pool, mon := gatedDB(t)
			ts := newServer(t, pool)
			closeGate(t, mon, "rows")
			r := ts.start(t, "/api/general-report/export?format="+format)
			waitingAtGate(t, mon)
			if format != "xlsx" {
				if !waitFor(10*time.Second, func() bool { return r.got.Load() >= 64<<10 }) {
					t.Fatalf("the client got %d bytes before the gate, want more than 64 KiB", r.got.Load())
				}
			}
			if got, want := busyBackends(t, mon), 1; got != want {
				t.Fatalf("%d informe backends busy, want %d", got, want)
			}
			r.cancel() // the client goes away, mid-stream or before the first byte
			gone := time.Now()
			if !waitFor(10*time.Second, func() bool { return busyBackends(t, mon) == 0 }) {
				t.Fatal("the export's query still runs 10s after the client went away")
			}
			t.Logf("query ended %v after the client went away", time.Since(gone).Round(time.Millisecond))
			r.wait(t)
			if r.err == nil && format != "xlsx" {
				t.Error("the client read the whole body")
			}
		})
	}
}
