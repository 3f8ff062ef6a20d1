package road_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"testing"

	"github.com/informe/informe/export"
	"github.com/informe/informe/internal/dataset"
	"github.com/informe/informe/internal/pgserver/pgtest"
	"github.com/informe/informe/internal/road"
	"github.com/informe/informe/report"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// deliver opens e in store and writes it whole, returning the bytes and
// the read's parts and total.
func deliver(t *testing.T, store *dataset.Store, e road.Export) (body []byte, parts int, total int64) {
	t.Helper()
	ctx, stop := context.WithCancelCause(context.Background())
	defer stop(nil)
	rd, err := road.Open(ctx, store, e)
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	if got := rd.Spec().Options.Rows; got != rd.Total() {
		t.Errorf("the spec declares %d rows, the read counted %d", got, rd.Total())
	}
	if got, want := rd.Spec().Options.Binary, e.Spec.Format.Typed(); got != want {
		t.Errorf("%s: the spec's Binary is %v, want %v", e.Spec.Format, got, want)
	}
	var buf bytes.Buffer
	res, err := rd.Deliver(&buf, road.Options{Stop: stop})
	if err != nil {
		t.Fatal(err)
	}
	if res.Rows != rd.Total() {
		t.Errorf("delivered %d rows of %d", res.Rows, rd.Total())
	}
	return buf.Bytes(), rd.Parts(), rd.Total()
}

// TestPartsSameBytes reads the general report's whole CSV export through
// three connections and through one: the same bytes, every row once.
func TestPartsSameBytes(t *testing.T) {
	t.Parallel()
	pool := pgtest.SmallSeeded(t)
	store := dataset.NewStore(pool)
	d := report.Dataset(report.Maintained)
	e := road.Export{Dataset: d, Query: dataset.Whole(),
		Spec: export.Spec{Format: export.CSV, Columns: d.Columns, Options: export.Options{Sheet: d.Name}}}
	e.Parts = dataset.Parts{Max: 1}
	one, parts, total := deliver(t, store, e)
	if parts != 1 {
		t.Fatalf("read through %d parts, want 1", parts)
	}
	e.Parts = dataset.Parts{Max: 3, MinRows: 100}
	three, parts, _ := deliver(t, store, e)
	if parts != 3 {
		t.Fatalf("read through %d parts, want 3", parts)
	}
	if !bytes.Equal(one, three) {
		t.Errorf("three parts wrote %d bytes, one part %d: not the same bytes", len(three), len(one))
	}
	var n int64
	if err := pool.QueryRow(context.Background(), "SELECT count(*) FROM general_report").Scan(&n); err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(bytes.NewReader(one)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if total != n || int64(len(recs)-1) != n {
		t.Errorf("counted %d rows and wrote %d, the view holds %d", total, len(recs)-1, n)
	}
}

// TestTypedByFormat writes the users in every format: the rows are read
// typed exactly for the formats that write typed values, which fail on
// the API's text where they expect binary values.
func TestTypedByFormat(t *testing.T) {
	t.Parallel()
	pool := pgtest.SmallSeeded(t)
	store := dataset.NewStore(pool)
	d := dataset.Users
	for _, f := range []export.Format{export.CSV, export.JSON, export.NDJSON, export.XLSX, export.Parquet, export.Arrow} {
		e := road.Export{Dataset: d, Query: dataset.Whole(), Parts: dataset.Parts{Max: 1},
			Spec: export.Spec{Format: f, Columns: d.Columns, Options: export.Options{Sheet: d.Name}}}
		body, _, total := deliver(t, store, e)
		if total <= 0 || len(body) == 0 {
			t.Errorf("%s: %d rows in %d bytes", f, total, len(body))
		}
	}
}
