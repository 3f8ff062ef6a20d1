package fileexport

import (
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/informe/informe/export"
	"github.com/informe/informe/internal/dataset"
	"github.com/informe/informe/internal/failure"
	"github.com/informe/informe/internal/source"
	"github.com/informe/informe/report"
)

// apiMessage returns the message the API's export gives for the query
// parameters v, which the export command must repeat word for word.
func apiMessage(t *testing.T, v url.Values) string {
	t.Helper()
	_, err := reportSource.Export(v, "delimiter")
	if err == nil {
		t.Fatalf("ParseQuery(%v) accepted it", v)
	}
	return failure.MessageOf(err)
}

// reportSource is the general report as the export command reads it.
var reportSource = source.Report(report.Maintained)

func TestNewPlan(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	file := filepath.Join(dir, "existing.csv")
	if err := os.WriteFile(file, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.csv")
	if err := os.Symlink(file, link); err != nil {
		t.Fatal(err)
	}
	in := func(name string) string { return filepath.Join(dir, name) }
	q := func(kv ...string) url.Values {
		v := url.Values{}
		for i := 0; i < len(kv); i += 2 {
			v.Add(kv[i], kv[i+1])
		}
		return v
	}
	for _, tt := range []struct {
		name    string
		flags   Flags
		format  export.Format
		csv     export.CSVOptions
		gzip    bool
		output  string
		cols    int    // number of columns; 0 means all
		wantErr string // a substring of the error; empty for none
	}{
		{name: "OKCSVFromExtension", flags: Flags{Output: in("r.csv")}, format: export.CSV, output: in("r.csv")},
		{name: "OKUpperCaseExtension", flags: Flags{Output: in("R.XLSX")}, format: export.XLSX, output: in("R.XLSX")},
		{name: "OKTSV", flags: Flags{Output: in("r.tsv")}, format: export.CSV, csv: export.CSVOptions{Delimiter: '\t'}, output: in("r.tsv")},
		{name: "OKTSVWithTab", flags: Flags{Output: in("r.tsv"), Query: q("delimiter", "tab")}, format: export.CSV, csv: export.CSVOptions{Delimiter: '\t'}, output: in("r.tsv")},
		{name: "OKJSONL", flags: Flags{Output: in("r.jsonl")}, format: export.NDJSON, output: in("r.jsonl")},
		{name: "OKNDJSON", flags: Flags{Output: in("r.ndjson")}, format: export.NDJSON, output: in("r.ndjson")},
		{name: "OKJSON", flags: Flags{Output: in("r.json")}, format: export.JSON, output: in("r.json")},
		{name: "OKParquet", flags: Flags{Output: in("r.parquet")}, format: export.Parquet, output: in("r.parquet")},
		{name: "OKArrow", flags: Flags{Output: in("r.arrow")}, format: export.Arrow, output: in("r.arrow")},
		{name: "OKArrowFlag", flags: Flags{Output: "-", Format: "arrow"}, format: export.Arrow, output: "-"},
		{name: "OKGzipFromExtension", flags: Flags{Output: in("r.json.gz")}, format: export.JSON, gzip: true, output: in("r.json.gz")},
		{name: "OKGzipFlag", flags: Flags{Output: in("r.csv"), Gzip: true}, format: export.CSV, gzip: true, output: in("r.csv")},
		{name: "OKFormatFlagWins", flags: Flags{Output: in("r.txt"), Format: "NDJSON"}, format: export.NDJSON, output: in("r.txt")},
		{name: "OKStdout", flags: Flags{Output: "-", Format: "csv", Gzip: true}, format: export.CSV, gzip: true, output: "-"},
		{name: "OKCSVOptions", flags: Flags{Output: in("r.csv"), BOM: true, NoHeader: true, Query: q("delimiter", "semicolon")},
			format: export.CSV, csv: export.CSVOptions{Delimiter: ';', BOM: true, NoHeader: true}, output: in("r.csv")},
		{name: "OKFiltersAndColumns", flags: Flags{Output: in("r.csv"), Query: q("contract_id", "7", "rut", "12.345.678-5", "columns", "contract_id,code_contract")},
			format: export.CSV, output: in("r.csv"), cols: 2},
		{name: "OKExistingFile", flags: Flags{Output: file}, format: export.CSV, output: file},
		{name: "OKSymlinkResolved", flags: Flags{Output: link}, format: export.CSV, output: file},

		{name: "ErrStdoutWithoutFormat", flags: Flags{Output: "-"}, wantErr: "give --format (csv, tsv, ndjson, json, xlsx, parquet, arrow) to write to stdout"},
		{name: "ErrUnknownExtension", flags: Flags{Output: in("r.txt")}, wantErr: "cannot tell the format of " + in("r.txt")},
		{name: "ErrGzOnly", flags: Flags{Output: in("r.gz")}, wantErr: "cannot tell the format"},
		{name: "ErrUnknownFormat", flags: Flags{Output: in("r.csv"), Format: "pdf"}, wantErr: `unknown format "pdf": allowed values are csv, tsv, ndjson, json, xlsx, parquet, arrow`},
		{name: "ErrTSVWithSemicolon", flags: Flags{Output: in("r.tsv"), Query: q("delimiter", "semicolon")}, wantErr: "tsv is tab-separated: --delimiter semicolon contradicts it"},
		{name: "ErrDelimiter", flags: Flags{Output: in("r.csv"), Query: q("delimiter", "pipe")}, wantErr: `delimiter must be one of comma, semicolon, tab, got "pipe"`},
		{name: "ErrEmptyOutput", flags: Flags{}, wantErr: "--output must name a file"},
		{name: "ErrMissingFolder", flags: Flags{Output: in("nope/r.csv")}, wantErr: "the output folder " + in("nope") + " does not exist"},
		{name: "ErrFolderIsFile", flags: Flags{Output: filepath.Join(file, "r.csv")}, wantErr: file + " is not a folder"},
		{name: "ErrOutputIsFolder", flags: Flags{Output: dir, Format: "csv"}, wantErr: dir + " is not a regular file"},
		{name: "ErrOutputIsDevice", flags: Flags{Output: "/dev/null", Format: "csv"}, wantErr: "/dev/null is not a regular file"},

		// Filters and columns fail exactly as in the API.
		{name: "ErrRUT", flags: Flags{Output: in("r.csv"), Query: q("rut", "12.345.678-0")}, wantErr: apiMessage(t, q("rut", "12.345.678-0"))},
		{name: "ErrContractID", flags: Flags{Output: in("r.csv"), Query: q("contract_id", "abc")}, wantErr: apiMessage(t, q("contract_id", "abc"))},
		{name: "ErrEmptyClientID", flags: Flags{Output: in("r.csv"), Query: q("client_id", "")}, wantErr: apiMessage(t, q("client_id", ""))},
		{name: "ErrUnknownFilterProperty", flags: Flags{Output: in("r.csv"), Query: q("$filter", "nope eq 1")}, wantErr: apiMessage(t, q("$filter", "nope eq 1"))},
		{name: "ErrOrderBy", flags: Flags{Output: in("r.csv"), Query: q("$orderby", "task_status sideways")}, wantErr: apiMessage(t, q("$orderby", "task_status sideways"))},
		{name: "OKFilterAndOrder", flags: Flags{Output: in("r.csv"), Query: q("$filter", "task_status eq 'Pendiente'", "$orderby", "task_end_date desc")},
			format: export.CSV, output: in("r.csv")},
		{name: "ErrUnknownColumn", flags: Flags{Output: in("r.csv"), Query: q("columns", "contract_id,nope")}, wantErr: apiMessage(t, q("columns", "contract_id,nope"))},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if tt.flags.Query == nil {
				tt.flags.Query = url.Values{}
			}
			tt.flags.Source = reportSource
			p, err := NewPlan(tt.flags)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || strings.Count(err.Error(), tt.wantErr) > 1 {
					t.Fatalf("err = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got, want := p.format, tt.format; got != want {
				t.Errorf("format = %v, want %v", got, want)
			}
			if tt.csv.Delimiter == 0 {
				tt.csv.Delimiter = ','
			}
			if got, want := p.csv, tt.csv; got != want {
				t.Errorf("csv = %+v, want %+v", got, want)
			}
			if got, want := p.gzip, tt.gzip; got != want {
				t.Errorf("gzip = %v, want %v", got, want)
			}
			if got, want := p.output, tt.output; got != want {
				t.Errorf("output = %q, want %q", got, want)
			}
			want := len(dataset.GeneralReport.Columns)
			if tt.cols > 0 {
				want = tt.cols
			}
			if got := len(p.query.Columns); got != want {
				t.Errorf("%d columns, want %d", got, want)
			}
		})
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 2 {
		t.Errorf("NewPlan left files behind: %v", entries)
	}
}
