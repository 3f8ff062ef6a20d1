package api_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/informe/informe/internal/api"
	"github.com/informe/informe/internal/api/apitest"
	"github.com/informe/informe/internal/audit"
	"github.com/informe/informe/internal/dataset"
	"github.com/informe/informe/internal/pgserver/pgtest"
	"github.com/informe/informe/internal/rut"
	"github.com/informe/informe/internal/spool"
	"github.com/informe/informe/internal/subjects"
)

// recordWays are the two ways a record is inserted, as tests name them.
var recordWays = []struct {
	name    string
	onReads bool
}{{"on-reads", true}, {"beside", false}}

// record is an audit record as a test reads it.
type record struct {
	Principal, Path, Dataset, Outcome, Reason, Format, Query string
	Ended                                                    *time.Time
	Rows, Bytes                                              *int64
	Status                                                   *int32
	Subjects                                                 []byte
}

// records returns the records of request id, oldest first.
func records(tb testing.TB, pool *pgxpool.Pool, id string) []record {
	tb.Helper()
	rows, err := pool.Query(context.Background(), `SELECT principal, path, coalesce(dataset, ''), outcome,
  coalesce(reason, ''), coalesce(format, ''), coalesce(query, ''), ended_at, rows, bytes, status, subjects
FROM audit_records WHERE request_id = $1 ORDER BY id`, id)
	if err != nil {
		tb.Fatal(err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (record, error) {
		var r record
		err := row.Scan(&r.Principal, &r.Path, &r.Dataset, &r.Outcome, &r.Reason, &r.Format, &r.Query,
			&r.Ended, &r.Rows, &r.Bytes, &r.Status, &r.Subjects)
		return r, err
	})
	if err != nil {
		tb.Fatal(err)
	}
	return out
}

func flush(tb testing.TB, log *audit.Log) {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := log.Flush(ctx); err != nil {
		tb.Fatal(err)
	}
}

// TestAuditConcurrent sends 32 clients' requests at once through every
// door that carries data, and checks that each response has exactly one
// closed record whose rows and bytes are what its client received.
func TestAuditConcurrent(t *testing.T) {
	t.Parallel()
	for _, way := range recordWays {
		t.Run(way.name, func(t *testing.T) {
			t.Parallel()
			testAuditConcurrent(t, way.onReads)
		})
	}
}

func testAuditConcurrent(t *testing.T, onReads bool) {
	pool := pgtest.SmallSeeded(t)
	var log *audit.Log
	ts := newOpsServerOn(t, pool, func(s *api.Server) { log = apitest.AuditedHow(t, pool, s, onReads) }, nil)
	// Each door, with how to count the rows its body carries.
	lines := func(b []byte) int64 { return int64(bytes.Count(b, []byte("\n"))) }
	csvRows := func(b []byte) int64 { return lines(b) - 1 }
	value := func(b []byte) int64 {
		var v struct {
			Value []json.RawMessage `json:"value"`
		}
		if err := json.Unmarshal(b, &v); err != nil {
			t.Errorf("feed body: %v", err)
		}
		return int64(len(v.Value))
	}
	data := func(b []byte) int64 {
		var v struct {
			Data []json.RawMessage `json:"data"`
		}
		if err := json.Unmarshal(b, &v); err != nil {
			t.Errorf("page body: %v", err)
		}
		return int64(len(v.Data))
	}
	none := func([]byte) int64 { return 0 }
	doors := []struct {
		target string
		rows   func([]byte) int64
	}{
		{"/api/general-report?result_per_page=50&page=2", data},
		{"/api/general-report?result_per_page=20&format=csv", csvRows},
		{"/api/general-report/export?format=ndjson", lines},
		{"/api/contracts/export?format=csv&$orderby=contract_id desc", csvRows},
		{"/users?format=ndjson", lines},
		{"/odata/GeneralReport?$top=30&$select=contract_id,client_rut", value},
		{"/odata/Contracts?$filter=contract_id lt 40", value},
		{"/odata/Clients/$count", none},
	}
	const clients = 32
	type result struct {
		id   string
		resp response
		rows int64
	}
	results := make([]result, clients)
	var wg sync.WaitGroup
	for i := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			d := doors[i%len(doors)]
			id := fmt.Sprintf("audit-concurrent-%d", i)
			r := ts.Get(t, strings.ReplaceAll(d.target, " ", "%20"), "Accept-Encoding", "identity", "X-Request-Id", id)
			results[i] = result{id: id, resp: r, rows: d.rows(r.Body)}
		}()
	}
	wg.Wait()
	flush(t, log)
	for i, res := range results {
		if res.resp.Status != http.StatusOK {
			t.Errorf("%s: status %d: %.200s", doors[i%len(doors)].target, res.resp.Status, res.resp.Body)
			continue
		}
		recs := records(t, pool, res.id)
		if len(recs) != 1 {
			t.Errorf("%s: %d records, want 1", res.id, len(recs))
			continue
		}
		r := recs[0]
		if r.Ended == nil || r.Outcome != "complete" || r.Rows == nil || r.Bytes == nil {
			t.Errorf("%s: record %+v, want closed complete", res.id, r)
			continue
		}
		if *r.Rows != res.rows || *r.Bytes != int64(len(res.resp.Body)) {
			t.Errorf("%s (%s): recorded %d rows, %d bytes; the client received %d rows, %d bytes",
				res.id, doors[i%len(doors)].target, *r.Rows, *r.Bytes, res.rows, len(res.resp.Body))
		}
		if !strings.HasPrefix(r.Principal, "all-") || !strings.HasPrefix(r.Path, "GET /") || r.Status == nil || *r.Status != 200 {
			t.Errorf("%s: record %+v", res.id, r)
		}
	}
	// The response that carried client_rut names its persons; the count,
	// which carried none, names no one.
	if r := records(t, pool, "audit-concurrent-5"); len(r) == 1 && len(r[0].Subjects) == 0 {
		t.Errorf("a feed page with client_rut recorded no persons")
	}
	if r := records(t, pool, "audit-concurrent-7"); len(r) == 1 && r[0].Subjects != nil {
		t.Errorf("a count recorded persons: %x", r[0].Subjects)
	}
}

