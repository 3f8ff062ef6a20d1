package api_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/informe/informe/internal/api/apitest"
	"github.com/informe/informe/internal/dataset"
	"github.com/informe/informe/internal/pgserver/pgtest"
)

// basic returns the value of an Authorization header with Basic
// credentials.
func basic(user, password string) string {
	return "Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+password))
}

// The challenges of every 401, the same whatever credentials were sent:
// Bearer, with no error code (RFC 6750 section 3.1 wants none when no
// credentials were given, and one only for the others would tell them
// apart), and Basic.
var challenges = []string{`Bearer realm="informe"`, `Basic realm="informe", charset="UTF-8"`}

// TestBasicCredentials checks that a token given as the password of Basic
// credentials, with any user name, authenticates like a bearer token on
// every path, and that wrong ones are a 401 with both challenges.
func TestBasicCredentials(t *testing.T) {
	t.Parallel()
	ts := newServer(t, pgtest.Fixture(t))
	ctx := context.Background()
	reportOnly := ts.NewToken(t, "report-only", []dataset.Scope{dataset.ReportRead}, time.Time{})
	usersOnly := ts.NewToken(t, "users-only", []dataset.Scope{dataset.UsersRead}, time.Time{})
	expired := ts.NewToken(t, "expired", nil, time.Now().Add(-time.Hour))
	revoked := ts.NewToken(t, "revoked", nil, time.Time{})
	if err := ts.Tokens.Revoke(ctx, "revoked"); err != nil {
		t.Fatal(err)
	}
	unknown := apitest.WellFormedToken()
	secrets := []string{ts.Token, reportOnly, usersOnly, expired, revoked, unknown}

	paths := []string{
		"/users",
		"/users?format=csv",
		"/api/general-report?result_per_page=3&page=2",
		"/api/general-report?format=xlsx",
		"/api/general-report/export?format=csv",
		"/api/general-report/export?format=ndjson&client_id=3",
	}
	for _, tt := range []struct {
		name   string
		header string // the Authorization header
		query  string // added to the query string
		status map[bool]int
	}{
		{"OK", basic("finanzas", ts.Token), "", everywhere200},
		{"OKEmptyUser", basic("", ts.Token), "", everywhere200},
		{"OKUserWithSpacesAndAccents", basic("Power Query ñandú", ts.Token), "", everywhere200},
		{"OKUserIsAnEmail", basic("ana@example.cl", ts.Token), "", everywhere200},
		{"OKSchemeLowerCase", "basic " + strings.TrimPrefix(basic("x", ts.Token), "Basic "), "", everywhere200},
		{"OKSchemeUpperCase", "BASIC " + strings.TrimPrefix(basic("x", ts.Token), "Basic "), "", everywhere200},
		{"OKHeaderWinsOverBogusQuery", basic("x", ts.Token), "&access_token=bogus", everywhere200},
		{"ReportScope", basic("x", reportOnly), "", map[bool]int{true: 200, false: 403}},
		{"UsersScope", basic("x", usersOnly), "", map[bool]int{true: 403, false: 200}},
		{"ErrBogusHeaderValidQuery", basic("x", "bogus"), "&access_token=" + ts.Token, everywhere401},
		{"ErrUnknown", basic("x", unknown), "", everywhere401},
		{"ErrRevoked", basic("x", revoked), "", everywhere401},
		{"ErrExpired", basic("x", expired), "", everywhere401},
		{"ErrTokenAsUser", basic(ts.Token, "x"), "", everywhere401},
		{"ErrTokenAsUserNoPassword", basic(ts.Token, ""), "", everywhere401},
		{"ErrNoColon", "Basic " + base64.StdEncoding.EncodeToString([]byte(ts.Token)), "", everywhere401},
		{"ErrPasswordAndMore", basic("x", ts.Token+"x"), "", everywhere401},
		{"ErrColonInPassword", basic("x", "y:"+ts.Token), "", everywhere401},
		{"ErrEmpty", basic("", ""), "", everywhere401},
		{"ErrNotBase64", "Basic !!" + ts.Token, "", everywhere401},
		{"ErrUnpadded", unpadded(ts.Token), "", everywhere401},
		{"ErrBasicAlone", "Basic", "", everywhere401},
		{"ErrOtherScheme", "Digest " + ts.Token, "", everywhere401},
	} {
		for _, path := range paths {
			t.Run(tt.name+path, func(t *testing.T) {
				isReport := strings.HasPrefix(path, "/api/")
				target := path + tt.query
				if tt.query != "" && !strings.Contains(path, "?") {
					target = path + "?" + tt.query[1:]
				}
				r := ts.Do(t, http.MethodGet, target, "Authorization", tt.header)
				want := tt.status[isReport]
				if r.Status != want {
					t.Fatalf("status = %d, want %d; body %.300s", r.Status, want, r.Body)
				}
				switch want {
				case http.StatusOK:
					// The same response as with the bearer token.
					bearer := ts.Get(t, path)
					if !bytes.Equal(r.Body, bearer.Body) && !strings.Contains(path, "xlsx") {
						t.Errorf("body differs from the bearer token's:\n got %.300s\nwant %.300s", r.Body, bearer.Body)
					}
					for _, h := range []string{"Content-Type", "Content-Disposition", "X-Total-Count"} {
						if got, want := r.Header.Get(h), bearer.Header.Get(h); got != want {
							t.Errorf("%s = %q, with the bearer token %q", h, got, want)
						}
					}
				case http.StatusUnauthorized:
					if got, want := string(r.Body), `{"message":"Invalid Token"}`; got != want {
						t.Errorf("body = %s, want %s", got, want)
					}
					if got, want := r.Header.Values("WWW-Authenticate"), challenges; !slices.Equal(got, want) {
						t.Errorf("WWW-Authenticate = %q, want %q", got, want)
					}
				case http.StatusForbidden:
					r.WantError(t, http.StatusForbidden, "this token lacks the")
				}
			})
		}
	}

	t.Run("TokenNeverLogged", func(t *testing.T) {
		logs := ts.Logs.String()
		if !strings.Contains(logs, `"status":200`) || !strings.Contains(logs, `"status":401`) {
			t.Fatalf("the log does not show the requests:\n%.2000s", logs)
		}
		for _, s := range secrets {
			for _, form := range []string{s, base64.StdEncoding.EncodeToString([]byte("finanzas:" + s)),
				base64.StdEncoding.EncodeToString([]byte("x:" + s)), strings.TrimRight(base64.StdEncoding.EncodeToString([]byte(s)), "=")} {
				if strings.Contains(logs, form) {
					t.Fatalf("the log holds token %s (as %s)", s, form)
				}
			}
		}
	})
}

