package api_test

import (
	"archive/zip"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/informe/informe/auth"
	"github.com/informe/informe/internal/api"
	"github.com/informe/informe/internal/postgres"
	"github.com/informe/informe/internal/road"
	"github.com/informe/informe/internal/source"
	"github.com/informe/informe/metrics"
	"github.com/informe/informe/report"
)

// partsServer serves the API over pool, reading unfiltered whole exports
// through up to parts connections (1: through one), each part of at least
// one row, out of 4 export turns.
func partsServer(tb testing.TB, pool *pgxpool.Pool, parts int) *testServer {
	tb.Helper()
	ts := serve(tb, &api.Server{
		Data: postgres.NewStore(pool), Report: source.Report(report.Maintained),
		Tokens:  auth.NewStore(pool),
		Metrics: metrics.New(pool),
		Limits:  api.Limits{Limits: road.Limits{Exports: 4}, ExportParts: parts, ExportPartRows: 1},
	})
	ts.Pool = pool
	ts.Token = ts.NewToken(tb, fmt.Sprintf("all-%d", tokenSeq.Add(1)), nil, time.Time{})
	return ts
}

// tokenSeq names the tokens of partsServer, several on one database.
var tokenSeq atomic.Int64

// partQuery is in the query of an export's part past the first;
// pg_stat_activity shows it for a selection of few columns (the query's
// first 1 KiB).
const partQuery = "key_contract_id >= $1"

// gatedTarget is an export whose query pg_stat_activity shows whole.
const gatedTarget = "/api/general-report/export?columns=contract_id,task_code,task_detail&format="

// gatedPart waits for an informe backend at the gate and checks that it
// reads a part past the first of a parallel export; it returns its pid.
func gatedPart(tb testing.TB, mon *pgx.Conn) int {
	tb.Helper()
	pid := waitingAtGate(tb, mon)
	var query string
	if err := mon.QueryRow(context.Background(), "SELECT query FROM pg_stat_activity WHERE pid = $1", pid).Scan(&query); err != nil {
		tb.Fatal(err)
	}
	if !strings.Contains(query, partQuery) {
		tb.Fatalf("the backend at the gate runs %.200q, not a later part of a parallel export", query)
	}
	return pid
}

// gatedExport runs a whole export in format through ts with the gate
// closed, checks that a later part of it waits at the gate (it was read in
// parts), opens the gate and checks that the export succeeded and that
// ts's log has a request line matching logged, then empties the gate's
// table.
func gatedExport(t *testing.T, ts *testServer, mon *pgx.Conn, format, logged string) {
	t.Helper()
	open := closeGate(t, mon, "rows")
	r := ts.start(t, gatedTarget+format)
	gatedPart(t, mon)
	open()
	r.wait(t)
	if r.err != nil || r.status != http.StatusOK {
		t.Fatalf("gated export: status %d, %v", r.status, r.err)
	}
	if _, err := mon.Exec(context.Background(), "DELETE FROM api_test_gate"); err != nil {
		t.Fatal(err)
	}
	if logs := ts.Logs.String(); !regexp.MustCompile(logged).MatchString(logs) {
		t.Errorf("no request line logs the parts of the %s export:\n%.2000s", format, logs)
	}
}

// body returns r's body, gunzipped when it is gzip-encoded.
func decoded(tb testing.TB, r response) []byte {
	tb.Helper()
	if r.Header.Get("Content-Encoding") != "gzip" {
		return r.Body
	}
	zr, err := gzip.NewReader(bytes.NewReader(r.Body))
	if err != nil {
		tb.Fatal(err)
	}
	b, err := io.ReadAll(zr)
	if err != nil {
		tb.Fatalf("gunzip: %v", err)
	}
	return b
}

