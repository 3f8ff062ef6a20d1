// Command informe serves the reporting API of a legal-services management
// system over PostgreSQL, and manages its schema, demo data and tokens.
//
// This file is wiring only: it reads flags (each with an environment
// variable), builds the pool, stores and servers, runs them, and closes them
// in reverse order.
package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/debug"
	"syscall"
	"time"

	"github.com/informe/informe/internal/pgserver"
	"github.com/informe/informe/internal/seed"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/urfave/cli/v3"

	"github.com/informe/informe/auth"
	"github.com/informe/informe/internal/api"
	"github.com/informe/informe/internal/postgres"
	"github.com/informe/informe/internal/rut"
	"github.com/informe/informe/metrics"
	"github.com/informe/informe/report"
	"github.com/informe/informe/users"
)

func main() {
	// The JSON, NDJSON and CSV encoders allocate nothing per row, but
	// excelize's stream writer holds up to 32 MiB of sheet XML per XLSX
	// response before it spills to disk; a lower GC target keeps the heap's
	// headroom over that small (peak RSS growth ~60 -> ~42 MiB measured,
	// no measurable cost). GOGC, when set, wins.
	if _, ok := os.LookupEnv("GOGC"); !ok {
		debug.SetGCPercent(50)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := command().Run(ctx, os.Args); err != nil {
		fmt.Fprintln(os.Stderr, "informe:", err)
		os.Exit(1)
	}
}

var (
	databaseURLFlag = &cli.StringFlag{
		Name: "database-url", Usage: "PostgreSQL `URL` or DSN",
		Sources: cli.EnvVars("DATABASE_URL"), Required: true,
	}
	contractsFlag = &cli.IntFlag{
		Name: "contracts", Usage: "number of demo contracts to generate", Value: 1000,
		Sources: cli.EnvVars("INFORME_CONTRACTS"),
	}
	seedFlag = &cli.Int64Flag{
		Name: "seed", Usage: "random seed: the same contracts and seed give the same data", Value: 1,
		Sources: cli.EnvVars("INFORME_SEED"),
	}
	countsFlag = &cli.StringFlag{
		Name: "report-counts", Value: "maintained",
		Usage:   "where unfiltered report counts come from: maintained (trigger-kept counters) or view (count the general_report view)",
		Sources: cli.EnvVars("INFORME_REPORT_COUNTS"),
	}
	logFormatFlag = &cli.StringFlag{
		Name: "log-format", Value: "json", Usage: "log format: json or text",
		Sources: cli.EnvVars("INFORME_LOG_FORMAT"),
	}
)

func command() *cli.Command {
	return &cli.Command{
		Name:  "informe",
		Usage: "reporting and export API for legal-services data in PostgreSQL",
		Commands: []*cli.Command{
			{
				Name:  "serve",
				Usage: "serve the API against DATABASE_URL",
				Flags: []cli.Flag{
					databaseURLFlag,
					&cli.StringFlag{Name: "addr", Value: ":8080", Usage: "API listen `address`", Sources: cli.EnvVars("INFORME_ADDR")},
					&cli.StringFlag{Name: "ops-addr", Value: ":9090", Usage: "listen `address` for /metrics, /healthz and /readyz; empty disables", Sources: cli.EnvVars("INFORME_OPS_ADDR")},
					countsFlag, logFormatFlag,
				},
				Action: withPool(func(ctx context.Context, cmd *cli.Command, pool *pgxpool.Pool) error {
					return serve(ctx, cmd, pool, nil)
				}),
			},
			{
				Name:  "migrate",
				Usage: "apply the schema migrations that the database has not seen yet",
				Flags: []cli.Flag{databaseURLFlag},
				Action: withPool(func(ctx context.Context, cmd *cli.Command, pool *pgxpool.Pool) error {
					n, err := postgres.Migrate(ctx, pool)
					if err == nil {
						fmt.Fprintf(os.Stderr, "applied %d migrations\n", n)
					}
					return err
				}),
			},
			{
				Name:  "seed",
				Usage: "load realistic, deterministic demo data into an empty database",
				Flags: []cli.Flag{databaseURLFlag, contractsFlag, seedFlag},
				Action: withPool(func(ctx context.Context, cmd *cli.Command, pool *pgxpool.Pool) error {
					return runSeed(ctx, pool, cmd)
				}),
			},
			tokenCommand(),
			demoCommand(),
			columnsCommand(),
		},
	}
}

func runSeed(ctx context.Context, pool *pgxpool.Pool, cmd *cli.Command) error {
	start := time.Now()
	fmt.Fprintf(os.Stderr, "seeding %d contracts (seed %d)...\n", cmd.Int("contracts"), cmd.Int64("seed"))
	st, err := seed.Seed(ctx, pool, seed.Options{Contracts: cmd.Int("contracts"), Seed: cmd.Int64("seed")})
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "seeded %d contracts, %d report rows, %d users in %s\n",
		st.Contracts, st.ReportRows, st.Users, time.Since(start).Round(time.Millisecond))
	return nil
}

