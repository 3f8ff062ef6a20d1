package odata

import (
	"fmt"

	"github.com/informe/informe/internal/dataset"
)

// Namespace is the CSDL schema namespace of informe's entity types, and
// Container the name of its entity container.
const (
	Namespace = "Informe"
	Container = "Container"
)

// maxKeyParts bounds the integers a row key is made of.
const maxKeyParts = 3

// EntitySetDef describes an entity set. It is plain data, checked by
// [NewEntitySet]; the column list is the one that drives the SQL and the
// other encoders, so the OData view of a set never drifts from them.
//
// A general report definition looks like:
//
//	odata.EntitySetDef{
//		Name: "GeneralReport", TypeName: "GeneralReportRow",
//		Columns: report.Columns,
//		Key: "row_id", RowKey: []string{"contract_id", "process_id", "task_id"},
//		OrderBy: []string{"contract_id", "process_id"},
//		Filters: []string{"contract_id", "code_contract", "client_id", "client_rut"},
//		EmptyIsNull: true,
//	}
//
// and the users one:
//
//	odata.EntitySetDef{
//		Name: "Users", TypeName: "User", Columns: users.Columns,
//		Key: "id", OrderBy: []string{"id"},
//	}
type EntitySetDef struct {
	Name     string // the entity set, also its URL segment: "GeneralReport"
	TypeName string // its entity type, in [Namespace]: "GeneralReportRow"

	// Columns are the properties, in order, with their kinds. Integer is
	// Edm.Int64, Decimal is Edm.Decimal (Scale="variable"), Date is
	// Edm.Date, Timestamp and Timestamptz are Edm.DateTimeOffset, anything
	// else is Edm.String.
	Columns []dataset.Column

	// Key names the key property. Either it is one of Columns, an Integer
	// column that is never empty and orders the rows (users: "id"), or it
	// is a synthetic, non-nullable Edm.String property that is not a
	// column, declared first in the entity type, whose value is made of the
	// RowKey integers: "<contract>-<process>-<task>" in base 10, 0 standing
	// for an absent process or task (report: "row_id", e.g. "6-7-7",
	// "2-0-0").
	Key string

	// RowKey names the integers (at most 3) that make a synthetic key, in
	// the order of the rows; they are listed for documentation and
	// messages. Each row given to [Feed.Encode] carries them after the
	// Columns values, as base-10 text, nil or "" standing for 0. Empty when
	// Key is a column.
	RowKey []string

	// KeyColumns names the columns of the set's typed view that hold the
	// key's parts, in order: the view [Query.SQL] writes conditions on,
	// whose columns are the properties' typed values under their own
	// names. For the report: key_contract_id, key_process_id and
	// key_task_id, NULL standing for an absent process or task. Empty
	// when Key is a column of the view.
	KeyColumns []string

	// Normalized maps a Text property to how its equalities compare: a
	// typed-view column holding the normalized value and the SQL function
	// that normalizes a literal the same way. For the report, client_rut:
	// {"key_client_rut", "rut_key"}, so that eq, ne and in match a RUT
	// typed in any form. Other comparisons and functions use the value.
	Normalized map[string][2]string

	// OrderBy names the Integer columns whose ascending order is the order
	// of the rows when $orderby does not say otherwise; a $orderby that
	// restates it or a prefix of it is a plain request ([Query.Plain]).
	// The rows must be in key order as well (the key refines OrderBy).
	OrderBy []string

	// Filters names the columns whose equalities (Integer and Text
	// columns only; an Integer one an id, at least 1) a store serves on
	// its own: see [Query.Filter]. $filter compares every property.
	Filters []string

	// EmptyIsNull says the set's values are never nil and an empty value
	// means "absent" (the general_report view renders NULL as ''): every
	// property but the key is then declared Nullable and an empty value of
	// any type, text included, is written as null. Otherwise only nil
	// values of Nullable columns are null, and an empty text is "".
	EmptyIsNull bool

	// Joined maps a column of the typed view that is NULL exactly where a
	// row has none of an outer-joined table's rows, and is a plain column
	// of that table (for the report, key_task_id: a task's id), to the
	// properties read from that table. A condition that holds only where
	// one of them has a value is written with "column IS NOT NULL" beside
	// it, which says nothing new about the rows but lets PostgreSQL see
	// that the outer join is an inner one and start from an index on the
	// joined table (it cannot see through the view's nullif).
	Joined map[string][]string

	// Literals maps a Text property to a check of the string literals it
	// is compared with by eq, ne or in: its error is a 400 naming the
	// property, where a malformed value would otherwise match nothing,
	// with the reason of the *failure.Error the check returns, if any.
	// For the report, client_rut: a RUT that does not parse.
	Literals map[string]func(string) error

	// SortIndexed names the properties whose order, as $orderby asks for
	// it (nulls first ascending, last descending), an index gives through
	// the typed view: a page sorted first by one of them can find its
	// first sort values in that index before it sorts anything (see
	// [SQL.Bound]). For the report, costo_servicio (services_cost_idx).
	SortIndexed []string

	// Navigations relate the set to others (see [Navigation]): the
	// navigation properties of its entity type, which $expand follows.
	// Only a set whose key is a column has them.
	Navigations []Navigation
}

