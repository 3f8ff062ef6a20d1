// Package api is informe's HTTP edge: the route tables of both listeners,
// authentication, content negotiation, the one error mapping, and the
// streaming of rows from the stores' cursors into the encoders. It is the
// only package that knows gin.
package api

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/gin-gonic/gin"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/informe/informe/auth"
	"github.com/informe/informe/internal/audit"
	"github.com/informe/informe/internal/postgres"
	"github.com/informe/informe/internal/road"
	"github.com/informe/informe/internal/source"
	"github.com/informe/informe/internal/web"
	"github.com/informe/informe/metrics"
)

// Server serves the API. All fields are required but TrustedProxies.
type Server struct {
	// Data reads the datasets: Report (the general report, as its
	// counting is configured) and the other datasets of dataset.All.
	Data    *postgres.Store
	Report  *source.Source
	Tokens  *auth.Store
	Metrics *metrics.Metrics
	Logger  *slog.Logger
	Pool    *pgxpool.Pool // for readiness
	Limits  Limits
	// Delivery says how bodies reach clients (the spool's bounds).
	Delivery Delivery
	// Site is the web page served at /; nil serves no page (/ is then an
	// unknown path, 401 without a token).
	Site *web.Site
	// ReadyWhenBusy makes /readyz answer 200 (status "busy") rather than
	// 503 when every pool connection is in use.
	ReadyWhenBusy bool
	// TrustedProxies are the peers whose X-Forwarded-Host,
	// X-Forwarded-Proto and X-Forwarded-For informe believes, for the
	// links it writes and the client's address; with none, it believes
	// no one's. See [ParseTrustedProxies].
	TrustedProxies []netip.Prefix
	// PublicURL is the URL clients reach the API at, from which the
	// absolute links informe writes (OData's context and next links) are
	// built; nil builds them from the address each connection reached.
	// See [ParsePublicURL].
	PublicURL *url.URL
	// Audit records every read and counts refused requests; nil records
	// nothing. Data must tell it of each read (postgres.Store.Told).
	Audit *audit.Log

	// admission admits every request's read to the database: turns of
	// big responses by token, and the cores among them and small
	// requests; made by Handler
	admission *road.Admission
	feeds     *feeds // the OData entity sets, made by Handler
	ruled     ruledFeeds
	draining  atomic.Bool
	inFlight  sync.WaitGroup // requests between arrival and their log line
}

// WaitIdle waits until every request in flight has ended and written its
// log line, or until ctx is done, and reports whether they all ended.
// After a forced shutdown it lets the cut requests finish their logs.
func (s *Server) WaitIdle(ctx context.Context) bool {
	idle := make(chan struct{})
	go func() { s.inFlight.Wait(); close(idle) }()
	select {
	case <-idle:
		return true
	case <-ctx.Done():
		return false
	}
}

// Drain makes /readyz answer 503 from now on, so that load balancers stop
// sending requests while the server shuts down.
func (s *Server) Drain() { s.draining.Store(true) }

// Handler returns the API listener's routes. Every request is
// authenticated before it is routed, so an unknown path answers 401
// without a valid token and 404 with one; only the web page's public paths
// (the page at /, its assets, signing in and out; see publicPage) need no
// token, and only when [Server.Site] is set.
func (s *Server) Handler() http.Handler {
	s.admission = road.NewAdmission(s.Limits.Limits, s.Metrics)
	s.feeds = s.newFeeds()
	gin.SetMode(gin.ReleaseMode)
	r := gin.New()
	proxies := make([]string, len(s.TrustedProxies))
	for i, p := range s.TrustedProxies {
		proxies[i] = p.String()
	}
	if err := r.SetTrustedProxies(proxies); err != nil {
		panic(err) // a netip.Prefix always parses
	}
	r.HandleMethodNotAllowed = true
	// Redirects would answer before authentication runs.
	r.RedirectTrailingSlash = false
	r.RedirectFixedPath = false
	r.Use(s.observe, s.recoverPanics, s.limitRequest, s.limitHeaders, s.authenticate)
	r.NoRoute(func(c *gin.Context) { s.fail(c, errNotFound) })
	r.NoMethod(func(c *gin.Context) { s.fail(c, errMethodNotAllowed) })

	// Every GET path answers HEAD too (RFC 9110).
	get := []string{http.MethodGet, http.MethodHead}
	r.Match(get, s.Report.PagePath, s.require(s.Report.Scope), s.generalReport)
	// Each dataset exported whole: /api/general-report/export, /users,
	// /api/contracts/export, ...
	for _, src := range s.feeds.all {
		r.Match(get, src.ExportPath, s.require(src.Scope), s.exportOf(src))
	}

	// The OpenAPI 3.1 document of all of the above.
	r.Match(get, "/openapi.json", s.openAPI)

	// The OData feed, for Excel's and Power BI's OData connectors.
	r.Match(get, odataPrefix, s.odataService)
	r.Match(get, odataPrefix+"/", s.odataService)
	r.Match(get, odataPrefix+"/$metadata", s.odataMetadata)
	for _, set := range s.feeds.all {
		r.Match(get, odataPrefix+"/"+set.Set.Name(), s.require(set.Scope), s.odataFeed(set))
		r.Match(get, odataPrefix+"/"+set.Set.Name()+"/$count", s.require(set.Scope), s.odataCount(set))
	}
	r.Match(get, odataPrefix+"/:entity", s.odataEntity) // GeneralReport('6-7-7'), Users(42), Contracts(7): by key

	// The web page; / and its assets need no token (see publicPage).
	if s.Site != nil {
		r.Match(get, "/", s.page)
		r.Match(get, web.AssetPrefix+":name", s.asset)
		r.POST(signInPath, s.signIn)
		r.POST(signOutPath, s.signOut)
		r.GET(sessionPath, s.currentSession)
		r.Match(get, iconPath, s.icon)
	}
	return r
}

