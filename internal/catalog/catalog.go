// Package catalog describes the datasets to people choosing what to export:
// each dataset's columns, grouped as the report is (contract, the client
// and the payer as recorded on the contract, service, process, task, the
// current client), each with its kind from the one column list
// ([report.Columns], [users.Columns]) and a one-line description in Spanish
// and English. The order and the kinds come from the column lists; this
// package only adds the words, and a test checks that it covers every
// column of them, in order.
package catalog

import (
	"fmt"
	"strings"
	"sync"

	"github.com/informe/informe/entities"
	"github.com/informe/informe/internal/dataset"
	"github.com/informe/informe/report"
	"github.com/informe/informe/users"
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
	// Filters says whether the report's four filters apply.
	Filters bool    `json:"filters"`
	Groups  []Group `json:"groups"`
}

// Datasets returns the report and the users, described. It fails only if
// the descriptions below fall out of step with the column lists, which a
// test catches.
func Datasets() ([]Dataset, error) {
	rep, err := describe(report.Columns, reportGroups)
	if err != nil {
		return nil, fmt.Errorf("catalog: report: %w", err)
	}
	us, err := describe(users.Columns, usersGroups)
	if err != nil {
		return nil, fmt.Errorf("catalog: users: %w", err)
	}
	out := []Dataset{
		{Name: "report", Title: Text{"Una fila por tarea (informe general)", "One row per task (the general report)"}, Scope: dataset.ReportRead,
			Row: Text{"Una fila por tarea de cada proceso de cada contrato; un contrato sin procesos, o un proceso sin tareas, también tiene su fila. Los datos del contrato, del cliente y del servicio, con su costo, se repiten en cada fila de tarea: para sumar costos elija «Una fila por contrato».",
				"One row per task of each process of each contract; a contract without processes, or a process without tasks, has its row too. The contract's, client's and service's fields, its cost included, repeat on each task row: to add up costs, choose “One row per contract”."},
			Path: "/api/general-report", Export: "/api/general-report/export", OData: "GeneralReport", Source: "general-report",
			Filters: true, Groups: rep},
	}
	for _, e := range entities.All {
		g, err := describeEntity(e.Columns, rep)
		if err != nil {
			return nil, fmt.Errorf("catalog: %s: %w", e.Name, err)
		}
		w := grainWords[e.Name]
		out = append(out, Dataset{Name: e.Name, Title: w.title, Row: w.row, Scope: e.Scope,
			Path: "/api/" + e.Name + "/export", Export: "/api/" + e.Name + "/export",
			OData: strings.ToUpper(e.Name[:1]) + e.Name[1:], Source: e.Name, Groups: g})
	}
	return append(out,
		// /users serves every user in one response: it is its own export.
		Dataset{Name: "users", Title: Text{"Usuarios", "Users"}, Scope: dataset.UsersRead,
			Row:  Text{"Una fila por usuario.", "One row per user."},
			Path: "/users", Export: "/users", OData: "Users", Source: "users", Groups: us}), nil
}

// describeEntity groups cols, an entity's columns, as the report's groups
// rep group the same names, its own columns (counts, keys) first under
// their words in grainColumns; a name in neither is an error.
func describeEntity(cols []dataset.Column, rep []Group) ([]Group, error) {
	byName := map[string]Column{}
	groupOf := map[string]int{}
	for i, g := range rep {
		for _, c := range g.Columns {
			byName[c.Name], groupOf[c.Name] = c, i
		}
	}
	own := Group{Name: "own", Title: Text{"Claves y cuentas", "Keys and counts"}}
	groups := make([]Group, len(rep))
	for _, col := range cols {
		if d, ok := grainColumns[col.Name]; ok {
			own.Columns = append(own.Columns, Column{Name: col.Name, Kind: col.Kind.String(), Type: analystType(col),
				Label: d.label, About: d.about, Width: width(col)})
			continue
		}
		c, ok := byName[col.Name]
		if !ok {
			return nil, fmt.Errorf("%q is not described", col.Name)
		}
		c.Kind, c.Type, c.Width = col.Kind.String(), analystType(col), width(col)
		i := groupOf[col.Name]
		if groups[i].Name == "" {
			groups[i].Name, groups[i].Title = rep[i].Name, rep[i].Title
		}
		groups[i].Columns = append(groups[i].Columns, c)
	}
	out := []Group{}
	if len(own.Columns) > 0 {
		out = append(out, own)
	}
	for _, g := range groups {
		if len(g.Columns) > 0 {
			out = append(out, g)
		}
	}
	return out, nil
}

// group is a group as declared below: names and descriptions, in order.
type group struct {
	name    string
	title   Text
	columns []described
}

type described struct {
	name  string
	label Text
	about Text
}

// describe joins the column list cols with the words of groups, checking
// that groups names every column of cols once, in order.
func describe(cols []dataset.Column, groups []group) ([]Group, error) {
	out := make([]Group, 0, len(groups))
	i := 0
	for _, g := range groups {
		og := Group{Name: g.name, Title: g.title}
		for _, d := range g.columns {
			if i >= len(cols) {
				return nil, fmt.Errorf("%q is not in the column list", d.name)
			}
			if cols[i].Name != d.name {
				return nil, fmt.Errorf("column %d is %q in the column list, %q here", i+1, cols[i].Name, d.name)
			}
			og.Columns = append(og.Columns, Column{Name: d.name, Kind: cols[i].Kind.String(), Type: analystType(cols[i]),
				Label: d.label, About: d.about, Width: width(cols[i]), Values: statuses[d.name]})
			i++
		}
		out = append(out, og)
	}
	if i != len(cols) {
		return nil, fmt.Errorf("%q and the columns after it are not described", cols[i].Name)
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

// Labels returns the labels of d's columns in lang ("es" or "en"), by
// name.
func (d Dataset) Labels(lang string) map[string]string {
	m := map[string]string{}
	for _, g := range d.Groups {
		for _, c := range g.Columns {
			m[c.Name] = c.Label.ES
			if lang == "en" {
				m[c.Name] = c.Label.EN
			}
		}
	}
	return m
}
