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
	"net/url"
	"os"
	"os/signal"
	"runtime/debug"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/urfave/cli/v3"

	"github.com/informe/informe/auth"
	"github.com/informe/informe/internal/catalog"
	"github.com/informe/informe/internal/dataset"
	"github.com/informe/informe/internal/postgres"
	"github.com/informe/informe/internal/seed"
	"github.com/informe/informe/internal/source"
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
	err := command().Run(ctx, os.Args)
	if err == nil {
		return
	}
	var usage *usageError
	if errors.As(err, &usage) {
		// Each wrong flag on its own line, and the conventional status of
		// a command used wrongly.
		for _, line := range strings.Split(usage.Error(), "\n") {
			fmt.Fprintln(os.Stderr, "informe:", line)
		}
		stop()
		os.Exit(2)
	}
	fmt.Fprintln(os.Stderr, "informe:", err)
	stop()
	os.Exit(1)
}

// The demo data's default size and seed.
const (
	defaultContracts       = 1000
	defaultSeed      int64 = 1
)

// contractsFlag and seedFlag are the demo data's size and seed.
func contractsFlag(f *form, dst *int) cli.Flag {
	return typed(f, "contracts", "INFORME_CONTRACTS", defaultContracts, dst, "number of demo contracts to generate")
}

func seedFlag(f *form, dst *int64) cli.Flag {
	return typed(f, "seed", "INFORME_SEED", defaultSeed, dst, "random seed: the same contracts and seed give the same data")
}

// countsFlag is --report-counts, read into dst.
func countsFlag(f *form, dst *string) cli.Flag {
	return f.text("report-counts", "INFORME_REPORT_COUNTS", "maintained", dst,
		"where unfiltered report counts come from: maintained (trigger-kept counters) or view (count the general_report view)")
}

// command is informe's command line. Every command checks all its flags
// and environment values (a [form]) before it opens anything, and reports
// what is wrong as a [usageError]; urfave/cli's own usage errors (a flag
// that does not exist) are one too.
func command() *cli.Command {
	root := &cli.Command{
		Name:  "informe",
		Usage: "reporting and export API for legal-services data in PostgreSQL",
		Commands: []*cli.Command{
			serveCommand(),
			migrateCommand(),
			seedCommand(),
			exportCommand(),
			tokenCommand(),
			auditCommand(),
			subjectsCommand(),
			scheduleCommand(),
			demoCommand(),
			{
				Name: "columns", Usage: "print the fields of the report and of users, in order, with their kinds (Markdown)",
				Action: func(_ context.Context, cmd *cli.Command) error {
					if cmd.NArg() > 0 {
						return &usageError{command: "columns", lines: []string{"takes no arguments"}}
					}
					return catalog.WriteMarkdown(os.Stdout)
				},
			},
		},
		// main reports errors and chooses the exit status.
		ExitErrHandler: func(context.Context, *cli.Command, error) {},
	}
	var walk func(*cli.Command)
	walk = func(c *cli.Command) {
		c.OnUsageError = onUsageError
		for _, sub := range c.Commands {
			walk(sub)
		}
	}
	walk(root)
	return root
}

func migrateCommand() *cli.Command {
	f := newForm("migrate")
	var db string
	return &cli.Command{
		Name: "migrate", Usage: "apply the schema migrations that the database has not seen yet", Flags: []cli.Flag{databaseFlag(f, &db)},
		Action: withPool(f, &db, func(ctx context.Context, cmd *cli.Command, pool *pgxpool.Pool) error {
			n, err := postgres.Migrate(ctx, pool)
			if err == nil {
				fmt.Fprintf(os.Stderr, "applied %d migrations\n", n)
			}
			return err
		}),
	}
}

func seedCommand() *cli.Command {
	f := newForm("seed")
	var db string
	var o seed.Options
	f.validate = func(*cli.Command) { atLeast(f, "contracts", o.Contracts, 1) }
	return &cli.Command{
		Name: "seed", Usage: "load realistic, deterministic demo data into an empty database",
		Flags: []cli.Flag{databaseFlag(f, &db), contractsFlag(f, &o.Contracts), seedFlag(f, &o.Seed)},
		Action: withPool(f, &db, func(ctx context.Context, cmd *cli.Command, pool *pgxpool.Pool) error {
			start := time.Now()
			fmt.Fprintf(os.Stderr, "seeding %d contracts (seed %d)...\n", o.Contracts, o.Seed)
			st, err := seed.Seed(ctx, pool, o)
			if err == nil {
				fmt.Fprintf(os.Stderr, "seeded %d contracts, %d report rows, %d users in %s\n",
					st.Contracts, st.ReportRows, st.Users, time.Since(start).Round(time.Millisecond))
			}
			return err
		}),
	}
}

