// Package export encodes rows of text values as JSON, NDJSON, CSV, XLSX,
// Parquet and Arrow.
//
// Encoders are shaped like encoding/csv.Writer: they buffer writes to an
// io.Writer, keep the first error they meet, and report it from Encode and
// Close. [NewEncoder] picks one by [Format]; [Negotiate] and [ParseFormat]
// choose the format from a request. A row is a [][]byte holding one value per [dataset.Column], in column order,
// already rendered as text in the API's formats; a nil value is SQL NULL.
// The package knows neither HTTP nor the database.
package export
