package api

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/informe/informe/auth"
	"github.com/informe/informe/internal/failure"
	"github.com/informe/informe/internal/web"
)

// The web page's own paths, besides the page at / and its assets.
const (
	signInPath  = "/web/sign-in"
	signOutPath = "/web/sign-out"
	sessionPath = "/web/session"
)

// publicPage reports whether path is one of the web page's paths that need
// no token: the page, its assets, signing in and out.
func publicPage(path string) bool {
	return path == "/" || strings.HasPrefix(path, web.AssetPrefix) || path == signInPath || path == signOutPath
}

// pagePath reports whether path belongs to the web page rather than the API.
func pagePath(path string) bool {
	return publicPage(path) || path == sessionPath
}

// page serves the web page.
func (s *Server) page(c *gin.Context) { s.Site.Page(c.Writer, c.Request) }

// asset serves one of the page's assets by its hashed name.
func (s *Server) asset(c *gin.Context) {
	if !s.Site.Asset(c.Writer, c.Request, c.Param("name")) {
		s.fail(c, errNotFound)
	}
}

// session describes the signed-in token to the page: its name and scopes.
type session struct {
	Name   string       `json:"name"`
	Scopes []auth.Scope `json:"scopes"`
}

// currentSession serves GET /web/session: who the page is signed in as
// (401 when it is not).
func (s *Server) currentSession(c *gin.Context) {
	p := state(c).principal
	c.JSON(http.StatusOK, session{p.Name, p.Scopes})
}

// signIn serves POST /web/sign-in: it checks the token in the JSON body
// {"token": "...", "lang": "es"}, and when it is good sets the page's
// cookie. A refused token gets a message that says why, in the page's
// language.
func (s *Server) signIn(c *gin.Context) {
	lang := web.Language(c.Request)
	if !web.SameOrigin(c.Request) {
		s.fail(c, failure.Errorf(failure.Forbidden, "%s", web.SignInMessage("origin", lang)))
		return
	}
	var body struct {
		Token string `json:"token"`
		Lang  string `json:"lang"`
	}
	if err := json.NewDecoder(io.LimitReader(c.Request.Body, 4<<10)).Decode(&body); err != nil {
		s.fail(c, failure.Errorf(failure.Invalid, `the body must be JSON: {"token": "..."}`))
		return
	}
	if body.Lang == "en" || body.Lang == "es" {
		lang = body.Lang
	}
	token := strings.TrimSpace(body.Token)
	if token == "" {
		s.fail(c, failure.Errorf(failure.Unauthorized, "%s", web.SignInMessage("missing", lang)))
		return
	}
	p, err := s.lookUpToken(c.Request.Context(), token, s.Tokens.Check)
	for reason, known := range map[string]error{"unknown": auth.ErrUnknown, "expired": auth.ErrExpired, "revoked": auth.ErrRevoked} {
		if errors.Is(err, known) {
			err = failure.Errorf(failure.Unauthorized, "%s", web.SignInMessage(reason, lang))
		}
	}
	if err != nil {
		s.fail(c, err)
		return
	}
	if !p.Allows(auth.ReportRead) && !p.Allows(auth.UsersRead) {
		s.fail(c, failure.Errorf(failure.Forbidden, "%s", web.SignInMessage("scope", lang)))
		return
	}
	state(c).principal = &p // for the log line
	web.SetSession(c.Writer, token, c.Request.TLS != nil)
	c.JSON(http.StatusOK, session{p.Name, p.Scopes})
}

// signOut serves POST /web/sign-out: the browser forgets the cookie.
func (s *Server) signOut(c *gin.Context) {
	if !web.SameOrigin(c.Request) {
		s.fail(c, failure.Errorf(failure.Forbidden, "%s", web.SignInMessage("origin", web.Language(c.Request))))
		return
	}
	web.ClearSession(c.Writer, c.Request.TLS != nil)
	c.Status(http.StatusNoContent)
}
