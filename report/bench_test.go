package report_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/informe/informe/database"
	"github.com/informe/informe/database/dbtest"
	"github.com/informe/informe/export"
	"github.com/informe/informe/report"
)

// benchContracts seeds about 200,000 report rows: twenty 10,000-row pages.
// scripts/bench measures a million rows through the whole server.
const benchContracts = 20000

// benchPool returns a database cloned from a template seeded once per test
// binary with benchContracts contracts.
func benchPool(b *testing.B) *pgxpool.Pool {
	b.Helper()
	return dbtest.NewFrom(b, "bench20k", func(ctx context.Context, pool *pgxpool.Pool) error {
		_, err := database.Seed(ctx, pool, database.SeedOptions{Contracts: benchContracts, Seed: 1})
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

// BenchmarkStream streams one unfiltered 10,000-row page per op through
// [report.Store.Stream] (count, seek and rows in one snapshot): at page 1
// and at the last full page, with the counts informe maintains and with
// counts from the view, into the CSV encoder ("csv") or into nothing
// ("none", the database's share). Run with:
//
//	go test -run '^$' -bench Stream ./report/
func BenchmarkStream(b *testing.B) {
	pool := benchPool(b)
	ctx := context.Background()
	for _, c := range countings {
		store := report.NewStore(pool, c.counting)
		var total int64
		if _, err := store.Stream(ctx, report.Query{Page: 1 << 40, PerPage: report.MaxPerPage},
			func(p report.Page) error { total = p.Total; return nil }, nil); err != nil {
			b.Fatal(err)
		}
		pages := []struct {
			name string
			page int64
		}{{"first", 1}, {"lastfull", max(total/report.MaxPerPage, 1)}}
		for _, p := range pages {
			q := report.Query{Page: p.page, PerPage: report.MaxPerPage}
			for _, encode := range []bool{true, false} {
				name := c.name + "/" + p.name + "/none"
				if encode {
					name = c.name + "/" + p.name + "/csv"
				}
				b.Run(name, func(b *testing.B) {
					stream := func(w *countWriter) int {
						var enc export.Encoder = discard{}
						if encode {
							enc = export.NewCSV(w, report.Columns, export.CSVOptions{})
						}
						n, err := store.Stream(ctx, q, func(report.Page) error { return nil }, enc.Encode)
						if err != nil {
							b.Fatal(err)
						}
						if err := enc.Close(); err != nil {
							b.Fatal(err)
						}
						return n
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
	ctx := context.Background()
	q := report.Query{Page: 1 << 40, PerPage: report.MaxPerPage}
	for _, c := range countings {
		b.Run(c.name, func(b *testing.B) {
			store := report.NewStore(pool, c.counting)
			var total int64
			for b.Loop() {
				n, err := store.Stream(ctx, q, func(p report.Page) error { total = p.Total; return nil }, nil)
				if err != nil {
					b.Fatal(err)
				}
				if n != 0 {
					b.Fatalf("a page past the end streamed %d rows", n)
				}
			}
			b.ReportMetric(float64(total), "report-rows")
		})
	}
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
