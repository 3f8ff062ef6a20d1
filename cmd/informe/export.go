package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/urfave/cli/v3"
	"golang.org/x/term"

	"github.com/informe/informe/export"
	"github.com/informe/informe/internal/compress"
	"github.com/informe/informe/internal/failure"
	"github.com/informe/informe/internal/param"
	"github.com/informe/informe/internal/postgres"
	"github.com/informe/informe/internal/spool"
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
	{"columns", "columns", "comma-separated `FIELDS` to write, in that order; default all (see informe columns)"},
	{"delimiter", "delimiter", "CSV field delimiter `NAME`: comma (the default), semicolon or tab"},
}

// exportFormats are the export command's formats: the API's, and tsv for
// CSV with tabs.
var exportFormats = []string{"csv", "tsv", "ndjson", "json", "xlsx"}

// exportExtensions give the format of an output file by its extension
// (before any .gz).
var exportExtensions = map[string]string{
	".csv": "csv", ".tsv": "tsv", ".ndjson": "ndjson", ".jsonl": "ndjson", ".json": "json", ".xlsx": "xlsx",
}

func exportCommand() *cli.Command {
	flags := []cli.Flag{
		databaseURLFlag,
		&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Required: true, Usage: "`FILE` to write, replaced atomically; - for stdout"},
		&cli.StringFlag{Name: "format", Usage: "output `FORMAT`: csv, tsv, ndjson, json or xlsx; default from the output file's extension"},
		&cli.BoolFlag{Name: "gzip", Usage: "gzip the output; implied by an output file ending in .gz"},
		&cli.BoolFlag{Name: "bom", Usage: "CSV: start with a UTF-8 byte order mark, for Excel on Windows"},
		&cli.BoolFlag{Name: "no-header", Usage: "CSV: leave out the header row"},
		countsFlag,
	}
	for _, p := range exportParams {
		flags = append(flags, &cli.StringFlag{Name: p.flag, Usage: p.usage})
	}
	return &cli.Command{
		Name:  "export",
		Usage: "write the general report, or the rows matching filters, to a file: the API's export, from one snapshot",
		Description: "Writes the same rows and bytes as GET /api/general-report/export, with the same filters and\n" +
			"options, for cron jobs and operators with database access. A file is written whole or not at\n" +
			"all: into a temporary file next to it, then synced and renamed over it, so that on any failure,\n" +
			"Ctrl-C or SIGTERM an existing file is left as it was. On a terminal a progress bar shows on\n" +
			"stderr; otherwise one summary line is printed there at the end.",
		Flags: flags,
		Action: func(ctx context.Context, cmd *cli.Command) error {
			f := exportFlags{
				query:    url.Values{},
				output:   cmd.String("output"),
				format:   cmd.String("format"),
				gzip:     cmd.Bool("gzip"),
				bom:      cmd.Bool("bom"),
				noHeader: cmd.Bool("no-header"),
			}
			for _, p := range exportParams {
				// Set but empty is passed on, so that it fails as in the API.
				if cmd.IsSet(p.flag) {
					f.query.Set(p.param, cmd.String(p.flag))
				}
			}
			plan, err := planExport(f)
			if err != nil {
				return fmt.Errorf("export: %w", err)
			}
			counting, err := report.ParseCounting(cmd.String("report-counts"))
			if err != nil {
				return err
			}
			pool, err := postgres.Open(ctx, cmd.String("database-url"))
			if err != nil {
				return err
			}
			defer pool.Close()
			return runExport(ctx, report.NewStore(pool, counting), plan, os.Stdout, os.Stderr)
		},
	}
}

// exportFlags are the export command's flags as given.
type exportFlags struct {
	query          url.Values // filters, columns and delimiter, as the API's parameters
	output, format string
	gzip           bool
	bom, noHeader  bool
}

// exportPlan is a checked export: everything that can be wrong with the
// flags has been found before anything is opened or written.
type exportPlan struct {
	query  report.Query
	format export.Format
	csv    export.CSVOptions
	gzip   bool
	output string // "-" for stdout, else the file's absolute path
}

