package report_test

import (
	"context"
	"testing"

	"github.com/informe/informe/internal/dataset"
	"github.com/informe/informe/internal/postgres"
	"github.com/informe/informe/internal/seed"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/informe/informe/export"
	"github.com/informe/informe/internal/pgserver/pgtest"
	"github.com/informe/informe/report"
)

// benchContracts seeds about 200,000 report rows: twenty 10,000-row pages.
// scripts/bench measures a million rows through the whole server.
const benchContracts = 20000

// benchPool returns a database cloned from a template seeded once per test
// binary with benchContracts contracts.
func benchPool(b *testing.B) *pgxpool.Pool {
	b.Helper()
	return pgtest.NewFrom(b, "bench20k", func(ctx context.Context, pool *pgxpool.Pool) error {
		_, err := seed.Seed(ctx, pool, seed.Options{Contracts: benchContracts, Seed: 1})
		return err
	})
}

var countings = []struct {
	name     string
	counting report.Counting
}{
	{"maintained", report.Maintained},
	{"view", report.FromView},
}

// BenchmarkStream reads one unfiltered 10,000-row page per op through
// [report.Store.Open] (count, seek and rows in one snapshot): at page 1
// and at the last full page, with the counts informe maintains and with
// counts from the view, into the CSV encoder ("csv") or into nothing
// ("none", the database's share). Run with:
//
//	go test -run '^$' -bench Stream ./report/
func BenchmarkStream(b *testing.B) {
	pool := benchPool(b)
	ctx := context.Background()
	for _, c := range countings {
		store, ds := postgres.NewStore(pool), report.Dataset(c.counting)
		total := countRows(b, store, ds)
		pages := []struct {
			name string
			page int64
		}{{"first", 1}, {"lastfull", max(total/report.MaxPerPage, 1)}}
		for _, p := range pages {
			q := dataset.Query{Skip: (p.page - 1) * report.MaxPerPage, Limit: report.MaxPerPage, Count: true}
			for _, encode := range []bool{true, false} {
				name := c.name + "/" + p.name + "/none"
				if encode {
					name = c.name + "/" + p.name + "/csv"
				}
				b.Run(name, func(b *testing.B) {
					stream := func(w *countWriter) int {
						var enc export.Encoder = discard{}
						if encode {
							enc = export.NewCSV(w, dataset.GeneralReport.Columns, export.CSVOptions{})
						}
						cur, err := store.Open(ctx, ds, q)
						if err != nil {
							b.Fatal(err)
						}
						for cur.Next() {
							if err := enc.Encode(cur.Values()); err != nil {
								b.Fatal(err)
							}
						}
						if err := cur.Close(); err != nil {
							b.Fatal(err)
						}
						if err := enc.Close(); err != nil {
							b.Fatal(err)
						}
						return cur.Count()
					}
					// One run outside the timer: the page's size, and a warm cache.
					var w countWriter
					rows := stream(&w)
					if rows != report.MaxPerPage {
						b.Fatalf("page %d streamed %d rows, want %d", p.page, rows, report.MaxPerPage)
					}
					b.SetBytes(w.n)
					for b.Loop() {
						stream(&countWriter{})
					}
					b.ReportMetric(float64(rows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
				})
			}
		}
	}
}

// BenchmarkCount times the count alone: an unfiltered page far past the end
// is counted and streams no rows. Run with:
//
//	go test -run '^$' -bench Count ./report/
func BenchmarkCount(b *testing.B) {
	pool := benchPool(b)
	for _, c := range countings {
		b.Run(c.name, func(b *testing.B) {
			store, ds := postgres.NewStore(pool), report.Dataset(c.counting)
			var total int64
			for b.Loop() {
				total = countRows(b, store, ds)
			}
			b.ReportMetric(float64(total), "report-rows")
		})
	}
}

// countRows counts the report's rows by opening a page far past the end,
// which reads no rows.
func countRows(b *testing.B, store *postgres.Store, ds *dataset.Dataset) int64 {
	cur, err := store.Open(context.Background(), ds, dataset.Query{Skip: 1 << 40, Limit: report.MaxPerPage, Count: true})
	if err != nil {
		b.Fatal(err)
	}
	defer cur.Close()
	if cur.Next() {
		b.Fatal("a page past the end has rows")
	}
	return cur.Total()
}

// discard is an encoder that drops rows.
type discard struct{}

func (discard) Encode([][]byte) error { return nil }
func (discard) Close() error          { return nil }

// countWriter counts and discards bytes, for b.SetBytes.
type countWriter struct{ n int64 }

func (w *countWriter) Write(p []byte) (int, error) {
	w.n += int64(len(p))
	return len(p), nil
}
