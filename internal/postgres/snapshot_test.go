package postgres_test

import (
	"context"
	"testing"
	"time"

	"github.com/informe/informe/internal/failure"
	"github.com/informe/informe/internal/pgserver/pgtest"
	"github.com/informe/informe/internal/postgres"
)

// TestStatementTimeout checks that WithStatementTimeout bounds the
// snapshot's statements with a transaction-level setting, answered as
// failure.Unavailable, and leaves the connection's own setting alone.
func TestStatementTimeout(t *testing.T) {
	t.Parallel()
	pool := pgtest.New(t)
	ctx := postgres.WithStatementTimeout(context.Background(), 50*time.Millisecond)
	snap, err := postgres.Begin(ctx, pool)
	if err != nil {
		t.Fatal(err)
	}
	var setting string
	if err := snap.QueryRow("SHOW statement_timeout", nil, &setting); err != nil || setting != "50ms" {
		t.Fatalf("statement_timeout = %q, %v; want 50ms", setting, err)
	}
	var x any
	err = snap.QueryRow("SELECT pg_sleep(5)", nil, &x)
	if failure.CodeOf(err) != failure.Unavailable {
		t.Fatalf("err = %v, want failure.Unavailable", err)
	}
	snap.Close()
	snap, err = postgres.Begin(context.Background(), pool)
	if err != nil {
		t.Fatal(err)
	}
	defer snap.Close()
	if err := snap.QueryRow("SHOW statement_timeout", nil, &setting); err != nil || setting != "0" {
		t.Fatalf("statement_timeout after = %q, %v; want the server's 0", setting, err)
	}
}
