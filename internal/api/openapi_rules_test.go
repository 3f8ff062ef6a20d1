package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/pb33f/libopenapi"
	validator "github.com/pb33f/libopenapi-validator"
	"github.com/pb33f/libopenapi-validator/config"
	"github.com/pb33f/libopenapi-validator/schema_validation"

	"github.com/informe/informe/auth"
	"github.com/informe/informe/internal/dataset"
	"github.com/informe/informe/internal/openapi"
	"github.com/informe/informe/internal/pgserver/pgtest"
)

// contractOf loads the OpenAPI document b as loadContract loads the
// whole one.
func contractOf(tb testing.TB, b []byte) *contract {
	tb.Helper()
	doc, err := libopenapi.NewDocument(b)
	if err != nil {
		tb.Fatal(err)
	}
	model, err := doc.BuildV3Model()
	if err != nil {
		tb.Fatal(err)
	}
	v, errs := validator.NewValidator(doc, config.WithFormatAssertions())
	if len(errs) > 0 {
		tb.Fatal(errs)
	}
	return &contract{doc: &model.Model, v: v, schema: schema_validation.NewSchemaValidator(config.WithFormatAssertions())}
}

// openAPIColumns returns the document's column properties by schema
// (the properties that carry a column kind), and its paths.
func openAPIColumns(tb testing.TB, b []byte) (map[string]map[string]map[string]any, map[string]any) {
	tb.Helper()
	var doc struct {
		Paths      map[string]any `json:"paths"`
		Components struct {
			Schemas map[string]struct {
				Properties map[string]map[string]any `json:"properties"`
			} `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		tb.Fatalf("%v: %.200s", err, b)
	}
	cols := map[string]map[string]map[string]any{}
	for name, s := range doc.Components.Schemas {
		for p, v := range s.Properties {
			if v["x-informe-kind"] == nil {
				continue
			}
			if cols[name] == nil {
				cols[name] = map[string]map[string]any{}
			}
			cols[name][p] = v
		}
	}
	return cols, doc.Paths
}

// TestOpenAPIRules checks that /openapi.json answers each token with the
// document of what it may read: the whole document with every scope and
// no rules; without audit:read, no audit paths or schemas; with rules, no
// hidden column in any schema, masked ones marked; and that the requests
// and responses of a token with rules fit its own document.
func TestOpenAPIRules(t *testing.T) {
	t.Parallel()
	ts := newServer(t, pgtest.Fixture(t))
	get := func(t *testing.T, token string) []byte {
		t.Helper()
		r := ts.as(t, token, openapi.Path)
		if r.Status != http.StatusOK {
			t.Fatalf("status %d: %s", r.Status, r.Body)
		}
		return r.Body
	}

	t.Run("EveryScope", func(t *testing.T) {
		every := ts.NewToken(t, "every-scope", auth.Known, time.Time{})
		if !bytes.Equal(get(t, every), openapi.JSON()) {
			t.Error("a token with every scope and no rules does not get the whole document")
		}
	})

	t.Run("WithoutAuditRead", func(t *testing.T) {
		cols, paths := openAPIColumns(t, get(t, ts.Token))
		for _, p := range []string{dataset.Audit.ExportPath, openapi.ODataRoot + "/" + dataset.Audit.OData.Name, openapi.ODataRoot + "/" + dataset.Audit.OData.Name + "/$count"} {
			if _, ok := paths[p]; ok {
				t.Errorf("a token without %s has the path %s", dataset.Audit.Scope, p)
			}
		}
		for _, s := range []string{dataset.Audit.OData.TypeName, "OData" + dataset.Audit.OData.Name + "Entity"} {
			if _, ok := cols[s]; ok {
				t.Errorf("a token without %s has the schema %s", dataset.Audit.Scope, s)
			}
		}
		for _, p := range []string{"/api/general-report", "/api/general-report/export", "/users", "/api/contracts/export", "/odata/Contracts"} {
			if _, ok := paths[p]; !ok {
				t.Errorf("no path %s", p)
			}
		}
	})

	personal := map[string]bool{}
	for _, d := range dataset.All {
		for _, c := range d.Columns {
			if c.Personal != dataset.NotPersonal {
				personal[c.Name] = true
			}
		}
	}
	for _, tt := range []struct {
		name    string
		rules   dataset.Rules
		visible func(c string) bool          // the columns the token sees
		masked  map[string]string            // column -> mask
		absent  []string                     // paths
		targets []string                     // requests whose exchange must fit the document
		extra   func(t *testing.T, b []byte) // further checks
	}{
		{
			name: "NoPersonal", rules: dataset.Rules{NoPersonal: true},
			visible: func(c string) bool { return !personal[c] },
			targets: []string{"/api/general-report?result_per_page=3", "/api/general-report/export?format=ndjson", "/users", "/api/clients/export",
				"/odata/Clients?$top=2", "/odata/GeneralReport?$top=2&$orderby=contract_id%20desc"},
			extra: func(t *testing.T, b []byte) {
				for _, v := range personalValues {
					if bytes.Contains(b, []byte(v)) {
						t.Errorf("the document holds %q", v)
					}
				}
			},
		},
		{
			name: "Columns", rules: dataset.Rules{Columns: []string{"contract_id", "code_contract", "client_id", "process_id", "task_id", "task_status", "id", "name"}},
			visible: func(c string) bool {
				return slices.Contains([]string{"contract_id", "code_contract", "client_id", "process_id", "task_id", "task_status", "id", "name"}, c)
			},
			absent:  []string{"/api/services/export", "/odata/Services"},
			targets: []string{"/api/general-report?columns=task_status", "/users?format=ndjson", "/odata/Tasks?$top=3", "/api/contracts/export"},
		},
		{
			name: "Mask", rules: dataset.Rules{Mask: []string{"client_rut", "client_email", "client_birth_date", "email", "phone"}},
			visible: func(string) bool { return true },
			masked:  map[string]string{"client_rut": "rut", "client_email": "email", "client_birth_date": "withheld", "email": "email", "phone": "phone"},
			targets: []string{"/api/general-report?result_per_page=4", "/api/general-report/export?format=ndjson&columns=client_rut,client_birth_date", "/users",
				"/api/clients/export", "/odata/Clients?$top=3", "/odata/Users(3)", "/odata/GeneralReport?$select=client_email,client_birth_date&$top=2"},
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tok := ts.RuledToken(t, "openapi-"+tt.name, tt.rules)
			b := get(t, tok)
			if !bytes.Equal(get(t, tok), b) {
				t.Error("a second request gets another document")
			}
			cols, paths := openAPIColumns(t, b)
			if len(cols) == 0 {
				t.Fatal("the document has no column")
			}
			for schema, props := range cols {
				for name, p := range props {
					if !tt.visible(name) {
						t.Errorf("%s has the hidden column %s", schema, name)
					}
					if got, want := p["x-masked"], tt.masked[name]; (want == "" && got != nil) || (want != "" && got != want) {
						t.Errorf("%s.%s: x-masked = %v, want %q", schema, name, got, want)
					}
					if want := tt.masked[name]; want != "" && p["x-personal"] == nil && !schemaIsOData(schema) {
						t.Errorf("%s.%s: masked without x-personal", schema, name)
					}
				}
			}
			for m := range tt.masked {
				if cols["GeneralReportRow"][m] == nil && cols["User"][m] == nil {
					t.Errorf("the masked column %s is in no row schema", m)
				}
			}
			for _, p := range tt.absent {
				if _, ok := paths[p]; ok {
					t.Errorf("the path %s, whose dataset the rules leave out", p)
				}
			}
			if tt.extra != nil {
				tt.extra(t, b)
			}
			c := contractOf(t, b)
			for _, target := range tt.targets {
				x := ts.send(t, http.MethodGet, target, "Authorization", "Bearer "+tok)
				if x.Status != http.StatusOK {
					t.Errorf("%s: status %d: %s", target, x.Status, x.Body)
					continue
				}
				if ok, errs := c.checkRequest(x); !ok {
					reportFindings(t, target+": request", errs)
				}
				c.checkResponse(t, x)
			}
		})
	}

	t.Run("RulesChange", func(t *testing.T) {
		tok := ts.RuledToken(t, "openapi-change", dataset.Rules{Mask: []string{"client_email"}})
		before, _ := openAPIColumns(t, get(t, tok))
		if before["Client"]["client_email"]["x-masked"] != "email" {
			t.Fatalf("client_email is not marked masked: %v", before["Client"]["client_email"])
		}
		if err := ts.Tokens.SetRules(context.Background(), "openapi-change", &dataset.Rules{NoPersonal: true}); err != nil {
			t.Fatal(err)
		}
		after, _ := openAPIColumns(t, get(t, tok))
		if _, ok := after["Client"]["client_email"]; ok {
			t.Error("after its rules hid client_email, the token's document still has it")
		}
		if err := ts.Tokens.SetRules(context.Background(), "openapi-change", nil); err != nil {
			t.Fatal(err)
		}
		if _, paths := openAPIColumns(t, get(t, tok)); paths[dataset.Audit.ExportPath] != nil || paths["/api/clients/export"] == nil {
			t.Error("without rules, the token's document is not that of its scopes")
		}
	})
}

// schemaIsOData reports whether the component schema name is of the OData
// service's, whose properties carry no x-personal.
func schemaIsOData(name string) bool { return len(name) > 5 && name[:5] == "OData" }
