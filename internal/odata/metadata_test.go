package odata_test

import (
	"encoding/json"
	"encoding/xml"
	"net/url"
	"strings"
	"testing"

	"github.com/informe/informe/internal/dataset"
	"github.com/informe/informe/internal/failure"
	"github.com/informe/informe/internal/odata"
)

type edmx struct {
	XMLName xml.Name `xml:"http://docs.oasis-open.org/odata/ns/edmx Edmx"`
	Version string   `xml:"Version,attr"`
	Schemas []struct {
		XMLName     xml.Name `xml:"http://docs.oasis-open.org/odata/ns/edm Schema"`
		Namespace   string   `xml:"Namespace,attr"`
		EntityTypes []struct {
			Name string `xml:"Name,attr"`
			Key  []struct {
				Name string `xml:"Name,attr"`
			} `xml:"Key>PropertyRef"`
			Properties []struct {
				Name      string `xml:"Name,attr"`
				Type      string `xml:"Type,attr"`
				Nullable  string `xml:"Nullable,attr"`
				Scale     string `xml:"Scale,attr"`
				Precision string `xml:"Precision,attr"`
			} `xml:"Property"`
		} `xml:"EntityType"`
		Container struct {
			Name string `xml:"Name,attr"`
			Sets []struct {
				Name       string `xml:"Name,attr"`
				EntityType string `xml:"EntityType,attr"`
			} `xml:"EntitySet"`
		} `xml:"EntityContainer"`
	} `xml:"DataServices>Schema"`
}

func TestMetadata(t *testing.T) {
	t.Parallel()
	doc := odata.Metadata(reportSet(t), usersSet(t))
	var m edmx
	if err := xml.Unmarshal(doc, &m); err != nil {
		t.Fatalf("metadata is not XML: %v\n%s", err, doc)
	}
	if got, want := m.Version, "4.0"; got != want {
		t.Errorf("Version = %q, want %q", got, want)
	}
	if len(m.Schemas) != 1 {
		t.Fatalf("%d schemas, want 1", len(m.Schemas))
	}
	s := m.Schemas[0]
	if got, want := s.Namespace, odata.Namespace; got != want {
		t.Errorf("Namespace = %q, want %q", got, want)
	}
	if got, want := len(s.EntityTypes), 2; got != want {
		t.Fatalf("%d entity types, want %d", got, want)
	}

	wantType := map[dataset.Kind]string{
		dataset.Text: "Edm.String", dataset.Integer: "Edm.Int64", dataset.Decimal: "Edm.Decimal",
		dataset.Date: "Edm.Date", dataset.Timestamp: "Edm.DateTimeOffset", dataset.Timestamptz: "Edm.DateTimeOffset",
	}
	for _, tt := range []struct {
		name, typ, key string
		cols           []dataset.Column
		allNullable    bool
	}{
		{"GeneralReportRow", "GeneralReportRow", "row_id", dataset.GeneralReport.Columns, true},
		{"User", "User", "id", dataset.Users.Columns, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			et := s.EntityTypes[0]
			if tt.name == "User" {
				et = s.EntityTypes[1]
			}
			if got, want := et.Name, tt.typ; got != want {
				t.Fatalf("entity type %q, want %q", got, want)
			}
			if len(et.Key) != 1 || et.Key[0].Name != tt.key {
				t.Errorf("key = %+v, want %s", et.Key, tt.key)
			}
			props := et.Properties
			if tt.key == "row_id" {
				// The synthetic key comes first, a non-nullable string.
				if p := props[0]; p.Name != "row_id" || p.Type != "Edm.String" || p.Nullable != "false" {
					t.Errorf("first property = %+v, want row_id Edm.String Nullable=false", p)
				}
				props = props[1:]
			}
			if got, want := len(props), len(tt.cols); got != want {
				t.Fatalf("%d column properties, want %d", got, want)
			}
			for i, p := range props {
				c := tt.cols[i]
				if p.Name != c.Name {
					t.Errorf("property %d = %s, want %s", i, p.Name, c.Name)
				}
				if got, want := p.Type, wantType[c.Kind]; got != want {
					t.Errorf("%s: Type = %s, want %s (kind %v)", c.Name, got, want, c.Kind)
				}
				wantNullable := "false"
				if (tt.allNullable || c.Nullable) && c.Name != tt.key {
					wantNullable = "true"
				}
				if got := p.Nullable; got != wantNullable {
					t.Errorf("%s: Nullable = %q, want %q", c.Name, got, wantNullable)
				}
				if c.Kind == dataset.Decimal && p.Scale != "variable" {
					t.Errorf("%s: Scale = %q, want variable", c.Name, p.Scale)
				}
				if c.Kind == dataset.Timestamptz && p.Precision != "6" {
					t.Errorf("%s: Precision = %q, want 6", c.Name, p.Precision)
				}
			}
		})
	}

	c := s.Container
	if got, want := c.Name, odata.Container; got != want {
		t.Errorf("container %q, want %q", got, want)
	}
	got := make([]string, len(c.Sets))
	for i, es := range c.Sets {
		got[i] = es.Name + ":" + es.EntityType
	}
	if g, want := strings.Join(got, " "), "GeneralReport:Informe.GeneralReportRow Users:Informe.User"; g != want {
		t.Errorf("entity sets = %s, want %s", g, want)
	}
}

