// Package catalog describes the datasets to people choosing what to export:
// each dataset of dataset.All with its columns, grouped as the report is
// (contract, the client and the payer as recorded on the contract,
// service, process, task, the current client), each with its kind, its
// label and a one-line description in Spanish and English, all read from
// the datasets' declarations; this package adds the analyst's types, the
// typical widths and the values of the status columns.
package catalog

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/informe/informe/auth"
	"github.com/informe/informe/internal/dataset"
)

// Text is a phrase in Spanish and English.
type Text struct {
	ES string `json:"es"`
	EN string `json:"en"`
}

// Column is one column as the page shows it.
type Column struct {
	Name string `json:"name"` // the API's name
	Kind string `json:"kind"` // the API's kind (dataset.Kind's name)
	// Type is the kind as an analyst knows it: "date", "datetime",
	// "number", "amount" (money) or "text".
	Type string `json:"type"`
	// Label is a short name, unique in its dataset in each language: the
	// page's name of the column, and the file's header with header=labels.
	Label Text `json:"label,omitzero"`
	About Text `json:"about,omitzero"`
	// Width is the typical number of bytes of a value in CSV, for the
	// page's estimate of a file's size.
	Width int `json:"width"`
	// Values are the values a status column takes in the legal-services
	// system, offered as a choice in the page's conditions; nil for a
	// column whose values are free.
	Values []string `json:"values,omitempty"`
}

// statuses are the values of the status columns: the system's own.
var statuses = map[string][]string{
	"contract_status": {"APROBADO", "PENDIENTE", "TERMINADO", "ANULADO"},
	"task_status":     {"Pendiente", "En Curso", "Cancelado", "Terminada"},
}

// Group is a titled run of consecutive columns.
type Group struct {
	Name    string   `json:"name"`
	Title   Text     `json:"title"`
	Columns []Column `json:"columns"`
}

// Dataset is one thing that can be exported.
type Dataset struct {
	Name  string `json:"name"`  // "report" or "users"
	Title Text   `json:"title"` // as the page names it
	// Row says what one row is, and, where a value repeats over rows, that
	// a sum of it counts it again on each.
	Row    Text          `json:"row"`
	Scope  dataset.Scope `json:"scope"` // the scope a token needs to read it
	Path   string        `json:"path"`  // the paged path (HEAD counts, GET previews)
	Export string        `json:"export"`
	// OData is the entity set's name under /odata.
	OData string `json:"odata"`
	// Source is the dataset's name on its other doors: informe export's
	// --dataset, the first sheet of its XLSX export, and the start of its
	// files' names.
	Source string `json:"source"`
	// File is the start of the names of the files the web page saves, in
	// its reader's language ("informe-general", "general-report").
	File Text `json:"file"`
	// Filters says whether the report's four filters apply.
	Filters bool    `json:"filters"`
	Groups  []Group `json:"groups"`
	// Related are the datasets several of whose rows relate to one of
	// this one's (a contract's tasks): the page's conditions can keep the
	// rows with a related row meeting them, through $filter's any on
	// the OData navigation Nav.
	Related []Related `json:"related,omitempty"`
}

// Related is a dataset related to another by an OData collection
// navigation.
type Related struct {
	Nav     string `json:"nav"`     // the navigation property: "Tasks"
	Dataset string `json:"dataset"` // the related dataset's name: "tasks"
	Title   Text   `json:"title"`   // what the page calls its rows: "Tareas"
}

// Datasets returns the datasets of dataset.All, described: those a
// report:read token reads first, then the users, then the run history
// of scheduled deliveries (the order of [auth.Known]), each group of columns in
// the order of its [dataset.Group].Order. It fails only if a declaration
// lacks the words of a column, which a test catches.
func Datasets() ([]Dataset, error) {
	all := slices.Clone(dataset.All)
	slices.SortStableFunc(all, func(a, b *dataset.Dataset) int {
		return cmp.Compare(slices.Index(auth.Known, a.Scope), slices.Index(auth.Known, b.Scope))
	})
	out := make([]Dataset, 0, len(all))
	for _, d := range all {
		groups, err := describe(d.Columns)
		if err != nil {
			return nil, fmt.Errorf("catalog: %s: %w", d.Name, err)
		}
		name := d.Name
		if d.Page != "" {
			name = d.Page
		}
		var related []Related
		for _, n := range d.OData.Navigations {
			if !n.Many {
				continue
			}
			if n.Words == (dataset.Phrase{}) {
				return nil, fmt.Errorf("catalog: %s: navigation %s has no words", d.Name, n.Name)
			}
			related = append(related, Related{Nav: n.Name, Dataset: strings.ToLower(n.Target), Title: Text(n.Words)})
		}
		out = append(out, Dataset{Name: name, Title: Text(d.Title), Row: Text(d.Row), Scope: d.Scope,
			Path: d.Path(), Export: d.ExportPath, OData: d.OData.Name, Source: d.Name,
			File: Text(d.File), Related: related,
			// The spec's filters: parameters besides the columns.
			Filters: slices.ContainsFunc(d.Params, func(p string) bool { return p != "columns" }),
			Groups:  groups})
	}
	return out, nil
}

// describe groups cols by their [dataset.Group], the groups in their
// Order (ties in the order of their first column), the columns in theirs.
// A column without a group or a label in either language is an error.
func describe(cols []dataset.Column) ([]Group, error) {
	var groups []*dataset.Group
	byGroup := map[*dataset.Group][]Column{}
	for _, col := range cols {
		g := col.Group
		if g == nil || col.Label.ES == "" || col.Label.EN == "" || col.About.ES == "" || col.About.EN == "" {
			return nil, fmt.Errorf("%q is not described", col.Name)
		}
		if _, ok := byGroup[g]; !ok {
			groups = append(groups, g)
		}
		byGroup[g] = append(byGroup[g], Column{Name: col.Name, Kind: col.Kind.String(), Type: analystType(col),
			Label: Text(col.Label), About: Text(col.About), Width: width(col), Values: statuses[col.Name]})
	}
	slices.SortStableFunc(groups, func(a, b *dataset.Group) int { return cmp.Compare(a.Order, b.Order) })
	out := make([]Group, len(groups))
	for i, g := range groups {
		out[i] = Group{Name: g.Name, Title: Text(g.Title), Columns: byGroup[g]}
	}
	return out, nil
}

// analystType names col's kind as an analyst knows it (see [Column].Type).
func analystType(col dataset.Column) string {
	switch col.Kind {
	case dataset.Integer:
		return "number"
	case dataset.Decimal:
		return "amount" // the one decimal column is a cost
	case dataset.Date:
		return "date"
	case dataset.Timestamp, dataset.Timestamptz:
		return "datetime"
	}
	return "text"
}

// cached is Datasets, built once, for [ForPath].
var cached = sync.OnceValues(Datasets)

// ForPath returns the dataset served at path (its paged path or its
// export), reporting false when there is none.
func ForPath(path string) (Dataset, bool) {
	sets, err := cached()
	if err != nil {
		return Dataset{}, false
	}
	for _, d := range sets {
		if d.Path == path || d.Export == path {
			return d, true
		}
	}
	return Dataset{}, false
}