// withPool runs action with a pool on --database-url, closed after it.
func withPool(action func(context.Context, *cli.Command, *pgxpool.Pool) error) cli.ActionFunc {
	return func(ctx context.Context, cmd *cli.Command) error {
		pool, err := postgres.Open(ctx, cmd.String("database-url"))
		if err != nil {
			return err
		}
		defer pool.Close()
		return action(ctx, cmd, pool)
	}
}

func tokenCommand() *cli.Command {
	withTokens := func(action func(context.Context, *cli.Command, *auth.Store) error) cli.ActionFunc {
		return withPool(func(ctx context.Context, cmd *cli.Command, pool *pgxpool.Pool) error {
			return action(ctx, cmd, auth.NewStore(pool))
		})
	}
	return &cli.Command{
		Name:  "token",
		Usage: "create, list and revoke API tokens",
		Commands: []*cli.Command{
			{
				Name:  "create",
				Usage: "create a token and print it, alone, on stdout (it is not shown again)",
				Flags: []cli.Flag{
					databaseURLFlag,
					&cli.StringFlag{Name: "name", Required: true, Usage: "unique token `name`", Sources: cli.EnvVars("INFORME_TOKEN_NAME")},
					&cli.StringSliceFlag{Name: "scope", Usage: "scope to grant (report:read, users:read); repeat for several; default both", Sources: cli.EnvVars("INFORME_TOKEN_SCOPES")},
					&cli.DurationFlag{Name: "expires-in", Usage: "lifetime, e.g. 720h; 0 never expires", Sources: cli.EnvVars("INFORME_TOKEN_EXPIRES_IN")},
				},
				Action: withTokens(func(ctx context.Context, cmd *cli.Command, tokens *auth.Store) error {
					var scopes []auth.Scope
					for _, s := range cmd.StringSlice("scope") {
						sc, err := auth.ParseScope(s)
						if err != nil {
							return err
						}
						scopes = append(scopes, sc)
					}
					var expires time.Time
					if d := cmd.Duration("expires-in"); d > 0 {
						expires = time.Now().Add(d)
					}
					secret, err := tokens.Create(ctx, cmd.String("name"), scopes, expires)
					if err != nil {
						return err
					}
					fmt.Println(secret)
					return nil
				}),
			},
			{
				Name:  "list",
				Usage: "list tokens (never their secrets)",
				Flags: []cli.Flag{databaseURLFlag},
				Action: withTokens(func(ctx context.Context, cmd *cli.Command, tokens *auth.Store) error {
					list, err := tokens.List(ctx)
					if err != nil {
						return err
					}
					fmt.Printf("%-24s %-26s %-20s %-20s %s\n", "NAME", "SCOPES", "CREATED", "EXPIRES", "STATE")
					for _, t := range list {
						state, expires := "active", "never"
						if t.ExpiresAt != nil {
							expires = t.ExpiresAt.UTC().Format(time.DateTime)
							if !time.Now().Before(*t.ExpiresAt) {
								state = "expired"
							}
						}
						if t.RevokedAt != nil {
							state = "revoked " + t.RevokedAt.UTC().Format(time.DateTime)
						}
						fmt.Printf("%-24s %-26s %-20s %-20s %s\n", t.Name, fmt.Sprint(t.Scopes), t.CreatedAt.UTC().Format(time.DateTime), expires, state)
					}
					return nil
				}),
			},
			{
				Name:      "revoke",
				Usage:     "revoke the token called NAME",
				ArgsUsage: "NAME",
				Flags:     []cli.Flag{databaseURLFlag},
				Action: withTokens(func(ctx context.Context, cmd *cli.Command, tokens *auth.Store) error {
					if cmd.NArg() != 1 {
						return errors.New("token revoke takes exactly one NAME")
					}
					return tokens.Revoke(ctx, cmd.Args().First())
				}),
			},
		},
	}
}

