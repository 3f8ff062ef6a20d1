package openapi

import (
	"bytes"
	"encoding/xml"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/pb33f/libopenapi"
	"github.com/pb33f/libopenapi-validator/config"
	"github.com/pb33f/libopenapi-validator/schema_validation"
	"github.com/pb33f/libopenapi/datamodel/high/base"
	v3 "github.com/pb33f/libopenapi/datamodel/high/v3"

	"github.com/informe/informe/internal/dataset"
	"github.com/informe/informe/internal/failure"
	"github.com/informe/informe/internal/odata"
)

// odataEntitySets returns the checked entity sets of fullView.sets.
func odataEntitySets(t *testing.T) []*odata.EntitySet {
	t.Helper()
	var sets []*odata.EntitySet
	for _, s := range fullView.sets {
		set, err := odata.NewEntitySet(s.EntitySet)
		if err != nil {
			t.Fatal(err)
		}
		sets = append(sets, set)
	}
	return sets
}

// model is the document's libopenapi model, built once.
var model = sync.OnceValues(func() (*v3.Document, error) {
	doc, err := libopenapi.NewDocument(JSON())
	if err != nil {
		return nil, err
	}
	m, err := doc.BuildV3Model()
	if err != nil {
		return nil, err
	}
	return &m.Model, nil
})

// schemaOf returns the named component schema of the document.
func schemaOf(t *testing.T, name string) *base.Schema {
	t.Helper()
	m, err := model()
	if err != nil {
		t.Fatal(err)
	}
	s := m.Components.Schemas.GetOrZero(name)
	if s == nil {
		t.Fatalf("no schema %s", name)
	}
	return s.Schema()
}

// fits validates a JSON document against schema, with format assertions
// (date, date-time, uri).
func fits(t *testing.T, what string, schema *base.Schema, body []byte) {
	t.Helper()
	sv := schema_validation.NewSchemaValidator(config.WithFormatAssertions())
	if ok, errs := sv.ValidateSchemaBytes(schema, body); !ok {
		for _, e := range errs {
			t.Errorf("%s: %s: %s", what, e.Message, e.Reason)
			for _, f := range e.SchemaValidationErrors {
				t.Errorf("  %s at %s (%s)", f.Reason, f.FieldPath, f.KeywordLocation)
			}
		}
		t.Logf("%s", body)
	}
}

// TestODataMetadata checks the entity schemas against the CSDL that package
// odata writes for the same sets: the same properties in the same order,
// the same EDM types and nullability, the same key.
func TestODataMetadata(t *testing.T) {
	var doc struct {
		Types []struct {
			Name string `xml:"Name,attr"`
			Key  struct {
				Name string `xml:"Name,attr"`
			} `xml:"Key>PropertyRef"`
			Props []struct {
				Name     string `xml:"Name,attr"`
				Type     string `xml:"Type,attr"`
				Nullable string `xml:"Nullable,attr"`
			} `xml:"Property"`
			Navs []struct {
				Name string `xml:"Name,attr"`
			} `xml:"NavigationProperty"`
		} `xml:"DataServices>Schema>EntityType"`
	}
	if err := xml.Unmarshal(odata.Metadata(odataEntitySets(t)...), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Types) != len(fullView.sets) {
		t.Fatalf("%d entity types, want %d", len(doc.Types), len(fullView.sets))
	}
	for i, et := range doc.Types {
		s := schemaOf(t, "OData"+fullView.sets[i].Name+"Entity")
		names := propertyOrder(t, "OData"+fullView.sets[i].Name+"Entity")
		var want []string
		for _, p := range et.Props {
			want = append(want, p.Name)
			prop := s.Properties.GetOrZero(p.Name)
			if prop == nil {
				continue
			}
			ps := prop.Schema()
			if got := slices.Contains(ps.Type, "null"); got != (p.Nullable == "true") {
				t.Errorf("%s.%s: null allowed %v, Nullable=%q in $metadata", et.Name, p.Name, got, p.Nullable)
			}
			if p.Name != et.Key.Name && !strings.HasPrefix(ps.Description, p.Type+".") {
				t.Errorf("%s.%s: described %q, typed %s in $metadata", et.Name, p.Name, ps.Description, p.Type)
			}
		}
		for _, n := range et.Navs {
			want = append(want, n.Name) // the navigation properties, after the others
		}
		if !slices.Equal(names, want) {
			t.Errorf("%s: properties %v, $metadata has %v", et.Name, names, want)
		}
		if !slices.Equal(s.Required, []string{et.Key.Name}) {
			t.Errorf("%s: required %v, want the key %s", et.Name, s.Required, et.Key.Name)
		}
	}
}

// sampleValue returns a value of kind k as the database renders it.
func sampleValue(k dataset.Kind, i int) []byte {
	switch k {
	case dataset.Integer:
		return []byte([]string{"42", "-7", "9223372036854775807"}[i%3])
	case dataset.Decimal:
		return []byte([]string{"12500.50", "350000", "-0.5"}[i%3])
	case dataset.Date:
		return []byte("2024-02-29")
	case dataset.Timestamp:
		return []byte("2024-01-15 09:30:00")
	case dataset.Timestamptz:
		return []byte([]string{"2024-03-05 14:07:09.123456+00", "2024-04-01 12:00:00.25+00"}[i%2])
	}
	return []byte(`María "la" <b>\n`)
}

