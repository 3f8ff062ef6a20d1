package server_test

import (
	"bufio"
	"crypto/tls"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/informe/informe/internal/api"
	"github.com/informe/informe/internal/https/httpstest"
	"github.com/informe/informe/internal/pgserver/pgtest"
)

// rawExchange writes req as it is over a new connection to addr and
// returns the response to it and its body. It writes nothing more and
// keeps its side open, so that the server reads every byte sent and the
// answer is not lost to a reset.
func rawExchange(t *testing.T, addr, req string) (*http.Response, string) {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	// A guard against a hang only; the test asserts what arrives.
	_ = conn.SetDeadline(time.Now().Add(60 * time.Second))
	werr := make(chan error, 1)
	go func() { _, err := io.WriteString(conn, req); werr <- err }()
	method, _, _ := strings.Cut(req, " ")
	resp, err := http.ReadResponse(bufio.NewReader(conn), &http.Request{Method: method})
	if err != nil {
		t.Fatalf("no response: %v", err)
	}
	body, _ := io.ReadAll(resp.Body)
	if err := <-werr; err != nil {
		t.Fatalf("writing the request: %v", err)
	}
	return resp, string(body)
}

// TestOwnAnswersHeaders checks, on every plain-HTTP listener (the API
// without TLS, the operations listener, and with HTTPS on the listener that
// redirects to it), that the answers net/http writes itself, before any
// handler, carry no-store and nosniff as informe's own do; and that a
// request target of a mebibyte gets the API's JSON 414, not net/http's
// 431.
func TestOwnAnswersHeaders(t *testing.T) {
	pool := pgtest.New(t)
	plain := start(t, pool, config(nil))
	cfg := config(nil)
	dir := t.TempDir()
	cfg.TLS.CertFile, cfg.TLS.KeyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	httpstest.WritePair(t, cfg.TLS.CertFile, cfg.TLS.KeyFile, "127.0.0.1")
	cfg.TLS.HTTPAddr = "127.0.0.1:0"
	secure := start(t, pool, cfg)
	var redirect string
	for _, l := range strings.Split(secure.log.String(), "\n") {
		var m struct {
			HTTPAddr string `json:"http_addr"`
		}
		if json.Unmarshal([]byte(l), &m) == nil && m.HTTPAddr != "" {
			redirect = m.HTTPAddr
		}
	}
	if redirect == "" {
		t.Fatalf("no http_addr logged:\n%s", secure.log)
	}
	// Past the server's backstop, the request line and header fields that
	// net/http reads before it answers 431: exactly as many bytes as it
	// reads, so that none is left unread.
	const backstop = 1<<20 + api.MaxHeaderBytes + 4096
	huge := "GET / HTTP/1.1\r\nX-Filler: "
	huge += strings.Repeat("x", backstop-len(huge))
	for _, listener := range []struct{ name, addr string }{
		{"API", strings.TrimPrefix(plain.api, "http://")},
		{"Ops", strings.TrimPrefix(plain.ops, "http://")},
		{"Redirect", redirect},
	} {
		for _, tt := range []struct {
			name, req string
			status    int
		}{
			{"MalformedRequestLine", "NONSENSE\r\n\r\n", http.StatusBadRequest},
			{"MissingHost", "GET / HTTP/1.1\r\n\r\n", http.StatusBadRequest},
			{"TwoHosts", "GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", http.StatusBadRequest},
			{"UnknownTransferCoding", "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: zip\r\n\r\n", http.StatusNotImplemented},
			{"HTTPVersion", "GET / HTTP/3.0\r\nHost: a\r\n\r\n", http.StatusHTTPVersionNotSupported},
			{"Expect", "GET / HTTP/1.1\r\nHost: a\r\nExpect: lunch\r\n\r\n", http.StatusExpectationFailed},
			{"OptionsStar", "OPTIONS * HTTP/1.1\r\nHost: a\r\n\r\n", http.StatusOK},
			{"HeadersPastBackstop", huge, http.StatusRequestHeaderFieldsTooLarge},
		} {
			t.Run(listener.name+"/"+tt.name, func(t *testing.T) {
				resp, body := rawExchange(t, listener.addr, tt.req)
				if resp.StatusCode != tt.status {
					t.Errorf("status = %d, want %d; body %.200q", resp.StatusCode, tt.status, body)
				}
				if got := resp.Header.Get("X-Content-Type-Options"); got != "nosniff" {
					t.Errorf("X-Content-Type-Options = %q, want nosniff", got)
				}
				if got := resp.Header.Get("Cache-Control"); !strings.Contains(got, "no-store") {
					t.Errorf("Cache-Control = %q, want no-store", got)
				}
			})
		}
	}
	t.Run("URIOfAMebibyte", func(t *testing.T) {
		for _, base := range []string{plain.api, plain.ops} {
			resp, body := rawExchange(t, strings.TrimPrefix(base, "http://"),
				"GET /?x="+strings.Repeat("x", 1<<20-4)+" HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n")
			var e struct{ Message string }
			if resp.StatusCode != http.StatusRequestURITooLong || json.Unmarshal([]byte(body), &e) != nil || !strings.Contains(e.Message, "8 KiB") {
				t.Errorf("%s: %d %.200q, want a JSON 414", base, resp.StatusCode, body)
			}
		}
	})
	t.Run("KeepAlive", func(t *testing.T) {
		// Responses of handlers on a kept connection pass as they are:
		// the second answer is the handler's, with its own headers once.
		conn, err := net.Dial("tcp", strings.TrimPrefix(plain.ops, "http://"))
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		_ = conn.SetDeadline(time.Now().Add(60 * time.Second))
		r := bufio.NewReader(conn)
		for i, req := range []string{"GET /healthz HTTP/1.1\r\nHost: a\r\n\r\n", "GET /healthz HTTP/1.1\r\nHost: a\r\n\r\n", "GET / HTTP/1.1\r\nHost: a\r\nExpect: lunch\r\n\r\n"} {
			if _, err := io.WriteString(conn, req); err != nil {
				t.Fatal(err)
			}
			resp, err := http.ReadResponse(r, nil)
			if err != nil {
				t.Fatalf("response %d: %v", i, err)
			}
			body, _ := io.ReadAll(resp.Body)
			want := []int{200, 200, 417}[i]
			if resp.StatusCode != want || len(resp.Header.Values("X-Content-Type-Options")) != 1 {
				t.Errorf("response %d: %d %q, X-Content-Type-Options %q; want %d and one nosniff", i, resp.StatusCode, body, resp.Header.Values("X-Content-Type-Options"), want)
			}
		}
	})
}

