// Package road is the one road from a door's parsed request to rows: it
// admits the read to the database ([Admission]: bounds, turns of big
// reads by token, the cores shared), decides once how the rows are read
// for the format they are written in (typed values for the typed
// formats, the API's text for the others), opens them over one snapshot,
// in parallel parts where the dataset can split them ([Open], [OpenPage]),
// and delivers them through the pipeline of package delivery (encoder,
// compressor, spool) to any writer: an HTTP response, a file, a scheduled
// delivery's destination ([Read.Deliver]).
//
// The HTTP edge (internal/api) and `informe export` with schedules'
// runs (internal/fileexport) all take it, so an export's rows, parts and
// bytes are the same whatever the door.
package road

import (
	"context"
	"fmt"
	"io"

	"github.com/informe/informe/export"
	"github.com/informe/informe/internal/dataset"
	"github.com/informe/informe/internal/delivery"
	"github.com/informe/informe/internal/postgres"
)

// Export is a read of rows as a door asked for it, to be written in
// Format.
type Export struct {
	// Dataset is what is read, as the token sees it, and Query the rows.
	Dataset *dataset.Dataset
	Query   dataset.Query
	// Format is what the rows are written in: it decides whether they
	// are read typed (see [Open]).
	Format export.Format
	// Parts says how many connections a whole export may be read
	// through.
	Parts postgres.Parts
}

// Read is a read opened: its rows counted and ready to be written.
type Read struct {
	format export.Format
	curs   []*postgres.Cursor
}

// Open opens the rows of a whole export e in store: with the columns'
// values typed exactly when e's format writes typed values (Parquet,
// Arrow), counted in the snapshot they are read from, through up to
// e.Parts connections. On failure nothing stays open.
func Open(ctx context.Context, store *postgres.Store, e Export) (*Read, error) {
	e.Query.Typed = e.Format.Typed()
	e.Parts.Places = e.Format.Places()
	curs, err := store.OpenParts(ctx, e.Dataset, e.Query, e.Parts)
	if err != nil {
		return nil, err
	}
	return &Read{format: e.Format, curs: curs}, nil
}

// OpenPage opens the rows of e.Query as they are (a page: its position,
// skip, limit and count) in store, through one connection, typed as
// [Open] reads them; a query that asks for no rows (a HEAD's, a
// count's) reads only its tag and count.
func OpenPage(ctx context.Context, store *postgres.Store, e Export) (*Read, error) {
	e.Query.Typed = e.Format.Typed()
	cur, err := store.Open(ctx, e.Dataset, e.Query)
	if err != nil {
		return nil, err
	}
	return &Read{format: e.Format, curs: []*postgres.Cursor{cur}}, nil
}

// Total returns the number of rows matching the read's conditions (the
// rows of a whole export), -1 when they were not counted or the client
// holds them already (see [Read.First]).
func (r *Read) Total() int64 { return r.curs[0].Total() }

// First returns the cursor of the read's first part, which carries the
// rows' entity tag ([postgres.Cursor.ETag], [postgres.Cursor.NotModified]).
func (r *Read) First() *postgres.Cursor { return r.curs[0] }

// Parts returns how many connections the rows are read through.
func (r *Read) Parts() int { return len(r.curs) }

// OnePart returns why the export was read through one connection
// (postgres.Unsplit's words), "" when it was read in parts.
func (r *Read) OnePart() string { return r.curs[0].OnePart() }

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

// Deliver writes the rows to dst as sp says, the first part's, then each
// later part's as it continues the body, through the delivery pipeline.
// sp's format must be the read's; its Binary is the read's (the values
// are typed exactly for the typed formats), and its Rows must be the
// rows the read delivers (XLSX declares them before the first row).
func (r *Read) Deliver(dst io.Writer, sp export.Spec, o Options) (delivery.Result, error) {
	if sp.Format != r.format {
		return delivery.Result{}, fmt.Errorf("road: rows read for %s delivered as %s", r.format, sp.Format)
	}
	sp.Options.Binary = r.format.Typed()
	var later *delivery.Parts
	if len(r.curs) > 1 {
		parts := make([]delivery.Part, len(r.curs)-1)
		for i, c := range r.curs[1:] {
			parts[i] = delivery.Part{Rows: c, Encoding: sp.Continuation(c.First())}
		}
		later = delivery.EncodeParts(parts, o.Parts, o.Stop)
	}
	return delivery.Deliver(dst, sp, o.Body, r.curs[0], later, o.Hooks)
}

// DeliverFeed writes the rows to dst as e encodes them, e being an
// encoding of the API's text other than the export formats' (OData's
// feed), through the delivery pipeline. The rows must have been read for
// a format that is not typed.
func (r *Read) DeliverFeed(dst io.Writer, e delivery.Encoding, o Options) (delivery.Result, error) {
	if r.format.Typed() || len(r.curs) > 1 {
		return delivery.Result{}, fmt.Errorf("road: rows read for %s in %d parts delivered as a feed", r.format, len(r.curs))
	}
	return delivery.Deliver(dst, e, o.Body, r.curs[0], nil, o.Hooks)
}

// Close closes every part's cursor, and returns the first error met:
// call it on every path.
func (r *Read) Close() error {
	var first error
	for _, c := range r.curs {
		if err := c.Close(); err != nil && first == nil {
			first = err
		}
	}
	return first
}
