package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/xuri/excelize/v2"

	"github.com/informe/informe/export"
	"github.com/informe/informe/internal/pgserver/pgtest"
	"github.com/informe/informe/internal/postgres"
	"github.com/informe/informe/internal/source"
	"github.com/informe/informe/report"

	"github.com/informe/informe/internal/testenv"
)

// runExport runs `informe export` with args against dbURL and returns its
// stdout, stderr and exit error.
func runExportCmd(t *testing.T, bin, dbURL string, args ...string) (stdout, stderr []byte, err error) {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"export"}, args...)...)
	cmd.Env = append(os.Environ(), "DATABASE_URL="+dbURL)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err = cmd.Run()
	return out.Bytes(), errb.Bytes(), err
}

// apiExport encodes what GET /api/general-report/export answers for the
// query parameters v: the same store, ParseQuery and encoder options as
// the HTTP handler.
func apiExport(t *testing.T, pool *pgxpool.Pool, v url.Values, f export.Format, csv export.CSVOptions) []byte {
	t.Helper()
	src := source.Report(report.Maintained)
	q, err := src.Export(v, "delimiter")
	if err != nil {
		t.Fatal(err)
	}
	cur, err := postgres.NewStore(pool).Open(context.Background(), src.Dataset, q)
	if err != nil {
		t.Fatal(err)
	}
	defer cur.Close()
	var b bytes.Buffer
	enc, err := export.NewEncoder(&b, f, q.Columns, export.Options{CSV: csv, Sheet: "general-report", Rows: cur.Total()})
	if err != nil {
		t.Fatal(err)
	}
	for cur.Next() {
		if err := enc.Encode(cur.Values()); err != nil {
			t.Fatal(err)
		}
	}
	if err := cur.Err(); err != nil {
		t.Fatal(err)
	}
	if err := enc.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// xlsxRows returns the cells of the first sheet of the workbook b.
func xlsxRows(t *testing.T, b []byte) [][]string {
	t.Helper()
	f, err := excelize.OpenReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := f.GetRows(f.GetSheetName(0))
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

var summaryLine = regexp.MustCompile(`^exported (\d+) rows, (\d+) bytes in [0-9.]+s \(\d+ rows/s\) to (.+)\n$`)

// TestExport writes the report with `informe export` in every format, with
// filters, columns, CSV options and gzip, and checks that each output is
// byte for byte what the HTTP export gives for the same parameters.
func TestExport(t *testing.T) {
	t.Parallel()
	bin := build(t)
	// Byte for byte the API's export: a few thousand rows show a difference
	// as well as twenty thousand.
	pool := pgtest.SmallSeeded(t)
	dbURL := pool.Config().ConnString()
	rut := pgtest.String(t, pool, "SELECT rut FROM clients WHERE id = 3")
	clientID := "3"
	dir := t.TempDir()

	for _, tt := range []struct {
		name   string
		args   []string
		output string // file name in dir; "" for stdout
		params url.Values
		format export.Format
		csv    export.CSVOptions
		gzip   bool
	}{
		{name: "CSV", output: "all.csv", format: export.CSV},
		{name: "TSV", output: "all.tsv", format: export.CSV, csv: export.CSVOptions{Delimiter: '\t'}},
		{name: "CSVOptions", output: "excel.csv", args: []string{"--delimiter", "semicolon", "--bom", "--no-header"},
			params: url.Values{"delimiter": {"semicolon"}}, format: export.CSV, csv: export.CSVOptions{Delimiter: ';', BOM: true, NoHeader: true}},
		{name: "NDJSONColumns", output: "cols.jsonl", args: []string{"--columns", "rut_client_contract,contract_id,process_id,task_code"},
			params: url.Values{"columns": {"rut_client_contract,contract_id,process_id,task_code"}}, format: export.NDJSON},
		{name: "JSONByRUT", output: "rut.json", args: []string{"--rut", rut}, params: url.Values{"rut": {rut}}, format: export.JSON},
		{name: "JSONByClient", output: "client.json", args: []string{"--client-id", clientID}, params: url.Values{"client_id": {clientID}}, format: export.JSON},
		{name: "CSVByContract", output: "contract.csv", args: []string{"--contract-id", "17"}, params: url.Values{"contract_id": {"17"}}, format: export.CSV},
		{name: "CSVByCode", output: "code.csv", args: []string{"--code-contract", pgtest.String(t, pool, "SELECT code FROM contracts WHERE id = 5")},
			params: url.Values{"code_contract": {pgtest.String(t, pool, "SELECT code FROM contracts WHERE id = 5")}}, format: export.CSV},
		{name: "NoRows", output: "none.csv", args: []string{"--contract-id", "999999"}, params: url.Values{"contract_id": {"999999"}}, format: export.CSV},
		{name: "XLSX", output: "client.xlsx", args: []string{"--client-id", clientID}, params: url.Values{"client_id": {clientID}}, format: export.XLSX},
		{name: "Parquet", output: "client.parquet", args: []string{"--client-id", clientID}, params: url.Values{"client_id": {clientID}}, format: export.Parquet},
		{name: "ArrowByRUT", output: "rut.arrow", args: []string{"--rut", rut}, params: url.Values{"rut": {rut}}, format: export.Arrow},
		{name: "GzipFromExtension", output: "all.ndjson.gz", format: export.NDJSON, gzip: true},
		{name: "GzipFlag", output: "rut.tsv", args: []string{"--gzip", "--rut", rut}, params: url.Values{"rut": {rut}},
			format: export.CSV, csv: export.CSVOptions{Delimiter: '\t'}, gzip: true},
		{name: "Stdout", args: []string{"--format", "json", "--columns", "contract_id,code_contract"},
			params: url.Values{"columns": {"contract_id,code_contract"}}, format: export.JSON},
		{name: "StdoutGzip", args: []string{"--format", "csv", "--gzip"}, format: export.CSV, gzip: true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			out := "-"
			if tt.output != "" {
				out = filepath.Join(dir, tt.output)
			}
			stdout, stderr, err := runExportCmd(t, bin, dbURL, append([]string{"--output", out}, tt.args...)...)
			if err != nil {
				t.Fatalf("export: %v\n%s", err, stderr)
			}
			got := stdout
			if tt.output != "" {
				if len(stdout) != 0 {
					t.Errorf("export to a file wrote %d bytes to stdout", len(stdout))
				}
				if got, err = os.ReadFile(out); err != nil {
					t.Fatal(err)
				}
			}
			m := summaryLine.FindSubmatch(stderr)
			if m == nil {
				t.Fatalf("stderr = %q, want one summary line", stderr)
			}
			if want := map[bool]string{true: out, false: "stdout"}[tt.output != ""]; string(m[3]) != want {
				t.Errorf("summary names %q, want %q", m[3], want)
			}
			if string(m[2]) != strconv.Itoa(len(got)) {
				t.Errorf("summary says %s bytes, the output has %d", m[2], len(got))
			}
			if tt.gzip {
				zr, err := gzip.NewReader(bytes.NewReader(got))
				if err != nil {
					t.Fatalf("not gzip: %v", err)
				}
				if got, err = io.ReadAll(zr); err != nil {
					t.Fatal(err)
				}
			}
			if tt.params == nil {
				tt.params = url.Values{}
			}
			want := apiExport(t, pool, tt.params, tt.format, tt.csv)
			if tt.format == export.XLSX {
				g, w := xlsxRows(t, got), xlsxRows(t, want)
				if len(w) < 2 || !slices.EqualFunc(g, w, slices.Equal) {
					t.Errorf("XLSX rows differ from the API's: %d rows, want %d", len(g), len(w))
				}
				return
			}
			if tt.format == export.Arrow {
				// Record batches end where the output was flushed, which
				// depends on timing: the rows are the same.
				g, w := arrowRows(t, got), arrowRows(t, want)
				if len(w) < 1 || !slices.EqualFunc(g, w, slices.Equal) {
					t.Errorf("Arrow rows differ from the API's: %d rows, want %d", len(g), len(w))
				}
				return
			}
			if !bytes.Equal(got, want) {
				t.Errorf("output differs from the API's export: %d bytes, want %d\ngot:  %.300q\nwant: %.300q", len(got), len(want), got, want)
			}
			rows := pgtest.Int(t, pool, "SELECT count(*) FROM general_report")
			if tt.params.Get("contract_id") == "999999" {
				rows = 0
			}
			if len(tt.params) == 0 || tt.params.Has("columns") || tt.params.Has("delimiter") {
				if string(m[1]) != strconv.FormatInt(rows, 10) {
					t.Errorf("summary says %s rows, want %d", m[1], rows)
				}
			}
		})
	}
	// On a terminal, a progress bar: util-linux's script gives the export
	// one.
	t.Run("ProgressOnTerminal", func(t *testing.T) {
		script, err := exec.LookPath("script")
		if err != nil {
			testenv.Missing(t, "no script(1) (util-linux) to run the export on a terminal")
		}
		out := filepath.Join(t.TempDir(), "tty.csv")
		cmd := exec.Command(script, "-q", "-e", "-c", bin+" export --output "+out, "/dev/null")
		cmd.Env = append(os.Environ(), "DATABASE_URL="+dbURL)
		tty, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("export on a terminal: %v\n%s", err, tty)
		}
		rows := pgtest.Int(t, pool, "SELECT count(*) FROM general_report")
		for _, want := range []string{"exporting 100%", fmt.Sprintf("(%d/%d, ", rows, rows), " rows/s)", fmt.Sprintf("exported %d rows, ", rows)} {
			if !bytes.Contains(tty, []byte(want)) {
				t.Errorf("terminal shows %q, want %q in it", tty, want)
			}
		}
	})

	if entries, _ := os.ReadDir(dir); len(entries) != 14 {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Errorf("the folder holds %v: want the 14 outputs and nothing else", names)
	}
}

