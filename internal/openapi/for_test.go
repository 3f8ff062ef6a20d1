package openapi

import (
	"bytes"
	"encoding/json"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/informe/informe/auth"
	"github.com/informe/informe/internal/dataset"
	"github.com/informe/informe/internal/source"
	"github.com/informe/informe/report"
)

// served returns the datasets of the server's sources, as a token with
// scopes and rules r reads them (source.Restrict).
func served(scopes []dataset.Scope, r dataset.Rules) []*dataset.Dataset {
	var allowed []*source.Source
	for _, src := range source.All(source.Report(report.Maintained)) {
		if slices.Contains(scopes, src.Scope) {
			allowed = append(allowed, src)
		}
	}
	var out []*dataset.Dataset
	for _, src := range source.Restrict(allowed, &r) {
		out = append(out, src.Dataset)
	}
	return out
}

// TestForEveryDataset checks that the document of every dataset, as the
// server's sources declare them, is JSON's.
func TestForEveryDataset(t *testing.T) {
	if !bytes.Equal(For(served(auth.Known, dataset.Rules{})), JSON()) {
		t.Error("For of every source's dataset differs from JSON()")
	}
	if !bytes.Equal(For(dataset.All), JSON()) {
		t.Error("For(dataset.All) differs from JSON()")
	}
}

// identifier matches the names in an example or a pattern.
var identifier = regexp.MustCompile(`[A-Za-z_][A-Za-z0-9_]*`)

// columnNames returns what the document b offers as a column name: the
// properties of schemas that carry a column kind, the values of enums,
// and the names in examples and patterns.
func columnNames(t *testing.T, b []byte) map[string]bool {
	t.Helper()
	var doc any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, x := range v {
				switch k {
				case "properties":
					if props, ok := x.(map[string]any); ok {
						for name, p := range props {
							if p, ok := p.(map[string]any); ok && p[kindKeyword] != nil {
								names[name] = true
							}
						}
					}
				case "enum":
					if list, ok := x.([]any); ok {
						for _, e := range list {
							if s, ok := e.(string); ok {
								names[s] = true
							}
						}
					}
				case "example", "pattern":
					if s, ok := x.(string); ok {
						for _, n := range identifier.FindAllString(s, -1) {
							names[n] = true
						}
					}
				}
				walk(x)
			}
		case []any:
			for _, x := range v {
				walk(x)
			}
		}
	}
	walk(doc)
	return names
}

