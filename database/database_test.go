package database_test

import (
	"context"
	"testing"

	"github.com/informe/informe/database"
	"github.com/informe/informe/database/dbtest"
)

func TestMain(m *testing.M) { dbtest.Main(m) }

func TestMigrateTwiceChangesNothing(t *testing.T) {
	pool := dbtest.New(t) // already migrated once
	ctx := context.Background()
	n, err := database.Migrate(ctx, pool)
	if err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Fatalf("second migrate applied %d migrations, want 0", n)
	}
}
