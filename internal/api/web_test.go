package api_test

import (
	"context"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/informe/informe/internal/api/apitest"
	"github.com/informe/informe/internal/dataset"
	"github.com/informe/informe/internal/pgserver/pgtest"
	"github.com/informe/informe/internal/web"
)

// TestPage checks that the page and its assets need no token, carry the
// security headers, and that the assets are cached by their hashed names.
func TestPage(t *testing.T) {
	t.Parallel()
	ts := newWebServer(t, pgtest.Fixture(t))
	for _, tt := range []struct {
		name, lang, want string
	}{
		{"Spanish", "es-CL,es;q=0.9", `lang="es"`},
		{"English", "en-US,en;q=0.9", `lang="en"`},
		{"EnglishPreferred", "fr, en;q=0.8, es;q=0.5", `lang="en"`},
		{"Default", "", `lang="es"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := ts.Do(t, http.MethodGet, "/", "Accept-Language", tt.lang)
			if r.Status != 200 || !strings.Contains(string(r.Body), tt.want) {
				t.Fatalf("GET / = %d, want 200 with %s; body %.200s", r.Status, tt.want, r.Body)
			}
			for k, want := range map[string]string{
				"Content-Security-Policy": web.ContentSecurityPolicy,
				"X-Content-Type-Options":  "nosniff",
				"Referrer-Policy":         "no-referrer",
				"Content-Type":            "text/html; charset=utf-8",
			} {
				if got := r.Header.Get(k); got != want {
					t.Errorf("%s = %q, want %q", k, got, want)
				}
			}
		})
	}
	t.Run("CSPForbidsInline", func(t *testing.T) {
		for _, bad := range []string{"unsafe-inline", "unsafe-eval", "*"} {
			if strings.Contains(web.ContentSecurityPolicy, bad) {
				t.Errorf("CSP allows %s", bad)
			}
		}
		if !strings.Contains(web.ContentSecurityPolicy, "frame-ancestors 'none'") {
			t.Error("CSP lacks frame-ancestors 'none'")
		}
		body := string(ts.Do(t, http.MethodGet, "/").Body)
		if regexp.MustCompile(`<script>|<style|style="|\son[a-z]+=`).MatchString(body) {
			t.Error("the page has inline script or style")
		}
	})
	t.Run("Assets", func(t *testing.T) {
		body := string(ts.Do(t, http.MethodGet, "/").Body)
		refs := regexp.MustCompile(`/assets/[a-z]+\.[0-9a-f]{12}\.(json|js|css)`).FindAllString(body, -1)
		slices.Sort(refs)
		refs = slices.Compact(refs) // the catalogue is also preloaded
		if len(refs) != 3 {
			t.Fatalf("asset references = %v, want script, style sheet and catalogue", refs)
		}
		for _, ref := range refs {
			r := ts.Do(t, http.MethodGet, ref)
			if r.Status != 200 || len(r.Body) == 0 {
				t.Fatalf("GET %s = %d", ref, r.Status)
			}
			if got := r.Header.Get("Cache-Control"); !strings.Contains(got, "immutable") {
				t.Errorf("%s Cache-Control = %q, want immutable", ref, got)
			}
			if r.Header.Get("X-Content-Type-Options") != "nosniff" {
				t.Errorf("%s lacks nosniff", ref)
			}
		}
		ts.Do(t, http.MethodGet, "/assets/app.000000000000.js").WantError(t, 404, "Not Found")
	})
	t.Run("AssetsCompressed", func(t *testing.T) {
		ref := regexp.MustCompile(`/assets/app\.[0-9a-f]{12}\.js`).FindString(string(ts.Do(t, http.MethodGet, "/").Body))
		plain := ts.Do(t, http.MethodGet, ref)
		for _, coding := range []string{"gzip", "zstd"} {
			r := ts.Do(t, http.MethodGet, ref, "Accept-Encoding", coding)
			if got := r.Header.Get("Content-Encoding"); got != coding || len(r.Body) >= len(plain.Body) || r.Header.Get("Vary") != "Accept-Encoding" {
				t.Errorf("Accept-Encoding %s: Content-Encoding %q, %d bytes of %d, Vary %q", coding, got, len(r.Body), len(plain.Body), r.Header.Get("Vary"))
			}
		}
		if plain.Header.Get("Content-Encoding") != "" {
			t.Error("an asset is compressed for a client that did not ask")
		}
	})
	t.Run("Icon", func(t *testing.T) {
		r := ts.Do(t, http.MethodGet, "/favicon.ico")
		if r.Status != 200 || r.Header.Get("Content-Type") != "image/svg+xml" || !strings.HasPrefix(string(r.Body), "<svg") {
			t.Errorf("GET /favicon.ico = %d %s %.40s", r.Status, r.Header.Get("Content-Type"), r.Body)
		}
	})
	t.Run("SignedOutSession", func(t *testing.T) {
		// No 401 in the console of a page that loads signed out.
		r := ts.Do(t, http.MethodGet, "/web/session")
		if got, want := string(r.Body), `{"signed_in":false}`; r.Status != 200 || got != want {
			t.Errorf("GET /web/session = %d %s, want 200 %s", r.Status, got, want)
		}
	})
	t.Run("APIUnchanged", func(t *testing.T) {
		ts.Do(t, http.MethodGet, "/nope").WantError(t, 401, "Invalid Token")
		ts.Do(t, http.MethodGet, "/users").WantError(t, 401, "Invalid Token")
	})
}

