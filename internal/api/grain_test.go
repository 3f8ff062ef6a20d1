package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/big"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/informe/informe/internal/dataset"
	"github.com/informe/informe/internal/pgserver/pgtest"
)

// grainTables are the entities at their own grain: the export's name, the
// OData set, its key and the SQL counting the rows of its grain over the
// base tables.
var grainTables = []struct {
	name, set, key, count string
}{
	{"contracts", "Contracts", "contract_id", "SELECT count(*) FROM contracts"},
	{"processes", "Processes", "process_id", "SELECT count(*) FROM processes"},
	{"tasks", "Tasks", "task_id", "SELECT count(*) FROM tasks"},
	{"clients", "Clients", "client_id", "SELECT count(*) FROM clients"},
	{"services", "Services", "service_id", "SELECT count(*) FROM services"},
}

// TestGrainRowCounts reads each entity's whole export in every format and
// its OData count: each has as many rows as its table, each key once.
func TestGrainRowCounts(t *testing.T) {
	t.Parallel()
	pool := pgtest.Seeded(t)
	ts := newServer(t, pool)
	// The entities are the datasets read under report:read but the report.
	want := -1
	for _, d := range dataset.All {
		if d.Scope == dataset.ReportRead {
			want++
		}
	}
	if got := len(grainTables); got != want {
		t.Fatalf("%d grains tested, %d served", got, want)
	}
	for _, g := range grainTables {
		want := pgtest.Int(t, pool, g.count)
		if want < 10 {
			t.Fatalf("%s: only %d rows seeded", g.name, want)
		}
		for _, f := range []struct {
			format string
			delim  rune
		}{{"csv", ','}, {"tsv", '\t'}, {"ndjson", 0}, {"json", 0}, {"xlsx", 0}} {
			t.Run(g.name+"/"+f.format, func(t *testing.T) {
				target := "/api/" + g.name + "/export?format=" + f.format + "&columns=" + g.key
				if f.format == "tsv" {
					target = "/api/" + g.name + "/export?format=csv&delimiter=tab&columns=" + g.key
				}
				r := ts.Get(t, target)
				if r.Status != http.StatusOK {
					t.Fatalf("status = %d; body %.300s", r.Status, r.Body)
				}
				if got := r.Header.Get("X-Total-Count"); got != strconv.FormatInt(want, 10) {
					t.Errorf("X-Total-Count = %s, want %d", got, want)
				}
				format := f.format
				if format == "tsv" {
					format = "csv"
				}
				tab := readTable(t, format, r.Body, f.delim, g.name)
				if got := int64(len(tab.Rows)); got != want {
					t.Errorf("%d rows, want %d", got, want)
				}
				seen := make(map[string]bool, len(tab.Rows))
				for _, row := range tab.Rows {
					if seen[row] {
						t.Fatalf("key %s twice", row)
					}
					seen[row] = true
				}
			})
		}
		t.Run(g.name+"/odata", func(t *testing.T) {
			r := ts.Get(t, "/odata/"+g.set+"/$count")
			if r.Status != http.StatusOK || string(r.Body) != strconv.FormatInt(want, 10) {
				t.Errorf("/$count = %d %s, want %d", r.Status, r.Body, want)
			}
		})
	}
}

// sums adds up values by group.
type sums map[string]*big.Rat

func (s sums) add(tb testing.TB, group, value string) {
	tb.Helper()
	v, ok := new(big.Rat).SetString(value)
	if !ok {
		tb.Fatalf("%q is not a number", value)
	}
	if s[group] == nil {
		s[group] = new(big.Rat)
	}
	s[group].Add(s[group], v)
}

func (s sums) equal(o sums) bool {
	if len(s) != len(o) {
		return false
	}
	for k, v := range s {
		if o[k] == nil || o[k].Cmp(v) != 0 {
			return false
		}
	}
	return true
}

