// Package metrics collects informe's Prometheus metrics: HTTP requests by
// route, status and format, their latency and time to first byte, rows and
// bytes streamed, requests in flight, the database pool's state, what
// became of the tokens checked, and scheduled deliveries' runs. They are served on the operations
// listener, apart from the authenticated API.
package metrics

import (
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/informe/informe/auth"
)

// Metrics holds informe's collectors in a registry of their own.
type Metrics struct {
	registry *prometheus.Registry
	requests *prometheus.CounterVec
	duration *prometheus.HistogramVec
	ttfb     *prometheus.HistogramVec
	rows     *prometheus.CounterVec
	bytes    *prometheus.CounterVec
	inFlight prometheus.Gauge
	refused  *prometheus.CounterVec
	spooled  *prometheus.CounterVec
	spoolOut prometheus.Counter
	waited   prometheus.Counter
	cut      *prometheus.CounterVec
	turns    *prometheus.CounterVec
	turnWait prometheus.Counter
	waiting  prometheus.Gauge
	shared   *prometheus.CounterVec
	runs     *prometheus.CounterVec
	lastRun  *prometheus.GaugeVec
	lastMu   sync.Mutex
	last     map[string]float64 // the times lastRun holds
}

// New registers informe's metrics, the Go runtime's and the process's, and,
// when pool is not nil, the pool's.
func New(pool *pgxpool.Pool) *Metrics {
	m := &Metrics{
		registry: prometheus.NewRegistry(),
		requests: counterVec("informe_http_requests_total",
			"HTTP requests by route, status code and response format.", "route", "code", "format"),
		duration: histogramVec("informe_http_request_duration_seconds",
			"Time from a request's arrival to its last byte, by route and format.",
			[]float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30}),
		ttfb: histogramVec("informe_http_time_to_first_byte_seconds",
			"Time from a request's arrival to the first byte of its body, by route and format.",
			[]float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5}),
		rows: counterVec("informe_rows_streamed_total",
			"Rows written to responses, by route and format.", "route", "format"),
		bytes: counterVec("informe_response_bytes_total",
			"Response body bytes written, by route and format.", "route", "format"),
		inFlight: gauge("informe_http_requests_in_flight",
			"Requests being served."),
		refused: counterVec("informe_http_refusals_total",
			"Requests refused with 503 or 429, by reason: exports_busy (too many big responses; 503), token_busy (a token past its own limit of big responses; 429), pool_busy (no database connection came free in time, and the database answers), database_unavailable (the database failed, or did not answer, before the response's first byte), http10_too_large (a body too large to hold for an HTTP/1.0 client).", "reason"),
		spooled: counterVec("informe_spooled_responses_total",
			"Responses delivered through the spool, by where their bytes waited for the client: memory only, or a temporary file too (disk).", "spilled"),
		spoolOut: counter("informe_spool_disk_bytes_total",
			"Bytes written to spool temporary files, waiting for slow clients."),
		waited: counter("informe_spool_producer_wait_seconds_total",
			"Time the database side of responses waited for clients because a spool's disk bound was reached."),
		cut: counterVec("informe_http_responses_cut_total",
			"Requests that ended before their response was complete, by reason: client_gone (the client closed or reset the connection; logged as 499), client_stalled (it accepted nothing for the stall timeout), database_unavailable, statement_timeout, request_timeout, shutdown, too_large, internal.", "reason"),
		turns: counterVec("informe_export_turns_total",
			"Turns given to big responses, by whether the request waited for its turn (no label names a token).", "waited"),
		turnWait: counter("informe_export_turn_wait_seconds_total",
			"Time big requests given a turn waited for it."),
		waiting: gauge("informe_export_turns_waiting",
			"Big requests waiting for a turn now."),
		shared: counterVec("informe_export_share_wait_seconds_total",
			"Time big responses holding turns waited at their chunks of 256 rows, or before their first statement, by reason: burst (their token had requests queued and gave way to another token's response), small (small requests were being answered), turn (in turn with other big responses).", "reason"),
		runs: counterVec("informe_schedule_runs_total",
			"Attempts at scheduled deliveries run by this instance, by outcome: delivered, unchanged (the same bytes as the last delivery: nothing sent), retried (failed in a way worth trying again, or taken over from a stopped instance), failed.", "outcome"),
		lastRun: gaugeVec("informe_schedule_last_delivery_timestamp_seconds",
			"When each schedule last delivered a file (Unix time), by the schedule's name, as recorded in the run history.", "schedule"),
	}
	m.last = map[string]float64{}
	for _, r := range []string{"burst", "small", "turn"} {
		m.shared.WithLabelValues(r)
	}
	for _, o := range []string{"delivered", "unchanged", "retried", "failed"} {
		m.runs.WithLabelValues(o)
	}
	m.registry.MustRegister(m.runs, m.lastRun, m.requests, m.duration, m.ttfb, m.rows, m.bytes, m.inFlight, m.refused,
		m.spooled, m.spoolOut, m.waited, m.cut, m.turns, m.turnWait, m.waiting, m.shared,
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	if pool != nil {
		m.registry.MustRegister(poolCollector{pool})
	}
	return m
}

