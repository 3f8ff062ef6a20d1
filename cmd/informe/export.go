package main

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/urfave/cli/v3"

	"github.com/informe/informe/auth"

	"github.com/informe/informe/internal/audit"
	"github.com/informe/informe/internal/dataset"
	"github.com/informe/informe/internal/failure"
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

// fileFormat is where the flags of a file's format go, which export and
// schedule add and change share.
type fileFormat struct {
	gzip, bom, noHeader, decimalComma *bool
	labels                            *string
}

// flags declares --gzip (gzip is its usage), --bom, --no-header, --labels
// and --decimal-comma on f; api names, in their usage, the API's
// parameters they match.
func (ff fileFormat) flags(f *form, gzip string, api bool) []cli.Flag {
	labels, comma := "", ""
	if api {
		labels, comma = " (the API's header=labels&lang=LANG); default the API's names", ", 12500,5 (the API's decimal=comma)"
	}
	return []cli.Flag{
		typed(f, "gzip", "", false, ff.gzip, gzip),
		typed(f, "bom", "", false, ff.bom, "CSV: start with a UTF-8 byte order mark, for Excel on Windows"),
		typed(f, "no-header", "", false, ff.noHeader, "CSV: leave out the header row"),
		f.text("labels", "", "", ff.labels, "CSV and XLSX: name the header row's columns by their readable labels in `LANG`, es or en"+labels),
		typed(f, "decimal-comma", "", false, ff.decimalComma, "CSV with --delimiter semicolon or tab: write decimals with a comma"+comma),
	}
}

func exportCommand() *cli.Command {
	f := newForm("export")
	var flags fileexport.Flags
	var db, datasetName, counts, tokenName, auditMode string
	params := make([]string, len(exportParams))
	output := f.text("output", "", "", &flags.Output, "`FILE` to write, replaced atomically; - for stdout (required)")
	output.Aliases = []string{"o"}
	cliFlags := slices.Concat([]cli.Flag{
		databaseFlag(f, &db),
		f.text("dataset", "", "general-report", &datasetName, "the `DATASET` to write: "+datasetNames()),
		output,
		f.text("format", "", "", &flags.Format, "output `FORMAT`: csv, tsv, ndjson, json, xlsx, parquet or arrow; default from the output file's extension"),
	}, fileFormat{gzip: &flags.Gzip, bom: &flags.BOM, noHeader: &flags.NoHeader, labels: &flags.Labels, decimalComma: &flags.DecimalComma}.
		flags(f, "gzip the output; implied by an output file ending in .gz", true), []cli.Flag{
		typed(f, "parts", "", 2, &flags.Parts, "database connections an export in the report's own order, filtered or not, in any format, is read through at once, in one snapshot; 1 reads through one"),
		countsFlag(f, &counts),
		f.text("token-name", "INFORME_EXPORT_TOKEN_NAME", "", &tokenName,
			"read as the token called `NAME` does: its scopes and its rules (columns, masks, rows, most rows); default the database's own access"),
		auditFlag(f, &auditMode),
	})
	for i, p := range exportParams {
		cliFlags = append(cliFlags, f.text(p.flag, "", "", &params[i], p.usage))
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
		Flags: cliFlags,
		Action: func(ctx context.Context, cmd *cli.Command) error {
			checkAudit(f, auditMode)
			plan, err := exportPlan(f, &flags, db, datasetName, counts, params, nil)
			if err != nil {
				return err
			}
			pool, err := postgres.Open(ctx, db)
			if err != nil {
				return err
			}
			defer pool.Close()
			var rules *dataset.Rules
			if tokenName != "" {
				// The flags are right; the token's scopes and rules decide
				// what the plan may read, checked again under them.
				t, err := auth.NewStore(pool).Get(ctx, tokenName)
				if err != nil {
					return err
				}
				if t.RevokedAt != nil || (t.ExpiresAt != nil && !time.Now().Before(*t.ExpiresAt)) {
					return fmt.Errorf("export: the token %q is revoked or expired", tokenName)
				}
				if plan, err = exportPlan(f, &flags, db, datasetName, counts, params, &t); err != nil {
					return err
				}
				rules = t.Rules
			}
			mode, _ := audit.ParseMode(auditMode) // checked by exportPlan
			records := audit.New(pool, mode, audit.Instance(), nil).OnReads()
			rec := &audit.Record{
				RequestID: "export", Principal: audit.Command(), Path: "informe export",
				Query: exportQuery(datasetName, params, flags), Format: plan.Format(), Rules: audit.RulesText(rules),
			}
			if tokenName != "" {
				rec.Principal += " as token " + tokenName
			}
			var sum fileexport.Summary
			err = records.Do(ctx, rec, func(ctx context.Context) (int64, int64, error) {
				var err error
				sum, err = fileexport.Run(ctx, postgres.NewStore(pool).Told(records.Reading), plan, os.Stdout, os.Stderr)
				return sum.Rows, sum.Bytes, err
			})
			if err != nil {
				return fmt.Errorf("export: %w", err)
			}
			fmt.Fprintln(os.Stderr, sum)
			return nil
		},
	}
}