// sqlSums returns the sums that sql (rows of a group and a numeric as
// text) computes.
func sqlSums(tb testing.TB, pool *pgxpool.Pool, sql string, args ...any) sums {
	tb.Helper()
	rows, err := pool.Query(context.Background(), sql, args...)
	if err != nil {
		tb.Fatal(err)
	}
	defer rows.Close()
	out := sums{}
	for rows.Next() {
		var group, v string
		if err := rows.Scan(&group, &v); err != nil {
			tb.Fatal(err)
		}
		out.add(tb, group, v)
	}
	if err := rows.Err(); err != nil {
		tb.Fatal(err)
	}
	return out
}

// TestGrainContractSums sums the cost of the Contracts export by service
// and by client, over every contract and under filters, and compares the
// totals with SQL's over the base tables; and the task counts of each
// contract with the tasks themselves.
func TestGrainContractSums(t *testing.T) {
	t.Parallel()
	pool := pgtest.Seeded(t)
	ts := newServer(t, pool)
	for _, tt := range []struct {
		name, filter, where string
	}{
		{"All", "", "true"},
		{"Status", "contract_status eq 'APROBADO'", "c.status = 'APROBADO'"},
		{"StatusAndDates", "contract_status in ('APROBADO','TERMINADO') and date_first_payment ge 2023-01-01 and date_first_payment lt 2025-01-01",
			"c.status IN ('APROBADO','TERMINADO') AND c.date_first_payment >= '2023-01-01' AND c.date_first_payment < '2025-01-01'"},
		{"Cost", "costo_servicio gt 200000 and contains(service,'de')",
			"s.cost > 200000 AND strpos(s.name, 'de') > 0"},
		{"Region", "startswith(client_region_contract,'Región M')", "c.client_region LIKE 'Región M%'"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			q := url.Values{"format": {"ndjson"}, "columns": {"contract_id,service,client_id,costo_servicio"}}
			if tt.filter != "" {
				q.Set("$filter", tt.filter)
			}
			r := ts.Get(t, "/api/contracts/export?"+strings.ReplaceAll(q.Encode(), "+", "%20"))
			if r.Status != http.StatusOK {
				t.Fatalf("status = %d; body %.300s", r.Status, r.Body)
			}
			byService, byClient := sums{}, sums{}
			n := 0
			for _, l := range ndjsonLines(t, r.Body) {
				var row map[string]*string
				if err := json.Unmarshal(l, &row); err != nil {
					t.Fatal(err)
				}
				n++
				if row["costo_servicio"] == nil {
					continue
				}
				byService.add(t, *row["service"], *row["costo_servicio"])
				byClient.add(t, *row["client_id"], *row["costo_servicio"])
			}
			from := " FROM contracts c JOIN services s ON s.id = c.service_id WHERE " + tt.where
			if want := pgtest.Int(t, pool, "SELECT count(*) FROM contracts c LEFT JOIN services s ON s.id = c.service_id WHERE "+tt.where); int64(n) != want || n == 0 {
				t.Errorf("%d contracts, want %d (and some)", n, want)
			}
			if want := sqlSums(t, pool, "SELECT s.name, sum(s.cost)::text"+from+" GROUP BY s.name"); !byService.equal(want) {
				t.Errorf("cost by service = %v, want %v", byService, want)
			}
			if want := sqlSums(t, pool, "SELECT c.client_id::text, sum(s.cost)::text"+from+" GROUP BY c.client_id"); !byClient.equal(want) {
				t.Errorf("cost by client = %v, want %v", byClient, want)
			}
		})
	}

	t.Run("TaskCounts", func(t *testing.T) {
		r := ts.Get(t, "/api/contracts/export?format=csv&columns=contract_id,processes,tasks,tasks_pending,tasks_in_progress,tasks_cancelled,tasks_done,first_task_end_date,last_task_end_date")
		if r.Status != http.StatusOK {
			t.Fatalf("status = %d; body %.300s", r.Status, r.Body)
		}
		got := readTable(t, "csv", r.Body, ',', "contracts").Rows
		rows, err := pool.Query(context.Background(), `
			SELECT c.id, count(DISTINCT p.id), count(t.id),
			       count(t.id) FILTER (WHERE t.status = 'Pendiente'), count(t.id) FILTER (WHERE t.status = 'En Curso'),
			       count(t.id) FILTER (WHERE t.status = 'Cancelado'), count(t.id) FILTER (WHERE t.status = 'Terminada'),
			       coalesce(min(t.end_date)::text, ''), coalesce(max(t.end_date)::text, '')
			FROM contracts c LEFT JOIN processes p ON p.contract_id = c.id LEFT JOIN tasks t ON t.process_id = p.id
			GROUP BY c.id ORDER BY c.id`)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		var want []string
		var tasks, done int64
		for rows.Next() {
			var id, procs, all, pend, prog, canc, term int64
			var first, last string
			if err := rows.Scan(&id, &procs, &all, &pend, &prog, &canc, &term, &first, &last); err != nil {
				t.Fatal(err)
			}
			tasks += all
			done += term
			want = append(want, strings.Join([]string{fmt.Sprint(id), fmt.Sprint(procs), fmt.Sprint(all), fmt.Sprint(pend),
				fmt.Sprint(prog), fmt.Sprint(canc), fmt.Sprint(term), first, last}, "\x1f"))
		}
		if done == 0 || tasks == 0 {
			t.Fatalf("the seed has %d tasks, %d done", tasks, done)
		}
		if !slices.Equal(got, want) {
			for i := range min(len(got), len(want)) {
				if got[i] != want[i] {
					t.Fatalf("row %d = %q, want %q (%d rows, want %d)", i, got[i], want[i], len(got), len(want))
				}
			}
			t.Fatalf("%d rows, want %d", len(got), len(want))
		}
	})
}

