package destination

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"hash"
	"io"
	"mime"
	"net"
	"net/http"
	"net/url"
	"os"
	"path"
)

// SignatureHeader carries the signature of an https:// delivery's body:
// "sha256=" and the lowercase hex HMAC-SHA256 of the body's bytes under the
// destination's secret.
const SignatureHeader = "X-Informe-Signature"

// httpsDest is an https:// destination: a receiver that takes the file as
// the body of a POST to the URL, its name in the last path element.
//
// The body is signed (see [SignatureHeader]), and the signature must be
// known before the receiver can check it. It is sent as a header, not as
// a trailer, so the file is first written to an unlinked temporary file
// while its HMAC is computed, then POSTed from there with its length:
// memory stays bounded, and receivers and proxies that drop trailers (most
// do) still get the signature. The cost is the file's size on local disk
// for the time of one delivery.
type httpsDest struct {
	target
	secret secretRef
	caFile string
}

// parseHTTPS returns the destination of an https:// URL: a host, no user,
// the options secret_env or secret_file and, for a receiver whose
// certificate is not signed by a public authority, ca_file.
func parseHTTPS(u *url.URL, opts options) (Destination, error) {
	if u.User != nil {
		return nil, invalid("url", "url_syntax", "an https:// destination has no user: the body is signed with the secret of secret_env= or secret_file=")
	}
	if u.Hostname() == "" {
		return nil, invalid("url", "url_syntax", "an https:// destination needs a host")
	}
	if err := opts.known("https", "secret_env", "secret_file", "ca_file"); err != nil {
		return nil, err
	}
	sec, err := opts.secret("secret", true)
	if err != nil {
		return nil, err
	}
	ca, err := opts.absFile("ca_file", false)
	if err != nil {
		return nil, err
	}
	t, err := parseTarget(u)
	if err != nil {
		return nil, err
	}
	return &httpsDest{target: t, secret: sec, caFile: ca}, nil
}

// tlsConfig returns the TLS configuration of a connection to host, which
// trusts the certificates of caFile (if given) instead of the system's.
func tlsConfig(caFile, host string) (*tls.Config, error) {
	cfg := &tls.Config{ServerName: host, MinVersion: tls.VersionTLS12}
	if caFile == "" {
		return cfg, nil
	}
	pem, err := os.ReadFile(caFile)
	if err != nil {
		return nil, fail(ReasonFailed, err, "the ca_file %s cannot be read", caFile)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fail(ReasonFailed, nil, "the ca_file %s holds no PEM certificate", caFile)
	}
	cfg.RootCAs = pool
	return cfg, nil
}

// where is the host that messages name.
func (d *httpsDest) where() string { return d.u.Host }

// Open creates the unlinked temporary file the body is spooled to.
func (d *httpsDest) Open(ctx context.Context, name string) (Writer, error) {
	if err := checkName(name); err != nil {
		return nil, err
	}
	if ctx.Err() != nil {
		return nil, interrupted(ctx, d.where())
	}
	secret, err := d.secret.read(os.ReadFile)
	if err != nil {
		return nil, err
	}
	cfg, err := tlsConfig(d.caFile, d.u.Hostname())
	if err != nil {
		return nil, err
	}
	f, err := os.CreateTemp("", ".informe-https-*.tmp")
	if err != nil {
		return nil, fail(fileReason(err), err, "cannot create the local temporary file of a delivery to %s", d.where())
	}
	os.Remove(f.Name()) // unlinked: gone with the process, whatever happens
	t := &httpsTransfer{ctx: ctx, d: d, name: name, f: f, mac: hmac.New(sha256.New, []byte(secret)), tls: cfg}
	return &remote{ctx: ctx, where: d.where(), t: t}, nil
}

