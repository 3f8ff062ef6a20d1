package metrics_test

import (
	"io"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/informe/informe/auth"
	"github.com/informe/informe/metrics"
)

// scrape returns m's exposition text, as Prometheus reads it.
func scrape(t *testing.T, m *metrics.Metrics) string {
	t.Helper()
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	if rec.Code != 200 {
		t.Fatalf("scrape: %d", rec.Code)
	}
	b, err := io.ReadAll(rec.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// wantLines fails the test for each line of want that the exposition
// text does not hold whole.
func wantLines(t *testing.T, text string, want ...string) {
	t.Helper()
	lines := strings.Split(text, "\n")
	for _, w := range want {
		found := false
		for _, l := range lines {
			if l == w {
				found = true
				break
			}
		}
		if !found {
			t.Errorf("no line %q in the exposition", w)
		}
	}
}

func TestObserve(t *testing.T) {
	m := metrics.New(nil)
	m.Observe(metrics.Request{Route: "/users", Format: "csv", Status: 200, Rows: 3, Bytes: 100,
		Duration: 20 * time.Millisecond, FirstByte: 5 * time.Millisecond})
	m.Observe(metrics.Request{Route: "/users", Format: "csv", Status: 200, Rows: 2, Bytes: 50,
		Duration: 40 * time.Millisecond, FirstByte: 6 * time.Millisecond})
	// An error before negotiation: no format, no body, no first byte.
	m.Observe(metrics.Request{Route: "/users", Status: 401, Duration: time.Millisecond})
	wantLines(t, scrape(t, m),
		`informe_http_requests_total{code="200",format="csv",route="/users"} 2`,
		`informe_http_requests_total{code="401",format="",route="/users"} 1`,
		`informe_rows_streamed_total{format="csv",route="/users"} 5`,
		`informe_response_bytes_total{format="csv",route="/users"} 150`,
		`informe_http_request_duration_seconds_count{format="csv",route="/users"} 2`,
		`informe_http_request_duration_seconds_bucket{format="csv",route="/users",le="0.025"} 1`,
		`informe_http_request_duration_seconds_count{format="",route="/users"} 1`,
		`informe_http_time_to_first_byte_seconds_count{format="csv",route="/users"} 2`,
	)
	if strings.Contains(scrape(t, m), `informe_http_time_to_first_byte_seconds_count{format="",route="/users"}`) {
		t.Error("a response with no body byte has a time to first byte")
	}
}

func TestCountsByReason(t *testing.T) {
	m := metrics.New(nil)
	done := m.Started()
	wantLines(t, scrape(t, m), `informe_http_requests_in_flight 1`)
	done()
	m.Refused("token_busy")
	m.Refused("token_busy")
	m.Cut("client_gone")
	m.Turn(false, 0)
	m.Turn(true, 1500*time.Millisecond)
	waiting := m.TurnWaiting()
	m.Spooled(true, 4096, 250*time.Millisecond)
	m.ShareWaited("burst", 500*time.Millisecond)
	m.ShareWaited("burst", 250*time.Millisecond)
	text := scrape(t, m)
	waiting()
	wantLines(t, text,
		`informe_http_requests_in_flight 0`,
		`informe_http_refusals_total{reason="token_busy"} 2`,
		`informe_http_responses_cut_total{reason="client_gone"} 1`,
		`informe_export_turns_total{waited="false"} 1`,
		`informe_export_turns_total{waited="true"} 1`,
		`informe_export_turn_wait_seconds_total 1.5`,
		`informe_export_turns_waiting 1`,
		`informe_spooled_responses_total{spilled="true"} 1`,
		`informe_spool_disk_bytes_total 4096`,
		`informe_spool_producer_wait_seconds_total 0.25`,
		`informe_export_share_wait_seconds_total{reason="burst"} 0.75`,
		`informe_export_share_wait_seconds_total{reason="small"} 0`,
		// Every outcome is there from the start, so that an alert on
		// failed runs has a series before the first failure.
		`informe_schedule_runs_total{outcome="failed"} 0`,
	)
	wantLines(t, scrape(t, m), `informe_export_turns_waiting 0`)
}

func TestScheduleDeliveredKeepsTheLatest(t *testing.T) {
	m := metrics.New(nil)
	at := time.Date(2026, 11, 29, 6, 0, 0, 0, time.UTC)
	m.ScheduleDelivered("cobranza diaria", at)
	m.ScheduleDelivered("cobranza diaria", at.Add(-time.Hour)) // an older run, recorded late
	m.ScheduleRun("delivered")
	wantLines(t, scrape(t, m),
		`informe_schedule_last_delivery_timestamp_seconds{schedule="cobranza diaria"} 1.795932e+09`,
		`informe_schedule_runs_total{outcome="delivered"} 1`,
	)
}

func TestTokens(t *testing.T) {
	m := metrics.New(nil)
	m.Tokens(func() auth.Stats {
		return auth.Stats{Malformed: 3, KnownLookups: 2, Remembering: 1, Waited: 2 * time.Second}
	})
	wantLines(t, scrape(t, m),
		`informe_token_checks_total{outcome="malformed"} 3`,
		`informe_token_checks_total{outcome="known"} 2`,
		`informe_token_lookup_wait_seconds_total 2`,
		`informe_token_refusals_remembered 1`,
	)
}