// withPool runs action with a pool on the database URL *db, closed after
// it, once the form f has been checked: the URL and f.validate's checks.
func withPool(f *form, db *string, action func(context.Context, *cli.Command, *pgxpool.Pool) error) cli.ActionFunc {
	return func(ctx context.Context, cmd *cli.Command) error {
		databaseURL(f, *db)
		if f.validate != nil {
			f.validate(cmd)
		}
		if err := f.err(); err != nil {
			return err
		}
		pool, err := postgres.Open(ctx, *db)
		if err != nil {
			return err
		}
		defer pool.Close()
		return action(ctx, cmd, pool)
	}
}

// oneName is the check of a token command that takes exactly one NAME,
// or --name (into *name) where it has that flag.
func oneName(f *form, cmd *cli.Command, name ...*string) {
	if len(name) > 0 && *name[0] != "" && cmd.NArg() == 0 {
		return
	}
	if cmd.NArg() != 1 || (len(name) > 0 && *name[0] != "") {
		f.extra = append(f.extra, "takes exactly one NAME, the token's (or --name)")
		return
	}
	if len(name) > 0 {
		*name[0] = cmd.Args().First()
	}
}

// warnMaskGaps says on stderr, after a token's rules were set, which
// columns give away a column they mask (source.MaskGaps): the rules stand
// as given, since a column beside a masked one may be meant to be seen.
func warnMaskGaps(command string, r *dataset.Rules) {
	for _, gap := range source.MaskGaps(r) {
		fmt.Fprintf(os.Stderr, "informe: %s: warning: %s; mask it too (--mask) or leave it out (--columns)\n", command, gap)
	}
}

// tokenMaxExports is token create's and change's --max-exports, read into
// dst as written; [maxExports] checks it.
func tokenMaxExports(f *form, dst *string) cli.Flag {
	return f.text("max-exports", "INFORME_TOKEN_MAX_EXPORTS", "default", dst,
		"big responses the token may have produced at once: a number (0: no limit of its own, only serve's --max-exports), or default for serve's --max-exports-per-token")
}

// maxExports checks the --max-exports of f, written s, and returns the
// token's own limit it gives (nil: the server's default).
func maxExports(f *form, s string) *int {
	n, err := auth.ParseMaxExports(s)
	if err != nil {
		f.fail("max-exports", "%s, got %q", strings.TrimPrefix(err.Error(), "max exports "), s)
	}
	return n
}

