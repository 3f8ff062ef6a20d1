package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/informe/informe/internal/pgserver/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// build compiles the informe binary once per test binary.
func build(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "informe")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
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

	cmd := exec.Command(bin, "serve", "--addr", "127.0.0.1:0", "--ops-addr", "127.0.0.1:0")
	cmd.Env = append(os.Environ(), "DATABASE_URL="+dbURL)
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	var addrs struct {
		Addr    string `json:"addr"`
		OpsAddr string `json:"ops_addr"`
	}
	lines := bufio.NewScanner(stderr)
	for lines.Scan() {
		if strings.Contains(lines.Text(), `"msg":"serving"`) {
			if err := json.Unmarshal(lines.Bytes(), &addrs); err != nil {
				t.Fatal(err)
			}
			break
		}
	}
	go io.Copy(io.Discard, stderr)
	if addrs.Addr == "" {
		t.Fatal("serve never logged its address")
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
	}
	if status, _ := get(t, "http://"+addrs.OpsAddr+"/readyz", ""); status != 200 {
		t.Errorf("readyz: %d", status)
	}

	run(t, bin, dbURL, "token", "revoke", "ci")
	if status, body := get(t, base+"/api/general-report", token); status != 401 || string(body) != `{"message":"Invalid Token"}` {
		t.Errorf("revoked token: %d %s", status, body)
	}

	_ = cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("serve exited with %v after SIGTERM", err)
		}
	case <-time.After(20 * time.Second):
		t.Error("serve did not stop after SIGTERM")
	}
}

// TestDemo runs `informe demo` as a person would: it starts its own
// PostgreSQL, seeds, prints a token and curl commands, serves, and on Ctrl-C
// stops both.
func TestDemo(t *testing.T) {
	bin := build(t)
	dir, err := os.MkdirTemp("", "informe-demo-test-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	// PostgreSQL runs as the postgres user when the test runs as root.
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "demo", "--data-dir", filepath.Join(dir, "pg"),
		"--contracts", "40", "--addr", "127.0.0.1:0", "--ops-addr", "")
	stdout, _ := cmd.StdoutPipe()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()

	var base, token string
	lines := bufio.NewScanner(stdout)
	for lines.Scan() && (base == "" || token == "") {
		line := strings.TrimSpace(lines.Text())
		if rest, ok := strings.CutPrefix(line, "informe demo is serving "); ok {
			base = rest
		}
		if rest, ok := strings.CutPrefix(line, "token:"); ok {
			token = strings.TrimSpace(rest)
		}
	}
	go io.Copy(io.Discard, stdout)
	if base == "" || token == "" {
		err := cmd.Wait()
		t.Fatalf("demo printed no base URL or token (exit: %v); stderr:\n%s", err, stderr.String())
	}
	status, body := get(t, base+"/users", token)
	if status != 200 || !bytes.HasPrefix(body, []byte(`[{"id":"1",`)) {
		t.Fatalf("users: %d %.200s", status, body)
	}
	pidFile, err := os.ReadFile(filepath.Join(dir, "pg", "pgdata", "postmaster.pid"))
	if err != nil {
		t.Fatal(err)
	}
	pgPID := strings.SplitN(string(pidFile), "\n", 2)[0]

	_ = cmd.Process.Signal(os.Interrupt)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("demo exited with %v after Ctrl-C; stderr:\n%s", err, stderr.String())
	}
	if !strings.Contains(stderr.String(), "PostgreSQL stopped") {
		t.Errorf("demo did not report stopping PostgreSQL; stderr:\n%s", stderr.String())
	}
	if _, err := os.Stat("/proc/" + pgPID); err == nil {
		t.Errorf("PostgreSQL (pid %s) still running after the demo stopped", pgPID)
	}
}
