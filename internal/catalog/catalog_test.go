package catalog_test

import (
	"testing"

	"github.com/informe/informe/internal/catalog"
	"github.com/informe/informe/internal/dataset"
	"github.com/informe/informe/internal/source"
	"github.com/informe/informe/report"
)

// TestDatasetsNameTheirSource checks that each dataset's Source is the
// name informe export takes and its XLSX sheet has, the dataset whose
// export path the page uses.
func TestDatasetsNameTheirSource(t *testing.T) {
	t.Parallel()
	sets, err := catalog.Datasets()
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range sets {
		src, err := source.Named(d.Source, report.Maintained)
		if err != nil {
			t.Errorf("%s: %v", d.Name, err)
			continue
		}
		if got, want := src.Name, d.Source; got != want {
			t.Errorf("%s: source %q, want %q", d.Name, got, want)
		}
	}
}

// TestDatasetsCoverColumnLists checks that the descriptions name every
// column of dataset.GeneralReport.Columns and dataset.Users.Columns once, in order, each with both
// languages.
func TestDatasetsCoverColumnLists(t *testing.T) {
	t.Parallel()
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
				if c.Width <= 0 || c.Type == "" {
					t.Errorf("%s: column %s lacks a width or type", d.Name, c.Name)
				}
			}
		}
	}
}

// TestLabelsUnique checks that every column has a label in both languages,
// unique in its dataset: a file's header row (header=labels, informe
// export --labels) names each column once.
func TestLabelsUnique(t *testing.T) {
	t.Parallel()
	for _, d := range dataset.All {
		for _, lang := range []string{"es", "en"} {
			seen := map[string]string{}
			for i, c := range d.Labelled(d.Columns, lang) {
				name, label := d.Columns[i].Name, c.Name
				if label == name && d.Columns[i].Label.In(lang) == "" {
					t.Errorf("%s: %s has no %s label", d.Name, name, lang)
				}
				if other, dup := seen[label]; dup {
					t.Errorf("%s: %s and %s share the %s label %q", d.Name, name, other, lang, label)
				}
				seen[label] = name
			}
		}
	}
}
