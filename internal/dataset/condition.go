package dataset

// Expr is a typed expression over one row of a dataset's typed view: a
// condition of a [Query] (its Filters), or a value within one. The doors'
// syntaxes parse into it (package odata its $filter, package source a
// token's row rules); the store writes it as SQL, every literal a bound
// parameter. Its values are OData's: a comparison is true or false, never
// null (null eq null is true), a function of null is null, and and, or
// and not are three-valued.
type Expr struct {
	Op   Op
	Type Type // the value's type; Bool for a condition
	// Column is, for a Property, the column of the typed view under the
	// property's name, or the synthetic key's name when Key is set (the
	// key's parts as text joined by "-": see [EntitySet.Key]); Kind is its
	// kind.
	Column string
	Key    bool
	Kind   Kind
	// Name is a Call's function or a Compare's operator (eq, ne, gt, ge,
	// lt, le).
	Name string
	// Value is a Literal's value: int64 (Int), string (Number and String:
	// canonical text), time.Time (Instant, cut to the microsecond; Day,
	// the day's midnight in UTC, its year astronomical: 0 is 1 BC), bool
	// (Bool); nil for null. Pico is, for an
	// Instant, the rest of its fraction of a second in picoseconds (0 to
	// 999,999): PostgreSQL's microseconds may not hold it.
	Value any
	Pico  int64
	Args  []*Expr
	// Nav and Target are, for Some and Every (OData's any and all), the collection navigation and
	// the entity set it leads to, over whose row Args[0] is written.
	Nav    *Navigation
	Target *EntitySet
}

// Op says what an [Expr] is.
type Op uint8

const (
	Property Op = iota // a column: Column, Key, Kind
	Literal            // a literal, null included: Value, Pico
	Call               // a function call: Name, Args
	Compare            // Args[0] Name Args[1]
	In                 // Args[0] in (Args[1:])
	And                // Args[0] and Args[1]
	Or                 // Args[0] or Args[1]
	Not                // not Args[0]
	Some               // some related row makes Args[0] true; with no Args, some related row at all
	Every              // every related row makes Args[0] true (OData's all)
)

// Type is the type of an [Expr]'s value: OData's primitive types.
type Type uint8

const (
	Null    Type = iota // the null literal
	Int                 // Edm.Int64
	Number              // Edm.Decimal
	Day                 // Edm.Date
	Instant             // Edm.DateTimeOffset
	String              // Edm.String
	Bool                // Edm.Boolean
)

// String returns the type's name in OData: "Edm.Int64", or "null".
func (t Type) String() string {
	return [...]string{"null", "Edm.Int64", "Edm.Decimal", "Edm.Date", "Edm.DateTimeOffset", "Edm.String", "Edm.Boolean"}[t]
}

// The functions a [Call] names, besides those of OData's $filter
// (contains, startswith, endswith, tolower, toupper, trim, length, concat,
// indexof, substring, year, month, day, hour, minute, second).
const (
	// Fold is the value with its case and the Latin letters' accents
	// taken off, as PostgreSQL's informe_fold writes it: the web page's
	// "contains, whatever the case and accents".
	Fold = "fold"
)

// Sort is one ordering item of a [Query], before the key: a property of
// the dataset's entity set (its name, the synthetic key's included), and
// its direction.
type Sort struct {
	Property string
	// Desc orders descending, nulls last; else ascending, nulls first.
	Desc bool
}

// Resume is the position, in a [Query]'s Sort, that the rows start after:
// the sort values of the row it names, as text (nil for null), one per
// Sort item, and its key, one integer per key part (0 for a NULL part).
type Resume struct {
	Values []*string
	Key    []int64
}
