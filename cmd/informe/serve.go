package main

import (
	"context"
	"slices"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/urfave/cli/v3"

	"github.com/informe/informe/internal/demo"
	"github.com/informe/informe/internal/postgres"
	"github.com/informe/informe/internal/server"
	"github.com/informe/informe/internal/spool"
)

// serving is what the flags of the serving commands (serve, demo) are read
// into: the server's configuration and the pool's.
type serving struct {
	server.Config
	poolSize int
	pgCancel string
}

func (s *serving) openPool(ctx context.Context, url string) (*pgxpool.Pool, error) {
	cancel, _ := postgres.ParseCancel(s.pgCancel) // checked by its Validator
	return postgres.OpenPool(ctx, url, postgres.PoolOptions{MaxConns: int32(s.poolSize), Cancel: cancel})
}

// listenFlags are --addr and --ops-addr, with serve's or demo's defaults.
func (s *serving) listenFlags(addr, opsAddr string) []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "addr", Value: addr, Usage: "API listen `address`", Sources: cli.EnvVars("INFORME_ADDR"), Destination: &s.Addr},
		&cli.StringFlag{Name: "ops-addr", Value: opsAddr, Usage: "listen `address` for /metrics, /healthz and /readyz; empty disables", Sources: cli.EnvVars("INFORME_OPS_ADDR"), Destination: &s.OpsAddr},
	}
}

func logFormatFlag(dst *string, value string) cli.Flag {
	return &cli.StringFlag{Name: "log-format", Value: value, Usage: "log format: json or text", Sources: cli.EnvVars("INFORME_LOG_FORMAT"), Destination: dst}
}

