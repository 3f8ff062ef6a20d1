package main

import (
	"context"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/informe/informe/auth"
	"github.com/informe/informe/internal/audit"
	"github.com/informe/informe/internal/dataset"
	"github.com/informe/informe/internal/pgserver/pgtest"
)

// TestParseBefore reads --before as audit prune does: a date is its
// midnight in America/Santiago (summer and winter time), an RFC 3339 time
// is itself, and anything else is refused saying what --before takes.
func TestParseBefore(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name, in string
		want     string // RFC 3339 in UTC; "" for an error
	}{
		{"DateSummer", "2026-01-01", "2026-01-01T03:00:00Z"},
		{"DateWinter", "2026-07-01", "2026-07-01T04:00:00Z"},
		{"RFC3339", "2026-03-15T10:30:00-03:00", "2026-03-15T13:30:00Z"},
		{"RFC3339UTC", "2025-12-31T23:59:59Z", "2025-12-31T23:59:59Z"},
		{"ErrWord", "ayer", ""},
		{"ErrMonth", "2026-13-01", ""},
		{"ErrSlashes", "01/02/2026", ""},
		{"ErrNoZone", "2026-01-01T00:00:00", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseBefore(tt.in)
			if tt.want == "" {
				if err == nil || !strings.Contains(err.Error(), "must be a date, YYYY-MM-DD") {
					t.Errorf("parseBefore(%q) = %v, %v: want the refusal saying what it takes", tt.in, got, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := got.UTC().Format(time.RFC3339); got != tt.want {
				t.Errorf("parseBefore(%q) = %s, want %s", tt.in, got, tt.want)
			}
		})
	}
}

// TestAuditPrune runs informe audit prune against a real database: bad
// dates are refused naming --before, records that started before the date
// go, the prune leaves its own record, and the append-only trigger
// refuses a plain DELETE, a TRUNCATE and a change to a closed record.
func TestAuditPrune(t *testing.T) {
	t.Parallel()
	bin := build(t)
	pool := pgtest.New(t)
	dbURL := pool.Config().ConnString()
	ctx := context.Background()
	// Two old records (one of a response that never finished) and a new
	// one; 2020-01-01 03:00Z is midnight in Santiago, so the second old
	// one started just before a prune --before 2020-01-01.
	if _, err := pool.Exec(ctx, `INSERT INTO audit_records (started_at, ended_at, request_id, principal, path, outcome, instance) VALUES
		('2019-06-01T12:00:00Z', '2019-06-01T12:00:01Z', 'old-1', 'sheet', 'GET /api/general-report', 'complete', 'test'),
		('2020-01-01T02:59:59Z', NULL, 'old-2', 'sheet', 'GET /api/general-report/export', 'open', 'test'),
		('2020-01-01T03:00:00Z', '2020-01-01T03:00:01Z', 'kept', 'sheet', 'GET /api/general-report', 'complete', 'test')`); err != nil {
		t.Fatal(err)
	}

	for _, tt := range []struct {
		name   string
		args   []string
		code   int
		stdout string
		stderr string
	}{
		{"ErrNoBefore", nil, 2, "", "audit prune: --before: is required"},
		{"ErrBadDate", []string{"--before", "ayer"}, 2, "", `audit prune: --before: must be a date, YYYY-MM-DD (midnight in America/Santiago), or an RFC 3339 time`},
		{"ErrArgument", []string{"--before", "2020-01-01", "now"}, 2, "", "audit prune: takes no arguments"},
		{"NothingBefore", []string{"--before", "2019-01-01T00:00:00Z"}, 0, "removed 0 audit records that started before 2019-01-01T00:00:00Z\n", ""},
		{"OK", []string{"--before", "2020-01-01"}, 0, "removed 2 audit records that started before 2020-01-01T03:00:00Z\n", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			stdout, stderr, code := runCmd(t, bin, dbURL, append([]string{"audit", "prune"}, tt.args...)...)
			if code != tt.code {
				t.Fatalf("exit %d, want %d\n%s", code, tt.code, stderr)
			}
			if tt.stdout != "" && stdout != tt.stdout {
				t.Errorf("stdout %q, want %q", stdout, tt.stdout)
			}
			if !strings.Contains(stderr, tt.stderr) {
				t.Errorf("stderr %q, want %q", stderr, tt.stderr)
			}
		})
	}

	if got := pgtest.String(t, pool, `SELECT string_agg(request_id, ',' ORDER BY id) FROM audit_records WHERE request_id <> 'prune'`); got != "kept" {
		t.Errorf("records left: %s, want kept", got)
	}
	// Each prune, the one that removed nothing included, left its record:
	// who, the date, how many.
	rows, err := pool.Query(ctx, `SELECT principal, query, rows, outcome, ended_at IS NOT NULL FROM audit_records
		WHERE path = 'informe audit prune' ORDER BY id`)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for rows.Next() {
		var principal, query, outcome string
		var n int64
		var ended bool
		if err := rows.Scan(&principal, &query, &n, &outcome, &ended); err != nil {
			t.Fatal(err)
		}
		if principal != audit.Command() {
			t.Errorf("prune recorded as %q, want %q", principal, audit.Command())
		}
		got = append(got, query+" rows="+strconv.FormatInt(n, 10)+" "+outcome+" ended="+strconv.FormatBool(ended))
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if want := []string{
		"before=2019-01-01T00:00:00Z rows=0 recorded ended=true",
		"before=2020-01-01T03:00:00Z rows=2 recorded ended=true",
	}; !slices.Equal(got, want) {
		t.Errorf("prune records %q, want %q", got, want)
	}

	// Through informe's database role, records are neither deleted nor
	// changed but by a prune.
	for _, tt := range []struct{ name, sql string }{
		{"ErrDelete", `DELETE FROM audit_records`},
		{"ErrDeleteOne", `DELETE FROM audit_records WHERE request_id = 'kept'`},
		{"ErrTruncate", `TRUNCATE audit_records`},
		{"ErrUpdateClosed", `UPDATE audit_records SET rows = 0, principal = 'nobody' WHERE request_id = 'kept'`},
		{"ErrUpdatePrune", `UPDATE audit_records SET rows = 0 WHERE path = 'informe audit prune'`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := pool.Exec(ctx, tt.sql)
			var pe *pgconn.PgError
			if !errors.As(err, &pe) || pe.Code != "42501" {
				t.Errorf("%s: %v, want the trigger's refusal (SQLSTATE 42501)", tt.sql, err)
			}
		})
	}
	if got := pgtest.Int(t, pool, `SELECT count(*) FROM audit_records`); got != 3 {
		t.Errorf("%d records after the refused statements, want 3", got)
	}
}

