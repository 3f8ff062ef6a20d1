package postgres_test

import (
	"context"
	"testing"

	"github.com/informe/informe/internal/pgserver/pgtest"
	"github.com/informe/informe/internal/postgres"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

func TestMigrateTwiceChangesNothing(t *testing.T) {
	t.Parallel()
	pool := pgtest.New(t) // already migrated once
	ctx := context.Background()
	n, err := postgres.Migrate(ctx, pool)
	if err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Fatalf("second migrate applied %d migrations, want 0", n)
	}
}
