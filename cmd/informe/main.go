// Command informe serves the reporting API of a legal-services management
// system over PostgreSQL, and manages its schema, demo data and tokens.
//
// This package is wiring only: it reads flags (each with an environment
// variable) into the configuration of the packages that do the work
// (internal/server, internal/demo, internal/fileexport, ...), opens the
// pool, runs them, and closes them in reverse order.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/urfave/cli/v3"

	"github.com/informe/informe/auth"
	"github.com/informe/informe/internal/catalog"
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
	databaseURLFlag = &cli.StringFlag{Name: "database-url", Usage: "PostgreSQL `URL` or DSN", Sources: cli.EnvVars("DATABASE_URL"), Required: true}
	contractsFlag   = &cli.IntFlag{Name: "contracts", Usage: "number of demo contracts to generate", Value: 1000, Sources: cli.EnvVars("INFORME_CONTRACTS")}
	seedFlag        = &cli.Int64Flag{Name: "seed", Usage: "random seed: the same contracts and seed give the same data", Value: 1, Sources: cli.EnvVars("INFORME_SEED")}
)

// countsFlag is --report-counts, read into dst (nil: read it with cmd.String).
func countsFlag(dst *string) cli.Flag {
	return &cli.StringFlag{Name: "report-counts", Value: "maintained", Sources: cli.EnvVars("INFORME_REPORT_COUNTS"), Destination: dst,
		Usage: "where unfiltered report counts come from: maintained (trigger-kept counters) or view (count the general_report view)"}
}

