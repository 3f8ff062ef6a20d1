// Package pgserver runs private PostgreSQL servers from the machine's
// binaries, for the demo, the tests and the benchmarks: a cluster in a
// folder of its own, listening on loopback only with a password, run as an
// unprivileged user when informe runs as root ([Start]).
package pgserver

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
)

// Options configures [Start].
type Options struct {
	// Dir is the server's folder: its data, password and log live inside.
	// It is created if missing and reused if it already holds a cluster.
	Dir string
	// Port is the loopback TCP port; 0 picks a free one.
	Port int
	// Settings are extra postgres -c settings, such as fsync=off for tests.
	Settings map[string]string
	// RunAs is the unprivileged user that runs PostgreSQL when informe runs
	// as root (PostgreSQL refuses to run as root). Default "postgres".
	RunAs string
}

// Server is a private PostgreSQL server started by [Start], listening
// on loopback only, with password authentication.
type Server struct {
	dir      string
	port     int
	password string
	cmd      *exec.Cmd
	exited   chan struct{}
	exitErr  error
	log      *os.File
}

const serverUser = "informe"

// Start initializes a cluster in opts.Dir if there is none yet, starts
// PostgreSQL on 127.0.0.1 and waits until it accepts connections. The server
// runs until [Server.Stop]. It fails if PostgreSQL's binaries cannot be found
// (initdb and postgres on PATH, or under /usr/lib/postgresql/*/bin), and with
// an [*InUseError] when a PostgreSQL already runs on opts.Dir.
func Start(ctx context.Context, opts Options) (*Server, error) {
	bin, err := findBinaries()
	if err != nil {
		return nil, err
	}
	cred, uid, gid, err := runAs(opts.RunAs)
	if err != nil {
		return nil, err
	}
	dir, err := filepath.Abs(opts.Dir)
	if err != nil {
		return nil, fmt.Errorf("server: %w", err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("server: %w", err)
	}
	if cred != nil {
		// The unprivileged user must reach the data folder through dir.
		if err := os.Chmod(dir, 0o755); err != nil {
			return nil, fmt.Errorf("server: %w", err)
		}
		if err := reachable(dir, uid, gid); err != nil {
			return nil, err
		}
	}
	if pid, ok := RunningPID(dir); ok {
		return nil, &InUseError{Dir: dir, PID: pid}
	}
	s := &Server{dir: dir, port: opts.Port, exited: make(chan struct{})}
	data := filepath.Join(dir, "pgdata")
	pwPath := filepath.Join(dir, "password")

	if _, err := os.Stat(filepath.Join(data, "PG_VERSION")); errors.Is(err, os.ErrNotExist) {
		if err := s.initdb(ctx, bin, data, pwPath, cred, uid, gid); err != nil {
			return nil, err
		}
	} else if err != nil {
		return nil, fmt.Errorf("server: %w", err)
	}
	pw, err := os.ReadFile(pwPath)
	if err != nil {
		return nil, fmt.Errorf("server: read password: %w", err)
	}
	s.password = strings.TrimSpace(string(pw))

	s.log, err = os.OpenFile(filepath.Join(dir, "postgres.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("server: %w", err)
	}
	args := []string{"-D", data,
		"-c", "listen_addresses=127.0.0.1",
		"-c", "unix_socket_directories=",
		"-c", "timezone=UTC",
	}
	keys := make([]string, 0, len(opts.Settings))
	for k := range opts.Settings {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		args = append(args, "-c", k+"="+opts.Settings[k])
	}
	// A port picked here is free when picked, but an outgoing connection
	// (its local port) or another server can take it before postgres binds
	// it: then postgres exits at once, and another port is picked.
	picked := s.port == 0
	for attempt := 1; ; attempt++ {
		if picked {
			if s.port, err = pickPort(); err != nil {
				s.log.Close()
				return nil, err
			}
		}
		err = s.launch(ctx, bin, append(args, "-c", "port="+strconv.Itoa(s.port)), cred)
		if err == nil {
			return s, nil
		}
		if !picked || attempt == 3 || !errors.Is(err, errPortTaken) {
			s.log.Close()
			return nil, err
		}
	}
}

// errPortTaken is launch's error when postgres exited because its port was
// in use.
var errPortTaken = errors.New("server: the port was taken")

// launch runs postgres with args and waits until it accepts connections.
func (s *Server) launch(ctx context.Context, bin binaries, args []string, cred *syscall.Credential) error {
	s.exited = make(chan struct{})
	s.cmd = exec.Command(bin.postgres, args...)
	s.cmd.Stdout, s.cmd.Stderr = s.log, s.log
	// Its own process group: a Ctrl-C at the terminal reaches informe only,
	// which then stops the server in order, after the HTTP server.
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Credential: cred}
	var logStart int64
	if fi, err := s.log.Stat(); err == nil {
		logStart = fi.Size()
	}
	if err := s.cmd.Start(); err != nil {
		return fmt.Errorf("server: start postgres: %w", err)
	}
	cmd, exited := s.cmd, s.exited
	go func() {
		s.exitErr = cmd.Wait()
		close(exited)
	}()
	if err := s.waitReady(ctx); err != nil {
		select {
		case <-exited:
			// The log is complete once postgres has exited. PostgreSQL's
			// startup message has no SQLSTATE: its words it is, in the C
			// locale the server runs with.
			if b, rerr := os.ReadFile(s.log.Name()); rerr == nil && int64(len(b)) >= logStart &&
				bytes.Contains(b[logStart:], []byte("could not bind")) && bytes.Contains(b[logStart:], []byte("already in use")) {
				return fmt.Errorf("%w: %w", errPortTaken, err)
			}
		default:
		}
		_ = s.stopProcess(context.Background())
		return err
	}
	return nil
}

func (s *Server) initdb(ctx context.Context, bin binaries, data, pwPath string, cred *syscall.Credential, uid, gid int) error {
	pw := make([]byte, 24)
	if _, err := rand.Read(pw); err != nil {
		return fmt.Errorf("server: %w", err)
	}
	password := hex.EncodeToString(pw)
	if err := os.WriteFile(pwPath, []byte(password+"\n"), 0o600); err != nil {
		return fmt.Errorf("server: %w", err)
	}
	if err := os.MkdirAll(data, 0o700); err != nil {
		return fmt.Errorf("server: %w", err)
	}
	// initdb reads the password from a file the server's user can read; it
	// is removed as soon as initdb is done.
	initPw := filepath.Join(s.dir, ".initdb-password")
	if err := os.WriteFile(initPw, []byte(password+"\n"), 0o600); err != nil {
		return fmt.Errorf("server: %w", err)
	}
	defer os.Remove(initPw)
	if cred != nil {
		for _, p := range []string{data, initPw} {
			if err := os.Chown(p, uid, gid); err != nil {
				return fmt.Errorf("server: %w", err)
			}
		}
	}
	cmd := exec.CommandContext(ctx, bin.initdb, "-D", data, "-U", serverUser,
		"--pwfile="+initPw, "--auth=scram-sha-256", "-E", "UTF8", "--no-locale", "--no-sync")
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		os.RemoveAll(data)
		return fmt.Errorf("server: initdb: %w\n%s", err, out.String())
	}
	return nil
}

