package postgres

import (
	"context"
	"fmt"
	"strconv"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

type batchesKey struct{}

// WithBatches returns a copy of ctx under which [Snapshot.Query] reads
// its rows n at a time through a cursor, asking for the next n only once
// the last have been read: for a read that gives way to others (a token's
// burst, see package road). Read in one statement, a backend runs ahead
// of a reader that waits, into the connection's socket buffers (up to
// 4 MB on Linux), and spends the machine's cores on rows nobody reads
// yet; read through a cursor, it waits with its reader. The rows, their
// order and their format are those of the one statement. A cursor has
// no parallel workers, and each batch is a round trip: a read that does
// not wait for others is better read in one statement.
func WithBatches(ctx context.Context, n int) context.Context {
	return context.WithValue(ctx, batchesKey{}, n)
}

// cursorName is the name of the cursor a snapshot reads in batches; a
// snapshot runs one query for rows.
const cursorName = "informe_rows"

// rowSource is what [Rows] reads: pgx's rows of one statement, or
// [batches] of a cursor.
type rowSource interface {
	Next() bool
	RawValues() [][]byte
	FieldDescriptions() []pgconn.FieldDescription
	Err() error
	Close()
}

// batches are the rows of a cursor, fetched n at a time in a pipeline:
// the next batch is asked for as a batch's rows start to be read, so that
// the backend reads it while the reader encodes this one, and runs no
// further ahead.
type batches struct {
	p       *pgconn.Pipeline
	fetch   string  // "FETCH n FROM informe_rows"
	n       int64   // rows per batch
	formats []int16 // the results' formats, as pgx would ask for them
	fields  []pgconn.FieldDescription
	rr      *pgconn.ResultReader // the batch being read; nil between batches
	last    bool                 // the batch read last was the last
	err     error
}

// queryBatches declares sql, with args, as the snapshot's cursor and
// starts fetching its first n rows. The cursor is planned for all its
// rows (cursor_tuple_fraction 1), as the one statement would be.
func (s *Snapshot) queryBatches(sql string, args []any, n int) (*batches, error) {
	var setting string
	if err := s.conn.QueryRow(s.ctx, "SELECT set_config('cursor_tuple_fraction', '1', true)").Scan(&setting); err != nil {
		return nil, fmt.Errorf("cursor: %w", err)
	}
	if _, err := s.conn.Exec(s.ctx, "DECLARE "+cursorName+" NO SCROLL CURSOR FOR "+sql, args...); err != nil {
		return nil, fmt.Errorf("cursor: %w", err)
	}
	conn := s.conn.Conn().PgConn()
	b := &batches{fetch: "FETCH " + strconv.Itoa(n) + " FROM " + cursorName, n: int64(n)}
	// pgx asks for each column in the format its type map prefers when it
	// describes a statement first, and in text when it does not: so do the
	// batches, for the same values.
	switch s.conn.Conn().Config().DefaultQueryExecMode {
	case pgx.QueryExecModeExec, pgx.QueryExecModeSimpleProtocol:
	default:
		sd, err := conn.Prepare(s.ctx, "", b.fetch, nil)
		if err != nil {
			return nil, fmt.Errorf("cursor: %w", err)
		}
		tm := s.conn.Conn().TypeMap()
		for _, f := range sd.Fields {
			b.formats = append(b.formats, tm.FormatCodeForOID(f.DataTypeOID))
		}
	}
	b.p = conn.StartPipeline(s.ctx)
	b.ask()
	if !b.take() {
		b.Close()
		return nil, fmt.Errorf("cursor: %w", b.err)
	}
	b.fields = b.rr.FieldDescriptions()
	return b, nil
}

// ask asks for the next batch, each in a transaction step of its own
// (a sync), so that an error ends only what follows it.
func (b *batches) ask() {
	b.p.SendQueryParams(b.fetch, nil, nil, nil, b.formats)
	b.p.SendPipelineSync()
	if err := b.p.Flush(); err != nil && b.err == nil {
		b.err = err
	}
}

// take starts reading the batch asked for last, and asks for the next.
func (b *batches) take() bool {
	if b.err != nil {
		return false
	}
	res, err := b.p.GetResults()
	rr, ok := res.(*pgconn.ResultReader)
	switch {
	case err != nil:
		b.err = err
		return false
	case !ok:
		b.err = fmt.Errorf("a batch's results are %T", res)
		return false
	}
	b.rr = rr
	b.ask()
	return b.err == nil
}

func (b *batches) Next() bool {
	for b.err == nil {
		if b.rr == nil {
			if b.last || !b.take() {
				break
			}
		}
		if b.rr.NextRow() {
			return true
		}
		tag, err := b.rr.Close()
		b.rr = nil
		if err != nil {
			b.err = err
			break
		}
		b.last = tag.RowsAffected() < b.n
		if _, err := b.p.GetResults(); err != nil { // the batch's sync
			b.err = err
		}
	}
	b.Close()
	return false
}

func (b *batches) RawValues() [][]byte                          { return b.rr.Values() }
func (b *batches) FieldDescriptions() []pgconn.FieldDescription { return b.fields }
func (b *batches) Err() error                                   { return b.err }

// Close ends the pipeline, reading what the batch asked for last sends
// (nothing after the last batch). It is safe to call more than once.
func (b *batches) Close() {
	if b.rr != nil {
		_, _ = b.rr.Close()
		b.rr = nil
	}
	if err := b.p.Close(); err != nil && b.err == nil {
		b.err = err
	}
}
