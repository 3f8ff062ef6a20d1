package auth_test

import (
	"bytes"
	"errors"
	"testing"
	"time"

	"github.com/informe/informe/auth"
	"github.com/informe/informe/internal/dataset"
)

func TestWriteTable(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	at := func(s string) *time.Time {
		v, err := time.Parse(time.DateTime, s)
		if err != nil {
			t.Fatal(err)
		}
		return &v
	}
	created := *at("2026-01-02 03:04:05")
	tokens := []auth.Token{
		{Name: "finanzas-sheet", Scopes: []dataset.Scope{dataset.ReportRead}, CreatedAt: created},
		{Name: "a", Scopes: auth.Scopes, CreatedAt: created, ExpiresAt: at("2026-03-01 12:00:00")},
		{Name: "later", Scopes: auth.Scopes, CreatedAt: created.In(time.FixedZone("CLT", -3*3600)), ExpiresAt: at("2027-01-01 00:00:00")},
		{Name: "old\tone", Scopes: []dataset.Scope{dataset.UsersRead}, CreatedAt: created, RevokedAt: at("2026-02-01 00:00:00")},
	}
	var got bytes.Buffer
	if err := auth.WriteTable(&got, tokens, now); err != nil {
		t.Fatal(err)
	}
	want := `NAME            SCOPES                  CREATED              EXPIRES              STATE
finanzas-sheet  report:read             2026-01-02 03:04:05  never                active
a               report:read,users:read  2026-01-02 03:04:05  2026-03-01 12:00:00  expired
later           report:read,users:read  2026-01-02 03:04:05  2027-01-01 00:00:00  active
old one         users:read              2026-01-02 03:04:05  never                revoked 2026-02-01 00:00:00
`
	if got.String() != want {
		t.Errorf("table:\n%s\nwant:\n%s", got.String(), want)
	}

	var empty bytes.Buffer
	if err := auth.WriteTable(&empty, nil, now); err != nil {
		t.Fatal(err)
	}
	if got, want := empty.String(), "NAME  SCOPES  CREATED  EXPIRES  STATE\n"; got != want {
		t.Errorf("no tokens: %q, want %q", got, want)
	}

	if err := auth.WriteTable(failingWriter{}, tokens, now); !errors.Is(err, errWrite) {
		t.Errorf("failing writer: err = %v, want %v", err, errWrite)
	}
}

var errWrite = errors.New("disk full")

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errWrite }