// TestTokenEvents checks that token create, change and revoke each leave
// a record (who, the flags given, the token's rules after the change;
// never the secret), that the default scopes leave out audit:read and
// schedules:read, and that on a database without the audit table the
// command fails, saying so, and changes nothing.
func TestTokenEvents(t *testing.T) {
	t.Parallel()
	bin := build(t)
	pool := pgtest.New(t)
	dbURL := pool.Config().ConnString()

	secret := strings.TrimSpace(run(t, bin, dbURL, "token", "create", "--name", "sheet",
		"--columns", "contract_id,task_status,client_rut", "--mask", "client_rut"))
	run(t, bin, dbURL, "token", "change", "sheet", "--max-rows", "500", "--rows", "client_id eq 1")
	run(t, bin, dbURL, "token", "change", "--name", "sheet", "--max-exports", "3")
	run(t, bin, dbURL, "token", "revoke", "sheet")
	run(t, bin, dbURL, "token", "create", "--name", "auditor", "--scope", "audit:read", "--expires-in", "720h")

	type event struct{ Path, Query, Rules string }
	rows, err := pool.Query(context.Background(), `SELECT path, coalesce(query, ''), coalesce(rules, '') FROM audit_records
		WHERE request_id = 'event' AND principal = $1 AND outcome = 'recorded' AND ended_at IS NOT NULL ORDER BY id`, audit.Command())
	if err != nil {
		t.Fatal(err)
	}
	var got []event
	for rows.Next() {
		var e event
		if err := rows.Scan(&e.Path, &e.Query, &e.Rules); err != nil {
			t.Fatal(err)
		}
		got = append(got, e)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	const masked = "columns=contract_id,task_status,client_rut; mask=client_rut"
	want := []event{
		{"informe token create", "columns=contract_id%2Ctask_status%2Cclient_rut&mask=client_rut&name=sheet&scope=report%3Aread&scope=users%3Aread", masked},
		{"informe token change", "max-rows=500&name=sheet&rows=client_id+eq+1", masked + "; rows=client_id eq 1; max_rows=500"},
		{"informe token change", "max-exports=3&name=sheet", masked + "; rows=client_id eq 1; max_rows=500"},
		{"informe token revoke", "name=sheet", masked + "; rows=client_id eq 1; max_rows=500"},
		{"informe token create", "expires-in=720h0m0s&name=auditor&scope=audit%3Aread", ""},
	}
	if !slices.Equal(got, want) {
		t.Errorf("token events:\n%q\nwant\n%q", got, want)
	}
	if n := pgtest.Int(t, pool, `SELECT count(*) FROM audit_records a WHERE position($1 IN a::text) > 0`, secret); n != 0 {
		t.Errorf("%d records hold the token's secret", n)
	}

	// A token created without --scope gets the data's scopes only.
	run(t, bin, dbURL, "token", "create", "--name", "plain")
	show := run(t, bin, dbURL, "token", "show", "plain")
	for _, hidden := range []dataset.Scope{dataset.AuditRead, dataset.SchedulesRead} {
		if strings.Contains(show, string(hidden)) {
			t.Errorf("a token created without --scope has %s:\n%s", hidden, show)
		}
	}

	// Without the audit table (a database not migrated), a token command
	// fails, says why, and changes nothing.
	if _, err := pool.Exec(context.Background(), `ALTER TABLE audit_records RENAME TO audit_records_elsewhere`); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name string
		args []string
	}{
		{"Create", []string{"token", "create", "--name", "unrecorded"}},
		{"Change", []string{"token", "change", "plain", "--max-rows", "7"}},
		{"Revoke", []string{"token", "revoke", "plain"}},
	} {
		t.Run("ErrNoAuditTable"+tt.name, func(t *testing.T) {
			stdout, stderr, code := runCmd(t, bin, dbURL, tt.args...)
			if code != 1 || stdout != "" {
				t.Fatalf("exit %d, stdout %q: want a failure that prints no secret\n%s", code, stdout, stderr)
			}
			if !strings.Contains(stderr, "the change was not made, as its record could not be written: the audit table audit_records is missing: the database is not migrated (run informe migrate)") {
				t.Errorf("stderr %q, want it to say the audit table is missing", stderr)
			}
		})
	}
	list := run(t, bin, dbURL, "token", "list")
	if strings.Contains(list, "unrecorded") {
		t.Errorf("a token was created unrecorded:\n%s", list)
	}
	if show := regexp.MustCompile(`: +`).ReplaceAllString(run(t, bin, dbURL, "token", "show", "plain"), ": "); !strings.Contains(show, "max rows: no limit") || strings.Contains(show, "revoked") {
		t.Errorf("plain was changed unrecorded:\n%s", show)
	}
}

