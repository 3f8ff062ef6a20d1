package destination_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The receiver's check of an https:// delivery, as docs/schedules.md shows
// it (TestSignatureDocumented keeps the two the same).

// verified reads r's body and reports whether its X-Informe-Signature
// header is the HMAC-SHA256 of the body under secret.
func verified(r *http.Request, secret []byte) ([]byte, bool) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return nil, false
	}
	got, ok := strings.CutPrefix(r.Header.Get("X-Informe-Signature"), "sha256=")
	if !ok {
		return nil, false
	}
	sig, err := hex.DecodeString(got)
	if err != nil {
		return nil, false
	}
	mac := hmac.New(sha256.New, secret)
	mac.Write(body)
	return body, hmac.Equal(sig, mac.Sum(nil))
}

// TestSignatureDocumented checks that docs/schedules.md shows receivers
// the check that TestHTTPSDestination's receiver runs.
func TestSignatureDocumented(t *testing.T) {
	t.Parallel()
	src, err := os.ReadFile("receiver_test.go")
	if err != nil {
		t.Fatal(err)
	}
	start := strings.Index(string(src), "// verified reads")
	end := strings.Index(string(src), "\n}\n") + 2
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "schedules.md"))
	if err != nil {
		t.Fatal(err)
	}
	if snippet := string(src[start:end]); !strings.Contains(string(doc), "```go\n"+snippet+"\n```") {
		t.Errorf("docs/schedules.md does not show the receiver's check as receiver_test.go runs it:\n%s", snippet)
	}
}