// TestAuditTokenRedacted checks that a token in the query string is not
// recorded, and that the rules of a ruled token are.
func TestAuditTokenRedacted(t *testing.T) {
	t.Parallel()
	pool := pgtest.SmallSeeded(t)
	var log *audit.Log
	ts := newOpsServerOn(t, pool, func(s *api.Server) { log = apitest.Audited(t, pool, s) }, nil)
	r := ts.Do(t, http.MethodGet, "/api/general-report?result_per_page=5&access_token="+ts.Token, "X-Request-Id", "audit-redacted")
	if r.Status != http.StatusOK {
		t.Fatalf("status %d: %s", r.Status, r.Body)
	}
	flush(t, log)
	recs := records(t, pool, "audit-redacted")
	if len(recs) != 1 {
		t.Fatalf("%d records", len(recs))
	}
	if strings.Contains(recs[0].Query, ts.Token) || !strings.Contains(recs[0].Query, "access_token=REDACTED") {
		t.Errorf("recorded query %q", recs[0].Query)
	}
}

// TestAuditUnwritable makes the records' table refuse inserts: every
// read is then a 503 with Retry-After that carries no data, and requests
// that read nothing are served as before.
func TestAuditUnwritable(t *testing.T) {
	t.Parallel()
	for _, way := range recordWays {
		t.Run(way.name, func(t *testing.T) {
			t.Parallel()
			testAuditUnwritable(t, way.onReads)
		})
	}
}

func testAuditUnwritable(t *testing.T, onReads bool) {
	pool := pgtest.SmallSeeded(t)
	ts := newOpsServerOn(t, pool, func(s *api.Server) { apitest.AuditedHow(t, pool, s, onReads) }, nil)
	_, err := pool.Exec(context.Background(), `CREATE FUNCTION refuse() RETURNS trigger LANGUAGE plpgsql AS
  $$ BEGIN RAISE EXCEPTION 'the disk is full'; END $$;
CREATE TRIGGER refuse BEFORE INSERT ON audit_records FOR EACH ROW EXECUTE FUNCTION refuse()`)
	if err != nil {
		t.Fatal(err)
	}
	for _, target := range []string{
		"/api/general-report?result_per_page=5",
		"/api/general-report/export?format=csv",
		"/api/clients/export?format=xlsx",
		"/odata/GeneralReport?$top=3",
		"/odata/Contracts(1)",
		"/odata/Clients/$count",
		"/users",
	} {
		r := ts.Get(t, target)
		if r.Status != http.StatusServiceUnavailable || r.Header.Get("Retry-After") == "" {
			t.Errorf("%s: status %d, Retry-After %q; want 503 with Retry-After", target, r.Status, r.Header.Get("Retry-After"))
		}
		if !strings.Contains(string(r.Body), "the record of this read could not be written") {
			t.Errorf("%s: body %s", target, r.Body)
		}
		if r.Header.Get("X-Total-Count") != "" || r.Header.Get("Content-Disposition") != "" {
			t.Errorf("%s: data headers sent: %v", target, r.Header)
		}
	}
	if r := ts.Get(t, "/odata/$metadata"); r.Status != http.StatusOK {
		t.Errorf("$metadata: status %d", r.Status)
	}
}

