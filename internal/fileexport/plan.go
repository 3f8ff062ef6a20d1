// Package fileexport writes a dataset to a file or to stdout:
// the logic of `informe export`. It owns checking the command's options
// into a [Plan] before anything is opened or written, the file that
// appears whole or not at all, and [Run], which reads the rows of one
// snapshot into package delivery's pipeline (encoder -> compressor ->
// spool), the one the HTTP export uses, with a progress bar on a terminal.
package fileexport

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/informe/informe/export"
	"github.com/informe/informe/internal/dataset"
	"github.com/informe/informe/internal/failure"
	"github.com/informe/informe/internal/param"
	"github.com/informe/informe/internal/source"
)

// formats are the export's formats: the API's, and tsv for CSV with tabs.
var formats = []string{"csv", "tsv", "ndjson", "json", "xlsx", "parquet", "arrow"}

// extensions give the format of an output file by its extension (before
// any .gz).
var extensions = map[string]string{
	".csv": "csv", ".tsv": "tsv", ".ndjson": "ndjson", ".jsonl": "ndjson", ".json": "json", ".xlsx": "xlsx",
	".parquet": "parquet", ".arrow": "arrow", ".arrows": "arrow",
}

// Flags are the export's options as the command was given them.
type Flags struct {
	// Source is the dataset to write.
	Source *source.Source
	// Query holds the filters, order, columns and delimiter as the API's
	// query parameters (contract_id, rut, $filter, $orderby, columns,
	// delimiter...), so that they are checked, and fail, as the API's are.
	Query url.Values
	// Output is the file to write, or "-" for stdout.
	Output string
	// Format is csv, tsv, ndjson, json, xlsx, parquet or arrow; "" takes
	// it from Output's
	// extension.
	Format string
	// Gzip compresses the output; an Output ending in .gz implies it.
	Gzip bool
	// BOM and NoHeader are the CSV options of the same names.
	BOM, NoHeader bool
	// DecimalComma writes CSV's decimals with a comma (12500,5), as the
	// API's decimal=comma; it needs a delimiter other than the comma.
	DecimalComma bool
	// Labels, "es" or "en", names the header row's columns (CSV, XLSX) by
	// their readable labels in that language, as the API's header=labels
	// with lang; "" keeps the API's names.
	Labels string
	// Parts is how many database connections an unfiltered export may be
	// read through at once, in one snapshot, in a format that can be
	// written in parts (not XLSX nor Parquet); 0 or 1 reads through one.
	Parts int
}

// MaxParts is the most connections an export is read through at once.
const MaxParts = 16

// Plan is a checked export: everything that can be wrong with the [Flags]
// has been found before anything is opened or written.
type Plan struct {
	source *source.Source
	query  dataset.Query
	format export.Format
	csv    export.CSVOptions
	gzip   bool
	output string // "-" for stdout, else the file's absolute path
	parts  int    // connections to read through, at most
	labels string // the header's language, "" for the API's names
}

// answered returns err, an error of the query's parameters, as the API
// answers it: its message, and its code, target, reason and position for
// callers that look (errors.As), without its cause.
func answered(err error) error {
	var e *failure.Error
	if !errors.As(err, &e) {
		return errors.New(failure.MessageOf(err))
	}
	return &failure.Error{Code: e.Code, Message: e.Message, Target: e.Target, Reason: e.Reason, Position: e.Position}
}

// NewPlan checks f. The filters, order and columns go through the
// source's parsing and the delimiter through the API's parameter rules, so
// their messages are the API's; the format comes from f.Format or else from the output's
// extension (an ending .gz asks for gzip); the output folder must exist and
// be writable. It touches nothing. Its error joins (errors.Join) every
// problem found, each a message for the user; a query's problem is the
// API's [failure.Error].
func NewPlan(f Flags) (Plan, error) {
	var p Plan
	var errs []error
	var err error
	p.source = f.Source
	if p.query, err = f.Source.Export(f.Query, "delimiter"); err != nil {
		errs = append(errs, answered(err))
	}
	delim, delimErr := param.OneOf(f.Query, "delimiter", export.DelimiterNames[0], export.DelimiterNames...)
	if delimErr != nil {
		errs = append(errs, answered(delimErr))
	}
	p.csv = export.CSVOptions{Delimiter: export.Delimiter(delim), BOM: f.BOM, NoHeader: f.NoHeader, DecimalComma: f.DecimalComma}
	switch f.Labels {
	case "", "es", "en":
		p.labels = f.Labels
	default:
		errs = append(errs, fmt.Errorf("--labels must be es or en, got %q", f.Labels))
	}
	if f.Parts < 0 || f.Parts > MaxParts {
		errs = append(errs, fmt.Errorf("--parts must be from 1 to %d", MaxParts))
	}
	p.parts = max(f.Parts, 1)
	if f.Output == "" {
		errs = append(errs, errors.New("--output must name a file, or be - for stdout"))
		return p, errors.Join(errs...)
	}
	if err := p.setFormat(f, delim, delimErr == nil); err != nil {
		errs = append(errs, err)
	} else if f.DecimalComma && (p.format != export.CSV || p.csv.Delimiter == ',') {
		errs = append(errs, errors.New("--decimal-comma needs CSV with --delimiter semicolon or tab (or a .tsv file)"))
	}
	if p.output, err = checkOutput(f.Output); err != nil {
		errs = append(errs, fmt.Errorf("--output: %w", err))
	}
	return p, errors.Join(errs...)
}

// columns are the query's columns as the file's header names them: by
// their readable labels in p.labels, in CSV and XLSX, when asked for.
func (p Plan) columns() []dataset.Column {
	cols := p.query.Columns
	if p.labels == "" || (p.format != export.CSV && p.format != export.XLSX) {
		return cols
	}
	return p.source.Dataset.Labelled(cols, p.labels)
}

// setFormat sets p's format and gzip from f, and the delimiter of tsv
// (delim, if the query's delimiter was valid, is the one asked for).
func (p *Plan) setFormat(f Flags, delim string, delimOK bool) error {
	name := strings.TrimSuffix(f.Output, ".gz")
	p.gzip = f.Gzip || name != f.Output
	format := strings.ToLower(f.Format)
	if format == "" {
		if f.Output == "-" {
			return fmt.Errorf("give --format (%s) to write to stdout", strings.Join(formats, ", "))
		}
		var ok bool
		if format, ok = extensions[strings.ToLower(filepath.Ext(name))]; !ok {
			return fmt.Errorf("cannot tell the format of %s from its extension: give --format (%s), or name a .csv, .tsv, .ndjson, .jsonl, .json, .xlsx, .parquet or .arrow file, optionally ending in .gz",
				f.Output, strings.Join(formats, ", "))
		}
	}
	switch format {
	case "tsv":
		if delimOK && f.Query.Has("delimiter") && p.csv.Delimiter != '\t' {
			return fmt.Errorf("tsv is tab-separated: --delimiter %s contradicts it (use csv)", delim)
		}
		p.format, p.csv.Delimiter = export.CSV, '\t'
	case "csv", "ndjson", "json", "xlsx", "parquet", "arrow":
		var err error
		p.format, err = export.ParseFormat(format)
		return err
	default:
		return fmt.Errorf("--format: unknown format %q: allowed values are %s", f.Format, strings.Join(formats, ", "))
	}
	return nil
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

// Dataset returns the dataset p reads.
func (p Plan) Dataset() *dataset.Dataset { return p.source.Dataset }

// Format returns the name of the format p writes.
func (p Plan) Format() string { return p.format.String() }
