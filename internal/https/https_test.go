package https_test

import (
	"crypto/tls"
	"crypto/x509"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/informe/informe/internal/https"
	"github.com/informe/informe/internal/https/httpstest"
)

// TestCertFilesReload checks that a renewed pair is served without a
// restart, and that a broken one leaves the last good pair in use.
func TestCertFilesReload(t *testing.T) {
	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	httpstest.WritePair(t, certFile, keyFile, "first.example")
	files, err := https.LoadCertFiles(certFile, keyFile)
	if err != nil {
		t.Fatal(err)
	}
	files.CheckEvery = 0
	cn := func() string {
		c, err := files.GetCertificate(nil)
		if err != nil {
			t.Fatal(err)
		}
		leaf, err := x509.ParseCertificate(c.Certificate[0])
		if err != nil {
			t.Fatal(err)
		}
		return leaf.Subject.CommonName
	}
	if got := cn(); got != "first.example" {
		t.Fatalf("CN = %s", got)
	}
	httpstest.WritePair(t, certFile, keyFile, "second.example")
	if got := cn(); got != "second.example" {
		t.Errorf("after renewal CN = %s, want second.example", got)
	}
	if err := os.WriteFile(keyFile, []byte("half written"), 0o600); err != nil {
		t.Fatal(err)
	}
	if got := cn(); got != "second.example" {
		t.Errorf("with a broken key CN = %s, want the last good second.example", got)
	}
	if _, err := https.LoadCertFiles(certFile, keyFile); err == nil {
		t.Error("LoadCertFiles of a broken pair succeeded")
	}
}

func TestRedirect(t *testing.T) {
	for _, tt := range []struct {
		name, method, target, port string
		status                     int
		location                   string
	}{
		{"Get", "GET", "http://informe.example.cl/api/general-report?client_id=1", "443", 301, "https://informe.example.cl/api/general-report?client_id=1"},
		{"OtherPort", "GET", "http://informe.example.cl:8080/", "8443", 301, "https://informe.example.cl:8443/"},
		{"Post", "POST", "http://informe.example.cl/web/sign-in", "443", 308, "https://informe.example.cl/web/sign-in"},
		{"IPv6", "HEAD", "http://[::1]:80/x", "8443", 301, "https://[::1]:8443/x"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			w := httptest.NewRecorder()
			https.Redirect(tt.port).ServeHTTP(w, httptest.NewRequest(tt.method, tt.target, nil))
			if got, want := w.Code, tt.status; got != want {
				t.Errorf("status = %d, want %d", got, want)
			}
			if got, want := w.Header().Get("Location"), tt.location; got != want {
				t.Errorf("Location = %s, want %s", got, want)
			}
		})
	}
}

func TestHSTS(t *testing.T) {
	h := https.HSTS(http.NotFoundHandler(), 24*time.Hour)
	r := httptest.NewRequest("GET", "https://informe.example.cl/", nil)
	r.TLS = &tls.ConnectionState{}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	if got, want := w.Header().Get("Strict-Transport-Security"), "max-age=86400"; got != want {
		t.Errorf("over TLS: %q, want %q", got, want)
	}
	w = httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest("GET", "http://informe.example.cl/", nil))
	if got := w.Header().Get("Strict-Transport-Security"); got != "" {
		t.Errorf("over plain HTTP: %q, want none", got)
	}
}
