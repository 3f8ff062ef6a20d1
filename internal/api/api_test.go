package api_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/informe/informe/auth"
	"github.com/informe/informe/internal/api"
	"github.com/informe/informe/internal/api/apitest"
	"github.com/informe/informe/internal/dataset"
	"github.com/informe/informe/internal/pgserver/pgtest"
	"github.com/informe/informe/internal/postgres"
	"github.com/informe/informe/internal/source"
	"github.com/informe/informe/metrics"
	"github.com/informe/informe/report"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// closedPortPool returns a pool whose every connection attempt is refused:
// it points at a loopback port that was opened and closed again.
func closedPortPool(tb testing.TB) *pgxpool.Pool {
	tb.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	pool, err := pgxpool.New(context.Background(), "postgres://informe:x@"+addr+"/informe?connect_timeout=5&sslmode=disable")
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(pool.Close)
	return pool
}

func TestAuthentication(t *testing.T) {
	t.Parallel()
	ts := newServer(t, pgtest.Fixture(t))
	ctx := context.Background()
	reportOnly := ts.NewToken(t, "report-only", []dataset.Scope{dataset.ReportRead}, time.Time{})
	usersOnly := ts.NewToken(t, "users-only", []dataset.Scope{dataset.UsersRead}, time.Time{})
	expired := ts.NewToken(t, "expired", nil, time.Now().Add(-time.Hour))
	soonExpired := ts.NewToken(t, "soon-expired", nil, time.Now().Add(time.Hour))
	if _, err := ts.Pool.Exec(ctx, "UPDATE api_tokens SET expires_at = now() - interval '1 second' WHERE name = 'soon-expired'"); err != nil {
		t.Fatal(err)
	}
	revoked := ts.NewToken(t, "revoked", nil, time.Time{})
	if err := ts.Tokens.Revoke(ctx, "revoked"); err != nil {
		t.Fatal(err)
	}
	unknown := apitest.WellFormedToken()
	secrets := []string{ts.Token, reportOnly, usersOnly, expired, soonExpired, revoked, unknown}

	for _, tt := range []struct {
		name   string
		target string
		header []string
		status int
		msg    string // for errors: the exact message
	}{
		{"OKHeader", "/users", []string{"Authorization", "Bearer " + ts.Token}, 200, ""},
		{"OKSchemeCaseInsensitive", "/users", []string{"Authorization", "bearer " + ts.Token}, 200, ""},
		{"OKQueryToken", "/users?access_token=" + ts.Token, nil, 200, ""},
		{"OKHeaderWinsOverBogusQuery", "/users?access_token=bogus", []string{"Authorization", "Bearer " + ts.Token}, 200, ""},
		{"ErrBogusHeaderValidQuery", "/users?access_token=" + ts.Token, []string{"Authorization", "Bearer bogus"}, 401, "Invalid Token"},
		{"ErrMissing", "/users", nil, 401, "Invalid Token"},
		{"ErrMissingReport", "/api/general-report", nil, 401, "Invalid Token"},
		{"ErrBasic", "/users", []string{"Authorization", "Basic x"}, 401, "Invalid Token"},
		{"ErrBearerAlone", "/users", []string{"Authorization", "Bearer"}, 401, "Invalid Token"},
		{"ErrBearerTwoWords", "/users", []string{"Authorization", "Bearer a b"}, 401, "Invalid Token"},
		{"ErrBearerTokenAndMore", "/users", []string{"Authorization", "Bearer " + ts.Token + " x"}, 401, "Invalid Token"},
		{"ErrTwoHeaders", "/users", []string{"Authorization", "Bearer " + ts.Token, "Authorization", "Bearer " + ts.Token}, 401, "Invalid Token"},
		{"ErrGarbage", "/users", []string{"Authorization", "Bearer garbage"}, 401, "Invalid Token"},
		{"ErrUnknown", "/users", []string{"Authorization", "Bearer " + unknown}, 401, "Invalid Token"},
		{"ErrExpired", "/users", []string{"Authorization", "Bearer " + expired}, 401, "Invalid Token"},
		{"ErrExpiredByUpdate", "/users", []string{"Authorization", "Bearer " + soonExpired}, 401, "Invalid Token"},
		{"ErrRevoked", "/users", []string{"Authorization", "Bearer " + revoked}, 401, "Invalid Token"},
		{"ErrRevokedInQuery", "/users?access_token=" + revoked, nil, 401, "Invalid Token"},
		{"ErrEmptyQueryToken", "/users?access_token=", nil, 401, "Invalid Token"},
		{"ErrQueryTokenTwice", "/users?access_token=" + ts.Token + "&access_token=" + ts.Token, nil, 401, "Invalid Token"},
		{"ErrUnknownPathWithoutToken", "/nope", nil, 401, "Invalid Token"},
		{"ErrUnknownPathWithBadToken", "/nope", []string{"Authorization", "Bearer " + unknown}, 401, "Invalid Token"},
		{"ErrUnknownPath", "/nope", []string{"Authorization", "Bearer " + ts.Token}, 404, "Not Found"},
		{"ErrUnknownPathQueryToken", "/api/general-report/x?access_token=" + ts.Token, nil, 404, "Not Found"},
		{"ErrTrailingSlash", "/users/", []string{"Authorization", "Bearer " + ts.Token}, 404, "Not Found"},
		{"ErrNoReportScope", "/api/general-report", []string{"Authorization", "Bearer " + usersOnly}, 403, "this token lacks the report:read scope"},
		{"ErrNoUsersScope", "/users", []string{"Authorization", "Bearer " + reportOnly}, 403, "this token lacks the users:read scope"},
		{"OKReportScope", "/api/general-report?result_per_page=1", []string{"Authorization", "Bearer " + reportOnly}, 200, ""},
		{"OKUsersScope", "/users", []string{"Authorization", "Bearer " + usersOnly}, 200, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := ts.Do(t, http.MethodGet, tt.target, tt.header...)
			if got, want := r.Status, tt.status; got != want {
				t.Fatalf("status = %d, want %d; body %s", got, want, r.Body)
			}
			if got, want := r.Header.Get("Cache-Control"), "private, no-store"; got != want {
				t.Errorf("Cache-Control = %q, want %q", got, want)
			}
			if r.Header.Get("X-Request-Id") == "" {
				t.Error("no X-Request-Id")
			}
			for _, s := range secrets {
				if bytes.Contains(r.Body, []byte(s)) {
					t.Errorf("body holds a token: %s", r.Body)
				}
				for k, vs := range r.Header {
					for _, v := range vs {
						if strings.Contains(v, s) {
							t.Errorf("header %s holds a token: %s", k, v)
						}
					}
				}
			}
			if tt.status == 200 {
				return
			}
			if tt.status == 401 {
				if got, want := string(r.Body), `{"message":"Invalid Token"}`; got != want {
					t.Errorf("body = %s, want %s", got, want)
				}
				// The same challenge whatever was sent: RFC 6750 section
				// 3.1 wants no error code when no token was given, and
				// one only for the others would tell them apart.
				if got, want := r.Header.Get("WWW-Authenticate"), `Bearer realm="informe"`; got != want {
					t.Errorf("WWW-Authenticate = %q, want %q", got, want)
				}
			}
			if got := r.Message(t); got != tt.msg {
				t.Errorf("message = %q, want %q", got, tt.msg)
			}
		})
	}

	t.Run("TokensNeverLogged", func(t *testing.T) {
		// Also tokens in the query strings of failing requests, an
		// unparsable one among them, and of a CSV page whose Link
		// header repeats the query.
		ts.Do(t, http.MethodGet, "/api/general-report?page=0&access_token="+ts.Token)
		ts.Do(t, http.MethodGet, "/users?x=%zz&access_token="+ts.Token)
		ts.Do(t, http.MethodGet, "/nope?access_token="+ts.Token)
		ts.Do(t, http.MethodGet, "/users?access_token="+revoked)
		r := ts.Do(t, http.MethodGet, "/api/general-report?format=csv&result_per_page=2&page=2&access_token="+ts.Token)
		if r.Status != 200 {
			t.Fatalf("status = %d; body %s", r.Status, r.Body)
		}
		if link := r.Header.Get("Link"); link == "" || strings.Contains(link, ts.Token) || strings.Contains(link, "access_token") {
			t.Errorf("Link = %q, want one without the token", link)
		}
		logs := ts.Logs.String()
		if !strings.Contains(logs, "REDACTED") {
			t.Errorf("log does not show the redacted access_token:\n%s", logs)
		}
		for _, s := range secrets {
			if strings.Contains(logs, s) {
				t.Fatalf("log holds token %s:\n%s", s, logs)
			}
		}
	})
}

