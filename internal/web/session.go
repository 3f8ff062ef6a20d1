package web

import (
	"net/http"
	"net/url"
	"strings"
)

// CookieName is the cookie that carries a signed-in token. It is HttpOnly
// (no script reads it), SameSite=Strict (no other site's page makes the
// browser send it), Secure over HTTPS, for the whole site, and lasts for the
// browser session only.
const CookieName = "informe_token"

// SetSession sets the token cookie on w. secure says whether the page was
// reached over HTTPS.
func SetSession(w http.ResponseWriter, token string, secure bool) {
	http.SetCookie(w, &http.Cookie{
		Name: CookieName, Value: token, Path: "/",
		HttpOnly: true, Secure: secure, SameSite: http.SameSiteStrictMode,
	})
}

// ClearSession tells the browser to forget the token cookie.
func ClearSession(w http.ResponseWriter, secure bool) {
	http.SetCookie(w, &http.Cookie{
		Name: CookieName, Value: "", Path: "/", MaxAge: -1,
		HttpOnly: true, Secure: secure, SameSite: http.SameSiteStrictMode,
	})
}

// SessionToken returns the token cookie's value, if r carries one.
func SessionToken(r *http.Request) (string, bool) {
	c, err := r.Cookie(CookieName)
	if err != nil || c.Value == "" {
		return "", false
	}
	return c.Value, true
}

// SameOrigin reports whether r, a request that changes the session, comes
// from a page of this site: its Origin header (every browser sends one with
// a POST) names this host. SameSite=Strict already keeps the cookie off
// other sites' requests; this also refuses a sign-in posted from elsewhere
// (login CSRF). Without an Origin header, Sec-Fetch-Site must say
// same-origin.
func SameOrigin(r *http.Request) bool {
	origin := r.Header.Get("Origin")
	if origin == "" {
		return r.Header.Get("Sec-Fetch-Site") == "same-origin"
	}
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" {
		return false
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return strings.EqualFold(u.Scheme, scheme) && strings.EqualFold(u.Host, r.Host)
}

// SignInMessage returns the message the page shows for a refused sign-in,
// in lang (see [Languages]); reason is one of "unknown", "expired",
// "revoked", "scope", "missing" or "origin".
func SignInMessage(reason, lang string) string {
	m := signInMessages[reason]
	if lang == "en" {
		return m[1]
	}
	return m[0]
}

var signInMessages = map[string][2]string{
	"missing": {"Pegue su token para ingresar.", "Paste your token to sign in."},
	"unknown": {"Este token no es válido: revise que lo pegó completo, desde informe_ hasta el final.",
		"This token is not valid: check that you pasted all of it, from informe_ to the end."},
	"expired": {"Este token venció. Pida uno nuevo a quien administra informe.",
		"This token has expired. Ask whoever runs informe for a new one."},
	"revoked": {"Este token fue revocado. Pida uno nuevo a quien administra informe.",
		"This token has been revoked. Ask whoever runs informe for a new one."},
	"scope": {"Este token no permite leer el informe ni los usuarios (le faltan los permisos report:read y users:read).",
		"This token may read neither the report nor the users (it lacks the report:read and users:read scopes)."},
	"origin": {"Solicitud rechazada: no viene de esta página.", "Request refused: it does not come from this page."},
}
