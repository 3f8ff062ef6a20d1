package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/informe/informe/internal/pgserver/pgtest"
	"github.com/informe/informe/internal/testenv"
)

func TestMain(m *testing.M) {
	pgtest.Main(m, func() {
		if built.dir != "" {
			os.RemoveAll(built.dir)
		}
	})
}

// built is the informe binary that build compiles, once per test binary.
var built struct {
	once sync.Once
	dir  string
	bin  string
	out  []byte
	err  error
}

// build compiles the informe binary once per test binary and returns its
// path; TestMain removes it.
func build(t *testing.T) string {
	t.Helper()
	built.once.Do(func() {
		built.dir, built.err = os.MkdirTemp("", "informe-test-bin-")
		if built.err != nil {
			return
		}
		built.bin = filepath.Join(built.dir, "informe")
		built.out, built.err = exec.Command("go", "build", "-o", built.bin, ".").CombinedOutput()
	})
	if built.err != nil {
		t.Fatalf("go build: %v\n%s", built.err, built.out)
	}
	return built.bin
}

// run runs the binary with args and DATABASE_URL, and returns its stdout.
func run(t *testing.T, bin, dbURL string, args ...string) string {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "DATABASE_URL="+dbURL)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("informe %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return stdout.String()
}

func get(t *testing.T, url, token string) (int, []byte) {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, body
}

