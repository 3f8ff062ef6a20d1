package main

import (
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/informe/informe/export"
	"github.com/informe/informe/internal/failure"
	"github.com/informe/informe/report"
)

// apiMessage returns the message report.ParseQuery gives for the query
// parameters v, which the export command must repeat word for word.
func apiMessage(t *testing.T, v url.Values) string {
	t.Helper()
	_, err := report.ParseQuery(v)
	if err == nil {
		t.Fatalf("ParseQuery(%v) accepted it", v)
	}
	return failure.MessageOf(err)
}

func TestPlanExport(t *testing.T) {
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
		flags   exportFlags
		format  export.Format
		csv     export.CSVOptions
		gzip    bool
		output  string
		cols    int    // number of columns; 0 means all
		wantErr string // a substring of the error; empty for none
	}{
		{name: "OKCSVFromExtension", flags: exportFlags{output: in("r.csv")}, format: export.CSV, output: in("r.csv")},
		{name: "OKUpperCaseExtension", flags: exportFlags{output: in("R.XLSX")}, format: export.XLSX, output: in("R.XLSX")},
		{name: "OKTSV", flags: exportFlags{output: in("r.tsv")}, format: export.CSV, csv: export.CSVOptions{Delimiter: '\t'}, output: in("r.tsv")},
		{name: "OKTSVWithTab", flags: exportFlags{output: in("r.tsv"), query: q("delimiter", "tab")}, format: export.CSV, csv: export.CSVOptions{Delimiter: '\t'}, output: in("r.tsv")},
		{name: "OKJSONL", flags: exportFlags{output: in("r.jsonl")}, format: export.NDJSON, output: in("r.jsonl")},
		{name: "OKNDJSON", flags: exportFlags{output: in("r.ndjson")}, format: export.NDJSON, output: in("r.ndjson")},
		{name: "OKJSON", flags: exportFlags{output: in("r.json")}, format: export.JSON, output: in("r.json")},
		{name: "OKGzipFromExtension", flags: exportFlags{output: in("r.json.gz")}, format: export.JSON, gzip: true, output: in("r.json.gz")},
		{name: "OKGzipFlag", flags: exportFlags{output: in("r.csv"), gzip: true}, format: export.CSV, gzip: true, output: in("r.csv")},
		{name: "OKFormatFlagWins", flags: exportFlags{output: in("r.txt"), format: "NDJSON"}, format: export.NDJSON, output: in("r.txt")},
		{name: "OKStdout", flags: exportFlags{output: "-", format: "csv", gzip: true}, format: export.CSV, gzip: true, output: "-"},
		{name: "OKCSVOptions", flags: exportFlags{output: in("r.csv"), bom: true, noHeader: true, query: q("delimiter", "semicolon")},
			format: export.CSV, csv: export.CSVOptions{Delimiter: ';', BOM: true, NoHeader: true}, output: in("r.csv")},
		{name: "OKFiltersAndColumns", flags: exportFlags{output: in("r.csv"), query: q("contract_id", "7", "rut", "12.345.678-5", "columns", "contract_id,code_contract")},
			format: export.CSV, output: in("r.csv"), cols: 2},
		{name: "OKExistingFile", flags: exportFlags{output: file}, format: export.CSV, output: file},
		{name: "OKSymlinkResolved", flags: exportFlags{output: link}, format: export.CSV, output: file},

		{name: "ErrStdoutWithoutFormat", flags: exportFlags{output: "-"}, wantErr: "give --format (csv, tsv, ndjson, json, xlsx) to write to stdout"},
		{name: "ErrUnknownExtension", flags: exportFlags{output: in("r.txt")}, wantErr: "cannot tell the format of " + in("r.txt")},
		{name: "ErrGzOnly", flags: exportFlags{output: in("r.gz")}, wantErr: "cannot tell the format"},
		{name: "ErrUnknownFormat", flags: exportFlags{output: in("r.csv"), format: "pdf"}, wantErr: `unknown format "pdf": allowed values are csv, tsv, ndjson, json, xlsx`},
		{name: "ErrTSVWithSemicolon", flags: exportFlags{output: in("r.tsv"), query: q("delimiter", "semicolon")}, wantErr: "tsv is tab-separated: --delimiter semicolon contradicts it"},
		{name: "ErrDelimiter", flags: exportFlags{output: in("r.csv"), query: q("delimiter", "pipe")}, wantErr: `delimiter must be one of comma, semicolon, tab, got "pipe"`},
		{name: "ErrEmptyOutput", flags: exportFlags{}, wantErr: "--output must name a file"},
		{name: "ErrMissingFolder", flags: exportFlags{output: in("nope/r.csv")}, wantErr: "the output folder " + in("nope") + " does not exist"},
		{name: "ErrFolderIsFile", flags: exportFlags{output: filepath.Join(file, "r.csv")}, wantErr: file + " is not a folder"},
		{name: "ErrOutputIsFolder", flags: exportFlags{output: dir, format: "csv"}, wantErr: dir + " is not a regular file"},
		{name: "ErrOutputIsDevice", flags: exportFlags{output: "/dev/null", format: "csv"}, wantErr: "/dev/null is not a regular file"},

		// Filters and columns fail exactly as in the API.
		{name: "ErrRUT", flags: exportFlags{output: in("r.csv"), query: q("rut", "12.345.678-0")}, wantErr: apiMessage(t, q("rut", "12.345.678-0"))},
		{name: "ErrContractID", flags: exportFlags{output: in("r.csv"), query: q("contract_id", "abc")}, wantErr: apiMessage(t, q("contract_id", "abc"))},
		{name: "ErrEmptyClientID", flags: exportFlags{output: in("r.csv"), query: q("client_id", "")}, wantErr: apiMessage(t, q("client_id", ""))},
		{name: "ErrUnknownColumn", flags: exportFlags{output: in("r.csv"), query: q("columns", "contract_id,nope")}, wantErr: apiMessage(t, q("columns", "contract_id,nope"))},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if tt.flags.query == nil {
				tt.flags.query = url.Values{}
			}
			p, err := planExport(tt.flags)
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
			want := len(report.Columns)
			if tt.cols > 0 {
				want = tt.cols
			}
			if got := len(p.query.Columns); got != want {
				t.Errorf("%d columns, want %d", got, want)
			}
		})
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 2 {
		t.Errorf("planExport left files behind: %v", entries)
	}
}