// grainPage is a page of an OData feed, its entities by property.
type grainPage struct {
	Count    *int64                       `json:"@odata.count"`
	Value    []map[string]json.RawMessage `json:"value"`
	NextLink string                       `json:"@odata.nextLink"`
}

// readFeed follows the next links of target from the first page and
// returns every entity, and the @odata.count of the first page.
func (ts *testServer) readFeed(tb testing.TB, target string, pageSize int) ([]map[string]json.RawMessage, int64) {
	tb.Helper()
	var all []map[string]json.RawMessage
	count := int64(-1)
	for pages := 0; target != ""; pages++ {
		if pages > 10000 {
			tb.Fatal("too many pages")
		}
		r := ts.Get(tb, target, "Prefer", fmt.Sprintf("odata.maxpagesize=%d", pageSize))
		if r.Status != http.StatusOK {
			tb.Fatalf("%s: status = %d; body %.500s", target, r.Status, r.Body)
		}
		var p grainPage
		if err := json.Unmarshal(r.Body, &p); err != nil {
			tb.Fatalf("%s: %v", target, err)
		}
		if pages == 0 && p.Count != nil {
			count = *p.Count
		}
		if len(p.Value) > pageSize {
			tb.Fatalf("%d entities in a page of %d", len(p.Value), pageSize)
		}
		all = append(all, p.Value...)
		target = ""
		if p.NextLink != "" {
			u, err := url.Parse(p.NextLink)
			if err != nil {
				tb.Fatal(err)
			}
			target = u.RequestURI()
		}
	}
	return all, count
}