// TestCLI runs migrate, seed, token and serve against a database given by
// DATABASE_URL, as an operator would, and talks to the server over HTTP.
func TestCLI(t *testing.T) {
	t.Parallel()
	bin := build(t)
	pool := pgtest.New(t) // a migrated database; migrate again must change nothing
	dbURL := pool.Config().ConnString()
	pool.Close()

	run(t, bin, dbURL, "migrate")
	run(t, bin, dbURL, "seed", "--contracts", "50", "--seed", "7")
	token := run(t, bin, dbURL, "token", "create", "--name", "ci", "--scope", "report:read")
	if !regexp.MustCompile(`^informe_[A-Za-z0-9_-]{43}\n$`).MatchString(token) {
		t.Fatalf("token create printed %q, want the token alone on one line", token)
	}
	token = strings.TrimSpace(token)
	if list := run(t, bin, dbURL, "token", "list"); !strings.Contains(list, "ci") || strings.Contains(list, token) {
		t.Errorf("token list = %q: want the name and never the secret", list)
	}
	// A token's own limit of big responses: set at creation, changed,
	// back to the default.
	run(t, bin, dbURL, "token", "create", "--name", "nightly", "--max-exports", "3")
	if show := run(t, bin, dbURL, "token", "show", "nightly"); !strings.Contains(show, "max exports: 3") {
		t.Errorf("token show nightly = %q, want max exports: 3", show)
	}
	run(t, bin, dbURL, "token", "change", "nightly", "--max-exports", "0")
	if show := run(t, bin, dbURL, "token", "show", "nightly"); !strings.Contains(show, "max exports: 0") {
		t.Errorf("after change: token show nightly = %q, want max exports: 0", show)
	}
	run(t, bin, dbURL, "token", "change", "nightly", "--max-exports", "default")
	// Its scopes, replaced; an unknown scope is named and changes nothing.
	run(t, bin, dbURL, "token", "change", "nightly", "--scope", "users:read", "--scope", "audit:read")
	if show := run(t, bin, dbURL, "token", "show", "nightly"); !regexp.MustCompile(`\nscopes: +users:read,audit:read\n`).MatchString(show) {
		t.Errorf("after --scope: token show nightly = %q, want scopes: users:read,audit:read", show)
	}
	bad := exec.Command(bin, "token", "change", "nightly", "--scope", "report:write")
	bad.Env = append(os.Environ(), "DATABASE_URL="+dbURL)
	if out, err := bad.CombinedOutput(); err == nil || !strings.Contains(string(out), "--scope") || !strings.Contains(string(out), `unknown scope "report:write"`) {
		t.Errorf("token change --scope report:write: %v, %s; want a refusal naming --scope and the scope", err, out)
	}
	if show := run(t, bin, dbURL, "token", "show", "nightly"); !regexp.MustCompile(`\nscopes: +users:read,audit:read\n`).MatchString(show) {
		t.Errorf("after a refused --scope: token show nightly = %q, want its scopes unchanged", show)
	}
	if show := run(t, bin, dbURL, "token", "show", "ci"); !strings.Contains(show, "max exports: default") || strings.Contains(show, token) {
		t.Errorf("token show ci = %q, want max exports: default and never the secret", show)
	}
	// Wrong flags are TestFlagsCheckedFirst's; a token that does not
	// exist is found in the database.
	for _, args := range [][]string{
		{"token", "change", "nobody", "--max-exports", "1"},
		{"token", "show", "nobody"},
	} {
		cmd := exec.Command(bin, args...)
		cmd.Env = append(os.Environ(), "DATABASE_URL="+dbURL)
		if out, err := cmd.CombinedOutput(); err == nil {
			t.Errorf("informe %s succeeded: %s", strings.Join(args, " "), out)
		} else if !strings.Contains(string(out), "no token named") {
			t.Errorf("informe %s: %s, want it to say what was wrong", strings.Join(args, " "), out)
		}
	}

	cmd := exec.Command(bin, "serve", "--addr", "127.0.0.1:0", "--ops-addr", "127.0.0.1:0")
	cmd.Env = append(os.Environ(), "DATABASE_URL="+dbURL)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	var addrs struct {
		Addr    string `json:"addr"`
		OpsAddr string `json:"ops_addr"`
	}
	// The log is read to its end (the pipe's EOF, when serve exits) before
	// Wait, which closes the pipe and would lose what it still holds.
	logs := &testenv.Buffer{}
	serving := make(chan []byte, 1)
	done := make(chan error, 1)
	go func() {
		lines := bufio.NewScanner(stderr)
		lines.Buffer(nil, 1<<20)
		for lines.Scan() {
			logs.Write(append(lines.Bytes(), '\n'))
			if strings.Contains(lines.Text(), `"msg":"serving"`) {
				select {
				case serving <- bytes.Clone(lines.Bytes()):
				default:
				}
			}
		}
		io.Copy(logs, stderr) // past a line too long to scan, keep reading
		close(serving)
		done <- cmd.Wait()
	}()
	if line, ok := <-serving; ok {
		if err := json.Unmarshal(line, &addrs); err != nil {
			t.Fatal(err)
		}
	}
	if addrs.Addr == "" {
		t.Fatalf("serve never logged its address:\n%s", logs)
	}
	base := "http://" + addrs.Addr

	status, body := get(t, base+"/api/general-report?result_per_page=5", token)
	if status != 200 || !bytes.HasPrefix(body, []byte(`{"data":[{"contract_id":"1",`)) {
		t.Fatalf("report: %d %.200s", status, body)
	}
	if status, _ := get(t, base+"/users", token); status != 403 {
		t.Errorf("users with a report-only token: status %d, want 403", status)
	}
	if status, body := get(t, "http://"+addrs.OpsAddr+"/metrics", ""); status != 200 || !bytes.Contains(body, []byte(`informe_http_requests_total{code="200",format="json",route="/api/general-report"} 1`)) {
		t.Errorf("metrics: %d, want the report request counted", status)
	} else {
		// The token was looked up in turn once, then at once as known.
		for _, want := range []string{`informe_token_checks_total{outcome="unseen"} 1`, `informe_token_checks_total{outcome="known"} 1`} {
			if !bytes.Contains(body, []byte(want)) {
				t.Errorf("metrics lack %s", want)
			}
		}
	}
	if status, _ := get(t, "http://"+addrs.OpsAddr+"/readyz", ""); status != 200 {
		t.Errorf("readyz: %d", status)
	}

	run(t, bin, dbURL, "token", "revoke", "ci")
	if status, body := get(t, base+"/api/general-report", token); status != 401 || string(body) != `{"message":"Invalid Token"}` {
		t.Errorf("revoked token: %d %s", status, body)
	}

	_ = cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("serve exited with %v after SIGTERM", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("serve did not stop after SIGTERM")
	}
	checkLogFields(t, logs.String())
}

