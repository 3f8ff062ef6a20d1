// Package sshtest starts private OpenSSH servers for the tests of SFTP
// delivery, as pgtest starts databases for the tests of storage: the
// machine's own sshd, on a loopback port, with keys generated for the
// test, serving internal-sftp only, stopped by its PID at the test's end.
package sshtest

import (
	"bufio"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"io"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"

	"github.com/informe/informe/internal/testenv"
)

// Server is a running sshd.
type Server struct {
	Addr       string        // 127.0.0.1:port
	User       string        // who logs in: nobody when the test runs as root (so that permissions hold), else the test's user
	KeyFile    string        // the client's private key (ed25519, PEM, no passphrase), authorized for User
	KnownHosts string        // a known_hosts file holding HostKey for Addr
	HostKey    ssh.PublicKey // the server's key
	Dir        string        // a folder User may write in
}

// sshdPath finds OpenSSH's server.
func sshdPath() string {
	if p, err := exec.LookPath("sshd"); err == nil {
		return p
	}
	for _, p := range []string{"/usr/sbin/sshd", "/usr/local/sbin/sshd"} {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	return ""
}

// Start starts an sshd for tb, stopped (by its PID) when tb ends. A
// machine without sshd misses it (see [testenv.Missing]); scripts/test
// installs Debian's openssh-server.
func Start(tb testing.TB) *Server {
	tb.Helper()
	sshd := sshdPath()
	if sshd == "" {
		testenv.Missing(tb, "OpenSSH's sshd is not installed (Debian: apt-get install openssh-server)")
	}
	dir := tb.TempDir()
	// sshd reads authorized_keys as the user who logs in, and User
	// writes in Dir: open the test's folders to them.
	for _, d := range []string{filepath.Dir(dir), dir} {
		if err := os.Chmod(d, 0o755); err != nil {
			tb.Fatal(err)
		}
	}
	s := &Server{User: currentUser(tb), Dir: filepath.Join(dir, "files")}
	if err := os.Mkdir(s.Dir, 0o777); err != nil {
		tb.Fatal(err)
	}
	if err := os.Chmod(s.Dir, 0o777); err != nil {
		tb.Fatal(err)
	}
	hostKey := filepath.Join(dir, "host_ed25519")
	hostPub := writeKey(tb, hostKey)
	s.HostKey = hostPub
	s.KeyFile = filepath.Join(dir, "client_ed25519")
	clientPub := writeKey(tb, s.KeyFile)
	authorized := filepath.Join(dir, "authorized_keys")
	if err := os.WriteFile(authorized, ssh.MarshalAuthorizedKey(clientPub), 0o644); err != nil {
		tb.Fatal(err)
	}
	if os.Geteuid() == 0 {
		// sshd as root separates privileges into /run/sshd, which the
		// package's service would create at boot.
		if err := os.MkdirAll("/run/sshd", 0o755); err != nil {
			tb.Fatal(err)
		}
	}
	// A port that is free now may be taken before sshd binds it: try again
	// with another when sshd says so.
	for range 5 {
		port := freePort(tb)
		cfg := filepath.Join(dir, "sshd_config")
		conf := strings.Join([]string{
			"ListenAddress 127.0.0.1:" + port,
			"HostKey " + hostKey,
			"PidFile none",
			"AuthorizedKeysFile " + authorized,
			"StrictModes no",
			"UsePAM no",
			"PasswordAuthentication yes",
			"KbdInteractiveAuthentication no",
			"PermitRootLogin prohibit-password",
			"AllowUsers " + s.User,
			"Subsystem sftp internal-sftp",
			"ForceCommand internal-sftp",
			"LogLevel INFO",
			"",
		}, "\n")
		if err := os.WriteFile(cfg, []byte(conf), 0o644); err != nil {
			tb.Fatal(err)
		}
		cmd := exec.Command(sshd, "-D", "-e", "-f", cfg)
		stderr, err := cmd.StderrPipe()
		if err != nil {
			tb.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			tb.Fatal(err)
		}
		pid := cmd.Process.Pid
		// sshd writes "Server listening on 127.0.0.1 port N." once it listens.
		ready, log := waitListening(stderr)
		if !ready {
			cmd.Wait()
			if strings.Contains(log, "Address already in use") {
				continue
			}
			tb.Fatalf("sshd (pid %d) did not start:\n%s", pid, log)
		}
		go io.Copy(io.Discard, stderr) // sshd's log of each connection, which it must be able to write
		tb.Cleanup(func() {
			if p, err := os.FindProcess(pid); err == nil {
				p.Kill()
			}
			cmd.Wait()
		})
		s.Addr = "127.0.0.1:" + port
		s.KnownHosts = filepath.Join(dir, "known_hosts")
		line := knownhosts.Line([]string{knownhosts.Normalize(s.Addr)}, hostPub) + "\n"
		if err := os.WriteFile(s.KnownHosts, []byte(line), 0o644); err != nil {
			tb.Fatal(err)
		}
		return s
	}
	tb.Fatal("sshd found no free port")
	return nil
}

// waitListening reads sshd's log until it says it listens (true) or
// ends (false), and returns what it read.
func waitListening(r io.Reader) (bool, string) {
	var log strings.Builder
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		log.WriteString(sc.Text() + "\n")
		if strings.Contains(sc.Text(), "Server listening on") {
			return true, log.String()
		}
	}
	return false, log.String()
}

// currentUser is who logs in: nobody for root, so that the file
// permissions a test sets hold; else the test's own user, the only one a
// non-root sshd can log in.
func currentUser(tb testing.TB) string {
	if os.Geteuid() == 0 {
		return "nobody"
	}
	u, err := user.Current()
	if err != nil {
		tb.Fatal(err)
	}
	return u.Username
}

// freePort returns a loopback TCP port free at the time of the call.
func freePort(tb testing.TB) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	defer l.Close()
	_, port, _ := net.SplitHostPort(l.Addr().String())
	return port
}

// writeKey writes a new ed25519 private key to path in OpenSSH's PEM
// form, readable by its owner alone, and returns its public key.
func writeKey(tb testing.TB, path string) ssh.PublicKey {
	tb.Helper()
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		tb.Fatal(err)
	}
	block, err := ssh.MarshalPrivateKey(priv, "")
	if err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(path, pem.EncodeToMemory(block), 0o600); err != nil {
		tb.Fatal(err)
	}
	sp, err := ssh.NewPublicKey(pub)
	if err != nil {
		tb.Fatal(err)
	}
	return sp
}

// WriteKey writes a new private key to path, one the server does not
// authorize, for tests of a wrong key.
func WriteKey(tb testing.TB, path string) {
	tb.Helper()
	writeKey(tb, path)
}

// WriteKnownHosts writes a known_hosts file at path that holds a key for
// s.Addr other than s's, for tests of a changed host key.
func (s *Server) WriteKnownHosts(tb testing.TB, path string) {
	tb.Helper()
	other := writeKey(tb, path+".key")
	line := knownhosts.Line([]string{knownhosts.Normalize(s.Addr)}, other) + "\n"
	if err := os.WriteFile(path, []byte(line), 0o644); err != nil {
		tb.Fatal(err)
	}
}