// TestParallelExportEqualsSingle checks that a whole export read through
// 2 and 3 connections is, byte for byte, the export read through one, in
// every text format and option, compressed (compared gunzipped: the
// compressor's flushes follow the clock) and with a column selection; and
// that it was read in parts (the gate, closed once, catches a later part).
func TestParallelExportEqualsSingle(t *testing.T) {
	t.Parallel()
	pool, mon := gatedDB(t)
	single := partsServer(t, pool, 1)
	targets := []string{
		"format=csv", "format=csv&delimiter=tab&bom=true", "format=csv&header=false&delimiter=semicolon",
		"format=ndjson", "format=json", "format=csv&columns=contract_id,task_code,process_role",
		"format=json&columns=task_code",
	}
	for _, parts := range []int{2, 3} {
		ts := partsServer(t, pool, parts)

		gatedExport(t, ts, mon, "ndjson", `"msg":"request".*"parts":[2-9]`)

		for _, target := range targets {
			for _, enc := range []string{"identity", "gzip"} {
				t.Run(fmt.Sprintf("%d/%s/%s", parts, target, enc), func(t *testing.T) {
					want := single.Get(t, "/api/general-report/export?"+target, "Accept-Encoding", enc)
					got := ts.Get(t, "/api/general-report/export?"+target, "Accept-Encoding", enc)
					if want.Status != http.StatusOK || got.Status != http.StatusOK {
						t.Fatalf("status %d (one connection %d); body %.300s", got.Status, want.Status, got.Body)
					}
					if g, w := got.Header.Get("Content-Encoding"), want.Header.Get("Content-Encoding"); g != w {
						t.Fatalf("Content-Encoding %q, through one connection %q", g, w)
					}
					g, w := decoded(t, got), decoded(t, want)
					if len(w) < 10<<10 {
						t.Fatalf("the export is %d bytes: too small to prove anything", len(w))
					}
					if !bytes.Equal(g, w) {
						i := 0
						for i < min(len(g), len(w)) && g[i] == w[i] {
							i++
						}
						t.Fatalf("%d bytes, through one connection %d; first difference at %d: %q vs %q",
							len(g), len(w), i, g[i:min(i+80, len(g))], w[i:min(i+80, len(w))])
					}
				})
			}
		}
	}
}

// TestParallelFilteredExportEqualsSingle checks that a filtered whole
// export in the report's own order is read in parts, and is, byte for
// byte, the export read through one connection (XLSX entry by entry,
// Parquet a column's values in order): with
// a text function, on a personal column, on two columns, with a column
// selection; and that an export read through one connection says why in
// its request line (one_part): a filter no row meets, a sort, the spec's
// equalities.
func TestParallelFilteredExportEqualsSingle(t *testing.T) {
	t.Parallel()
	pool, _ := gatedDB(t)
	single := partsServer(t, pool, 1)
	ts := partsServer(t, pool, 3)
	for _, tt := range []struct {
		target  string
		onePart string // why it is read through one connection; "" in parts
	}{
		{"format=csv&$filter=contains(task_code,'1')", ""},
		{"format=ndjson&$filter=startswith(first_name_client,'Mar')", ""},
		{"format=json&columns=contract_id,task_code&$filter=contract_id gt 7 and process_role eq 'Demandante'", ""},
		{"format=csv&delimiter=semicolon&bom=true&$filter=task_code ne 'T3' or contract_id le 2", ""},
		{"format=xlsx&columns=contract_id,task_code,task_end_date&$filter=contains(task_code,'2')", ""},
		// Parquet's values of one column, in their order.
		{"format=parquet&columns=task_code&$filter=contains(task_code,'3')", ""},
		// Counted, with the rows before each part, in the table of the
		// tasks' keys (report_task_keys), not in the view.
		{"format=xlsx&columns=contract_id,task_code&$filter=task_status eq 'Pendiente'", ""},
		{"format=parquet&columns=task_code&$filter=task_status in ('Pendiente','Terminada')", ""},
		{"format=csv&$filter=task_code eq 'none'", postgres.OneFewRows},
		{"format=csv&$orderby=task_code desc", postgres.OneSorted},
		{"format=csv&client_id=1", postgres.OneEqualities},
	} {
		t.Run(tt.target, func(t *testing.T) {
			target := "/api/general-report/export?" + strings.ReplaceAll(strings.ReplaceAll(tt.target, " ", "%20"), "$", "%24")
			want := single.Get(t, target, "Accept-Encoding", "identity")
			got := ts.Get(t, target, "Accept-Encoding", "identity")
			if want.Status != http.StatusOK || got.Status != http.StatusOK {
				t.Fatalf("status %d (one connection %d); body %.300s", got.Status, want.Status, got.Body)
			}
			if tt.onePart != postgres.OneFewRows && len(want.Body) < 10<<10 && !strings.HasPrefix(tt.target, "format=parquet") { // Parquet's dictionaries make it small
				t.Fatalf("the export is %d bytes: too small to prove anything", len(want.Body))
			}
			if strings.HasPrefix(tt.target, "format=xlsx") {
				sameEntries(t, got.Body, want.Body)
			} else if strings.HasPrefix(tt.target, "format=parquet") {
				if g, w := readable(t, "parquet", got.Body), readable(t, "parquet", want.Body); len(w) == 0 || !bytes.Equal(g, w) {
					t.Fatalf("task_code values: %d bytes, through one connection %d, or none", len(g), len(w))
				}
			} else if !bytes.Equal(got.Body, want.Body) {
				i := 0
				for i < min(len(got.Body), len(want.Body)) && got.Body[i] == want.Body[i] {
					i++
				}
				t.Fatalf("%d bytes, through one connection %d; first difference at %d", len(got.Body), len(want.Body), i)
			}
			line := logLine(t, ts.Logs.String(), "request", got.Header.Get("X-Request-Id"))
			if line == nil {
				t.Fatalf("no request line for %s:\n%.2000s", got.Header.Get("X-Request-Id"), ts.Logs.String())
			}
			if parts, _ := line["parts"].(float64); (parts > 1) != (tt.onePart == "") {
				t.Errorf("read through %v parts, want one only for %q", line["parts"], tt.onePart)
			}
			if why, _ := line["one_part"].(string); why != tt.onePart {
				t.Errorf("one_part %q, want %q", why, tt.onePart)
			}
			if tt.onePart == "" {
				// Through one connection, by the server's --export-parts.
				line := logLine(t, single.Logs.String(), "request", want.Header.Get("X-Request-Id"))
				if why, _ := line["one_part"].(string); why != postgres.OneConnection {
					t.Errorf("through one connection, one_part %q, want %q", why, postgres.OneConnection)
				}
			}
		})
	}
}

