package dataset

// EntitySet declares a dataset's OData entity set. It is plain data,
// checked by odata.NewEntitySet; the column list is the one that drives the SQL and the
// other encoders, so the OData view of a set never drifts from them.
//
// A general report definition looks like:
//
//	dataset.EntitySet{
//		Name: "GeneralReport", TypeName: "GeneralReportRow",
//		Columns: GeneralReport.Columns,
//		Key: "row_id", RowKey: []string{"contract_id", "process_id", "task_id"},
//		OrderBy: []string{"contract_id", "process_id"},
//		Filters: []string{"contract_id", "code_contract", "client_id", "client_rut"},
//		EmptyIsNull: true,
//	}
//
// and the users one:
//
//	dataset.EntitySet{
//		Name: "Users", TypeName: "User", Columns: Users.Columns,
//		Key: "id", OrderBy: []string{"id"},
//	}
type EntitySet struct {
	Name     string // the entity set, also its URL segment: "GeneralReport"
	TypeName string // its entity type, in odata.Namespace: "GeneralReportRow"

	// Columns are the properties, in order, with their kinds; in a
	// [Dataset]'s declaration, nil: the dataset's own ([Dataset.EntitySet]). Integer is
	// Edm.Int64, Decimal is Edm.Decimal (Scale="variable"), Date is
	// Edm.Date, Timestamp and Timestamptz are Edm.DateTimeOffset, anything
	// else is Edm.String.
	Columns []Column

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
	// messages. Each row given to odata's Feed.Encode carries them after the
	// Columns values, as base-10 text, nil or "" standing for 0. Empty when
	// Key is a column.
	RowKey []string

	// KeyColumns names the columns of the set's typed view that hold the
	// key's parts, in order: the view a [Query]'s conditions are written on,
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
	// restates it or a prefix of it is a plain request (odata's Query.Plain).
	// The rows must be in key order as well (the key refines OrderBy).
	OrderBy []string

	// Filters names the columns whose equalities (Integer and Text
	// columns only; an Integer one an id, at least 1) a store serves on
	// its own: see odata's Query.Filter. $filter compares every property.
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
	// the store's bound). For the report, costo_servicio (services_cost_idx).
	SortIndexed []string

	// Navigations relate the set to others (see [Navigation]): the
	// navigation properties of its entity type, which $expand follows.
	// Only a set whose key is a column has them.
	Navigations []Navigation

	// Typed names the typed view the set's conditions are written over
	// (see KeyColumns): where the lambda operators of a set with a
	// navigation to this one read its rows. In a [Dataset]'s declaration,
	// empty: the dataset's own ([Dataset.EntitySet]).
	Typed string
}

// Navigation relates an entity set to another: a NavigationProperty of its
// entity type, bound to the target set in the container. A to-one
// navigation follows a property of this set holding the target's key (a
// contract's client_id); a to-many one, a property of the target holding
// this set's key (a process's contract_id). Both sets' keys must be
// columns.
type Navigation struct {
	Name    string // the navigation property: "Client", "Processes"
	Target  string // the related entity set: "Clients"
	Many    bool   // a collection of the target's entities
	Partner string // the target's navigation property back: "Contracts"
	// Property is, to-one, this set's property holding the target's key
	// (the ReferentialConstraint's Property), or, to-many, the target's
	// property holding this set's key.
	Property string
	// Column is the integer column holding Property's value in both views
	// of the set that holds it (key_client_id): what odata's Expansion.Local and
	// Expansion.Remote join on.
	Column string
	// Optional says a to-one navigation may have no target (a contract
	// without service): the property is then null.
	Optional bool
	// Words name, for a collection, its rows on the web page, whose
	// conditions on related rows it heads: «Tareas: Estado».
	Words Phrase
}
