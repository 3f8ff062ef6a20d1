package postgres

import (
	"reflect"
	"slices"
	"testing"

	"github.com/informe/informe/internal/dataset"
)

// TestKeyTableDays checks which conditions on a date column are read day
// by day, and which days.
func TestKeyTableDays(t *testing.T) {
	t.Parallel()
	kt := &dataset.KeyTable{Table: "k", Keys: []string{"a"}, Columns: map[string]string{"d": "day", "s": "s"}, Days: []string{"d"}}
	on := func(op, v string) On { return On{Column: "d", Test: op + " $1::date", Op: op, Value: v} }
	for _, tt := range []struct {
		name  string
		on    []On
		first string
		n     int
	}{
		{"Month", []On{on(">=", "2026-03-01"), on("<", "2026-04-01")}, "2026-03-01", 31},
		{"GreaterLessOrEqual", []On{on(">", "2026-02-28"), on("<=", "2026-03-31")}, "2026-03-01", 31},
		{"UpperFirst", []On{on("<", "2026-03-03"), on(">=", "2026-03-01")}, "2026-03-01", 2},
		{"Narrowest", []On{on(">=", "2026-01-01"), on(">=", "2026-03-01"), on("<", "2026-04-01"), on("<", "2026-03-02")}, "2026-03-01", 1},
		{"TwoMonths", []On{on(">=", "2026-01-01"), on("<", "2026-03-04")}, "2026-01-01", 62},
		{"TooLong", []On{on(">=", "2026-01-01"), on("<", "2026-03-05")}, "", 0},
		{"LowerOnly", []On{on(">=", "2026-03-01")}, "", 0},
		{"Empty", []On{on(">=", "2026-03-01"), on("<", "2026-03-01")}, "", 0},
		{"Equal", []On{on("=", "2026-03-01")}, "", 0},
		{"NotADate", []On{on(">=", "2026-03-01"), on("<", "march")}, "", 0},
		{"OtherColumn", []On{{Column: "s", Test: "= $1::text", Op: "=", Value: "x"}}, "", 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			q := query{on: tt.on}
			col, days := keyTableDays(kt, &q)
			if len(days) != tt.n || tt.n > 0 && (days[0] != tt.first || col != "day") {
				t.Fatalf("days = %q, %v; want %d from %s", col, days, tt.n, tt.first)
			}
			if tt.n > 1 && !slices.IsSorted(days) {
				t.Fatalf("days out of order: %v", days)
			}
		})
	}
}

func TestKeyText(t *testing.T) {
	t.Parallel()
	report := &dataset.Dataset{Keys: []string{"key_contract_id", "key_process_id", "key_task_id"}}
	if got, want := keyText(report, "r"), []string{"r.key_contract_id::text", "coalesce(r.key_process_id, 0)::text",
		"coalesce(r.key_task_id, 0)::text"}; !reflect.DeepEqual(got, want) {
		t.Errorf("KeyText = %q, want %q", got, want)
	}
	users := &dataset.Dataset{Keys: []string{"key_id"}, KeyColumn: "id"}
	if got := keyText(users, "r"); got != nil {
		t.Errorf("a column key's KeyText = %q, want none", got)
	}
}
