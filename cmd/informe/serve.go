package main

import (
	"context"
	"math"
	"net/url"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/urfave/cli/v3"

	"github.com/informe/informe/internal/api"
	"github.com/informe/informe/internal/audit"
	"github.com/informe/informe/internal/demo"
	"github.com/informe/informe/internal/postgres"
	"github.com/informe/informe/internal/server"
	"github.com/informe/informe/internal/spool"
	"github.com/informe/informe/report"
)

// serving is what the flags of the serving commands (serve, demo) are read
// into: the server's configuration and the pool's.
type serving struct {
	server.Config
	form        *form
	databaseURL string // serve's; demo starts its own database
	poolSize    int
	pgCancel    string
}

func newServing(command string) *serving { return &serving{form: newForm(command)} }

func (s *serving) openPool(ctx context.Context, url string) (*pgxpool.Pool, error) {
	cancel, _ := postgres.ParseCancel(s.pgCancel) // checked by validate
	return postgres.OpenPool(ctx, url, postgres.PoolOptions{MaxConns: int32(s.poolSize), Cancel: cancel})
}

// auditFlag is --audit, the audit's mode, read into dst.
func auditFlag(f *form, dst *string) cli.Flag {
	return f.text("audit", "INFORME_AUDIT", "required", dst,
		"record every read in the database (docs/privacy.md): required refuses a read whose record cannot be written (503), best-effort serves it unrecorded and logs why, off records nothing; the mode chosen is itself recorded")
}

// checkAudit checks --audit.
func checkAudit(f *form, mode string) {
	_, err := audit.ParseMode(mode)
	f.check("audit", err)
}

// databaseFlag is --database-url, read into dst.
func databaseFlag(f *form, dst *string) cli.Flag {
	return f.text("database-url", "DATABASE_URL", "", dst, "PostgreSQL `URL` or DSN (required)")
}

// listenFlags are --addr and --ops-addr, with serve's or demo's defaults.
func (s *serving) listenFlags(addr, opsAddr string) []cli.Flag {
	f := s.form
	return []cli.Flag{
		f.text("addr", "INFORME_ADDR", addr, &s.Addr, "API listen `address`"),
		f.text("ops-addr", "INFORME_OPS_ADDR", opsAddr, &s.OpsAddr, "listen `address` for /metrics, /healthz and /readyz; empty disables"),
	}
}

func logFormatFlag(f *form, dst *string, value string) cli.Flag {
	return f.text("log-format", "INFORME_LOG_FORMAT", value, dst, "log format: json or text")
}

