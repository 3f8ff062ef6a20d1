// Package apitest serves the real API over loopback HTTP for the tests of
// other packages: [New] wires an [api.Server] over a test database as
// informe serve does, every read recorded, and its requests return whole
// [Response]s. The tests' data sets are pgtest's.
package apitest

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"io"
	"log/slog"
	"mime"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/informe/informe/auth"
	"github.com/informe/informe/internal/api"
	"github.com/informe/informe/internal/audit"
	"github.com/informe/informe/internal/dataset"
	"github.com/informe/informe/internal/postgres"
	"github.com/informe/informe/internal/source"
	"github.com/informe/informe/internal/testenv"
	"github.com/informe/informe/internal/web"
	"github.com/informe/informe/metrics"
	"github.com/informe/informe/report"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Server is the real API served over loopback HTTP, as cmd/informe
// wires it, with its log kept for inspection.
type Server struct {
	URL    string
	Pool   *pgxpool.Pool
	Tokens *auth.Store
	Logs   *testenv.Buffer
	Token  string // carries every scope
}

// New serves the API over pool, recording every read, with a token
// carrying the default scopes.
func New(tb testing.TB, pool *pgxpool.Pool) *Server {
	tb.Helper()
	s := &api.Server{
		Report:  source.Report(report.Maintained),
		Tokens:  auth.NewStore(pool),
		Metrics: metrics.New(pool),
	}
	// Every read is recorded, as informe serve records it, so that every
	// test of a door passes through the audit too.
	Audited(tb, pool, s)
	ts := Serve(tb, s)
	ts.Pool = pool
	ts.Token = ts.NewToken(tb, "all", nil, time.Time{})
	return ts
}

// Serve serves s over loopback HTTP until the test ends, giving it a
// logger that writes into the returned server's Logs.
func Serve(tb testing.TB, s *api.Server) *Server {
	tb.Helper()
	return ServeOn(tb, s, nil)
}

// ServeOn is [Serve] with the listener wrapped by wrap, unless it is nil.
func ServeOn(tb testing.TB, s *api.Server, wrap func(net.Listener) net.Listener) *Server {
	tb.Helper()
	return start(tb, s, wrap, (*httptest.Server).Start)
}

// ServeTLS is [Serve] over HTTPS, with httptest's self-signed certificate.
func ServeTLS(tb testing.TB, s *api.Server) *Server {
	tb.Helper()
	return start(tb, s, nil, (*httptest.Server).StartTLS)
}

// start serves s, its listener wrapped by wrap unless it is nil, started
// by how, until the test ends.
func start(tb testing.TB, s *api.Server, wrap func(net.Listener) net.Listener, how func(*httptest.Server)) *Server {
	tb.Helper()
	logs := &testenv.Buffer{}
	s.Logger = slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	hs := httptest.NewUnstartedServer(s.Handler())
	if wrap != nil {
		hs.Listener = wrap(hs.Listener)
	}
	hs.Config.ConnContext = api.ConnContext
	how(hs)
	tb.Cleanup(hs.Close)
	return &Server{URL: hs.URL, Tokens: s.Tokens, Logs: logs}
}

// NewToken creates a token named name with scopes (nil: the default ones)
// and opts, expiring at expires (zero: never).
func (ts *Server) NewToken(tb testing.TB, name string, scopes []dataset.Scope, expires time.Time, opts ...auth.Option) string {
	tb.Helper()
	tok, err := ts.Tokens.Create(context.Background(), name, scopes, expires, opts...)
	if err != nil {
		tb.Fatalf("create token %s: %v", name, err)
	}
	return tok
}

// Response is a fully read HTTP response.
type Response struct {
	Status int
	Header http.Header
	Body   []byte
}

// Client sends the tests' requests, each bounded to a minute.
var Client = &http.Client{Timeout: 60 * time.Second}

