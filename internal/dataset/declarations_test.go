package dataset_test

import (
	"errors"
	"net/url"
	"regexp"
	"slices"
	"testing"

	"github.com/informe/informe/auth"
	"github.com/informe/informe/internal/dataset"
	"github.com/informe/informe/internal/failure"
	"github.com/informe/informe/internal/odata"
	"github.com/informe/informe/internal/pgserver/pgtest"
	"github.com/informe/informe/internal/source"
	"github.com/informe/informe/report"
)

// TestDeclarations walks dataset.All and checks that each declaration is
// complete and consistent: its views, in a migrated database, hold its
// columns in order and its key columns; its OData entity set checks and
// its key and navigation columns are in the views; every column has its
// group and its words in both languages (the same as a column of the same
// name in another dataset), each label unique in its dataset; its
// parameters are those its door takes.
func TestDeclarations(t *testing.T) {
	t.Parallel()
	// A column with one of these in its name describes a person: a new
	// one must say whose data it holds (ids aside).
	personLike := regexp.MustCompile(`(^|_)(rut|passport|name|email|phone|address|birth|occupation|gender|marital|commune|region|country|username)(_|$)`)
	pool := pgtest.New(t)
	// The model's datasets come first, in its order; informe's own
	// records (schedules, their runs, the audit) after them, each name once.
	model := []string{"general-report", "users", "contracts", "processes", "tasks", "clients", "services"}
	got := names(dataset.All)
	if len(got) < len(model) || !slices.Equal(got[:len(model)], model) {
		t.Fatalf("dataset.All = %v, want it to start with %v", got, model)
	}
	if sorted := slices.Sorted(slices.Values(got)); len(slices.Compact(sorted)) != len(got) {
		t.Fatalf("dataset.All = %v: a name is declared twice", got)
	}
	words := map[string]dataset.Column{} // the first column of each name
	paths := map[string]bool{}
	for _, d := range dataset.All {
		t.Run(d.Name, func(t *testing.T) {
			if !slices.Contains(auth.Known, d.Scope) {
				t.Errorf("scope %q is not one of auth.Known", d.Scope)
			}
			if d.ExportPath == "" || paths[d.ExportPath] || (d.PagePath != "" && paths[d.PagePath]) {
				t.Errorf("export path %q, page path %q: missing or taken", d.ExportPath, d.PagePath)
			}
			paths[d.ExportPath], paths[d.PagePath] = true, d.PagePath != ""
			if d.Title.ES == "" || d.Title.EN == "" || d.Row.ES == "" || d.Row.EN == "" || d.Heading == "" || d.One == "" {
				t.Error("title, row, heading or one missing")
			}
			if !d.Spec && d.About == "" {
				t.Error("an entity needs About, for OpenAPI")
			}

			// The views: the columns in order, then the key columns.
			cols := dataset.Names(d.Columns)
			keys := slices.Concat(d.Keys, d.OData.KeyColumns)
			for _, n := range d.OData.Navigations {
				if !n.Many {
					keys = append(keys, n.Column)
				}
			}
			for _, view := range []string{d.Text, d.Typed} {
				got := pgtest.Columns(t, pool, view)
				if len(got) < len(cols) || !slices.Equal(got[:len(cols)], cols) {
					t.Errorf("%s starts with %v\nwant the declared columns %v", view, got, cols)
				}
				for _, k := range keys {
					if !slices.Contains(got, k) {
						t.Errorf("%s has no key column %s", view, k)
					}
				}
			}
			if d.KeyColumn != "" && !slices.Contains(cols, d.KeyColumn) {
				t.Errorf("key column %s is not a column", d.KeyColumn)
			}

			// The OData entity set, and the sets its navigations lead to.
			if _, err := odata.NewEntitySet(d.EntitySet()); err != nil {
				t.Error(err)
			}
			for _, n := range d.OData.Navigations {
				if !slices.ContainsFunc(dataset.All, func(o *dataset.Dataset) bool { return o.OData.Name == n.Target }) {
					t.Errorf("navigation %s leads to no entity set %s", n.Name, n.Target)
				}
			}

			// The words.
			labels := map[string]map[string]bool{"es": {}, "en": {}}
			for _, c := range d.Columns {
				if c.Group == nil || c.Group.Name == "" || c.Group.Title.ES == "" || c.Group.Title.EN == "" {
					t.Errorf("%s: no group, or a group without a name or title", c.Name)
				}
				if c.Label.ES == "" || c.Label.EN == "" || c.About.ES == "" || c.About.EN == "" {
					t.Errorf("%s: a label or description is missing in Spanish or English", c.Name)
				}
				if labels["es"][c.Label.ES] || labels["en"][c.Label.EN] {
					t.Errorf("%s: label %q / %q is taken in the dataset", c.Name, c.Label.ES, c.Label.EN)
				}
				labels["es"][c.Label.ES], labels["en"][c.Label.EN] = true, true
				// The audit log's client_address is the address a request
				// came from: its reader's, under audit:read, not the data
				// of a client, payer or user of the firm.
				reader := d == dataset.Audit && c.Name == "client_address"
				if c.Personal == dataset.NotPersonal && personLike.MatchString(c.Name) && !reader {
					t.Errorf("%s: its name says it describes a person, but it is not marked Personal", c.Name)
				}
				// The audit log's columns describe requests: its
				// client_address, status or rows are not the data's.
				if o, ok := words[c.Name]; ok && d != dataset.Audit && (o.Label != c.Label || o.About != c.About || o.Group != c.Group || o.Personal != c.Personal) {
					t.Errorf("%s: its words or group differ from those of the column of that name declared first", c.Name)
				} else if !ok {
					words[c.Name] = c
				}
			}

			// The parameters: the door takes each (a bad value is refused
			// for what it is, never as an unknown parameter).
			src, err := source.Named(d.Name, report.Maintained)
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range d.Params {
				_, err := src.Export(url.Values{p: {"~"}})
				var fe *failure.Error
				if errors.As(err, &fe) && fe.Reason == "unknown_parameter" {
					t.Errorf("parameter %s is declared but its door refuses it: %v", p, err)
				}
			}
			for _, p := range d.PageParams {
				if p != "page" && p != "result_per_page" && !slices.Contains(d.Params, p) {
					t.Errorf("page parameter %s is not a parameter of the export", p)
				}
			}
			if (d.PagePath == "") != (len(d.PageParams) == 0) {
				t.Error("a paged path needs its parameters, and only it")
			}
		})
	}
}

func names(all []*dataset.Dataset) []string {
	var out []string
	for _, d := range all {
		out = append(out, d.Name)
	}
	return out
}
