package main

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/urfave/cli/v3"

	"github.com/informe/informe/auth"
	"github.com/informe/informe/internal/api"
	"github.com/informe/informe/internal/dataset"
	"github.com/informe/informe/internal/failure"
	"github.com/informe/informe/internal/postgres"
	"github.com/informe/informe/internal/source"
	"github.com/informe/informe/internal/spool"
	"github.com/informe/informe/internal/web"
	"github.com/informe/informe/metrics"
	"github.com/informe/informe/report"
)

// Flags of the serving commands (serve, demo): the pool, the limits of the
// work taken on, and shutdown.
var (
	poolSizeFlag = &cli.IntFlag{
		Name: "pool-size", Value: 16, Sources: cli.EnvVars("INFORME_POOL_SIZE"),
		Usage: "database connections per instance (pool_max_conns in DATABASE_URL wins)",
	}
	acquireTimeoutFlag = &cli.DurationFlag{
		Name: "acquire-timeout", Value: 5 * time.Second, Sources: cli.EnvVars("INFORME_ACQUIRE_TIMEOUT"),
		Usage: "how long a request waits for a database connection before a 503 with Retry-After",
	}
	statementTimeoutFlag = &cli.DurationFlag{
		Name: "statement-timeout", Value: 10 * time.Minute, Sources: cli.EnvVars("INFORME_STATEMENT_TIMEOUT"),
		Usage: "PostgreSQL statement_timeout of each report and users transaction (SET LOCAL, so PgBouncer in transaction mode accepts it), over any the URL, role or server sets; 0 keeps theirs",
	}
	requestTimeoutFlag = &cli.DurationFlag{
		Name: "request-timeout", Value: 10 * time.Minute, Sources: cli.EnvVars("INFORME_REQUEST_TIMEOUT"),
		Usage: "longest database side of a request, from arrival to the last row read; 0 is no limit",
	}
	exportsFlag = &cli.IntFlag{
		Name: "max-exports", Value: 4, Sources: cli.EnvVars("INFORME_MAX_EXPORTS"),
		Usage: "big responses (whole exports, pages over 1,000 rows, XLSX) produced at once; keep it below --pool-size",
	}
	exportQueueFlag = &cli.IntFlag{
		Name: "export-queue", Value: 16, Sources: cli.EnvVars("INFORME_EXPORT_QUEUE"),
		Usage: "big requests that may wait for a turn; past it they get a 503 with Retry-After",
	}
	exportPartsFlag = &cli.IntFlag{
		Name: "export-parts", Value: 2, Sources: cli.EnvVars("INFORME_EXPORT_PARTS"),
		Usage: "connections an unfiltered whole CSV or JSON export reads through at once, in one snapshot, each taking a free --max-exports turn; 1 reads through one",
	}
	exportWaitFlag = &cli.DurationFlag{
		Name: "export-wait", Value: 30 * time.Second, Sources: cli.EnvVars("INFORME_EXPORT_WAIT"),
		Usage: "longest wait of a big request for its turn before a 503",
	}
	shutdownDelayFlag = &cli.DurationFlag{
		Name: "shutdown-delay", Value: 0, Sources: cli.EnvVars("INFORME_SHUTDOWN_DELAY"),
		Usage: "on SIGTERM, how long /readyz answers 503 before the API stops accepting connections, so load balancers notice",
	}
	shutdownTimeoutFlag = &cli.DurationFlag{
		Name: "shutdown-timeout", Value: 30 * time.Second, Sources: cli.EnvVars("INFORME_SHUTDOWN_TIMEOUT"),
		Usage: "how long responses in flight may take to finish after the listener closes; past it they are cut",
	}
	spoolMemoryFlag = &cli.IntFlag{
		Name: "spool-memory", Value: spool.DefaultMemory, Sources: cli.EnvVars("INFORME_SPOOL_MEMORY"),
		Usage: "bytes of a response kept in memory while its client is slower than the database, before a temporary file",
	}
	spoolDiskFlag = &cli.Int64Flag{
		Name: "spool-disk", Value: 1 << 30, Sources: cli.EnvVars("INFORME_SPOOL_DISK"),
		Usage: "bytes of one response kept in its temporary file; past it the database side waits for the client",
	}
	spoolDiskTotalFlag = &cli.Int64Flag{
		Name: "spool-disk-total", Value: 8 << 30, Sources: cli.EnvVars("INFORME_SPOOL_DISK_TOTAL"),
		Usage: "bytes of all responses' temporary files together; past it the database sides wait for their clients",
	}
	spoolDirFlag = &cli.StringFlag{
		Name: "spool-dir", Value: "", Sources: cli.EnvVars("INFORME_SPOOL_DIR"),
		Usage: "`folder` for the temporary files (a real disk, not tmpfs); empty is the system's temporary folder",
	}
	stallTimeoutFlag = &cli.DurationFlag{
		Name: "stall-timeout", Value: spool.DefaultNoProgress, Sources: cli.EnvVars("INFORME_STALL_TIMEOUT"),
		Usage: "a client whose connection accepts no bytes for this long is cut; negative never cuts. A client with receive buffer B acknowledges bytes only every B/R seconds at R bytes/s, so the slowest reader kept is about B/T: with Linux's usual 128 KiB, 5m keeps readers above ~440 B/s, 60s above ~2.2 KB/s, 10s above ~13 KB/s",
	}
	pgCancelFlag = &cli.StringFlag{
		Name: "pg-cancel", Value: "request", Sources: cli.EnvVars("INFORME_PG_CANCEL"),
		Usage: "how a query whose client went away is stopped: request (a PostgreSQL cancel request) or close (close its connection; for PgBouncer 1.18 to 1.20, which can crash on cancel requests)",
		Validator: func(s string) error {
			_, err := postgres.ParseCancel(s)
			return err
		},
	}
	readyWhenBusyFlag = &cli.BoolFlag{
		Name: "ready-when-busy", Value: true, Sources: cli.EnvVars("INFORME_READY_WHEN_BUSY"),
		Usage: "answer /readyz 200 (status busy) when every connection is in use; false answers 503",
	}
)

