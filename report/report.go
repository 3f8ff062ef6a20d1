package report

import (
	"fmt"

	"github.com/informe/informe/internal/dataset"
)

// Counting says where the general report gets the number of rows of an
// unfiltered report and how it reaches a deep page.
type Counting uint8

const (
	// Maintained reads the row counts that informe's triggers keep in
	// report_contract_rows and report_bucket_rows: an unfiltered page costs
	// the same at page 1 and at the last page. The default.
	Maintained Counting = iota
	// FromView counts and skips rows of the general_report view itself.
	// For operators whose general_report reads tables that informe's
	// triggers do not watch; deep unfiltered pages then cost more.
	FromView
)

// ParseCounting parses "maintained" or "view".
func ParseCounting(s string) (Counting, error) {
	switch s {
	case "maintained":
		return Maintained, nil
	case "view":
		return FromView, nil
	}
	return 0, fmt.Errorf("report counts must be maintained or view, got %q", s)
}

// Dataset returns the general report's declaration ([dataset.GeneralReport])
// with its plain queries counted and paged as counting says.
func Dataset(counting Counting) *dataset.Dataset {
	d := *dataset.GeneralReport
	d.Plain = &dataset.ReportReading{Maintained: counting == Maintained}
	if counting == Maintained {
		d.KeyTable = taskKeys
	}
	return &d
}

// taskKeys is the table of the task rows' keys that informe's triggers
// keep (migration 00011) beside the values the folded steps filter on
// most: a task's status, end date and execution date. It is read only
// with [Maintained] counts, whose start-up check ([CheckCounting]) makes
// sure that its triggers watch the tables general_report reads.
var taskKeys = &dataset.KeyTable{
	Table: "report_task_keys",
	Keys:  []string{"contract_id", "process_id", "task_id"},
	Columns: map[string]string{
		"task_status": "status", "task_end_date": "end_date", "execution_date": "execution_date",
		"key_task_id": "task_id",
	},
	Days: []string{"task_end_date"},
}

// Page is a page of the spec's JSON, known before its first row.
type Page struct {
	Total       int64 // rows matching the query, over all pages
	TotalPages  int64 // ceil(Total / PerPage); 0 when nothing matches
	CurrentPage int64 // the page asked for
	PerPage     int64 // rows a page
}

// WithTotal returns p with its total of matching rows and the pages they
// make.
func (p Page) WithTotal(total int64) Page {
	p.Total = total
	p.TotalPages = 0
	if p.PerPage > 0 {
		p.TotalPages = (total + p.PerPage - 1) / p.PerPage
	}
	return p
}

// Rows returns the number of rows the page holds.
func (p Page) Rows() int64 {
	first := (p.CurrentPage - 1) * p.PerPage
	if p.CurrentPage > p.TotalPages || first >= p.Total {
		return 0
	}
	return min(p.PerPage, p.Total-first)
}