// TestHTTP2HeadersTooLarge checks that over HTTP/2 a header block past
// informe's 64 KiB, up to the limit the server advertises
// (SETTINGS_MAX_HEADER_LIST_SIZE, which clients keep to), gets the JSON
// 431, not a dropped connection.
func TestHTTP2HeadersTooLarge(t *testing.T) {
	pool := pgtest.New(t)
	cfg := config(nil)
	dir := t.TempDir()
	cfg.TLS.CertFile, cfg.TLS.KeyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	roots := httpstest.WritePair(t, cfg.TLS.CertFile, cfg.TLS.KeyFile, "127.0.0.1")
	s := start(t, pool, cfg)
	base := "https://" + strings.TrimPrefix(s.api, "http://")
	c := &http.Client{Timeout: 60 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{RootCAs: roots}, ForceAttemptHTTP2: true,
	}}
	for _, tt := range []struct {
		name         string
		fields, size int // X-Filler fields of size bytes each
	}{
		{"ManyFields", 70, 1000},
		{"OneField", 1, 70 << 10},
		{"AMebibyte", 1 << 10, 1000},
	} {
		t.Run(tt.name, func(t *testing.T) {
			req, err := http.NewRequest(http.MethodGet, base+"/users", nil)
			if err != nil {
				t.Fatal(err)
			}
			for range tt.fields {
				req.Header.Add("X-Filler", strings.Repeat("x", tt.size))
			}
			resp, err := c.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			var e struct{ Message string }
			if resp.ProtoMajor != 2 || resp.StatusCode != http.StatusRequestHeaderFieldsTooLarge ||
				json.Unmarshal(body, &e) != nil || !strings.Contains(e.Message, "64 KiB") {
				t.Errorf("%s %d %.200q, want HTTP/2 and the JSON 431", resp.Proto, resp.StatusCode, body)
			}
			if got := resp.Header.Get("X-Content-Type-Options"); got != "nosniff" {
				t.Errorf("X-Content-Type-Options = %q, want nosniff", got)
			}
		})
	}
}

// TestRedirectThroughRun runs HTTPS with its plain-HTTP listener and a
// public URL, and sends it a token in the probe's shapes: the redirect
// goes to the public URL's host whatever the Host header says, with
// no-store, and neither its Location, its body nor the log repeats the
// token.
func TestRedirectThroughRun(t *testing.T) {
	pool := pgtest.New(t)
	cfg := config(nil)
	dir := t.TempDir()
	cfg.TLS.CertFile, cfg.TLS.KeyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	httpstest.WritePair(t, cfg.TLS.CertFile, cfg.TLS.KeyFile, "127.0.0.1")
	cfg.TLS.HTTPAddr = "127.0.0.1:0"
	cfg.PublicURL = "https://informe.example.cl"
	s := start(t, pool, cfg)
	var addr string
	for _, l := range strings.Split(s.log.String(), "\n") {
		var m struct {
			HTTPAddr string `json:"http_addr"`
		}
		if json.Unmarshal([]byte(l), &m) == nil && m.HTTPAddr != "" {
			addr = m.HTTPAddr
		}
	}
	if addr == "" {
		t.Fatalf("no http_addr logged:\n%s", s.log)
	}
	const body = "Zq9xWv3TbN7mLk2JhG5fDs8aPo1iUy4RtE6wQc0VbXn"
	token := "informe_" + body
	for _, tt := range []struct{ name, target, location string }{
		{"PathSegment", "/" + token, "/"},
		{"NameNul", "/users?access_token%00=" + token + "&page=2", "/users?page=2"},
		{"NamePlus", "/users?access+token=" + token, "/users"},
		{"NameBrackets", "/users?access_token[]=" + token, "/users"},
		{"ValueOfAnother", "/users?foo=" + token, "/users"},
		{"PercentEncoded", "/users?foo=%69nforme%5F" + body, "/users"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			resp, got := rawExchange(t, addr, "GET "+tt.target+" HTTP/1.1\r\nHost: evil.example\r\nConnection: close\r\n\r\n")
			if want := "https://informe.example.cl" + tt.location; resp.StatusCode != http.StatusMovedPermanently || resp.Header.Get("Location") != want {
				t.Errorf("%d Location %q, want 301 %s", resp.StatusCode, resp.Header.Get("Location"), want)
			}
			if got := resp.Header.Get("Cache-Control"); got != "no-store" {
				t.Errorf("Cache-Control = %q, want no-store", got)
			}
			if strings.Contains(strings.ToLower(resp.Header.Get("Location")+got), strings.ToLower(body)) {
				t.Errorf("the redirect repeats the token: Location %q, body %q", resp.Header.Get("Location"), got)
			}
		})
	}
	if log := s.log.String(); strings.Contains(strings.ToLower(log), strings.ToLower(body)) {
		t.Errorf("the log repeats the token:\n%s", log)
	}
}
