package odata_test

import (
	"encoding/json"
	"encoding/xml"
	"net/url"
	"strings"
	"testing"

	"github.com/informe/informe/internal/dataset"
	"github.com/informe/informe/internal/odata"
)

// model are the sets the server declares, in its order.
var model = []*odata.EntitySet{odata.Of(dataset.GeneralReport), odata.Of(dataset.Users), odata.Of(dataset.Contracts), odata.Of(dataset.Processes), odata.Of(dataset.Tasks), odata.Of(dataset.Clients), odata.Of(dataset.Services)}

// csdlModel is the part of $metadata about navigation.
type csdlModel struct {
	Schemas []struct {
		EntityTypes []struct {
			Name string `xml:"Name,attr"`
			Key  []struct {
				Name string `xml:"Name,attr"`
			} `xml:"Key>PropertyRef"`
			Properties []struct {
				Name string `xml:"Name,attr"`
			} `xml:"Property"`
			Navs []struct {
				Name        string `xml:"Name,attr"`
				Type        string `xml:"Type,attr"`
				Nullable    string `xml:"Nullable,attr"`
				Partner     string `xml:"Partner,attr"`
				Constraints []struct {
					Property   string `xml:"Property,attr"`
					Referenced string `xml:"ReferencedProperty,attr"`
				} `xml:"ReferentialConstraint"`
			} `xml:"NavigationProperty"`
		} `xml:"EntityType"`
		Container struct {
			Sets []struct {
				Name       string `xml:"Name,attr"`
				EntityType string `xml:"EntityType,attr"`
				Bindings   []struct {
					Path   string `xml:"Path,attr"`
					Target string `xml:"Target,attr"`
				} `xml:"NavigationPropertyBinding"`
				Annotations []struct {
					Term   string `xml:"Term,attr"`
					Values []struct {
						Property string `xml:"Property,attr"`
						Bool     string `xml:"Bool,attr"`
						Int      string `xml:"Int,attr"`
					} `xml:"Record>PropertyValue"`
				} `xml:"Annotation"`
			} `xml:"EntitySet"`
		} `xml:"EntityContainer"`
	} `xml:"DataServices>Schema"`
}

// TestMetadataModel checks the relations $metadata declares: every
// navigation's type is a declared entity type, its partner exists on it
// and points back, a to-one navigation constrains a property of its own
// type to the target's key, every navigation is bound to the set of its
// type, and the sets with navigations say they expand one level.
func TestMetadataModel(t *testing.T) {
	t.Parallel()
	var m csdlModel
	if err := xml.Unmarshal(odata.Metadata(model...), &m); err != nil {
		t.Fatal(err)
	}
	s := m.Schemas[0]
	type navKey struct{ typ, nav string }
	types := map[string]int{}
	navs := map[navKey]string{} // -> partner
	for i, et := range s.EntityTypes {
		types[odata.Namespace+"."+et.Name] = i
		for _, n := range et.Navs {
			navs[navKey{et.Name, n.Name}] = n.Partner
		}
	}
	setOfType := map[string]string{}
	for _, set := range s.Container.Sets {
		setOfType[set.EntityType] = set.Name
	}
	want := map[string][]string{
		"Contract": {"Client", "Service", "Processes", "Tasks"},
		"Process":  {"Contract", "Tasks"},
		"Task":     {"Process", "Contract"},
		"Client":   {"Contracts"},
		"Service":  {"Contracts"},
	}
	for _, et := range s.EntityTypes {
		var got []string
		for _, n := range et.Navs {
			got = append(got, n.Name)
			typ, many := strings.CutPrefix(n.Type, "Collection(")
			typ = strings.TrimSuffix(typ, ")")
			ti, ok := types[typ]
			if !ok {
				t.Errorf("%s/%s: type %s is not declared", et.Name, n.Name, n.Type)
				continue
			}
			target := s.EntityTypes[ti]
			if back, ok := navs[navKey{target.Name, n.Partner}]; !ok || back != n.Name {
				t.Errorf("%s/%s: partner %s/%s points back to %q, want %q", et.Name, n.Name, target.Name, n.Partner, back, n.Name)
			}
			if many {
				if len(n.Constraints) != 0 || n.Nullable != "" {
					t.Errorf("%s/%s: a collection has no constraint nor Nullable", et.Name, n.Name)
				}
			} else {
				if len(n.Constraints) != 1 {
					t.Fatalf("%s/%s: %d referential constraints, want 1", et.Name, n.Name, len(n.Constraints))
				}
				c := n.Constraints[0]
				if c.Referenced != target.Key[0].Name {
					t.Errorf("%s/%s: ReferencedProperty %s, want the key %s", et.Name, n.Name, c.Referenced, target.Key[0].Name)
				}
				found := false
				for _, p := range et.Properties {
					found = found || p.Name == c.Property
				}
				if !found {
					t.Errorf("%s/%s: constraint on %s, not a property", et.Name, n.Name, c.Property)
				}
			}
		}
		if strings.Join(got, ",") != strings.Join(want[et.Name], ",") {
			t.Errorf("%s: navigations %v, want %v", et.Name, got, want[et.Name])
		}
	}
	for _, set := range s.Container.Sets {
		et := s.EntityTypes[types[set.EntityType]]
		if got, want := len(set.Bindings), len(et.Navs); got != want {
			t.Errorf("%s: %d bindings, want %d", set.Name, got, want)
		}
		for i, b := range set.Bindings {
			n := et.Navs[i]
			typ := strings.TrimSuffix(strings.TrimPrefix(n.Type, "Collection("), ")")
			if b.Path != n.Name || b.Target != setOfType[typ] {
				t.Errorf("%s: binding %s -> %s, want %s -> %s", set.Name, b.Path, b.Target, n.Name, setOfType[typ])
			}
		}
		expandable := ""
		for _, a := range set.Annotations {
			if a.Term == "Capabilities.ExpandRestrictions" {
				for _, v := range a.Values {
					if v.Property == "Expandable" {
						expandable = v.Bool
					}
				}
			}
		}
		if want := map[bool]string{true: "true", false: "false"}[len(et.Navs) > 0]; expandable != want {
			t.Errorf("%s: Expandable = %q, want %q", set.Name, expandable, want)
		}
	}
}

