package destination

import (
	"bufio"
	"context"
	"errors"
	"io/fs"
	"net"
	"net/url"
	"os"
	"path"
	"time"

	"github.com/pkg/sftp"
	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"
)

// sftpDest is an sftp:// destination: a folder on an SSH server. A file is
// written to a hidden temporary name in that folder, then renamed over
// its name. With the server's posix-rename@openssh.com extension (OpenSSH
// has it) the rename replaces an older file of that name atomically; a
// server without it cannot rename over a file, so an older file is first
// removed and the new one renamed in its place: for that moment there is
// no file of that name, but never half of one.
//
// The server's key must be in the known_hosts file the URL names: an
// unknown host or a changed key is refused, never accepted.
type sftpDest struct {
	target
	addr       string // host:port
	user       string
	knownHosts string
	keyFile    string
	passphrase secretRef
	password   secretRef
}

// parseSFTP returns the destination of an sftp:// URL: a user, a host
// (port 22 unless written), and the options known_hosts (required),
// key_file, key_passphrase_env or key_passphrase_file, password_env or
// password_file (a key or a password at least).
func parseSFTP(u *url.URL, opts options) (Destination, error) {
	if u.User == nil || u.User.Username() == "" {
		return nil, invalid("url", "url_syntax", "an sftp:// destination names its user: sftp://user@host/folder/name")
	}
	if u.Hostname() == "" {
		return nil, invalid("url", "url_syntax", "an sftp:// destination needs a host")
	}
	if err := opts.known("sftp", "known_hosts", "key_file", "key_passphrase_env", "key_passphrase_file", "password_env", "password_file"); err != nil {
		return nil, err
	}
	d := &sftpDest{user: u.User.Username()}
	port := u.Port()
	if port == "" {
		port = "22"
	}
	d.addr = net.JoinHostPort(u.Hostname(), port)
	var err error
	if d.knownHosts, err = opts.absFile("known_hosts", true); err != nil {
		return nil, err
	}
	if d.keyFile, err = opts.absFile("key_file", false); err != nil {
		return nil, err
	}
	if d.passphrase, err = opts.secret("key_passphrase", false); err != nil {
		return nil, err
	}
	if d.passphrase.given() && d.keyFile == "" {
		return nil, invalid("key_passphrase_env", "option_missing", "a key passphrase needs key_file=")
	}
	if d.password, err = opts.secret("password", false); err != nil {
		return nil, err
	}
	if d.keyFile == "" && !d.password.given() {
		return nil, invalid("key_file", "option_missing", "an sftp:// destination needs key_file= (a private key's file) or password_env= or password_file=")
	}
	if d.target, err = parseTarget(u); err != nil {
		return nil, err
	}
	if d.dir == "" {
		d.dir = "/"
	}
	return d, nil
}

// where is what messages name: the server's address.
func (d *sftpDest) where() string { return d.addr }

// abortGrace is how long the connection of a cancelled delivery may still
// take to remove its temporary file before its reads and writes fail.
const abortGrace = 30 * time.Second

// session is one SSH connection and its SFTP client.
type session struct {
	conn   net.Conn
	ssh    *ssh.Client
	sftp   *sftp.Client
	cancel func() bool // stops the watch of ctx
}

func (s *session) close() error {
	s.cancel()
	s.sftp.Close()
	return s.ssh.Close()
}

