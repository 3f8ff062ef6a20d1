// Package https serves the API over HTTPS without a proxy: a certificate
// from files that are reloaded when they change (certificates renewed by
// other tools), or certificates from an ACME CA such as Let's Encrypt
// (golang.org/x/crypto/acme/autocert); the plain-HTTP listener's handler,
// which answers ACME's HTTP-01 challenges and redirects everything else to
// HTTPS; and HSTS.
package https

import (
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	"golang.org/x/crypto/acme"
	"golang.org/x/crypto/acme/autocert"
)

// CertFiles is a certificate and key read from PEM files, read again when
// either file's modification time or size changes. It checks the files at
// most once per CheckEvery, on a TLS handshake; a pair that fails to load
// (a renewal half written) leaves the last good one in use.
type CertFiles struct {
	certFile, keyFile string
	// CheckEvery bounds how often the files are looked at; see [LoadCertFiles].
	CheckEvery time.Duration

	mu      sync.Mutex
	cert    *tls.Certificate
	stamp   string // of the files the certificate was read from
	checked time.Time
}

// LoadCertFiles reads the key pair, failing if it does not load, and
// returns it ready for [CertFiles.GetCertificate], checking the files once
// a second.
func LoadCertFiles(certFile, keyFile string) (*CertFiles, error) {
	f := &CertFiles{certFile: certFile, keyFile: keyFile, CheckEvery: time.Second}
	if err := f.reload(); err != nil {
		return nil, err
	}
	return f, nil
}

// stampOf returns what identifies the files' current contents: their
// modification times and sizes.
func (f *CertFiles) stampOf() (string, error) {
	var b strings.Builder
	for _, name := range []string{f.certFile, f.keyFile} {
		fi, err := os.Stat(name)
		if err != nil {
			return "", err
		}
		fmt.Fprintf(&b, "%d/%d;", fi.ModTime().UnixNano(), fi.Size())
	}
	return b.String(), nil
}

func (f *CertFiles) reload() error {
	stamp, err := f.stampOf()
	if err != nil {
		return fmt.Errorf("https: %w", err)
	}
	cert, err := tls.LoadX509KeyPair(f.certFile, f.keyFile)
	if err != nil {
		return fmt.Errorf("https: certificate %s and key %s: %w", f.certFile, f.keyFile, err)
	}
	f.cert, f.stamp = &cert, stamp
	return nil
}

// GetCertificate returns the current certificate, first reading the files
// again if they changed since they were last read. It is a
// tls.Config.GetCertificate.
func (f *CertFiles) GetCertificate(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if now := time.Now(); now.Sub(f.checked) >= f.CheckEvery {
		f.checked = now
		if stamp, err := f.stampOf(); err == nil && stamp != f.stamp {
			_ = f.reload() // on failure the last good pair stays
		}
	}
	return f.cert, nil
}

// ACME returns a certificate manager for domains from the ACME CA at
// directory (Let's Encrypt's when empty), keeping its account key and
// certificates in cacheDir. email, if not empty, is given to the CA for
// expiry notices. client, if not nil, is the HTTP client that talks to the
// CA (a test CA's own roots).
func ACME(domains []string, cacheDir, directory, email string, client *http.Client) *autocert.Manager {
	m := &autocert.Manager{
		Prompt:     autocert.AcceptTOS,
		Cache:      autocert.DirCache(cacheDir),
		HostPolicy: autocert.HostWhitelist(domains...),
		Email:      email,
	}
	if directory != "" || client != nil {
		m.Client = &acme.Client{DirectoryURL: directory, HTTPClient: client}
	}
	return m
}

// Redirect returns the plain-HTTP listener's handler: it redirects every
// request to the same host and path over HTTPS, on httpsPort ("443" or ""
// leaves the port out). GET and HEAD get a 301; other methods a 308, which
// keeps the method and body. The access_token parameter, in any spelling,
// is left out of the new URL (its Location and its body): a token sent in
// the clear is spent, and repeating it would only send it on again. The
// handler reads no body: a request that announces one gets its answer and
// the connection is closed, so that a client cannot hold it by sending
// nothing.
func Redirect(httpsPort string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		host := r.Host
		if h, _, err := net.SplitHostPort(host); err == nil {
			host = h
		}
		if strings.Contains(host, ":") {
			host = "[" + host + "]" // IPv6 literal
		}
		if httpsPort != "" && httpsPort != "443" {
			host += ":" + httpsPort
		}
		code := http.StatusMovedPermanently
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			code = http.StatusPermanentRedirect
		}
		target := r.URL.EscapedPath()
		if q := withoutToken(r.URL.RawQuery); q != "" {
			target += "?" + q
		}
		h := w.Header()
		h.Set("X-Content-Type-Options", "nosniff")
		if r.ContentLength != 0 {
			// Nothing more is read from this connection, neither the body
			// (net/http would wait for it) nor another request.
			h.Set("Connection", "close")
			_ = http.NewResponseController(w).SetReadDeadline(time.Now())
		}
		http.Redirect(w, r, "https://"+host+target, code)
	})
}

// withoutToken returns the query string raw without its access_token
// parameters, whatever their spelling (ACCESS_TOKEN, access%5Ftoken, ...),
// the others as they were sent.
func withoutToken(raw string) string {
	if raw == "" {
		return ""
	}
	var kept []string
	for _, part := range strings.Split(raw, "&") {
		name, _, _ := strings.Cut(part, "=")
		if n, err := url.QueryUnescape(name); err == nil {
			name = n
		}
		if strings.EqualFold(name, "access_token") {
			continue
		}
		kept = append(kept, part)
	}
	return strings.Join(kept, "&")
}

// HSTS wraps h so that every response over TLS tells the browser to use
// HTTPS only for maxAge.
func HSTS(h http.Handler, maxAge time.Duration) http.Handler {
	value := fmt.Sprintf("max-age=%d", int64(maxAge/time.Second))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.TLS != nil {
			w.Header().Set("Strict-Transport-Security", value)
		}
		h.ServeHTTP(w, r)
	})
}
