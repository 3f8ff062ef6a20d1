package postgres_test

import (
	"testing"

	"github.com/informe/informe/internal/dataset"
	"github.com/informe/informe/internal/postgres"
)

// TestUnsplit checks which whole exports may be read in parts, and the
// word a request line gives for the others.
func TestUnsplit(t *testing.T) {
	t.Parallel()
	report := *dataset.GeneralReport
	report.Plain = &dataset.ReportReading{Maintained: true}
	equal := dataset.Whole()
	equal.Equal("contract_id", int64(7))
	sorted := dataset.Whole()
	sorted.Sort = []dataset.Sort{{Property: "task_end_date"}}
	expanded := dataset.Whole()
	expanded.Expand = []dataset.Expansion{{}}
	for _, tt := range []struct {
		name string
		d    *dataset.Dataset
		q    dataset.Query
		want string
	}{
		{"Whole", &report, dataset.Whole(), ""},
		{"Equality", &report, equal, postgres.OneEqualities},
		{"Sorted", &report, sorted, postgres.OneSorted},
		{"Expanded", &report, expanded, postgres.OneExpanded},
		{"OtherDataset", dataset.Tasks, dataset.Whole(), postgres.OneDataset},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := postgres.Unsplit(tt.d, tt.q); got != tt.want {
				t.Errorf("Unsplit = %q, want %q", got, tt.want)
			}
		})
	}
}
