package seed_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/informe/informe/internal/seed"

	"github.com/informe/informe/internal/pgserver/pgtest"
)

// BenchmarkSeed times loading a fresh database. The 100,000-contract case
// (about a million report rows) is the size informe is sized for:
//
//	go test -run '^$' -bench 'Seed/contracts=100000' -benchtime 1x ./database/
func BenchmarkSeed(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		b.Run(fmt.Sprintf("contracts=%d", n), func(b *testing.B) {
			var st seed.Stats
			for b.Loop() {
				b.StopTimer()
				pool := pgtest.New(b)
				b.StartTimer()
				var err error
				if st, err = seed.Seed(context.Background(), pool, seed.Options{Contracts: n, Seed: 1}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(st.ReportRows), "report-rows")
		})
	}
}
