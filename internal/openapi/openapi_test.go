package openapi

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/pb33f/libopenapi"
	validator "github.com/pb33f/libopenapi-validator"
	"github.com/pb33f/libopenapi-validator/schema_validation"

	"github.com/informe/informe/export"
	"github.com/informe/informe/internal/dataset"
	"github.com/informe/informe/internal/odata"
)

var update = flag.Bool("update", false, "rewrite docs/openapi.json")

const docFile = "../../docs/openapi.json"

// fullView is the view of JSON's document: every dataset.
var fullView = newView(dataset.All)

// TestDocFile keeps docs/openapi.json identical to the generated document.
func TestDocFile(t *testing.T) {
	got := JSON()
	if *update {
		if err := os.WriteFile(docFile, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(docFile)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("docs/openapi.json is out of date with the generator; run: go generate ./internal/openapi")
	}
}

func TestJSONIsStable(t *testing.T) {
	a := JSON()
	a[0] = 'x' // a copy: this must not show in the next call
	b, c := JSON(), JSON()
	if !bytes.Equal(b, c) || b[0] != '{' {
		t.Fatal("JSON differs between calls, or returned a shared slice")
	}
	fresh, err := json.MarshalIndent(fullView.document(), "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	// MarshalIndent escapes HTML and adds no newline; compare the values.
	var x, y any
	if err := json.Unmarshal(fresh, &x); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &y); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(x) != fmt.Sprint(y) {
		t.Error("a second build of the document differs from the first")
	}
	if !bytes.HasSuffix(b, []byte("}\n")) || bytes.Contains(b, []byte(`\u003c`)) {
		t.Error("JSON must end in a newline and not escape HTML")
	}
}

// TestDocumentIsValid validates the document against the OpenAPI 3.1
// schema and builds its model, as the server-side tests will.
func TestDocumentIsValid(t *testing.T) { validate(t, JSON()) }

// validate validates the document b against the OpenAPI 3.1 schema,
// builds its model, and fits each error response's example to its schema.
func validate(t *testing.T, b []byte) {
	t.Helper()
	doc, err := libopenapi.NewDocument(b)
	if err != nil {
		t.Fatal(err)
	}
	if got := doc.GetVersion(); got != "3.1.0" {
		t.Errorf("version = %q, want 3.1.0", got)
	}
	model, err := doc.BuildV3Model()
	if err != nil {
		t.Fatalf("building the model: %v", err)
	}
	v, errs := validator.NewValidator(doc)
	if len(errs) > 0 {
		t.Fatalf("validator: %v", errs)
	}
	if ok, verrs := v.ValidateDocument(); !ok {
		for _, e := range verrs {
			t.Errorf("%s: %s", e.Message, e.Reason)
			for _, se := range e.SchemaValidationErrors {
				t.Errorf("  %s at %s (%s)", se.Reason, se.FieldPath, se.KeywordLocation)
			}
		}
	}

	// Every example of an error response fits its schema.
	sv := schema_validation.NewSchemaValidator()
	for name, resp := range model.Model.Components.Responses.FromOldest() {
		for mt, media := range resp.Content.FromOldest() {
			if media.Example == nil || media.Schema == nil {
				continue
			}
			var example any
			if err := media.Example.Decode(&example); err != nil {
				t.Fatalf("%s %s example: %v", name, mt, err)
			}
			if ok, verrs := sv.ValidateSchemaObject(media.Schema.Schema(), example); !ok {
				t.Errorf("response %s: example %v does not fit its schema: %v", name, example, verrs[0].SchemaValidationErrors)
			}
		}
	}
}

// decoded returns the document decoded, with objects as ordered key lists
// where the order matters.
func decoded(t *testing.T) map[string]any {
	t.Helper()
	var doc map[string]any
	if err := json.Unmarshal(JSON(), &doc); err != nil {
		t.Fatal(err)
	}
	return doc
}

// dig returns the value at path in v, failing the test if it is missing.
func dig(t *testing.T, v any, path ...string) any {
	t.Helper()
	for i, k := range path {
		m, ok := v.(map[string]any)
		if !ok {
			t.Fatalf("%s is not an object", strings.Join(path[:i], "/"))
		}
		if v, ok = m[k]; !ok {
			t.Fatalf("no %s", strings.Join(path[:i+1], "/"))
		}
	}
	return v
}

// propertyOrder returns the keys of the properties of schema name, in
// document order.
func propertyOrder(t *testing.T, name string) []string {
	t.Helper()
	var keys []string
	for k := range schemaOf(t, name).Properties.KeysFromOldest() {
		keys = append(keys, k)
	}
	return keys
}

// TestGeneratedFromColumns checks that every column of the column lists
// is in the document, in order, with its kind, in the row schemas, the
// columns parameters and the OData entities.
func TestGeneratedFromColumns(t *testing.T) {
	doc := decoded(t)
	for _, tt := range []struct {
		schema, param string
		cols          []dataset.Column
		emptyAllowed  bool
	}{
		{"GeneralReportRow", "reportColumns", dataset.GeneralReport.Columns, true},
		{"User", "usersColumns", dataset.Users.Columns, false},
		{"Contract", "contractsColumns", dataset.Contracts.Columns, false},
		{"Process", "processesColumns", dataset.Processes.Columns, false},
		{"Task", "tasksColumns", dataset.Tasks.Columns, false},
		{"Client", "clientsColumns", dataset.Clients.Columns, false},
		{"Service", "servicesColumns", dataset.Services.Columns, false},
	} {
		t.Run(tt.schema, func(t *testing.T) {
			if got, want := propertyOrder(t, tt.schema), dataset.Names(tt.cols); !slices.Equal(got, want) {
				t.Errorf("properties = %v, want the columns %v", got, want)
			}
			props := dig(t, doc, "components", "schemas", tt.schema, "properties").(map[string]any)
			for _, c := range tt.cols {
				p := props[c.Name].(map[string]any)
				if got, want := p[kindKeyword], c.Kind.String(); got != want {
					t.Errorf("%s: %s = %v, want %s", c.Name, kindKeyword, got, want)
				}
				wantType := any("string")
				if c.Nullable {
					wantType = []any{"string", "null"}
				}
				if got := p["type"]; fmt.Sprint(got) != fmt.Sprint(wantType) {
					t.Errorf("%s: type = %v, want %v", c.Name, got, wantType)
				}
				if !strings.Contains(p["description"].(string), kindText[c.Kind]) {
					t.Errorf("%s: description %q does not say its kind", c.Name, p["description"])
				}
			}
			if _, ok := dig(t, doc, "components", "schemas", tt.schema).(map[string]any)["required"]; ok {
				t.Error("a row schema requires properties, but columns= chooses them")
			}
			enum := dig(t, doc, "components", "parameters", tt.param, "schema", "items", "enum")
			if got, want := fmt.Sprint(enum), fmt.Sprint(dataset.Names(tt.cols)); got != want {
				t.Errorf("columns enum = %v, want %v", got, want)
			}
		})
	}
	for _, s := range fullView.sets {
		t.Run("OData"+s.Name, func(t *testing.T) {
			name := "OData" + s.Name + "Entity"
			want := s.propertyNames()
			for _, n := range s.Navigations {
				want = append(want, n.Name)
			}
			if got := propertyOrder(t, name); !slices.Equal(got, want) {
				t.Errorf("properties = %v, want %v", got, want)
			}
			props := dig(t, doc, "components", "schemas", name, "properties").(map[string]any)
			for _, c := range s.Columns {
				p := props[c.Name].(map[string]any)
				if got, want := p[kindKeyword], c.Kind.String(); got != want {
					t.Errorf("%s: %s = %v, want %s", c.Name, kindKeyword, got, want)
				}
				if !strings.HasPrefix(p["description"].(string), odata.EDMType(c.Kind)+".") {
					t.Errorf("%s: description %q does not name %s", c.Name, p["description"], odata.EDMType(c.Kind))
				}
			}
		})
	}
}

// TestKindPatterns checks each kind's pattern against values as the
// database renders them, and the other kinds' values.
func TestKindPatterns(t *testing.T) {
	samples := map[dataset.Kind][]string{
		dataset.Integer:     {"0", "42", "9223372036854775807"},
		dataset.Decimal:     {"350000", "12500.50", "1500.5"},
		dataset.Date:        {"2024-02-29", "1980-12-31"},
		dataset.Timestamp:   {"2024-01-15 09:30:00", "2023-12-31 23:59:59"},
		dataset.Timestamptz: {"2024-03-05 14:07:09.123456+00", "2024-07-01 14:00:00.000000+00"},
	}
	wrong := []string{"abc", " 42", "2024-13-01", "2024-01-15T09:30:00", "2024-03-05 14:07:09+00"}
	for kind, good := range samples {
		for _, emptyAllowed := range []bool{true, false} {
			s := valueSchema(dataset.Column{Name: "x", Kind: kind}, emptyAllowed)
			var pattern string
			for _, m := range s {
				if m.key == "pattern" {
					pattern = m.value.(string)
				}
			}
			re := regexp.MustCompile(pattern)
			for _, v := range good {
				if !re.MatchString(v) {
					t.Errorf("%s pattern %s refuses %q", kind, pattern, v)
				}
			}
			if got := re.MatchString(""); got != emptyAllowed {
				t.Errorf("%s pattern %s matches \"\": %v, want %v", kind, pattern, got, emptyAllowed)
			}
			for _, v := range wrong {
				if slices.Contains(good, v) {
					continue
				}
				if re.MatchString(v) && !(kind == dataset.Integer && v == "42") {
					t.Errorf("%s pattern %s accepts %q", kind, pattern, v)
				}
			}
		}
	}
}

func TestOrderByPattern(t *testing.T) {
	re := regexp.MustCompile(orderByPattern([]string{"contract_id", "process_id"}))
	for v, want := range map[string]bool{
		"contract_id": true, "contract_id asc": true, "contract_id ASC,process_id": true,
		"contract_id,process_id asc": true, " contract_id , process_id ": true,
		"process_id": true, "contract_id desc": true, "process_id DESC,contract_id": true,
		"contract_id,process_id,x": false, "contract_id up": false, "tolower(process_id)": false, "": false,
	} {
		if got := re.MatchString(v); got != want {
			t.Errorf("%q: %v, want %v", v, got, want)
		}
	}
}

// TestEveryPathAndError checks the document lists every route, every
// error status and the three security schemes.
func TestEveryPathAndError(t *testing.T) {
	doc := decoded(t)
	paths := dig(t, doc, "paths").(map[string]any)
	for path, methods := range map[string][]string{
		"/users":                                 {"get", "head"},
		"/api/general-report":                    {"get", "head"},
		"/api/general-report/export":             {"get", "head"},
		Path:                                     {"get", "head"},
		ODataRoot:                                {"get", "head"},
		ODataRoot + "/":                          {"get", "head"},
		ODataRoot + "/$metadata":                 {"get", "head"},
		ODataRoot + "/GeneralReport":             {"get", "head"},
		ODataRoot + "/Users":                     {"get", "head"},
		ODataRoot + "/GeneralReport/$count":      {"get", "head"},
		ODataRoot + "/Users/$count":              {"get", "head"},
		ODataRoot + "/GeneralReport('{row_id}')": {"get", "head"},
		ODataRoot + "/Users({id})":               {"get", "head"},
	} {
		for _, m := range methods {
			dig(t, paths, path, m, "responses", "200")
			dig(t, paths, path, m, "responses", "401")
		}
	}
	for _, name := range []string{"BadRequest", "Unauthorized", "Forbidden", "NotFound", "MethodNotAllowed", "NotAcceptable",
		"RequestHeaderFieldsTooLarge", "InternalServerError", "ServiceUnavailable"} {
		dig(t, doc, "components", "responses", name, "headers", "X-Request-Id")
	}
	for _, name := range []string{"BadRequest", "Forbidden", "NotFound", "MethodNotAllowed", "NotAcceptable",
		"RequestHeaderFieldsTooLarge", "InternalServerError", "NotImplemented", "ServiceUnavailable"} {
		dig(t, doc, "components", "responses", "OData"+name, "headers", "OData-Version")
	}
	dig(t, doc, "components", "responses", "Unauthorized", "headers", "WWW-Authenticate")
	dig(t, doc, "components", "responses", "MethodNotAllowed", "headers", "Allow")
	dig(t, doc, "components", "responses", "ServiceUnavailable", "headers", "Retry-After")
	if got := dig(t, doc, "components", "schemas", "InvalidToken", "properties", "message", "const"); got != "Invalid Token" {
		t.Errorf("401 message = %v", got)
	}
	for _, s := range []string{"bearer", "basic", "accessToken"} {
		dig(t, doc, "components", "securitySchemes", s, "type")
	}
	content := dig(t, paths, "/api/general-report", "get", "responses", "200", "content").(map[string]any)
	for _, mt := range []string{"application/json", "application/x-ndjson", "text/csv", "text/tab-separated-values", export.XLSX.ContentType()} {
		if _, ok := content[mt]; !ok {
			t.Errorf("the report's 200 lacks %s", mt)
		}
	}
}