func demoCommand() *cli.Command {
	return &cli.Command{
		Name:  "demo",
		Usage: "start a private PostgreSQL, seed it, make a token and serve the API",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "addr", Value: "127.0.0.1:8080", Usage: "API listen `address`", Sources: cli.EnvVars("INFORME_ADDR")},
			&cli.StringFlag{Name: "ops-addr", Value: "127.0.0.1:9090", Usage: "listen `address` for /metrics, /healthz and /readyz; empty disables", Sources: cli.EnvVars("INFORME_OPS_ADDR")},
			&cli.StringFlag{Name: "data-dir", Value: defaultDataDir(), Usage: "`folder` for the private PostgreSQL", Sources: cli.EnvVars("INFORME_DATA_DIR")},
			&cli.StringFlag{Name: "pg-user", Value: "postgres", Usage: "unprivileged `user` to run PostgreSQL as when informe runs as root", Sources: cli.EnvVars("INFORME_PG_USER")},
			contractsFlag, seedFlag, countsFlag,
			&cli.StringFlag{Name: "log-format", Value: "text", Usage: "log format: json or text", Sources: cli.EnvVars("INFORME_LOG_FORMAT")},
		},
		Action: func(ctx context.Context, cmd *cli.Command) error {
			fmt.Fprintf(os.Stderr, "starting a private PostgreSQL in %s...\n", cmd.String("data-dir"))
			srv, err := pgserver.Start(ctx, pgserver.Options{Dir: cmd.String("data-dir"), RunAs: cmd.String("pg-user")})
			if err != nil {
				return err
			}
			defer func() {
				if err := srv.Close(); err != nil {
					fmt.Fprintln(os.Stderr, "informe:", err)
				}
				fmt.Fprintln(os.Stderr, "PostgreSQL stopped")
			}()
			if err := srv.CreateDatabase(ctx, "informe"); err != nil {
				return err
			}
			pool, err := postgres.Open(ctx, srv.URL("informe"))
			if err != nil {
				return err
			}
			defer pool.Close()
			if _, err := postgres.Migrate(ctx, pool); err != nil {
				return err
			}
			has, err := seed.HasData(ctx, pool)
			if err != nil {
				return err
			}
			if !has {
				if err := runSeed(ctx, pool, cmd); err != nil {
					return err
				}
			}
			tokens := auth.NewStore(pool)
			if err := tokens.Delete(ctx, "demo"); err != nil {
				return err
			}
			token, err := tokens.Create(ctx, "demo", nil, time.Time{})
			if err != nil {
				return err
			}
			// A client RUT that exists, typed the dotted way, for the examples.
			var rutExample string
			if err := pool.QueryRow(ctx, "SELECT rut FROM clients ORDER BY id LIMIT 1").Scan(&rutExample); err != nil {
				return err
			}
			if r, err := rut.Parse(rutExample); err == nil {
				rutExample = r.Dotted()
			}
			return serve(ctx, cmd, pool, func(apiAddr, opsAddr string) {
				printDemo(apiAddr, opsAddr, token, srv.URL("informe"), rutExample)
			})
		},
	}
}

