package main

import (
	"context"
	"fmt"
	"net/url"
	"os"

	"github.com/urfave/cli/v3"

	"github.com/informe/informe/internal/dataset"
	"github.com/informe/informe/internal/fileexport"
	"github.com/informe/informe/internal/postgres"
	"github.com/informe/informe/internal/source"
	"github.com/informe/informe/report"
)

// exportParams maps the export command's flags to the API's query
// parameters: the command builds the query string the HTTP export would
// get, so that validation and its messages are the API's.
var exportParams = []struct{ flag, param, usage string }{
	{"contract-id", "contract_id", "only the contract with this `ID`"},
	{"code-contract", "code_contract", "only the contract with this `CODE`"},
	{"client-id", "client_id", "only the contracts of the client with this `ID`"},
	{"rut", "rut", "only the contracts of the client with this `RUT` (12.345.678-5, 12345678-5 or 123456785)"},
	{"filter", "$filter", "only the rows matching this OData `EXPRESSION`, as the API's $filter: \"task_status eq 'Pendiente' and task_end_date ge 2026-01-01\""},
	{"orderby", "$orderby", "order the rows by these `FIELDS`, as the API's $orderby: \"task_end_date desc\"; default the dataset's own order"},
	{"columns", "columns", "comma-separated `FIELDS` to write, in that order; default all (see informe columns)"},
	{"delimiter", "delimiter", "CSV field delimiter `NAME`: comma (the default), semicolon or tab"},
}

func exportCommand() *cli.Command {
	var f fileexport.Flags
	flags := []cli.Flag{
		databaseURLFlag,
		&cli.StringFlag{Name: "dataset", Value: "general-report", Usage: "the `DATASET` to write: general-report, users, or an entity at its own grain: contracts, processes, tasks, clients or services"},
		&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Required: true, Usage: "`FILE` to write, replaced atomically; - for stdout", Destination: &f.Output},
		&cli.StringFlag{Name: "format", Usage: "output `FORMAT`: csv, tsv, ndjson, json, xlsx, parquet or arrow; default from the output file's extension", Destination: &f.Format},
		&cli.BoolFlag{Name: "gzip", Usage: "gzip the output; implied by an output file ending in .gz", Destination: &f.Gzip},
		&cli.BoolFlag{Name: "bom", Usage: "CSV: start with a UTF-8 byte order mark, for Excel on Windows", Destination: &f.BOM},
		&cli.BoolFlag{Name: "no-header", Usage: "CSV: leave out the header row", Destination: &f.NoHeader},
		&cli.IntFlag{Name: "parts", Value: 2, Usage: "database connections an unfiltered export, in any format, is read through at once, in one snapshot; 1 reads through one", Destination: &f.Parts},
		countsFlag(nil),
	}
	for _, p := range exportParams {
		flags = append(flags, &cli.StringFlag{Name: p.flag, Usage: p.usage})
	}
	return &cli.Command{
		Name:  "export",
		Usage: "write a dataset, or the rows matching filters, to a file: the API's export, from one snapshot",
		Description: "Writes the same rows and bytes as GET /api/general-report/export (or /users, /api/contracts/export, ...), with the same filters,\n" +
			"order and options (--filter and --orderby are the API's $filter and $orderby), for cron jobs and\n" +
			"operators with database access. A file is written whole or not at\n" +
			"all: into a temporary file next to it, then synced and renamed over it, so that on any failure,\n" +
			"Ctrl-C or SIGTERM an existing file is left as it was. On a terminal a progress bar shows on\n" +
			"stderr; otherwise one summary line is printed there at the end.",
		Flags: flags,
		Action: func(ctx context.Context, cmd *cli.Command) error {
			counting, err := report.ParseCounting(cmd.String("report-counts"))
			if err != nil {
				return err
			}
			if f.Source, err = source.Named(cmd.String("dataset"), counting); err != nil {
				return fmt.Errorf("export: --dataset: %w", err)
			}
			f.Query = url.Values{}
			for _, p := range exportParams {
				// Set but empty is passed on, so that it fails as in the API.
				if cmd.IsSet(p.flag) {
					f.Query.Set(p.param, cmd.String(p.flag))
				}
			}
			plan, err := fileexport.NewPlan(f)
			if err != nil {
				return fmt.Errorf("export: %w", err)
			}
			pool, err := postgres.Open(ctx, cmd.String("database-url"))
			if err != nil {
				return err
			}
			defer pool.Close()
			sum, err := fileexport.Run(ctx, dataset.NewStore(pool), plan, os.Stdout, os.Stderr)
			if err != nil {
				return fmt.Errorf("export: %w", err)
			}
			fmt.Fprintln(os.Stderr, sum)
			return nil
		},
	}
}