// TestGrainPaging reads every set through its next links, in its own order,
// sorted and filtered: every key comes once, and as many as SQL counts.
func TestGrainPaging(t *testing.T) {
	t.Parallel()
	pool := pgtest.Seeded(t)
	ts := newServer(t, pool)
	for _, tt := range []struct {
		set, key, query, count string
	}{
		{"Contracts", "contract_id", "", "SELECT count(*) FROM contracts"},
		{"Contracts", "contract_id", "$orderby=costo_servicio desc,date_first_payment&$expand=Client($select=client_rut)",
			"SELECT count(*) FROM contracts"},
		{"Contracts", "contract_id", "$filter=tasks_pending ge 2&$orderby=tasks desc",
			"SELECT count(*) FROM contracts c WHERE (SELECT count(*) FROM processes p JOIN tasks t ON t.process_id = p.id WHERE p.contract_id = c.id AND t.status = 'Pendiente') >= 2"},
		{"Processes", "process_id", "$select=process_id,tasks", "SELECT count(*) FROM processes"},
		{"Processes", "process_id", "$orderby=process_date desc&$expand=Tasks($select=task_status)", "SELECT count(*) FROM processes"},
		{"Tasks", "task_id", "", "SELECT count(*) FROM tasks"},
		{"Tasks", "task_id", "$filter=task_status eq 'Terminada'&$orderby=task_end_date", "SELECT count(*) FROM tasks WHERE status = 'Terminada'"},
		{"Clients", "client_id", "$orderby=client_region,last_name_client desc&$expand=Contracts($select=costo_servicio)", "SELECT count(*) FROM clients"},
		{"Services", "service_id", "$orderby=costo_servicio", "SELECT count(*) FROM services"},
	} {
		t.Run(tt.set+"?"+tt.query, func(t *testing.T) {
			target := "/odata/" + tt.set + "?$count=true"
			if tt.query != "" {
				target += "&" + strings.ReplaceAll(tt.query, " ", "%20")
			}
			rows, count := ts.readFeed(t, target, 97)
			want := pgtest.Int(t, pool, tt.count)
			if count != want || int64(len(rows)) != want || want == 0 {
				t.Errorf("%d entities, @odata.count %d, want %d", len(rows), count, want)
			}
			seen := make(map[string]bool, len(rows))
			for _, r := range rows {
				k := string(r[tt.key])
				if k == "" || seen[k] {
					t.Fatalf("key %s = %q twice or missing", tt.key, k)
				}
				seen[k] = true
			}
		})
	}
}

// TestGrainExpand follows every navigation with $expand and compares the
// related rows with SQL's over the base tables: to-one (a task's process
// and contract, a process's contract, a contract's client and service)
// and to-many (a contract's processes and tasks, a process's tasks, a
// client's and a service's contracts).
func TestGrainExpand(t *testing.T) {
	t.Parallel()
	pool := pgtest.Seeded(t)
	ts := newServer(t, pool)
	ids := func(sql string) map[string][]string {
		rows, err := pool.Query(context.Background(), sql)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		out := map[string][]string{}
		for rows.Next() {
			var k, v int64
			if err := rows.Scan(&k, &v); err != nil {
				t.Fatal(err)
			}
			out[fmt.Sprint(k)] = append(out[fmt.Sprint(k)], fmt.Sprint(v))
		}
		return out
	}
	for _, tt := range []struct {
		set, key, nav, related string
		many                   bool
		sql                    string // key, related key, in the related rows' order
	}{
		{"Contracts", "contract_id", "Client", "client_id", false, "SELECT id, client_id FROM contracts"},
		{"Contracts", "contract_id", "Service", "service_id", false, "SELECT id, service_id FROM contracts WHERE service_id IS NOT NULL"},
		{"Contracts", "contract_id", "Processes", "process_id", true, "SELECT contract_id, id FROM processes ORDER BY id"},
		{"Contracts", "contract_id", "Tasks", "task_id", true, "SELECT p.contract_id, t.id FROM tasks t JOIN processes p ON p.id = t.process_id ORDER BY t.id"},
		{"Processes", "process_id", "Contract", "contract_id", false, "SELECT id, contract_id FROM processes"},
		{"Processes", "process_id", "Tasks", "task_id", true, "SELECT process_id, id FROM tasks ORDER BY id"},
		{"Tasks", "task_id", "Process", "process_id", false, "SELECT id, process_id FROM tasks"},
		{"Tasks", "task_id", "Contract", "contract_id", false, "SELECT t.id, p.contract_id FROM tasks t JOIN processes p ON p.id = t.process_id"},
		{"Clients", "client_id", "Contracts", "contract_id", true, "SELECT client_id, id FROM contracts ORDER BY id"},
		{"Services", "service_id", "Contracts", "contract_id", true, "SELECT service_id, id FROM contracts WHERE service_id IS NOT NULL ORDER BY id"},
	} {
		t.Run(tt.set+"/"+tt.nav, func(t *testing.T) {
			want := ids(tt.sql)
			rows, _ := ts.readFeed(t, "/odata/"+tt.set+"?$select="+tt.key+"&$expand="+tt.nav+"($select="+tt.related+")", 500)
			if len(rows) == 0 {
				t.Fatal("no rows")
			}
			related := 0
			for _, r := range rows {
				k := string(r[tt.key])
				var got []string
				if tt.many {
					var items []map[string]json.RawMessage
					if err := json.Unmarshal(r[tt.nav], &items); err != nil {
						t.Fatalf("%s %s: %s: %v", tt.key, k, r[tt.nav], err)
					}
					for _, it := range items {
						if len(it) != 1 {
							t.Fatalf("%s %s: related %v, want only %s", tt.key, k, it, tt.related)
						}
						got = append(got, string(it[tt.related]))
					}
				} else if string(r[tt.nav]) != "null" {
					var it map[string]json.RawMessage
					if err := json.Unmarshal(r[tt.nav], &it); err != nil {
						t.Fatalf("%s %s: %s: %v", tt.key, k, r[tt.nav], err)
					}
					got = []string{string(it[tt.related])}
				}
				related += len(got)
				if !slices.Equal(got, want[k]) {
					t.Fatalf("%s %s: %s = %v, want %v", tt.key, k, tt.nav, got, want[k])
				}
			}
			if related == 0 {
				t.Error("nothing related")
			}
		})
	}
}