func TestServiceDocument(t *testing.T) {
	t.Parallel()
	doc := odata.ServiceDocument("https://informe.example.cl/odata", reportSet(t), usersSet(t))
	var got struct {
		Context string `json:"@odata.context"`
		Value   []struct{ Name, Kind, URL string }
	}
	if err := json.Unmarshal(doc, &got); err != nil {
		t.Fatalf("service document is not JSON: %v\n%s", err, doc)
	}
	if want := "https://informe.example.cl/odata/$metadata"; got.Context != want {
		t.Errorf("context = %q, want %q", got.Context, want)
	}
	if len(got.Value) != 2 || got.Value[0].Name != "GeneralReport" || got.Value[0].Kind != "EntitySet" ||
		got.Value[0].URL != "GeneralReport" || got.Value[1].Name != "Users" {
		t.Errorf("value = %+v", got.Value)
	}
}

func TestNewEntitySetErrors(t *testing.T) {
	t.Parallel()
	cols := []dataset.Column{
		{Name: "id", Kind: dataset.Integer},
		{Name: "name", Kind: dataset.Text},
		{Name: "born", Kind: dataset.Date},
		{Name: "seen", Kind: dataset.Timestamp, Nullable: true},
	}
	ok := dataset.EntitySet{Name: "People", TypeName: "Person", Columns: cols, Key: "id", OrderBy: []string{"id"}}
	if _, err := odata.NewEntitySet(ok); err != nil {
		t.Fatalf("OK: %v", err)
	}
	for _, tt := range []struct {
		name   string
		change func(*dataset.EntitySet)
		want   string
	}{
		{"ErrName", func(d *dataset.EntitySet) { d.Name = "General Report" }, "identifiers"},
		{"ErrNoColumns", func(d *dataset.EntitySet) { d.Columns = nil }, "no columns"},
		{"ErrColumnName", func(d *dataset.EntitySet) {
			d.Columns = append([]dataset.Column{{Name: "1st"}}, cols...)
		}, `column "1st"`},
		{"ErrDuplicateColumn", func(d *dataset.EntitySet) { d.Columns = append(cols, cols[1]) }, "twice"},
		{"ErrKeyNotInteger", func(d *dataset.EntitySet) { d.Key = "name" }, "non-nullable integer"},
		{"ErrKeyNullable", func(d *dataset.EntitySet) {
			d.Columns = []dataset.Column{{Name: "id", Kind: dataset.Integer, Nullable: true}}
		}, "non-nullable integer"},
		{"ErrRowKeyWithColumnKey", func(d *dataset.EntitySet) { d.RowKey = []string{"a"} }, "RowKey"},
		{"ErrSyntheticKeyWithoutParts", func(d *dataset.EntitySet) { d.Key = "row_id" }, "RowKey"},
		{"ErrSyntheticKeyTooManyParts", func(d *dataset.EntitySet) {
			d.Key, d.RowKey = "row_id", []string{"a", "b", "c", "d"}
		}, "RowKey"},
		{"ErrNoOrder", func(d *dataset.EntitySet) { d.OrderBy = nil }, "OrderBy"},
		{"ErrOrderByText", func(d *dataset.EntitySet) { d.OrderBy = []string{"name"} }, "OrderBy"},
		{"ErrFilterDate", func(d *dataset.EntitySet) { d.Filters = []string{"born"} }, "filter"},
		{"ErrFilterUnknown", func(d *dataset.EntitySet) { d.Filters = []string{"nope"} }, "filter"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			def := ok
			tt.change(&def)
			_, err := odata.NewEntitySet(def)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want one containing %q", err, tt.want)
			}
		})
	}
}

