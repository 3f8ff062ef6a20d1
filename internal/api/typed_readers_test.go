package api_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"math/big"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/informe/informe/export"
	"github.com/informe/informe/internal/dataset"
	"github.com/informe/informe/internal/pgserver/pgtest"
	"github.com/informe/informe/internal/testenv"
)

// readersOut is what testdata/typed_readers.mjs prints: each reader's
// rows, every value a normalized string or null (see the script).
type readersOut struct {
	DuckDB struct {
		Rows   [][]*string `json:"rows"`
		Count  string      `json:"count"`
		Sum    string      `json:"sum"`
		Status [][]*string `json:"status"`
	} `json:"duckdb"`
	Hyparquet struct {
		Rows [][]*string `json:"rows"`
	} `json:"hyparquet"`
	Arrow []struct {
		Rows [][]*string `json:"rows"`
	} `json:"arrow"`
}

// TestTypedReaders exports the small seeded demo as Parquet and as Arrow over
// HTTP (Parquet in three parts, Arrow through one connection and in three
// parts) and has readers that are not written in Go read every row:
// DuckDB and hyparquet the Parquet file, apache-arrow the Arrow streams (node packages that
// scripts/ensure-node-tools installs). Every value must equal the CSV
// export's of the same query, parsed in Go; DuckDB's row count, sum of
// costo_servicio and counts by task_status must equal PostgreSQL's over
// general_report_typed.
func TestTypedReaders(t *testing.T) {
	t.Parallel()
	node, err := exec.LookPath("node")
	if err != nil {
		testenv.Missing(t, "node is not installed (scripts/ensure-node-tools installs it)")
	}
	var modules string
	for _, pkg := range []string{"@duckdb/node-api", "hyparquet", "apache-arrow"} {
		path, ok := testenv.NodeModule(t, filepath.Join(pkg, "package.json"))
		if !ok {
			testenv.Missing(t, "%s is not installed (scripts/ensure-node-tools installs it)", pkg)
		}
		modules = strings.TrimSuffix(path, filepath.Join(pkg, "package.json"))
	}
	pool := pgtest.SmallSeeded(t)
	one, three := partsServer(t, pool, 1), partsServer(t, pool, 3)

	for _, tc := range []struct {
		path string
		cols []dataset.Column
	}{
		{"/api/general-report/export", dataset.GeneralReport.Columns},
		{"/users", dataset.Users.Columns},
	} {
		t.Run(tc.path, func(t *testing.T) {
			dir := t.TempDir()
			want := csvRows(t, one.Get(t, tc.path+"?format=csv"), tc.cols)
			if len(want) == 0 {
				t.Fatal("the CSV export has no rows")
			}
			save := func(ts *testServer, format, name string) string {
				f, err := export.ParseFormat(format)
				if err != nil {
					t.Fatal(err)
				}
				r := ts.Get(t, tc.path+"?format="+format, "X-Request-Id", "typed-"+name)
				if r.Status != http.StatusOK || r.MediaType(t) != f.ContentType() {
					t.Fatalf("%s: status %d, Content-Type %s: %.300s", name, r.Status, r.Header.Get("Content-Type"), r.Body)
				}
				if ce := r.Header.Get("Content-Encoding"); ce != "" {
					t.Fatalf("%s: Content-Encoding %s without Accept-Encoding", name, ce)
				}
				path := filepath.Join(dir, name)
				if err := os.WriteFile(path, r.Body, 0o644); err != nil {
					t.Fatal(err)
				}
				return path
			}
			csvBytes := len(one.Get(t, tc.path+"?format=csv").Body)
			pq := save(three, "parquet", "export.parquet")
			arrow1 := save(one, "arrow", "one.arrow")
			arrow3 := save(three, "arrow", "three.arrow")
			if tc.path == "/api/general-report/export" {
				for _, name := range []string{"three.arrow", "export.parquet"} {
					if line := logLine(t, three.Logs.String(), "request", "typed-"+name); line == nil || line["parts"] != float64(3) {
						t.Errorf("%s was not read in three parts: %v", name, line)
					}
				}
			}

			for _, f := range []string{pq, arrow1} {
				if fi, err := os.Stat(f); err == nil {
					t.Logf("%s: %d rows, %d bytes, %.1f%% of the CSV's %d", filepath.Base(f), len(want), fi.Size(), 100*float64(fi.Size())/float64(csvBytes), csvBytes)
				}
			}
			out := runReaders(t, node, dir, modules, tc.cols, pq, arrow1, arrow3)
			for _, got := range []struct {
				reader string
				rows   [][]*string
			}{
				{"DuckDB (Parquet)", out.DuckDB.Rows},
				{"hyparquet (Parquet)", out.Hyparquet.Rows},
				{"apache-arrow (Arrow, one part)", out.Arrow[0].Rows},
				{"apache-arrow (Arrow, three parts)", out.Arrow[1].Rows},
			} {
				compareTypedRows(t, got.reader, tc.cols, got.rows, want)
			}
			if tc.path == "/api/general-report/export" {
				checkSums(t, pool, out, len(want))
			}
		})
	}
}