// demoRun is a running `informe demo`.
type demoRun struct {
	cmd *exec.Cmd
	// stderr is complete only once exited has given the exit: the demo
	// writes it and stdout through two pipes, in no order between them.
	stderr      *testenv.Buffer
	exited      chan error // cmd.Wait's result, once both pipes are at EOF
	base, token string
	dbURL       string   // the database URL it printed
	lines       []string // what it printed on stdout, trimmed
}

// demoArgs are the arguments of a demo on the data folder dir that takes no
// fixed port, with args after them.
func demoArgs(dir string, args ...string) []string {
	return append([]string{"--data-dir", dir, "--addr", "127.0.0.1:0", "--ops-addr", ""}, args...)
}

// startDemo starts `informe demo` on the data folder dir with args and
// waits until it prints its examples.
func startDemo(t *testing.T, ctx context.Context, bin, dir string, args ...string) *demoRun {
	t.Helper()
	return runDemo(t, exec.CommandContext(ctx, bin, append([]string{"demo"}, demoArgs(dir, args...)...)...))
}

// runDemo starts cmd, a demo, and waits until it has printed its examples,
// up to the line "Press Ctrl-C" (or to its exit, a failure).
func runDemo(t *testing.T, cmd *exec.Cmd) *demoRun {
	t.Helper()
	// stdout goes through an io.Pipe that is closed after Wait, which
	// itself returns once exec has copied all of both outputs: so the
	// scanner below ends at the marker line or at the demo's exit.
	pr, pw := io.Pipe()
	d := &demoRun{cmd: cmd, stderr: &testenv.Buffer{}, exited: make(chan error, 1)}
	cmd.Stdout, cmd.Stderr = pw, d.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill() })
	go func() {
		err := cmd.Wait()
		pw.Close()
		d.exited <- err
	}()
	lines := bufio.NewScanner(pr)
	ready := false
	for lines.Scan() {
		line := strings.TrimSpace(lines.Text())
		d.lines = append(d.lines, line)
		if rest, ok := strings.CutPrefix(line, "informe demo is serving "); ok {
			d.base = rest
		}
		if rest, ok := strings.CutPrefix(line, "token:"); ok {
			d.token = strings.TrimSpace(rest)
		}
		if rest, ok := strings.CutPrefix(line, "database:"); ok {
			d.dbURL = strings.TrimSpace(rest)
		}
		if strings.HasPrefix(line, "Press Ctrl-C") {
			ready = true
			break
		}
	}
	go io.Copy(io.Discard, pr)
	if !ready || d.base == "" || d.token == "" {
		if ready {
			cmd.Process.Kill()
		}
		err := <-d.exited
		t.Fatalf("demo printed no base URL or token (exit: %v); stdout:\n%s\nstderr:\n%s", err, strings.Join(d.lines, "\n"), d.stderr.String())
	}
	return d
}

// stop presses Ctrl-C and checks that the demo and its PostgreSQL stop.
func (d *demoRun) stop(t *testing.T, dir string) {
	t.Helper()
	d.signal(t, dir, os.Interrupt)
}

// signal sends the demo sig and checks that it exits cleanly, having
// stopped its PostgreSQL.
func (d *demoRun) signal(t *testing.T, dir string, sig os.Signal) {
	t.Helper()
	pidFile, err := os.ReadFile(filepath.Join(dir, "pgdata", "postmaster.pid"))
	if err != nil {
		t.Fatal(err)
	}
	pgPID := strings.SplitN(string(pidFile), "\n", 2)[0]
	_ = d.cmd.Process.Signal(sig)
	if err := <-d.exited; err != nil {
		t.Fatalf("demo exited with %v after %v; stderr:\n%s", err, sig, d.stderr.String())
	}
	if !strings.Contains(d.stderr.String(), "PostgreSQL stopped") {
		t.Errorf("demo did not report stopping PostgreSQL after %v; stderr:\n%s", sig, d.stderr.String())
	}
	if _, err := os.Stat("/proc/" + pgPID); err == nil {
		t.Errorf("PostgreSQL (pid %s) still running after the demo stopped on %v", pgPID, sig)
	}
}