// arrowRows returns the values of every row of the Arrow IPC stream b,
// as arrow-go prints them.
func arrowRows(t *testing.T, b []byte) [][]string {
	t.Helper()
	r, err := ipc.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Release()
	var rows [][]string
	for r.Next() {
		rec := r.RecordBatch()
		for i := range int(rec.NumRows()) {
			row := make([]string, rec.NumCols())
			for j, col := range rec.Columns() {
				row[j] = col.ValueStr(i)
			}
			rows = append(rows, row)
		}
	}
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	return rows
}

// bigDB is a database large enough (about 100,000 report rows, seconds
// to export) that an export is still streaming when a test interrupts it.
func bigDB(t *testing.T) *pgxpool.Pool {
	t.Helper()
	return pgtest.SeededWith(t, 10000)
}

// TestExportAtomic interrupts exports midway, by ending their database
// session and by signals, and checks that the target file keeps its old
// content, no temporary file remains, and the exit status and message say
// so (TestFlagsCheckedFirst checks that invalid flags fail before anything
// is touched).
func TestExportAtomic(t *testing.T) {
	t.Parallel()
	bin := build(t)
	pool := bigDB(t)
	dbURL := pool.Config().ConnString()
	const old = "the previous export\n"

	// setup returns a folder holding only target, with the old content.
	setup := func(t *testing.T, name string) (dir, target string) {
		dir = t.TempDir()
		target = filepath.Join(dir, name)
		if err := os.WriteFile(target, []byte(old), 0o644); err != nil {
			t.Fatal(err)
		}
		return dir, target
	}
	// untouched checks that dir holds only target, with the old content.
	untouched := func(t *testing.T, dir, target string) {
		t.Helper()
		entries, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		if len(entries) != 1 {
			var names []string
			for _, e := range entries {
				names = append(names, e.Name())
			}
			t.Errorf("the folder holds %v, want only %s", names, filepath.Base(target))
		}
		if b, err := os.ReadFile(target); err != nil || string(b) != old {
			t.Errorf("target = %.100q (%v), want the old content", b, err)
		}
	}

	for _, tt := range []struct {
		name      string
		interrupt func(t *testing.T, p *os.Process)
		messages  []string // what stderr must say
	}{
		{"TerminateBackend", func(t *testing.T, p *os.Process) {
			n := pgtest.Int(t, pool, `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
				WHERE datname = current_database() AND pid <> pg_backend_pid() AND state = 'active'`)
			if n != 1 {
				t.Errorf("terminated %d backends, want the export's one", n)
			}
			// The backend says why it ends (57P01) when it can; one
			// terminated while blocked sending rows to a busy client just
			// closes the connection (pgx: unexpected EOF). Both are the
			// database gone, and must read so.
		}, []string{"export: the database cannot be reached: "}},
		{"SIGINT", func(t *testing.T, p *os.Process) { p.Signal(os.Interrupt) }, []string{"export: interrupted; "}},
		{"SIGTERM", func(t *testing.T, p *os.Process) { p.Signal(syscall.SIGTERM) }, []string{"export: interrupted; "}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir, target := setup(t, "report.ndjson")
			cmd := exec.Command(bin, "export", "--output", target)
			cmd.Env = append(os.Environ(), "DATABASE_URL="+dbURL)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			defer cmd.Process.Kill()
			exited := make(chan error, 1)
			go func() { exited <- cmd.Wait() }()

			// Wait until rows are being written to the temporary file.
			deadline := time.Now().Add(time.Minute)
			for {
				tmps, _ := filepath.Glob(filepath.Join(dir, ".report.ndjson.*.tmp"))
				if len(tmps) == 1 {
					if fi, err := os.Stat(tmps[0]); err == nil && fi.Size() > 0 {
						break
					}
				}
				select {
				case err := <-exited:
					t.Fatalf("export ended (%v) before it could be interrupted; stderr:\n%s", err, stderr.String())
				default:
				}
				if time.Now().After(deadline) {
					t.Fatal("no temporary file with rows appeared")
				}
				time.Sleep(2 * time.Millisecond)
			}
			tt.interrupt(t, cmd.Process)

			var err error
			select {
			case err = <-exited:
			case <-time.After(30 * time.Second):
				t.Fatal("export did not stop")
			}
			if err == nil {
				t.Fatalf("export succeeded after the interruption; stderr:\n%s", stderr.String())
			}
			for _, want := range append(tt.messages, target+" was left unchanged") {
				if !strings.Contains(stderr.String(), want) {
					t.Errorf("stderr = %q, want %q in it", stderr.String(), want)
				}
			}
			untouched(t, dir, target)
		})
	}

	// On stdout nothing is atomic, but an interrupted export must not end
	// as a complete one would: no closing bracket after the last row sent.
	t.Run("StdoutInterrupted", func(t *testing.T) {
		out, err := os.Create(filepath.Join(t.TempDir(), "stdout.json"))
		if err != nil {
			t.Fatal(err)
		}
		defer out.Close()
		cmd := exec.Command(bin, "export", "--output", "-", "--format", "json")
		cmd.Env = append(os.Environ(), "DATABASE_URL="+dbURL)
		var stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = out, &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		defer cmd.Process.Kill()
		for deadline := time.Now().Add(time.Minute); ; time.Sleep(2 * time.Millisecond) {
			if fi, err := out.Stat(); err == nil && fi.Size() > 0 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatal("nothing was written to stdout")
			}
		}
		cmd.Process.Signal(os.Interrupt)
		if err := cmd.Wait(); err == nil || !strings.Contains(stderr.String(), "informe: export: interrupted\n") {
			t.Fatalf("exit %v, stderr %q: want a failure saying it was interrupted", err, stderr.String())
		}
		b, err := os.ReadFile(out.Name())
		if err != nil {
			t.Fatal(err)
		}
		if end := bytes.TrimSpace(b); len(end) == 0 || end[len(end)-1] == ']' {
			t.Errorf("interrupted stdout ends %q: want the rows sent, without the closing bracket", b[max(0, len(b)-20):])
		}
	})

	t.Run("UnwritableFolder", func(t *testing.T) {
		// Root writes in any folder: run the export as nobody then, from
		// folders that nobody may enter but not write in.
		exe, dir := bin, ""
		var cred *syscall.Credential
		if os.Geteuid() == 0 {
			cred = &syscall.Credential{Uid: 65534, Gid: 65534}
			shared, err := os.MkdirTemp("", "informe-export-test-")
			if err != nil {
				t.Fatal(err)
			}
			defer os.RemoveAll(shared)
			exe = filepath.Join(shared, "informe")
			b, err := os.ReadFile(bin)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(exe, b, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(shared, 0o755); err != nil {
				t.Fatal(err)
			}
			dir = filepath.Join(shared, "out")
		} else {
			dir = filepath.Join(t.TempDir(), "out")
		}
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		target := filepath.Join(dir, "report.csv")
		if err := os.WriteFile(target, []byte(old), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(dir, 0o555); err != nil {
			t.Fatal(err)
		}
		defer os.Chmod(dir, 0o755)
		cmd := exec.Command(exe, "export", "--output", target)
		cmd.Env = append(os.Environ(), "DATABASE_URL="+dbURL)
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
		stderr, err := cmd.CombinedOutput()
		if err == nil || !strings.Contains(string(stderr), "cannot write in the output folder "+dir) {
			t.Errorf("err = %v, stderr = %q: want a failure naming the folder", err, stderr)
		}
		untouched(t, dir, target)
	})
}
