package api_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/informe/informe/internal/api/apitest"
	"github.com/informe/informe/internal/fileexport"
	"github.com/informe/informe/internal/pgserver/pgtest"
	"github.com/informe/informe/internal/postgres"
	"github.com/informe/informe/internal/source"
	"github.com/informe/informe/report"
)

// TestDoorsFoldAndLambda checks that Informe.fold and the lambda operators
// any and all give SQL's own count of the rows on every door: the OData
// count, the export's count (the web page's HEAD), the export's rows and
// informe export's rows.
func TestDoorsFoldAndLambda(t *testing.T) {
	t.Parallel()
	pool := pgtest.Seeded(t)
	ts := newServer(t, pool)
	const tasksOfContract = "SELECT 1 FROM tasks k JOIN processes p ON p.id = k.process_id WHERE p.contract_id = c.id"
	for _, tt := range []struct {
		name, grain, set, key, filter, sql string
	}{
		{"FoldEq", "clients", "Clients", "client_id", "Informe.fold(text=last_name_client) eq Informe.fold(text='Nunez')",
			"SELECT count(*) FROM clients WHERE " + apitest.SpanishFold("last_name") + " = 'nunez'"},
		{"FoldEqCapitals", "clients", "Clients", "client_id", "Informe.fold(text=last_name_client) eq Informe.fold(text='NÚÑEZ')",
			"SELECT count(*) FROM clients WHERE " + apitest.SpanishFold("last_name") + " = 'nunez'"},
		{"FoldContains", "clients", "Clients", "client_id", "contains(Informe.fold(text=client_region),Informe.fold(text='Nuble'))",
			"SELECT count(*) FROM clients WHERE strpos(" + apitest.SpanishFold("region") + ", 'nuble') > 0"},
		{"FoldContainsMar", "clients", "Clients", "client_id", "contains(Informe.fold(text=client_commune),Informe.fold(text='mar'))",
			"SELECT count(*) FROM clients WHERE strpos(" + apitest.SpanishFold("commune") + ", 'mar') > 0"},
		{"FoldReport", "general-report", "GeneralReport", "", "Informe.fold(text=client_commune) eq Informe.fold(text='Valparaiso')",
			"SELECT count(*) FROM general_report_typed WHERE " + apitest.SpanishFold("client_commune") + " = 'valparaiso'"},
		{"AnyPending", "contracts", "Contracts", "contract_id", "Tasks/any(d:d/task_status eq 'Pendiente')",
			"SELECT count(*) FROM contracts c WHERE EXISTS (" + tasksOfContract + " AND k.status = 'Pendiente')"},
		{"AnyEndedIn", "contracts", "Contracts", "contract_id", "Tasks/any(d:d/task_end_date ge 2025-01-01 and d/task_end_date lt 2026-01-01)",
			"SELECT count(*) FROM contracts c WHERE EXISTS (" + tasksOfContract + " AND k.end_date >= '2025-01-01' AND k.end_date < '2026-01-01')"},
		{"NotAnyTask", "contracts", "Contracts", "contract_id", "not Tasks/any()",
			"SELECT count(*) FROM contracts c WHERE NOT EXISTS (" + tasksOfContract + ")"},
		{"AllDone", "processes", "Processes", "process_id", "Tasks/all(d:d/task_status eq 'Terminada')",
			"SELECT count(*) FROM processes p WHERE NOT EXISTS (SELECT 1 FROM tasks k WHERE k.process_id = p.id AND k.status IS DISTINCT FROM 'Terminada')"},
		{"AllWithNull", "processes", "Processes", "process_id", "Tasks/all(d:d/task_progress ge 50)",
			"SELECT count(*) FROM processes p WHERE NOT EXISTS (SELECT 1 FROM tasks k WHERE k.process_id = p.id AND (k.progress >= 50) IS NOT TRUE)"},
		{"Nested", "clients", "Clients", "client_id", "Contracts/any(c:c/Tasks/any(d:d/task_status eq 'En Curso'))",
			"SELECT count(*) FROM clients cl WHERE EXISTS (SELECT 1 FROM contracts c WHERE c.client_id = cl.id AND EXISTS (" + tasksOfContract + " AND k.status = 'En Curso'))"},
		{"AnyFolded", "contracts", "Contracts", "contract_id", "Processes/any(p:contains(Informe.fold(text=p/caratulado_process),Informe.fold(text='ministerio publico')))",
			"SELECT count(*) FROM contracts c WHERE EXISTS (SELECT 1 FROM processes p WHERE p.contract_id = c.id AND strpos(" + apitest.SpanishFold("p.caption") + ", 'ministerio publico') > 0)"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			want := pgtest.Int(t, pool, tt.sql)
			all := pgtest.Int(t, pool, "SELECT count(*) FROM "+map[string]string{"general-report": "general_report_typed", "clients": "clients",
				"contracts": "contracts", "processes": "processes"}[tt.grain])
			if want == 0 || want == all {
				t.Fatalf("SQL counts %d of %d rows: the case checks nothing", want, all)
			}
			exportPath := "/api/" + tt.grain + "/export"
			src, err := source.Named(tt.grain, report.Maintained)
			if err != nil {
				t.Fatal(err)
			}
			if tt.grain == "general-report" {
				src = source.Report(report.Maintained)
			}
			f := url.Values{"$filter": {tt.filter}}

			r := ts.Get(t, "/odata/"+tt.set+"/$count?"+f.Encode())
			if r.Status != http.StatusOK || strings.TrimSpace(string(r.Body)) != strconv.FormatInt(want, 10) {
				t.Errorf("OData $count: %d %.300s, want %d", r.Status, r.Body, want)
			}
			r = ts.Do(t, http.MethodHead, exportPath+"?format=csv&"+f.Encode(), "Authorization", "Bearer "+ts.Token)
			if r.Status != http.StatusOK || r.Header.Get("X-Total-Count") != strconv.FormatInt(want, 10) {
				t.Errorf("export HEAD: %d, X-Total-Count %s, want %d", r.Status, r.Header.Get("X-Total-Count"), want)
			}
			cols := url.Values{"$filter": {tt.filter}, "columns": {"contract_id"}}
			if tt.key != "" {
				cols.Set("columns", tt.key)
			}
			r = ts.Get(t, exportPath+"?format=csv&"+cols.Encode())
			if got := csvRecordCount(t, r.Body); r.Status != http.StatusOK || got != want {
				t.Errorf("export: %d, %d rows, want %d", r.Status, got, want)
			}
			plan, err := fileexport.NewPlan(fileexport.Flags{Source: src, Query: cols, Output: "-", Format: "csv", Parts: 2})
			if err != nil {
				t.Fatalf("export plan: %v", err)
			}
			var out bytes.Buffer
			if _, err := fileexport.Run(context.Background(), postgres.NewStore(ts.Pool), plan, &out, io.Discard); err != nil {
				t.Fatalf("informe export: %v", err)
			}
			if got := csvRecordCount(t, out.Bytes()); got != want {
				t.Errorf("informe export: %d rows, want %d", got, want)
			}
		})
	}
}

// csvRecordCount counts the records of a CSV body after its header.
func csvRecordCount(t *testing.T, body []byte) int64 {
	t.Helper()
	recs, err := csv.NewReader(bytes.NewReader(body)).ReadAll()
	if err != nil || len(recs) == 0 {
		t.Fatalf("CSV: %v (%.200s)", err, body)
	}
	return int64(len(recs) - 1)
}
