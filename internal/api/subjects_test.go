package api_test

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/csv"
	"fmt"
	"io"
	"math/big"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/informe/informe/auth"
	"github.com/informe/informe/internal/dataset"
	"github.com/informe/informe/internal/pgserver/pgtest"
	"github.com/informe/informe/internal/rut"
	"github.com/informe/informe/internal/subjects"
)

// blockedPersons are a client, a payer and a user of the seeded database,
// the RUTs to block, and values of theirs distinctive enough to look for
// in every body: RUTs, e-mails, and the user's name (attended_by,
// task_executor).
func blockedPersons(t *testing.T, pool *pgxpool.Pool) (ruts, values []string, clientID int64, userName, clientEmail string) {
	t.Helper()
	ctx := context.Background()
	var crut, cemail, kemail, prut, pemail, urut, uemail string
	if err := pool.QueryRow(ctx, `SELECT c.id, c.rut, c.email, k.client_email FROM clients c JOIN contracts k ON k.client_id = c.id
		WHERE k.client_email IS NOT NULL ORDER BY c.id LIMIT 1`).Scan(&clientID, &crut, &cemail, &kemail); err != nil {
		t.Fatal(err)
	}
	if err := pool.QueryRow(ctx, `SELECT payer_rut, payer_email FROM contracts WHERE payer_rut IS NOT NULL AND payer_email IS NOT NULL
		AND rut_key(payer_rut) <> rut_key($1) ORDER BY id LIMIT 1`, crut).Scan(&prut, &pemail); err != nil {
		t.Fatal(err)
	}
	if err := pool.QueryRow(ctx, `SELECT rut, email, name FROM users WHERE name IN (SELECT attended_by FROM contracts)
		AND name IN (SELECT executor FROM tasks) ORDER BY id LIMIT 1`).Scan(&urut, &uemail, &userName); err != nil {
		t.Fatal(err)
	}
	return []string{crut, prut, urut}, []string{crut, cemail, kemail, prut, pemail, urut, uemail, userName}, clientID, userName, cemail
}

// readable returns the text of a body in format f: XLSX's entries
// unzipped, Parquet's text values read back, the others as they are.
func readable(t *testing.T, f string, body []byte) []byte {
	t.Helper()
	switch f {
	case "xlsx":
		z, err := zip.NewReader(bytes.NewReader(body), int64(len(body)))
		if err != nil {
			t.Fatalf("xlsx: %v", err)
		}
		var out bytes.Buffer
		for _, e := range z.File {
			r, err := e.Open()
			if err != nil {
				t.Fatal(err)
			}
			io.Copy(&out, r)
			r.Close()
		}
		return out.Bytes()
	case "parquet":
		r, err := file.NewParquetReader(bytes.NewReader(body))
		if err != nil {
			t.Fatalf("parquet: %v", err)
		}
		defer r.Close()
		var out bytes.Buffer
		for g := 0; g < r.NumRowGroups(); g++ {
			rg := r.RowGroup(g)
			for j := 0; j < rg.NumColumns(); j++ {
				cr, err := rg.Column(j)
				if err != nil {
					t.Fatal(err)
				}
				br, ok := cr.(*file.ByteArrayColumnChunkReader)
				if !ok {
					continue
				}
				n := rg.NumRows()
				vs := make([]parquet.ByteArray, n)
				defs := make([]int16, n)
				_, k, err := br.ReadBatch(n, vs, defs, nil)
				if err != nil {
					t.Fatal(err)
				}
				for _, v := range vs[:k] {
					out.Write(v)
					out.WriteByte(0)
				}
			}
		}
		return out.Bytes()
	}
	return body
}

