// Package dataset is informe's one read model, and what every layer shares
// about the data. A [Dataset] declares a table informe serves: its columns
// ([Column], [Kind]) with their words in Spanish and English, the views it
// is read from, its key, its paths and parameters, its OData entity set.
// Each is declared in a file of its own (general_report.go, users.go,
// contracts.go, ...) and listed in [All], which the routes, the OData
// model, the OpenAPI document, the catalog and the export command iterate. A [Query]
// asks for rows of one dataset, whichever door it came through (the spec's
// JSON page, an export in any format, the OData feed, the export command,
// the web page): the conditions, the order, the columns, the position, the
// rows to skip and to read, and whether to count, all typed ([Expr],
// [Sort], [Resume]). The package holds no SQL: package postgres writes
// the query's ([github.com/informe/informe/internal/postgres.Store.Open])
// and reads its rows in one snapshot.
//
// Each door parses its own syntax into a Query (package report the spec's
// parameters, package odata the $-options) and nothing else: no door has a
// selection type of its own.
package dataset

// Dataset declares a table that informe serves: everything every layer
// knows of it, as plain data. Each is declared in a file of its own in
// this package and listed in [All]; the column list drives the SQL select
// list, every encoder, the OData types, the OpenAPI schemas and the
// catalog.
type Dataset struct {
	// Name names the dataset in paths, files and sheets: "general-report".
	Name string
	// Scope is what a token needs to read it.
	Scope Scope
	// Columns are the fields of a row, in order, with their kinds.
	Columns []Column
	// Text is the view that renders every column as text in the API's
	// formats (general_report); Typed is the view of the same rows with
	// typed values under the columns' names (general_report_typed), on
	// which conditions and orders are written: Text's name and "_typed"
	// when not declared.
	Text, Typed string
	// Keys are the key columns both views share, in the order of the rows:
	// the row's identity and its last order. The first is never NULL.
	// A dataset with a KeyColumn has one, "key_" and its name, when not
	// declared.
	Keys []string
	// KeyColumn names the column that holds the key when it is one of
	// Columns (users: id): a row's position then carries no key parts.
	// Its OData entity set is then keyed and ordered by it, unless
	// declared otherwise.
	KeyColumn string
	// Plain, when set, reads the queries of the dataset's own order that
	// are filtered by nothing but equalities ([Query.Plain]) its own way,
	// faster than through the typed view; nil reads every query through it.
	Plain *ReportReading
	// KeyTable, when set, finds the keys of the pages in the dataset's own
	// order whose conditions are all on its columns ([github.com/informe/informe/internal/postgres.On]) in a
	// table of their own; nil finds every page's keys through the typed
	// view.
	KeyTable *KeyTable

	// Title names the dataset for people choosing what to export, and
	// Row says what one row is (and, where a value repeats over rows, that
	// a sum of it counts it again on each): the web page's words.
	Title, Row Phrase
	// File starts the names of the files the web page saves of it, in
	// each language: "contratos", "contracts".
	File Phrase
	// Page is its name on the web page when that is not Name ("report").
	Page string
	// Heading names it in docs/columns.md: "General report".
	Heading string
	// Spec says the API spec defines its paths (the general report, the
	// users); the others are informe's own.
	Spec bool
	// One is what a row is, in English: "contract" (docs and OpenAPI).
	One string
	// About describes a row in English, for OpenAPI.
	About string
	// PagePath is the spec's paged path of the dataset, "" for none; ExportPath
	// the path of a whole export of it (for the users, the spec's own
	// GET /users), "/api/" and its Name and "/export" when not declared.
	PagePath, ExportPath string
	// Params are the spec's own query parameters of a whole export, in
	// the order an error lists them, "columns" alone when not declared;
	// PageParams those of a page of PagePath.
	Params, PageParams []string
	// Small says a whole export of it is small (the users).
	Small bool
	// OData is its OData entity set (Columns left nil: see
	// [Dataset.EntitySet]).
	OData EntitySet

	position int // in All: see declare
}

// EntitySet returns d's OData entity set with its columns.
func (d *Dataset) EntitySet() EntitySet {
	s := d.OData
	s.Columns, s.Typed = d.Columns, d.Typed
	return s
}

// Path returns the path people read d at: its paged path, else its
// export's.
func (d *Dataset) Path() string {
	if d.PagePath != "" {
		return d.PagePath
	}
	return d.ExportPath
}

// Eq is an equality on a column that both views of a dataset hold under one
// name, such as general_report's key_client_rut: the spec's filters.
type Eq struct {
	Column string
	Value  any
}