// TestDefaultScopes checks that a token created without scopes gets the
// data's (auth.Scopes), never audit:read or schedules:read, which are
// given only when asked for.
func TestDefaultScopes(t *testing.T) {
	t.Parallel()
	for _, s := range []dataset.Scope{dataset.AuditRead, dataset.SchedulesRead} {
		if slices.Contains(auth.Scopes, s) {
			t.Errorf("auth.Scopes %v holds %s", auth.Scopes, s)
		}
		if !slices.Contains(auth.Known, s) {
			t.Errorf("auth.Known %v lacks %s: it may be asked for", auth.Known, s)
		}
	}
}

// TestExportRecorded checks informe export's record (who: the user and
// host, and the token of --token-name; rows and bytes as written), and
// that --dataset audit is read with a token carrying audit:read and
// refused, naming the scope, for a token without it.
func TestExportRecorded(t *testing.T) {
	t.Parallel()
	bin := build(t)
	pool := pgtest.SmallSeeded(t)
	dbURL := pool.Config().ConnString()
	run(t, bin, dbURL, "token", "create", "--name", "auditor", "--scope", "audit:read")
	run(t, bin, dbURL, "token", "create", "--name", "reader", "--scope", "report:read")
	run(t, bin, dbURL, "token", "create", "--name", "plain")

	out := filepath.Join(t.TempDir(), "pendientes.csv")
	_, stderr, err := runExportCmd(t, bin, dbURL, "--filter", "task_status eq 'Pendiente'", "-o", out)
	if err != nil {
		t.Fatalf("export: %v\n%s", err, stderr)
	}
	m := summaryLine.FindSubmatch(stderr)
	if m == nil {
		t.Fatalf("no summary line: %s", stderr)
	}
	fi, err := os.Stat(out)
	if err != nil {
		t.Fatal(err)
	}
	var (
		principal, query, outcome, format, datasets string
		rows, size                                  int64
		ended                                       bool
	)
	if err := pool.QueryRow(context.Background(), `SELECT principal, query, outcome, format, dataset, rows, bytes, ended_at IS NOT NULL
		FROM audit_records WHERE path = 'informe export' ORDER BY id DESC LIMIT 1`).Scan(&principal, &query, &outcome, &format, &datasets, &rows, &size, &ended); err != nil {
		t.Fatal(err)
	}
	if principal != audit.Command() || !strings.Contains(principal, "@") {
		t.Errorf("principal %q, want the user and host %q", principal, audit.Command())
	}
	if got, want := strconv.FormatInt(rows, 10), string(m[1]); got != want || rows == 0 {
		t.Errorf("recorded rows %s, want %s as written", got, want)
	}
	if size != fi.Size() || strconv.FormatInt(size, 10) != string(m[2]) {
		t.Errorf("recorded bytes %d, want %d (the file) and %s (the summary)", size, fi.Size(), m[2])
	}
	if outcome != "complete" || !ended || format != "csv" || datasets != "general-report" || !strings.Contains(query, "%24filter=task_status+eq+%27Pendiente%27") {
		t.Errorf("record: outcome %s, ended %v, format %s, dataset %s, query %s", outcome, ended, format, datasets, query)
	}

	body, stderr, err := runExportCmd(t, bin, dbURL, "--dataset", "audit", "--token-name", "auditor", "-o", "-", "--format", "csv")
	if err != nil {
		t.Fatalf("export --dataset audit as auditor: %v\n%s", err, stderr)
	}
	if !strings.HasPrefix(string(body), "record_id,started_at,ended_at,request_id,principal,") || !strings.Contains(string(body), ",informe export,") {
		t.Errorf("the audit export as auditor: %.400s", body)
	}
	if got := pgtest.String(t, pool, `SELECT principal FROM audit_records WHERE path = 'informe export' ORDER BY id DESC LIMIT 1`); got != audit.Command()+" as token auditor" {
		t.Errorf("principal %q, want the user and host as token auditor", got)
	}

	for _, tt := range []struct {
		name string
		args []string
		want string
	}{
		{"ErrScope", []string{"--token-name", "reader"}, "lacks the audit:read scope"},
		{"ErrDefaultScopes", []string{"--token-name", "plain"}, "lacks the audit:read scope"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			body, stderr, err := runExportCmd(t, bin, dbURL, append([]string{"--dataset", "audit", "-o", "-", "--format", "csv"}, tt.args...)...)
			if err == nil || len(body) > 0 {
				t.Fatalf("export succeeded: %.200s", body)
			}
			if !strings.Contains(string(stderr), tt.want) {
				t.Errorf("stderr %s, want %q", stderr, tt.want)
			}
		})
	}
}

