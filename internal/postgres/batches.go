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

// batchesOf returns the rows a batch of ctx's reads holds, 0 when they
// are read in one statement.
func batchesOf(ctx context.Context) int {
	n, _ := ctx.Value(batchesKey{}).(int)
	return max(n, 0)
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

// batches are the rows of a cursor, fetched n at a time.
type batches struct {
	conn    *pgconn.PgConn
	ctx     context.Context
	fetch   string  // "FETCH n FROM informe_rows"
	n       int64   // rows per batch
	formats []int16 // the results' formats, as pgx would ask for them
	fields  []pgconn.FieldDescription
	rr      *pgconn.ResultReader // the batch being read; nil between batches
	last    bool                 // the batch being read is the last
	err     error
}

// queryBatches declares sql, with args, as the snapshot's cursor and
// starts fetching its first n rows. The cursor is planned for all its
// rows, as the one statement would be: [begin] set cursor_tuple_fraction
// to 1 for the snapshots of a ctx with batches.
func (s *Snapshot) queryBatches(sql string, args []any, n int) (*batches, error) {
	if _, err := s.conn.Exec(s.ctx, "DECLARE "+cursorName+" NO SCROLL CURSOR FOR "+sql, args...); err != nil {
		return nil, fmt.Errorf("cursor: %w", err)
	}
	b := &batches{
		conn:  s.conn.Conn().PgConn(),
		ctx:   s.ctx,
		fetch: "FETCH " + strconv.Itoa(n) + " FROM " + cursorName,
		n:     int64(n),
	}
	// pgx asks for each column in the format its type map prefers when it
	// describes a statement first, and in text when it does not: so do the
	// batches, for the same values.
	switch s.conn.Conn().Config().DefaultQueryExecMode {
	case pgx.QueryExecModeExec, pgx.QueryExecModeSimpleProtocol:
	default:
		sd, err := b.conn.Prepare(s.ctx, "", b.fetch, nil)
		if err != nil {
			return nil, fmt.Errorf("cursor: %w", err)
		}
		tm := s.conn.Conn().TypeMap()
		for _, f := range sd.Fields {
			b.formats = append(b.formats, tm.FormatCodeForOID(f.DataTypeOID))
		}
	}
	b.rr = b.conn.ExecParams(s.ctx, b.fetch, nil, nil, nil, b.formats)
	b.fields = b.rr.FieldDescriptions()
	return b, nil
}

func (b *batches) Next() bool {
	for b.err == nil {
		if b.rr == nil {
			if b.last {
				return false
			}
			b.rr = b.conn.ExecParams(b.ctx, b.fetch, nil, nil, nil, b.formats)
		}
		if b.rr.NextRow() {
			return true
		}
		tag, err := b.rr.Close()
		b.rr = nil
		b.err = err
		b.last = tag.RowsAffected() < b.n
	}
	return false
}

func (b *batches) RawValues() [][]byte                          { return b.rr.Values() }
func (b *batches) FieldDescriptions() []pgconn.FieldDescription { return b.fields }
func (b *batches) Err() error                                   { return b.err }

func (b *batches) Close() {
	if b.rr != nil {
		_, err := b.rr.Close()
		b.rr = nil
		if b.err == nil {
			b.err = err
		}
	}
}
