package api

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/informe/informe/auth"
	"github.com/informe/informe/internal/dataset"
	"github.com/informe/informe/internal/failure"
	"github.com/informe/informe/internal/web"
)

// The web page's own paths, besides the page at / and its assets.
const (
	signInPath  = "/web/sign-in"
	signOutPath = "/web/sign-out"
	sessionPath = "/web/session"
)

// iconPath is where browsers look for a site's icon.
const iconPath = "/favicon.ico"

// publicPage reports whether path is one of the web page's paths that need
// no token: the page, its assets and icon, signing in and out, and the
// session (which tells a page that is signed out why).
func publicPage(path string) bool {
	return path == "/" || strings.HasPrefix(path, web.AssetPrefix) || path == iconPath ||
		path == signInPath || path == signOutPath || path == sessionPath
}

// pagePath reports whether path belongs to the web page rather than the API.
func pagePath(path string) bool { return publicPage(path) }

// page serves the web page.
func (s *Server) page(c *gin.Context) { s.Site.Page(c.Writer, c.Request) }

// asset serves one of the page's assets by its hashed name.
func (s *Server) asset(c *gin.Context) {
	if !s.Site.Asset(c.Writer, c.Request, c.Param("name")) {
		s.fail(c, errNotFound)
	}
}

// icon serves the page's icon at /favicon.ico.
func (s *Server) icon(c *gin.Context) { s.Site.Icon(c.Writer, c.Request) }

// session describes the page's session: the signed-in token's name,
// scopes and what it may see (Datasets), or, signed out, why (Reason: ""
// when the page never signed in or signed out, else "expired", "revoked"
// or "unknown" for the cookie's token), with the message to show in
// Message.
type session struct {
	SignedIn bool            `json:"signed_in"`
	Name     string          `json:"name,omitempty"`
	Scopes   []dataset.Scope `json:"scopes,omitempty"`
	Datasets []sessionSet    `json:"datasets,omitempty"`
	// More are the catalogue's entries of the datasets it may read that
	// the common catalogue leaves out (web.Site.More).
	More    []json.RawMessage `json:"more,omitempty"`
	Reason  string            `json:"reason,omitempty"`
	Message string            `json:"message,omitempty"`
}

// sessionSet is a dataset as the signed-in token sees it, so that the
// page, whose catalogue (cached, the same for everyone) lists every
// dataset and column, offers only what the token may read: Source names
// the dataset (the catalogue's "source"); Columns are the columns it
// sees, masked ones included, whose masks Masked gives (dataset.Mask's
// names); Filters are the spec's filters it may give (a filter on a
// column it does not see, or sees masked, is not one); Related are the
// collection navigations its conditions may go through. Anything the
// token may not see is simply absent, as if it did not exist.
type sessionSet struct {
	Source  string            `json:"source"`
	Columns []string          `json:"columns"`
	Masked  map[string]string `json:"masked,omitempty"`
	Filters []string          `json:"filters,omitempty"`
	Related []string          `json:"related,omitempty"`
}

// signedIn returns the session of the principal of c, who is signed in:
// its datasets are those of feedsOf(c), as its scopes and rules let it
// see them.
func (s *Server) signedIn(c *gin.Context) session {
	p := state(c).principal
	out := session{SignedIn: true, Name: p.Name, Scopes: p.Scopes}
	var names []string
	for _, src := range s.feedsOf(c).all {
		v := sessionSet{Source: src.Name}
		for _, col := range src.Columns {
			v.Columns = append(v.Columns, col.Name)
			if col.Mask != dataset.Unmasked {
				if v.Masked == nil {
					v.Masked = map[string]string{}
				}
				v.Masked[col.Name] = col.Mask.String()
			}
		}
		for _, p := range src.Params {
			if p != "columns" {
				v.Filters = append(v.Filters, p)
			}
		}
		for _, n := range src.Set.Collections() {
			v.Related = append(v.Related, n.Name)
		}
		out.Datasets = append(out.Datasets, v)
		names = append(names, src.Name)
	}
	if s.Site != nil {
		out.More = s.Site.More(names)
	}
	return out
}

// currentSession serves GET /web/session: who the page is signed in as, by
// its cookie. Signed out it is still a 200, {"signed_in": false}, so that a
// page that loads signed out logs no error in the browser's console; a
// cookie whose token no longer works says why (expired, revoked), in the
// page's language.
func (s *Server) currentSession(c *gin.Context) {
	token, ok := web.SessionToken(c.Request)
	if !ok {
		c.JSON(http.StatusOK, session{})
		return
	}
	p, err := s.lookUpToken(c.Request.Context(), token, s.Tokens.Check)
	for reason, known := range map[string]error{"unknown": auth.ErrUnknown, "expired": auth.ErrExpired, "revoked": auth.ErrRevoked} {
		if errors.Is(err, known) {
			c.JSON(http.StatusOK, session{Reason: reason, Message: web.SignInMessage(reason, web.Language(c.Request))})
			return
		}
	}
	if err != nil {
		s.fail(c, err)
		return
	}
	state(c).principal = &p // for the log line, and what it sees
	c.JSON(http.StatusOK, s.signedIn(c))
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
	if !p.Allows(dataset.ReportRead) && !p.Allows(dataset.UsersRead) {
		s.fail(c, failure.Errorf(failure.Forbidden, "%s", web.SignInMessage("scope", lang)))
		return
	}
	state(c).principal = &p // for the log line, and what it sees
	web.SetSession(c.Writer, token, c.Request.TLS != nil)
	c.JSON(http.StatusOK, s.signedIn(c))
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
