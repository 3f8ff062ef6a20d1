// Package server runs informe's listeners over a pool the caller opened:
// the API (over HTTPS when [TLS] asks for it, with a plain-HTTP listener
// that redirects to it) and the operations listener (/metrics, /healthz,
// /readyz). [Run] serves until its context ends, then shuts them down in
// order: /readyz answers 503 at once, the API stops accepting connections
// after [Config].ShutdownDelay, responses in flight get
// [Config].ShutdownTimeout to finish and are then cut. The caller closes
// the pool after Run returns ([ClosePool]).
//
// The package knows neither flags nor environment variables: cmd/informe
// reads them into a [Config].
package server

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/informe/informe/auth"
	"github.com/informe/informe/internal/api"
	"github.com/informe/informe/internal/audit"
	"github.com/informe/informe/internal/failure"
	"github.com/informe/informe/internal/postgres"
	"github.com/informe/informe/internal/schedule"
	"github.com/informe/informe/internal/source"
	"github.com/informe/informe/internal/spool"
	"github.com/informe/informe/internal/web"
	"github.com/informe/informe/metrics"
	"github.com/informe/informe/report"
)

// Config configures [Run]. The fields written as text are checked by Run,
// whose errors then name what is wrong.
type Config struct {
	// Addr is the API's listen address; port 0 takes a free port.
	Addr string
	// OpsAddr is the operations listener's address; "" runs none.
	OpsAddr string
	// LogFormat is json or text.
	LogFormat string
	// Log receives the log; nil means os.Stderr.
	Log io.Writer
	// ReportCounts is where unfiltered report counts come from,
	// maintained or view (see [report.ParseCounting]); Run checks at
	// start that the database can give them.
	ReportCounts string
	// TrustedProxies are the comma-separated CIDRs of the reverse proxies
	// whose X-Forwarded-* headers are believed (see
	// [api.ParseTrustedProxies]); "" believes none.
	TrustedProxies string
	// PublicURL is the URL clients reach the API at, for absolute links
	// (see [api.ParsePublicURL]); "" builds them from the address each
	// connection reached.
	PublicURL string
	// Limits bound the work the API takes on at once.
	Limits api.Limits
	// ReadyWhenBusy answers /readyz 200 (status busy) when every
	// connection of the pool is in use, rather than 503.
	ReadyWhenBusy bool
	// Spool bounds the buffer of each response whose client is slower
	// than the database.
	Spool spool.Limits
	// SpoolDiskTotal bounds the temporary files of all responses together,
	// in bytes.
	SpoolDiskTotal int64
	// ShutdownDelay is how long /readyz answers 503 before the API stops
	// accepting connections, so that load balancers notice.
	ShutdownDelay time.Duration
	// ShutdownTimeout is how long responses in flight may take to finish
	// once the API stops accepting connections; past it they are cut.
	ShutdownTimeout time.Duration
	// TLS serves the API over HTTPS; its zero value is plain HTTP.
	TLS TLS
	// Audit is the audit's mode: required, best-effort or off (see
	// [audit.ParseMode]); "" is required.
	Audit string
	// AuditDatabaseURL is where records are written; "" writes them
	// through the pool's database, on connections of their own.
	AuditDatabaseURL string
	// Schedules runs the scheduled deliveries that are due (a
	// [schedule.Runner]) while the API is served.
	Schedules bool
	// Ready, if not nil, is called with the addresses the listeners
	// listen on (opsAddr "" without one) once they accept connections.
	Ready func(apiAddr, opsAddr string)
}