// Query asks for rows of a [Dataset]. The zero Query reads every row, all
// columns, in the dataset's order, uncounted. Its conditions are typed:
// equalities ([Query.Equal]), a request by key, and expressions
// ([Expr]); the store writes them as SQL when it opens the query.
type Query struct {
	// Columns are the fields to read, in order; nil reads all of them.
	Columns []Column
	// Filters are conditions on the rows, each an [Expr] of type Bool:
	// a row is read where all are true.
	Filters []*Expr
	// ByKey, when set, reads the one row with that key (OData's
	// /Set(key)), one integer per key part.
	ByKey []int64
	// Sort orders the rows before the key; nil keeps the key's order.
	Sort []Sort
	// Skip passes over that many rows, in order, after the position.
	Skip int64
	// Limit is the most rows to read; negative reads them all.
	Limit int64
	// Count counts the rows matching the conditions, without the position,
	// Skip and Limit: [github.com/informe/informe/internal/postgres.Cursor.Total].
	Count bool
	// Expand are the related rows each row carries after its columns,
	// before its position, one value per item: OData's $expand. A query
	// with any is read through the typed view, never [Dataset.Plain].
	Expand []Expansion
	// Carried, when set, is told as rows are read whose personal values
	// each row carried (the persons of its personal columns among
	// Columns). The cursors of [github.com/informe/informe/internal/postgres.Store.OpenParts] all tell it, and may be
	// read at once: it must be safe for concurrent use.
	Carried Carrier
	// Typed makes [github.com/informe/informe/internal/postgres.Cursor.Values] hold the columns' values typed, in the
	// binary form the typed formats take with export.Options.Binary
	// (export.Format.Typed; see [Row.Typed]), rather than as the
	// API's text.
	Typed bool
	// Position makes each row carry, after its columns and Expand, its
	// key's parts as text (0 for a NULL part; none when the key is a
	// column, [Dataset.KeyColumn]) and its Sort values as text: a date as 2006-01-02, a date-time as
	// 2006-01-02T15:04:05.000000 (with Z when it has an offset), a number
	// in base 10, what a [Resume] takes back.
	Position bool
	// Key, with no Sort, is the key the rows start after (a keyset
	// position), one integer per key part, 0 for a NULL part; nil for
	// none. Resume is the position the rows start after, with a Sort or
	// not (with none, its Values are empty and its Key is Key).
	Key    []int64
	Resume *Resume
	// Validate, when set, makes [github.com/informe/informe/internal/postgres.Store.Open] and [github.com/informe/informe/internal/postgres.Store.OpenParts] tag
	// the rows with an entity tag before anything else is read, and stop
	// there when the client holds it ([github.com/informe/informe/internal/postgres.Cursor.NotModified]).
	Validate *Validation

	eq []Eq
}

// Expansion is an item of OData's $expand: the rows of Target related to
// a row, which the row carries as one value, an array of arrays of the
// text of Columns, in the order of Target's key column Order; NULL for
// none. A row's Local column relates it to the rows of Target whose
// Remote column holds the same value (both integer columns that indexes
// serve).
type Expansion struct {
	Target        *Dataset
	Columns       []Column
	Local, Remote string
	Order         string
}

// Reads returns the views q's expansions read, beyond its dataset's
// own: their data is part of the rows' too (see [Validation]).
func (q *Query) Reads() []string {
	var views []string
	for _, x := range q.Expand {
		views = append(views, x.Target.Text)
	}
	return views
}

// Whole returns the query for every row of the dataset, in its order: what a
// whole export without filters reads.
func Whole() Query { return Query{Limit: -1} }

// Equal adds the condition that column, which both views hold, equals v
// (an int64 or a string): a filter the dataset's plain reading serves.
func (q *Query) Equal(column string, v any) {
	q.eq = append(q.eq, Eq{Column: column, Value: v})
}

// Equalities returns the equalities of [Query.Equal].
func (q *Query) Equalities() []Eq { return q.eq }

// Filtered reports whether any condition narrows the rows.
func (q *Query) Filtered() bool { return len(q.eq) > 0 || !q.FilterPlain() }

// Plain reports whether q asks for rows in the dataset's own order,
// filtered by nothing but equalities: what [Dataset.Plain] reads.
func (q *Query) Plain() bool { return q.FilterPlain() && len(q.Sort) == 0 && len(q.Expand) == 0 }

// FilterPlain reports whether q's conditions are nothing but equalities,
// whatever its order: what a [ReportReading] counts.
func (q *Query) FilterPlain() bool { return len(q.Filters) == 0 && q.ByKey == nil }