// sampleRows returns rows of set s as its store would hand them to a Feed:
// full rows, rows of absent values (empty in a set whose empty values are
// null, nil where a column is nullable) and the synthetic key's parts.
func sampleRows(s odataSet) [][][]byte {
	var rows [][][]byte
	for i := range 4 {
		var row [][]byte
		for _, c := range s.Columns {
			v := sampleValue(c.Kind, i)
			absent := i%2 == 1 && c.Name != s.Key && (c.Kind != dataset.Integer || !slices.Contains(s.OrderBy, c.Name))
			switch {
			case absent && s.EmptyIsNull:
				v = []byte{}
			case absent && c.Nullable:
				v = nil
			case absent && c.Kind == dataset.Text:
				v = []byte{}
			case c.Name == s.Key:
				v = []byte{byte('1' + i)}
			}
			row = append(row, v)
		}
		for j := range s.RowKey {
			part := []byte{byte('1' + i)}
			if j > 0 && i%2 == 1 {
				part = nil // an absent process or task
			}
			row = append(row, part)
		}
		rows = append(rows, row)
	}
	return rows
}

// TestODataFeeds checks the feeds package odata writes against the feed
// schemas, over queries that change their shape: $select, $count, the
// IEEE754Compatible format and pages with a next link.
func TestODataFeeds(t *testing.T) {
	sets := odataEntitySets(t)
	for i, s := range fullView.sets {
		feed := schemaOf(t, "OData"+s.Name+"Feed")
		props := s.propertyNames()
		for _, tt := range []struct {
			query    string
			ieee     bool
			pageSize int
		}{
			{"", false, 0},
			{"$count=true", true, 0},
			{"$count=true&$select=" + strings.Join([]string{props[len(props)-1], props[1]}, ","), false, 2},
			{"$select=*&$top=3", true, 1},
		} {
			t.Run(s.Name+"?"+tt.query, func(t *testing.T) {
				values, err := url.ParseQuery(tt.query)
				if err != nil {
					t.Fatal(err)
				}
				q, err := odata.Parse(values, sets[i])
				if err != nil {
					t.Fatal(err)
				}
				var b bytes.Buffer
				f := odata.NewFeed(&b, q, odata.FeedOptions{
					ServiceRoot: "https://informe.example.cl" + ODataRoot, PageSize: tt.pageSize,
					Count: 4, Format: odata.Format{IEEE754Compatible: tt.ieee},
				})
				for _, row := range sampleRows(s) {
					if err := f.Encode(row); err != nil {
						t.Fatal(err)
					}
				}
				if err := f.Close(); err != nil {
					t.Fatal(err)
				}
				fits(t, "feed", feed, b.Bytes())
			})
		}
	}

	t.Run("ServiceDocument", func(t *testing.T) {
		fits(t, "service document", schemaOf(t, "ODataServiceDocument"), odata.ServiceDocument("https://informe.example.cl"+ODataRoot, sets...))
	})

	t.Run("Errors", func(t *testing.T) {
		schema := schemaOf(t, "ODataError")
		for _, e := range [][4]string{
			{"BadRequest", "bad", "$filter", "syntax"},
			{"NotImplemented", "no", "", ""},
			{"InternalServerError", "Internal Server Error", "", ""},
		} {
			var b bytes.Buffer
			if err := odata.WriteError(&b, e[0], e[1], e[2], e[3], 3); err != nil {
				t.Fatal(err)
			}
			fits(t, "error", schema, b.Bytes())
		}
		// And the errors Parse and Negotiate return.
		for _, raw := range []string{"$top=-1", "$expand=x", "$filter=task eq 1", "$filter=round(task) eq 1", "$orderby=tolower(task)", "$format=xml",
			"$orderby=1,2", "$expand=%2B1", "$select=1"} {
			values, _ := url.ParseQuery(raw)
			_, err := odata.Parse(values, sets[0])
			if err == nil {
				_, err = odata.Negotiate(values, nil)
			}
			if err == nil {
				t.Fatalf("%s: no error", raw)
			}
			var b bytes.Buffer
			_ = odata.WriteError(&b, "BadRequest", failure.MessageOf(err), failure.TargetOf(err), failure.ReasonOf(err), failure.PositionOf(err))
			fits(t, raw, schema, b.Bytes())
		}
	})
}

// TestODataCodes checks that the document names the OData error codes the
// API writes: each status's name without spaces.
func TestODataCodes(t *testing.T) {
	for st, want := range map[int]string{
		http.StatusBadRequest:          "BadRequest",
		http.StatusNotAcceptable:       "NotAcceptable",
		http.StatusNotImplemented:      "NotImplemented",
		http.StatusInternalServerError: "InternalServerError",
	} {
		if got := odataCode(st); got != want {
			t.Errorf("odataCode(%d) = %q, want %q", st, got, want)
		}
	}
}