// sweep reads every dataset through every door the test server has (its
// page, its export in every format, its OData feed with every $expand,
// key lookups with $expand) and returns, for each of values, how many
// bodies held it.
func sweep(t *testing.T, ts *testServer, values []string, clientID int64) map[string]int {
	t.Helper()
	found := map[string]int{}
	look := func(what string, body []byte) {
		for _, v := range values {
			if bytes.Contains(body, []byte(v)) {
				found[v]++
			}
		}
	}
	get := func(target string) []byte {
		r := ts.Get(t, target)
		if r.Status != 200 {
			t.Fatalf("%s: %d %.300s", target, r.Status, r.Body)
		}
		return r.Body
	}
	for _, d := range dataset.All {
		if !slices.Contains(auth.Scopes, d.Scope) {
			continue // a scope tokens are given only when asked for
		}
		for _, f := range []string{"csv", "json", "ndjson", "xlsx", "parquet", "arrow"} {
			target := d.ExportPath + "?format=" + f
			look(target, readable(t, f, get(target)))
		}
		if d.PagePath != "" {
			look(d.PagePath, get(d.PagePath+"?result_per_page=10000"))
		}
		set := d.OData.Name
		var navs []string
		for _, n := range d.OData.Navigations {
			navs = append(navs, n.Name)
		}
		target := "/odata/" + set
		if len(navs) > 0 {
			target += "?$expand=" + strings.Join(navs, ",")
		}
		for target != "" {
			_, p := ts.odataGet(t, target)
			look(target, get(target))
			target = strings.TrimPrefix(p.NextLink, ts.URL)
		}
	}
	look("client by key", get(fmt.Sprintf("/odata/Clients(%d)?$expand=Contracts", clientID)))
	// Ordered by personal fields, in small pages: neither the order nor
	// the next links' positions carry a blocked person's values.
	for _, o := range []struct{ target, view string }{
		{"/odata/Clients?$orderby=client_email,client_rut%20desc", "client_list_typed"},
		{"/odata/Contracts?$orderby=rut_payer_contract", "contract_list_typed"},
		{"/odata/Users?$orderby=email", "user_list_typed"},
		{"/odata/Tasks?$orderby=task_executor%20desc", "task_list_typed"},
	} {
		target, rows := o.target, 0
		for target != "" {
			r, p := ts.odataGet(t, target, "Prefer", "odata.maxpagesize=37")
			look(target, r.Body)
			rows += len(p.Value)
			target = strings.TrimPrefix(p.NextLink, ts.URL)
			if u, err := url.Parse(target); err == nil {
				tok, _ := base64.RawURLEncoding.DecodeString(u.Query().Get("$skiptoken"))
				look("skip token", tok)
			}
		}
		if want := pgtest.Int(t, ts.Pool, "SELECT count(*) FROM "+o.view); int64(rows) != want {
			t.Errorf("%s: %d rows over its pages, want %d", o.target, rows, want)
		}
	}
	return found
}

