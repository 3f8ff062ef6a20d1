package api_test

import (
	"encoding/json"
	"net/url"
	"strings"
	"testing"

	"github.com/informe/informe/internal/pgserver/pgtest"
)

// odataError is the body of an OData error response.
type odataError struct {
	Error struct{ Code, Message, Target string } `json:"error"`
}

// wantODataError checks that r is an OData error of status and code whose
// target is target.
func wantODataError(t *testing.T, r response, status int, code, target string) odataError {
	t.Helper()
	if r.Status != status {
		t.Fatalf("status = %d, want %d: %s", r.Status, status, r.Body)
	}
	var e odataError
	if err := json.Unmarshal(r.Body, &e); err != nil {
		t.Fatalf("body %s: %v", r.Body, err)
	}
	if e.Error.Code != code || e.Error.Target != target || !strings.Contains(e.Error.Message, target) {
		t.Fatalf("body %s, want code %s, target %s and a message naming it", r.Body, code, target)
	}
	return e
}

// TestODataTextNotUTF8Is400 sends string literals holding bytes that are
// not UTF-8, or a NUL, which PostgreSQL cannot hold (22021): each is a 400
// naming the option, on the feed, on /$count and on Users, never a 500.
func TestODataTextNotUTF8Is400(t *testing.T) {
	ts := newServer(t, fixtureDB(t))
	for _, tt := range []struct {
		name, query, target string
	}{
		{"FilterFF", "$filter=task_status%20eq%20'%FF'", "$filter"},
		{"FilterNUL", "$filter=task_status%20eq%20'a%00b'", "$filter"},
		{"FilterLatin1", "$filter=contains(last_name_client,'Nu%F1ez')", "$filter"},
		{"FilterTruncated", "$filter=startswith(task_status,'%C3')", "$filter"},
		{"FilterOutsideLiteral", "$filter=task_status%00%20eq%20'a'", "$filter"},
		{"OrderByNUL", "$orderby=task_status%00", "$orderby"},
		{"SelectFF", "$select=task%FF", "$select"},
	} {
		for _, path := range []string{"/odata/GeneralReport", "/odata/GeneralReport/$count", "/odata/Users"} {
			t.Run(tt.name+path, func(t *testing.T) {
				q := tt.query
				if path == "/odata/Users" {
					// The same literals on a property of Users.
					q = strings.NewReplacer("task_status", "status", "last_name_client", "name", "task", "name").Replace(q)
				}
				r := ts.get(t, path+"?"+q)
				wantODataError(t, r, 400, "BadRequest", tt.target)
			})
		}
	}
	// Valid UTF-8 in the same places is answered.
	for _, target := range []string{
		"/odata/GeneralReport?$filter=" + url.QueryEscape("contains(last_name_client,'Muñoz')"),
		"/odata/GeneralReport/$count?$filter=" + url.QueryEscape("startswith(client_region,'Región')"),
		"/odata/Users?$filter=" + url.QueryEscape("name eq 'Carla Díaz'"),
	} {
		if r := ts.get(t, target); r.Status != 200 {
			t.Errorf("%s: status %d: %s", target, r.Status, r.Body)
		}
	}
}

var _ = pgtest.Seeded