// flags are the flags that serve and demo share: the pool, the limits of
// the work taken on, the spools, and shutdown.
func (s *serving) flags() []cli.Flag {
	f, l, sp := s.form, &s.Limits, &s.Spool
	return []cli.Flag{
		countsFlag(f, &s.ReportCounts),
		auditFlag(f, &s.Audit),
		f.text("audit-database-url", "INFORME_AUDIT_DATABASE_URL", "", &s.AuditDatabaseURL,
			"PostgreSQL `URL` the records of reads are written to (the primary, when DATABASE_URL is a standby); empty writes them to DATABASE_URL's database"),
		typed(f, "pool-size", "INFORME_POOL_SIZE", 16, &s.poolSize, "database connections per instance (pool_max_conns in DATABASE_URL wins)"),
		typed(f, "acquire-timeout", "INFORME_ACQUIRE_TIMEOUT", 5*time.Second, &l.AcquireTimeout,
			"how long a request waits for a database connection before a 503 with Retry-After"),
		f.text("pg-cancel", "INFORME_PG_CANCEL", "request", &s.pgCancel,
			"how a query whose client went away is stopped: request (a PostgreSQL cancel request) or close (close its connection; for PgBouncer 1.18 to 1.20, which can crash on cancel requests)"),
		typed(f, "statement-timeout", "INFORME_STATEMENT_TIMEOUT", 10*time.Minute, &l.StatementTimeout,
			"PostgreSQL statement_timeout of each report and users transaction (SET LOCAL, so PgBouncer in transaction mode accepts it), over any the URL, role or server sets; 0 keeps theirs"),
		typed(f, "request-timeout", "INFORME_REQUEST_TIMEOUT", 10*time.Minute, &l.RequestTimeout,
			"longest database side of a request, from arrival to the last row read; 0 is no limit"),
		typed(f, "max-exports", "INFORME_MAX_EXPORTS", 4, &l.Exports,
			"big responses (whole exports, pages over 1,000 rows, XLSX) produced at once; keep it below --pool-size"),
		typed(f, "max-exports-per-token", "INFORME_MAX_EXPORTS_PER_TOKEN", 2, &l.TokenExports,
			"--max-exports turns one token holds at once, its exports' parts included, unless informe token gave it its own; past it its requests wait; 0 is no limit but --max-exports"),
		typed(f, "export-queue", "INFORME_EXPORT_QUEUE", 16, &l.ExportQueue,
			"big requests that may wait for a turn; past it they get a 503 with Retry-After"),
		typed(f, "export-wait", "INFORME_EXPORT_WAIT", 30*time.Second, &l.ExportWait, "longest wait of a big request for its turn before a 503"),
		typed(f, "export-parts", "INFORME_EXPORT_PARTS", 2, &l.ExportParts,
			"connections a whole export in the report's own order, filtered or not, in any format, reads through at once, in one snapshot, each taking a free --max-exports turn; 1 reads through one"),
		typed(f, "shutdown-delay", "INFORME_SHUTDOWN_DELAY", 0, &s.ShutdownDelay,
			"on SIGTERM, how long /readyz answers 503 before the API stops accepting connections, so load balancers notice"),
		typed(f, "shutdown-timeout", "INFORME_SHUTDOWN_TIMEOUT", 30*time.Second, &s.ShutdownTimeout,
			"how long responses in flight may take to finish after the listener closes; past it they are cut"),
		typed(f, "ready-when-busy", "INFORME_READY_WHEN_BUSY", true, &s.ReadyWhenBusy,
			"answer /readyz 200 (status busy) when every connection is in use; false answers 503"),
		typed(f, "spool-memory", "INFORME_SPOOL_MEMORY", spool.DefaultMemory, &sp.Memory,
			"bytes of a response kept in memory while its client is slower than the database, before a temporary file"),
		typed(f, "spool-disk", "INFORME_SPOOL_DISK", int64(1<<30), &sp.Disk,
			"bytes of one response kept in its temporary file; past it the database side waits for the client"),
		typed(f, "spool-disk-total", "INFORME_SPOOL_DISK_TOTAL", int64(8<<30), &s.SpoolDiskTotal,
			"bytes of all responses' temporary files together; past it the database sides wait for their clients"),
		f.text("spool-dir", "INFORME_SPOOL_DIR", "", &sp.Dir,
			"`folder` for the temporary files (a real disk, not tmpfs); empty is the system's temporary folder"),
		typed(f, "stall-timeout", "INFORME_STALL_TIMEOUT", spool.DefaultNoProgress, &sp.NoProgress,
			"a client whose connection accepts no bytes for this long is cut; negative never cuts. A client with receive buffer B acknowledges bytes only every B/R seconds at R bytes/s, so the slowest reader kept is about B/T: with Linux's usual 128 KiB, 5m keeps readers above ~440 B/s, 60s above ~2.2 KB/s, 10s above ~13 KB/s"),
	}
}

// tlsFlags are serve's HTTPS flags: a certificate from files, or from an
// ACME CA, the plain-HTTP listener that redirects to HTTPS, and HSTS.
func (s *serving) tlsFlags() []cli.Flag {
	f, t := s.form, &s.TLS
	return []cli.Flag{
		f.text("tls-cert", "INFORME_TLS_CERT", "", &t.CertFile,
			"PEM certificate `file` (with its chain) to serve the API over HTTPS; read again when it changes"),
		f.text("tls-key", "INFORME_TLS_KEY", "", &t.KeyFile, "PEM private key `file` of --tls-cert; read again when it changes"),
		f.list("acme-domain", "INFORME_ACME_DOMAIN", &t.ACMEDomains,
			"serve the API over HTTPS with certificates for this `domain` from an ACME CA (Let's Encrypt); repeat for more names; needs --http-addr reachable on port 80"),
		f.text("acme-cache", "INFORME_ACME_CACHE", "/var/lib/informe/acme", &t.ACMECache,
			"`folder` that keeps the ACME account key and certificates across restarts"),
		f.text("acme-directory", "INFORME_ACME_DIRECTORY", "", &t.ACMEDirectory, "ACME directory `URL`; empty is Let's Encrypt's production CA"),
		f.text("acme-email", "INFORME_ACME_EMAIL", "", &t.ACMEEmail, "contact `address` given to the ACME CA for expiry notices"),
		f.text("http-addr", "INFORME_HTTP_ADDR", ":80", &t.HTTPAddr,
			"with HTTPS on, the plain-HTTP listen `address` that redirects to HTTPS and answers ACME challenges; empty disables"),
		typed(f, "hsts-max-age", "INFORME_HSTS_MAX_AGE", 365*24*time.Hour, &t.HSTSMaxAge,
			"with HTTPS on, how long browsers must use HTTPS only (Strict-Transport-Security); 0 sends none"),
	}
}

