package https_test

import (
	"bufio"
	"crypto/tls"
	"crypto/x509"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
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
		{"NoToken", "GET", "http://informe.example.cl/odata/GeneralReport?access_token=informe_secret&$top=5", "443", 301, "https://informe.example.cl/odata/GeneralReport?$top=5"},
		{"NoTokenAnySpelling", "GET", "http://informe.example.cl/x?a=1&ACCESS_TOKEN=s1&access%5Ftoken=s2&%61ccess_token=s3&b=%20", "443", 301, "https://informe.example.cl/x?a=1&b=%20"},
		{"OnlyToken", "GET", "http://informe.example.cl/users?access_token=informe_secret", "443", 301, "https://informe.example.cl/users"},
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
			if body := w.Body.String(); strings.Contains(strings.ToLower(body), "s1") || strings.Contains(body, "secret") {
				t.Errorf("the body repeats the token: %s", body)
			}
			if got, want := w.Header().Get("X-Content-Type-Options"), "nosniff"; got != want {
				t.Errorf("X-Content-Type-Options = %q, want %q", got, want)
			}
		})
	}
}

// TestRedirectUnsentBody checks that a request announcing a body it never
// sends gets its redirect and its connection closed, rather than holding
// the connection while the server waits for the body.
func TestRedirectUnsentBody(t *testing.T) {
	srv := httptest.NewServer(https.Redirect("443"))
	defer srv.Close()
	conn, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	// A guard against a hang only; the test asserts what arrives.
	_ = conn.SetDeadline(time.Now().Add(30 * time.Second))
	if _, err := io.WriteString(conn, "POST /web/sign-in HTTP/1.1\r\nHost: informe.example.cl\r\nContent-Length: 100\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	r := bufio.NewReader(conn)
	resp, err := http.ReadResponse(r, nil)
	if err != nil {
		t.Fatalf("no response: %v", err)
	}
	if got, want := resp.StatusCode, http.StatusPermanentRedirect; got != want {
		t.Errorf("status = %d, want %d", got, want)
	}
	if _, err := io.Copy(io.Discard, resp.Body); err != nil {
		t.Fatal(err)
	}
	if n, err := r.Read(make([]byte, 1)); err != io.EOF {
		t.Errorf("after the response: %d bytes, %v; want the connection closed", n, err)
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
