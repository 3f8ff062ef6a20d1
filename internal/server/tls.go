package server

import (
	"crypto/tls"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"time"

	"github.com/informe/informe/internal/https"
)

// TLS says how the API is served over HTTPS: with a certificate from
// files, or from an ACME CA; its zero value is plain HTTP.
type TLS struct {
	// CertFile and KeyFile are the PEM certificate (with its chain) and
	// its private key, read again when they change. They go together,
	// and exclude ACMEDomains.
	CertFile, KeyFile string
	// ACMEDomains are the names to get certificates for from an ACME CA.
	ACMEDomains []string
	// ACMECache is the folder that keeps the ACME account key and
	// certificates across restarts.
	ACMECache string
	// ACMEDirectory is the CA's directory URL; "" is Let's Encrypt's
	// production CA.
	ACMEDirectory string
	// ACMEEmail is the contact address given to the CA.
	ACMEEmail string
	// HTTPAddr is, with HTTPS on, the plain-HTTP listen address that
	// redirects to HTTPS and answers ACME challenges; "" runs none.
	HTTPAddr string
	// HSTSMaxAge is, with HTTPS on, the max-age of Strict-Transport-Security;
	// 0 sends none.
	HSTSMaxAge time.Duration
}

// setUp turns apiSrv into an HTTPS server when t asks for it: its
// certificate, HSTS, and the plain-HTTP server (not yet serving) that
// redirects to public, or else to apiAddr's port (see [https.Redirect]). It
// returns nil, nil for plain HTTP.
func (t TLS) setUp(apiSrv *http.Server, apiAddr net.Addr, public *url.URL, logger *slog.Logger) (*http.Server, error) {
	switch {
	case t.CertFile == "" && t.KeyFile == "" && len(t.ACMEDomains) == 0:
		return nil, nil
	case (t.CertFile == "") != (t.KeyFile == ""):
		return nil, errors.New("--tls-cert and --tls-key go together")
	case t.CertFile != "" && len(t.ACMEDomains) > 0:
		return nil, errors.New("--tls-cert and --acme-domain are alternatives: give one")
	}
	_, port, _ := net.SplitHostPort(apiAddr.String())
	redirect := https.Redirect(public, t.ACMEDomains, port)
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if t.CertFile != "" {
		files, err := https.LoadCertFiles(t.CertFile, t.KeyFile)
		if err != nil {
			return nil, err
		}
		cfg.GetCertificate = files.GetCertificate
	} else {
		m := https.ACME(t.ACMEDomains, t.ACMECache, t.ACMEDirectory, t.ACMEEmail, nil)
		cfg = m.TLSConfig()
		cfg.MinVersion = tls.VersionTLS12
		redirect = m.HTTPHandler(redirect)
	}
	apiSrv.TLSConfig = cfg
	if t.HSTSMaxAge > 0 {
		apiSrv.Handler = https.HSTS(apiSrv.Handler, t.HSTSMaxAge)
	}
	if t.HTTPAddr == "" {
		return nil, nil
	}
	return newHTTPServer(redirect, logger), nil
}