// counter returns a counter called name that help describes; counterVec,
// gauge and gaugeVec likewise, with labels.
func counter(name, help string) prometheus.Counter {
	return prometheus.NewCounter(prometheus.CounterOpts{Name: name, Help: help})
}

func counterVec(name, help string, labels ...string) *prometheus.CounterVec {
	return prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, labels)
}

func gauge(name, help string) prometheus.Gauge {
	return prometheus.NewGauge(prometheus.GaugeOpts{Name: name, Help: help})
}

func gaugeVec(name, help string, labels ...string) *prometheus.GaugeVec {
	return prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: name, Help: help}, labels)
}

// histogramVec returns a histogram of a request's times called name that
// help describes, by route and format.
func histogramVec(name, help string, buckets []float64) *prometheus.HistogramVec {
	return prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: name, Help: help, Buckets: buckets}, []string{"route", "format"})
}

// Handler serves the metrics in the Prometheus exposition format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.registry, promhttp.HandlerOpts{Registry: m.registry})
}

// Request is what the HTTP layer reports about one finished request.
type Request struct {
	Route     string // the route pattern, or "unmatched"
	Format    string // json, csv, ndjson, xlsx, parquet, arrow; "" for errors before negotiation
	Status    int
	Rows      int
	Bytes     int
	Duration  time.Duration
	FirstByte time.Duration // 0 when no body byte was written
}

// Started counts a request in flight; call the returned func when it ends.
func (m *Metrics) Started() func() {
	m.inFlight.Inc()
	return m.inFlight.Dec
}

// Refused counts a request refused for reason (see informe_http_refusals_total).
func (m *Metrics) Refused(reason string) { m.refused.WithLabelValues(reason).Inc() }

// TurnWaiting counts a big request waiting for its turn; call the
// returned func when it has one, or is refused.
func (m *Metrics) TurnWaiting() func() {
	m.waiting.Inc()
	return m.waiting.Dec
}

// Turn counts a turn given to a big request, which waited waited for it
// if queued.
func (m *Metrics) Turn(queued bool, waited time.Duration) {
	m.turns.WithLabelValues(strconv.FormatBool(queued)).Inc()
	if queued {
		m.turnWait.Add(waited.Seconds())
	}
}

// ShareWaited counts d, a wait of a big response at a chunk for reason
// (see informe_export_share_wait_seconds_total).
func (m *Metrics) ShareWaited(reason string, d time.Duration) {
	m.shared.WithLabelValues(reason).Add(d.Seconds())
}

// Cut counts a request that ended before its response was complete, for
// reason (see informe_http_responses_cut_total).
func (m *Metrics) Cut(reason string) { m.cut.WithLabelValues(reason).Inc() }

// Spooled records the delivery of one response through a spool: whether it
// spilled to a temporary file, how many bytes it wrote there, and how long
// its database side waited for the client.
func (m *Metrics) Spooled(spilled bool, diskBytes int64, waited time.Duration) {
	m.spooled.WithLabelValues(strconv.FormatBool(spilled)).Inc()
	m.spoolOut.Add(float64(diskBytes))
	m.waited.Add(waited.Seconds())
}

// SpoolDisk reports the bytes all spools hold on disk at scrape time.
func (m *Metrics) SpoolDisk(inUse func() int64) {
	m.registry.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "informe_spool_disk_bytes",
		Help: "Bytes held in spool temporary files now, over all responses.",
	}, func() float64 { return float64(inUse()) }))
}

// Tokens reports, at scrape time, what the token store did with the tokens
// it was asked about (see [auth.Stats]); no label names a token.
func (m *Metrics) Tokens(stats func() auth.Stats) {
	m.registry.MustRegister(tokenCollector(stats))
}

