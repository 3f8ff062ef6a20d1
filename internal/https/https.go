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

	"github.com/informe/informe/internal/secret"
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
// request to HTTPS, to the same path and query string. GET and HEAD get a
// 301; other methods a 308, which keeps the method and body. The answer
// carries Cache-Control: no-store and X-Content-Type-Options: nosniff.
//
// The new URL's host is never the request's Host header, which anyone may
// write: it is public's host when public is not nil (its port too when
// its scheme is https); else the Host header's name only when it is one of
// names (the ACME domains, which the operator named), or else names'
// first; else the address the connection reached. Other than public's
// port, the port is httpsPort ("443" or "" leaves it out).
//
// The new URL names no token, in its Location or in its body: a token sent
// in the clear is spent, and repeating it would only send it on again. A
// path that may hold a token becomes /; a query parameter that may hold
// one, or whose name is access_token in any spelling, is left out. The
// handler reads no body: a request that announces one gets its answer and
// the connection is closed, so that a client cannot hold it by sending
// nothing.
func Redirect(public *url.URL, names []string, httpsPort string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		code := http.StatusMovedPermanently
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			code = http.StatusPermanentRedirect
		}
		h := w.Header()
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Cache-Control", "no-store")
		if r.ContentLength != 0 {
			// Nothing more is read from this connection, neither the body
			// (net/http would wait for it) nor another request.
			h.Set("Connection", "close")
			_ = http.NewResponseController(w).SetReadDeadline(time.Now())
		}
		target := "https://" + redirectHost(r, public, names, httpsPort) + sanitise(r.URL)
		http.Redirect(w, r, target, code)
	})
}

// redirectHost returns the host, with its port, that [Redirect] sends r
// to.
func redirectHost(r *http.Request, public *url.URL, names []string, httpsPort string) string {
	var name string
	switch {
	case public != nil:
		if public.Scheme == "https" {
			return public.Host
		}
		name = public.Hostname()
	case len(names) > 0:
		name = names[0]
		asked := r.Host
		if h, _, err := net.SplitHostPort(asked); err == nil {
			asked = h
		}
		for _, n := range names {
			if strings.EqualFold(asked, n) {
				name = n
			}
		}
	default:
		name = "localhost" // only when r came from no connection
		if a, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok {
			if h, _, err := net.SplitHostPort(a.String()); err == nil {
				name = h
			}
		}
	}
	if strings.Contains(name, ":") {
		// An IPv6 literal, its zone's % escaped.
		name = "[" + strings.ReplaceAll(name, "%", "%25") + "]"
	}
	if httpsPort != "" && httpsPort != "443" {
		name += ":" + httpsPort
	}
	return name
}

// sanitise returns u's path and query string for the redirect, without
// anything that could carry a credential. A path that may hold a token
// anywhere (see [secret.MayHoldToken]), as sent or decoded once or more,
// becomes /. Of the query string, a parameter is left out when its name or
// value, as sent or decoded, may hold a token; when, decoded and stripped
// of everything but letters and digits, it holds "accesstoken" in any case
// (access_token, ACCESS_TOKEN, access%5Ftoken, access+token,
// access_token[], access_token%00, ...); or when it does not decode. The
// others stay as they were sent.
func sanitise(u *url.URL) string {
	path := u.EscapedPath()
	if path == "" || mayCarry(path, url.PathUnescape, false) || mayCarry(u.Path, url.PathUnescape, false) {
		path = "/"
	}
	if u.RawQuery == "" {
		return path
	}
	var kept []string
	for _, part := range strings.Split(u.RawQuery, "&") {
		if !mayCarry(part, url.QueryUnescape, true) {
			kept = append(kept, part)
		}
	}
	if len(kept) == 0 {
		return path
	}
	return path + "?" + strings.Join(kept, "&")
}

// mayCarry reports whether s, or s decoded by unescape once or again
// (until it no longer changes), may hold a token, or, when named,
// access_token under any spelling. Text that does not decode may carry
// anything.
func mayCarry(s string, unescape func(string) (string, error), named bool) bool {
	for range 8 {
		if secret.MayHoldToken(s) || named && namesAccessToken(s) {
			return true
		}
		d, err := unescape(s)
		if err != nil {
			return true
		}
		if d == s {
			return false
		}
		s = d
	}
	return true // encoded deeper than any client would
}

// namesAccessToken reports whether s holds "accesstoken", in any case,
// once everything but ASCII letters and digits is taken out.
func namesAccessToken(s string) bool {
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'A' && c <= 'Z':
			b = append(b, c+'a'-'A')
		case c >= 'a' && c <= 'z' || c >= '0' && c <= '9':
			b = append(b, c)
		}
	}
	return strings.Contains(string(b), "accesstoken")
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