// defaultDataDir is where the demo keeps its PostgreSQL: under the user's
// home, or, for root (whose home the postgres user cannot enter), under
// /var/lib/informe.
func defaultDataDir() string {
	if os.Geteuid() == 0 {
		return "/var/lib/informe/demo"
	}
	if home, err := os.UserHomeDir(); err == nil {
		return filepath.Join(home, ".local", "share", "informe", "demo")
	}
	return filepath.Join(os.TempDir(), "informe-demo")
}

func printDemo(apiAddr, opsAddr, token, dbURL, rutExample string) {
	base := "http://" + apiAddr
	fmt.Printf(`
informe demo is serving %[1]s

  token:     %[2]s
  database:  %[4]s
  metrics:   http://%[3]s/metrics

Try:
  curl -H 'Authorization: Bearer %[2]s' '%[1]s/users'
  curl -H 'Authorization: Bearer %[2]s' '%[1]s/api/general-report?result_per_page=2'
  curl -H 'Authorization: Bearer %[2]s' -H 'Accept: text/csv' '%[1]s/api/general-report?result_per_page=100&bom=true&delimiter=semicolon' -o general-report.csv
  curl -H 'Authorization: Bearer %[2]s' '%[1]s/api/general-report?format=ndjson&rut=%[5]s'
  curl -H 'Authorization: Bearer %[2]s' '%[1]s/api/general-report?format=xlsx&result_per_page=10000' -o general-report.xlsx
  curl '%[1]s/api/general-report?format=csv&result_per_page=100&access_token=%[2]s'

Press Ctrl-C to stop informe and its PostgreSQL.
`, base, token, opsAddr, dbURL, rutExample)
}

// serve runs the API and operations servers until ctx is done, then shuts
// them down: the HTTP servers first, letting streams in flight finish, so
// that the caller can close the pool and anything beneath it after.
func serve(ctx context.Context, cmd *cli.Command, pool *pgxpool.Pool, ready func(apiAddr, opsAddr string)) error {
	logger, err := newLogger(cmd.String("log-format"))
	if err != nil {
		return err
	}
	counting, err := report.ParseCounting(cmd.String("report-counts"))
	if err != nil {
		return err
	}
	m := metrics.New(pool)
	app := &api.Server{
		Reports: report.NewStore(pool, counting),
		Users:   users.NewStore(pool),
		Tokens:  auth.NewStore(pool),
		Metrics: m,
		Logger:  logger,
		Pool:    pool,
	}
	apiLn, err := net.Listen("tcp", cmd.String("addr"))
	if err != nil {
		return err
	}
	servers := []*http.Server{newHTTPServer(app.Handler(), logger)}
	listeners := []net.Listener{apiLn}
	opsAddr := ""
	if addr := cmd.String("ops-addr"); addr != "" {
		opsLn, err := net.Listen("tcp", addr)
		if err != nil {
			apiLn.Close()
			return err
		}
		opsAddr = opsLn.Addr().String()
		servers = append(servers, newHTTPServer(app.OpsHandler(), logger))
		listeners = append(listeners, opsLn)
	}
	errc := make(chan error, len(servers))
	for i, srv := range servers {
		go func() { errc <- srv.Serve(listeners[i]) }()
	}
	logger.Info("serving", slog.String("addr", apiLn.Addr().String()), slog.String("ops_addr", opsAddr))
	if ready != nil {
		ready(apiLn.Addr().String(), opsAddr)
	}
	select {
	case err = <-errc:
	case <-ctx.Done():
	}
	logger.Info("shutting down")
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, srv := range servers {
		if serr := srv.Shutdown(shutdownCtx); serr != nil && err == nil {
			err = serr
		}
	}
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return err
}

func newHTTPServer(h http.Handler, logger *slog.Logger) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
		// No WriteTimeout: a 10,000-row page to a slow client may take long;
		// a client that stops reading is ended by TCP, and its query by
		// the request context.
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