// runReaders runs testdata/typed_readers.mjs on the files and returns
// what it read.
func runReaders(t *testing.T, node, dir, modules string, cols []dataset.Column, parquet string, arrow ...string) readersOut {
	t.Helper()
	type col struct {
		Name string `json:"name"`
		Kind string `json:"kind"`
	}
	spec := struct {
		Modules string   `json:"modules"`
		Columns []col    `json:"columns"`
		Parquet string   `json:"parquet"`
		Arrow   []string `json:"arrow"`
	}{Modules: modules, Parquet: parquet, Arrow: arrow}
	for _, c := range cols {
		spec.Columns = append(spec.Columns, col{c.Name, c.Kind.String()})
	}
	b, err := json.Marshal(spec)
	if err != nil {
		t.Fatal(err)
	}
	specFile := filepath.Join(dir, "spec.json")
	if err := os.WriteFile(specFile, b, 0o644); err != nil {
		t.Fatal(err)
	}
	script, err := filepath.Abs(filepath.Join("testdata", "typed_readers.mjs"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(node, script, specFile)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.Output()
	if err != nil {
		t.Fatalf("the readers failed: %v\n%s", err, stderr.Bytes())
	}
	var out readersOut
	if err := json.Unmarshal(stdout, &out); err != nil {
		t.Fatalf("the readers' output: %v: %.300s", err, stdout)
	}
	if len(out.Arrow) != len(arrow) {
		t.Fatalf("%d Arrow streams read, want %d", len(out.Arrow), len(arrow))
	}
	return out
}

// csvRows parses a CSV export of cols into the readers' normalized
// values: NULL for an empty value (as the typed formats write it in a
// column that is never nil), integers in base 10, decimals times 100,
// dates as days and timestamps as microseconds since 1970-01-01 (UTC for
// timestamptz), and text as it was before CSV guarded it against
// formulas.
func csvRows(t *testing.T, r response, cols []dataset.Column) [][]*string {
	t.Helper()
	if r.Status != http.StatusOK {
		t.Fatalf("CSV export: status %d: %.300s", r.Status, r.Body)
	}
	recs, err := csv.NewReader(bytes.NewReader(r.Body)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if got, want := recs[0], dataset.Names(cols); !reflect.DeepEqual(got, want) {
		t.Fatalf("CSV header %v, want %v", got, want)
	}
	rows := make([][]*string, 0, len(recs)-1)
	for i, rec := range recs[1:] {
		row := make([]*string, len(cols))
		for j, v := range rec {
			c := cols[j]
			if v == "" && !(c.Kind == dataset.Text && c.Nullable) {
				continue
			}
			n, err := normalize(c.Kind, v)
			if err != nil {
				t.Fatalf("CSV row %d, %s %q: %v", i+1, c.Name, v, err)
			}
			row[j] = &n
		}
		rows = append(rows, row)
	}
	return rows
}

// normalize turns a CSV value of kind k into the readers' form.
func normalize(k dataset.Kind, v string) (string, error) {
	switch k {
	case dataset.Integer:
		n, err := strconv.ParseInt(v, 10, 64)
		return strconv.FormatInt(n, 10), err
	case dataset.Decimal:
		r, ok := new(big.Rat).SetString(v)
		if !ok {
			return "", fmt.Errorf("not a decimal")
		}
		r.Mul(r, big.NewRat(100, 1))
		if !r.IsInt() {
			return "", fmt.Errorf("more than two decimals")
		}
		return r.Num().String(), nil
	case dataset.Date:
		d, err := time.Parse("2006-01-02", v)
		return strconv.FormatInt(d.Unix()/86400, 10), err
	case dataset.Timestamp:
		d, err := time.Parse("2006-01-02 15:04:05.999999", v)
		return strconv.FormatInt(d.UnixMicro(), 10), err
	case dataset.Timestamptz:
		d, err := time.Parse("2006-01-02 15:04:05.999999-07", v)
		return strconv.FormatInt(d.UnixMicro(), 10), err
	}
	// CSV put a quote before a value a spreadsheet would take for a
	// formula: take it off where CSV would have put it.
	if rest, ok := strings.CutPrefix(v, "'"); ok && string(export.NeutralizeFormula(nil, []byte(rest))) == v {
		return rest, nil
	}
	return v, nil
}

// compareRows reports the first values where got differs from want.
func compareTypedRows(t *testing.T, reader string, cols []dataset.Column, got, want [][]*string) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%s read %d rows, want %d", reader, len(got), len(want))
		return
	}
	show := func(p *string) string {
		if p == nil {
			return "NULL"
		}
		return strconv.Quote(*p)
	}
	bad := 0
	for i := range want {
		for j := range cols {
			if g, w := got[i][j], want[i][j]; (g == nil) != (w == nil) || (g != nil && *g != *w) {
				if bad++; bad <= 5 {
					t.Errorf("%s: row %d, %s: %s, want %s", reader, i+1, cols[j].Name, show(g), show(w))
				}
			}
		}
	}
	if bad > 5 {
		t.Errorf("%s: %d values differ in all", reader, bad)
	}
}

// checkSums compares DuckDB's count, sum of costo_servicio and counts by
// task_status with PostgreSQL's over general_report_typed.
func checkSums(t *testing.T, pool *pgxpool.Pool, out readersOut, rows int) {
	t.Helper()
	ctx := context.Background()
	var count int64
	var sum string
	if err := pool.QueryRow(ctx, "SELECT count(*), sum(costo_servicio)::text FROM general_report_typed").Scan(&count, &sum); err != nil {
		t.Fatal(err)
	}
	if out.DuckDB.Count != strconv.FormatInt(count, 10) || out.DuckDB.Count != strconv.Itoa(rows) || out.DuckDB.Sum != sum {
		t.Errorf("DuckDB: %s rows, sum(costo_servicio) %s; PostgreSQL: %d rows, sum %s; CSV: %d rows", out.DuckDB.Count, out.DuckDB.Sum, count, sum, rows)
	}
	if !regexp.MustCompile(`^\d+\.\d\d$`).MatchString(sum) {
		t.Errorf("PostgreSQL's sum %q is not an amount", sum)
	}
	want := map[string]string{}
	pgRows, err := pool.Query(ctx, "SELECT coalesce(task_status, '<NULL>'), count(*)::text FROM general_report_typed GROUP BY 1")
	if err != nil {
		t.Fatal(err)
	}
	for pgRows.Next() {
		var status, n string
		if err := pgRows.Scan(&status, &n); err != nil {
			t.Fatal(err)
		}
		want[status] = n
	}
	if err := pgRows.Err(); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, r := range out.DuckDB.Status {
		status := "<NULL>"
		if r[0] != nil {
			status = *r[0]
		}
		got[status] = *r[1]
	}
	if !reflect.DeepEqual(got, want) || len(want) < 2 {
		t.Errorf("counts by task_status: DuckDB %v, PostgreSQL %v", got, want)
	}
}
