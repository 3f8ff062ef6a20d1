package destination_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net/http"
	"strings"
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
