package main

import (
	"crypto/tls"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/urfave/cli/v3"

	"github.com/informe/informe/internal/https"
)

// tlsFlags are serve's HTTPS flags: a certificate from files, or from an
// ACME CA, the plain-HTTP listener that redirects to HTTPS, and HSTS.
func tlsFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "tls-cert", Sources: cli.EnvVars("INFORME_TLS_CERT"),
			Usage: "PEM certificate `file` (with its chain) to serve the API over HTTPS; read again when it changes"},
		&cli.StringFlag{Name: "tls-key", Sources: cli.EnvVars("INFORME_TLS_KEY"),
			Usage: "PEM private key `file` of --tls-cert; read again when it changes"},
		&cli.StringSliceFlag{Name: "acme-domain", Sources: cli.EnvVars("INFORME_ACME_DOMAIN"),
			Usage: "serve the API over HTTPS with certificates for this `domain` from an ACME CA (Let's Encrypt); repeat for more names; needs --http-addr reachable on port 80"},
		&cli.StringFlag{Name: "acme-cache", Value: "/var/lib/informe/acme", Sources: cli.EnvVars("INFORME_ACME_CACHE"),
			Usage: "`folder` that keeps the ACME account key and certificates across restarts"},
		&cli.StringFlag{Name: "acme-directory", Sources: cli.EnvVars("INFORME_ACME_DIRECTORY"),
			Usage: "ACME directory `URL`; empty is Let's Encrypt's production CA"},
		&cli.StringFlag{Name: "acme-email", Sources: cli.EnvVars("INFORME_ACME_EMAIL"),
			Usage: "contact `address` given to the ACME CA for expiry notices"},
		&cli.StringFlag{Name: "http-addr", Value: ":80", Sources: cli.EnvVars("INFORME_HTTP_ADDR"),
			Usage: "with HTTPS on, the plain-HTTP listen `address` that redirects to HTTPS and answers ACME challenges; empty disables"},
		&cli.DurationFlag{Name: "hsts-max-age", Value: 365 * 24 * time.Hour, Sources: cli.EnvVars("INFORME_HSTS_MAX_AGE"),
			Usage: "with HTTPS on, how long browsers must use HTTPS only (Strict-Transport-Security); 0 sends none"},
	}
}

// setUpTLS turns apiSrv into an HTTPS server when the flags ask for it:
// its certificate, HSTS, and the plain-HTTP server (not yet serving) that
// redirects to apiAddr's port. It returns nil, nil for plain HTTP.
func setUpTLS(cmd *cli.Command, apiSrv *http.Server, apiAddr net.Addr, logger *slog.Logger) (*http.Server, error) {
	certFile, keyFile, domains := cmd.String("tls-cert"), cmd.String("tls-key"), cmd.StringSlice("acme-domain")
	switch {
	case certFile == "" && keyFile == "" && len(domains) == 0:
		return nil, nil
	case (certFile == "") != (keyFile == ""):
		return nil, errors.New("--tls-cert and --tls-key go together")
	case certFile != "" && len(domains) > 0:
		return nil, errors.New("--tls-cert and --acme-domain are alternatives: give one")
	}
	_, port, _ := net.SplitHostPort(apiAddr.String())
	redirect := https.Redirect(port)
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if certFile != "" {
		files, err := https.LoadCertFiles(certFile, keyFile)
		if err != nil {
			return nil, err
		}
		cfg.GetCertificate = files.GetCertificate
	} else {
		m := https.ACME(domains, cmd.String("acme-cache"), cmd.String("acme-directory"), cmd.String("acme-email"), nil)
		cfg = m.TLSConfig()
		cfg.MinVersion = tls.VersionTLS12
		redirect = m.HTTPHandler(redirect)
	}
	apiSrv.TLSConfig = cfg
	if age := cmd.Duration("hsts-max-age"); age > 0 {
		apiSrv.Handler = https.HSTS(apiSrv.Handler, age)
	}
	if cmd.String("http-addr") == "" {
		return nil, nil
	}
	return newHTTPServer(redirect, logger), nil
}