// connect dials d's server, checks its key, authenticates and starts SFTP.
// Once connected, a cancel of ctx leaves the connection [abortGrace] to
// clean up.
func (d *sftpDest) connect(ctx context.Context) (*session, error) {
	if ctx.Err() != nil {
		return nil, interrupted(ctx, d.where())
	}
	hostKeys, err := knownhosts.New(d.knownHosts)
	if err != nil {
		return nil, fail(ReasonUnknownHost, err, "the known_hosts file %s cannot be read, so the key of %s cannot be checked", d.knownHosts, d.where())
	}
	var auths []ssh.AuthMethod
	tried := false // an authentication method was offered to the server
	if d.keyFile != "" {
		signer, err := d.signer()
		if err != nil {
			return nil, err
		}
		auths = append(auths, ssh.PublicKeysCallback(func() ([]ssh.Signer, error) {
			tried = true
			return []ssh.Signer{signer}, nil
		}))
	}
	if d.password.given() {
		pw, err := d.password.read(os.ReadFile)
		if err != nil {
			return nil, err
		}
		auths = append(auths, ssh.PasswordCallback(func() (string, error) {
			tried = true
			return pw, nil
		}))
	}
	var keyErr error
	cfg := &ssh.ClientConfig{
		User: d.user,
		Auth: auths,
		HostKeyCallback: func(host string, remote net.Addr, key ssh.PublicKey) error {
			keyErr = hostKeys(host, remote, key)
			return keyErr
		},
		HostKeyAlgorithms: knownAlgorithms(hostKeys, d.addr),
	}
	conn, err := (&net.Dialer{}).DialContext(ctx, "tcp", d.addr)
	if err != nil {
		if ctx.Err() != nil {
			return nil, interrupted(ctx, d.where())
		}
		return nil, fail(ReasonUnreachable, err, "cannot reach the SFTP server %s", d.where())
	}
	stop := context.AfterFunc(ctx, func() { conn.SetDeadline(time.Now()) })
	c, chans, reqs, err := ssh.NewClientConn(conn, d.addr, cfg)
	stop()
	if err != nil {
		conn.Close()
		return nil, d.handshakeFailed(ctx, err, keyErr, tried)
	}
	client := ssh.NewClient(c, chans, reqs)
	cancel := context.AfterFunc(ctx, func() { conn.SetDeadline(time.Now().Add(abortGrace)) })
	sc, err := sftp.NewClient(client, sftp.UseConcurrentWrites(true))
	if err != nil {
		cancel()
		client.Close()
		if ctx.Err() != nil {
			return nil, interrupted(ctx, d.where())
		}
		return nil, fail(ReasonFailed, err, "%s does not serve SFTP to %s", d.where(), d.user)
	}
	return &session{conn: conn, ssh: client, sftp: sc, cancel: cancel}, nil
}

// handshakeFailed classifies err of an SSH handshake, given what the host
// key check returned and whether authentication was tried.
func (d *sftpDest) handshakeFailed(ctx context.Context, err, keyErr error, tried bool) error {
	var ke *knownhosts.KeyError
	var re *knownhosts.RevokedError
	switch {
	case errors.As(keyErr, &ke) && len(ke.Want) == 0:
		return fail(ReasonUnknownHost, err, "the known_hosts file %s holds no key for %s: add the server's key to it", d.knownHosts, d.where())
	case errors.As(keyErr, &ke), errors.As(keyErr, &re):
		return fail(ReasonHostKey, err, "the key of %s is not the one its known_hosts file %s holds: the server changed, or it is not the server it claims to be", d.where(), d.knownHosts)
	case keyErr != nil:
		return fail(ReasonHostKey, err, "the key of %s cannot be checked against %s", d.where(), d.knownHosts)
	case ctx.Err() != nil:
		return interrupted(ctx, d.where())
	case tried:
		return fail(ReasonAuth, err, "%s refused the key or password of user %s", d.where(), d.user)
	}
	return fail(ReasonUnreachable, err, "the SSH handshake with %s failed", d.where())
}

// knownAlgorithms returns the key algorithms that known_hosts holds for
// addr, so that the server shows a key that can be checked; nil (any) if
// it holds none.
func knownAlgorithms(hostKeys ssh.HostKeyCallback, addr string) []string {
	tcp, err := net.ResolveTCPAddr("tcp", addr)
	if err != nil {
		return nil
	}
	var ke *knownhosts.KeyError
	if !errors.As(hostKeys(addr, tcp, probeKey{}), &ke) {
		return nil
	}
	var algos []string
	for _, k := range ke.Want {
		switch t := k.Key.Type(); t {
		case ssh.KeyAlgoRSA:
			algos = append(algos, ssh.KeyAlgoRSASHA512, ssh.KeyAlgoRSASHA256, t)
		default:
			algos = append(algos, t)
		}
	}
	return algos
}

// probeKey is a key no known_hosts holds, shown to the host key callback
// to learn which keys it wants.
type probeKey struct{}

func (probeKey) Type() string                        { return "informe-probe" }
func (probeKey) Marshal() []byte                     { return []byte("informe-probe") }
func (probeKey) Verify([]byte, *ssh.Signature) error { return errors.New("probe") }

// signer reads the private key of d's key_file.
func (d *sftpDest) signer() (ssh.Signer, error) {
	pem, err := os.ReadFile(d.keyFile)
	if err != nil {
		return nil, fail(ReasonSecret, err, "the key_file %s cannot be read", d.keyFile)
	}
	if d.passphrase.given() {
		pass, err := d.passphrase.read(os.ReadFile)
		if err != nil {
			return nil, err
		}
		s, err := ssh.ParsePrivateKeyWithPassphrase(pem, []byte(pass))
		if err != nil {
			return nil, fail(ReasonSecret, nil, "the key_file %s cannot be read with its passphrase", d.keyFile)
		}
		return s, nil
	}
	s, err := ssh.ParsePrivateKey(pem)
	var missing *ssh.PassphraseMissingError
	if errors.As(err, &missing) {
		return nil, fail(ReasonSecret, nil, "the key_file %s is protected by a passphrase: name it with key_passphrase_env= or key_passphrase_file=", d.keyFile)
	}
	if err != nil {
		return nil, fail(ReasonSecret, nil, "the key_file %s holds no private key informe can read", d.keyFile)
	}
	return s, nil
}