// Do sends a request to the server and reads the whole response. header
// holds name, value pairs.
func (ts *Server) Do(tb testing.TB, method, target string, header ...string) Response {
	tb.Helper()
	return RoundTrip(tb, NewRequest(tb, method, ts.URL+target, nil, header...))
}

// NewRequest returns the request of method for url with body (which may
// be nil) and header, name, value pairs.
func NewRequest(tb testing.TB, method, url string, body io.Reader, header ...string) *http.Request {
	tb.Helper()
	req, err := http.NewRequest(method, url, body)
	if err != nil {
		tb.Fatal(err)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Add(header[i], header[i+1])
	}
	return req
}

// RoundTrip sends req and reads the whole response.
func RoundTrip(tb testing.TB, req *http.Request) Response {
	tb.Helper()
	resp, err := Client.Do(req)
	if err != nil {
		tb.Fatalf("%s %s: %v", req.Method, req.URL, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		tb.Fatalf("%s %s: reading body: %v", req.Method, req.URL, err)
	}
	return Response{Status: resp.StatusCode, Header: resp.Header, Body: body}
}

// Get sends GET target with the server's all-scopes token.
func (ts *Server) Get(tb testing.TB, target string, header ...string) Response {
	tb.Helper()
	return ts.Do(tb, http.MethodGet, target, append([]string{"Authorization", "Bearer " + ts.Token}, header...)...)
}

// MediaType returns the media type of the response, without parameters.
func (r Response) MediaType(tb testing.TB) string {
	tb.Helper()
	ct := r.Header.Get("Content-Type")
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil {
		tb.Fatalf("Content-Type %q: %v", ct, err)
	}
	return mt
}

// Message returns the message of a JSON error body, failing the test if the
// body is not {"message": string}, with optional string code and target,
// and a positive position, beside it, served as application/json.
func (r Response) Message(tb testing.TB) string {
	tb.Helper()
	if got, want := r.MediaType(tb), "application/json"; got != want {
		tb.Fatalf("error Content-Type = %q, want %q; body %s", got, want, r.Body)
	}
	var m map[string]any
	if err := json.Unmarshal(r.Body, &m); err != nil {
		tb.Fatalf("error body %s: %v", r.Body, err)
	}
	msg, ok := m["message"].(string)
	n := 1
	for _, k := range []string{"code", "target"} {
		if v, present := m[k]; present {
			if _, isString := v.(string); !isString {
				ok = false
			}
			n++
		}
	}
	if v, present := m["position"]; present {
		if f, isNumber := v.(float64); !isNumber || f < 1 || f != float64(int(f)) {
			ok = false
		}
		n++
	}
	if !ok || len(m) != n {
		tb.Fatalf("error body %s, want a string field message, and only string code and target and a positive position beside it", r.Body)
	}
	return msg
}

// WantError checks an error response: its status and that its JSON
// message contains msg.
func (r Response) WantError(tb testing.TB, status int, msg string) {
	tb.Helper()
	if r.Status != status {
		tb.Fatalf("status = %d, want %d; body %s", r.Status, status, r.Body)
	}
	if got := r.Message(tb); !strings.Contains(got, msg) {
		tb.Errorf("message = %q, want it to contain %q", got, msg)
	}
	if r.Header.Get("X-Request-Id") == "" {
		tb.Error("no X-Request-Id")
	}
	if got, want := r.Header.Get("Cache-Control"), "private, no-store"; got != want {
		tb.Errorf("Cache-Control = %q, want %q", got, want)
	}
}

// WellFormedToken returns a token of the right shape that no store knows.
func WellFormedToken() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	return "informe_" + base64.RawURLEncoding.EncodeToString(b)
}

// NewWebServer serves the API and the web page over pool, with a token
// carrying every scope.
func NewWebServer(tb testing.TB, pool *pgxpool.Pool) *Server {
	tb.Helper()
	site, err := web.New()
	if err != nil {
		tb.Fatal(err)
	}
	ts := Serve(tb, &api.Server{
		Data: postgres.NewStore(pool), Report: source.Report(report.Maintained),
		Tokens:  auth.NewStore(pool),
		Metrics: metrics.New(pool),
		Site:    site,
	})
	ts.Pool = pool
	ts.Token = ts.NewToken(tb, "all", nil, time.Time{})
	return ts
}

