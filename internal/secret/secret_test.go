package secret_test

import (
	"crypto/rand"
	"encoding/base64"
	"strings"
	"testing"

	"github.com/informe/informe/internal/secret"
)

// token returns a token as package auth makes one.
func token() string {
	raw := make([]byte, 32)
	_, _ = rand.Read(raw)
	return secret.TokenPrefix + base64.RawURLEncoding.EncodeToString(raw)
}

func TestMayHoldToken(t *testing.T) {
	body := strings.TrimPrefix(token(), secret.TokenPrefix)
	for _, tt := range []struct {
		name string
		in   string
		want bool
	}{
		{"Token", secret.TokenPrefix + body, true},
		{"TokenUpperCase", strings.ToUpper(secret.TokenPrefix) + body, true},
		{"PrefixAlone", "informe_", false}, // says what a token starts with, no more
		{"PrefixAndOne", "informe_x", true},
		{"PrefixInMessage", "desde informe_ hasta el final", false},
		{"PrefixMixedCase", "x,InFoRmE_y", true},
		{"BodyWithoutPrefix", body, true},
		{"BodyInText", `unknown field "` + body + `"`, true},
		{"BodyPart", body[:24], body[:24] != strings.ToLower(body[:24]) && body[:24] != strings.ToUpper(body[:24])},
		{"MixedCaseRun24", "abcdefghijklmnopqrstuvwX", true},
		{"Empty", "", false},
		{"Word", "contract_id", false},
		{"Columns", "contract_id,code_contract,client_rut,key_task_id", false},
		{"UUID", "123e4567-e89b-12d3-a456-426614174000", false},
		{"UUIDUpper", "123E4567-E89B-12D3-A456-426614174000", false},
		{"Hex", "0123456789abcdef0123456789abcdef", false},
		{"MixedCaseShort", "CodeContractABCdef12", false},
		{"MixedCaseRun23", "abcdefghijklmnopqrstuvW", false},
		{"Filter", "code_contract eq 'CT-SHARED' and client_id eq 2", false},
		{"Format", "application/json;odata.metadata=minimal;IEEE754Compatible=true", false},
		{"LongLowerCase", strings.Repeat("a", 100), false},
		{"Unicode", "acceſs_token", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := secret.MayHoldToken(tt.in); got != tt.want {
				t.Errorf("MayHoldToken(%q) = %v, want %v", tt.in, got, tt.want)
			}
		})
	}
}

// TestMayHoldTokenEveryToken checks many tokens, with and without their
// prefix: the body alone must be recognised too.
func TestMayHoldTokenEveryToken(t *testing.T) {
	for range 10000 {
		tok := token()
		if !secret.MayHoldToken(tok) || !secret.MayHoldToken(strings.TrimPrefix(tok, secret.TokenPrefix)) {
			t.Fatalf("%q (or its body) not recognised", tok)
		}
	}
}

func TestQuote(t *testing.T) {
	tok := token()
	for _, tt := range []struct {
		name, in, want string
	}{
		{"OK", "nope", `"nope"`},
		{"OKEscaped", "a\"b\n", `"a\"b\n"`},
		{"ErrToken", tok, secret.LooksLikeToken},
		{"ErrBody", strings.TrimPrefix(tok, secret.TokenPrefix), secret.LooksLikeToken},
		{"ErrTokenInList", "contract_id," + tok, secret.LooksLikeToken},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := secret.Quote(tt.in); got != tt.want {
				t.Errorf("Quote(%q) = %s, want %s", tt.in, got, tt.want)
			}
		})
	}
}

func TestRedact(t *testing.T) {
	tok := token()
	body := strings.TrimPrefix(tok, secret.TokenPrefix)
	for _, tt := range []struct {
		name, in, want string
	}{
		{"Clean", `columns: unknown field "nope"`, `columns: unknown field "nope"`},
		{"Token", `$orderby "` + tok + ` desc" is not supported`, `$orderby "REDACTED desc" is not supported`},
		{"Body", "x=" + body + "&y=" + body, "x=REDACTED&y=REDACTED"},
		{"Twice", tok + "," + tok, "REDACTED,REDACTED"},
		{"PrefixOnly", "db informe_demo down", "db REDACTED down"},
		{"Empty", "", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := secret.Redact(tt.in); got != tt.want {
				t.Errorf("Redact(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}
