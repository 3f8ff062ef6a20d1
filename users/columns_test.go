package users_test

import (
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/informe/informe/internal/dataset"
	"github.com/informe/informe/internal/pgserver/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// TestColumnsMatchSpecAndView checks that dataset.Users.Columns, the spec's field
// order (docs/spec/users-columns.txt) and the user_list view agree.
func TestColumnsMatchSpecAndView(t *testing.T) {
	spec, err := os.ReadFile("../docs/spec/users-columns.txt")
	if err != nil {
		t.Fatal(err)
	}
	got, want := dataset.Names(dataset.Users.Columns), strings.Fields(string(spec))
	if !slices.Equal(got, want) {
		t.Fatalf("dataset.Users.Columns = %v\nwant spec order %v", got, want)
	}
	pool := pgtest.New(t)
	view := pgtest.Columns(t, pool, "user_list")
	if want := append(slices.Clone(got), "key_id"); !slices.Equal(view, want) {
		t.Errorf("user_list columns = %v\nwant %v", view, want)
	}
}