// Post sends POST target with body and reads the whole response.
func (ts *Server) Post(tb testing.TB, target, body string, header ...string) Response {
	tb.Helper()
	return RoundTrip(tb, NewRequest(tb, http.MethodPost, ts.URL+target, strings.NewReader(body), header...))
}

// RuledToken creates a token named name with every scope and rules r.
func (ts *Server) RuledToken(tb testing.TB, name string, r dataset.Rules) string {
	tb.Helper()
	return ts.NewToken(tb, name, nil, time.Time{}, auth.WithRules(&r))
}

// Audited makes s record every read in pool's database as informe serve
// does when that database keeps the records (each inserted in its read's
// first round trip), under the required mode, and returns the log, whose
// writer runs until the test ends.
func Audited(tb testing.TB, pool *pgxpool.Pool, s *api.Server) *audit.Log {
	return AuditedHow(tb, pool, s, true)
}

// AuditedHow is [Audited], with onReads false as informe serve does with
// --audit-database-url: each record inserted beside its read, through the
// log's own pool.
func AuditedHow(tb testing.TB, pool *pgxpool.Pool, s *api.Server, onReads bool) *audit.Log {
	tb.Helper()
	log := audit.New(PoolOf(tb, pool, 4), audit.Required, "test", nil)
	if onReads {
		log.OnReads()
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); log.Run(ctx) }()
	tb.Cleanup(func() { cancel(); <-done })
	s.Data = postgres.NewStore(pool).Told(log.Reading)
	s.Audit = log
	return log
}

// PoolOf returns a pool of at most n connections on pool's database, with
// pool's settings (application_name informe, cancel on context end).
func PoolOf(tb testing.TB, pool *pgxpool.Pool, n int32) *pgxpool.Pool {
	tb.Helper()
	cfg := pool.Config().Copy()
	cfg.MaxConns, cfg.MinConns = n, 0
	p, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(p.Close)
	return p
}

// OptionError is what a door answered about a query option: the status,
// the reason, the option at fault and the position in its value.
type OptionError struct {
	Status   int
	Reason   string
	Target   string
	Position int
}

// ODataOptionError returns the OData error the feed answers target with.
func ODataOptionError(t *testing.T, ts *Server, target string) OptionError {
	t.Helper()
	r := ts.Get(t, target)
	var e struct {
		Error struct {
			Code, Message, Target string
			InnerError            struct {
				Code     string
				Position int
			}
		}
	}
	if err := json.Unmarshal(r.Body, &e); err != nil || e.Error.Message == "" {
		t.Fatalf("%s: body %s, want an OData error", target, r.Body)
	}
	if got, want := e.Error.Code, strings.ReplaceAll(http.StatusText(r.Status), " ", ""); got != want {
		t.Errorf("%s: code %q, want %q", target, got, want)
	}
	return OptionError{r.Status, e.Error.InnerError.Code, e.Error.Target, e.Error.InnerError.Position}
}

// JSONOptionError returns the JSON error an API path answers target with.
func JSONOptionError(t *testing.T, ts *Server, target string) OptionError {
	t.Helper()
	r := ts.Get(t, target)
	r.Message(t) // the body's shape
	var e struct {
		Code, Target string
		Position     int
	}
	if err := json.Unmarshal(r.Body, &e); err != nil {
		t.Fatalf("%s: body %s: %v", target, r.Body, err)
	}
	return OptionError{r.Status, e.Code, e.Target, e.Position}
}

// SpanishFold is SQL's own folding of the Spanish letters, written apart
// from informe_fold, for the counts the doors are checked against.
func SpanishFold(col string) string {
	return "translate(lower(" + col + " COLLATE informe_case), 'áéíóúüñ', 'aeiouun')"
}
