package destination_test

import (
	"context"
	"encoding/pem"
	"mime"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/informe/informe/internal/destination"
)

// receiver is an HTTPS server on loopback that takes deliveries whose
// signature it verifies, answering status (200 if 0).
type receiver struct {
	srv    *httptest.Server
	caFile string
	mu     sync.Mutex
	status int
	got    map[string][]byte // path -> body of the verified deliveries
	names  []string          // the file names of Content-Disposition
	posts  int
}

func startReceiver(t *testing.T, secret string) *receiver {
	t.Helper()
	rc := &receiver{got: map[string][]byte{}}
	rc.srv = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rc.mu.Lock()
		defer rc.mu.Unlock()
		rc.posts++
		if rc.status != 0 {
			w.WriteHeader(rc.status)
			return
		}
		body, ok := verified(r, []byte(secret))
		if r.Method != http.MethodPost || !ok {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		_, params, _ := mime.ParseMediaType(r.Header.Get("Content-Disposition"))
		rc.names = append(rc.names, params["filename"])
		rc.got[r.URL.Path] = body
		w.WriteHeader(http.StatusCreated)
	}))
	t.Cleanup(rc.srv.Close)
	rc.caFile = filepath.Join(t.TempDir(), "ca.pem")
	cert := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: rc.srv.Certificate().Raw})
	if err := os.WriteFile(rc.caFile, cert, 0o644); err != nil {
		t.Fatal(err)
	}
	return rc
}

// writeSecret writes s to a file of its own and returns its path.
func writeSecret(t *testing.T, s string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(p, []byte(s+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestHTTPSDestination(t *testing.T) {
	t.Parallel()
	const secret = "s3cr3t-Of-The-Receiver-0123456789"
	ctx := context.Background()
	rc := startReceiver(t, secret)
	host := strings.TrimPrefix(rc.srv.URL, "https://")
	secretFile := writeSecret(t, secret)
	parse := func(t *testing.T, query string) destination.Destination {
		t.Helper()
		d, err := destination.Parse("https://" + host + "/inbox/report-{date}.csv?" + query)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	good := "secret_file=" + secretFile + "&ca_file=" + rc.caFile
	body := content(3<<20 + 17)

	t.Run("OK", func(t *testing.T) {
		d := parse(t, good)
		if err := d.Check(ctx); err != nil {
			t.Fatal(err)
		}
		w, err := d.Open(ctx, "report-2025-03-04.csv")
		if err != nil {
			t.Fatal(err)
		}
		defer w.Close()
		for i := 0; i < len(body); i += 100000 {
			if _, err := w.Write(body[i:min(i+100000, len(body))]); err != nil {
				t.Fatal(err)
			}
		}
		rc.mu.Lock()
		posts := rc.posts
		rc.mu.Unlock()
		if posts != 0 {
			t.Errorf("the receiver got %d POSTs before Commit", posts)
		}
		if err := w.Commit(); err != nil {
			t.Fatal(err)
		}
		rc.mu.Lock()
		defer rc.mu.Unlock()
		if got := rc.got["/inbox/report-2025-03-04.csv"]; string(got) != string(body) {
			t.Errorf("the receiver verified %d bytes, want the %d written", len(got), len(body))
		}
		if got, want := strings.Join(rc.names, ","), "report-2025-03-04.csv"; got != want {
			t.Errorf("file names = %q, want %q", got, want)
		}
	})

	t.Run("CancelSendsNothing", func(t *testing.T) {
		rc.mu.Lock()
		before := rc.posts
		rc.mu.Unlock()
		cctx, cancel := context.WithCancel(ctx)
		w, err := parse(t, good).Open(cctx, "r.csv")
		if err != nil {
			t.Fatal(err)
		}
		w.Write(body[:1000])
		cancel()
		_, err = w.Write(body[1000:2000])
		wantReason(t, err, destination.ReasonInterrupted)
		wantReason(t, w.Commit(), destination.ReasonFailed)
		rc.mu.Lock()
		defer rc.mu.Unlock()
		if rc.posts != before {
			t.Errorf("a cancelled delivery was POSTed")
		}
	})

	for _, tt := range []struct {
		name   string
		status int // the receiver's answer, 0 for its verification's
		query  string
		reason string
	}{
		{"ErrWrongSecret", 0, "secret_file=" + writeSecret(t, "not-the-"+secret) + "&ca_file=" + rc.caFile, destination.ReasonAuth},
		{"ErrSecretUnset", 0, "secret_env=INFORME_TEST_UNSET_SECRET&ca_file=" + rc.caFile, destination.ReasonSecret},
		{"ErrUntrusted", 0, "secret_file=" + secretFile, destination.ReasonHostKey},
		{"ErrForbidden", http.StatusForbidden, good, destination.ReasonPermission},
		{"ErrFull", http.StatusInsufficientStorage, good, destination.ReasonFull},
		{"ErrTooLarge", http.StatusRequestEntityTooLarge, good, destination.ReasonFull},
		{"ErrServer", http.StatusBadGateway, good, destination.ReasonUnreachable},
		{"ErrRejected", http.StatusUnprocessableEntity, good, destination.ReasonRejected},
		{"ErrRedirect", http.StatusFound, good, destination.ReasonRejected},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rc.mu.Lock()
			rc.status = tt.status
			rc.mu.Unlock()
			defer func() {
				rc.mu.Lock()
				rc.status = 0
				rc.mu.Unlock()
			}()
			d := parse(t, tt.query)
			if strings.Contains(d.String(), secret) {
				t.Errorf("String() holds the secret: %s", d)
			}
			w, err := d.Open(ctx, "r.csv")
			if err == nil {
				defer w.Close()
				if _, err = w.Write(body[:5000]); err == nil {
					err = w.Commit()
				}
			}
			wantReason(t, err, tt.reason, secret)
		})
	}

	t.Run("ErrUnreachable", func(t *testing.T) {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := l.Addr().String()
		l.Close()
		d, err := destination.Parse("https://" + addr + "/r.csv?" + good)
		if err != nil {
			t.Fatal(err)
		}
		wantReason(t, d.Check(ctx), destination.ReasonUnreachable)
		w, err := d.Open(ctx, "r.csv")
		if err != nil {
			t.Fatal(err)
		}
		w.Write(body[:10])
		wantReason(t, w.Commit(), destination.ReasonUnreachable, secret)
	})
}