// TestParallelExportSnapshot checks that the parts of a parallel export
// read one snapshot while a writer commits inserts, deletes and updates
// at both ends of the report and past the split: the export waits at the
// gate (stage count: before its count; stage rows: a later part mid-read)
// while the writer commits, and the body equals, byte for byte, the
// single-connection export taken before the writes.
func TestParallelExportSnapshot(t *testing.T) {
	t.Parallel()
	for _, stage := range []string{"count", "rows"} {
		for _, format := range []string{"csv", "ndjson", "json"} {
			t.Run(stage+"/"+format, func(t *testing.T) {
				t.Parallel() // each on a database of its own
				pool, mon := gatedDB(t)
				target := gatedTarget + format
				before := partsServer(t, pool, 1).Get(t, target)
				if before.Status != http.StatusOK {
					t.Fatalf("status %d; body %.300s", before.Status, before.Body)
				}
				ts := partsServer(t, pool, 2)
				open := closeGate(t, mon, stage)
				r := ts.start(t, target)
				if stage == "rows" {
					gatedPart(t, mon)
				} else {
					waitingAtGate(t, mon)
				}
				w := startWriter(t, pool)
				w.waitCommits(t, 3)
				open()
				w.waitCommits(t, 1)
				r.wait(t)
				w.finish(t)
				if r.err != nil || r.status != http.StatusOK {
					t.Fatalf("status %d, %v", r.status, r.err)
				}
				if now := partsServer(t, pool, 1).Get(t, target); bytes.Equal(now.Body, before.Body) {
					t.Fatal("the writes changed nothing the export reads: the test proves nothing")
				}
				if !bytes.Equal(r.body.Bytes(), before.Body) {
					t.Fatalf("the parallel export during the writes (%d bytes) differs from the export before them (%d bytes)",
						r.body.Len(), len(before.Body))
				}
			})
		}
	}
}

// released waits until no informe backend is busy and the pool holds no
// connection acquired.
func released(tb testing.TB, mon *pgx.Conn, pool *pgxpool.Pool) {
	tb.Helper()
	if !waitFor(10*time.Second, func() bool { return busyBackends(tb, mon) == 0 }) {
		tb.Fatalf("%d informe backends still busy after 10s", busyBackends(tb, mon))
	}
	if !waitFor(10*time.Second, func() bool { return pool.Stat().AcquiredConns() == 0 }) {
		tb.Fatalf("%d pool connections still acquired after 10s", pool.Stat().AcquiredConns())
	}
}

// TestParallelExportClientGone checks that a client going away while a
// later part waits in PostgreSQL stops every part: no backend stays busy,
// no connection stays acquired, and the export turns come back (a next
// export is read in parts again).
func TestParallelExportClientGone(t *testing.T) {
	t.Parallel()
	pool, mon := gatedDB(t)
	ts := partsServer(t, pool, 3)
	closeGate(t, mon, "rows")
	r := ts.start(t, gatedTarget+"csv")
	gatedPart(t, mon)
	if !waitFor(10*time.Second, func() bool { return r.got.Load() > 0 }) {
		t.Fatal("the client got nothing before the gate, want the first row")
	}
	r.cancel()
	released(t, mon, pool)
	r.wait(t)
	if r.err == nil {
		t.Error("the client read the whole body")
	}
	if _, err := mon.Exec(context.Background(), "DELETE FROM api_test_gate"); err != nil {
		t.Fatal(err)
	}
	for range 4 { // every turn back: 4 exports of 3 parts in turn
		if got := ts.Get(t, "/api/general-report/export?format=csv&columns=contract_id"); got.Status != http.StatusOK {
			t.Fatalf("next export: status %d; body %s", got.Status, got.Body)
		}
	}
}

