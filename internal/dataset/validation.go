package dataset

// Validation asks [github.com/informe/informe/internal/postgres.Store.Open] for the entity tag of a query's rows (see
// [Query.Validate]): a value that is the same exactly when the response
// would be, derived from the data version of the tables the dataset's
// views read (postgres.Snapshot.DataVersion), read in the rows' own
// snapshot, the dataset, the whole query as compiled, and Representation.
type Validation struct {
	// Representation is what, besides the data and the query, decides
	// the bytes of the response: its format and options, its content
	// coding, informe's build.
	Representation string
	// Held are the opaque tags the client holds (If-None-Match's,
	// compared weakly: without their W/), Any says it sent "*": when the
	// rows' tag is one of them, or Any, Open reads nothing more and
	// returns a cursor whose [github.com/informe/informe/internal/postgres.Cursor.NotModified] is true.
	Held []string
	Any  bool
	// Head reads no rows, only the tag and, with [Query.Count], the count
	// (a HEAD request, OData's /$count): the tag is the one the rows
	// would have.
	Head bool
}
