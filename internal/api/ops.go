package api

import (
	"context"
	"fmt"
	"net/http"
	"time"
)

// healthz answers 200 while the process serves.
func (s *Server) healthz(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprintln(w, `{"status":"ok"}`)
}

// readyz answers 200 when the database answers, 503 when it does not.
func (s *Server) readyz(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
	defer cancel()
	w.Header().Set("Content-Type", "application/json")
	if err := s.Pool.Ping(ctx); err != nil {
		w.WriteHeader(http.StatusServiceUnavailable)
		fmt.Fprintln(w, `{"status":"database unreachable"}`)
		return
	}
	fmt.Fprintln(w, `{"status":"ready"}`)
}