func TestMethodNotAllowed(t *testing.T) {
	t.Parallel()
	ts := newServer(t, pgtest.Fixture(t))
	for _, tt := range []struct {
		name   string
		method string
		target string
	}{
		{"PostUsers", http.MethodPost, "/users"},
		{"PutUsers", http.MethodPut, "/users"},
		{"DeleteReport", http.MethodDelete, "/api/general-report"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := ts.Do(t, tt.method, tt.target, "Authorization", "Bearer "+ts.Token)
			r.WantError(t, http.StatusMethodNotAllowed, "Method Not Allowed")
			if got := r.Header.Get("Allow"); !strings.Contains(got, "GET") {
				t.Errorf("Allow = %q, want it to contain GET", got)
			}
			if r.Header.Get("X-Request-Id") == "" {
				t.Error("no X-Request-Id")
			}
		})
	}
	t.Run("WithoutToken", func(t *testing.T) {
		r := ts.Do(t, http.MethodPost, "/users")
		r.WantError(t, http.StatusUnauthorized, "Invalid Token")
	})
}

func TestRequestID(t *testing.T) {
	t.Parallel()
	ts := newServer(t, pgtest.Fixture(t))
	seen := map[string]bool{}
	for _, tt := range []struct {
		name   string
		method string
		target string
		header []string
		status int
	}{
		{"OK", http.MethodGet, "/users", []string{"Authorization", "Bearer " + ts.Token}, 200},
		{"Report", http.MethodGet, "/api/general-report?format=csv", []string{"Authorization", "Bearer " + ts.Token}, 200},
		{"BadRequest", http.MethodGet, "/api/general-report?page=0", []string{"Authorization", "Bearer " + ts.Token}, 400},
		{"Unauthorized", http.MethodGet, "/users", nil, 401},
		{"NotFound", http.MethodGet, "/x", []string{"Authorization", "Bearer " + ts.Token}, 404},
		{"MethodNotAllowed", http.MethodPost, "/users", []string{"Authorization", "Bearer " + ts.Token}, 405},
		{"NotAcceptable", http.MethodGet, "/users", []string{"Authorization", "Bearer " + ts.Token, "Accept", "image/png"}, 406},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := ts.Do(t, tt.method, tt.target, tt.header...)
			if r.Status != tt.status {
				t.Fatalf("status = %d, want %d; body %s", r.Status, tt.status, r.Body)
			}
			id := r.Header.Get("X-Request-Id")
			if id == "" {
				t.Fatal("no X-Request-Id")
			}
			if seen[id] {
				t.Errorf("X-Request-Id %s given twice", id)
			}
			seen[id] = true
			if !strings.Contains(ts.Logs.String(), `"request_id":"`+id+`"`) {
				t.Errorf("request id %s not in the log", id)
			}
		})
	}
	t.Run("Echoed", func(t *testing.T) {
		r := ts.Get(t, "/users", "X-Request-Id", "client-id-42")
		if got, want := r.Header.Get("X-Request-Id"), "client-id-42"; got != want {
			t.Errorf("X-Request-Id = %q, want %q", got, want)
		}
	})
}