// TestBlockedSubjects blocks a client, a payer and a user: none of their
// personal values is in any body of any door, dataset or format, while the
// rows stay (counts and the sum of the contracts' costs are SQL's); a
// filter on their personal fields finds nothing; unblocked, all return.
func TestBlockedSubjects(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := pgtest.SmallSeeded(t)
	ts := newServer(t, pool)
	ruts, values, clientID, userName, clientEmail := blockedPersons(t, pool)

	before := sweep(t, ts, values, clientID)
	for _, v := range values {
		if before[v] == 0 {
			t.Fatalf("value %d of the persons is in no body before the block: the test proves nothing", len(v))
		}
	}
	filters := []string{
		"/odata/Clients?$filter=" + url.QueryEscape("client_email eq '"+clientEmail+"'"),
		"/odata/Contracts?$filter=" + url.QueryEscape("attended_by eq '"+userName+"'"),
		"/odata/Tasks?$filter=" + url.QueryEscape("task_executor eq '"+userName+"'"),
		"/odata/GeneralReport?$filter=" + url.QueryEscape("client_rut eq '"+ruts[0]+"'"),
		"/api/general-report/export?format=csv&rut=" + url.QueryEscape(ruts[0]),
		"/api/contracts/export?format=csv&$filter=" + url.QueryEscape("rut_payer_contract eq '"+ruts[1]+"'"),
		"/odata/Clients?$filter=" + url.QueryEscape("Contracts/any(c: c/rut_payer_contract eq '"+ruts[1]+"')"),
		"/odata/Services?$filter=" + url.QueryEscape("Contracts/any(c: c/attended_by eq '"+userName+"')"),
		"/odata/Processes?$filter=" + url.QueryEscape("Tasks/any(x: x/task_executor eq '"+userName+"')"),
	}
	matched := func(target string) int {
		r := ts.Get(t, target)
		if r.Status != 200 {
			t.Fatalf("%s: %d %.300s", target, r.Status, r.Body)
		}
		if strings.HasPrefix(target, "/odata/") {
			_, p := ts.odataGet(t, target)
			return len(p.Value)
		}
		recs, err := csv.NewReader(bytes.NewReader(r.Body)).ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		return len(recs) - 1
	}
	for _, f := range filters {
		if matched(f) == 0 {
			t.Fatalf("%s matches nothing before the block", f)
		}
	}
	costs := func() string {
		r := ts.Get(t, "/api/contracts/export?format=csv&columns=costo_servicio")
		recs, err := csv.NewReader(bytes.NewReader(r.Body)).ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		sum := new(big.Rat)
		for _, rec := range recs[1:] {
			if rec[0] == "" {
				continue
			}
			v, ok := new(big.Rat).SetString(rec[0])
			if !ok {
				t.Fatalf("cost %q", rec[0])
			}
			sum.Add(sum, v)
		}
		return sum.FloatString(2)
	}
	sqlCost := pgtest.String(t, pool, "SELECT sum(costo_servicio)::numeric(20,2)::text FROM contract_list_typed")

	for _, r := range ruts {
		key, err := rut.ParseAs("rut", r)
		if err != nil {
			t.Fatal(err)
		}
		if err := subjects.Block(ctx, pool, key, "solicitud", "test@host"); err != nil {
			t.Fatal(err)
		}
	}
	if got := sweep(t, ts, values, clientID); len(got) != 0 {
		for v, n := range got {
			t.Errorf("blocked: a value of %d bytes of the persons is in %d bodies", len(v), n)
		}
	}
	for _, f := range filters {
		if n := matched(f); n != 0 {
			t.Errorf("blocked: %s matches %d rows", f, n)
		}
	}
	if got := costs(); got != sqlCost {
		t.Errorf("blocked: costs sum %s, SQL %s", got, sqlCost)
	}
	for _, set := range []string{"Contracts", "Clients", "GeneralReport", "Users", "Tasks"} {
		_, p := ts.odataGet(t, "/odata/"+set+"?$count=true&$top=1")
		view := map[string]string{"Contracts": "contract_list_typed", "Clients": "client_list_typed", "GeneralReport": "general_report_typed",
			"Users": "user_list_typed", "Tasks": "task_list_typed"}[set]
		if want := pgtest.Int(t, pool, "SELECT count(*) FROM "+view); p.Count == nil || p.Count.String() != fmt.Sprint(want) {
			t.Errorf("blocked: %s count %v, SQL %d", set, p.Count, want)
		}
	}

	for _, r := range ruts {
		key, _ := rut.ParseAs("rut", r)
		if err := subjects.Unblock(ctx, pool, key, "test@host"); err != nil {
			t.Fatal(err)
		}
	}
	after := sweep(t, ts, values, clientID)
	for _, v := range values {
		if after[v] != before[v] {
			t.Errorf("unblocked: a value is in %d bodies, %d before the block", after[v], before[v])
		}
	}
	for _, f := range filters {
		if matched(f) == 0 {
			t.Errorf("unblocked: %s matches nothing", f)
		}
	}
}