func serveCommand() *cli.Command {
	s := newServing("serve")
	f := s.form
	return &cli.Command{
		Name:  "serve",
		Usage: "serve the API against DATABASE_URL",
		Flags: slices.Concat([]cli.Flag{databaseFlag(f, &s.databaseURL)}, s.listenFlags(":8080", ":9090"), []cli.Flag{
			logFormatFlag(f, &s.LogFormat, "json"),
			f.text("trusted-proxies", "INFORME_TRUSTED_PROXIES", "", &s.TrustedProxies,
				"comma-separated `CIDRs` of the reverse proxies whose X-Forwarded-Host, -Proto and -For are believed; none by default"),
			f.text("public-url", "INFORME_PUBLIC_URL", "", &s.PublicURL,
				"`URL` clients reach the API at (https://informe.example.cl), for OData's absolute links; empty builds them from the address each connection reached, never from the Host header"),
			typed(f, "schedules", "INFORME_SCHEDULES", true, &s.Schedules,
				"run the scheduled deliveries (informe schedule add) that are due; every instance may, each occurrence runs once"),
		}, s.flags(), s.tlsFlags()),
		Action: func(ctx context.Context, cmd *cli.Command) error {
			if err := s.validate(); err != nil {
				return err
			}
			pool, err := s.openPool(ctx, s.databaseURL)
			if err != nil {
				return err
			}
			defer server.ClosePool(pool)
			return server.Run(ctx, pool, s.Config)
		},
	}
}

func demoCommand() *cli.Command {
	s := newServing("demo")
	f := s.form
	var o demo.Options
	return &cli.Command{
		Name:  "demo",
		Usage: "start a private PostgreSQL, seed it, make a token and serve the API",
		Flags: slices.Concat(s.listenFlags("127.0.0.1:8080", "127.0.0.1:9090"), []cli.Flag{
			f.text("data-dir", "INFORME_DATA_DIR", demo.DefaultDataDir(), &o.DataDir, "`folder` for the private PostgreSQL"),
			f.text("pg-user", "INFORME_PG_USER", "postgres", &o.PGUser, "unprivileged `user` to run PostgreSQL as when informe runs as root"),
			contractsFlag(f, &o.Contracts), seedFlag(f, &o.Seed), logFormatFlag(f, &s.LogFormat, "text"),
		}, s.flags()),
		Action: func(ctx context.Context, cmd *cli.Command) error {
			if o.DataDir == "" {
				f.fail("data-dir", "must name a folder")
			}
			if o.PGUser == "" {
				f.fail("pg-user", "must name a user")
			}
			atLeast(f, "contracts", o.Contracts, 1)
			if err := s.validate(); err != nil {
				return err
			}
			o.Addr, o.OpsAddr, o.Informe = s.Addr, s.OpsAddr, demo.SelfCommand()
			o.SeedGiven = f.set("contracts") || f.set("seed")
			o.OpenPool = s.openPool
			return demo.Run(ctx, o, func(ctx context.Context, pool *pgxpool.Pool, ready func(apiAddr, opsAddr string)) error {
				c := s.Config
				c.Ready = ready
				return server.Run(ctx, pool, c)
			})
		},
	}
}

// maxStatementTimeout is the longest statement_timeout PostgreSQL takes
// (an int of milliseconds).
const maxStatementTimeout = math.MaxInt32 * time.Millisecond