// Observe records a finished request.
func (m *Metrics) Observe(r Request) {
	m.requests.WithLabelValues(r.Route, strconv.Itoa(r.Status), r.Format).Inc()
	m.duration.WithLabelValues(r.Route, r.Format).Observe(r.Duration.Seconds())
	if r.FirstByte > 0 {
		m.ttfb.WithLabelValues(r.Route, r.Format).Observe(r.FirstByte.Seconds())
	}
	if r.Rows > 0 {
		m.rows.WithLabelValues(r.Route, r.Format).Add(float64(r.Rows))
	}
	if r.Bytes > 0 {
		m.bytes.WithLabelValues(r.Route, r.Format).Add(float64(r.Bytes))
	}
}

// poolCollector reports pgxpool statistics at scrape time.
type poolCollector struct{ pool *pgxpool.Pool }

var (
	poolTotal    = prometheus.NewDesc("informe_db_pool_connections", "Connections in the pool, by state.", []string{"state"}, nil)
	poolMax      = prometheus.NewDesc("informe_db_pool_max_connections", "Largest size of the pool.", nil, nil)
	poolAcquires = prometheus.NewDesc("informe_db_pool_acquires_total", "Connections acquired from the pool.", nil, nil)
	poolWaits    = prometheus.NewDesc("informe_db_pool_acquire_wait_seconds_total", "Time spent waiting for a connection.", nil, nil)
)

func (c poolCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- poolTotal
	ch <- poolMax
	ch <- poolAcquires
	ch <- poolWaits
}

func (c poolCollector) Collect(ch chan<- prometheus.Metric) {
	s := c.pool.Stat()
	ch <- prometheus.MustNewConstMetric(poolTotal, prometheus.GaugeValue, float64(s.AcquiredConns()), "acquired")
	ch <- prometheus.MustNewConstMetric(poolTotal, prometheus.GaugeValue, float64(s.IdleConns()), "idle")
	ch <- prometheus.MustNewConstMetric(poolTotal, prometheus.GaugeValue, float64(s.ConstructingConns()), "constructing")
	ch <- prometheus.MustNewConstMetric(poolMax, prometheus.GaugeValue, float64(s.MaxConns()))
	ch <- prometheus.MustNewConstMetric(poolAcquires, prometheus.CounterValue, float64(s.AcquireCount()))
	ch <- prometheus.MustNewConstMetric(poolWaits, prometheus.CounterValue, s.AcquireDuration().Seconds())
}

// tokenCollector reports an auth.Store's counts at scrape time.
type tokenCollector func() auth.Stats

var (
	tokenChecks = prometheus.NewDesc("informe_token_checks_total",
		"Tokens checked, by outcome: malformed (refused for their shape, never looked up), remembered (refused from memory, as the database refused them moments before), known (looked up at once, seen valid before), unseen (looked up in turn), busy (no turn came before the acquire timeout).",
		[]string{"outcome"}, nil)
	tokenWait = prometheus.NewDesc("informe_token_lookup_wait_seconds_total",
		"Time tokens not seen valid before waited for their turn to be looked up.", nil, nil)
	tokenRefusals = prometheus.NewDesc("informe_token_refusals_remembered",
		"Refused tokens remembered now (by hash), at most 4,096.", nil, nil)
)

func (c tokenCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- tokenChecks
	ch <- tokenWait
	ch <- tokenRefusals
}

func (c tokenCollector) Collect(ch chan<- prometheus.Metric) {
	s := c()
	for _, o := range []struct {
		outcome string
		n       uint64
	}{
		{"malformed", s.Malformed}, {"remembered", s.Remembered}, {"known", s.KnownLookups},
		{"unseen", s.UnseenLookups}, {"busy", s.Busy},
	} {
		ch <- prometheus.MustNewConstMetric(tokenChecks, prometheus.CounterValue, float64(o.n), o.outcome)
	}
	ch <- prometheus.MustNewConstMetric(tokenWait, prometheus.CounterValue, s.Waited.Seconds())
	ch <- prometheus.MustNewConstMetric(tokenRefusals, prometheus.GaugeValue, float64(s.Remembering))
}

// ScheduleRun counts an attempt at a scheduled delivery that ended with
// outcome: delivered, unchanged, retried or failed.
func (m *Metrics) ScheduleRun(outcome string) { m.runs.WithLabelValues(outcome).Inc() }

// ScheduleDelivered records that the schedule called name delivered a
// file at at; a time older than the one held is ignored.
func (m *Metrics) ScheduleDelivered(name string, at time.Time) {
	m.lastMu.Lock()
	defer m.lastMu.Unlock()
	v := float64(at.UnixNano()) / 1e9
	if v > m.last[name] {
		m.last[name] = v
		m.lastRun.WithLabelValues(name).Set(v)
	}
}