func TestAtomicFile(t *testing.T) {
	read := func(path string) string {
		t.Helper()
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	files := func(dir string) []string {
		t.Helper()
		entries, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		return names
	}

	t.Run("CommitNew", func(t *testing.T) {
		dir := t.TempDir()
		path := filepath.Join(dir, "out.csv")
		f, err := createAtomic(path)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Abort()
		if _, err := f.WriteString("new"); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(path); !os.IsNotExist(err) {
			t.Errorf("target exists before Commit: %v", err)
		}
		if name := filepath.Base(f.Name()); !strings.HasPrefix(name, ".out.csv.") || !strings.HasSuffix(name, ".tmp") {
			t.Errorf("temporary file %q: want a hidden .out.csv.*.tmp", name)
		}
		if err := f.Commit(); err != nil {
			t.Fatal(err)
		}
		f.Abort() // after Commit: nothing
		if got, want := read(path), "new"; got != want {
			t.Errorf("content = %q, want %q", got, want)
		}
		if got := files(dir); len(got) != 1 {
			t.Errorf("files = %v, want only out.csv", got)
		}
	})

	t.Run("CommitKeepsMode", func(t *testing.T) {
		dir := t.TempDir()
		path := filepath.Join(dir, "out.csv")
		if err := os.WriteFile(path, []byte("old"), 0o640); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(path, 0o640); err != nil {
			t.Fatal(err)
		}
		f, err := createAtomic(path)
		if err != nil {
			t.Fatal(err)
		}
		f.WriteString("new")
		if err := f.Commit(); err != nil {
			t.Fatal(err)
		}
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := fi.Mode().Perm(), os.FileMode(0o640); got != want {
			t.Errorf("mode = %v, want %v", got, want)
		}
		if got, want := read(path), "new"; got != want {
			t.Errorf("content = %q, want %q", got, want)
		}
	})

	t.Run("AbortLeavesTarget", func(t *testing.T) {
		dir := t.TempDir()
		path := filepath.Join(dir, "out.csv")
		if err := os.WriteFile(path, []byte("old"), 0o644); err != nil {
			t.Fatal(err)
		}
		f, err := createAtomic(path)
		if err != nil {
			t.Fatal(err)
		}
		f.WriteString("half of the new")
		f.Abort()
		f.Abort()
		if got, want := read(path), "old"; got != want {
			t.Errorf("content = %q, want %q", got, want)
		}
		if got := files(dir); len(got) != 1 {
			t.Errorf("files = %v, want only out.csv", got)
		}
		if err := f.Commit(); err == nil {
			t.Error("Commit after Abort succeeded")
		}
	})
}
