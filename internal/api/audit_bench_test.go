package api_test

import (
	"fmt"
	"io"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/informe/informe/auth"
	"github.com/informe/informe/internal/api"
	"github.com/informe/informe/internal/api/apitest"
	"github.com/informe/informe/internal/pgserver/pgtest"
	"github.com/informe/informe/internal/postgres"
	"github.com/informe/informe/internal/source"
	"github.com/informe/informe/metrics"
	"github.com/informe/informe/report"
)

// BenchmarkAuditPage reads 100-row JSON pages from two servers over one
// database, one recording every read as informe serve does and one
// recording none, so that what the record costs a page is read side by
// side (go test -bench AuditPage -count 10: the two alternate).
func BenchmarkAuditPage(b *testing.B) {
	pool := pgtest.Seeded(b)
	servers := map[string]*testServer{}
	for _, name := range []string{"recorded", "unrecorded"} {
		s := &api.Server{Data: postgres.NewStore(pool), Report: source.Report(report.Maintained),
			Tokens: auth.NewStore(pool), Metrics: metrics.New(pool)}
		if name == "recorded" {
			apitest.Audited(b, pool, s)
		}
		ts := serve(b, s)
		ts.Pool = pool
		ts.Token = ts.NewToken(b, "bench-"+name, nil, time.Time{})
		servers[name] = ts
	}
	get := func(ts *testServer, page int) time.Duration {
		req, _ := http.NewRequest(http.MethodGet, fmt.Sprintf("%s/api/general-report?result_per_page=100&page=%d", ts.URL, page), nil)
		req.Header.Set("Authorization", "Bearer "+ts.Token)
		req.Header.Set("Accept-Encoding", "identity")
		start := time.Now()
		resp, err := apitest.Client.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			b.Fatalf("status %d", resp.StatusCode)
		}
		return time.Since(start)
	}
	// The two servers alternate, each first every other time, and each's
	// median is reported.
	var recorded, unrecorded []time.Duration
	for i := 0; b.Loop(); i++ {
		page := 1 + i%50
		if i%2 == 0 {
			recorded = append(recorded, get(servers["recorded"], page))
			unrecorded = append(unrecorded, get(servers["unrecorded"], page))
		} else {
			unrecorded = append(unrecorded, get(servers["unrecorded"], page))
			recorded = append(recorded, get(servers["recorded"], page))
		}
	}
	median := func(d []time.Duration) float64 {
		slices.Sort(d)
		return float64(d[len(d)/2]) / float64(time.Millisecond)
	}
	r, u := median(recorded), median(unrecorded)
	b.ReportMetric(r, "recorded-ms")
	b.ReportMetric(u, "unrecorded-ms")
	b.ReportMetric(r/u, "ratio")

}