func TestDatabaseUnavailable(t *testing.T) {
	t.Parallel()
	const msg = "Service Unavailable: the database cannot be reached"
	check := func(t *testing.T, r response) {
		t.Helper()
		r.WantError(t, http.StatusServiceUnavailable, msg)
		if got, want := r.Header.Get("Retry-After"), "5"; got != want {
			t.Errorf("Retry-After = %q, want %q", got, want)
		}
		if r.Header.Get("X-Request-Id") == "" {
			t.Error("no X-Request-Id")
		}
		if bytes.Contains(r.Body, []byte("127.0.0.1")) {
			t.Errorf("body shows the cause: %s", r.Body)
		}
	}

	t.Run("EverythingDown", func(t *testing.T) {
		// The token is checked first, so the 503 comes from
		// authentication.
		bad := closedPortPool(t)
		ts := serve(t, &api.Server{
			Data: postgres.NewStore(bad), Report: source.Report(report.Maintained),
			Tokens:  auth.NewStore(bad),
			Metrics: metrics.New(bad),
		})
		token := apitest.WellFormedToken()
		for _, target := range []string{"/users", "/api/general-report", "/api/general-report?format=csv", "/nope"} {
			check(t, ts.Do(t, http.MethodGet, target, "Authorization", "Bearer "+token))
		}
		if logs := ts.Logs.String(); !strings.Contains(logs, "connect") {
			t.Errorf("log does not name the cause:\n%s", logs)
		}
		// Without any token, no database is needed to say 401.
		ts.Do(t, http.MethodGet, "/users").WantError(t, http.StatusUnauthorized, "Invalid Token")
	})

	t.Run("StoresDown", func(t *testing.T) {
		pool := pgtest.New(t)
		bad := closedPortPool(t)
		ts := serve(t, &api.Server{
			Data: postgres.NewStore(bad), Report: source.Report(report.Maintained),
			Tokens:  auth.NewStore(pool),
			Metrics: metrics.New(pool),
		})
		token := ts.NewToken(t, "t", nil, time.Time{})
		for _, target := range []string{
			"/api/general-report", "/api/general-report?rut=12.345.678-5", "/api/general-report?format=csv",
			"/api/general-report?format=xlsx", "/users", "/users?format=ndjson",
		} {
			t.Run(target, func(t *testing.T) {
				r := ts.Do(t, http.MethodGet, target, "Authorization", "Bearer "+token)
				check(t, r)
				if cd := r.Header.Get("Content-Disposition"); cd != "" {
					t.Errorf("error carries Content-Disposition %q", cd)
				}
			})
		}
		// Parameters are still checked before the database is needed.
		ts.Do(t, http.MethodGet, "/api/general-report?page=0", "Authorization", "Bearer "+token).
			WantError(t, http.StatusBadRequest, "page")
	})
}