// TestServeKilledMidExport kills informe serve (SIGKILL, that process
// only) while a whole export streams, and checks that the export's record,
// opened before its first byte, stays: no end, and unfinished in the
// AuditLog's outcome.
func TestServeKilledMidExport(t *testing.T) {
	t.Parallel()
	bin := build(t)
	pool := bigDB(t)
	dbURL := pool.Config().ConnString()
	token := strings.TrimSpace(run(t, bin, dbURL, "token", "create", "--name", "nightly", "--scope", "report:read"))
	// The client stops reading: a long stall timeout keeps the export
	// waiting for it, never cut by informe, until the kill.
	s := startServe(t, bin, dbURL, "--stall-timeout", "1h")

	req, err := http.NewRequest("GET", s.api+"/api/general-report/export?format=csv", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	id := resp.Header.Get("X-Request-Id")
	if resp.StatusCode != 200 || id == "" {
		t.Fatalf("export: status %d, X-Request-Id %q", resp.StatusCode, id)
	}
	if _, err := io.ReadFull(resp.Body, make([]byte, 8<<10)); err != nil {
		t.Fatalf("reading the export's first bytes: %v", err)
	}

	if err := s.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if err := <-s.exited; err == nil {
		t.Fatal("serve exited cleanly after SIGKILL")
	}
	var (
		path, principal, outcome string
		ended                    *time.Time
	)
	if err := pool.QueryRow(context.Background(), `SELECT path, principal, outcome, ended_at FROM audit_records WHERE request_id = $1`, id).
		Scan(&path, &principal, &outcome, &ended); err != nil {
		t.Fatalf("the export's record: %v", err)
	}
	if path != "GET /api/general-report/export" || principal != "nightly" || outcome != "open" || ended != nil {
		t.Errorf("record: %s by %s, outcome %s, ended %v: want the export's, open, without an end", path, principal, outcome, ended)
	}
	if got := pgtest.String(t, pool, `SELECT outcome || ',' || coalesce(ended_at, '') FROM audit_log WHERE request_id = $1`, id); got != "unfinished," {
		t.Errorf("AuditLog outcome,ended_at = %q, want unfinished with no end", got)
	}
}
