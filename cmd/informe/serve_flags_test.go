package main

import (
	"bytes"
	"context"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/urfave/cli/v3"

	"github.com/informe/informe/internal/api"
	"github.com/informe/informe/internal/road"
	"github.com/informe/informe/internal/server"
	"github.com/informe/informe/internal/spool"
)

// TestServingFlagsFillConfig checks that every serving flag lands in its
// field of server.Config (or of the pool's options), from the command
// line and from its environment variable.
func TestServingFlagsFillConfig(t *testing.T) {
	t.Setenv("INFORME_SHUTDOWN_DELAY", "5s")
	s := newServing("serve")
	cmd := &cli.Command{
		Name:   "serve",
		Flags:  slices.Concat(s.listenFlags(":8080", ":9090"), []cli.Flag{logFormatFlag(s.form, &s.LogFormat, "json")}, s.flags(), s.tlsFlags()),
		Action: func(context.Context, *cli.Command) error { return nil },
	}
	err := cmd.Run(context.Background(), []string{"serve", "--addr", "a:1", "--ops-addr", "o:2", "--log-format", "text",
		"--report-counts", "view", "--pool-size", "3", "--acquire-timeout", "1s", "--pg-cancel", "close",
		"--statement-timeout", "2s", "--request-timeout", "3s", "--max-exports", "5", "--max-exports-per-token", "3", "--export-queue", "6",
		"--export-wait", "4s", "--export-parts", "7", "--shutdown-timeout", "6s", "--ready-when-busy=false",
		"--spool-memory", "8", "--spool-disk", "9", "--spool-disk-total", "10", "--spool-dir", "/d", "--stall-timeout", "7s",
		"--tls-cert", "c", "--tls-key", "k", "--acme-domain", "x", "--acme-domain", "y", "--acme-cache", "ac",
		"--acme-directory", "ad", "--acme-email", "ae", "--http-addr", "h:3", "--hsts-max-age", "8s",
		"--audit", "best-effort", "--audit-database-url", "postgres://audit@h:5432/records"})
	if err != nil {
		t.Fatal(err)
	}
	want := server.Config{
		Addr: "a:1", OpsAddr: "o:2", LogFormat: "text", ReportCounts: "view",
		Limits: api.Limits{Limits: road.Limits{AcquireTimeout: time.Second, StatementTimeout: 2 * time.Second, RequestTimeout: 3 * time.Second,
			Exports: 5, TokenExports: 3, ExportQueue: 6, ExportWait: 4 * time.Second}, ExportParts: 7},
		ShutdownDelay: 5 * time.Second, ShutdownTimeout: 6 * time.Second, ReadyWhenBusy: false,
		Spool:          spool.Limits{Memory: 8, Disk: 9, Dir: "/d", NoProgress: 7 * time.Second},
		SpoolDiskTotal: 10,
		TLS: server.TLS{CertFile: "c", KeyFile: "k", ACMEDomains: []string{"x", "y"}, ACMECache: "ac",
			ACMEDirectory: "ad", ACMEEmail: "ae", HTTPAddr: "h:3", HSTSMaxAge: 8 * time.Second},
		Audit: "best-effort", AuditDatabaseURL: "postgres://audit@h:5432/records",
	}
	if !reflect.DeepEqual(s.Config, want) {
		t.Errorf("server.Config =\n%+v\nwant\n%+v", s.Config, want)
	}
	if s.poolSize != 3 || s.pgCancel != "close" {
		t.Errorf("pool options = %d %q, want 3 close", s.poolSize, s.pgCancel)
	}
}

// database is a loopback listener standing where the database would be:
// it counts the connections made to it and closes each at once, so that a
// client that reaches it fails straight away.
type database struct {
	ln    net.Listener
	conns atomic.Int64
}

func newDatabase(t *testing.T) *database {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	d := &database{ln: ln}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			d.conns.Add(1) // before the close that the client waits for
			c.Close()
		}
	}()
	t.Cleanup(func() { ln.Close() })
	return d
}

// url is a database URL on the listener, with a password that no message
// may repeat.
func (d *database) url() string {
	return "postgres://informe:s3cr3t-pw@" + d.ln.Addr().String() + "/informe?sslmode=disable&connect_timeout=60"
}

