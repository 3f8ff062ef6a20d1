// Package demo runs informe's demo as a new user meets it: it checks that
// its data folder is not in use and its ports are free, starts a private
// PostgreSQL in a data folder on the same port as last time,
// migrates and, the first time only, seeds it, keeps one token that stays
// the same for as long as the data folder does, and prints ready-to-paste
// examples once the API is serving. Serving itself is the caller's: the
// command passes in the function that runs informe's servers.
package demo

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/informe/informe/auth"
	"github.com/informe/informe/internal/failure"
	"github.com/informe/informe/internal/pgserver"
	"github.com/informe/informe/internal/postgres"
	"github.com/informe/informe/internal/rut"
	"github.com/informe/informe/internal/seed"
)

// Options configure [Run].
type Options struct {
	// DataDir is the folder of the private PostgreSQL and of the demo
	// token; it is created if missing and reused if it holds a demo.
	DataDir string
	// PGUser is the unprivileged user that runs PostgreSQL when informe
	// runs as root (see pgserver.Options.RunAs).
	PGUser string
	// Addr and OpsAddr are the addresses serve will listen on (OpsAddr
	// empty: none). Run checks that they are free before it starts
	// anything; port 0 is always free.
	Addr, OpsAddr string
	// Contracts and Seed size and pick the demo data (see seed.Options).
	// They apply only to an empty data folder.
	Contracts int
	Seed      int64
	// SeedGiven says that the user asked for Contracts or Seed explicitly,
	// so that Run says so when the data folder already holds data and they
	// are ignored.
	SeedGiven bool
	// OpenPool opens the pool that the demo and serve use on the private
	// server's URL; nil means postgres.Open.
	OpenPool func(ctx context.Context, url string) (*pgxpool.Pool, error)
	// Informe is the command line that runs this informe binary from the
	// user's shell (a path, "informe" when it is on PATH, or "go run
	// ./cmd/informe"), for the examples; empty means "informe".
	Informe string
	// Stdout receives the examples, Stderr the progress; nil means
	// os.Stdout and os.Stderr.
	Stdout, Stderr io.Writer
}

// ServeFunc serves the API on pool until ctx is done, calling ready with
// the addresses it listens on once it accepts requests (opsAddr is empty
// when there is no operations server).
type ServeFunc func(ctx context.Context, pool *pgxpool.Pool, ready func(apiAddr, opsAddr string)) error

// tokenFile is the name of the file in the data folder that keeps the demo
// token's secret (mode 0600): the database keeps only its SHA-256.
const tokenFile = "informe-demo-token"

// portFile is the name of the file in the data folder that keeps the
// private PostgreSQL's port, so that the database URL the demo prints stays
// the same on every start of the folder (a crontab may hold it).
const portFile = "postgres-port"

// tokenName is the demo token's name in api_tokens.
const tokenName = "demo"

// Run runs the demo until ctx is done, then stops serve and PostgreSQL in
// that order. It fails before anything starts, with one sentence saying
// what to do, when the data folder is in use by another demo, when Addr or
// OpsAddr is taken, or when the port the folder's PostgreSQL keeps is
// taken; it returns the errors of PostgreSQL, of migrating and seeding, of
// the token and port files, and of serve.
func Run(ctx context.Context, opts Options, serve ServeFunc) (err error) {
	stdout, stderr := opts.Stdout, opts.Stderr
	if stdout == nil {
		stdout = os.Stdout
	}
	if stderr == nil {
		stderr = os.Stderr
	}
	dir, err := filepath.Abs(opts.DataDir)
	if err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	if pid, ok := pgserver.RunningPID(dir); ok {
		return inUse(dir, pid)
	}
	if err := checkFree(opts.Addr, opts.OpsAddr); err != nil {
		return err
	}
	port, err := keptPort(dir)
	if err != nil {
		return err
	}

	fmt.Fprintf(stderr, "starting a private PostgreSQL in %s...\n", dir)
	srv, err := pgserver.Start(ctx, pgserver.Options{Dir: dir, RunAs: opts.PGUser, Port: port})
	var busy *pgserver.InUseError
	if errors.As(err, &busy) {
		return inUse(dir, busy.PID)
	}
	if err != nil {
		return err
	}
	defer func() {
		if cerr := srv.Close(); cerr != nil {
			fmt.Fprintln(stderr, "informe:", cerr)
		}
		fmt.Fprintln(stderr, "PostgreSQL stopped")
	}()
	if port == 0 {
		if err := os.WriteFile(filepath.Join(dir, portFile), []byte(strconv.Itoa(srv.Port())+"\n"), 0o644); err != nil {
			return fmt.Errorf("demo: port file: %w", err)
		}
	}
	if err := postgres.EnsureDatabase(ctx, srv.URL("postgres"), "informe"); err != nil {
		return err
	}
	dbURL := srv.URL("informe")
	open := opts.OpenPool
	if open == nil {
		open = postgres.Open
	}
	pool, err := open(ctx, dbURL)
	if err != nil {
		return err
	}
	defer pool.Close()
	if _, err := postgres.Migrate(ctx, pool); err != nil {
		return err
	}
	if err := ensureData(ctx, pool, dir, opts, stderr); err != nil {
		return err
	}
	tokenPath := filepath.Join(dir, tokenFile)
	token, reused, err := stableToken(ctx, auth.NewStore(pool), tokenPath)
	if err != nil {
		return err
	}
	ex := examples{token: token, tokenPath: tokenPath, reused: reused, dbURL: dbURL, informe: opts.Informe}
	if ex.informe == "" {
		ex.informe = "informe"
	}
	if ex.rut, err = exampleRUT(ctx, pool); err != nil {
		return err
	}
	return serve(ctx, pool, func(apiAddr, opsAddr string) {
		ex.base, ex.opsAddr = "http://"+apiAddr, opsAddr
		ex.write(stdout)
	})
}

