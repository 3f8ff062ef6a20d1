package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/informe/informe/internal/testenv"
)

// served is a running `informe serve`.
type served struct {
	cmd      *exec.Cmd
	log      *testenv.Buffer // its stderr: the JSON log
	api, ops string          // base URLs
	http     string          // with HTTPS on, the plain-HTTP listener's base URL
	exited   chan error      // receives cmd.Wait's result
}

// startServe runs `informe serve` on loopback ports with args and waits
// until it logs that it serves.
func startServe(t *testing.T, bin, dbURL string, args ...string) *served {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"serve", "--addr", "127.0.0.1:0", "--ops-addr", "127.0.0.1:0"}, args...)...)
	cmd.Env = append(os.Environ(), "DATABASE_URL="+dbURL)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s := &served{cmd: cmd, log: &testenv.Buffer{}, exited: make(chan error, 1)}
	type serving struct {
		Msg      string `json:"msg"`
		Addr     string `json:"addr"`
		OpsAddr  string `json:"ops_addr"`
		HTTPS    bool   `json:"https"`
		HTTPAddr string `json:"http_addr"`
	}
	addrs := make(chan serving, 1)
	go func() {
		lines := bufio.NewScanner(stderr)
		lines.Buffer(nil, 1<<20)
		for lines.Scan() {
			fmt.Fprintln(s.log, lines.Text())
			var l serving
			if json.Unmarshal(lines.Bytes(), &l) == nil && l.Msg == "serving" {
				addrs <- l
			}
		}
		s.exited <- cmd.Wait()
	}()
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	select {
	case a := <-addrs:
		s.api, s.ops = "http://"+a.Addr, "http://"+a.OpsAddr
		if a.HTTPS {
			s.api = "https://" + a.Addr
		}
		if a.HTTPAddr != "" {
			s.http = "http://" + a.HTTPAddr
		}
	case err := <-s.exited:
		t.Fatalf("serve exited before serving (%v):\n%s", err, s.log)
	case <-time.After(60 * time.Second):
		t.Fatalf("serve did not log that it serves within 60s:\n%s", s.log)
	}
	return s
}