func (s *Server) waitReady(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	for {
		// A connection attempt ends when postgres exits: whatever else
		// listens on the port (and may never answer) is not waited for.
		cctx, ccancel := context.WithCancel(ctx)
		go func() {
			select {
			case <-s.exited:
				ccancel()
			case <-cctx.Done():
			}
		}()
		conn, err := pgx.Connect(cctx, s.URL("postgres"))
		ccancel()
		if err == nil {
			conn.Close(ctx)
			return nil
		}
		select {
		case <-s.exited:
			return fmt.Errorf("server: postgres exited (%v); log %s:\n%s", s.exitErr, s.log.Name(), tail(s.log.Name(), 2000))
		case <-ctx.Done():
			return fmt.Errorf("server: postgres not ready: %w (last error: %v)", ctx.Err(), err)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// InUseError is the error of [Start] when another PostgreSQL already runs
// on the folder.
type InUseError struct {
	Dir string // the server's folder
	PID int    // the running postmaster's process id
}

func (e *InUseError) Error() string {
	return fmt.Sprintf("server: %s is in use by a running PostgreSQL (pid %d)", e.Dir, e.PID)
}

// RunningPID returns the process id of the PostgreSQL that runs on the
// server folder dir, as its postmaster.pid says, with ok true when that
// process is alive. A postmaster.pid left behind by a crash names a process
// that is gone (ok false); PostgreSQL then starts over it.
func RunningPID(dir string) (pid int, ok bool) {
	b, err := os.ReadFile(filepath.Join(dir, "pgdata", "postmaster.pid"))
	if err != nil {
		return 0, false
	}
	first, _, _ := strings.Cut(string(b), "\n")
	pid, err = strconv.Atoi(strings.TrimSpace(first))
	if err != nil || pid <= 0 {
		return 0, false
	}
	// Signal 0 checks that the process exists; EPERM means it does, under
	// another user (the postgres user, when informe runs as root).
	if err := syscall.Kill(pid, 0); err != nil && !errors.Is(err, syscall.EPERM) {
		return 0, false
	}
	return pid, true
}

// Port returns the TCP port the server listens on.
func (s *Server) Port() int { return s.port }

// URL returns a connection URL for the named database on the server.
func (s *Server) URL(dbname string) string {
	u := url.URL{
		Scheme:   "postgres",
		User:     url.UserPassword(serverUser, s.password),
		Host:     net.JoinHostPort("127.0.0.1", strconv.Itoa(s.port)),
		Path:     "/" + dbname,
		RawQuery: "sslmode=disable",
	}
	return u.String()
}

// Stop shuts the server down (PostgreSQL's fast shutdown: open sessions are
// ended and their transactions rolled back) and waits for it to exit. If ctx
// ends first, the server is killed.
func (s *Server) Stop(ctx context.Context) error {
	defer s.log.Close()
	return s.stopProcess(ctx)
}

// stopProcess stops postgres as [Server.Stop] does, leaving the log open.
func (s *Server) stopProcess(ctx context.Context) error {
	select {
	case <-s.exited:
		return nil
	default:
	}
	_ = s.cmd.Process.Signal(syscall.SIGINT)
	select {
	case <-s.exited:
		return nil
	case <-ctx.Done():
		_ = s.cmd.Process.Kill()
		<-s.exited
		return fmt.Errorf("server: killed after %w", ctx.Err())
	}
}

// Close stops the server like [Server.Stop], giving it 30 seconds before
// it is killed.
func (s *Server) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return s.Stop(ctx)
}

type binaries struct{ initdb, postgres string }

// findBinaries looks for initdb and postgres side by side: on PATH first,
// then in the newest /usr/lib/postgresql/*/bin.
func findBinaries() (binaries, error) {
	if initdb, err := exec.LookPath("initdb"); err == nil {
		if postgres, err := exec.LookPath("postgres"); err == nil {
			return binaries{initdb, postgres}, nil
		}
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool { return pgMajor(dirs[i]) > pgMajor(dirs[j]) })
	for _, d := range dirs {
		b := binaries{filepath.Join(d, "initdb"), filepath.Join(d, "postgres")}
		if isExecutable(b.initdb) && isExecutable(b.postgres) {
			return b, nil
		}
	}
	return binaries{}, errors.New("server: PostgreSQL server binaries not found (initdb and postgres on PATH or under /usr/lib/postgresql/*/bin); on Debian or Ubuntu: apt-get install postgresql")
}

func pgMajor(binDir string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(binDir)))
	return n
}