// Run serves the API and, unless cfg.OpsAddr is empty, the operations
// listener on pool until ctx is done, then shuts them down as the package
// says and returns nil. It returns an error if cfg is invalid, the report's
// counts cannot be had, a listener cannot listen, or the API server fails.
// It does not close pool.
func Run(ctx context.Context, pool *pgxpool.Pool, cfg Config) error {
	logger, err := newLogger(cfg.LogFormat, cfg.Log)
	if err != nil {
		return err
	}
	counting, err := report.ParseCounting(cfg.ReportCounts)
	if err != nil {
		return err
	}
	proxies, err := api.ParseTrustedProxies(cfg.TrustedProxies)
	if err != nil {
		return err
	}
	publicURL, err := api.ParsePublicURL(cfg.PublicURL)
	if err != nil {
		return err
	}
	site, err := web.New()
	if err != nil {
		return err
	}
	if err := report.CheckCounting(ctx, pool, counting); err != nil {
		return err
	}
	records, closeRecords, err := openAudit(ctx, pool, cfg, logger)
	if err != nil {
		return err
	}
	defer closeRecords()
	app := &api.Server{
		Data:           postgres.NewStore(pool).Told(records.Reading),
		Audit:          records,
		Report:         source.Report(counting),
		Tokens:         auth.NewStore(pool),
		Metrics:        metrics.New(pool),
		Logger:         logger,
		Pool:           pool,
		Limits:         cfg.Limits,
		ReadyWhenBusy:  cfg.ReadyWhenBusy,
		TrustedProxies: proxies,
		PublicURL:      publicURL,
		Site:           site,
		Delivery:       api.Delivery{Spool: cfg.Spool, Budget: spool.NewBudget(cfg.SpoolDiskTotal)},
	}
	app.Metrics.SpoolDisk(app.Delivery.Budget.InUse)
	app.Metrics.Tokens(app.Tokens.Stats)
	apiLn, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return err
	}
	// Requests run under a context that a forced shutdown cancels, so that
	// their queries stop and their responses are cut.
	base, cut := context.WithCancelCause(context.WithoutCancel(ctx))
	defer cut(nil)
	apiSrv := newHTTPServer(app.Handler(), logger)
	apiSrv.BaseContext = func(net.Listener) context.Context { return base }
	apiSrv.ConnContext = api.ConnContext
	httpAddr := "" // the plain-HTTP listener's, with HTTPS on
	httpSrv, err := cfg.TLS.setUp(apiSrv, apiLn.Addr(), publicURL, logger)
	if err != nil {
		apiLn.Close()
		return err
	}
	if apiSrv.TLSConfig == nil {
		apiLn = answerOwn(apiSrv, apiLn)
	}
	if httpSrv != nil {
		httpLn, err := net.Listen("tcp", cfg.TLS.HTTPAddr)
		if err != nil {
			apiLn.Close()
			return err
		}
		httpAddr = httpLn.Addr().String()
		go httpSrv.Serve(answerOwn(httpSrv, httpLn)) //nolint:errcheck // ends with Close below
		defer httpSrv.Close()
	}
	opsAddr := ""
	if cfg.OpsAddr != "" {
		opsLn, err := net.Listen("tcp", cfg.OpsAddr)
		if err != nil {
			apiLn.Close()
			return err
		}
		opsAddr = opsLn.Addr().String()
		opsSrv := newHTTPServer(app.OpsHandler(), logger)
		go opsSrv.Serve(answerOwn(opsSrv, opsLn)) //nolint:errcheck // ends with Close below
		defer opsSrv.Close()
	}
	errc := make(chan error, 1)
	go func() {
		if apiSrv.TLSConfig != nil {
			errc <- apiSrv.ServeTLS(apiLn, "", "")
			return
		}
		errc <- apiSrv.Serve(apiLn)
	}()
	logger.Info("serving", slog.String("addr", apiLn.Addr().String()), slog.String("ops_addr", opsAddr),
		slog.Bool("https", apiSrv.TLSConfig != nil), slog.String("http_addr", httpAddr))
	if cfg.Ready != nil {
		cfg.Ready(apiLn.Addr().String(), opsAddr)
	}
	// The runner stops with the API: an attempt it had under way is
	// recorded as retried, for another instance to take at once.
	runnerCtx, stopRunner := context.WithCancel(ctx)
	runnerDone := make(chan struct{})
	if cfg.Schedules {
		runner := schedule.NewRunner(pool, schedule.Config{Counting: counting, Observer: app.Metrics, Logger: logger, Audit: records})
		go func() {
			defer close(runnerDone)
			_ = runner.Serve(runnerCtx) // returns when runnerCtx ends
		}()
	} else {
		close(runnerDone)
	}
	defer func() { stopRunner(); <-runnerDone }()
	select {
	case err = <-errc:
		return err
	case <-ctx.Done():
	}

	app.Drain()
	logger.Info("shutting down", slog.Duration("delay", cfg.ShutdownDelay), slog.Duration("timeout", cfg.ShutdownTimeout))
	time.Sleep(cfg.ShutdownDelay)
	shutdownCtx, cancel := context.WithTimeout(context.Background(), cfg.ShutdownTimeout)
	defer cancel()
	if err := apiSrv.Shutdown(shutdownCtx); err != nil {
		logger.Warn("responses still in flight at the shutdown timeout are cut", slog.Any("error", err))
		cut(failure.ErrShutdown)
		apiSrv.Close()
		// The cut handlers end at once; wait (half a second at most) for their
		// log lines.
		idleCtx, cancelIdle := context.WithTimeout(context.Background(), 500*time.Millisecond)
		defer cancelIdle()
		if !app.WaitIdle(idleCtx) {
			logger.Warn("some requests did not end within half a second of the cut")
		}
	}
	return nil
}