// TestParallelExportPartKilled checks that PostgreSQL ending a later
// part's backend (pg_terminate_backend) cuts the response (an unexpected
// EOF after the 200), stops the other parts and releases every
// connection; the server goes on serving exports.
func TestParallelExportPartKilled(t *testing.T) {
	t.Parallel()
	pool, mon := gatedDB(t)
	ts := partsServer(t, pool, 3)
	open := closeGate(t, mon, "rows")
	r := ts.start(t, gatedTarget+"ndjson")
	pid := gatedPart(t, mon)
	var ok bool
	if err := mon.QueryRow(context.Background(), "SELECT pg_terminate_backend($1)", pid).Scan(&ok); err != nil || !ok {
		t.Fatalf("pg_terminate_backend(%d) = %v, %v", pid, ok, err)
	}
	r.wait(t)
	open()
	if r.status != http.StatusOK {
		t.Fatalf("status = %d, want the 200 sent before the failure", r.status)
	}
	if !errors.Is(r.err, io.ErrUnexpectedEOF) {
		t.Fatalf("body read ended with %v after %d bytes, want an unexpected EOF", r.err, r.body.Len())
	}
	released(t, mon, pool)
	logs := ts.Logs.String()
	if !strings.Contains(logs, `"msg":"response cut"`) || !strings.Contains(logs, "57P01") {
		t.Errorf("cut not logged with its cause:\n%s", logs)
	}
	if _, err := mon.Exec(context.Background(), "DELETE FROM api_test_gate"); err != nil {
		t.Fatal(err)
	}
	if got := ts.Get(t, "/api/general-report/export?format=csv&columns=contract_id"); got.Status != http.StatusOK {
		t.Errorf("next export: status %d; body %s", got.Status, got.Body)
	}
}

// TestParallelExportXLSX checks that a whole XLSX export read through 2, 3
// and 4 connections (the later parts joined into the workbook by the
// first) is the workbook read through one: every zip entry's XML byte
// for byte, so every cell, read back through archive/zip, which checks
// each entry's CRC-32 and sizes; and the cells themselves, read by
// excelize, with a column selection too; and that it was read in parts.
func TestParallelExportXLSX(t *testing.T) {
	t.Parallel()
	pool, mon := gatedDB(t)
	single := partsServer(t, pool, 1)
	for _, parts := range []int{2, 3, 4} {
		ts := partsServer(t, pool, parts)

		gatedExport(t, ts, mon, "xlsx", `"msg":"request".*"format":"xlsx".*"parts":[2-9]`)
		for _, target := range []string{"format=xlsx", "format=xlsx&columns=contract_id,task_code,process_role,task_end_date"} {
			t.Run(fmt.Sprintf("%d/%s", parts, target), func(t *testing.T) {
				want := single.Get(t, "/api/general-report/export?"+target)
				got := ts.Get(t, "/api/general-report/export?"+target, "Accept-Encoding", "gzip")
				if want.Status != http.StatusOK || got.Status != http.StatusOK {
					t.Fatalf("status %d (one connection %d); body %.300s", got.Status, want.Status, got.Body)
				}
				if len(want.Body) < 10<<10 {
					t.Fatalf("the export is %d bytes: too small to prove anything", len(want.Body))
				}
				sameEntries(t, got.Body, want.Body)
				checkSameWorkbook(t, got.Body, want.Body)
			})
		}
	}
}

// sameEntries checks that the zips got and want hold the same entries, in
// the same order, each with the same bytes as read through one connection.
func sameEntries(tb testing.TB, got, want []byte) {
	tb.Helper()
	gotNames, gotData := zipEntries(tb, got)
	wantNames, wantData := zipEntries(tb, want)
	if !slices.Equal(gotNames, wantNames) {
		tb.Fatalf("entries %q, through one connection %q", gotNames, wantNames)
	}
	for _, name := range wantNames {
		if !bytes.Equal(gotData[name], wantData[name]) {
			tb.Fatalf("%s differs from the one read through one connection (%d bytes, want %d)", name, len(gotData[name]), len(wantData[name]))
		}
	}
}

// zipEntries returns every entry of the zip b, its name and content, in
// the archive's order, read through archive/zip, which checks each
// entry's CRC-32 and sizes at its end.
func zipEntries(tb testing.TB, b []byte) (names []string, data map[string][]byte) {
	tb.Helper()
	zr, err := zip.NewReader(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		tb.Fatal(err)
	}
	data = make(map[string][]byte)
	for _, f := range zr.File {
		rc, err := f.Open()
		if err != nil {
			tb.Fatal(err)
		}
		d, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			tb.Fatalf("%s: %v", f.Name, err)
		}
		names = append(names, f.Name)
		data[f.Name] = d
	}
	return names, data
}