// trustedProxiesFlag names the proxies whose X-Forwarded-* headers are
// believed (serve only: the demo has no proxy).
var trustedProxiesFlag = &cli.StringFlag{
	Name: "trusted-proxies", Value: "", Sources: cli.EnvVars("INFORME_TRUSTED_PROXIES"),
	Usage: "comma-separated `CIDRs` of the reverse proxies whose X-Forwarded-Host, -Proto and -For are believed; none by default",
}

// publicURLFlag is the URL clients reach the API at, for the absolute links
// informe writes (serve only: the demo serves on its own address).
var publicURLFlag = &cli.StringFlag{
	Name: "public-url", Value: "", Sources: cli.EnvVars("INFORME_PUBLIC_URL"),
	Usage: "`URL` clients reach the API at (https://informe.example.cl), for OData's absolute links; empty builds them from the address each connection reached, never from the Host header",
}

// servingFlags are the flags that serve and demo share.
func servingFlags() []cli.Flag {
	return []cli.Flag{
		countsFlag, poolSizeFlag, acquireTimeoutFlag, pgCancelFlag, statementTimeoutFlag, requestTimeoutFlag,
		exportsFlag, exportQueueFlag, exportWaitFlag, exportPartsFlag, shutdownDelayFlag, shutdownTimeoutFlag, readyWhenBusyFlag,
		spoolMemoryFlag, spoolDiskFlag, spoolDiskTotalFlag, spoolDirFlag, stallTimeoutFlag,
	}
}

// poolOptions are the pool settings of the serving flags.
func poolOptions(cmd *cli.Command) postgres.PoolOptions {
	cancel, _ := postgres.ParseCancel(cmd.String("pg-cancel")) // checked by its Validator
	return postgres.PoolOptions{MaxConns: int32(cmd.Int("pool-size")), Cancel: cancel}
}

func serveCommand() *cli.Command {
	return &cli.Command{
		Name:  "serve",
		Usage: "serve the API against DATABASE_URL",
		Flags: append([]cli.Flag{
			databaseURLFlag,
			&cli.StringFlag{Name: "addr", Value: ":8080", Usage: "API listen `address`", Sources: cli.EnvVars("INFORME_ADDR")},
			&cli.StringFlag{Name: "ops-addr", Value: ":9090", Usage: "listen `address` for /metrics, /healthz and /readyz; empty disables", Sources: cli.EnvVars("INFORME_OPS_ADDR")},
			logFormatFlag, trustedProxiesFlag, publicURLFlag,
		}, append(servingFlags(), tlsFlags()...)...),
		Action: func(ctx context.Context, cmd *cli.Command) error {
			pool, err := postgres.OpenPool(ctx, cmd.String("database-url"), poolOptions(cmd))
			if err != nil {
				return err
			}
			defer closePool(pool)
			return serve(ctx, cmd, pool, nil)
		},
	}
}

// closePool closes pool, waiting at most half a second for connections still
// in use: serve has cut every response by then.
func closePool(pool *pgxpool.Pool) {
	done := make(chan struct{})
	go func() { pool.Close(); close(done) }()
	select {
	case <-done:
	case <-time.After(500 * time.Millisecond):
	}
}