// TestAuditCut checks that a response cut by a stalled reader is recorded
// as cut, with the reason, and that refused requests are counted per
// principal, address and status.
func TestAuditCut(t *testing.T) {
	t.Parallel()
	pool := pgtest.New(t)
	const rowSize = 1000
	variedTasks(t, pool, 2000, rowSize)
	var log *audit.Log
	ts := newOpsServerOn(t, pool, func(s *api.Server) {
		log = apitest.Audited(t, pool, s)
		s.Delivery.Spool = spool.Limits{Memory: 32 << 20, NoProgress: time.Second}
	}, func(l net.Listener) net.Listener { return smallSendBuffers{l} })
	buffers := socketBuffers(t)
	target := fmt.Sprintf("/api/general-report?format=ndjson&columns=task,task_detail&result_per_page=%d", (10*buffers+1<<20)/rowSize+1)
	ts.wantStalled(t, target, "audit-stalled")
	flush(t, log)
	recs := records(t, pool, "audit-stalled")
	if len(recs) != 1 || recs[0].Outcome != "cut" || recs[0].Reason != "client_stalled" || recs[0].Ended == nil {
		t.Fatalf("records %+v, want one cut, client_stalled", recs)
	}
	if *recs[0].Bytes <= 0 {
		t.Errorf("a cut response recorded %d bytes", *recs[0].Bytes)
	}

	for range 3 {
		ts.Do(t, http.MethodGet, "/api/general-report", "Authorization", "Bearer informe_"+strings.Repeat("x", 43))
	}
	for range 2 {
		if r := ts.Get(t, "/api/general-report?nonsense=1"); r.Status != http.StatusBadRequest {
			t.Fatalf("status %d", r.Status)
		}
	}
	flush(t, log)
	type count struct {
		principal string
		status    int
		reason    string
		n         int
	}
	rows, err := pool.Query(context.Background(), `SELECT principal, status, coalesce(reason, ''), requests FROM audit_records
WHERE outcome = 'refused' AND client_address = '127.0.0.1' ORDER BY status`)
	if err != nil {
		t.Fatal(err)
	}
	var got []count
	for rows.Next() {
		var c count
		if err := rows.Scan(&c.principal, &c.status, &c.reason, &c.n); err != nil {
			t.Fatal(err)
		}
		got = append(got, c)
	}
	want := []count{{ts.principal(t), 400, "unknown_parameter", 2}, {"(no valid token)", 401, "", 3}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("refusals %v, want %v", got, want)
	}
}

// principal returns the name of ts's all-scopes token.
func (ts *testServer) principal(tb testing.TB) string {
	tb.Helper()
	var name string
	if err := ts.Pool.QueryRow(context.Background(), `SELECT name FROM api_tokens ORDER BY id LIMIT 1`).Scan(&name); err != nil {
		tb.Fatal(err)
	}
	return name
}