// exportQuery is an export's query as its record keeps it: the dataset,
// the filter flags given, and the format's flags.
func exportQuery(datasetName string, params []string, flags fileexport.Flags) string {
	v := url.Values{"dataset": {datasetName}}
	for i, p := range exportParams {
		if params[i] != "" {
			v.Set(p.param, params[i])
		}
	}
	if flags.Format != "" {
		v.Set("format", flags.Format)
	}
	if flags.Labels != "" {
		v.Set("labels", flags.Labels)
	}
	if flags.NoHeader {
		v.Set("header", "false")
	}
	return v.Encode()
}

// exportPlan checks every flag of the export command without opening
// anything, and returns the plan or all that is wrong as a [usageError].
// Each filter flag is checked alone, so that its message names it, then
// the valid ones together with the output and format by
// [fileexport.NewPlan].
//
// With as, the export reads as that token does ([source.As]).
func exportPlan(f *form, flags *fileexport.Flags, db, datasetName, counts string, params []string, as *auth.Token) (fileexport.Plan, error) {
	databaseURL(f, db)
	counting, err := report.ParseCounting(counts)
	f.check("report-counts", err)
	src, err := source.Named(datasetName, counting)
	f.check("dataset", err)
	if src == nil {
		// The other flags are still checked, against the default dataset.
		src = source.Report(counting)
	} else if as != nil {
		restricted, err := source.As(src, as.Scopes, as.Rules)
		if err != nil {
			f.fail("token-name", "%s", message(err))
		} else {
			src = restricted
		}
	}
	if flags.Parts < 1 || flags.Parts > fileexport.MaxParts {
		if f.ok("parts") {
			f.fail("parts", "must be from 1 to %d, got %d", fileexport.MaxParts, flags.Parts)
		}
		flags.Parts = 1
	}
	flags.Source, flags.Query = src, url.Values{}
	for i, p := range exportParams {
		// Set but empty is passed on, so that it fails as in the API.
		if !f.set(p.flag) {
			continue
		}
		one := url.Values{p.param: {params[i]}}
		if _, err := src.Export(one, "delimiter"); err != nil {
			f.fail(p.flag, "%s", message(err))
			continue
		}
		flags.Query.Set(p.param, params[i])
	}
	plan, err := fileexport.NewPlan(*flags)
	if err == nil {
		return plan, f.err()
	}
	errs := []error{err}
	if joined, ok := err.(interface{ Unwrap() []error }); ok {
		errs = joined.Unwrap()
	}
	for _, e := range errs {
		f.extra = append(f.extra, message(e))
	}
	return plan, f.err()
}

// message is err's message for the user: a [failure.Error]'s, without
// its cause.
func message(err error) string {
	var e *failure.Error
	if errors.As(err, &e) {
		return e.Message
	}
	return err.Error()
}

// datasetNames lists the names of the datasets informe serves
// ([dataset.All]), for --dataset's help.
func datasetNames() string {
	names := make([]string, len(dataset.All))
	for i, d := range dataset.All {
		names[i] = d.Name
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}