// openAudit opens the audit's log as cfg says, on a small pool of its own
// (to cfg.AuditDatabaseURL, or to pool's database), records its mode, and
// starts writing closes; the returned func stops it once every response
// has ended, writing what is left. Under the required mode, a log that
// cannot record its mode is an error: informe would answer every read 503.
func openAudit(ctx context.Context, pool *pgxpool.Pool, cfg Config, logger *slog.Logger) (*audit.Log, func(), error) {
	mode, err := audit.ParseMode(cmp.Or(cfg.Audit, "required"))
	if err != nil {
		return nil, nil, err
	}
	var pc *pgxpool.Config
	if cfg.AuditDatabaseURL != "" {
		if pc, err = pgxpool.ParseConfig(cfg.AuditDatabaseURL); err != nil {
			return nil, nil, errors.New("--audit-database-url is not a PostgreSQL URL or DSN")
		}
	} else {
		pc = pool.Config()
	}
	pc.MaxConns, pc.MinConns = auditConns, 0
	apool, err := pgxpool.NewWithConfig(ctx, pc)
	if err != nil {
		return nil, nil, fmt.Errorf("audit: %w", err)
	}
	log := audit.New(apool, mode, audit.Instance(), logger)
	if cfg.AuditDatabaseURL == "" {
		// The reads' database keeps the records: each rides in its read's
		// first round trip.
		log.OnReads()
	}
	err = log.Event(ctx, audit.Command(), "informe serve", "audit="+mode.String(), "")
	switch {
	case err != nil && mode == audit.Required:
		apool.Close()
		return nil, nil, fmt.Errorf("%w (is the database migrated? informe migrate; or choose --audit best-effort or off knowingly)", err)
	case err != nil:
		logger.Warn("the audit's mode could not be recorded", slog.String("audit", mode.String()), slog.String("error", err.Error()))
	}
	logger.Info("audit", slog.String("mode", mode.String()))
	runCtx, stop := context.WithCancel(context.WithoutCancel(ctx))
	done := make(chan struct{})
	go func() { defer close(done); log.Run(runCtx) }()
	return log, func() { stop(); <-done; apool.Close() }, nil
}

// auditConns is the most connections the audit's pool opens.
const auditConns = 4

// ClosePool closes pool, waiting at most half a second for connections
// still in use: [Run] has cut every response by the time it returns.
func ClosePool(pool *pgxpool.Pool) {
	done := make(chan struct{})
	go func() { pool.Close(); close(done) }()
	select {
	case <-done:
	case <-time.After(500 * time.Millisecond):
	}
}

func newHTTPServer(h http.Handler, logger *slog.Logger) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		// informe answers an oversized request target (api.MaxURIBytes)
		// and header fields (api.MaxHeaderBytes) itself, in JSON; this is
		// the server's backstop far above them, so that a target of up to
		// a mebibyte still gets its JSON 414. Past it, net/http answers 431
		// itself (see answerOwn).
		MaxHeaderBytes: 1<<20 + api.MaxHeaderBytes,
		// No WriteTimeout: a whole export to a slow client may rightly take
		// long; a client that accepts nothing is cut by the delivery's own
		// stall timeout.
		ErrorLog: slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
	}
}

func newLogger(format string, w io.Writer) (*slog.Logger, error) {
	if w == nil {
		w = os.Stderr
	}
	switch format {
	case "json":
		return slog.New(slog.NewJSONHandler(w, nil)), nil
	case "text":
		return slog.New(slog.NewTextHandler(w, nil)), nil
	}
	return nil, fmt.Errorf("log format must be json or text, got %q", format)
}
