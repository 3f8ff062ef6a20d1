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

// EntitySet is a checked [dataset.EntitySet], ready for [Metadata], [Parse] and
// [NewFeed]. It is immutable and safe for concurrent use.
type EntitySet struct {
	def    dataset.EntitySet
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
	// masked: the token sees the column masked (dataset.Column.Mask), so
	// it may be selected but neither filtered nor ordered on, which would
	// tell its values
	masked   bool
	personal dataset.Subject // whose personal data it holds (dataset.Column.Personal)
	mask     dataset.Mask    // how a masked one is written
}

// Name returns the entity set's name.
func (s *EntitySet) Name() string { return s.def.Name }

// NewEntitySet checks def and returns the entity set it describes. It
// returns an error, for start-up, when a name is not an OData identifier or
// is used twice, when Key, RowKey, OrderBy or Filters do not fit the
// columns as [dataset.EntitySet] documents, or when Columns is empty.
func NewEntitySet(def dataset.EntitySet) (*EntitySet, error) {
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
	def.Navigations = append([]dataset.Navigation(nil), def.Navigations...)

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
			masked:   c.Mask != dataset.Unmasked,
			personal: c.Personal,
			mask:     c.Mask,
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

// keyColumns are the typed view's columns of the key's parts.
func (s *EntitySet) keyColumns() []string {
	if len(s.def.KeyColumns) > 0 {
		return s.def.KeyColumns
	}
	return []string{s.def.Key}
}