// TestMetadataSubset leaves out navigations whose targets the document
// does not declare.
func TestMetadataSubset(t *testing.T) {
	t.Parallel()
	doc := string(odata.Metadata(odata.Of(dataset.Contracts), odata.Of(dataset.Clients)))
	if !strings.Contains(doc, `<NavigationProperty Name="Client"`) || strings.Contains(doc, `Name="Processes"`) {
		t.Errorf("navigations of a subset:\n%s", doc)
	}
}

func TestParseExpand(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name, set, query string
		status           int
		msgs             []string
	}{
		{"ErrUnknown", "Contracts", "$expand=Payer", 400, []string{`no navigation property "Payer"`, "Client, Service, Processes, Tasks"}},
		{"ErrCase", "Contracts", "$expand=client", 400, []string{`"client"`}},
		{"ErrTwice", "Contracts", "$expand=Client,Client($select=client_rut)", 400, []string{"Client is given more than once"}},
		{"ErrEmptyItem", "Contracts", "$expand=Client,", 400, []string{"empty item"}},
		{"ErrUnbalanced", "Contracts", "$expand=Client($select=client_rut", 400, []string{"unbalanced"}},
		{"ErrNestedUnknownProperty", "Contracts", "$expand=Client($select=nope)", 400, []string{`no property "nope"`}},
		{"ErrNestedPropertyOfOther", "Contracts", "$expand=Client($select=service)", 400, []string{`Client has no property "service"`}},
		{"ErrNestedFilter", "Contracts", "$expand=Processes($filter=tasks gt 1)", 501, []string{"only $select is"}},
		{"ErrNestedExpand", "Processes", "$expand=Contract($expand=Client)", 501, []string{"only $select is"}},
		{"ErrNestedLevels", "Processes", "$expand=Tasks($levels=2)", 501, []string{"only $select is"}},
		{"ErrStar", "Contracts", "$expand=*", 501, []string{"one level"}},
		{"ErrPath", "Tasks", "$expand=Process/Contract", 501, []string{"one level"}},
		{"ErrNoNavigations", "GeneralReport", "$expand=Contract", 501, []string{"$expand is not supported on GeneralReport"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			set := setNamed(t, tt.set)
			_, err := odata.Parse(query(tt.query), set)
			wantErr(t, err, tt.status, tt.msgs...)
		})
	}
}

func setNamed(t *testing.T, name string) *odata.EntitySet {
	t.Helper()
	for _, s := range model {
		if s.Name() == name {
			return s
		}
	}
	t.Fatalf("no set %s", name)
	return nil
}