// TestMetadataCapabilities checks the Capabilities annotations of every
// entity set: the vocabulary is referenced under its alias, and each set
// declares its filter functions, filtering, sorting, counting, $top and
// $skip.
func TestMetadataCapabilities(t *testing.T) {
	t.Parallel()
	doc := odata.Metadata(reportSet(t), usersSet(t))
	var m struct {
		References []struct {
			URI      string `xml:"Uri,attr"`
			Includes []struct {
				Namespace string `xml:"Namespace,attr"`
				Alias     string `xml:"Alias,attr"`
			} `xml:"http://docs.oasis-open.org/odata/ns/edmx Include"`
		} `xml:"http://docs.oasis-open.org/odata/ns/edmx Reference"`
		Sets []struct {
			Name        string `xml:"Name,attr"`
			Annotations []struct {
				Term    string   `xml:"Term,attr"`
				Bool    string   `xml:"Bool,attr"`
				Strings []string `xml:"Collection>String"`
				Values  []struct {
					Property string `xml:"Property,attr"`
					Bool     string `xml:"Bool,attr"`
				} `xml:"Record>PropertyValue"`
			} `xml:"Annotation"`
		} `xml:"DataServices>Schema>EntityContainer>EntitySet"`
	}
	if err := xml.Unmarshal(doc, &m); err != nil {
		t.Fatal(err)
	}
	if len(m.References) != 1 || len(m.References[0].Includes) != 1 ||
		m.References[0].Includes[0].Namespace != "Org.OData.Capabilities.V1" || m.References[0].Includes[0].Alias != "Capabilities" {
		t.Fatalf("references = %+v", m.References)
	}
	if len(m.Sets) != 2 {
		t.Fatalf("%d entity sets", len(m.Sets))
	}
	for _, s := range m.Sets {
		got := map[string]string{}
		for _, a := range s.Annotations {
			switch {
			case a.Term == "Capabilities.FilterFunctions":
				got[a.Term] = strings.Join(a.Strings, ",")
			case a.Bool != "":
				got[a.Term] = a.Bool
			default:
				for _, v := range a.Values {
					got[a.Term+"/"+v.Property] = v.Bool
				}
			}
		}
		want := map[string]string{
			"Capabilities.FilterFunctions":               "contains,startswith,endswith,tolower,toupper,trim,length,concat,indexof,substring,year,month,day,hour,minute,second,Informe.fold",
			"Capabilities.FilterRestrictions/Filterable": "true",
			"Capabilities.SortRestrictions/Sortable":     "true",
			"Capabilities.CountRestrictions/Countable":   "true",
			"Capabilities.TopSupported":                  "true",
			"Capabilities.SkipSupported":                 "true",
			"Capabilities.ExpandRestrictions/Expandable": "false",
		}
		for k, v := range want {
			if got[k] != v {
				t.Errorf("%s: %s = %q, want %q", s.Name, k, got[k], v)
			}
		}
	}
}

// TestParseMetadata checks the options $metadata takes: $format=xml alone;
// JSON (CSDL JSON) or any other format is a 406, any other $-option a 400.
func TestParseMetadata(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name, query string
		status      int // 0: accepted
		reason      string
		msg         string
	}{
		{"OKNone", "", 0, "", ""},
		{"OKXML", "$format=xml", 0, "", ""},
		{"OKApplicationXML", "$format=application/xml%3Bcharset=utf-8", 0, "", ""},
		{"OKCustom", "foo=1", 0, "", ""}, // the caller's
		{"ErrJSON", "$format=json", 406, "", "CSDL JSON (OData 4.01) is not written"},
		{"ErrApplicationJSON", "$format=application/json", 406, "", "CSDL JSON"},
		{"ErrAtom", "$format=atom", 406, "", "$metadata is CSDL XML (application/xml)"},
		{"ErrTop", "$top=1", 400, "unknown_option", "$top is not an option of $metadata"},
		{"ErrTwice", "$format=xml&$FORMAT=xml", 400, "repeated", "$format is given more than once"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			v, err := url.ParseQuery(tt.query)
			if err != nil {
				t.Fatal(err)
			}
			err = odata.ParseMetadata(v)
			if tt.status == 0 {
				if err != nil {
					t.Fatalf("got %v, want none", err)
				}
				return
			}
			wantErr(t, err, tt.status, tt.msg)
			if e := err.(*failure.Error); e.Reason != tt.reason {
				t.Errorf("reason %q, want %q", e.Reason, tt.reason)
			}
		})
	}
}