// TestGrainExpandFixture reads related pairs of the fixture by key, both
// ways, with every property typed.
func TestGrainExpandFixture(t *testing.T) {
	t.Parallel()
	ts := newServer(t, pgtest.Fixture(t))
	for _, tt := range []struct {
		name, target, want string
	}{
		{"ContractToClientAndProcesses", "/odata/Contracts(1)?$select=contract_id,costo_servicio,tasks,tasks_pending,tasks_in_progress,tasks_cancelled,first_task_end_date,last_task_end_date" +
			"&$expand=Client($select=client_rut,client_region),Processes($select=tasks,caratulado_process)",
			`{"@odata.context":"ROOT/$metadata#Contracts(contract_id,costo_servicio,tasks,tasks_pending,tasks_in_progress,tasks_cancelled,first_task_end_date,last_task_end_date,` +
				`Client(client_rut,client_region),Processes(tasks,caratulado_process))/$entity",` +
				`"contract_id":1,"costo_servicio":350000,"tasks":3,"tasks_pending":1,"tasks_in_progress":1,"tasks_cancelled":1,"first_task_end_date":"2024-03-10","last_task_end_date":"2024-07-02",` +
				`"Client":{"client_id":1,"client_rut":"12.345.678-5","client_region":"Región Metropolitana de Santiago"},` +
				`"Processes":[{"process_id":1,"tasks":2,"caratulado_process":"González con Pérez"},{"process_id":2,"tasks":1,"caratulado_process":null}]}`},
		{"ContractWithoutServiceOrProcesses", "/odata/Contracts(3)?$select=contract_id,service_id,processes&$expand=Service,Processes,Tasks",
			`{"@odata.context":"ROOT/$metadata#Contracts(contract_id,service_id,processes,Service(),Processes(),Tasks())/$entity",` +
				`"contract_id":3,"service_id":null,"processes":1,"Service":null,` +
				`"Processes":[{"process_id":3,"contract_id":3,"process_role":"Demandado","caratulado_process":"Banco con Pérez","process_date":"2023-11-05","tasks":0,"tasks_pending":0,"tasks_in_progress":0,"tasks_cancelled":0,"tasks_done":0,"first_task_end_date":null,"last_task_end_date":null}],"Tasks":[]}`},
		{"ClientToContracts", "/odata/Clients?$filter=client_rut eq '9876543-3'&$select=client_id,contracts&$expand=Contracts($select=code_contract,costo_servicio)",
			`{"@odata.context":"ROOT/$metadata#Clients(client_id,contracts,Contracts(code_contract,costo_servicio))",` +
				`"value":[{"client_id":2,"contracts":2,"Contracts":[{"contract_id":3,"code_contract":"CT-003","costo_servicio":null},{"contract_id":4,"code_contract":"CT-SHARED","costo_servicio":350000}]}]}`},
		{"TaskToProcessAndContract", "/odata/Tasks(2)?$select=task_id,execution_date&$expand=Process($select=process_role),Contract($select=client_id)",
			`{"@odata.context":"ROOT/$metadata#Tasks(task_id,execution_date,Process(process_role),Contract(client_id))/$entity",` +
				`"task_id":2,"execution_date":"2024-07-01T14:00:00.000000Z","Process":{"process_id":1,"process_role":"Demandante"},"Contract":{"contract_id":1,"client_id":1}}`},
		{"ServiceToContracts", "/odata/Services?$orderby=costo_servicio&$select=service&$expand=Contracts($select=contract_status)&$format=application/json%3BIEEE754Compatible%3Dtrue",
			`{"@odata.context":"ROOT/$metadata#Services(service,Contracts(contract_status))","value":[` +
				`{"service_id":"2","service":"Gestión de certificados y copias autorizadas","Contracts":[{"contract_id":"2","contract_status":"PENDIENTE"}]},` +
				`{"service_id":"1","service":"Divorcio de mutuo acuerdo","Contracts":[{"contract_id":"1","contract_status":"APROBADO"},{"contract_id":"4","contract_status":"APROBADO"},{"contract_id":"5","contract_status":"APROBADO"},{"contract_id":"6","contract_status":"TERMINADO"}]}]}`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := ts.Get(t, strings.ReplaceAll(tt.target, " ", "%20"))
			if r.Status != http.StatusOK {
				t.Fatalf("status = %d; body %s", r.Status, r.Body)
			}
			if got, want := string(r.Body), strings.ReplaceAll(tt.want, "ROOT", ts.URL+"/odata"); got != want {
				t.Errorf("body\n%s\nwant\n%s", got, want)
			}
		})
	}
}

