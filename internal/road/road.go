// Package road is the one way from a door's parsed request for a whole
// export to its bytes: it decides once how the rows are read for the
// format they are written in (typed values for the typed formats, the
// API's text for the others), opens them over one snapshot, in parallel
// parts where the dataset can split them, and delivers them through the
// pipeline of package delivery (encoder, compressor, spool) to any
// writer: an HTTP response, a file, a scheduled delivery's destination.
//
// The HTTP edge (internal/api) and `informe export` with schedules'
// runs (internal/fileexport) both take it, so an export's rows, parts
// and bytes are the same whatever the door.
package road

import (
	"context"
	"io"

	"github.com/informe/informe/export"
	"github.com/informe/informe/internal/dataset"
	"github.com/informe/informe/internal/delivery"
)

// Export is a whole export as a door asked for it.
type Export struct {
	// Dataset is what is read, as the token sees it, and Query the rows.
	Dataset *dataset.Dataset
	Query   dataset.Query
	// Spec is how the rows are written: the format, the columns (under
	// the door's labels) and the format's options. Its Rows and Binary
	// are the road's: see [Open].
	Spec export.Spec
	// Parts says how many connections the rows may be read through.
	Parts dataset.Parts
}

// Read is an export opened: its rows counted and ready to be written.
type Read struct {
	spec  export.Spec
	curs  []*dataset.Cursor
	total int64
}

// Open opens e's rows in store: with the columns' values typed exactly
// when e's format writes typed values (Parquet, Arrow), counted in the
// snapshot they are read from, through up to e.Parts connections. The
// spec of the [Read] declares that count (XLSX writes it before the first
// row) and the typed values. On failure nothing stays open.
func Open(ctx context.Context, store *dataset.Store, e Export) (*Read, error) {
	typed := e.Spec.Format.Typed()
	e.Query.Typed = typed
	curs, err := store.OpenParts(ctx, e.Dataset, e.Query, e.Parts)
	if err != nil {
		return nil, err
	}
	r := &Read{spec: e.Spec, curs: curs, total: curs[0].Total()}
	r.spec.Options.Rows, r.spec.Options.Binary = r.total, typed
	return r, nil
}

// Typed sets whether q reads its columns' values typed, as [Open] would
// for format f: for a read that only validates or counts (a HEAD), whose
// entity tag must be the tag of the rows it stands for.
func Typed(q *dataset.Query, f export.Format) { q.Typed = f.Typed() }

// Total returns the number of rows the export carries, -1 when the
// client holds them already ([dataset.Cursor.NotModified] of [Read.First]).
func (r *Read) Total() int64 { return r.total }

// First returns the cursor of the export's first part, which carries the
// rows' entity tag ([dataset.Cursor.ETag], [dataset.Cursor.NotModified]).
func (r *Read) First() *dataset.Cursor { return r.curs[0] }

// Parts returns how many connections the rows are read through.
func (r *Read) Parts() int { return len(r.curs) }

// Spec returns how the rows are written.
func (r *Read) Spec() export.Spec { return r.spec }

// Options say how [Read.Deliver] delivers.
type Options struct {
	// Body are the options of the body's pipeline (content coding,
	// spool); Parts those of each later part, which runs ahead of the
	// body into a spool of its own so that every part reads at once.
	Body, Parts delivery.Options
	// Stop stops every part: it cancels the context the parts' queries
	// run under, so that a failing part ends the others.
	Stop func(error)
	// Hooks are told of the body's progress (see [delivery.Hooks]).
	Hooks delivery.Hooks
}

// Deliver writes the rows to dst, the first part's, then each later
// part's as it continues the body, through the delivery pipeline.
func (r *Read) Deliver(dst io.Writer, o Options) (delivery.Result, error) {
	var later *delivery.Parts
	if len(r.curs) > 1 {
		parts := make([]delivery.Part, len(r.curs)-1)
		for i, c := range r.curs[1:] {
			parts[i] = delivery.Part{Rows: c, Encoding: r.spec.Continuation(c.First())}
		}
		later = delivery.EncodeParts(parts, o.Parts, o.Stop)
	}
	return delivery.Deliver(dst, r.spec, o.Body, r.curs[0], later, o.Hooks)
}

// Close closes every part's cursor: call it on every path.
func (r *Read) Close() {
	for _, c := range r.curs {
		c.Close()
	}
}
