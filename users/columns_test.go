package users_test

import (
	"context"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/informe/informe/database/dbtest"
	"github.com/informe/informe/export"
	"github.com/informe/informe/users"
)

func TestMain(m *testing.M) { dbtest.Main(m) }

// TestColumnsMatchSpecAndView checks that users.Columns, the spec's field
// order (a copy of users-columns.txt) and the user_list view agree.
func TestColumnsMatchSpecAndView(t *testing.T) {
	spec, err := os.ReadFile("testdata/users-columns.txt")
	if err != nil {
		t.Fatal(err)
	}
	got, want := export.Names(users.Columns), strings.Fields(string(spec))
	if !slices.Equal(got, want) {
		t.Fatalf("users.Columns = %v\nwant spec order %v", got, want)
	}
	pool := dbtest.New(t)
	rows, err := pool.Query(context.Background(), "SELECT * FROM user_list LIMIT 0")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var view []string
	for _, f := range rows.FieldDescriptions() {
		view = append(view, f.Name)
	}
	if want := append(slices.Clone(got), "key_id"); !slices.Equal(view, want) {
		t.Errorf("user_list columns = %v\nwant %v", view, want)
	}
}