// TestGrainErrors: what informe cannot honour on the new paths is a 400
// (or OData's 501) naming it.
func TestGrainErrors(t *testing.T) {
	t.Parallel()
	ts := newServer(t, pgtest.Fixture(t))
	for _, tt := range []struct {
		name, target string
		status       int
		msg          string
	}{
		{"ErrUnknownColumn", "/api/contracts/export?columns=contract_id,nope", 400, `unknown field "nope"`},
		{"ErrSpecFilter", "/api/tasks/export?contract_id=1", 400, `unknown query parameter "contract_id"`},
		{"ErrExpandOnExport", "/api/contracts/export?$expand=Client", 400, "$expand is an option of the OData feed"},
		{"ErrFilterType", "/api/services/export?$filter=costo_servicio eq 'x'", 400, "costo_servicio is Edm.Decimal"},
		{"ErrSelectAndColumns", "/api/clients/export?$select=client_id&columns=client_id", 400, "give columns or $select, not both"},
		{"ErrPage", "/api/processes/export?page=2", 400, `unknown query parameter "page"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ts.Get(t, strings.ReplaceAll(tt.target, " ", "%20")).WantError(t, tt.status, tt.msg)
		})
	}
	for _, tt := range []struct {
		name, target string
		status       int
		msg          string
	}{
		{"ErrExpandUnknown", "/odata/Contracts?$expand=Payer", 400, `Contract has no navigation property "Payer"`},
		{"ErrExpandNestedFilter", "/odata/Contracts?$expand=Processes($filter=tasks gt 1)", 501, "only $select is"},
		{"ErrExpandNestedSelect", "/odata/Tasks?$expand=Process($select=task)", 400, `Process has no property "task"`},
		{"ErrExpandReport", "/odata/GeneralReport?$expand=Contract", 501, "$expand is not supported on GeneralReport"},
		{"ErrByKey", "/odata/Contracts(1)?$top=1", 400, "accepts $select, $expand and $format only"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := ts.Get(t, strings.ReplaceAll(tt.target, " ", "%20"))
			var e struct {
				Error struct{ Message, Target string }
			}
			if err := json.Unmarshal(r.Body, &e); err != nil || r.Status != tt.status || !strings.Contains(e.Error.Message, tt.msg) || e.Error.Target == "" {
				t.Errorf("status = %d, body %s; want %d with %q and a target", r.Status, r.Body, tt.status, tt.msg)
			}
		})
	}
}
