package main

import (
	"bytes"
	"context"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestDemoScript runs scripts/demo as a new user does on a fresh clone: the
// commands it prints run as printed from another folder, SIGTERM and SIGINT
// each stop informe and its PostgreSQL, and the next start keeps the
// database URL (its port) and the token.
func TestDemoScript(t *testing.T) {
	t.Parallel()
	script, err := filepath.Abs("../../scripts/demo")
	if err != nil {
		t.Fatal(err)
	}
	dir := demoDir(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()

	var first *demoRun
	for i, sig := range []os.Signal{syscall.SIGTERM, syscall.SIGINT} {
		d := runDemo(t, exec.CommandContext(ctx, script, demoArgs(dir, "--contracts", "40")...))
		if i == 0 {
			first = d
			runPrinted(t, d)
		} else {
			if d.dbURL != first.dbURL {
				t.Errorf("database URL after a restart = %q, want the same %q", d.dbURL, first.dbURL)
			}
			if d.token != first.token {
				t.Errorf("token after a restart = %q, want the same %q", d.token, first.token)
			}
		}
		d.signal(t, dir, sig)
	}
}

// runPrinted runs, in a new folder, every command line the demo d printed
// (the curl lines when curl is installed) and checks that each succeeds.
func runPrinted(t *testing.T, d *demoRun) {
	t.Helper()
	_, haveCurl := exec.LookPath("curl")
	ran := 0
	for _, line := range d.lines {
		isExport := strings.HasPrefix(line, "DATABASE_URL=")
		if !isExport && !(strings.HasPrefix(line, "curl ") && haveCurl == nil) {
			continue
		}
		work := t.TempDir()
		cmd := exec.Command("sh", "-c", line)
		cmd.Dir = work
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("printed command failed (%v): %s\n%.500s", err, line, out)
			continue
		}
		ran++
		if isExport {
			b, err := os.ReadFile(filepath.Join(work, "general-report.xlsx"))
			if err != nil || !bytes.HasPrefix(b, []byte("PK")) {
				t.Errorf("the printed export wrote no workbook (%v): %s", err, line)
			}
		}
	}
	if ran == 0 {
		t.Errorf("the demo printed no command to run:\n%s", strings.Join(d.lines, "\n"))
	}
}

// TestDemoFolderInUse checks that a second demo on a data folder in use
// says so in one sentence, that a demo whose kept PostgreSQL port another
// program took says so in one sentence, and that the port is kept across
// restarts.
func TestDemoFolderInUse(t *testing.T) {
	t.Parallel()
	bin := build(t)
	dir := demoDir(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	oneSentence := func(t *testing.T, want string) {
		t.Helper()
		out, err := exec.CommandContext(ctx, bin, append([]string{"demo"}, demoArgs(dir)...)...).CombinedOutput()
		if err == nil {
			t.Fatalf("demo started:\n%s", out)
		}
		got := strings.TrimSpace(string(out))
		if strings.Count(got, "\n") != 0 || !strings.Contains(got, want) {
			t.Errorf("output = %q, want one line saying %q", got, want)
		}
	}

	first := startDemo(t, ctx, bin, dir, "--contracts", "40")
	oneSentence(t, "the data folder "+dir+" is in use by another informe demo")
	first.stop(t, dir)

	u, err := url.Parse(first.dbURL)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:"+u.Port())
	if err != nil {
		t.Fatal(err)
	}
	oneSentence(t, "port "+u.Port()+", which this data folder's PostgreSQL keeps")
	ln.Close()

	again := startDemo(t, ctx, bin, dir)
	if again.dbURL != first.dbURL {
		t.Errorf("database URL after a restart = %q, want the same %q", again.dbURL, first.dbURL)
	}
	again.stop(t, dir)
}
