package main

import (
	"crypto/tls"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/informe/informe/internal/https/httpstest"
	"github.com/informe/informe/internal/pgserver/pgtest"
)

// TestServeTLS runs `informe serve --tls-cert --tls-key`: the page and the
// API over HTTPS with HSTS, the sign-in cookie marked Secure, and the
// plain-HTTP listener redirecting to HTTPS.
func TestServeTLS(t *testing.T) {
	t.Parallel()
	bin := build(t)
	pool := pgtest.Seeded(t)
	dbURL := pool.Config().ConnString()
	pool.Close()
	token := strings.TrimSpace(run(t, bin, dbURL, "token", "create", "--name", "tls"))

	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	roots := httpstest.WritePair(t, certFile, keyFile, "127.0.0.1")
	s := startServe(t, bin, dbURL, "--tls-cert", certFile, "--tls-key", keyFile, "--http-addr", "127.0.0.1:0")
	if !strings.HasPrefix(s.api, "https://") || s.http == "" {
		t.Fatalf("serve logged api %q and http %q, want HTTPS and a plain-HTTP listener", s.api, s.http)
	}
	c := &http.Client{
		Timeout:       10 * time.Second,
		Transport:     &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots}},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}

	resp, err := c.Get(s.api + "/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Strict-Transport-Security"), "max-age=31536000") {
		t.Errorf("GET / over HTTPS: %d, HSTS %q", resp.StatusCode, resp.Header.Get("Strict-Transport-Security"))
	}

	req, _ := http.NewRequest(http.MethodPost, s.api+"/web/sign-in", strings.NewReader(`{"token":"`+token+`"}`))
	req.Header.Set("Origin", s.api)
	if resp, err = c.Do(req); err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if cookie := resp.Header.Get("Set-Cookie"); resp.StatusCode != 200 || !strings.Contains(cookie, "; Secure") {
		t.Errorf("sign-in over HTTPS: %d %s, Set-Cookie %q, want Secure", resp.StatusCode, body, cookie)
	}

	if resp, err = c.Get(s.http + "/api/general-report?client_id=1"); err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if want := s.api + "/api/general-report?client_id=1"; resp.StatusCode != 301 || resp.Header.Get("Location") != want {
		t.Errorf("plain HTTP: %d Location %q, want 301 %s", resp.StatusCode, resp.Header.Get("Location"), want)
	}
}