// flags are the flags that serve and demo share: the pool, the limits of
// the work taken on, the spools, and shutdown.
func (s *serving) flags() []cli.Flag {
	l, sp := &s.Limits, &s.Spool
	return []cli.Flag{
		countsFlag(&s.ReportCounts),
		&cli.IntFlag{Name: "pool-size", Value: 16, Sources: cli.EnvVars("INFORME_POOL_SIZE"), Destination: &s.poolSize, Usage: "database connections per instance (pool_max_conns in DATABASE_URL wins)"},
		&cli.DurationFlag{Name: "acquire-timeout", Value: 5 * time.Second, Sources: cli.EnvVars("INFORME_ACQUIRE_TIMEOUT"), Destination: &l.AcquireTimeout,
			Usage: "how long a request waits for a database connection before a 503 with Retry-After"},
		&cli.StringFlag{Name: "pg-cancel", Value: "request", Sources: cli.EnvVars("INFORME_PG_CANCEL"), Destination: &s.pgCancel,
			Usage:     "how a query whose client went away is stopped: request (a PostgreSQL cancel request) or close (close its connection; for PgBouncer 1.18 to 1.20, which can crash on cancel requests)",
			Validator: func(v string) error { _, err := postgres.ParseCancel(v); return err }},
		&cli.DurationFlag{Name: "statement-timeout", Value: 10 * time.Minute, Sources: cli.EnvVars("INFORME_STATEMENT_TIMEOUT"), Destination: &l.StatementTimeout,
			Usage: "PostgreSQL statement_timeout of each report and users transaction (SET LOCAL, so PgBouncer in transaction mode accepts it), over any the URL, role or server sets; 0 keeps theirs"},
		&cli.DurationFlag{Name: "request-timeout", Value: 10 * time.Minute, Sources: cli.EnvVars("INFORME_REQUEST_TIMEOUT"), Destination: &l.RequestTimeout,
			Usage: "longest database side of a request, from arrival to the last row read; 0 is no limit"},
		&cli.IntFlag{Name: "max-exports", Value: 4, Sources: cli.EnvVars("INFORME_MAX_EXPORTS"), Destination: &l.Exports,
			Usage: "big responses (whole exports, pages over 1,000 rows, XLSX) produced at once; keep it below --pool-size"},
		&cli.IntFlag{Name: "max-exports-per-token", Value: 2, Sources: cli.EnvVars("INFORME_MAX_EXPORTS_PER_TOKEN"), Destination: &l.TokenExports,
			Usage: "--max-exports turns one token holds at once, its exports' parts included, unless informe token gave it its own; past it its requests wait; 0 is no limit but --max-exports"},
		&cli.IntFlag{Name: "export-queue", Value: 16, Sources: cli.EnvVars("INFORME_EXPORT_QUEUE"), Destination: &l.ExportQueue,
			Usage: "big requests that may wait for a turn; past it they get a 503 with Retry-After"},
		&cli.DurationFlag{Name: "export-wait", Value: 30 * time.Second, Sources: cli.EnvVars("INFORME_EXPORT_WAIT"), Destination: &l.ExportWait, Usage: "longest wait of a big request for its turn before a 503"},
		&cli.IntFlag{Name: "export-parts", Value: 2, Sources: cli.EnvVars("INFORME_EXPORT_PARTS"), Destination: &l.ExportParts,
			Usage: "connections an unfiltered whole export, in any format, reads through at once, in one snapshot, each taking a free --max-exports turn; 1 reads through one"},
		&cli.DurationFlag{Name: "shutdown-delay", Value: 0, Sources: cli.EnvVars("INFORME_SHUTDOWN_DELAY"), Destination: &s.ShutdownDelay,
			Usage: "on SIGTERM, how long /readyz answers 503 before the API stops accepting connections, so load balancers notice"},
		&cli.DurationFlag{Name: "shutdown-timeout", Value: 30 * time.Second, Sources: cli.EnvVars("INFORME_SHUTDOWN_TIMEOUT"), Destination: &s.ShutdownTimeout,
			Usage: "how long responses in flight may take to finish after the listener closes; past it they are cut"},
		&cli.BoolFlag{Name: "ready-when-busy", Value: true, Sources: cli.EnvVars("INFORME_READY_WHEN_BUSY"), Destination: &s.ReadyWhenBusy,
			Usage: "answer /readyz 200 (status busy) when every connection is in use; false answers 503"},
		&cli.IntFlag{Name: "spool-memory", Value: spool.DefaultMemory, Sources: cli.EnvVars("INFORME_SPOOL_MEMORY"), Destination: &sp.Memory,
			Usage: "bytes of a response kept in memory while its client is slower than the database, before a temporary file"},
		&cli.Int64Flag{Name: "spool-disk", Value: 1 << 30, Sources: cli.EnvVars("INFORME_SPOOL_DISK"), Destination: &sp.Disk,
			Usage: "bytes of one response kept in its temporary file; past it the database side waits for the client"},
		&cli.Int64Flag{Name: "spool-disk-total", Value: 8 << 30, Sources: cli.EnvVars("INFORME_SPOOL_DISK_TOTAL"), Destination: &s.SpoolDiskTotal,
			Usage: "bytes of all responses' temporary files together; past it the database sides wait for their clients"},
		&cli.StringFlag{Name: "spool-dir", Value: "", Sources: cli.EnvVars("INFORME_SPOOL_DIR"), Destination: &sp.Dir,
			Usage: "`folder` for the temporary files (a real disk, not tmpfs); empty is the system's temporary folder"},
		&cli.DurationFlag{Name: "stall-timeout", Value: spool.DefaultNoProgress, Sources: cli.EnvVars("INFORME_STALL_TIMEOUT"), Destination: &sp.NoProgress,
			Usage: "a client whose connection accepts no bytes for this long is cut; negative never cuts. A client with receive buffer B acknowledges bytes only every B/R seconds at R bytes/s, so the slowest reader kept is about B/T: with Linux's usual 128 KiB, 5m keeps readers above ~440 B/s, 60s above ~2.2 KB/s, 10s above ~13 KB/s"},
	}
}

