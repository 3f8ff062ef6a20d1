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
	"sync"

	"github.com/informe/informe/auth"
	"github.com/informe/informe/export"
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
	Kind string `json:"kind"` // the API's kind (export.Kind's name)
	// Type is the kind as an analyst knows it: "date", "datetime",
	// "number", "amount" (money) or "text".
	Type string `json:"type"`
	// Label is a short name, unique in its dataset in each language: the
	// page's name of the column, and the file's header with header=labels.
	Label Text `json:"label"`
	About Text `json:"about"`
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
	Name   string     `json:"name"`  // "report" or "users"
	Title  Text       `json:"title"` // as the page names it
	Scope  auth.Scope `json:"scope"` // the scope a token needs to read it
	Path   string     `json:"path"`  // the paged path (HEAD counts, GET previews)
	Export string     `json:"export"`
	// OData is the entity set's name under /odata.
	OData string `json:"odata"`
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
	return []Dataset{
		{Name: "report", Title: Text{"Informe general", "General report"}, Scope: auth.ReportRead,
			Path: "/api/general-report", Export: "/api/general-report/export", OData: "GeneralReport",
			Filters: true, Groups: rep},
		// /users serves every user in one response: it is its own export.
		{Name: "users", Title: Text{"Usuarios", "Users"}, Scope: auth.UsersRead,
			Path: "/users", Export: "/users", OData: "Users", Groups: us},
	}, nil
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
func describe(cols []export.Column, groups []group) ([]Group, error) {
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
func analystType(col export.Column) string {
	switch col.Kind {
	case export.Integer:
		return "number"
	case export.Decimal:
		return "amount" // the one decimal column is a cost
	case export.Date:
		return "date"
	case export.Timestamp, export.Timestamptz:
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
