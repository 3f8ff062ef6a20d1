package main

import (
	"bytes"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"github.com/informe/informe/internal/pgserver/pgtest"
)

// TestTokenRules sets, shows, changes and clears a token's rules through
// informe token, and checks the refusals of rules that do not fit.
func TestTokenRules(t *testing.T) {
	bin := build(t)
	pool := pgtest.New(t)
	dbURL := pool.Config().ConnString()
	pool.Close()

	run(t, bin, dbURL, "token", "create", "--name", "sheet", "--scope", "report:read",
		"--columns", "contract_id,task_status,client_rut", "--mask", "client_rut", "--rows", "client_id eq 1", "--max-rows", "500")
	// show returns token show's lines, each "field: value".
	show := func(args ...string) string {
		return regexp.MustCompile(`: +`).ReplaceAllString(run(t, bin, dbURL, append([]string{"token", "show"}, args...)...), ": ")
	}
	for _, want := range []string{"columns: contract_id,task_status,client_rut", "mask: client_rut", "rows: client_id eq 1", "max rows: 500"} {
		if got := show("sheet"); !strings.Contains(got, want) {
			t.Errorf("token show = %q, want %q", got, want)
		}
	}
	// A mask that a column beside it gives away is set as given, and said
	// on stderr; the token alone is on stdout.
	gappy := exec.Command(bin, "token", "create", "--name", "gappy", "--mask", "client_rut")
	gappy.Env = append(os.Environ(), "DATABASE_URL="+dbURL)
	var gappyOut, gappyErr bytes.Buffer
	gappy.Stdout, gappy.Stderr = &gappyOut, &gappyErr
	if err := gappy.Run(); err != nil {
		t.Fatalf("token create --mask client_rut: %v\n%s", err, gappyErr.String())
	}
	if !regexp.MustCompile(`^informe_[A-Za-z0-9_-]{43}\n$`).MatchString(gappyOut.String()) {
		t.Errorf("token create --mask client_rut printed %q, want the token alone", gappyOut.String())
	}
	if want := "informe: token create: warning: general-report: rut_client_contract holds the client's rut as client_rut does, and is not masked; mask it too (--mask) or leave it out (--columns)\n"; !strings.Contains(gappyErr.String(), want) {
		t.Errorf("token create --mask client_rut said %q, want it to hold %q", gappyErr.String(), want)
	}
	run(t, bin, dbURL, "token", "change", "--name", "sheet", "--no-personal", "--rows", "", "--mask", "")
	for _, want := range []string{"columns: no personal data", "mask: none", "rows: all", "max rows: 500"} {
		if got := show("--name", "sheet"); !strings.Contains(got, want) {
			t.Errorf("after change: token show = %q, want %q", got, want)
		}
	}
	run(t, bin, dbURL, "token", "change", "sheet", "--no-personal=false", "--max-rows", "0")
	for _, want := range []string{"columns: all", "max rows: no limit"} {
		if got := show("sheet"); !strings.Contains(got, want) {
			t.Errorf("after clearing: token show = %q, want %q", got, want)
		}
	}

	for _, tt := range []struct {
		name string
		args []string
		want string
	}{
		{"UnknownColumn", []string{"token", "create", "--name", "x", "--columns", "contract_id,client_shoe_size"}, `--columns: columns: no dataset has a column "client_shoe_size"`},
		{"UnknownMask", []string{"token", "create", "--name", "x", "--mask", "client_shoe_size"}, `--mask: mask: no dataset has a column "client_shoe_size"`},
		{"MaskNotPersonal", []string{"token", "create", "--name", "x", "--mask", "contract_id"}, `--mask: mask: column "contract_id" holds no personal data`},
		{"RowsDoNotParse", []string{"token", "create", "--name", "x", "--rows", "client_region eq"}, `--rows: rows: the condition applies to no dataset`},
		{"RowsUnknownColumn", []string{"token", "create", "--name", "x", "--rows", "client_shoe_size eq 1"}, `client_shoe_size`},
		{"Both", []string{"token", "create", "--name", "x", "--columns", "contract_id", "--no-personal"}, `--no-personal: give --columns or --no-personal, not both`},
		{"MaxRows", []string{"token", "create", "--name", "x", "--max-rows", "-1"}, `--max-rows: must be a whole number`},
		{"NothingLeft", []string{"token", "create", "--name", "x", "--columns", "client_rut"}, `leave the token no dataset to read`},
		{"ChangeUnknownColumn", []string{"token", "change", "sheet", "--columns", "client_shoe_size"}, `--columns: columns: no dataset has a column "client_shoe_size"`},
		{"ChangeRows", []string{"token", "change", "sheet", "--rows", "client_id eq eq"}, `--rows: rows: the condition applies to no dataset`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cmd := exec.Command(bin, tt.args...)
			cmd.Env = append(os.Environ(), "DATABASE_URL="+dbURL)
			out, err := cmd.CombinedOutput()
			if err == nil {
				t.Fatalf("informe %s succeeded: %s", strings.Join(tt.args, " "), out)
			}
			if !strings.Contains(string(out), tt.want) {
				t.Errorf("informe %s: %s, want it to say %q", strings.Join(tt.args, " "), out, tt.want)
			}
		})
	}
	if got := run(t, bin, dbURL, "token", "list"); strings.Contains(got, " x ") {
		t.Errorf("a refused token was created: %s", got)
	}
}

// TestExportAsToken writes exports with --token-name: the token's rules
// hold as they do over HTTP.
func TestExportAsToken(t *testing.T) {
	bin := build(t)
	pool := pgtest.SmallSeeded(t)
	dbURL := pool.Config().ConnString()
	rut := pgtest.String(t, pool, "SELECT client_rut FROM client_list WHERE client_rut <> '' ORDER BY client_id LIMIT 1")
	run(t, bin, dbURL, "token", "create", "--name", "masked", "--mask", "client_rut", "--columns", "client_id,client_rut,client_region")
	run(t, bin, dbURL, "token", "create", "--name", "few", "--max-rows", "1")
	run(t, bin, dbURL, "token", "create", "--name", "users-only", "--scope", "users:read")

	out, stderr, err := runExportCmd(t, bin, dbURL, "--dataset", "clients", "-o", "-", "--format", "csv", "--token-name", "masked")
	if err != nil {
		t.Fatalf("export: %v\n%s", err, stderr)
	}
	if header, _, _ := strings.Cut(string(out), "\n"); header != "client_id,client_rut,client_region\r" {
		t.Errorf("header %q, want the token's columns", header)
	}
	if strings.Contains(string(out), rut) || !strings.Contains(string(out), ".***.***-") {
		t.Errorf("the RUT %s is not masked: %.300s", rut, out)
	}
	for _, tt := range []struct {
		name string
		args []string
		want string
	}{
		{"MaxRows", []string{"--dataset", "clients", "--token-name", "few"}, "the token may take at most 1"},
		{"Scope", []string{"--dataset", "contracts", "--token-name", "users-only"}, "lacks the report:read scope"},
		{"Hidden", []string{"--dataset", "clients", "--columns", "client_email", "--token-name", "masked"}, `unknown field "client_email"`},
		{"UnknownToken", []string{"--dataset", "clients", "--token-name", "nobody"}, "no token named"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			out, stderr, err := runExportCmd(t, bin, dbURL, append(tt.args, "-o", "-", "--format", "csv")...)
			if err == nil || len(out) > 0 {
				t.Fatalf("export succeeded: %s", out)
			}
			if !strings.Contains(string(stderr), tt.want) {
				t.Errorf("stderr %s, want %q", stderr, tt.want)
			}
		})
	}
}