// planExport checks the flags. The filters and columns go through
// report.ParseQuery and the delimiter through the API's parameter rules,
// so their messages are the API's; the format comes from --format or else
// from the output's extension (an ending .gz asks for gzip); the output
// folder must exist. It touches nothing.
func planExport(f exportFlags) (exportPlan, error) {
	var p exportPlan
	var err error
	if p.query, err = report.ParseQuery(f.query); err != nil {
		return p, errors.New(failure.MessageOf(err)) // what the API answers
	}
	delim, err := param.OneOf(f.query, "delimiter", export.DelimiterNames[0], export.DelimiterNames...)
	if err != nil {
		return p, errors.New(failure.MessageOf(err))
	}
	p.csv = export.CSVOptions{Delimiter: export.Delimiter(delim), BOM: f.bom, NoHeader: f.noHeader}

	if f.output == "" {
		return p, errors.New("--output must name a file, or be - for stdout")
	}
	name := strings.TrimSuffix(f.output, ".gz")
	p.gzip = f.gzip || name != f.output
	format := strings.ToLower(f.format)
	if format == "" {
		if f.output == "-" {
			return p, fmt.Errorf("give --format (%s) to write to stdout", strings.Join(exportFormats, ", "))
		}
		var ok bool
		if format, ok = exportExtensions[strings.ToLower(filepath.Ext(name))]; !ok {
			return p, fmt.Errorf("cannot tell the format of %s from its extension: give --format (%s), or name a .csv, .tsv, .ndjson, .jsonl, .json or .xlsx file, optionally ending in .gz",
				f.output, strings.Join(exportFormats, ", "))
		}
	}
	switch format {
	case "tsv":
		if f.query.Has("delimiter") && p.csv.Delimiter != '\t' {
			return p, fmt.Errorf("tsv is tab-separated: --delimiter %s contradicts it (use csv)", delim)
		}
		p.format, p.csv.Delimiter = export.CSV, '\t'
	case "csv", "ndjson", "json", "xlsx":
		if p.format, err = export.ParseFormat(format); err != nil {
			return p, err
		}
	default:
		return p, fmt.Errorf("unknown format %q: allowed values are %s", f.format, strings.Join(exportFormats, ", "))
	}

	if p.output, err = checkOutput(f.output); err != nil {
		return p, err
	}
	return p, nil
}

// checkOutput returns the absolute path of the file to write, with
// symlinks resolved so that the file they point to is the one replaced, or
// "-" for stdout. It fails when the folder is missing or cannot be written
// to, or when the output is not a regular file (a folder, a device).
func checkOutput(output string) (string, error) {
	if output == "-" {
		return output, nil
	}
	path, err := filepath.Abs(output)
	if err != nil {
		return "", err
	}
	if fi, err := os.Stat(path); err == nil {
		if !fi.Mode().IsRegular() {
			return "", fmt.Errorf("%s is not a regular file; give a file name, or - for stdout", output)
		}
		if path, err = filepath.EvalSymlinks(path); err != nil {
			return "", err
		}
	} else if !errors.Is(err, os.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR) {
		return "", err // ENOTDIR: the folder is a file, said below
	}
	dir := filepath.Dir(path)
	fi, err := os.Stat(dir)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return "", fmt.Errorf("the output folder %s does not exist", dir)
	case err != nil:
		return "", err
	case !fi.IsDir():
		return "", fmt.Errorf("%s is not a folder", dir)
	}
	const writable = 2 // W_OK
	if err := syscall.Access(dir, writable); err != nil {
		return "", fmt.Errorf("cannot write in the output folder %s: %w", dir, err)
	}
	return path, nil
}

// runExport writes the rows of plan from one snapshot of store to plan's
// output, stdout being stdout, and reports progress or a summary on stderr.
// exportSpoolMemory is how far the reading and encoding may run ahead of
// the output.
const exportSpoolMemory = 4 << 20