// inUse is the error of a data folder that another demo's PostgreSQL runs on.
func inUse(dir string, pid int) error {
	return fmt.Errorf("demo: the data folder %s is in use by another informe demo (its PostgreSQL runs as pid %d): stop that demo first, or give this one another --data-dir", dir, pid)
}

// keptPort returns the port that the PostgreSQL of the data folder dir
// listened on last time, or 0 when the folder keeps none (a new folder).
// It fails, in one sentence saying what to do, when another program now
// listens on that port.
func keptPort(dir string) (int, error) {
	path := filepath.Join(dir, portFile)
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("demo: port file: %w", err)
	}
	port, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || port < 1 || port > 65535 {
		return 0, fmt.Errorf("demo: %s does not hold a port number: delete it, and the demo chooses a new port", path)
	}
	ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err != nil {
		return 0, fmt.Errorf("demo: port %d, which this data folder's PostgreSQL keeps so that its database URL stays the same, is taken by another program: stop that program, or delete %s and the demo chooses a new port", port, path)
	}
	ln.Close()
	return port, nil
}

// checkFree fails, naming the address and the flag that sets it, when addr
// or opsAddr cannot be listened on. It checks both before the demo spends
// time starting PostgreSQL and seeding, which would otherwise end in the
// same error after the wait. Someone may still take a port between this
// check and serve's own listen; serve then fails as it would anyway.
func checkFree(addr, opsAddr string) error {
	if _, port, _ := net.SplitHostPort(addr); addr != "" && addr == opsAddr && port != "0" {
		return fmt.Errorf("demo: --addr and --ops-addr are both %s: give them different ports", addr)
	}
	for _, a := range []struct{ addr, flag, what string }{
		{addr, "--addr", "API"},
		{opsAddr, "--ops-addr", "operations (metrics, health)"},
	} {
		if a.addr == "" {
			continue
		}
		ln, err := net.Listen("tcp", a.addr)
		if errors.Is(err, syscall.EADDRINUSE) {
			return fmt.Errorf("demo: the %s address %s is already in use (another informe demo?): stop what uses it, or choose another with %s", a.what, a.addr, a.flag)
		}
		if err != nil {
			return fmt.Errorf("demo: cannot listen on the %s address %s (%s): %w", a.what, a.addr, a.flag, err)
		}
		ln.Close()
	}
	return nil
}

// ensureData seeds an empty database, and otherwise says that the data
// folder already holds data, that --contracts and --seed do not change it,
// and how to start over.
func ensureData(ctx context.Context, pool *pgxpool.Pool, dir string, opts Options, stderr io.Writer) error {
	has, err := seed.HasData(ctx, pool)
	if err != nil {
		return err
	}
	if !has {
		start := time.Now()
		fmt.Fprintf(stderr, "seeding %d contracts (seed %d)...\n", opts.Contracts, opts.Seed)
		st, err := seed.Seed(ctx, pool, seed.Options{Contracts: opts.Contracts, Seed: opts.Seed})
		if err != nil {
			return err
		}
		fmt.Fprintf(stderr, "seeded %d contracts, %d report rows, %d users in %s; the next start of this data folder reuses them\n",
			st.Contracts, st.ReportRows, st.Users, time.Since(start).Round(time.Millisecond))
		return nil
	}
	contracts, err := postgres.CountContracts(ctx, pool)
	if err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	fmt.Fprintf(stderr, "%s already holds demo data (%d contracts): using it\n", dir, contracts)
	if opts.SeedGiven {
		fmt.Fprintf(stderr, "--contracts and --seed apply only to an empty data folder, so they are ignored now\n")
	}
	fmt.Fprintf(stderr, "to start over, stop the demo and delete %s, or give another --data-dir\n", dir)
	return nil
}