// demoDir returns a new folder for a demo's data that PostgreSQL, which
// runs as the postgres user when the test runs as root, can enter.
func demoDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "informe-demo-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return filepath.Join(dir, "pg")
}

// TestDemo runs `informe demo` as a person would: it starts its own
// PostgreSQL, seeds, prints a token and curl commands, serves, and on Ctrl-C
// stops both. Started again on the same folder, it reuses the data, says
// that --contracts no longer applies and how to start over, and prints the
// same token, so that URLs pasted into spreadsheets keep working.
func TestDemo(t *testing.T) {
	t.Parallel()
	bin := build(t)
	dir := demoDir(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	first := startDemo(t, ctx, bin, dir, "--contracts", "40")
	status, body := get(t, first.base+"/users", first.token)
	if status != 200 || !bytes.HasPrefix(body, []byte(`[{"id":"1",`)) {
		t.Fatalf("users: %d %.200s", status, body)
	}
	fi, err := os.Stat(filepath.Join(dir, "informe-demo-token"))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := fi.Mode().Perm(), os.FileMode(0o600); got != want {
		t.Errorf("token file mode = %v, want %v", got, want)
	}
	first.stop(t, dir)
	// stderr is read whole, after the exit: see demoRun.
	if !strings.Contains(first.stderr.String(), "seeded 40 contracts") {
		t.Errorf("first start did not seed; stderr:\n%s", first.stderr.String())
	}

	again := startDemo(t, ctx, bin, dir, "--contracts", "99")
	if again.token != first.token {
		t.Errorf("token after a restart = %q, want the same %q", again.token, first.token)
	}
	if status, _ := get(t, again.base+"/api/general-report?result_per_page=1", first.token); status != 200 {
		t.Errorf("the first start's token after a restart: status %d, want 200", status)
	}
	again.stop(t, dir)
	for _, want := range []string{
		dir + " already holds demo data (40 contracts): using it",
		"--contracts and --seed apply only to an empty data folder",
		"to start over, stop the demo and delete " + dir,
	} {
		if !strings.Contains(again.stderr.String(), want) {
			t.Errorf("restart stderr lacks %q:\n%s", want, again.stderr.String())
		}
	}
	if strings.Contains(again.stderr.String(), "seeding") {
		t.Errorf("restart seeded again; stderr:\n%s", again.stderr.String())
	}
}

// TestDemoPortTaken checks that the demo finds its port taken before it
// starts PostgreSQL or seeds, and says which port and how to choose another.
func TestDemoPortTaken(t *testing.T) {
	t.Parallel()
	bin := build(t)
	dir := demoDir(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, tt := range []struct{ name, flag, message string }{
		{"API", "--addr", "the API address " + ln.Addr().String() + " is already in use"},
		{"Ops", "--ops-addr", "the operations (metrics, health) address " + ln.Addr().String() + " is already in use"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			args := []string{"demo", "--data-dir", dir, "--addr", "127.0.0.1:0", "--ops-addr", "127.0.0.1:0", tt.flag, ln.Addr().String()}
			out, err := exec.CommandContext(ctx, bin, args...).CombinedOutput()
			if err == nil {
				t.Fatalf("demo started on a taken port:\n%s", out)
			}
			if !strings.Contains(string(out), tt.message) || !strings.Contains(string(out), "choose another with "+tt.flag) {
				t.Errorf("output = %q, want %q and the flag to change", out, tt.message)
			}
			if _, err := os.Stat(dir); !os.IsNotExist(err) {
				t.Errorf("the data folder was created (%v): the port check must come first", err)
			}
		})
	}
}