// A file is written atomically: on any error, or when ctx is cancelled
// (Ctrl-C, SIGTERM), the target is left as it was and no temporary file
// remains.
func runExport(ctx context.Context, store *report.Store, plan exportPlan, stdout io.Writer, stderr *os.File) error {
	start := time.Now()
	cur, err := store.Export(ctx, plan.query)
	if err != nil {
		return exportFailed(ctx, plan, err)
	}
	defer cur.Close()
	total := cur.Page().Total

	var dst io.Writer = stdout
	var file *atomicFile
	if plan.output != "-" {
		if file, err = createAtomic(plan.output); err != nil {
			return exportFailed(ctx, plan, err)
		}
		defer file.Abort() // after a Commit, nothing
		dst = file
	}
	counted := &countingWriter{w: dst}
	// The chain of the HTTP path: encoder -> compressor -> spool -> output.
	// The spool lets the file be written while the next rows are read and
	// encoded, as a response is sent.
	sp := spool.New(counted, spool.Limits{Memory: exportSpoolMemory}, nil)
	coding := compress.Identity
	if plan.gzip {
		coding = compress.Gzip
	}
	zw, err := compress.NewWriter(sp, coding)
	if err != nil {
		sp.Abort(err)
		_ = sp.Wait()
		return exportFailed(ctx, plan, err)
	}
	// Rows: the count from the snapshot, which XLSX declares as the
	// sheet's range before the first row.
	enc, err := export.NewEncoder(zw, plan.format, plan.query.Columns,
		export.Options{CSV: plan.csv, Sheet: "general-report", Rows: total})
	if err != nil {
		_ = zw.Close()
		sp.Abort(err)
		_ = sp.Wait()
		return exportFailed(ctx, plan, err)
	}

	var rows export.Rows = cur
	var bar *progressbar.ProgressBar
	if total > 0 && term.IsTerminal(int(stderr.Fd())) {
		bar = newProgressBar(total, stderr)
		rows = &progressRows{Rows: cur, bar: bar}
	}
	n, err := export.Copy(enc, rows)
	if cerr := cur.Close(); err == nil {
		err = cerr
	}
	// After a failure, the encoder's closing bytes (a JSON array's "]", the
	// gzip trailer) would make a truncated stdout look complete: the spool
	// is aborted first, so that they are dropped.
	if err != nil {
		sp.Abort(err)
	}
	if cerr := enc.Close(); err == nil {
		err = cerr
	}
	if cerr := zw.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = sp.Close()
	}
	if err != nil {
		sp.Abort(err)
	}
	if werr := sp.Wait(); err == nil {
		err = werr
	}
	if err == nil {
		// A signal after the last row still means "stop": nothing replaced.
		err = ctx.Err()
	}
	if err == nil && file != nil {
		err = file.Commit()
	}
	if bar != nil {
		if err == nil {
			_ = bar.Finish()
		} else {
			_ = bar.Exit()
		}
	}
	if err != nil {
		return exportFailed(ctx, plan, err)
	}
	secs := time.Since(start).Seconds()
	where := plan.output
	if where == "-" {
		where = "stdout"
	}
	fmt.Fprintf(stderr, "exported %d rows, %d bytes in %.1fs (%.0f rows/s) to %s\n", n, counted.n, secs, float64(n)/max(secs, 1e-9), where)
	return nil
}

// exportFailed says what went wrong and that the output file, if any, was
// left as it was.
func exportFailed(ctx context.Context, plan exportPlan, err error) error {
	if ctx.Err() != nil {
		err = errors.New("interrupted")
	}
	if plan.output == "-" {
		return fmt.Errorf("export: %w", err)
	}
	return fmt.Errorf("export: %w; %s was left unchanged", err, plan.output)
}

// newProgressBar returns a bar of total rows on w: rows of total, rate and
// time left, redrawn at most ten times a second.
func newProgressBar(total int64, w io.Writer) *progressbar.ProgressBar {
	return progressbar.NewOptions64(total,
		progressbar.OptionSetWriter(w),
		progressbar.OptionSetDescription("exporting"),
		progressbar.OptionShowCount(),
		progressbar.OptionShowTotalBytes(true), // the count as "rows/total"
		progressbar.OptionShowIts(),
		progressbar.OptionSetItsString("rows"),
		progressbar.OptionSetPredictTime(true),
		progressbar.OptionThrottle(100*time.Millisecond),
		progressbar.OptionFullWidth(),
		progressbar.OptionSetRenderBlankState(true),
		progressbar.OptionOnCompletion(func() { fmt.Fprintln(w) }),
	)
}

// progressRows passes rows through, moving bar every thousand rows.
type progressRows struct {
	export.Rows
	bar      *progressbar.ProgressBar
	n, shown int64
}

func (r *progressRows) Next() bool {
	if !r.Rows.Next() {
		_ = r.bar.Add64(r.n - r.shown)
		r.shown = r.n
		return false
	}
	if r.n++; r.n-r.shown >= 1000 {
		_ = r.bar.Add64(r.n - r.shown)
		r.shown = r.n
	}
	return true
}

// countingWriter counts the bytes written through it.
type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(b []byte) (int, error) {
	n, err := c.w.Write(b)
	c.n += int64(n)
	return n, err
}
