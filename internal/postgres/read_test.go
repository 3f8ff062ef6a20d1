package postgres_test

import (
	"context"
	"reflect"
	"testing"

	"github.com/informe/informe/internal/dataset"
	"github.com/informe/informe/internal/pgserver/pgtest"
	"github.com/informe/informe/internal/postgres"
)

// textEq returns the condition that the text column equals v.
func textEq(column, v string) *dataset.Expr {
	return &dataset.Expr{Op: dataset.Compare, Type: dataset.Bool, Name: "eq", Args: []*dataset.Expr{
		{Op: dataset.Property, Type: dataset.String, Column: column, Kind: dataset.Text},
		{Op: dataset.Literal, Type: dataset.String, Value: v},
	}}
}

func TestQueryConditions(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name                    string
		build                   func(q *dataset.Query)
		where                   string
		args                    []any
		plain, filterPlain, has bool
	}{
		{"Empty", func(q *dataset.Query) {}, "", []any{}, true, true, false},
		{"Equalities", func(q *dataset.Query) {
			q.Equal("key_client_id", int64(3))
			q.Equal("key_client_rut", "123456785")
		}, "t.key_client_id = $1::bigint AND t.key_client_rut = $2::text", []any{int64(3), "123456785"}, true, true, true},
		{"Condition", func(q *dataset.Query) {
			q.Equal("key_client_id", int64(3))
			q.Filters = append(q.Filters, textEq("task_status", "Pendiente"))
		}, "t.key_client_id = $1::bigint AND t.task_status = $2::text AND t.key_task_id IS NOT NULL", []any{int64(3), "Pendiente"}, false, false, true},
		{"SortOnly", func(q *dataset.Query) {
			q.Sort = []dataset.Sort{{Property: "task_end_date"}}
		}, "", []any{}, false, true, false},
		{"PositionNotCounted", func(q *dataset.Query) {
			q.Filters = append(q.Filters, textEq("task_status", "Pendiente"))
			q.Resume = &dataset.Resume{Key: []int64{7, 0, 0}}
		}, "t.task_status = $1::text AND t.key_task_id IS NOT NULL", []any{"Pendiente"}, false, false, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var q dataset.Query
			tt.build(&q)
			where, args := postgres.Conditions(dataset.GeneralReport, q)
			if where != tt.where || !reflect.DeepEqual(append([]any{}, args...), tt.args) {
				t.Errorf("Conditions() = %q, %v; want %q, %v", where, args, tt.where, tt.args)
			}
			if got := [3]bool{q.Plain(), q.FilterPlain(), q.Filtered()}; got != [3]bool{tt.plain, tt.filterPlain, tt.has} {
				t.Errorf("Plain, FilterPlain, Filtered = %v, want %v", got, [3]bool{tt.plain, tt.filterPlain, tt.has})
			}
		})
	}
}

// TestOpenReleasesOnError checks that a query that fails, at its count or
// at its rows, gives its connection back: a leak would starve the pool.
func TestOpenReleasesOnError(t *testing.T) {
	t.Parallel()
	pool := pgtest.New(t)
	store := postgres.NewStore(pool)
	for _, count := range []bool{true, false} {
		q := dataset.Whole()
		q.Count = count
		q.Filters = append(q.Filters, &dataset.Expr{Op: dataset.Compare, Type: dataset.Bool, Name: "eq", Args: []*dataset.Expr{
			{Op: dataset.Property, Type: dataset.Int, Column: "no_such_column", Kind: dataset.Integer},
			{Op: dataset.Literal, Type: dataset.Int, Value: int64(1)},
		}})
		if _, err := store.Open(context.Background(), dataset.Users, q); err == nil {
			t.Fatalf("count %v: a condition on no column opened", count)
		}
		if n := pool.Stat().AcquiredConns(); n != 0 {
			t.Fatalf("count %v: %d connections still held after the error", count, n)
		}
		if _, err := store.OpenParts(context.Background(), dataset.Users, q, postgres.Parts{Max: 2}); err == nil {
			t.Fatalf("count %v: OpenParts opened", count)
		}
		if n := pool.Stat().AcquiredConns(); n != 0 {
			t.Fatalf("count %v: %d connections still held after OpenParts' error", count, n)
		}
	}
}
