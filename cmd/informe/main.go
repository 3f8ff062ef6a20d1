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
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime/debug"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/urfave/cli/v3"

	"github.com/informe/informe/auth"
	"github.com/informe/informe/internal/demo"
	"github.com/informe/informe/internal/postgres"
	"github.com/informe/informe/internal/seed"
)

func main() {
	// The encoders allocate next to nothing per row; a lower GC target
	// keeps the heap's headroom over the spools' and compressors' buffers
	// small (peak RSS growth ~60 -> ~42 MiB measured with the earlier XLSX
	// writer, no measurable cost). GOGC, when set, wins.
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
			serveCommand(),
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
			exportCommand(),
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
					return auth.WriteTable(os.Stdout, list, time.Now())
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
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "addr", Value: "127.0.0.1:8080", Usage: "API listen `address`", Sources: cli.EnvVars("INFORME_ADDR")},
			&cli.StringFlag{Name: "ops-addr", Value: "127.0.0.1:9090", Usage: "listen `address` for /metrics, /healthz and /readyz; empty disables", Sources: cli.EnvVars("INFORME_OPS_ADDR")},
			&cli.StringFlag{Name: "data-dir", Value: defaultDataDir(), Usage: "`folder` for the private PostgreSQL", Sources: cli.EnvVars("INFORME_DATA_DIR")},
			&cli.StringFlag{Name: "pg-user", Value: "postgres", Usage: "unprivileged `user` to run PostgreSQL as when informe runs as root", Sources: cli.EnvVars("INFORME_PG_USER")},
			contractsFlag, seedFlag,
			&cli.StringFlag{Name: "log-format", Value: "text", Usage: "log format: json or text", Sources: cli.EnvVars("INFORME_LOG_FORMAT")},
		}, servingFlags()...),
		Action: func(ctx context.Context, cmd *cli.Command) error {
			return demo.Run(ctx, demo.Options{
				DataDir:   cmd.String("data-dir"),
				PGUser:    cmd.String("pg-user"),
				Addr:      cmd.String("addr"),
				OpsAddr:   cmd.String("ops-addr"),
				Contracts: cmd.Int("contracts"),
				Seed:      cmd.Int64("seed"),
				SeedGiven: cmd.IsSet("contracts") || cmd.IsSet("seed"),
				OpenPool: func(ctx context.Context, url string) (*pgxpool.Pool, error) {
					return postgres.OpenPool(ctx, url, poolOptions(cmd))
				},
				Informe: selfCommand(),
			}, func(ctx context.Context, pool *pgxpool.Pool, ready func(apiAddr, opsAddr string)) error {
				return serve(ctx, cmd, pool, ready)
			})
		},
	}
}

// selfCommand returns how a shell runs this binary, for the commands the
// demo prints: "informe" when PATH finds this very binary, "go run
// ./cmd/informe" under go run (whose binary is deleted when it exits), and
// otherwise the binary's absolute path, which works from any folder.
func selfCommand() string {
	exe, err := os.Executable()
	if err != nil {
		return "informe"
	}
	if p, err := exec.LookPath("informe"); err == nil && sameFile(p, exe) {
		return "informe"
	}
	if strings.Contains(exe, string(filepath.Separator)+"go-build") {
		return "go run ./cmd/informe"
	}
	if strings.ContainsAny(exe, " '\"$\\`!*?[]#~;&|<>(){}") {
		return "'" + strings.ReplaceAll(exe, "'", `'\''`) + "'"
	}
	return exe
}

func sameFile(a, b string) bool {
	fa, err := os.Stat(a)
	if err != nil {
		return false
	}
	fb, err := os.Stat(b)
	return err == nil && os.SameFile(fa, fb)
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