// TestFlagsCheckedFirst runs every command with wrong flags and
// environment values against a database that records connections, and
// checks that each command exits 2 with one line per wrong value, naming
// the flag (and its variable when the value came from one), repeating no
// secret, and that it opened nothing: no connection to the database, no
// data folder, no output file.
func TestFlagsCheckedFirst(t *testing.T) {
	t.Parallel()
	bin := build(t)
	spoolFile := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(spoolFile, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name   string
		args   []string
		env    []string // besides DATABASE_URL on the recorder
		noDB   bool     // no DATABASE_URL at all
		dbURL  string   // instead of the recorder's (its port is then added)
		want   []string // the lines of stderr, each after "informe: "
		secret string   // what stderr must not contain
	}{
		{name: "ErrLogFormat", args: []string{"serve", "--log-format", "xml"}, want: []string{`serve: --log-format: must be json or text, got "xml"`}},
		{name: "ErrLogFormatEnv", args: []string{"serve"}, env: []string{"INFORME_LOG_FORMAT=xml"},
			want: []string{`serve: --log-format (from INFORME_LOG_FORMAT): must be json or text, got "xml"`}},
		{name: "FlagWinsOverEnv", args: []string{"serve", "--log-format", "yaml"}, env: []string{"INFORME_LOG_FORMAT=json"},
			want: []string{`serve: --log-format: must be json or text, got "yaml"`}},
		{name: "ErrTrustedProxies", args: []string{"serve", "--trusted-proxies", "10.0.0.0/8, nonsense"},
			want: []string{`serve: --trusted-proxies: "nonsense" is neither a CIDR prefix nor an address`}},
		{name: "ErrPublicURL", args: []string{"serve", "--public-url", "https://admin:hunter2@informe.example.cl/"},
			want: []string{"serve: --public-url: must be an absolute http or https URL"}, secret: "hunter2"},
		{name: "ErrPublicURLRelative", args: []string{"serve", "--public-url", "/informe"}, want: []string{"serve: --public-url: must be an absolute http or https URL"}},
		{name: "ErrAddr", args: []string{"serve", "--addr", "nonsense"}, want: []string{`serve: --addr: "nonsense" is not a host:port address`}},
		{name: "ErrAddrEmpty", args: []string{"serve", "--addr", ""}, want: []string{"serve: --addr: must be a host:port address"}},
		{name: "ErrOpsAddrPort", args: []string{"serve", "--ops-addr", ":99999"}, want: []string{"serve: --ops-addr: port 99999 is not from 0 to 65535"}},
		{name: "ErrHTTPAddr", args: []string{"serve", "--http-addr", "80"}, want: []string{`serve: --http-addr: "80" is not a host:port address`}},
		{name: "ErrPoolSizeSyntax", args: []string{"serve", "--pool-size", "many"}, want: []string{`serve: --pool-size: "many" is not an integer`}},
		{name: "ErrPoolSizeEnv", args: []string{"serve"}, env: []string{"INFORME_POOL_SIZE=many"},
			want: []string{`serve: --pool-size (from INFORME_POOL_SIZE): "many" is not an integer`}},
		{name: "ErrPoolSizeZero", args: []string{"serve", "--pool-size", "0"}, want: []string{"serve: --pool-size: must be 1 or more, got 0"}},
		{name: "ErrWithPasswordInURL", args: []string{"serve", "--log-format", "xml"}, dbURL: "postgres://informe:s3cr3t-pw@127.0.0.1:%d/informe?pool_max_conns=3",
			want: []string{`serve: --log-format: must be json or text, got "xml"`}, secret: "s3cr3t"},
		{name: "ErrMaxExportsNegative", args: []string{"serve", "--max-exports", "-1"}, want: []string{"serve: --max-exports: must not be negative"}},
		{name: "ErrMaxExportsPerToken", args: []string{"serve", "--max-exports-per-token", "-2"}, want: []string{"serve: --max-exports-per-token: must not be negative"}},
		{name: "ErrMaxExportsPerTokenEnv", args: []string{"demo"}, noDB: true, env: []string{"INFORME_MAX_EXPORTS_PER_TOKEN=two"},
			want: []string{`demo: --max-exports-per-token (from INFORME_MAX_EXPORTS_PER_TOKEN): "two" is not an integer`}},
		{name: "ErrExportQueue", args: []string{"serve", "--export-queue", "-1"}, want: []string{"serve: --export-queue: must not be negative"}},
		{name: "ErrExportParts", args: []string{"serve", "--export-parts", "0"}, want: []string{"serve: --export-parts: must be 1 or more, got 0"}},
		{name: "ErrAcquireTimeout", args: []string{"serve", "--acquire-timeout", "-1s"}, want: []string{"serve: --acquire-timeout: must not be negative"}},
		{name: "ErrRequestTimeoutSyntax", args: []string{"serve", "--request-timeout", "10"}, want: []string{`serve: --request-timeout: "10" is not a duration`}},
		{name: "ErrStatementTimeout", args: []string{"serve", "--statement-timeout", "1000h"}, want: []string{"serve: --statement-timeout: must be 0 (keep the database's) or from 1ms to"}},
		{name: "ErrExportWait", args: []string{"serve", "--export-wait", "-5s"}, want: []string{"serve: --export-wait: must not be negative"}},
		{name: "ErrShutdownEnv", args: []string{"serve"}, env: []string{"INFORME_SHUTDOWN_TIMEOUT=soon", "INFORME_SHUTDOWN_DELAY=-1s"},
			want: []string{"serve: --shutdown-delay (from INFORME_SHUTDOWN_DELAY): must not be negative", `serve: --shutdown-timeout (from INFORME_SHUTDOWN_TIMEOUT): "soon" is not a duration`}},
		{name: "ErrPgCancel", args: []string{"serve", "--pg-cancel", "kill"}, want: []string{`serve: --pg-cancel: must be request or close, got "kill"`}},
		{name: "ErrReportCounts", args: []string{"serve", "--report-counts", "guess"}, want: []string{`serve: --report-counts: report counts must be maintained or view, got "guess"`}},
		{name: "ErrReadyWhenBusy", args: []string{"serve", "--ready-when-busy=maybe"}, want: []string{`serve: --ready-when-busy: "maybe" is not true or false`}},
		{name: "ErrSpool", args: []string{"serve", "--spool-memory", "-1", "--spool-disk", "-1", "--spool-disk-total", "x", "--spool-dir", spoolFile},
			want: []string{"serve: --spool-memory: must not be negative", "serve: --spool-disk: must not be negative",
				`serve: --spool-disk-total: "x" is not an integer`, "serve: --spool-dir: " + spoolFile + " is not a folder"}},
		{name: "ErrTLSCertAlone", args: []string{"serve", "--tls-cert", "/nonexistent/cert.pem"}, want: []string{"serve: --tls-cert: needs --tls-key too"}},
		{name: "ErrTLSKeyAlone", args: []string{"serve", "--tls-key", "/nonexistent/key.pem"}, want: []string{"serve: --tls-key: needs --tls-cert too"}},
		{name: "ErrTLSAndACME", args: []string{"serve", "--tls-cert", "/nonexistent/c", "--tls-key", "/nonexistent/k", "--acme-domain", "informe.example.cl"},
			want: []string{"serve: --acme-domain: --tls-cert and --acme-domain are alternatives"}},
		{name: "ErrACME", args: []string{"serve", "--acme-domain", "https://informe.example.cl", "--acme-directory", "ftp://ca", "--acme-email", "ana.perez", "--hsts-max-age", "-1s"},
			want: []string{`serve: --acme-domain: "https://informe.example.cl" is not a domain name`, "serve: --acme-directory: must be an absolute https URL",
				"serve: --acme-email: is not an e-mail address", "serve: --hsts-max-age: must not be negative"}, secret: "ana.perez"},
		{name: "ErrDatabaseURL", args: []string{"serve"}, dbURL: "postgres://informe:s3cr3t%zz@127.0.0.1:%d/informe",
			want: []string{"serve: --database-url (from DATABASE_URL): is neither a PostgreSQL URL"}, secret: "s3cr3t"},
		{name: "ErrDatabaseURLMissing", args: []string{"serve"}, noDB: true, want: []string{"serve: --database-url: is required"}},
		// The example of a combination: every wrong value, one line each,
		// in the order of the flags.
		{name: "ErrSeveral", args: []string{"serve", "--log-format", "xml", "--trusted-proxies", "nonsense", "--pool-size", "abc", "--stall-timeout", "x"},
			env: []string{"INFORME_EXPORT_PARTS=0"},
			want: []string{`serve: --log-format: must be json or text, got "xml"`, `serve: --trusted-proxies: "nonsense" is neither`,
				`serve: --pool-size: "abc" is not an integer`, "serve: --export-parts (from INFORME_EXPORT_PARTS): must be 1 or more, got 0",
				`serve: --stall-timeout: "x" is not a duration`}},
		{name: "ErrUnknownFlag", args: []string{"serve", "--log-level", "debug"}, want: []string{"serve: flag provided but not defined: -log-level (see informe serve --help)"}},
		{name: "ErrFlagWithoutValue", args: []string{"serve", "--addr"}, want: []string{"serve: flag needs an argument: --addr (see informe serve --help)"}},

		{name: "ErrDemo", args: []string{"demo", "--contracts", "0", "--log-format", "xml", "--addr", "x"}, noDB: true,
			want: []string{`demo: --addr: "x" is not a host:port address`, "demo: --contracts: must be 1 or more, got 0", `demo: --log-format: must be json or text, got "xml"`}},
		{name: "ErrDemoEnv", args: []string{"demo"}, noDB: true, env: []string{"INFORME_SEED=one", "INFORME_POOL_SIZE=2"},
			want: []string{`demo: --seed (from INFORME_SEED): "one" is not an integer`}},

		{name: "ErrExportParts", args: []string{"export", "--parts", "0"}, want: []string{"export: --parts: must be from 1 to 16, got 0"}},
		{name: "ErrExportFormat", args: []string{"export", "--format", "pdf"}, want: []string{`export: --format: unknown format "pdf"`}},
		{name: "ErrExportRUT", args: []string{"export", "--rut", "12.345.678-0"}, want: []string{`export: --rut: rut "12.345.678-0" has a wrong check digit`}},
		{name: "ErrExportColumns", args: []string{"export", "--columns", "contract_id,nope"}, want: []string{`export: --columns: columns: unknown field "nope"`}},
		{name: "ErrExportContractID", args: []string{"export", "--contract-id", "0"}, want: []string{"export: --contract-id: contract_id must be an integer of 1 or more"}},
		{name: "ErrExportDelimiter", args: []string{"export", "--delimiter", "pipe"}, want: []string{"export: delimiter must be one of comma, semicolon, tab"}},
		{name: "ErrExportDataset", args: []string{"export", "--dataset", "nope"}, want: []string{`export: --dataset: the dataset must be one of general-report, users`}},
		{name: "ErrExportOutputFolder", args: []string{"export", "--output", "/nonexistent/informe/report.csv"},
			want: []string{"export: --output: the output folder /nonexistent/informe does not exist"}},
		{name: "ErrExportNoOutput", args: []string{"export", "--output", ""}, want: []string{"export: --output must name a file"}},
		{name: "ErrExportSeveral", args: []string{"export", "--rut", "1", "--parts", "x", "--format", "pdf", "--report-counts", "guess", "--gzip=perhaps"},
			want: []string{`export: --gzip: "perhaps" is not true or false`, `export: --parts: "x" is not an integer`, `export: --report-counts: report counts must be maintained or view`,
				`export: --rut: rut "1" is not a RUT`, `export: --format: unknown format "pdf"`}},

		{name: "ErrTokenCreate", args: []string{"token", "create", "--scope", "report:write", "--expires-in", "-1h"},
			want: []string{"token create: --name: is required", "token create: --scope: ", "token create: --expires-in: must not be negative"}},
		{name: "ErrTokenCreateEnv", args: []string{"token", "create", "--name", "ci"}, env: []string{"INFORME_TOKEN_EXPIRES_IN=a month"},
			want: []string{`token create: --expires-in (from INFORME_TOKEN_EXPIRES_IN): "a month" is not a duration`}},
		{name: "ErrTokenCreateMaxExports", args: []string{"token", "create", "--name", "ci", "--max-exports", "-1"},
			want: []string{`token create: --max-exports: must be default or a whole number from 0 (no limit of its own) to 1000, got "-1"`}},
		{name: "ErrTokenCreateMaxExportsEnv", args: []string{"token", "create", "--name", "ci"}, env: []string{"INFORME_TOKEN_MAX_EXPORTS=many"},
			want: []string{`token create: --max-exports (from INFORME_TOKEN_MAX_EXPORTS): must be default or a whole number`}},
		{name: "ErrTokenChangeMaxExports", args: []string{"token", "change", "nightly", "--max-exports", "1001"},
			want: []string{`token change: --max-exports: must be default or a whole number from 0 (no limit of its own) to 1000, got "1001"`}},
		{name: "ErrTokenChangeNothing", args: []string{"token", "change", "nightly"}, want: []string{"token change: nothing to change: give --scope, --max-exports"}},
		{name: "ErrTokenChangeNoName", args: []string{"token", "change", "--max-exports", "many"},
			want: []string{"token change: --max-exports: must be default", "token change: takes exactly one NAME"}},
		{name: "ErrTokenShow", args: []string{"token", "show", "a", "b"}, want: []string{"token show: takes exactly one NAME"}},
		{name: "ErrTokenRevoke", args: []string{"token", "revoke"}, want: []string{"token revoke: takes exactly one NAME"}},
		{name: "ErrTokenListURL", args: []string{"token", "list"}, noDB: true, want: []string{"token list: --database-url: is required"}},
		{name: "ErrSeed", args: []string{"seed", "--contracts", "-3", "--seed", "x"}, want: []string{"seed: --contracts: must be 1 or more, got -3", `seed: --seed: "x" is not an integer`}},
		{name: "ErrMigrate", args: []string{"migrate", "--database-url", "postgres://informe:s3cr3t@127.0.0.1:99999999/x"},
			want: []string{"migrate: --database-url: is neither a PostgreSQL URL"}, secret: "s3cr3t"},
		{name: "ErrColumns", args: []string{"columns", "extra"}, want: []string{"columns: takes no arguments"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			db := newDatabase(t)
			dir := t.TempDir()
			args := tt.args
			switch args[0] {
			case "export":
				if !slices.Contains(args, "--output") {
					args = append(args, "--output", filepath.Join(dir, "report.csv"))
				}
			case "demo":
				args = append(args, "--data-dir", filepath.Join(dir, "pg"))
			}
			cmd := exec.Command(bin, args...)
			for _, kv := range os.Environ() {
				if !strings.HasPrefix(kv, "INFORME_") && !strings.HasPrefix(kv, "DATABASE_URL=") {
					cmd.Env = append(cmd.Env, kv)
				}
			}
			switch {
			case tt.noDB:
			case tt.dbURL != "":
				cmd.Env = append(cmd.Env, "DATABASE_URL="+strings.Replace(tt.dbURL, "%d", strconv.Itoa(db.ln.Addr().(*net.TCPAddr).Port), 1))
			default:
				cmd.Env = append(cmd.Env, "DATABASE_URL="+db.url())
			}
			cmd.Env = append(cmd.Env, tt.env...)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			err := cmd.Run()
			var exit *exec.ExitError
			if !errors.As(err, &exit) || exit.ExitCode() != 2 {
				t.Errorf("exit: %v, want status 2", err)
			}
			lines := strings.Split(strings.TrimSuffix(stderr.String(), "\n"), "\n")
			if len(lines) != len(tt.want) {
				t.Errorf("stderr has %d lines, want %d:\n%s", len(lines), len(tt.want), stderr.String())
			}
			for i, want := range tt.want {
				if i < len(lines) && !strings.HasPrefix(lines[i], "informe: "+want) {
					t.Errorf("line %d = %q, want it to start %q", i+1, lines[i], "informe: "+want)
				}
			}
			if tt.secret != "" && strings.Contains(stderr.String(), tt.secret) {
				t.Errorf("stderr repeats %q:\n%s", tt.secret, stderr.String())
			}
			if n := db.conns.Load(); n != 0 {
				t.Errorf("%d connections to the database: the flags must be checked first", n)
			}
			if entries, _ := os.ReadDir(dir); len(entries) != 0 {
				t.Errorf("%s holds %d entries: nothing must be created before the flags are checked", dir, len(entries))
			}
		})
	}

	// The recorder does see a command that gets past its flags.
	t.Run("ValidFlagsReachTheDatabase", func(t *testing.T) {
		db := newDatabase(t)
		cmd := exec.Command(bin, "serve", "--addr", "127.0.0.1:0", "--ops-addr", "")
		cmd.Env = append(os.Environ(), "DATABASE_URL="+db.url())
		out, err := cmd.CombinedOutput()
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() != 1 {
			t.Errorf("exit: %v, want status 1 (the database failing); output:\n%s", err, out)
		}
		if db.conns.Load() == 0 {
			t.Errorf("no connection to the database recorded; output:\n%s", out)
		}
	})
}
