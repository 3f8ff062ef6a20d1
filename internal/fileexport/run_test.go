package fileexport

import (
	"archive/zip"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/informe/informe/internal/dataset"
	"github.com/informe/informe/internal/pgserver/pgtest"
	"github.com/informe/informe/internal/postgres"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// plan returns the checked plan of f, failing the test on error.
func plan(t *testing.T, f Flags) Plan {
	t.Helper()
	if f.Query == nil {
		f.Query = url.Values{}
	}
	if f.Source == nil {
		f.Source = reportSource
	}
	p, err := NewPlan(f)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// Counters of the records in a complete body, failing on a truncated one.
func csvRecords(b []byte) (int, error) {
	recs, err := csv.NewReader(bytes.NewReader(b)).ReadAll()
	return len(recs) - 1, err // less the header
}

func jsonRecords(b []byte) (int, error) {
	var recs []map[string]any
	err := json.Unmarshal(b, &recs)
	return len(recs), err
}

func ndjsonRecords(b []byte) (int, error) {
	n := 0
	for d := json.NewDecoder(bytes.NewReader(b)); d.More(); n++ {
		var rec map[string]any
		if err := d.Decode(&rec); err != nil {
			return n, err
		}
	}
	return n, nil
}

// gunzipped counts the records of a gzipped body with count.
func gunzipped(count func([]byte) (int, error)) func([]byte) (int, error) {
	return func(b []byte) (int, error) {
		zr, err := gzip.NewReader(bytes.NewReader(b))
		if err != nil {
			return 0, err
		}
		if b, err = io.ReadAll(zr); err != nil {
			return 0, err
		}
		return count(b)
	}
}

// onFirstWrite passes writes to w, calling hook before the first.
type onFirstWrite struct {
	w    io.Writer
	once sync.Once
	hook func()
}

func (o *onFirstWrite) Write(p []byte) (int, error) {
	o.once.Do(o.hook)
	return o.w.Write(p)
}

// folder returns the names of the files in dir.
func folder(t *testing.T, dir string) []string {
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

func TestRun(t *testing.T) {
	t.Parallel()
	pool := pgtest.SmallSeeded(t) // every row is compared: more would prove nothing more
	store := postgres.NewStore(pool)
	rows := pgtest.Int(t, pool, "SELECT count(*) FROM general_report")
	dir := t.TempDir()

	for _, tt := range []struct {
		name   string
		flags  Flags
		output string                    // what the summary names
		count  func([]byte) (int, error) // the records of the output
	}{
		{name: "CSVFile", flags: Flags{Output: filepath.Join(dir, "r.csv")}, output: filepath.Join(dir, "r.csv"), count: csvRecords},
		{name: "JSONGzipFile", flags: Flags{Output: filepath.Join(dir, "r.json.gz")}, output: filepath.Join(dir, "r.json.gz"), count: gunzipped(jsonRecords)},
		{name: "StdoutNDJSON", flags: Flags{Output: "-", Format: "ndjson"}, output: "stdout", count: ndjsonRecords},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p := plan(t, tt.flags)
			var stdout, stderr bytes.Buffer
			sum, err := Run(context.Background(), store, p, &stdout, &stderr)
			if err != nil {
				t.Fatal(err)
			}
			got := stdout.Bytes()
			if p.output != "-" {
				if stdout.Len() != 0 {
					t.Errorf("an export to a file wrote %d bytes to stdout", stdout.Len())
				}
				if got, err = os.ReadFile(p.output); err != nil {
					t.Fatal(err)
				}
			}
			if stderr.Len() != 0 {
				t.Errorf("stderr = %q, want nothing: the summary is the caller's to print", stderr.String())
			}
			if got, want := sum.Rows, rows; got != want {
				t.Errorf("summary rows = %d, want %d", got, want)
			}
			if got, want := sum.Bytes, int64(len(got)); got != want {
				t.Errorf("summary bytes = %d, want the output's %d", got, want)
			}
			if got, want := sum.Output, tt.output; got != want {
				t.Errorf("summary output = %q, want %q", got, want)
			}
			// Byte for byte what the API sends: cmd/informe's TestExport.
			if n, err := tt.count(got); err != nil || int64(n) != rows {
				t.Errorf("the output holds %d records (%v), want %d", n, err, rows)
			}
		})
	}
	if got := folder(t, dir); len(got) != 2 {
		t.Errorf("the folder holds %v, want the two outputs and nothing else", got)
	}
}

// TestRunFailures ends exports before their last row and checks that the
// error says why, that a file's target keeps its old content with no
// temporary file left, and that stdout gets no closing bytes.
func TestRunFailures(t *testing.T) {
	t.Parallel()
	// About 100,000 report rows: seconds to export, so that an export is
	// still reading rows when the test ends it.
	pool := pgtest.SeededWith(t, 10000)
	store := postgres.NewStore(pool)
	const old = "the previous export\n"

	// setup returns a folder holding only target, with the old content.
	setup := func(t *testing.T) (dir, target string) {
		dir = t.TempDir()
		target = filepath.Join(dir, "report.json")
		if err := os.WriteFile(target, []byte(old), 0o644); err != nil {
			t.Fatal(err)
		}
		return dir, target
	}
	// untouched checks that dir holds only target, with the old content.
	untouched := func(t *testing.T, dir, target string) {
		t.Helper()
		if got := folder(t, dir); len(got) != 1 {
			t.Errorf("the folder holds %v, want only %s", got, filepath.Base(target))
		}
		if b, err := os.ReadFile(target); err != nil || string(b) != old {
			t.Errorf("target = %.100q (%v), want the old content", b, err)
		}
	}

	t.Run("DatabaseUnreachable", func(t *testing.T) {
		dir, target := setup(t)
		nowhere, err := pgxpool.New(context.Background(), "postgres://nobody@127.0.0.1:1/none?connect_timeout=1")
		if err != nil {
			t.Fatal(err)
		}
		defer nowhere.Close()
		_, err = Run(context.Background(), postgres.NewStore(nowhere), plan(t, Flags{Output: target}), io.Discard, io.Discard)
		if err == nil || !strings.HasPrefix(err.Error(), "the database cannot be reached: ") || !strings.HasSuffix(err.Error(), "; "+target+" was left unchanged") {
			t.Errorf("err = %v, want that the database cannot be reached and %s was left unchanged", err, target)
		}
		untouched(t, dir, target)
	})

	t.Run("BackendTerminatedStdout", func(t *testing.T) {
		var out bytes.Buffer
		stdout := &onFirstWrite{w: &out, hook: func() {
			n := pgtest.Int(t, pool, `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
				WHERE datname = current_database() AND pid <> pg_backend_pid() AND state = 'active'`)
			if n != 1 {
				t.Errorf("terminated %d backends, want the export's one", n)
			}
		}}
		_, err := Run(context.Background(), store, plan(t, Flags{Output: "-", Format: "json"}), stdout, io.Discard)
		// PostgreSQL says why the backend ends (57P01) when it can; one
		// terminated while blocked sending rows just closes the connection
		// (pgx: unexpected EOF). Both are the database gone.
		if err == nil || !strings.HasPrefix(err.Error(), "the database cannot be reached: ") {
			t.Fatalf("err = %v, want that the database cannot be reached", err)
		}
		if end := bytes.TrimSpace(out.Bytes()); len(end) == 0 || end[len(end)-1] == ']' {
			t.Errorf("stdout ends %q: want the rows sent, without the closing bracket", end[max(0, len(end)-20):])
		}
	})

	t.Run("InterruptedFile", func(t *testing.T) {
		dir, target := setup(t)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		// Cancel, as a signal does, once rows are in the temporary file.
		go func() {
			for ctx.Err() == nil {
				tmps, _ := filepath.Glob(filepath.Join(dir, ".report.json.*.tmp"))
				if len(tmps) == 1 {
					if fi, err := os.Stat(tmps[0]); err == nil && fi.Size() > 0 {
						cancel()
					}
				}
				time.Sleep(2 * time.Millisecond)
			}
		}()
		_, err := Run(ctx, store, plan(t, Flags{Output: target}), io.Discard, io.Discard)
		if err == nil || err.Error() != "interrupted; "+target+" was left unchanged" {
			t.Errorf("err = %v, want interrupted and %s left unchanged", err, target)
		}
		untouched(t, dir, target)
	})
}

// TestRunParts checks that an export read through several connections at
// once writes the same bytes as one read through one, in every text
// format, the same workbook in XLSX (every entry's XML, read back through
// archive/zip, which checks their CRC-32s), and that the later parts
// really ran.
func TestRunParts(t *testing.T) {
	t.Parallel()
	pool := pgtest.SmallSeeded(t) // every row is compared: more would prove nothing more
	store := postgres.NewStore(pool)
	defer func(n int64) { partRows = n }(partRows)
	partRows = 1
	dir := t.TempDir()
	for _, name := range []string{"r.csv", "r.tsv", "r.ndjson", "r.json", "r.csv.gz", "r.xlsx"} {
		t.Run(name, func(t *testing.T) {
			var outs [2][]byte
			for i, parts := range []int{1, 3} {
				out := filepath.Join(dir, fmt.Sprintf("%d-%s", parts, name))
				p := plan(t, Flags{Output: out, Parts: parts})
				if _, err := Run(context.Background(), store, p, io.Discard, io.Discard); err != nil {
					t.Fatalf("%d parts: %v", parts, err)
				}
				b, err := os.ReadFile(out)
				if err != nil {
					t.Fatal(err)
				}
				if strings.HasSuffix(name, ".gz") {
					// The compressor's flush points differ; the content may not.
					zr, err := gzip.NewReader(bytes.NewReader(b))
					if err != nil {
						t.Fatal(err)
					}
					if b, err = io.ReadAll(zr); err != nil {
						t.Fatal(err)
					}
				}
				if strings.HasSuffix(name, ".xlsx") {
					// The deflate differs; the entries may not.
					b = zipContent(t, b)
				}
				outs[i] = b
			}
			if !bytes.Equal(outs[0], outs[1]) {
				t.Fatalf("3 parts wrote %d bytes, 1 part %d: they differ", len(outs[1]), len(outs[0]))
			}
			if len(outs[0]) == 0 {
				t.Fatal("empty export")
			}
		})
	}
	// What Run asked for: three cursors, not one.
	curs, err := store.OpenParts(context.Background(), reportSource.Dataset, dataset.Whole(), postgres.Parts{Max: 3, MinRows: partRows})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range curs {
		c.Close()
	}
	if len(curs) != 3 {
		t.Fatalf("the export was read through %d connections, want 3: the comparison proves nothing", len(curs))
	}
}

// zipContent returns the names and contents of the zip b's entries, in
// order, read through archive/zip, which checks their CRC-32s and sizes.
func zipContent(t *testing.T, b []byte) []byte {
	t.Helper()
	zr, err := zip.NewReader(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	for _, f := range zr.File {
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&out, "%s\n", f.Name)
		_, err = io.Copy(&out, rc)
		rc.Close()
		if err != nil {
			t.Fatalf("%s: %v", f.Name, err)
		}
	}
	return out.Bytes()
}
