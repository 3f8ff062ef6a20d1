package seed

import (
	"slices"
	"testing"

	"github.com/informe/informe/internal/catalog"
)

// TestStatusesInCatalog checks that the page offers, as a status column's
// choice, exactly the statuses the data holds.
func TestStatusesInCatalog(t *testing.T) {
	names := func(cs []choice) []string {
		var out []string
		for _, c := range cs {
			out = append(out, c.name)
		}
		return out
	}
	want := map[string][]string{"contract_status": names(contractStatuses), "task_status": names(taskStatuses)}
	sets, err := catalog.Datasets()
	if err != nil {
		t.Fatal(err)
	}
	found := 0
	for _, d := range sets {
		for _, g := range d.Groups {
			for _, c := range g.Columns {
				if w, ok := want[c.Name]; ok && d.Name == "report" {
					found++
					if !slices.Equal(c.Values, w) {
						t.Errorf("%s offers %q, the data holds %q", c.Name, c.Values, w)
					}
				}
			}
		}
	}
	if found != len(want) {
		t.Errorf("%d status columns in the report's catalogue, want %d", found, len(want))
	}
}