// Statuses by whether the path is a report path.
var (
	everywhere200 = map[bool]int{true: 200, false: 200}
	everywhere401 = map[bool]int{true: 401, false: 401}
)

// unpadded returns Basic credentials of user x and password in base64
// without its padding, for a password whose encoding needs padding.
func unpadded(password string) string {
	user := "x"
	if (len(user)+1+len(password))%3 == 0 {
		user = "xy"
	}
	return "Basic " + base64.RawStdEncoding.EncodeToString([]byte(user+":"+password))
}

// TestUnauthorizedChallenges checks that every 401, on every path, carries
// the same two WWW-Authenticate lines, Bearer first, whatever credentials
// were given.
func TestUnauthorizedChallenges(t *testing.T) {
	t.Parallel()
	ts := newServer(t, pgtest.Fixture(t))
	for _, tt := range []struct {
		name   string
		method string
		target string
		header []string
		want   []string
	}{
		{"NothingUsers", http.MethodGet, "/users", nil, challenges},
		{"NothingReport", http.MethodGet, "/api/general-report?format=csv", nil, challenges},
		{"NothingExport", http.MethodGet, "/api/general-report/export?format=xlsx", nil, challenges},
		{"NothingUnknownPath", http.MethodGet, "/nope", nil, challenges},
		{"NothingPost", http.MethodPost, "/users", nil, challenges},
		{"NothingBadParameters", http.MethodGet, "/api/general-report/export?page=0&columns=nope", nil, challenges},
		{"BadBearer", http.MethodGet, "/users", []string{"Authorization", "Bearer " + apitest.WellFormedToken()}, challenges},
		{"BadBasic", http.MethodGet, "/api/general-report/export", []string{"Authorization", basic("x", apitest.WellFormedToken())}, challenges},
		{"BadQueryToken", http.MethodGet, "/api/general-report/export?access_token=" + apitest.WellFormedToken(), nil, challenges},
		{"EmptyQueryToken", http.MethodGet, "/api/general-report?access_token=", nil, challenges},
		{"EmptyAuthorization", http.MethodGet, "/users", []string{"Authorization", ""}, challenges},
		{"OtherScheme", http.MethodGet, "/users", []string{"Authorization", "Negotiate abc"}, challenges},
		{"BadBasicUnknownPath", http.MethodGet, "/nope", []string{"Authorization", basic("x", "y")}, challenges},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := ts.Do(t, tt.method, tt.target, tt.header...)
			r.WantError(t, http.StatusUnauthorized, "Invalid Token")
			if got, want := string(r.Body), `{"message":"Invalid Token"}`; got != want {
				t.Errorf("body = %s, want %s", got, want)
			}
			if got, want := r.Header.Values("WWW-Authenticate"), tt.want; !slices.Equal(got, want) {
				t.Errorf("WWW-Authenticate = %q, want %q", got, want)
			}
		})
	}
}