// EntitySet is a checked [EntitySetDef], ready for [Metadata], [Parse] and
// [NewFeed]. It is immutable and safe for concurrent use.
type EntitySet struct {
	def    EntitySetDef
	props  []property     // declaration order: a synthetic key first, then the columns
	byName map[string]int // property name -> index in props
	joined map[int]string // property index -> its Joined column
	sorted map[int]bool   // property indexes of SortIndexed
	key    int            // index in props of the key property
	keyCol int            // index in Columns of a column key; -1 for a synthetic key
}

// property is one property of an entity type.
type property struct {
	name     string
	col      int // index in Columns; -1 for the synthetic key
	kind     dataset.Kind
	nullable bool
	filter   bool // one of Filters
}

// Name returns the entity set's name.
func (s *EntitySet) Name() string { return s.def.Name }

// NewEntitySet checks def and returns the entity set it describes. It
// returns an error, for start-up, when a name is not an OData identifier or
// is used twice, when Key, RowKey, OrderBy or Filters do not fit the
// columns as [EntitySetDef] documents, or when Columns is empty.
func NewEntitySet(def EntitySetDef) (*EntitySet, error) {
	fail := func(format string, args ...any) (*EntitySet, error) {
		return nil, fmt.Errorf("odata: entity set %q: %s", def.Name, fmt.Sprintf(format, args...))
	}
	if !isIdentifier(def.Name) || !isIdentifier(def.TypeName) {
		return fail("name and type name must be OData identifiers, got %q and %q", def.Name, def.TypeName)
	}
	if len(def.Columns) == 0 {
		return fail("no columns")
	}
	// Copy the slices: the set must not change under a caller's feet.
	def.Columns = append([]dataset.Column(nil), def.Columns...)
	def.RowKey = append([]string(nil), def.RowKey...)
	def.OrderBy = append([]string(nil), def.OrderBy...)
	def.Filters = append([]string(nil), def.Filters...)
	def.KeyColumns = append([]string(nil), def.KeyColumns...)
	def.Navigations = append([]Navigation(nil), def.Navigations...)

	s := &EntitySet{def: def, byName: make(map[string]int, len(def.Columns)+1), keyCol: -1}
	cols := make(map[string]int, len(def.Columns))
	for i, c := range def.Columns {
		if !isIdentifier(c.Name) {
			return fail("column %q is not an OData identifier", c.Name)
		}
		if _, dup := cols[c.Name]; dup {
			return fail("column %q given twice", c.Name)
		}
		cols[c.Name] = i
	}
	if i, ok := cols[def.Key]; ok {
		c := def.Columns[i]
		if c.Kind != dataset.Integer || c.Nullable {
			return fail("key column %q must be a non-nullable integer", def.Key)
		}
		if len(def.RowKey) != 0 {
			return fail("RowKey is only for a synthetic key, and key %q is a column", def.Key)
		}
		s.keyCol = i
	} else {
		if !isIdentifier(def.Key) {
			return fail("key %q is not an OData identifier", def.Key)
		}
		if len(def.RowKey) == 0 || len(def.RowKey) > maxKeyParts {
			return fail("synthetic key %q needs 1 to %d RowKey names, got %d", def.Key, maxKeyParts, len(def.RowKey))
		}
		if len(def.KeyColumns) != len(def.RowKey) {
			return fail("synthetic key %q needs a KeyColumns name per RowKey name", def.Key)
		}
		s.props = append(s.props, property{name: def.Key, col: -1, kind: dataset.Text})
	}
	for i, c := range def.Columns {
		s.props = append(s.props, property{
			name:     c.Name,
			col:      i,
			kind:     c.Kind,
			nullable: i != s.keyCol && (c.Nullable || def.EmptyIsNull),
		})
	}
	for i, p := range s.props {
		s.byName[p.name] = i
		if p.name == def.Key {
			s.key = i
		}
	}
	s.joined = make(map[int]string)
	for col, names := range def.Joined {
		if !isIdentifier(col) {
			return fail("Joined column %q is not an identifier", col)
		}
		for _, name := range names {
			i, ok := s.byName[name]
			if !ok || i == s.key {
				return fail("Joined %q: %q is not a property", col, name)
			}
			s.joined[i] = col
		}
	}
	s.sorted = make(map[int]bool)
	for _, name := range def.SortIndexed {
		i, ok := s.byName[name]
		if !ok {
			return fail("SortIndexed %q is not a property", name)
		}
		s.sorted[i] = true
	}
	if len(def.OrderBy) == 0 {
		return fail("OrderBy is empty")
	}
	for _, name := range def.OrderBy {
		i, ok := cols[name]
		if !ok || def.Columns[i].Kind != dataset.Integer {
			return fail("OrderBy %q is not an integer column", name)
		}
	}
	for _, name := range def.Filters {
		i, ok := cols[name]
		if !ok || (def.Columns[i].Kind != dataset.Integer && def.Columns[i].Kind != dataset.Text) {
			return fail("filter %q is not an integer or text column", name)
		}
		s.props[s.byName[name]].filter = true
	}
	navs := make(map[string]bool)
	for _, n := range def.Navigations {
		_, isProp := s.byName[n.Name]
		_, holds := s.byName[n.Property]
		switch {
		case !isIdentifier(n.Name) || !isIdentifier(n.Target) || !isIdentifier(n.Partner) || !isIdentifier(n.Column):
			return fail("navigation %q: names must be OData identifiers", n.Name)
		case navs[n.Name] || isProp:
			return fail("navigation %q: the name is given twice", n.Name)
		case s.keyCol < 0:
			return fail("navigation %q: the set's key must be a column", n.Name)
		case !n.Many && !holds:
			return fail("navigation %q: %q is not a property", n.Name, n.Property)
		case n.Many && n.Optional:
			return fail("navigation %q: only a to-one navigation is optional", n.Name)
		}
		navs[n.Name] = true
	}
	return s, nil
}

// keyParts is the number of integers in a row's key.
func (s *EntitySet) keyParts() int {
	if s.keyCol >= 0 {
		return 1
	}
	return len(s.def.RowKey)
}

// EDMType returns the EDM primitive type of a column kind: the type of
// its property in the metadata document and in the OpenAPI description.
func EDMType(k dataset.Kind) string {
	switch k {
	case dataset.Integer:
		return "Edm.Int64"
	case dataset.Decimal:
		return "Edm.Decimal"
	case dataset.Date:
		return "Edm.Date"
	case dataset.Timestamp, dataset.Timestamptz:
		return "Edm.DateTimeOffset"
	}
	return "Edm.String"
}

// isIdentifier reports whether s is an OData simple identifier, limited to
// ASCII: a letter or underscore, then letters, digits and underscores, at
// most 128 in all.
func isIdentifier(s string) bool {
	if s == "" || len(s) > 128 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '_', 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z':
		case '0' <= c && c <= '9' && i > 0:
		default:
			return false
		}
	}
	return true
}