// Check makes a TLS connection to d's host and closes it: the host is
// reachable and its certificate trusted. It does not POST: a receiver
// would take an empty body for a file.
func (d *httpsDest) Check(ctx context.Context) error {
	if _, err := d.secret.read(os.ReadFile); err != nil {
		return err
	}
	cfg, err := tlsConfig(d.caFile, d.u.Hostname())
	if err != nil {
		return err
	}
	addr := d.u.Host
	if d.u.Port() == "" {
		addr = net.JoinHostPort(d.u.Hostname(), "443")
	}
	conn, err := (&tls.Dialer{Config: cfg}).DialContext(ctx, "tcp", addr)
	if err != nil {
		return d.netFailed(ctx, err)
	}
	return conn.Close()
}

// netFailed classifies err, of a connection to d's host.
func (d *httpsDest) netFailed(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return interrupted(ctx, d.where())
	}
	if untrusted(err) {
		return untrustedFailed(err, d.where())
	}
	return fail(ReasonUnreachable, err, "cannot reach %s", d.where())
}

// httpsTransfer spools a body, then POSTs it at commit.
type httpsTransfer struct {
	ctx  context.Context
	d    *httpsDest
	name string
	f    *os.File
	mac  hash.Hash
	n    int64
	tls  *tls.Config
}

func (w *httpsTransfer) write(p []byte) (int, error) {
	n, err := w.f.Write(p)
	w.mac.Write(p[:n])
	w.n += int64(n)
	if err != nil {
		return n, fail(fileReason(err), err, "cannot spool a delivery to %s on the local disk", w.d.where())
	}
	return n, nil
}

// commit POSTs the spooled body with its signature; only a 2xx answer is
// success.
func (w *httpsTransfer) commit() error {
	if _, err := w.f.Seek(0, io.SeekStart); err != nil {
		return fail(ReasonFailed, err, "cannot read back the spooled delivery to %s", w.d.where())
	}
	u := w.d.u
	u.RawQuery = "" // the options are informe's, not the receiver's
	u.Path = path.Join(w.d.dir, w.name)
	if w.d.dir == "" {
		u.Path = "/" + w.name
	}
	u.RawPath = ""
	req, err := http.NewRequestWithContext(w.ctx, http.MethodPost, u.String(), io.NopCloser(io.LimitReader(w.f, w.n)))
	if err != nil {
		return fail(ReasonFailed, err, "cannot build the request to %s", w.d.where())
	}
	req.ContentLength = w.n
	req.Header.Set("Content-Type", contentType(w.name))
	req.Header.Set("Content-Disposition", mime.FormatMediaType("attachment", map[string]string{"filename": w.name}))
	req.Header.Set(SignatureHeader, "sha256="+hex.EncodeToString(w.mac.Sum(nil)))
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig = w.tls
	client := &http.Client{Transport: tr, CheckRedirect: func(*http.Request, []*http.Request) error {
		return http.ErrUseLastResponse // a redirected POST is not delivered
	}}
	defer tr.CloseIdleConnections()
	res, err := client.Do(req)
	if err != nil {
		return w.d.netFailed(w.ctx, err)
	}
	io.Copy(io.Discard, io.LimitReader(res.Body, 64<<10))
	res.Body.Close()
	if res.StatusCode/100 == 2 {
		return nil
	}
	return statusFailed(res.StatusCode, w.d.where())
}

// statusFailed classifies a receiver's answer that is not a 2xx.
func statusFailed(status int, where string) error {
	reason := ReasonRejected
	switch {
	case status == http.StatusUnauthorized:
		reason = ReasonAuth
	case status == http.StatusForbidden:
		reason = ReasonPermission
	case status == http.StatusNotFound:
		reason = ReasonNotFound
	case status == http.StatusRequestEntityTooLarge, status == http.StatusInsufficientStorage:
		reason = ReasonFull
	case status == http.StatusRequestTimeout, status == http.StatusTooManyRequests, status >= 500:
		reason = ReasonUnreachable
	}
	return fail(reason, nil, "%s answered %d %s", where, status, http.StatusText(status))
}

// release closes the spooled body, which was sent; closing it cannot
// undo that.
func (w *httpsTransfer) release() error {
	w.f.Close()
	return nil
}

// abort discards the spooled body; nothing was sent.
func (w *httpsTransfer) abort() error { return w.f.Close() }
