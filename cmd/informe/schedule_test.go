package main

import (
	"bytes"
	"errors"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/informe/informe/export"
	"github.com/informe/informe/internal/pgserver/pgtest"
)

// runCmd runs the binary with args and DATABASE_URL, and returns its
// stdout, stderr and exit code.
func runCmd(t *testing.T, bin, dbURL string, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "DATABASE_URL="+dbURL)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return stdout.String(), stderr.String(), exit.ExitCode()
	}
	if err != nil {
		t.Fatal(err)
	}
	return stdout.String(), stderr.String(), 0
}

// TestScheduleCommands adds, shows, runs, lists, changes, pauses, resumes
// and removes a schedule through the commands, as the README and
// docs/schedules.md show them.
func TestScheduleCommands(t *testing.T) {
	bin := build(t)
	pool := pgtest.SmallSeeded(t)
	dbURL := pool.Config().ConnString()
	dir := t.TempDir()
	run(t, bin, dbURL, "token", "create", "--name", "finanzas", "--scope", "report:read")
	to := "file://" + dir + "/pendientes-{date}.csv"
	_, stderr, code := runCmd(t, bin, dbURL, "schedule", "add", "--name", "finanzas-diario", "--dataset", "general-report",
		"--filter", "task_status eq 'Pendiente'", "--orderby", "task_end_date desc", "--format", "csv", "--cron", "0 6 * * *",
		"--to", to, "--token-name", "finanzas", "--check")
	if code != 0 || !strings.Contains(stderr, "was tried and works") || !strings.Contains(stderr, "added finanzas-diario; next run ") {
		t.Fatalf("schedule add: exit %d\n%s", code, stderr)
	}
	if got := visibleFiles(t, dir); len(got) != 0 {
		t.Fatalf("--check left %v", got)
	}
	show := run(t, bin, dbURL, "schedule", "show", "finanzas-diario")
	for _, want := range []string{"name:", "finanzas-diario", "$filter=task_status eq 'Pendiente'", "cron:", "0 6 * * *", "America/Santiago", to, "none yet"} {
		if !strings.Contains(show, want) {
			t.Errorf("schedule show lacks %q:\n%s", want, show)
		}
	}
	out := run(t, bin, dbURL, "schedule", "run-now", "finanzas-diario")
	if !strings.Contains(out, ": delivered, ") {
		t.Fatalf("run-now printed %q", out)
	}
	files := visibleFiles(t, dir)
	if len(files) != 1 {
		t.Fatalf("the folder holds %v", files)
	}
	got, err := os.ReadFile(filepath.Join(dir, files[0]))
	if err != nil {
		t.Fatal(err)
	}
	want := apiExport(t, pool, url.Values{"$filter": {"task_status eq 'Pendiente'"}, "$orderby": {"task_end_date desc"}}, export.CSV, export.CSVOptions{Delimiter: ','})
	if !bytes.Equal(got, want) {
		t.Fatalf("the file holds %d bytes, the API's export %d", len(got), len(want))
	}
	if out := run(t, bin, dbURL, "schedule", "run-now", "finanzas-diario"); !strings.Contains(out, ": unchanged") {
		t.Fatalf("a second run-now printed %q, want unchanged", out)
	}
	run(t, bin, dbURL, "schedule", "change", "finanzas-diario", "--cron", "30 7 * * 1-5", "--always")
	show = run(t, bin, dbURL, "schedule", "show", "finanzas-diario")
	for _, want := range []string{"30 7 * * 1-5", "always", "unchanged", "delivered", "$filter=task_status eq 'Pendiente'"} {
		if !strings.Contains(show, want) {
			t.Errorf("schedule show after change lacks %q:\n%s", want, show)
		}
	}
	run(t, bin, dbURL, "schedule", "pause", "finanzas-diario")
	if list := run(t, bin, dbURL, "schedule", "list"); !strings.Contains(list, "paused") || !strings.Contains(list, "unchanged") {
		t.Errorf("schedule list:\n%s", list)
	}
	run(t, bin, dbURL, "schedule", "resume", "finanzas-diario")
	if list := run(t, bin, dbURL, "schedule", "list"); !strings.Contains(list, "active") {
		t.Errorf("schedule list after resume:\n%s", list)
	}

	// What cannot work is refused, each flag at fault named, exit 2.
	_, stderr, code = runCmd(t, bin, dbURL, "schedule", "add", "--name", "x", "--format", "pdf", "--cron", "0 6 * *", "--tz", "Mars/Base",
		"--to", "ftp://host/x.csv", "--token-name", "finanzas", "--filter", "task_status eq")
	if code != 2 {
		t.Fatalf("schedule add of a bad schedule: exit %d, want 2\n%s", code, stderr)
	}
	for _, want := range []string{"--format: unknown format \"pdf\"", "--cron: cron: not a cron expression of 5 fields", "--tz: unknown time zone \"Mars/Base\"",
		"--to: destination: unknown destination scheme \"ftp\"", "--filter, --orderby, --columns: query: "} {
		if !strings.Contains(stderr, want) {
			t.Errorf("the refusal lacks %q:\n%s", want, stderr)
		}
	}
	_, stderr, code = runCmd(t, bin, dbURL, "schedule", "add", "--name", "finanzas-diario", "--format", "csv", "--cron", "0 6 * * *",
		"--to", to, "--token-name", "finanzas")
	if code != 2 || !strings.Contains(stderr, `a schedule named "finanzas-diario" already exists`) {
		t.Errorf("a second add of the name: exit %d\n%s", code, stderr)
	}
	run(t, bin, dbURL, "schedule", "remove", "finanzas-diario")
	if _, stderr, code := runCmd(t, bin, dbURL, "schedule", "show", "finanzas-diario"); code != 1 || !strings.Contains(stderr, `no schedule named "finanzas-diario"`) {
		t.Errorf("show after remove: exit %d\n%s", code, stderr)
	}
}

// visibleFiles returns the names in dir that do not start with a dot.
func visibleFiles(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), ".") {
			out = append(out, e.Name())
		}
	}
	return out
}