func command() *cli.Command {
	return &cli.Command{
		Name:  "informe",
		Usage: "reporting and export API for legal-services data in PostgreSQL",
		Commands: []*cli.Command{
			serveCommand(),
			{
				Name: "migrate", Usage: "apply the schema migrations that the database has not seen yet", Flags: []cli.Flag{databaseURLFlag},
				Action: withPool(func(ctx context.Context, cmd *cli.Command, pool *pgxpool.Pool) error {
					n, err := postgres.Migrate(ctx, pool)
					if err == nil {
						fmt.Fprintf(os.Stderr, "applied %d migrations\n", n)
					}
					return err
				}),
			},
			{
				Name: "seed", Usage: "load realistic, deterministic demo data into an empty database", Flags: []cli.Flag{databaseURLFlag, contractsFlag, seedFlag},
				Action: withPool(func(ctx context.Context, cmd *cli.Command, pool *pgxpool.Pool) error {
					start := time.Now()
					fmt.Fprintf(os.Stderr, "seeding %d contracts (seed %d)...\n", cmd.Int("contracts"), cmd.Int64("seed"))
					st, err := seed.Seed(ctx, pool, seed.Options{Contracts: cmd.Int("contracts"), Seed: cmd.Int64("seed")})
					if err == nil {
						fmt.Fprintf(os.Stderr, "seeded %d contracts, %d report rows, %d users in %s\n",
							st.Contracts, st.ReportRows, st.Users, time.Since(start).Round(time.Millisecond))
					}
					return err
				}),
			},
			exportCommand(),
			tokenCommand(),
			demoCommand(),
			{
				Name: "columns", Usage: "print the fields of the report and of users, in order, with their kinds (Markdown)",
				Action: func(context.Context, *cli.Command) error { return catalog.WriteMarkdown(os.Stdout) },
			},
		},
	}
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

// tokenMaxExportsFlag is token create's and change's --max-exports.
var tokenMaxExportsFlag = &cli.StringFlag{Name: "max-exports", Value: "default", Sources: cli.EnvVars("INFORME_TOKEN_MAX_EXPORTS"),
	Usage:     "big responses the token may have produced at once: a number (0: no limit of its own, only serve's --max-exports), or default for serve's --max-exports-per-token",
	Validator: func(v string) error { _, err := auth.ParseMaxExports(v); return err }}

func tokenCommand() *cli.Command {
	return &cli.Command{
		Name: "token", Usage: "create, list, show, change and revoke API tokens",
		Commands: []*cli.Command{
			{
				Name: "create", Usage: "create a token and print it, alone, on stdout (it is not shown again)",
				Flags: []cli.Flag{
					databaseURLFlag,
					&cli.StringFlag{Name: "name", Required: true, Usage: "unique token `name`", Sources: cli.EnvVars("INFORME_TOKEN_NAME")},
					&cli.StringSliceFlag{Name: "scope", Usage: "scope to grant (report:read, users:read); repeat for several; default both", Sources: cli.EnvVars("INFORME_TOKEN_SCOPES")},
					&cli.DurationFlag{Name: "expires-in", Usage: "lifetime, e.g. 720h; 0 never expires", Sources: cli.EnvVars("INFORME_TOKEN_EXPIRES_IN")},
					tokenMaxExportsFlag,
				},
				Action: withPool(func(ctx context.Context, cmd *cli.Command, pool *pgxpool.Pool) error {
					scopes, err := auth.ParseScopes(cmd.StringSlice("scope"))
					if err != nil {
						return err
					}
					maxExports, err := auth.ParseMaxExports(cmd.String("max-exports"))
					if err != nil {
						return err
					}
					var expires time.Time
					if d := cmd.Duration("expires-in"); d > 0 {
						expires = time.Now().Add(d)
					}
					secret, err := auth.NewStore(pool).Create(ctx, cmd.String("name"), scopes, expires, auth.MaxExports(maxExports))
					if err != nil {
						return err
					}
					fmt.Println(secret)
					return nil
				}),
			},
			{
				Name: "list", Usage: "list tokens (never their secrets)", Flags: []cli.Flag{databaseURLFlag},
				Action: withPool(func(ctx context.Context, cmd *cli.Command, pool *pgxpool.Pool) error {
					list, err := auth.NewStore(pool).List(ctx)
					if err != nil {
						return err
					}
					return auth.WriteTable(os.Stdout, list, time.Now())
				}),
			},
			{
				Name: "show", Usage: "show the token called NAME (never its secret)", ArgsUsage: "NAME", Flags: []cli.Flag{databaseURLFlag},
				Action: withPool(func(ctx context.Context, cmd *cli.Command, pool *pgxpool.Pool) error {
					if cmd.NArg() != 1 {
						return errors.New("token show takes exactly one NAME")
					}
					t, err := auth.NewStore(pool).Get(ctx, cmd.Args().First())
					if err != nil {
						return err
					}
					return auth.WriteToken(os.Stdout, t, time.Now())
				}),
			},
			{
				Name: "change", Usage: "change the settings of the token called NAME", ArgsUsage: "NAME",
				Flags: []cli.Flag{databaseURLFlag, tokenMaxExportsFlag},
				Action: withPool(func(ctx context.Context, cmd *cli.Command, pool *pgxpool.Pool) error {
					if cmd.NArg() != 1 {
						return errors.New("token change takes exactly one NAME")
					}
					if !cmd.IsSet("max-exports") {
						return errors.New("token change: nothing to change; give --max-exports")
					}
					n, err := auth.ParseMaxExports(cmd.String("max-exports"))
					if err != nil {
						return err
					}
					return auth.NewStore(pool).SetMaxExports(ctx, cmd.Args().First(), n)
				}),
			},
			{
				Name: "revoke", Usage: "revoke the token called NAME", ArgsUsage: "NAME", Flags: []cli.Flag{databaseURLFlag},
				Action: withPool(func(ctx context.Context, cmd *cli.Command, pool *pgxpool.Pool) error {
					if cmd.NArg() != 1 {
						return errors.New("token revoke takes exactly one NAME")
					}
					return auth.NewStore(pool).Revoke(ctx, cmd.Args().First())
				}),
			},
		},
	}
}