// tlsFlags are serve's HTTPS flags: a certificate from files, or from an
// ACME CA, the plain-HTTP listener that redirects to HTTPS, and HSTS.
func tlsFlags(t *server.TLS) []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "tls-cert", Sources: cli.EnvVars("INFORME_TLS_CERT"), Destination: &t.CertFile,
			Usage: "PEM certificate `file` (with its chain) to serve the API over HTTPS; read again when it changes"},
		&cli.StringFlag{Name: "tls-key", Sources: cli.EnvVars("INFORME_TLS_KEY"), Destination: &t.KeyFile, Usage: "PEM private key `file` of --tls-cert; read again when it changes"},
		&cli.StringSliceFlag{Name: "acme-domain", Sources: cli.EnvVars("INFORME_ACME_DOMAIN"), Destination: &t.ACMEDomains,
			Usage: "serve the API over HTTPS with certificates for this `domain` from an ACME CA (Let's Encrypt); repeat for more names; needs --http-addr reachable on port 80"},
		&cli.StringFlag{Name: "acme-cache", Value: "/var/lib/informe/acme", Sources: cli.EnvVars("INFORME_ACME_CACHE"), Destination: &t.ACMECache,
			Usage: "`folder` that keeps the ACME account key and certificates across restarts"},
		&cli.StringFlag{Name: "acme-directory", Sources: cli.EnvVars("INFORME_ACME_DIRECTORY"), Destination: &t.ACMEDirectory, Usage: "ACME directory `URL`; empty is Let's Encrypt's production CA"},
		&cli.StringFlag{Name: "acme-email", Sources: cli.EnvVars("INFORME_ACME_EMAIL"), Destination: &t.ACMEEmail, Usage: "contact `address` given to the ACME CA for expiry notices"},
		&cli.StringFlag{Name: "http-addr", Value: ":80", Sources: cli.EnvVars("INFORME_HTTP_ADDR"), Destination: &t.HTTPAddr,
			Usage: "with HTTPS on, the plain-HTTP listen `address` that redirects to HTTPS and answers ACME challenges; empty disables"},
		&cli.DurationFlag{Name: "hsts-max-age", Value: 365 * 24 * time.Hour, Sources: cli.EnvVars("INFORME_HSTS_MAX_AGE"), Destination: &t.HSTSMaxAge,
			Usage: "with HTTPS on, how long browsers must use HTTPS only (Strict-Transport-Security); 0 sends none"},
	}
}

func serveCommand() *cli.Command {
	s := &serving{}
	return &cli.Command{
		Name:  "serve",
		Usage: "serve the API against DATABASE_URL",
		Flags: slices.Concat([]cli.Flag{databaseURLFlag}, s.listenFlags(":8080", ":9090"), []cli.Flag{
			logFormatFlag(&s.LogFormat, "json"),
			&cli.StringFlag{Name: "trusted-proxies", Value: "", Sources: cli.EnvVars("INFORME_TRUSTED_PROXIES"), Destination: &s.TrustedProxies,
				Usage: "comma-separated `CIDRs` of the reverse proxies whose X-Forwarded-Host, -Proto and -For are believed; none by default"},
			&cli.StringFlag{Name: "public-url", Value: "", Sources: cli.EnvVars("INFORME_PUBLIC_URL"), Destination: &s.PublicURL,
				Usage: "`URL` clients reach the API at (https://informe.example.cl), for OData's absolute links; empty builds them from the address each connection reached, never from the Host header"},
		}, s.flags(), tlsFlags(&s.TLS)),
		Action: func(ctx context.Context, cmd *cli.Command) error {
			pool, err := s.openPool(ctx, cmd.String("database-url"))
			if err != nil {
				return err
			}
			defer server.ClosePool(pool)
			return server.Run(ctx, pool, s.Config)
		},
	}
}

func demoCommand() *cli.Command {
	s := &serving{}
	var o demo.Options
	return &cli.Command{
		Name:  "demo",
		Usage: "start a private PostgreSQL, seed it, make a token and serve the API",
		Flags: slices.Concat(s.listenFlags("127.0.0.1:8080", "127.0.0.1:9090"), []cli.Flag{
			&cli.StringFlag{Name: "data-dir", Value: demo.DefaultDataDir(), Usage: "`folder` for the private PostgreSQL", Sources: cli.EnvVars("INFORME_DATA_DIR"), Destination: &o.DataDir},
			&cli.StringFlag{Name: "pg-user", Value: "postgres", Usage: "unprivileged `user` to run PostgreSQL as when informe runs as root", Sources: cli.EnvVars("INFORME_PG_USER"), Destination: &o.PGUser},
			contractsFlag, seedFlag, logFormatFlag(&s.LogFormat, "text"),
		}, s.flags()),
		Action: func(ctx context.Context, cmd *cli.Command) error {
			o.Addr, o.OpsAddr, o.Informe = s.Addr, s.OpsAddr, demo.SelfCommand()
			o.Contracts, o.Seed, o.SeedGiven = cmd.Int("contracts"), cmd.Int64("seed"), cmd.IsSet("contracts") || cmd.IsSet("seed")
			o.OpenPool = s.openPool
			return demo.Run(ctx, o, func(ctx context.Context, pool *pgxpool.Pool, ready func(apiAddr, opsAddr string)) error {
				c := s.Config
				c.Ready = ready
				return server.Run(ctx, pool, c)
			})
		},
	}
}