// TestAuditSubjectsReport sends 200 mixed requests through the doors and
// checks that informe subjects report names exactly the responses whose
// bodies carried a chosen client's RUT, as their clients received them.
func TestAuditSubjectsReport(t *testing.T) {
	t.Parallel()
	pool := pgtest.SmallSeeded(t)
	var log *audit.Log
	ts := newOpsServerOn(t, pool, func(s *api.Server) { log = apitest.Audited(t, pool, s) }, nil)
	ctx := context.Background()
	var clientRUT string
	var clientID, contractID, contracts int64
	if err := pool.QueryRow(ctx, `SELECT c.rut, c.id, min(k.id), (SELECT count(*) FROM contracts)
FROM clients c JOIN contracts k ON k.client_id = c.id WHERE c.rut <> ''
GROUP BY c.id, c.rut ORDER BY c.id LIMIT 1 OFFSET 3`).Scan(&clientRUT, &clientID, &contractID, &contracts); err != nil {
		t.Fatal(err)
	}
	var targets []string
	for i := range 200 {
		var target string
		switch i % 8 {
		case 0:
			target = fmt.Sprintf("/api/general-report?result_per_page=100&page=%d&columns=contract_id,client_rut", 1+i%13)
		case 1:
			target = fmt.Sprintf("/api/general-report?contract_id=%d&format=csv", contractID+int64(i%5)-2)
		case 2:
			target = fmt.Sprintf("/odata/GeneralReport?$top=50&$skip=%d&$select=contract_id,client_rut", (i%9)*50)
		case 3:
			target = fmt.Sprintf("/api/clients/export?format=ndjson&$filter=client_id%%20ge%%20%d%%20and%%20client_id%%20lt%%20%d", clientID-1+int64(i%3), clientID+1+int64(i%3))
		case 4:
			target = fmt.Sprintf("/api/general-report?result_per_page=100&page=%d&columns=contract_id,task_status", 1+i%13)
		case 5:
			target = fmt.Sprintf("/odata/Contracts?$filter=contract_id%%20eq%%20%d", contractID+int64(i%4)-1)
		case 6:
			target = fmt.Sprintf("/odata/Clients(%d)", clientID+int64(i%3)-1)
		case 7:
			target = "/odata/Clients/$count"
		}
		targets = append(targets, target)
	}
	carried := map[string]bool{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	sem := make(chan struct{}, 8)
	for i, target := range targets {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			id := fmt.Sprintf("subjects-%03d", i)
			r := ts.Get(t, target, "Accept-Encoding", "identity", "X-Request-Id", id)
			if r.Status != http.StatusOK {
				t.Errorf("%s: status %d: %.200s", target, r.Status, r.Body)
				return
			}
			if bytes.Contains(r.Body, []byte(clientRUT)) {
				mu.Lock()
				carried[id] = true
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	flush(t, log)
	if len(carried) == 0 || len(carried) == len(targets) {
		t.Fatalf("%d of %d responses carried the client's RUT: the requests do not tell the report anything", len(carried), len(targets))
	}
	r, err := rut.Parse(clientRUT)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := subjects.Report(ctx, pool, r, time.Time{}, &out); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&out).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	named := map[string]bool{}
	for _, row := range rows[1:] {
		named[row[2]] = true
		if !strings.Contains(row[7], "rut") {
			t.Errorf("%s: personal columns %q", row[2], row[7])
		}
	}
	for id := range carried {
		if !named[id] {
			t.Errorf("%s carried the client's RUT, and the report does not name it", id)
		}
	}
	for id := range named {
		if !carried[id] {
			t.Errorf("the report names %s, which did not carry the client's RUT", id)
		}
	}
	t.Logf("%d of %d responses carried the client; the report named %d", len(carried), len(targets), len(named))
}

// TestAuditLogDoors reads the audit log through its doors with a token
// carrying audit:read, and checks that a token without it cannot.
func TestAuditLogDoors(t *testing.T) {
	t.Parallel()
	pool := pgtest.SmallSeeded(t)
	var log *audit.Log
	ts := newOpsServerOn(t, pool, func(s *api.Server) { log = apitest.Audited(t, pool, s) }, nil)
	if r := ts.Get(t, "/api/general-report?result_per_page=3", "X-Request-Id", "read-before"); r.Status != http.StatusOK {
		t.Fatalf("status %d", r.Status)
	}
	flush(t, log)
	dpo := ts.NewToken(t, "dpo", []dataset.Scope{dataset.AuditRead}, time.Time{})
	as := func(token, target string) response {
		return ts.Do(t, http.MethodGet, target, "Authorization", "Bearer "+token, "X-Request-Id", "dpo-read")
	}
	for _, target := range []string{"/api/audit/export?format=csv", "/odata/AuditLog?$filter=request_id%20eq%20'read-before'", "/odata/AuditLog/$count"} {
		r := as(dpo, target)
		if r.Status != http.StatusOK {
			t.Errorf("%s: status %d: %.300s", target, r.Status, r.Body)
			continue
		}
		if !strings.HasSuffix(target, "$count") && !bytes.Contains(r.Body, []byte("read-before")) {
			t.Errorf("%s: the earlier read is not in %.500s", target, r.Body)
		}
		if r := as(ts.Token, target); r.Status != http.StatusForbidden {
			t.Errorf("%s without audit:read: status %d", target, r.Status)
		}
	}
	if r := ts.Get(t, "/odata/"); bytes.Contains(r.Body, []byte("AuditLog")) {
		t.Errorf("the service document offers AuditLog to a token without audit:read")
	}
	flush(t, log)
	// Reading the log is recorded too.
	if recs := records(t, pool, "dpo-read"); len(recs) != 3 {
		t.Errorf("%d records of the audit log's reads, want 3 (the refused ones counted apart)", len(recs))
	}
}