// failed classifies err, of an SFTP operation on d's server; writing says
// it was a write, whose generic failure is most often a full disk.
func (d *sftpDest) failed(ctx context.Context, err error, writing bool) error {
	if coded(err) {
		return err
	}
	if ctx.Err() != nil {
		return interrupted(ctx, d.where())
	}
	var st *sftp.StatusError
	code := uint32(0)
	if errors.As(err, &st) {
		code = st.Code
	}
	switch {
	case errors.Is(err, fs.ErrPermission) || code == uint32(sftp.ErrSSHFxPermissionDenied):
		return fail(ReasonPermission, err, "%s denies user %s writing in %s", d.where(), d.user, d.dir)
	case errors.Is(err, fs.ErrNotExist) || code == uint32(sftp.ErrSSHFxNoSuchFile):
		return fail(ReasonNotFound, err, "%s has no folder %s", d.where(), d.dir)
	case code == uint32(sftp.ErrSSHFxFailure) && writing:
		// SFTP version 3, which servers speak, has no "no space" status.
		return fail(ReasonFull, err, "%s failed to write in %s without saying why (SFTP cannot tell): most often its disk is full or a quota reached", d.where(), d.dir)
	case code != 0:
		return fail(ReasonFailed, err, "%s failed an operation in %s", d.where(), d.dir)
	}
	return fail(ReasonUnreachable, err, "the connection to %s failed", d.where())
}

// Open connects and creates name's temporary file in d's folder.
func (d *sftpDest) Open(ctx context.Context, name string) (Writer, error) {
	if err := checkName(name); err != nil {
		return nil, err
	}
	s, err := d.connect(ctx)
	if err != nil {
		return nil, err
	}
	tmp := path.Join(d.dir, tempName(name))
	f, err := s.sftp.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL)
	if err != nil {
		s.close()
		return nil, d.failed(ctx, err, false)
	}
	t := &sftpTransfer{ctx: ctx, d: d, s: s, f: f, tmp: tmp, final: path.Join(d.dir, name)}
	t.buf = bufio.NewWriterSize(f, 256<<10)
	return &remote{ctx: ctx, where: d.where(), t: t}, nil
}

// Check connects, creates a temporary file in d's folder and removes it.
func (d *sftpDest) Check(ctx context.Context) error {
	return openAndAbort(ctx, d, ".informe-check")
}

// sftpTransfer writes one file's temporary copy on an SFTP server.
type sftpTransfer struct {
	ctx   context.Context
	d     *sftpDest
	s     *session
	f     *sftp.File
	buf   *bufio.Writer
	tmp   string
	final string
}

func (w *sftpTransfer) write(p []byte) (int, error) {
	n, err := w.buf.Write(p)
	if err != nil {
		return n, w.d.failed(w.ctx, err, true)
	}
	return n, nil
}

// commit writes the rest, syncs the file when the server can
// (fsync@openssh.com), closes it and renames it over its name.
func (w *sftpTransfer) commit() error {
	if err := w.publish(); err != nil {
		return w.d.failed(w.ctx, err, true)
	}
	return nil
}

// publish is commit's work, whose errors commit classifies.
func (w *sftpTransfer) publish() error {
	if err := w.buf.Flush(); err != nil {
		return err
	}
	if v, ok := w.s.sftp.HasExtension("fsync@openssh.com"); ok && v == "1" {
		if err := w.f.Sync(); err != nil {
			return err
		}
	}
	if err := w.f.Close(); err != nil {
		return err
	}
	if w.ctx.Err() != nil {
		return interrupted(w.ctx, w.d.where())
	}
	if _, ok := w.s.sftp.HasExtension("posix-rename@openssh.com"); ok {
		return w.s.sftp.PosixRename(w.tmp, w.final)
	}
	if err := w.s.sftp.Rename(w.tmp, w.final); err == nil {
		return nil
	}
	// SFTP's own rename does not replace a file: remove the older one.
	if err := w.s.sftp.Remove(w.final); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return w.s.sftp.Rename(w.tmp, w.final)
}

// release closes the connection.
func (w *sftpTransfer) release() error { return w.s.close() }

// abort closes and removes the temporary file, and the connection.
func (w *sftpTransfer) abort() error {
	w.f.Close()
	err := w.s.sftp.Remove(w.tmp)
	return closeAll(func() error { return err }, w.s.close)
}