func TestPanicIsInternalServerError(t *testing.T) {
	t.Parallel()
	pool := pgtest.New(t)
	// A store that panics as it opens the report's rows, as a bug would,
	// in the report handler.
	broken := postgres.NewStore(pool).Told(func(_ context.Context, d *dataset.Dataset, _ *dataset.Query) postgres.Told {
		var n *int64
		if d.Name == dataset.GeneralReport.Name {
			_ = *n
		}
		return postgres.Told{}
	})
	ts := serve(t, &api.Server{
		Data:    broken,
		Report:  source.Report(report.Maintained),
		Tokens:  auth.NewStore(pool),
		Metrics: metrics.New(pool),
	})
	token := ts.NewToken(t, "t", nil, time.Time{})
	for _, target := range []string{"/api/general-report", "/api/general-report?format=csv", "/api/general-report?format=xlsx"} {
		t.Run(target, func(t *testing.T) {
			r := ts.Do(t, http.MethodGet, target, "Authorization", "Bearer "+token)
			if r.Status != http.StatusInternalServerError {
				t.Fatalf("status = %d, want 500; body %s", r.Status, r.Body)
			}
			if got, want := string(r.Body), `{"message":"Internal Server Error"}`; got != want {
				t.Errorf("body = %s, want %s", got, want)
			}
			if got, want := r.MediaType(t), "application/json"; got != want {
				t.Errorf("Content-Type = %q, want %q", got, want)
			}
			if cd := r.Header.Get("Content-Disposition"); cd != "" {
				t.Errorf("error carries Content-Disposition %q", cd)
			}
			if r.Header.Get("X-Request-Id") == "" {
				t.Error("no X-Request-Id")
			}
		})
	}
	if logs := ts.Logs.String(); !strings.Contains(logs, `"msg":"panic"`) || !strings.Contains(logs, "nil pointer") {
		t.Errorf("panic not logged:\n%s", logs)
	}
	// The server keeps serving.
	r := ts.Do(t, http.MethodGet, "/users", "Authorization", "Bearer "+token)
	if r.Status != 200 {
		t.Errorf("after the panic, /users status = %d; body %s", r.Status, r.Body)
	}
}

// activeReportQueries returns how many report pages the server
// (application_name informe) is querying in conn's database. The query is
// recognised by its start: pg_stat_activity keeps only the first 1 KiB of
// it, which the select list fills before FROM general_report.
func activeReportQueries(tb testing.TB, conn *pgx.Conn) int {
	tb.Helper()
	var n int
	err := conn.QueryRow(context.Background(), `
		SELECT count(*) FROM pg_stat_activity
		WHERE datname = current_database() AND pid <> pg_backend_pid()
		  AND application_name = 'informe' AND state = 'active'
		  AND query LIKE 'SELECT "contract_id", "contract_status", %'`).Scan(&n)
	if err != nil {
		tb.Fatal(err)
	}
	return n
}

