package dataset

// KeyTable declares a table of the dataset's keys beside some of its
// columns' typed values, indexed so that the keys of a page filtered on
// those columns come in the dataset's order from an index, kept exact by
// the database (for the general report, report_task_keys and the triggers
// of migration 00011). A page whose conditions are all on its columns
// ([github.com/informe/informe/internal/postgres.On]) finds its keys there, then reads the rows of those keys
// alone; any other page is read through the typed view.
//
// Its rows are the dataset's rows for which each of Columns can be
// non-NULL: a condition on one of them (every [github.com/informe/informe/internal/postgres.On] condition
// is false or NULL where its column is NULL) holds on no row it lacks.
type KeyTable struct {
	// Table names the table.
	Table string
	// Keys are its columns holding the key's parts, in the order of the
	// dataset's Keys; none of them is NULL.
	Keys []string
	// Columns maps a column of the typed view to the table's column that
	// holds the same value for the same row.
	Columns map[string]string
	// Days are the columns of Columns that hold dates: a range of at most
	// two months on one of them is read day by day.
	Days []string
}

// ReportReading is the general report's own reading of its plain queries
// (its own order, the spec's equalities: [Query.Plain]) from the
// general_report_typed view: with Maintained, through the row counts that
// informe's triggers keep (report_contract_rows, report_bucket_rows), so
// that an unfiltered page costs the same at page 1 and at the last page,
// and a whole export splits into parts of about the same rows; without,
// by counting and skipping the view's rows (package report chooses, by
// report.Counting).
type ReportReading struct{ Maintained bool }