// stableToken returns the demo token kept in the file at path, when the
// database still accepts it as the token named "demo", with reused true.
// Otherwise (no file, a token revoked or from another database) it
// replaces the "demo" token with a new one, with every scope and no
// expiry, and writes its secret to path with mode 0600, replacing the
// file atomically. It returns database errors and errors reading or
// writing the file.
func stableToken(ctx context.Context, tokens *auth.Store, path string) (secret string, reused bool, err error) {
	b, err := os.ReadFile(path)
	switch {
	case err == nil:
		secret = strings.TrimSpace(string(b))
		p, err := tokens.Authenticate(ctx, secret)
		if err == nil && p.Name == tokenName {
			// Keep the secret private even if someone loosened the mode.
			if err := os.Chmod(path, 0o600); err != nil {
				return "", false, fmt.Errorf("demo: token file: %w", err)
			}
			return secret, true, nil
		}
		if err != nil && failure.CodeOf(err) != failure.Unauthorized {
			return "", false, err
		}
	case !errors.Is(err, fs.ErrNotExist):
		return "", false, fmt.Errorf("demo: token file: %w", err)
	}
	if secret, err = tokens.Replace(ctx, tokenName, nil, time.Time{}); err != nil {
		return "", false, err
	}
	if err := writeSecret(path, secret); err != nil {
		return "", false, err
	}
	return secret, false, nil
}

// writeSecret writes secret to path with mode 0600 through a temporary
// file and a rename, so that a crash never leaves a half-written token.
func writeSecret(path, secret string) (err error) {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*") // mode 0600
	if err != nil {
		return fmt.Errorf("demo: token file: %w", err)
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
			err = fmt.Errorf("demo: token file: %w", err)
		}
	}()
	if _, err := f.WriteString(secret + "\n"); err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}

// exampleRUT returns a client RUT that exists, typed the dotted way.
func exampleRUT(ctx context.Context, pool *pgxpool.Pool) (string, error) {
	s, err := postgres.FirstClientRUT(ctx, pool)
	if err != nil {
		return "", fmt.Errorf("demo: %w", err)
	}
	if r, err := rut.Parse(s); err == nil {
		s = r.Dotted()
	}
	return s, nil
}

// exportColumns are the fields of the whole-report export example.
const exportColumns = "contract_id,code_contract,contract_status,rut_client_contract,first_name_client_contract,last_name_client_contract"

// examples is what the demo prints once it serves.
type examples struct {
	base, opsAddr    string
	token, tokenPath string
	reused           bool
	dbURL, rut       string
	informe          string // the command that runs informe
}

func (e examples) write(w io.Writer) {
	var b strings.Builder
	fmt.Fprintf(&b, "\ninforme demo is serving %s\n\n", e.base)
	fmt.Fprintf(&b, "  token:     %s\n", e.token)
	if e.reused {
		fmt.Fprintf(&b, "             (the same as last time: kept in %s)\n", e.tokenPath)
	} else {
		fmt.Fprintf(&b, "             (new; kept in %s, it stays the same on every start of this data folder)\n", e.tokenPath)
	}
	fmt.Fprintf(&b, "  web page:  %s/ (sign in with the token)\n", e.base)
	fmt.Fprintf(&b, "  database:  %s\n", e.dbURL)
	if e.opsAddr != "" {
		fmt.Fprintf(&b, "  metrics:   http://%s/metrics\n", e.opsAddr)
	}
	bearer := "curl -H 'Authorization: Bearer " + e.token + "' "
	fmt.Fprintf(&b, "\nTry:\n")
	for _, line := range []string{
		bearer + "'" + e.base + "/users'",
		bearer + "'" + e.base + "/api/general-report?result_per_page=2'",
		bearer + "-H 'Accept: text/csv' '" + e.base + "/api/general-report?result_per_page=100&bom=true&delimiter=semicolon' -o general-report.csv",
		bearer + "'" + e.base + "/api/general-report?format=ndjson&rut=" + url.QueryEscape(e.rut) + "'",
		bearer + "'" + e.base + "/api/general-report?format=xlsx&result_per_page=10000' -o general-report.xlsx",
		"",
		"# the whole report in one file, with the fields you choose:",
		bearer + "'" + e.base + "/api/general-report/export?format=csv&columns=" + exportColumns + "' -o general-report.csv",
		"",
		"# Excel and Power BI (From Web with this URL, or From OData Feed with " + e.base + "/odata/):",
		"# no token in the URL; pick the Basic credential, user name token, the token as the password.",
		"# What they send, with curl:",
		"curl -u 'token:" + e.token + "' '" + e.base + "/api/general-report/export?format=csv&columns=" + exportColumns + "' -o general-report.csv",
		"",
		"# Google Sheets IMPORTDATA, which cannot send a credential: the token in the URL",
		"curl '" + e.base + "/api/general-report/export?format=csv&columns=" + exportColumns + "&access_token=" + e.token + "'",
		"",
		"# the same export, written to a file straight from the database:",
		"DATABASE_URL='" + e.dbURL + "' " + e.informe + " export --columns " + exportColumns + " --output general-report.xlsx",
	} {
		if line == "" {
			b.WriteString("\n")
			continue
		}
		fmt.Fprintf(&b, "  %s\n", line)
	}
	fmt.Fprintf(&b, "\nPress Ctrl-C to stop informe and its PostgreSQL.\n")
	io.WriteString(w, b.String())
}