// monitor opens a connection of its own (not the server's pool, not named
// informe) to watch pg_stat_activity.
func monitor(tb testing.TB, pool *pgxpool.Pool) *pgx.Conn {
	tb.Helper()
	cfg := pool.Config().ConnConfig.Copy()
	cfg.RuntimeParams["application_name"] = "api-test-monitor"
	conn, err := pgx.ConnectConfig(context.Background(), cfg)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

// waitFor polls cond every 20ms until it holds or d has passed.
func waitFor(d time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(d)
	for {
		if cond() {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// bigTasks fills a fresh database with one contract and process holding n
// tasks whose detail is size bytes long, task ids 1 to n.
func bigTasks(tb testing.TB, pool *pgxpool.Pool, n, size int) {
	tb.Helper()
	_, err := pool.Exec(context.Background(), fmt.Sprintf(`
		INSERT INTO clients (id, rut, first_name, last_name) VALUES (1, '12.345.678-5', 'María', 'González');
		INSERT INTO contracts (id, client_id, status, code) VALUES (1, 1, 'APROBADO', 'BIG');
		INSERT INTO processes (id, contract_id) VALUES (1, 1);
		INSERT INTO tasks (id, process_id, name, detail, code, status, execution_date)
		SELECT i, 1, 'Tarea ' || i, repeat('x', %d), 'T' || i, 'Pendiente', '2024-03-05 14:07:09+00'
		FROM generate_series(1, %d) AS i;`, size, n))
	if err != nil {
		tb.Fatal(err)
	}
}

// TestClientGoneCancelsQuery checks that a client that goes away mid-page
// makes PostgreSQL stop working on the page's query, rather than letting
// it run to the end.
func TestClientGoneCancelsQuery(t *testing.T) {
	t.Parallel()
	pool := pgtest.New(t)
	// 10,000 rows that take 2ms each: the page's query runs for 20s
	// unless it is cancelled.
	bigTasks(t, pool, 10000, 1000)
	wrapTaskColumn(t, pool, "PERFORM pg_sleep(0.002); RETURN v;")
	ts := newServer(t, pool)
	mon := monitor(t, pool)

	for _, format := range []string{"json", "csv", "ndjson"} {
		t.Run(format, func(t *testing.T) {
			req, err := http.NewRequest(http.MethodGet, ts.URL+"/api/general-report?result_per_page=10000&format="+format, nil)
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Authorization", "Bearer "+ts.Token)
			resp, err := apitest.Client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != 200 {
				t.Fatalf("status = %d", resp.StatusCode)
			}
			// Read the first bytes, then go away mid-page.
			if _, err := io.ReadFull(resp.Body, make([]byte, 1024)); err != nil {
				t.Fatal(err)
			}
			if !waitFor(10*time.Second, func() bool { return activeReportQueries(t, mon) == 1 }) {
				t.Fatal("the report query never showed as active")
			}
			resp.Body.Close() // the client goes away mid-page
			gone := time.Now()
			if !waitFor(5*time.Second, func() bool { return activeReportQueries(t, mon) == 0 }) {
				t.Fatal("the report query still runs 5s after the client went away")
			}
			t.Logf("query ended %v after the client went away", time.Since(gone).Round(time.Millisecond))
		})
	}
	t.Run("xlsx", func(t *testing.T) {
		// A workbook is sent whole at the end: this client goes away
		// before the first byte.
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, ts.URL+"/api/general-report?result_per_page=10000&format=xlsx", nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+ts.Token)
		done := make(chan error, 1)
		go func() {
			resp, err := apitest.Client.Do(req)
			if err == nil {
				resp.Body.Close()
			}
			done <- err
		}()
		if !waitFor(10*time.Second, func() bool { return activeReportQueries(t, mon) == 1 }) {
			t.Fatal("the report query never showed as active")
		}
		cancel()
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Fatalf("request ended with %v, want it cancelled", err)
		}
		gone := time.Now()
		if !waitFor(5*time.Second, func() bool { return activeReportQueries(t, mon) == 0 }) {
			t.Fatal("the report query still runs 5s after the client went away")
		}
		t.Logf("query ended %v after the client went away", time.Since(gone).Round(time.Millisecond))
	})
	// The server's connections are still usable afterwards.
	r := ts.Get(t, "/api/general-report?result_per_page=1")
	if r.Status != 200 {
		t.Fatalf("status after cancellations = %d; body %s", r.Status, r.Body)
	}
}

// wrapTaskColumn replaces the general_report_typed view, which informe reads
// the report from, by one over the original
// whose task column is computed by a PL/pgSQL function of the task's id and
// name, with the given body. PostgreSQL evaluates such a function as each
// row is sent (after the sort, as the page's query has a LIMIT), so it acts
// on the rows one by one, in report order.
func wrapTaskColumn(tb testing.TB, pool *pgxpool.Pool, body string) {
	tb.Helper()
	var cols []string
	for _, c := range dataset.GeneralReport.Columns {
		if c.Name == "task" {
			cols = append(cols, "api_test_task(key_task_id, task) AS task")
			continue
		}
		cols = append(cols, c.Name)
	}
	cols = append(cols, "key_contract_id", "key_process_id", "key_task_id", "key_client_id", "key_code_contract", "key_client_rut")
	_, err := pool.Exec(context.Background(), fmt.Sprintf(`
		CREATE FUNCTION api_test_task(id bigint, v text) RETURNS text
		LANGUAGE plpgsql STABLE AS $$ BEGIN %s END $$;
		ALTER VIEW general_report_typed RENAME TO general_report_base;
		CREATE VIEW general_report_typed AS SELECT %s FROM general_report_base;`, body, strings.Join(cols, ", ")))
	if err != nil {
		tb.Fatal(err)
	}
}

// TestFailureMidStreamAbortsResponse checks that a failure after the first
// bytes were sent cuts the connection before the chunked terminator, so no
// client can take the truncated body for a whole one; and that the same
// failure before the first byte is an ordinary 500.
func TestFailureMidStreamAbortsResponse(t *testing.T) {
	t.Parallel()
	pool := pgtest.New(t)
	bigTasks(t, pool, 300, 1000)
	// 250 rows of over 1 KB come before the failing one: well past the
	// encoders' 64 KiB buffers. The row before it waits a moment, so that
	// the spool has handed the first bytes to the client when the failure
	// comes (a failure before any byte left is a clean 500, as First
	// checks).
	wrapTaskColumn(t, pool, `
		IF id = 250 THEN
			PERFORM pg_sleep(0.3);
		END IF;
		IF id = 251 THEN
			RETURN (1 / (id - 251))::text;
		END IF;
		RETURN v;`)
	ts := newServer(t, pool)

	for _, format := range []string{"json", "csv", "ndjson", "xlsx"} {
		t.Run("Late/"+format, func(t *testing.T) {
			req, err := http.NewRequest(http.MethodGet, ts.URL+"/api/general-report?format="+format, nil)
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Authorization", "Bearer "+ts.Token)
			resp, err := apitest.Client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			if resp.StatusCode != 200 {
				t.Fatalf("status = %d, want the 200 sent before the failure", resp.StatusCode)
			}
			body, err := io.ReadAll(resp.Body)
			if err == nil {
				t.Fatalf("body read to a clean EOF after %d bytes; want an error", len(body))
			}
			if !errors.Is(err, io.ErrUnexpectedEOF) {
				t.Logf("read error: %v (not io.ErrUnexpectedEOF, but an error)", err)
			}
			least := 64 << 10
			if format == "xlsx" { // deflated: a tenth of the text formats
				least = 16 << 10
			}
			if len(body) < least {
				t.Errorf("got %d bytes before the cut, want more than %d", len(body), least)
			}
			if bytes.Contains(body, []byte("Tarea 251")) {
				t.Error("the failing row reached the client")
			}
		})
	}
	if logs := ts.Logs.String(); !strings.Contains(logs, `"msg":"response cut"`) || !strings.Contains(logs, `"reason":"internal"`) || !strings.Contains(logs, "22012") {
		t.Errorf("abort not logged with its cause:\n%s", logs)
	}

	for _, format := range []string{"json", "csv", "ndjson", "xlsx"} {
		t.Run("First/"+format, func(t *testing.T) {
			// The failing row is the page's first: nothing was sent yet.
			r := ts.Get(t, "/api/general-report?result_per_page=1&page=251&format="+format)
			if r.Status != http.StatusInternalServerError {
				t.Fatalf("status = %d, want 500; body %.200s", r.Status, r.Body)
			}
			if got, want := string(r.Body), `{"message":"Internal Server Error"}`; got != want {
				t.Errorf("body = %s, want %s", got, want)
			}
			if got, want := r.MediaType(t), "application/json"; got != want {
				t.Errorf("Content-Type = %q, want %q", got, want)
			}
			for _, h := range []string{"Content-Disposition", "Link", "X-Total-Count", "X-Total-Pages", "X-Current-Page"} {
				if v := r.Header.Get(h); v != "" {
					t.Errorf("error carries %s: %q", h, v)
				}
			}
		})
	}
	if !strings.Contains(ts.Logs.String(), "division by zero") {
		t.Error("cause not logged")
	}
}
