package dataset

import (
	"slices"

	"github.com/informe/informe/internal/rut"
)

// All are the datasets informe serves, in the order of the model: the
// general report, the users, then the entities at their own grain from
// the many to the one (contracts, processes, tasks, clients, services).
// Each file of a dataset adds its declaration with [declare]; the routes,
// the OData model, the OpenAPI document, the catalog, the docs and the
// export command all iterate this list.
var All []*Dataset

// declare adds d to All at its position and returns it, with the fields
// it leaves empty that follow from the others as [Dataset] says: a
// dataset keyed by one of its columns, at its own grain, declares its
// columns, views and words, and the rest follows.
func declare(position int, d *Dataset) *Dataset {
	d.position = position
	if d.Typed == "" {
		d.Typed = d.Text + "_typed"
	}
	if d.ExportPath == "" {
		d.ExportPath = "/api/" + d.Name + "/export"
	}
	if d.Params == nil {
		d.Params = []string{"columns"}
	}
	if k := d.KeyColumn; k != "" {
		if d.Keys == nil {
			d.Keys = []string{"key_" + k}
		}
		if d.OData.Key == "" {
			d.OData.Key = k
		}
		if d.OData.KeyColumns == nil {
			d.OData.KeyColumns = d.Keys
		}
		if d.OData.OrderBy == nil {
			d.OData.OrderBy = []string{k}
		}
	}
	All = append(All, d)
	slices.SortStableFunc(All, func(a, b *Dataset) int { return a.position - b.position })
	return d
}

// Named returns the dataset called name, or nil.
func Named(name string) *Dataset {
	for _, d := range All {
		if d.Name == name {
			return d
		}
	}
	return nil
}

// checkRUT checks a RUT compared with a client_rut in $filter: one that
// does not parse is refused with the reasons of the spec's rut parameter.
func checkRUT(s string) error {
	_, err := rut.ParseAs("", s)
	return err
}

// reportColumns returns the general report's declarations of the columns
// names, in that order: an entity at its own grain holds them too, the
// same values under the same names and words.
func reportColumns(names ...string) []Column {
	cols := make([]Column, len(names))
	for i, name := range names {
		j := slices.IndexFunc(GeneralReport.Columns, func(c Column) bool { return c.Name == name })
		if j < 0 {
			panic("dataset: the general report has no column " + name)
		}
		cols[i] = GeneralReport.Columns[j]
	}
	return cols
}

// nullable returns cols, each of which may be NULL: the values that a
// view at an entity's own grain reads from a table it outer-joins, or
// from columns that its table lets be NULL where the general report
// writes "".
func nullable(cols []Column) []Column {
	for i := range cols {
		cols[i].Nullable = true
	}
	return cols
}
