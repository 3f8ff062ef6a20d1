package catalog_test

import (
	"testing"

	"github.com/informe/informe/internal/catalog"
)

// TestDatasetsCoverColumnLists checks that the descriptions name every
// column of report.Columns and users.Columns once, in order, each with both
// languages.
func TestDatasetsCoverColumnLists(t *testing.T) {
	sets, err := catalog.Datasets()
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range sets {
		for _, g := range d.Groups {
			if g.Title.ES == "" || g.Title.EN == "" {
				t.Errorf("%s: group %s lacks a title", d.Name, g.Name)
			}
			for _, c := range g.Columns {
				if c.About.ES == "" || c.About.EN == "" || c.Kind == "" {
					t.Errorf("%s: column %s lacks a description or kind", d.Name, c.Name)
				}
			}
		}
	}
}
