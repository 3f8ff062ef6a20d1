package api

import (
	"context"
	"encoding/json"
	"net/http"
	"runtime"
	"sync"
	"time"
	"weak"

	"github.com/gin-gonic/gin"

	"github.com/informe/informe/internal/dataset"
	"github.com/informe/informe/internal/openapi"
)

// healthz answers 200 while the process serves.
func (s *Server) healthz(w http.ResponseWriter, r *http.Request) {
	writeStatus(w, http.StatusOK, "ok")
}

// readyz says whether this instance should get traffic: 503 "shutting
// down" once [Server.Drain] was called, 503 "database unreachable" when the
// database does not answer, "busy" when every pool connection is in use
// (200 unless [Server.ReadyWhenBusy] is false: a busy pool is no reason to
// pull an instance whose database works), else 200 "ready".
func (s *Server) readyz(w http.ResponseWriter, r *http.Request) {
	if s.draining.Load() {
		writeStatus(w, http.StatusServiceUnavailable, "shutting down")
		return
	}
	st := s.Pool.Stat()
	if st.AcquiredConns() >= st.MaxConns() {
		// Pinging would wait for a connection: the ones in use show the
		// database is working.
		code := http.StatusOK
		if !s.ReadyWhenBusy {
			code = http.StatusServiceUnavailable
		}
		writeStatus(w, code, "busy")
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
	defer cancel()
	if err := s.Pool.Ping(ctx); err != nil {
		writeStatus(w, http.StatusServiceUnavailable, "database unreachable")
		return
	}
	writeStatus(w, http.StatusOK, "ready")
}

func writeStatus(w http.ResponseWriter, code int, status string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(struct {
		Status string `json:"status"`
	}{status})
}

// openAPI serves GET /openapi.json, the OpenAPI 3.1 document of what the
// token may read: the datasets of [Server.feedsOf], as its scopes allow
// and its rules restrict them (a hidden column is in no schema, a masked
// one is marked). A token that reads everything as it is gets the whole
// document.
func (s *Server) openAPI(c *gin.Context) {
	f := s.feedsOf(c)
	if f == s.feeds {
		c.Data(http.StatusOK, "application/json; charset=utf-8", openapi.JSON())
		return
	}
	c.Data(http.StatusOK, "application/json; charset=utf-8", openAPIOf(f))
}

// openAPIDocs keeps the document of each token's feeds while those feeds
// live: made at the token's first request for it, made again when its
// scopes or rules change (feedsOf then makes new feeds), dropped with the
// feeds it describes. Keyed by a weak pointer, so that it keeps no feeds
// alive.
var openAPIDocs sync.Map // weak.Pointer[feeds] -> []byte

// openAPIOf returns the OpenAPI document of f's datasets.
func openAPIOf(f *feeds) []byte {
	key := weak.Make(f)
	if doc, ok := openAPIDocs.Load(key); ok {
		return doc.([]byte)
	}
	datasets := make([]*dataset.Dataset, len(f.all))
	for i, src := range f.all {
		datasets[i] = src.Dataset
	}
	doc, loaded := openAPIDocs.LoadOrStore(key, openapi.For(datasets))
	if !loaded {
		runtime.AddCleanup(f, func(k weak.Pointer[feeds]) { openAPIDocs.Delete(k) }, key)
	}
	return doc.([]byte)
}