// ParseTrustedProxies parses a comma-separated list of CIDR prefixes
// ("10.0.0.0/8, 2001:db8::/32"); a bare address stands for itself. An
// empty list trusts no one. A malformed element is an error naming it.
func ParseTrustedProxies(list string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, el := range strings.Split(list, ",") {
		el = strings.TrimSpace(el)
		if el == "" {
			continue
		}
		if a, err := netip.ParseAddr(el); err == nil {
			out = append(out, netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen()))
			continue
		}
		p, err := netip.ParsePrefix(el)
		if err != nil {
			return nil, fmt.Errorf("trusted proxies: %q is neither a CIDR prefix nor an address", el)
		}
		out = append(out, p.Masked())
	}
	return out, nil
}

// ParsePublicURL parses the URL clients reach the API at: http or https,
// a host, and perhaps a path prefix under which a proxy serves informe; no
// query, fragment or user information. An empty string is nil.
func ParsePublicURL(s string) (*url.URL, error) {
	if s == "" {
		return nil, nil
	}
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" ||
		u.User != nil || u.RawQuery != "" || u.Fragment != "" || u.Opaque != "" {
		return nil, fmt.Errorf("public URL: %q is not an http or https URL with a host and no query", s)
	}
	u.Path = strings.TrimSuffix(u.Path, "/")
	u.RawPath = ""
	return u, nil
}

// fromTrustedProxy reports whether r came straight from one of the
// trusted proxies, so that its X-Forwarded-* headers can be believed.
func (s *Server) fromTrustedProxy(r *http.Request) bool {
	ap, err := netip.ParseAddrPort(r.RemoteAddr)
	if err != nil {
		return false
	}
	for _, p := range s.TrustedProxies {
		if p.Contains(ap.Addr().Unmap()) {
			return true
		}
	}
	return false
}

// validHost reports whether h is a host as a trusted proxy may forward
// it in X-Forwarded-Host: a DNS name (letters, digits and hyphens in dot
// separated labels of at most 63 characters, 253 in all), an IPv4 address
// or a bracketed IPv6 address, with an optional port from 1 to 65535.
// Anything else (quotes, a second host, a port past 65535) would go into
// links as it was sent.
func validHost(h string) bool {
	name, port := h, ""
	if i := strings.LastIndexByte(h, ':'); i >= 0 && !strings.HasSuffix(h, "]") {
		name, port = h[:i], h[i+1:]
		if port == "" || len(port) > 5 || strings.Trim(port, "0123456789") != "" {
			return false
		}
		if n, _ := strconv.Atoi(port); n < 1 || n > 65535 {
			return false
		}
	}
	if strings.HasPrefix(name, "[") && strings.HasSuffix(name, "]") {
		a, err := netip.ParseAddr(name[1 : len(name)-1])
		return err == nil && a.Is6() && a.Zone() == ""
	}
	if name == "" || len(name) > 253 {
		return false
	}
	for _, label := range strings.Split(strings.TrimSuffix(name, "."), ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for i := 0; i < len(label); i++ {
			c := label[i]
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-') {
				return false
			}
		}
	}
	return true
}

// OpsHandler returns the operations listener's routes, apart from the
// authenticated API so that load balancers and Prometheus need no token:
// metrics, liveness and readiness. A request target over [MaxURIBytes]
// is refused with 414, header fields over [MaxHeaderBytes] with 431, in
// JSON, as on the API.
func (s *Server) OpsHandler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", s.Metrics.Handler())
	mux.HandleFunc("GET /healthz", s.healthz)
	mux.HandleFunc("GET /readyz", s.readyz)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Cache-Control", "private, no-store")
		switch {
		case len(r.RequestURI) > MaxURIBytes:
			writeFailure(w, errURITooLong)
		case headerBytes(r) > MaxHeaderBytes:
			writeFailure(w, errHeadersTooLarge)
		default:
			mux.ServeHTTP(w, r)
		}
	})
}
