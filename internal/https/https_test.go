package https_test

import (
	"bufio"
	"crypto/tls"
	"crypto/x509"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/informe/informe/internal/https"
	"github.com/informe/informe/internal/https/httpstest"
	"github.com/informe/informe/internal/testenv"
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

// token is a well-formed informe token, as a client would send it.
const token = "informe_Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4zAb7dEf0hIj3"

// body is token's body without its prefix.
const body = "Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4zAb7dEf0hIj3"

// rawGet sends target with host as its Host header over a new connection
// to addr, as written (no client tidies it), and returns the response and
// its body.
func rawGet(t *testing.T, addr, method, target, host string) (*http.Response, string) {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	// A guard against a hang only; the test asserts what arrives.
	_ = conn.SetDeadline(time.Now().Add(30 * time.Second))
	if _, err := io.WriteString(conn, method+" "+target+" HTTP/1.1\r\nHost: "+host+"\r\nConnection: close\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), &http.Request{Method: method})
	if err != nil {
		t.Fatalf("no response: %v", err)
	}
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, string(b)
}

// serveRedirect serves h on a loopback port of network ("tcp4" or
// "tcp6") until the test ends and returns the address.
func serveRedirect(t *testing.T, network string, h http.Handler) string {
	t.Helper()
	host := "127.0.0.1"
	if network == "tcp6" {
		host = "[::1]"
	}
	ln, err := net.Listen(network, host+":0")
	if err != nil {
		testenv.Missing(t, "no loopback on %s: %v", network, err)
	}
	srv := &http.Server{Handler: h}
	go srv.Serve(ln) //nolint:errcheck // ends with Close
	t.Cleanup(func() { srv.Close() })
	return ln.Addr().String()
}

// TestRedirect checks where the plain-HTTP listener sends each request:
// the same path and query string over HTTPS, on the host the operator
// named (the public URL, the ACME domains) or else the address the
// connection reached, never the Host header; 301 for GET and HEAD, 308
// for the rest; with no-store and nosniff.
func TestRedirect(t *testing.T) {
	public := func(s string) *url.URL {
		u, err := url.Parse(s)
		if err != nil {
			t.Fatal(err)
		}
		return u
	}
	for _, tt := range []struct {
		name, network, method, target, host string
		public                              *url.URL
		names                               []string
		port                                string
		status                              int
		location                            string // {addr} is the listener's host
	}{
		{"Get", "tcp4", "GET", "/api/general-report?client_id=1", "informe.example.cl", nil, nil, "443", 301, "https://{addr}/api/general-report?client_id=1"},
		{"OtherPort", "tcp4", "GET", "/", "informe.example.cl:8080", nil, nil, "8443", 301, "https://{addr}:8443/"},
		{"Post", "tcp4", "POST", "/web/sign-in", "informe.example.cl", nil, nil, "443", 308, "https://{addr}/web/sign-in"},
		{"IPv6", "tcp6", "HEAD", "/x", "[::1]:80", nil, nil, "8443", 301, "https://[::1]:8443/x"},
		{"HostIgnored", "tcp4", "GET", "/users", "evil.example", nil, nil, "8443", 301, "https://{addr}:8443/users"},
		{"PublicURL", "tcp4", "GET", "/users?page=2", "evil.example", public("https://informe.example.cl/informe"), nil, "8443", 301, "https://informe.example.cl/users?page=2"},
		{"PublicURLPort", "tcp4", "GET", "/", "evil.example", public("https://informe.example.cl:9443"), nil, "8443", 301, "https://informe.example.cl:9443/"},
		{"PublicURLPlainHTTP", "tcp4", "GET", "/", "evil.example", public("http://informe.example.cl:8080"), nil, "8443", 301, "https://informe.example.cl:8443/"},
		{"ACMEName", "tcp4", "GET", "/", "INFORME.example.cl:80", nil, []string{"a.example.cl", "informe.example.cl"}, "443", 301, "https://informe.example.cl/"},
		{"ACMENotName", "tcp4", "GET", "/", "evil.example", nil, []string{"a.example.cl", "informe.example.cl"}, "443", 301, "https://a.example.cl/"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			addr := serveRedirect(t, tt.network, https.Redirect(tt.public, tt.names, tt.port))
			host, _, _ := net.SplitHostPort(addr)
			resp, _ := rawGet(t, addr, tt.method, tt.target, tt.host)
			if got, want := resp.StatusCode, tt.status; got != want {
				t.Errorf("status = %d, want %d", got, want)
			}
			if got, want := resp.Header.Get("Location"), strings.ReplaceAll(tt.location, "{addr}", host); got != want {
				t.Errorf("Location = %s, want %s", got, want)
			}
			if got, want := resp.Header.Get("X-Content-Type-Options"), "nosniff"; got != want {
				t.Errorf("X-Content-Type-Options = %q, want %q", got, want)
			}
			if got, want := resp.Header.Get("Cache-Control"), "no-store"; got != want {
				t.Errorf("Cache-Control = %q, want %q", got, want)
			}
		})
	}
}

// TestRedirectNamesNoToken sends a token, or a credential under a name
// like access_token, in every shape a client might, and checks that the
// redirect repeats none of it, in its Location or its body, and keeps the
// parameters that hold none.
func TestRedirectNamesNoToken(t *testing.T) {
	if len(body) != 43 || !strings.HasSuffix(token, body) {
		t.Fatal("the test's token is not well formed")
	}
	addr := serveRedirect(t, "tcp4", https.Redirect(nil, nil, "443"))
	base := "https://127.0.0.1"
	for _, tt := range []struct {
		name, target, location string
	}{
		{"AccessToken", "/odata/GeneralReport?access_token=" + token + "&$top=5", "/odata/GeneralReport?$top=5"},
		{"OnlyToken", "/users?access_token=" + token, "/users"},
		{"Spellings", "/x?a=1&ACCESS_TOKEN=s1cret&access%5Ftoken=s2cret&%61ccess_token=s3cret&%2561ccess_token=s4cret&b=%20", "/x?a=1&b=%20"},
		{"NameNul", "/x?a=1&access_token%00=s1cret", "/x?a=1"},
		{"NamePlus", "/x?access+token=s1cret&a=1", "/x?a=1"},
		{"NameSpace", "/x?access%20token=s1cret&a=1", "/x?a=1"},
		{"NameBrackets", "/x?access_token[]=s1cret&access_token%5B0%5D=s2cret&a=1", "/x?a=1"},
		{"NameDash", "/x?access-token=s1cret&accessToken=s2cret&a=1", "/x?a=1"},
		{"NameSemicolon", "/x?a=1;access_token=s1cret&b=2", "/x?b=2"},
		{"ValueOfAnother", "/x?foo=" + token + "&a=1", "/x?a=1"},
		{"ValueEncoded", "/x?foo=%69nforme_" + body + "&a=1", "/x?a=1"},
		{"ValueEncodedTwice", "/x?foo=%2569nforme%255F" + body + "&a=1", "/x?a=1"},
		{"ValueBodyOnly", "/x?foo=" + body + "&a=1", "/x?a=1"},
		{"ValueUpperCase", "/x?foo=INFORME_" + body, "/x"},
		{"TokenAsName", "/x?" + token + "&a=1", "/x?a=1"},
		{"TokenAsNameWithValue", "/x?" + token + "=1&a=1", "/x?a=1"},
		{"Undecodable", "/x?a=1&access%5token=s1cret%zz", "/x?a=1"},
		{"PathSegment", "/" + token, "/"},
		{"PathSegmentWithQuery", "/api/" + token + "/export?format=csv", "/?format=csv"},
		{"PathEncoded", "/%69nforme_" + body, "/"},
		{"PathEncodedTwice", "/%2569nforme_" + body, "/"},
		{"PathBodyOnly", "/users/" + body, "/"},
		{"PathAndQuery", "/" + token + "?access_token=" + token, "/"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			for _, method := range []string{"GET", "POST"} {
				resp, got := rawGet(t, addr, method, tt.target, "informe.example.cl")
				if want := base + tt.location; resp.Header.Get("Location") != want {
					t.Errorf("%s: Location = %s, want %s", method, resp.Header.Get("Location"), want)
				}
				all := strings.ToLower(resp.Header.Get("Location") + "\n" + got)
				for _, secret := range []string{"informe_", strings.ToLower(body), "s1cret", "s2cret", "s3cret", "s4cret"} {
					if strings.Contains(all, secret) {
						t.Errorf("%s: the redirect repeats %q: Location %s, body %q", method, secret, resp.Header.Get("Location"), got)
					}
				}
			}
		})
	}
}

// TestRedirectUnsentBody checks that a request announcing a body it never
// sends gets its redirect and its connection closed, rather than holding
// the connection while the server waits for the body.
func TestRedirectUnsentBody(t *testing.T) {
	srv := httptest.NewServer(https.Redirect(nil, nil, "443"))
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