// TestExpansions checks what the store is asked to read for $expand: the
// target's columns in order, its key first unless selected, and the
// columns that relate the rows, both ways.
func TestExpansions(t *testing.T) {
	t.Parallel()
	q := mustParse(t, odata.Of(dataset.Contracts), "$expand=Client($select=client_region,client_rut),Processes($select=process_id,tasks),Service")
	got := q.Expansions()
	if len(got) != 3 {
		t.Fatalf("%d expansions, want 3", len(got))
	}
	for i, want := range []struct {
		target, local, remote, order string
		cols                         []string
	}{
		{"Clients", "key_client_id", "key_client_id", "key_client_id", []string{"client_id", "client_region", "client_rut"}},
		{"Processes", "key_contract_id", "key_contract_id", "key_process_id", []string{"process_id", "tasks"}},
		{"Services", "key_service_id", "key_service_id", "key_service_id", dataset.Names(dataset.Services.Columns)},
	} {
		x := got[i]
		if x.Target.Name() != want.target || x.Local != want.local || x.Remote != want.remote || x.Order != want.order ||
			strings.Join(dataset.Names(x.Columns), ",") != strings.Join(want.cols, ",") {
			t.Errorf("expansion %d = %s %s=%s by %s %v, want %+v", i, x.Target.Name(), x.Local, x.Remote, x.Order, dataset.Names(x.Columns), want)
		}
	}
}

// TestFeedExpand writes rows with their related rows: a to-one as an
// object or null, a to-many as an array, typed as the target declares,
// and the context and next link saying what was expanded.
func TestFeedExpand(t *testing.T) {
	t.Parallel()
	q := mustParse(t, odata.Of(dataset.Contracts), "$select=contract_id,costo_servicio&$expand=Service($select=costo_servicio),Processes($select=tasks,first_task_end_date)")
	row := func(id, cost string, service, processes any) [][]byte {
		r := make([][]byte, len(dataset.Contracts.Columns))
		r[0] = []byte(id)
		if cost != "" {
			r[42] = []byte(cost)
		}
		if dataset.Contracts.Columns[42].Name != "costo_servicio" {
			t.Fatalf("column 42 is %s", dataset.Contracts.Columns[42].Name)
		}
		r[7], r[5] = []byte("1"), []byte("2024-01-01 00:00:00") // client_id, contract_creation_date: not nullable
		for _, v := range []any{service, processes} {
			if v == nil {
				r = append(r, nil)
				continue
			}
			b, _ := json.Marshal(v)
			r = append(r, b)
		}
		return r
	}
	body := page(t, q, odata.FeedOptions{ServiceRoot: root, PageSize: 1},
		row("1", "12500.5", [][]any{{"3", "12500.5"}}, [][]any{{"10", "2", "2024-03-01"}, {"11", "0", nil}}),
		row("2", "", nil, nil),
	)
	f := decode(t, body)
	if got, want := f.Context, root+"/$metadata#Contracts(contract_id,costo_servicio,Service(costo_servicio),Processes(tasks,first_task_end_date))"; got != want {
		t.Errorf("context = %s, want %s", got, want)
	}
	v, _ := json.Marshal(f.Value[0])
	if got, want := string(v), `{"Processes":[{"first_task_end_date":"2024-03-01","process_id":10,"tasks":2},{"first_task_end_date":null,"process_id":11,"tasks":0}],`+
		`"Service":{"costo_servicio":12500.5,"service_id":3},"contract_id":1,"costo_servicio":12500.5}`; got != want {
		t.Errorf("entity = %s\nwant     %s", got, want)
	}
	if next, err := url.Parse(f.NextLink); err != nil || next.Query().Get("$expand") != "Service($select=costo_servicio),Processes($select=tasks,first_task_end_date)" {
		t.Errorf("next link %s does not carry $expand (%v)", f.NextLink, err)
	}
	// The second row, past the page, only asked for the link; a row
	// without related rows is null and [].
	body = page(t, q, odata.FeedOptions{ServiceRoot: root}, row("2", "", nil, nil))
	f = decode(t, body)
	v, _ = json.Marshal(f.Value[0])
	if got, want := string(v), `{"Processes":[],"Service":null,"contract_id":2,"costo_servicio":null}`; got != want {
		t.Errorf("entity = %s, want %s", got, want)
	}
}
