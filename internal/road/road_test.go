package road_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"testing"

	"github.com/informe/informe/export"
	"github.com/informe/informe/internal/dataset"
	"github.com/informe/informe/internal/pgserver/pgtest"
	"github.com/informe/informe/internal/postgres"
	"github.com/informe/informe/internal/road"
	"github.com/informe/informe/report"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// deliver opens e in store and writes it whole in e's format, returning
// the bytes and the read's parts and total.
func deliver(t *testing.T, store *postgres.Store, e road.Export) (body []byte, parts int, total int64) {
	t.Helper()
	ctx, stop := context.WithCancelCause(context.Background())
	defer stop(nil)
	rd, err := road.Open(ctx, store, e)
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	var buf bytes.Buffer
	sp := export.Spec{Format: e.Format, Columns: e.Dataset.Columns, Options: export.Options{Sheet: e.Dataset.Name, Rows: rd.Total()}}
	res, err := rd.Deliver(&buf, sp, road.Options{Stop: stop})
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
	store := postgres.NewStore(pool)
	d := report.Dataset(report.Maintained)
	e := road.Export{Dataset: d, Query: dataset.Whole(), Format: export.CSV}
	e.Parts = postgres.Parts{Max: 1}
	one, parts, total := deliver(t, store, e)
	if parts != 1 {
		t.Fatalf("read through %d parts, want 1", parts)
	}
	e.Parts = postgres.Parts{Max: 3, MinRows: 100}
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
	store := postgres.NewStore(pool)
	d := dataset.Users
	for _, f := range []export.Format{export.CSV, export.JSON, export.NDJSON, export.XLSX, export.Parquet, export.Arrow} {
		e := road.Export{Dataset: d, Query: dataset.Whole(), Parts: postgres.Parts{Max: 1}, Format: f}
		body, _, total := deliver(t, store, e)
		if total <= 0 || len(body) == 0 {
			t.Errorf("%s: %d rows in %d bytes", f, total, len(body))
		}
	}
}

// TestDeliverOtherFormat checks that rows read for one format are not
// written in another: the values would be typed, or not, for the wrong
// one.
func TestDeliverOtherFormat(t *testing.T) {
	t.Parallel()
	store := postgres.NewStore(pgtest.SmallSeeded(t))
	d := dataset.Users
	rd, err := road.Open(context.Background(), store, road.Export{Dataset: d, Query: dataset.Whole(), Format: export.CSV})
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	var buf bytes.Buffer
	_, err = rd.Deliver(&buf, export.Spec{Format: export.Parquet, Columns: d.Columns, Options: export.Options{Rows: rd.Total()}}, road.Options{})
	if err == nil || buf.Len() > 0 {
		t.Errorf("rows read for CSV delivered as Parquet: %d bytes, error %v", buf.Len(), err)
	}
}

// TestOpenPage reads a page: its rows only, counted over all of them.
func TestOpenPage(t *testing.T) {
	t.Parallel()
	store := postgres.NewStore(pgtest.SmallSeeded(t))
	d := dataset.Users
	q := dataset.Query{Skip: 2, Limit: 3, Count: true}
	rd, err := road.OpenPage(context.Background(), store, road.Export{Dataset: d, Query: q, Format: export.Arrow})
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	var buf bytes.Buffer
	res, err := rd.Deliver(&buf, export.Spec{Format: export.Arrow, Columns: d.Columns, Options: export.Options{Rows: 3}}, road.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Rows != 3 || rd.Total() <= 5 {
		t.Errorf("a page of %d rows of %d; want 3 of more than 5", res.Rows, rd.Total())
	}
}