// TestPageAbsentWithoutSite checks that a server without the page answers
// / as any unknown path: 401 without a token.
func TestPageAbsentWithoutSite(t *testing.T) {
	t.Parallel()
	ts := newServer(t, pgtest.Fixture(t))
	ts.Do(t, http.MethodGet, "/").WantError(t, 401, "Invalid Token")
}

// TestSignIn checks the sign-in endpoint's answers and its cookie, and that
// informe takes the cookie like the header.
func TestSignIn(t *testing.T) {
	t.Parallel()
	ts := newWebServer(t, pgtest.Fixture(t))
	ctx := context.Background()
	expired := ts.NewToken(t, "expired", nil, time.Now().Add(-time.Hour))
	revoked := ts.NewToken(t, "revoked", nil, time.Time{})
	if err := ts.Tokens.Revoke(ctx, "revoked"); err != nil {
		t.Fatal(err)
	}
	usersOnly := ts.NewToken(t, "users-only", []dataset.Scope{dataset.UsersRead}, time.Time{})
	noScope := ts.NewToken(t, "no-scope", nil, time.Time{})
	if _, err := ts.Pool.Exec(ctx, "UPDATE api_tokens SET scopes = '{}' WHERE name = 'no-scope'"); err != nil {
		t.Fatal(err)
	}
	origin := []string{"Origin", ts.URL, "Content-Type", "application/json"}
	for _, tt := range []struct {
		name   string
		body   string
		header []string
		status int
		msg    string
	}{
		{"OK", `{"token":"` + ts.Token + `"}`, origin, 200, ""},
		{"OKUsersOnly", `{"token":"` + usersOnly + `"}`, origin, 200, ""},
		{"ErrUnknown", `{"token":"` + apitest.WellFormedToken() + `"}`, origin, 401, web.SignInMessage("unknown", "es")},
		{"ErrGarbage", `{"token":"hello"}`, origin, 401, web.SignInMessage("unknown", "es")},
		{"ErrExpired", `{"token":"` + expired + `","lang":"en"}`, origin, 401, web.SignInMessage("expired", "en")},
		{"ErrRevoked", `{"token":"` + revoked + `"}`, origin, 401, web.SignInMessage("revoked", "es")},
		{"ErrNoScope", `{"token":"` + noScope + `"}`, origin, 403, web.SignInMessage("scope", "es")},
		{"ErrMissing", `{"token":"  "}`, origin, 401, web.SignInMessage("missing", "es")},
		{"ErrNotJSON", `token=x`, origin, 400, "the body must be JSON"},
		{"ErrOtherOrigin", `{"token":"` + ts.Token + `"}`, []string{"Origin", "https://evil.example"}, 403, web.SignInMessage("origin", "es")},
		{"ErrNoOrigin", `{"token":"` + ts.Token + `"}`, nil, 403, web.SignInMessage("origin", "es")},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := ts.Post(t, "/web/sign-in", tt.body, tt.header...)
			if tt.status != 200 {
				r.WantError(t, tt.status, tt.msg)
				if r.Header.Get("Set-Cookie") != "" {
					t.Error("a refused sign-in sets a cookie")
				}
				if r.Header.Get("Www-Authenticate") != "" {
					t.Error("the page's 401 carries a challenge (browsers would show a credential dialog)")
				}
				return
			}
			if r.Status != 200 {
				t.Fatalf("status = %d; body %s", r.Status, r.Body)
			}
			c := r.Header.Get("Set-Cookie")
			for _, want := range []string{web.CookieName + "=informe_", "Path=/", "HttpOnly", "SameSite=Strict"} {
				if !strings.Contains(c, want) {
					t.Errorf("Set-Cookie = %q, want %s", c, want)
				}
			}
			for _, bad := range []string{"Expires", "Max-Age", "Secure"} { // session cookie; plain HTTP here
				if strings.Contains(c, bad) {
					t.Errorf("Set-Cookie = %q has %s", c, bad)
				}
			}
		})
	}

	cookie := []string{"Cookie", web.CookieName + "=" + ts.Token}
	t.Run("CookieAuthenticates", func(t *testing.T) {
		want := ts.Get(t, "/api/general-report?format=csv&client_id=1")
		got := ts.Do(t, http.MethodGet, "/api/general-report?format=csv&client_id=1", cookie...)
		if got.Status != 200 || string(got.Body) != string(want.Body) {
			t.Fatalf("with the cookie: %d %s, want %s", got.Status, got.Body, want.Body)
		}
		if r := ts.Do(t, http.MethodGet, "/web/session", cookie...); r.Status != 200 || !strings.Contains(string(r.Body), `"name":"all"`) {
			t.Errorf("GET /web/session = %d %s", r.Status, r.Body)
		}
	})
	t.Run("SessionSaysWhy", func(t *testing.T) {
		for _, tt := range []struct{ token, reason, lang string }{
			{expired, "expired", "en"}, {revoked, "revoked", "es"}, {apitest.WellFormedToken(), "unknown", "es"},
		} {
			r := ts.Do(t, http.MethodGet, "/web/session", "Cookie", web.CookieName+"="+tt.token+"; "+web.LangCookie+"="+tt.lang)
			want := `{"signed_in":false,"reason":"` + tt.reason + `","message":"` + web.SignInMessage(tt.reason, tt.lang) + `"}`
			if got := string(r.Body); r.Status != 200 || got != want {
				t.Errorf("GET /web/session = %d %s, want 200 %s", r.Status, got, want)
			}
		}
	})
	t.Run("CookieScopes", func(t *testing.T) {
		ts.Do(t, http.MethodGet, "/api/general-report", "Cookie", web.CookieName+"="+usersOnly).WantError(t, 403, "report:read")
	})
	t.Run("BadCookieNoChallenge", func(t *testing.T) {
		r := ts.Do(t, http.MethodGet, "/users", "Cookie", web.CookieName+"="+revoked)
		r.WantError(t, 401, "Invalid Token")
		if r.Header.Get("Www-Authenticate") != "" {
			t.Error("a 401 to the page's cookie carries a challenge")
		}
	})
	t.Run("HeaderWinsOverCookie", func(t *testing.T) {
		ts.Do(t, http.MethodGet, "/users", append([]string{"Authorization", "Bearer " + apitest.WellFormedToken()}, cookie...)...).WantError(t, 401, "Invalid Token")
	})
	t.Run("SignOut", func(t *testing.T) {
		ts.Post(t, "/web/sign-out", "", "Origin", "https://evil.example").WantError(t, 403, web.SignInMessage("origin", "es"))
		r := ts.Post(t, "/web/sign-out", "", append([]string{"Origin", ts.URL}, cookie...)...)
		if r.Status != 204 {
			t.Fatalf("sign-out = %d %s", r.Status, r.Body)
		}
		if c := r.Header.Get("Set-Cookie"); !strings.Contains(c, web.CookieName+"=;") || !strings.Contains(c, "Max-Age=0") {
			t.Errorf("sign-out Set-Cookie = %q, want the cookie cleared", c)
		}
	})
	t.Run("TokenNotLogged", func(t *testing.T) {
		for _, tok := range []string{ts.Token, expired, revoked, usersOnly} {
			if strings.Contains(ts.Logs.String(), tok) {
				t.Fatal("a token is in the log")
			}
		}
	})
}
