package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/informe/informe/internal/pgserver/pgtest"
	"github.com/informe/informe/internal/rut"
)

// TestSubjectsCommands blocks, lists, unblocks and reports a seeded
// client's RUT as an operator would, and checks the refusals of bad input.
func TestSubjectsCommands(t *testing.T) {
	bin := build(t)
	pool := pgtest.SmallSeeded(t)
	dbURL := pool.Config().ConnString()
	stored := pgtest.String(t, pool, "SELECT rut FROM clients ORDER BY id LIMIT 1")
	r, err := rut.Parse(stored)
	if err != nil {
		t.Fatal(err)
	}
	wrong := rut.RUT{Body: r.Body, Check: rut.CheckDigit(r.Body + 1)}
	if wrong.Check == r.Check {
		wrong.Check = rut.CheckDigit(r.Body + 2)
	}
	for _, tc := range []struct {
		name   string
		args   []string
		code   int
		stdout string // a line it must hold
		stderr string // what it must say
	}{
		{"OK", []string{"block", "--rut", r.Dotted(), "--reason", "solicitud 118"}, 0, "", ""},
		{"List", []string{"list"}, 0, r.Dotted() + ",solicitud 118,", ""},
		{"ErrCheckDigit", []string{"block", "--rut", wrong.String(), "--reason", "x"}, 2, "", "has a wrong check digit"},
		{"ErrMalformed", []string{"unblock", "--rut", "12-345"}, 2, "", "is not a RUT"},
		{"ErrNoReason", []string{"block", "--rut", r.String()}, 2, "", "--reason: is required"},
		{"ErrNoRUT", []string{"report"}, 2, "", "--rut: is required"},
		{"ErrSince", []string{"report", "--rut", r.String(), "--since", "ayer"}, 2, "", "--since: must be a date"},
		{"Report", []string{"report", "--rut", r.String(), "--since", "2026-12-01"}, 0, "started_at,ended_at,request_id,principal,client_address,path,dataset", ""},
		{"Unblock", []string{"unblock", "--rut", r.Key()}, 0, "", ""},
		{"ErrNotBlocked", []string{"unblock", "--rut", r.Key()}, 1, "", "that RUT is not blocked"},
		{"ListEmpty", []string{"list"}, 0, "rut,reason,blocked_by,blocked_at", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cmd := exec.Command(bin, append([]string{"subjects"}, tc.args...)...)
			cmd.Env = append(os.Environ(), "DATABASE_URL="+dbURL)
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			code := 0
			if err := cmd.Run(); err != nil {
				var exit *exec.ExitError
				if !errors.As(err, &exit) {
					t.Fatal(err)
				}
				code = exit.ExitCode()
			}
			if code != tc.code {
				t.Fatalf("exit %d, want %d\n%s", code, tc.code, stderr.String())
			}
			if tc.stdout != "" && !strings.Contains(stdout.String(), tc.stdout) {
				t.Errorf("stdout %q, want a line with %q", stdout.String(), tc.stdout)
			}
			if tc.stderr != "" && !strings.Contains(stderr.String(), tc.stderr) {
				t.Errorf("stderr %q, want %q", stderr.String(), tc.stderr)
			}
		})
	}
	if got := pgtest.Int(t, pool, "SELECT count(*) FROM subject_block_events WHERE actor LIKE '%@%'"); got != 2 {
		t.Errorf("%d events recorded with who, want 2", got)
	}
}