// serve runs the API and operations servers until ctx is done, then shuts
// them down: /readyz turns 503 at once; after --shutdown-delay the API stops
// accepting connections; responses in flight get --shutdown-timeout to
// finish, then are cut (their log lines written). The caller closes the
// pool after.
func serve(ctx context.Context, cmd *cli.Command, pool *pgxpool.Pool, ready func(apiAddr, opsAddr string)) error {
	logger, err := newLogger(cmd.String("log-format"))
	if err != nil {
		return err
	}
	counting, err := report.ParseCounting(cmd.String("report-counts"))
	if err != nil {
		return err
	}
	proxies, err := api.ParseTrustedProxies(cmd.String("trusted-proxies"))
	if err != nil {
		return err
	}
	publicURL, err := api.ParsePublicURL(cmd.String("public-url"))
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
	app := &api.Server{
		Data:    dataset.NewStore(pool),
		Report:  source.Report(counting),
		Tokens:  auth.NewStore(pool),
		Metrics: metrics.New(pool),
		Logger:  logger,
		Pool:    pool,
		Limits: api.Limits{
			AcquireTimeout:   cmd.Duration("acquire-timeout"),
			StatementTimeout: cmd.Duration("statement-timeout"),
			RequestTimeout:   cmd.Duration("request-timeout"),
			Exports:          int(cmd.Int("max-exports")),
			ExportQueue:      int(cmd.Int("export-queue")),
			ExportWait:       cmd.Duration("export-wait"),
			ExportParts:      int(cmd.Int("export-parts")),
		},
		ReadyWhenBusy:  cmd.Bool("ready-when-busy"),
		TrustedProxies: proxies,
		PublicURL:      publicURL,
		Site:           site,
	}
	app.Delivery = api.Delivery{
		Spool: spool.Limits{
			Memory: int(cmd.Int("spool-memory")), Disk: cmd.Int64("spool-disk"),
			Dir: cmd.String("spool-dir"), NoProgress: cmd.Duration("stall-timeout"),
		},
		Budget: spool.NewBudget(cmd.Int64("spool-disk-total")),
	}
	app.Metrics.SpoolDisk(app.Delivery.Budget.InUse)
	apiLn, err := net.Listen("tcp", cmd.String("addr"))
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
	httpSrv, err := setUpTLS(cmd, apiSrv, apiLn.Addr(), logger)
	if err != nil {
		apiLn.Close()
		return err
	}
	if httpSrv != nil {
		httpLn, err := net.Listen("tcp", cmd.String("http-addr"))
		if err != nil {
			apiLn.Close()
			return err
		}
		httpAddr = httpLn.Addr().String()
		go httpSrv.Serve(httpLn) //nolint:errcheck // ends with Close below
		defer httpSrv.Close()
	}
	var opsSrv *http.Server
	opsAddr := ""
	if addr := cmd.String("ops-addr"); addr != "" {
		opsLn, err := net.Listen("tcp", addr)
		if err != nil {
			apiLn.Close()
			return err
		}
		opsAddr = opsLn.Addr().String()
		opsSrv = newHTTPServer(app.OpsHandler(), logger)
		go opsSrv.Serve(opsLn) //nolint:errcheck // ends with Close below
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
	if ready != nil {
		ready(apiLn.Addr().String(), opsAddr)
	}
	select {
	case err = <-errc:
		return err
	case <-ctx.Done():
	}

	app.Drain()
	delay, timeout := cmd.Duration("shutdown-delay"), cmd.Duration("shutdown-timeout")
	logger.Info("shutting down", slog.Duration("delay", delay), slog.Duration("timeout", timeout))
	time.Sleep(delay)
	shutdownCtx, cancel := context.WithTimeout(context.Background(), timeout)
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

func newHTTPServer(h http.Handler, logger *slog.Logger) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		// informe answers oversized headers itself, in JSON, at
		// api.MaxHeaderBytes; this is the server's backstop above it.
		MaxHeaderBytes: 4 * api.MaxHeaderBytes,
		// No WriteTimeout: a whole export to a slow client may rightly take
		// long; a client that accepts nothing is cut by the delivery's own
		// stall timeout.
		ErrorLog: slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
	}
}

func newLogger(format string) (*slog.Logger, error) {
	switch format {
	case "json":
		return slog.New(slog.NewJSONHandler(os.Stderr, nil)), nil
	case "text":
		return slog.New(slog.NewTextHandler(os.Stderr, nil)), nil
	}
	return nil, fmt.Errorf("log format must be json or text, got %q", format)
}
