// Package s3test starts S3-compatible servers for the tests of S3
// delivery: gofakes3's server (the S3 HTTP API, multipart uploads
// included, over objects in memory) on a loopback port, in the test's
// process, stopped at the test's end. gofakes3 does not check
// credentials; a gate in front of it knows two access keys, one that may
// write and one that may only read, and answers as S3 does to any other
// (InvalidAccessKeyId) and to a write with the second (AccessDenied), and
// a quota on the bytes written, answered as MinIO does when its disk is
// full (507, XMinioStorageFull). Signatures are not verified.
package s3test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"sync"
	"testing"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
)

// Server is a running S3-compatible server.
type Server struct {
	Endpoint    string // http://127.0.0.1:port
	Bucket      string // a bucket that exists
	AccessKey   string // may write
	SecretKey   string
	ReadOnlyKey string // may read, not write

	mu    sync.Mutex
	quota int64 // bytes that may still be written; < 0: no quota
}

// Start starts a server for tb with one bucket, stopped when tb ends.
func Start(tb testing.TB) *Server {
	tb.Helper()
	backend := s3mem.New()
	s := &Server{Bucket: "reports", AccessKey: "INFORMETESTWRITER", SecretKey: "test-secret-key-of-the-writer", ReadOnlyKey: "INFORMETESTREADER", quota: -1}
	if err := backend.CreateBucket(s.Bucket); err != nil {
		tb.Fatal(err)
	}
	fake := gofakes3.New(backend, gofakes3.WithAutoBucket(false)).Server()
	srv := httptest.NewServer(s.gate(fake))
	tb.Cleanup(srv.Close)
	s.Endpoint = srv.URL
	return s
}

// SetQuota lets n more bytes be written; n < 0 removes the quota.
func (s *Server) SetQuota(n int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.quota = n
}

var credential = regexp.MustCompile(`Credential=([^/]+)/`)

// gate checks the access key of each request and the quota before next.
func (s *Server) gate(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		m := credential.FindStringSubmatch(r.Header.Get("Authorization"))
		key := ""
		if m != nil {
			key = m[1]
		}
		write := r.Method == http.MethodPut || r.Method == http.MethodPost || r.Method == http.MethodDelete
		switch {
		case key != s.AccessKey && key != s.ReadOnlyKey:
			s3Error(w, http.StatusForbidden, "InvalidAccessKeyId", "The AWS Access Key Id you provided does not exist in our records.")
			return
		case key == s.ReadOnlyKey && write:
			s3Error(w, http.StatusForbidden, "AccessDenied", "Access Denied.")
			return
		}
		if r.Method == http.MethodPut && r.ContentLength > 0 {
			s.mu.Lock()
			full := s.quota >= 0 && r.ContentLength > s.quota
			if s.quota >= 0 && !full {
				s.quota -= r.ContentLength
			}
			s.mu.Unlock()
			if full {
				s3Error(w, http.StatusInsufficientStorage, "XMinioStorageFull", "Storage backend has reached its minimum free drive threshold.")
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

// s3Error answers as S3 does.
func s3Error(w http.ResponseWriter, status int, code, message string) {
	w.Header().Set("Content-Type", "application/xml")
	w.WriteHeader(status)
	fmt.Fprintf(w, `<?xml version="1.0" encoding="UTF-8"?><Error><Code>%s</Code><Message>%s</Message></Error>`, code, message)
}
