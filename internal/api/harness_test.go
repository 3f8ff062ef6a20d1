package api_test

import (
	"net"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/informe/informe/internal/api"
	"github.com/informe/informe/internal/api/apitest"
)

// testServer is [apitest.Server] with this package's own requests (the
// methods of the tests' files).
type testServer struct{ *apitest.Server }

// response is a fully read HTTP response.
type response = apitest.Response

// newServer is [apitest.New].
func newServer(tb testing.TB, pool *pgxpool.Pool) *testServer {
	return &testServer{apitest.New(tb, pool)}
}

// newWebServer is [apitest.NewWebServer].
func newWebServer(tb testing.TB, pool *pgxpool.Pool) *testServer {
	return &testServer{apitest.NewWebServer(tb, pool)}
}

// serve is [apitest.Serve].
func serve(tb testing.TB, s *api.Server) *testServer {
	return &testServer{apitest.Serve(tb, s)}
}

// serveOn is [apitest.ServeOn].
func serveOn(tb testing.TB, s *api.Server, wrap func(net.Listener) net.Listener) *testServer {
	return &testServer{apitest.ServeOn(tb, s, wrap)}
}

// optionError is [apitest.OptionError], written in this package's tables
// without its fields' names.
type optionError apitest.OptionError