// TestForRestricted checks the document of what a token with scopes and
// rules reads: valid as JSON's is, the paths and schemas of its datasets
// only, no hidden column anywhere, masked columns marked.
func TestForRestricted(t *testing.T) {
	for _, tt := range []struct {
		name   string
		scopes []dataset.Scope
		rules  dataset.Rules
	}{
		{"DefaultScopes", auth.Scopes, dataset.Rules{}},
		{"ReportOnly", []dataset.Scope{dataset.ReportRead}, dataset.Rules{}},
		{"UsersOnly", []dataset.Scope{dataset.UsersRead}, dataset.Rules{}},
		{"NoPersonal", auth.Known, dataset.Rules{NoPersonal: true}},
		{"Columns", auth.Known, dataset.Rules{Columns: []string{"contract_id", "code_contract", "client_id", "process_id", "task_id", "task_status", "client_email", "id", "email"}}},
		{"Mask", auth.Known, dataset.Rules{Mask: []string{"client_rut", "client_email", "client_birth_date", "rut_payer_contract", "email", "name", "attended_by"}}},
		{"MaskAndNoAudit", auth.Scopes, dataset.Rules{Mask: []string{"client_rut", "phone"}}},
		{"Rows", auth.Known, dataset.Rules{Rows: "client_region eq 'Valparaíso'"}},
		{"MaxRows", auth.Known, dataset.Rules{MaxRows: 10}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			given := served(tt.scopes, tt.rules)
			if len(given) == 0 {
				t.Fatal("the token reads no dataset")
			}
			b := For(given)
			validate(t, b)
			var doc map[string]any
			if err := json.Unmarshal(b, &doc); err != nil {
				t.Fatal(err)
			}
			paths := dig(t, doc, "paths").(map[string]any)
			schemas := dig(t, doc, "components", "schemas").(map[string]any)
			params := dig(t, doc, "components", "parameters").(map[string]any)
			seen := map[string]bool{} // the columns the token sees
			for _, d := range dataset.All {
				i := slices.IndexFunc(given, func(g *dataset.Dataset) bool { return g.Name == d.Name })
				odataPaths := []string{ODataRoot + "/" + d.OData.Name, ODataRoot + "/" + d.OData.Name + "/$count"}
				schemaNames := []string{d.OData.TypeName, "OData" + d.OData.Name + "Entity", "OData" + d.OData.Name + "Feed", "OData" + d.OData.Name + "ByKey"}
				switch d.Name {
				case dataset.GeneralReport.Name:
					schemaNames[0] = "GeneralReportRow"
				case dataset.Users.Name:
					schemaNames[0] = "User"
				}
				if i < 0 {
					for _, p := range append([]string{d.ExportPath, d.PagePath}, odataPaths...) {
						if _, ok := paths[p]; ok && p != "" {
							t.Errorf("%s: the path %s of %s, which the token may not read", tt.name, p, d.Name)
						}
					}
					for _, s := range schemaNames {
						if _, ok := schemas[s]; ok {
							t.Errorf("%s: the schema %s of %s, which the token may not read", tt.name, s, d.Name)
						}
					}
					continue
				}
				g := given[i]
				for _, p := range append([]string{g.ExportPath}, odataPaths...) {
					if _, ok := paths[p]; !ok {
						t.Errorf("no path %s", p)
					}
				}
				if g.PagePath != "" {
					dig(t, paths, g.PagePath, "get")
				}
				row := dig(t, schemas, schemaNames[0], "properties").(map[string]any)
				entity := dig(t, schemas, schemaNames[1], "properties").(map[string]any)
				if got, want := len(row), len(g.Columns); got != want {
					t.Errorf("%s has %d properties, want the %d columns the token sees", schemaNames[0], got, want)
				}
				enum := dig(t, params, columnsParam(g), "schema", "items", "enum")
				if got, want := fmtNames(enum), dataset.Names(g.Columns); !slices.Equal(got, want) {
					t.Errorf("%s's enum = %v, want %v", columnsParam(g), got, want)
				}
				for _, c := range g.Columns {
					seen[c.Name] = true
					for _, p := range []any{row[c.Name], entity[c.Name]} {
						p := p.(map[string]any)
						if got, want := p[maskKeyword], c.Mask.String(); c.Mask != dataset.Unmasked && got != want {
							t.Errorf("%s: %s = %v, want %s", c.Name, maskKeyword, got, want)
						} else if c.Mask == dataset.Unmasked && got != nil {
							t.Errorf("%s: %s = %v on a column not masked", c.Name, maskKeyword, got)
						}
					}
					if got, want := row[c.Name].(map[string]any)["x-personal"], c.Personal.String(); c.Personal != dataset.NotPersonal && got != want {
						t.Errorf("%s: x-personal = %v, want %s", c.Name, got, want)
					}
					if c.Mask != dataset.Unmasked {
						pattern := dig(t, paths, ODataRoot+"/"+d.OData.Name, "get", "parameters").([]any)[2].(map[string]any)["schema"].(map[string]any)["pattern"].(string)
						if slices.Contains(identifier.FindAllString(pattern, -1), c.Name) {
							t.Errorf("%s's $orderby takes the masked %s", d.OData.Name, c.Name)
						}
					}
				}
			}
			// No hidden column is named anywhere: not as a column, an
			// enum's value, in an example or a pattern; and a hidden name
			// made of words (client_rut) is nowhere in the text.
			offered := columnNames(t, b)
			// The parts of a synthetic key (the general report's row_id)
			// describe the key, whose value carries them anyway.
			for _, g := range given {
				for _, k := range g.OData.RowKey {
					seen[k] = true
				}
			}
			for _, d := range dataset.All {
				for _, c := range d.Columns {
					if seen[c.Name] {
						continue
					}
					if offered[c.Name] {
						t.Errorf("the document names the hidden column %s", c.Name)
					}
					if strings.Contains(c.Name, "_") && regexp.MustCompile(`(^|[^A-Za-z0-9_])`+c.Name+`($|[^A-Za-z0-9_])`).Match(b) {
						t.Errorf("the document's text names the hidden column %s", c.Name)
					}
				}
			}
		})
	}
}

// fmtNames returns an enum's values as strings.
func fmtNames(enum any) []string {
	var out []string
	for _, e := range enum.([]any) {
		out = append(out, e.(string))
	}
	return out
}
