package https_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/informe/informe/internal/https"

	"github.com/informe/informe/internal/testenv"
)

// Pebble, the ACME test server that the test builds from the Go module
// proxy.
const (
	pebbleModule  = "github.com/letsencrypt/pebble/v2"
	pebbleVersion = "v2.10.1"
)

// freePort returns a loopback port that was free a moment ago.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// startPebble builds and starts Pebble on loopback, validating HTTP-01
// challenges on httpPort, and returns its directory URL and an HTTP client
// that trusts its own (test) certificate. It skips the test when Pebble
// cannot be built (no network to the module proxy).
func startPebble(t *testing.T, httpPort int) (directory, management string, client *http.Client) {
	t.Helper()
	gobin := t.TempDir()
	install := exec.Command("go", "install", pebbleModule+"/cmd/pebble@"+pebbleVersion)
	install.Env = append(os.Environ(), "GOBIN="+gobin)
	if out, err := install.CombinedOutput(); err != nil {
		testenv.Missing(t, "cannot build Pebble from the Go module proxy: %v\n%s", err, out)
	}
	out, err := exec.Command("go", "mod", "download", "-json", pebbleModule+"@"+pebbleVersion).Output()
	if err != nil {
		testenv.Missing(t, "cannot download Pebble's module for its test certificates: %v", err)
	}
	var mod struct{ Dir string }
	if err := json.Unmarshal(out, &mod); err != nil {
		t.Fatal(err)
	}
	acmePort, mgmtPort := freePort(t), freePort(t)
	// Pebble's defaults listen on every interface; everything here stays on
	// loopback.
	cfg := map[string]any{"pebble": map[string]any{
		"listenAddress":                  fmt.Sprintf("127.0.0.1:%d", acmePort),
		"managementListenAddress":        fmt.Sprintf("127.0.0.1:%d", mgmtPort),
		"certificate":                    filepath.Join(mod.Dir, "test/certs/localhost/cert.pem"),
		"privateKey":                     filepath.Join(mod.Dir, "test/certs/localhost/key.pem"),
		"httpPort":                       httpPort,
		"tlsPort":                        freePort(t),
		"ocspResponderURL":               "",
		"externalAccountBindingRequired": false,
		"retryAfter":                     map[string]int{"authz": 1, "order": 1},
	}}
	b, _ := json.Marshal(cfg)
	cfgFile := filepath.Join(t.TempDir(), "pebble.json")
	if err := os.WriteFile(cfgFile, b, 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(filepath.Join(gobin, "pebble"), "-config", cfgFile)
	// autocert wants a name with a dot, which the system resolver Pebble
	// uses would not find on loopback: Pebble takes every challenge as
	// answered (the handler that answers them is autocert's own).
	cmd.Env = append(os.Environ(), "PEBBLE_VA_NOSLEEP=1", "PEBBLE_WFE_NONCEREJECT=0", "PEBBLE_VA_ALWAYS_VALID=1")
	logFile, err := os.Create(filepath.Join(t.TempDir(), "pebble.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if t.Failed() {
			b, _ := os.ReadFile(logFile.Name())
			t.Logf("pebble's log:\n%s", b)
		}
	})

	ca, err := os.ReadFile(filepath.Join(mod.Dir, "test/certs/pebble.minica.pem"))
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(ca)
	client = &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots}}}
	directory = fmt.Sprintf("https://127.0.0.1:%d/dir", acmePort)
	for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		resp, err := client.Get(directory)
		if err == nil {
			resp.Body.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("Pebble did not answer: %v", err)
		}
	}
	return directory, fmt.Sprintf("https://127.0.0.1:%d", mgmtPort), client
}

// TestACME gets a certificate from Pebble, a local ACME CA, and serves
// HTTPS with it; the plain-HTTP listener redirects to HTTPS.
func TestACME(t *testing.T) {
	httpLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	directory, management, client := startPebble(t, httpLn.Addr().(*net.TCPAddr).Port)

	tlsLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	_, tlsPort, _ := net.SplitHostPort(tlsLn.Addr().String())
	m := https.ACME([]string{"informe.test"}, t.TempDir(), directory, "", client)
	httpSrv := &http.Server{Handler: m.HTTPHandler(https.Redirect(nil, []string{"informe.test"}, tlsPort))}
	go httpSrv.Serve(httpLn)
	defer httpSrv.Close()
	apiSrv := &http.Server{
		Handler:   https.HSTS(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") }), time.Hour),
		TLSConfig: m.TLSConfig(),
	}
	go apiSrv.ServeTLS(tlsLn, "", "")
	defer apiSrv.Close()

	// Pebble's issuing root changes with every start: ask for it.
	resp, err := client.Get(management + "/roots/0")
	if err != nil {
		t.Fatal(err)
	}
	root, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(root) {
		t.Fatalf("Pebble's root: %s", root)
	}
	browser := &http.Client{
		Timeout: 60 * time.Second,
		Transport: &http.Transport{
			TLSClientConfig: &tls.Config{RootCAs: pool},
			DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
				return (&net.Dialer{}).DialContext(ctx, network, tlsLn.Addr().String())
			},
		},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	resp, err = browser.Get("https://informe.test:" + tlsPort + "/")
	if err != nil {
		t.Fatalf("HTTPS with the ACME certificate: %v", err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || string(body) != "ok" || resp.Header.Get("Strict-Transport-Security") != "max-age=3600" {
		t.Errorf("HTTPS: %d %q HSTS %q", resp.StatusCode, body, resp.Header.Get("Strict-Transport-Security"))
	}
	if issuer := resp.TLS.PeerCertificates[0].Issuer.CommonName; issuer == "" {
		t.Error("no issuer")
	} else {
		t.Logf("certificate for %v issued by %s", resp.TLS.PeerCertificates[0].DNSNames, issuer)
	}

	// The plain-HTTP listener redirects to HTTPS, on the ACME domain.
	plain := &http.Client{Timeout: 10 * time.Second, CheckRedirect: browser.CheckRedirect}
	resp, err = plain.Get("http://" + httpLn.Addr().String() + "/api/general-report?client_id=1")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if want := "https://informe.test:" + tlsPort + "/api/general-report?client_id=1"; resp.StatusCode != 301 || resp.Header.Get("Location") != want {
		t.Errorf("plain HTTP: %d Location %s, want 301 %s", resp.StatusCode, resp.Header.Get("Location"), want)
	}
}