func tokenCommand() *cli.Command {
	create, list, show, change, revoke := newForm("token create"), newForm("token list"), newForm("token show"),
		newForm("token change"), newForm("token revoke")
	var createDB, listDB, showDB, changeDB, revokeDB, name, showName, changeName, createMax, changeMax string
	var createRules, changeRules ruleFlags
	var createdRules *dataset.Rules
	var scopeNames, changeScopeNames []string
	var scopes, changeScopes []dataset.Scope
	var expiresIn time.Duration
	var createLimit, changeLimit *int
	create.validate = func(*cli.Command) {
		if name == "" {
			create.fail("name", "is required: the token's unique name")
		}
		var err error
		scopes, err = auth.ParseScopes(scopeNames)
		create.check("scope", err)
		notNegative(create, "expires-in", expiresIn)
		createLimit = maxExports(create, createMax)
		if createRules.given(create) {
			createdRules = createRules.apply(create, nil)
		}
	}
	show.validate = func(cmd *cli.Command) { oneName(show, cmd, &showName) }
	change.validate = func(cmd *cli.Command) {
		oneName(change, cmd, &changeName)
		if !change.set("scope") && !change.set("max-exports") && !changeRules.given(change) {
			change.extra = append(change.extra, "nothing to change: give --scope, --max-exports or a rule (--columns, --no-personal, --mask, --rows, --max-rows)")
			return
		}
		if change.set("scope") {
			var err error
			changeScopes, err = auth.ParseScopes(changeScopeNames)
			change.check("scope", err)
		}
		if change.set("max-exports") {
			changeLimit = maxExports(change, changeMax)
		}
	}
	revoke.validate = func(cmd *cli.Command) { oneName(revoke, cmd) }
	return &cli.Command{
		Name: "token", Usage: "create, list, show, change and revoke API tokens",
		Commands: []*cli.Command{
			{
				Name: "create", Usage: "create a token and print it, alone, on stdout (it is not shown again)",
				Flags: append([]cli.Flag{
					databaseFlag(create, &createDB),
					create.text("name", "INFORME_TOKEN_NAME", "", &name, "unique token `name` (required)"),
					create.list("scope", "INFORME_TOKEN_SCOPES", &scopeNames, "scope to grant ("+scopeList(auth.Known)+"); repeat for several; default "+scopeList(auth.Scopes)),
					typed(create, "expires-in", "INFORME_TOKEN_EXPIRES_IN", 0, &expiresIn, "lifetime, e.g. 720h; 0 never expires"),
					tokenMaxExports(create, &createMax),
				}, createRules.flags(create)...),
				Action: withPool(create, &createDB, func(ctx context.Context, cmd *cli.Command, pool *pgxpool.Pool) error {
					var expires time.Time
					if expiresIn > 0 {
						expires = time.Now().Add(expiresIn)
					}
					var secret string
					err := auth.NewStore(pool).Atomic(ctx, func(tokens *auth.Store, tx pgx.Tx) error {
						var err error
						secret, err = tokens.Create(ctx, name, scopes, expires, auth.MaxExports(createLimit), auth.WithRules(createdRules))
						if err != nil {
							return err
						}
						query := create.given("database-url")
						if !create.set("scope") {
							query["scope"] = scopeStrings(auth.Scopes) // the scopes given by default
						}
						return recordToken(ctx, pool, tx, "informe token create", query, createdRules)
					})
					if err != nil {
						return err
					}
					fmt.Println(secret)
					warnMaskGaps("token create", createdRules)
					return nil
				}),
			},
			{
				Name: "list", Usage: "list tokens (never their secrets)", Flags: []cli.Flag{databaseFlag(list, &listDB)},
				Action: withPool(list, &listDB, func(ctx context.Context, cmd *cli.Command, pool *pgxpool.Pool) error {
					list, err := auth.NewStore(pool).List(ctx)
					if err != nil {
						return err
					}
					return auth.WriteTable(os.Stdout, list, time.Now())
				}),
			},
			{
				Name: "show", Usage: "show the token called NAME (never its secret)", ArgsUsage: "NAME",
				Flags: []cli.Flag{databaseFlag(show, &showDB), show.text("name", "", "", &showName, "the token's `name`, if not given as NAME")},
				Action: withPool(show, &showDB, func(ctx context.Context, cmd *cli.Command, pool *pgxpool.Pool) error {
					t, err := auth.NewStore(pool).Get(ctx, showName)
					if err != nil {
						return err
					}
					return auth.WriteToken(os.Stdout, t, time.Now())
				}),
			},
			{
				Name: "change", Usage: "change the settings of the token called NAME", ArgsUsage: "NAME",
				Flags: append([]cli.Flag{databaseFlag(change, &changeDB), change.text("name", "", "", &changeName, "the token's `name`, if not given as NAME"),
					change.list("scope", "", &changeScopeNames, "the token's scopes from now on ("+scopeList(auth.Known)+"), in place of its scopes; repeat for several"),
					tokenMaxExports(change, &changeMax)}, changeRules.flags(change)...),
				Action: withPool(change, &changeDB, func(ctx context.Context, cmd *cli.Command, pool *pgxpool.Pool) error {
					var changed *dataset.Rules
					err := auth.NewStore(pool).Atomic(ctx, func(tokens *auth.Store, tx pgx.Tx) error {
						t, err := tokens.GetForChange(ctx, changeName)
						if err != nil {
							return err
						}
						if change.set("scope") {
							if err := tokens.SetScopes(ctx, changeName, changeScopes); err != nil {
								return err
							}
						}
						rules := t.Rules
						if changeRules.given(change) {
							rules = changeRules.apply(change, t.Rules)
							if err := change.err(); err != nil {
								return err
							}
							if err := tokens.SetRules(ctx, changeName, rules); err != nil {
								return err
							}
						}
						if change.set("max-exports") {
							if err := tokens.SetMaxExports(ctx, changeName, changeLimit); err != nil {
								return err
							}
						}
						query := change.given("database-url", "name")
						query.Set("name", changeName)
						changed = rules
						return recordToken(ctx, pool, tx, "informe token change", query, rules)
					})
					if err == nil {
						warnMaskGaps("token change", changed)
					}
					return err
				}),
			},
			{
				Name: "revoke", Usage: "revoke the token called NAME", ArgsUsage: "NAME", Flags: []cli.Flag{databaseFlag(revoke, &revokeDB)},
				Action: withPool(revoke, &revokeDB, func(ctx context.Context, cmd *cli.Command, pool *pgxpool.Pool) error {
					name := cmd.Args().First()
					return auth.NewStore(pool).Atomic(ctx, func(tokens *auth.Store, tx pgx.Tx) error {
						if err := tokens.Revoke(ctx, name); err != nil {
							return err
						}
						t, err := tokens.Get(ctx, name)
						if err != nil {
							return err
						}
						return recordToken(ctx, pool, tx, "informe token revoke", url.Values{"name": {name}}, t.Rules)
					})
				}),
			},
		},
	}
}

// scopeStrings returns scopes as their names.
func scopeStrings(scopes []dataset.Scope) []string {
	names := make([]string, len(scopes))
	for i, s := range scopes {
		names[i] = string(s)
	}
	return names
}

// scopeList names scopes for a flag's usage: "report:read, users:read".
func scopeList(scopes []dataset.Scope) string {
	names := make([]string, len(scopes))
	for i, s := range scopes {
		names[i] = string(s)
	}
	return strings.Join(names, ", ")
}