func isExecutable(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0
}

// runAs returns the credential to run PostgreSQL with: none when informe is
// not root, else the unprivileged user's.
func runAs(name string) (*syscall.Credential, int, int, error) {
	if os.Geteuid() != 0 {
		return nil, os.Geteuid(), os.Getegid(), nil
	}
	if name == "" {
		name = "postgres"
	}
	u, err := user.Lookup(name)
	if err != nil {
		return nil, 0, 0, fmt.Errorf("server: PostgreSQL refuses to run as root and user %q to run it as was not found: %w", name, err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, uid, gid, nil
}

// reachable checks that user uid (group gid) can pass through every folder
// above dir, so that PostgreSQL, running as that user, can reach its data.
func reachable(dir string, uid, gid int) error {
	for d := filepath.Dir(dir); ; d = filepath.Dir(d) {
		fi, err := os.Stat(d)
		if err != nil {
			return fmt.Errorf("server: %w", err)
		}
		st, ok := fi.Sys().(*syscall.Stat_t)
		mode := fi.Mode().Perm()
		if ok && !(int(st.Uid) == uid && mode&0o100 != 0 || int(st.Gid) == gid && mode&0o010 != 0 || mode&0o001 != 0) {
			return fmt.Errorf("server: PostgreSQL runs as an unprivileged user (uid %d) that cannot enter %s; choose a data folder it can reach, or chmod o+x %s", uid, d, d)
		}
		if d == filepath.Dir(d) {
			return nil
		}
	}
}

// pickPort is freePort, replaced by a test to give a taken port.
var pickPort = freePort

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("server: pick a port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func tail(path string, n int64) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.Size() > n {
		_, _ = f.Seek(-n, io.SeekEnd)
	}
	b, _ := io.ReadAll(f)
	return string(b)
}