// validate checks every flag of serve or demo (with serve's, the database
// URL and the HTTPS flags) without opening anything, and returns all that
// is wrong as a [usageError].
func (s *serving) validate() error {
	f, l := s.form, s.Limits
	_, serve := f.flags["database-url"]
	if serve {
		databaseURL(f, s.databaseURL)
	}
	address(f, "addr", s.Addr, false)
	address(f, "ops-addr", s.OpsAddr, true)
	checkAudit(f, s.Audit)
	if s.AuditDatabaseURL != "" {
		if _, err := pgxpool.ParseConfig(s.AuditDatabaseURL); err != nil {
			f.fail("audit-database-url", "is neither a PostgreSQL URL (postgres://user@host:5432/db) nor a key=value DSN, or a setting in it is wrong")
		}
	}
	if s.LogFormat != "json" && s.LogFormat != "text" {
		f.fail("log-format", "must be json or text, got %q", s.LogFormat)
	}
	if serve {
		if _, err := api.ParseTrustedProxies(s.TrustedProxies); err != nil {
			f.fail("trusted-proxies", "%s", strings.TrimPrefix(err.Error(), "trusted proxies: "))
		}
		// The URL is not repeated: it could hold a user and password.
		if _, err := api.ParsePublicURL(s.PublicURL); err != nil {
			f.fail("public-url", "must be an absolute http or https URL with a host (https://informe.example.cl, perhaps with a path), and no user, query or fragment")
		}
	}
	_, err := report.ParseCounting(s.ReportCounts)
	f.check("report-counts", err)

	atLeast(f, "pool-size", s.poolSize, 1)
	_, err = postgres.ParseCancel(s.pgCancel)
	f.check("pg-cancel", err)
	for name, d := range map[string]time.Duration{"acquire-timeout": l.AcquireTimeout, "request-timeout": l.RequestTimeout,
		"statement-timeout": l.StatementTimeout, "export-wait": l.ExportWait, "shutdown-delay": s.ShutdownDelay,
		"shutdown-timeout": s.ShutdownTimeout} {
		notNegative(f, name, d)
	}
	if d := l.StatementTimeout; f.ok("statement-timeout") && (d > 0 && d < time.Millisecond || d > maxStatementTimeout) {
		f.fail("statement-timeout", "must be 0 (keep the database's) or from 1ms to %s, PostgreSQL's limit", maxStatementTimeout)
	}
	notNegative(f, "max-exports", l.Exports)
	notNegative(f, "max-exports-per-token", l.TokenExports)
	notNegative(f, "export-queue", l.ExportQueue)
	atLeast(f, "export-parts", l.ExportParts, 1)
	notNegative(f, "spool-memory", s.Spool.Memory)
	notNegative(f, "spool-disk", s.Spool.Disk)
	notNegative(f, "spool-disk-total", s.SpoolDiskTotal)
	if dir := s.Spool.Dir; dir != "" {
		if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
			f.fail("spool-dir", "%s is not a folder", dir)
		}
	}
	if serve {
		s.validateTLS()
	}
	return f.err()
}

// validateTLS checks the HTTPS flags. The certificate and key files are not
// read here: serve reads them when it starts.
func (s *serving) validateTLS() {
	f, t := s.form, s.TLS
	if (t.CertFile == "") != (t.KeyFile == "") {
		missing := "tls-key"
		if t.CertFile == "" {
			missing = "tls-cert"
		}
		other := map[string]string{"tls-key": "tls-cert", "tls-cert": "tls-key"}[missing]
		f.fail(other, "needs --%s too: the two go together", missing)
	}
	if t.CertFile != "" && len(t.ACMEDomains) > 0 {
		f.fail("acme-domain", "--tls-cert and --acme-domain are alternatives: give one")
	}
	for _, d := range t.ACMEDomains {
		if d == "" || strings.ContainsAny(d, ":/@ ") || strings.HasPrefix(d, ".") || strings.HasSuffix(d, ".") {
			f.fail("acme-domain", "%q is not a domain name such as informe.example.cl", d)
		}
	}
	if len(t.ACMEDomains) > 0 && t.ACMECache == "" {
		f.fail("acme-cache", "must name a folder: the ACME account key and certificates are kept there")
	}
	if t.ACMEDirectory != "" {
		if u, err := url.Parse(t.ACMEDirectory); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			f.fail("acme-directory", "must be an absolute https URL")
		}
	}
	// An e-mail address is personal: it is not repeated.
	if e := t.ACMEEmail; e != "" && (strings.Count(e, "@") != 1 || strings.HasPrefix(e, "@") || strings.HasSuffix(e, "@") || strings.ContainsAny(e, " ,<>")) {
		f.fail("acme-email", "is not an e-mail address")
	}
	address(f, "http-addr", t.HTTPAddr, true)
	notNegative(f, "hsts-max-age", t.HSTSMaxAge)
}
