package postgres

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/informe/informe/internal/failure"
)

// Snapshot is one REPEATABLE READ, READ ONLY transaction: everything read
// through it (a count and the rows it describes) comes from the same
// snapshot. It holds a pool connection until [Snapshot.Close].
type Snapshot struct {
	conn *pgxpool.Conn
	ctx  context.Context
	open bool // until Close
}

type (
	acquireTimeoutKey   struct{}
	statementTimeoutKey struct{}
)

// WithStatementTimeout returns a copy of ctx under which the snapshots
// [Begin] starts bound each of their statements to d, with SET LOCAL
// statement_timeout (PostgreSQL's error 57014 past it): a transaction-level
// setting, so that it works through PgBouncer in transaction pooling,
// which refuses it as a startup parameter.
func WithStatementTimeout(ctx context.Context, d time.Duration) context.Context {
	return context.WithValue(ctx, statementTimeoutKey{}, d)
}

// WithAcquireTimeout returns a copy of ctx under which [Begin] waits at
// most d for a free pool connection before it gives up with failure.Busy.
// The request's own deadline, if any, still bounds everything.
func WithAcquireTimeout(ctx context.Context, d time.Duration) context.Context {
	return context.WithValue(ctx, acquireTimeoutKey{}, d)
}

// ErrBusy is the failure.Busy cause of [Begin] when no connection came free
// within the acquire timeout.
var ErrBusy = errors.New("no database connection came free in time")

// BusyMessage is the client's message of a failure.Busy wrapping [ErrBusy].
const BusyMessage = "Service Unavailable: every database connection is busy; try again shortly"

// Begin starts a [Snapshot] on a connection from pool, waiting for one at
// most as long as [WithAcquireTimeout] set on ctx (failure.Busy past it).
// The snapshot's queries run under ctx: cancelling it cancels them.
// Connection failures come back as failure.Unavailable.
func Begin(ctx context.Context, pool *pgxpool.Pool) (*Snapshot, error) {
	return begin(ctx, pool, "", nil)
}

// BeginWith is [Begin] that runs pre, unless already run, in the round
// trip that begins the snapshot. pre's Done hears of it whatever happens
// once the connection is acquired; when Begin fails before, call
// [Prelude.Abandon].
func BeginWith(ctx context.Context, pool *pgxpool.Pool, pre *Prelude) (*Snapshot, error) {
	return begin(ctx, pool, "", pre)
}

// BeginAt is [Begin] in the snapshot that another transaction exported
// ([Snapshot.Export]), which must still be open: SET TRANSACTION
// SNAPSHOT, before any other statement of the transaction.
func BeginAt(ctx context.Context, pool *pgxpool.Pool, id string) (*Snapshot, error) {
	return begin(ctx, pool, id, nil)
}

// Export makes the snapshot importable by [BeginAt] on other connections
// (pg_export_snapshot) and returns its id, valid while s is open. On
// failure, the transaction is aborted: close s.
func (s *Snapshot) Export() (string, error) {
	var id string
	if err := s.QueryRow("SELECT pg_export_snapshot()", nil, &id); err != nil {
		return "", fmt.Errorf("export snapshot: %w", err)
	}
	return id, nil
}

// Acquiring runs f, which waits for a connection of pool, under ctx
// bounded by d (no bound when d is not positive). When the bound passes
// first, with ctx still live, f's error becomes failure.Busy ([ErrBusy],
// [BusyMessage]) if the database answers a connection of its own (informe
// is at capacity, not failing), or failure.Unavailable ([ErrUnreachable],
// [UnreachableMessage]) if it does not (a silent database is not a busy
// one). Any other error of f's is returned as it is.
func Acquiring(ctx context.Context, pool *pgxpool.Pool, d time.Duration, f func(context.Context) error) error {
	if d <= 0 {
		return f(ctx)
	}
	actx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	err := f(actx)
	if err != nil && ctx.Err() == nil && actx.Err() != nil {
		return waited(ctx, pool)
	}
	return err
}

func begin(ctx context.Context, pool *pgxpool.Pool, id string, pre *Prelude) (*Snapshot, error) {
	d, _ := ctx.Value(acquireTimeoutKey{}).(time.Duration)
	var conn *pgxpool.Conn
	err := Acquiring(ctx, pool, d, func(actx context.Context) (err error) {
		conn, err = pool.Acquire(actx)
		return err
	})
	if errors.Is(err, ErrBusy) || errors.Is(err, ErrUnreachable) {
		return nil, err
	}
	if err != nil {
		return nil, ClassifyIn(ctx, fmt.Errorf("acquire: %w", err))
	}
	// Transaction-level settings (set_config's is_local), which PgBouncer
	// in transaction pooling passes through. JIT compiling the report's
	// expressions costs a whole export more backend CPU than it saves, and
	// informe's pages are too short for it: off for informe's transactions
	// only.
	sets := []string{"set_config('jit', 'off', true)"}
	var args [][]byte
	if d, ok := ctx.Value(statementTimeoutKey{}).(time.Duration); ok && d > 0 {
		args = append(args, strconv.AppendInt(nil, max(d.Milliseconds(), 1), 10))
		sets = append(sets, "set_config('statement_timeout', $1, true)")
	}
	if batchesOf(ctx) > 0 {
		// A cursor (see [WithBatches]) is planned for all its rows, as
		// the one statement it stands for is.
		sets = append(sets, "set_config('cursor_tuple_fraction', '1', true)")
	}
	if checksClient(conn.Conn().PgConn()) {
		// A backend whose client closed the connection (see CancelClose)
		// ends within a second even while it sends nothing.
		sets = append(sets, "set_config('client_connection_check_interval', '1000', true)")
	}
	stmts := []string{"BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY"}
	if id != "" {
		// An identifier, not a value: SET takes no parameters. Only ids
		// from pg_export_snapshot get here.
		stmts = append(stmts, "SET TRANSACTION SNAPSHOT "+quoteLiteral(id))
	}
	stmts = append(stmts, "SELECT "+strings.Join(sets, ", "))
	if pre != nil && pre.ran {
		pre = nil
	}
	var stmt string
	if pre != nil && conn.Conn().Config().DefaultQueryExecMode == pgx.QueryExecModeCacheStatement {
		// Prepared once per connection, the prelude is not parsed and
		// planned again at each read; where pgx prepares nothing (through
		// a PgBouncer that keeps no prepared statements, say), it is sent
		// unnamed, as the other queries are.
		stmt = pre.name()
		if _, err := conn.Conn().Prepare(ctx, stmt, pre.SQL); err != nil {
			conn.Release()
			pre.ran = true
			pre.Done(nil, err)
			return nil, ClassifyIn(ctx, fmt.Errorf("begin: %w", err))
		}
	}
	if err := pipeline(ctx, conn.Conn().PgConn(), pre, stmt, stmts, args); err != nil {
		// A transaction the failure left open (a setting refused) is
		// ended, so the connection can serve again; one still not idle
		// (broken) is closed by pgxpool on release.
		if st := conn.Conn().PgConn().TxStatus(); st == 'T' || st == 'E' {
			_, _ = conn.Exec(context.WithoutCancel(ctx), "ROLLBACK")
		}
		conn.Release()
		return nil, ClassifyIn(ctx, fmt.Errorf("begin: %w", err))
	}
	return &Snapshot{conn: conn, ctx: ctx, open: true}, nil
}

// pipeline runs, in one round trip, pre in a transaction of its own (when
// not nil), then stmts, the last with args, in the transaction the first
// begins. pre.Done hears of pre's outcome; the error returned is stmts'.
func pipeline(ctx context.Context, c *pgconn.PgConn, pre *Prelude, stmt string, stmts []string, args [][]byte) error {
	p := c.StartPipeline(ctx)
	if pre != nil {
		pre.ran = true
		if stmt != "" {
			p.SendQueryPrepared(stmt, pre.Args, nil, nil)
		} else {
			p.SendQueryParams(pre.SQL, pre.Args, nil, nil, nil)
		}
		p.SendPipelineSync()
	}
	for i, st := range stmts {
		if i == len(stmts)-1 {
			p.SendQueryParams(st, args, nil, nil, nil)
		} else {
			p.SendQueryParams(st, nil, nil, nil, nil)
		}
	}
	p.SendPipelineSync()
	var (
		value     []byte
		preErr    error
		err       error
		inPrelude = pre != nil
	)
	fail := func(e error) {
		if inPrelude {
			preErr = cmp.Or(preErr, e)
		} else {
			err = cmp.Or(err, e)
		}
	}
	if ferr := p.Flush(); ferr != nil {
		fail(ferr)
	} else {
		for {
			res, rerr := p.GetResults()
			if rerr != nil {
				fail(rerr)
				var pe *pgconn.PgError
				if !errors.As(rerr, &pe) { // the connection is gone
					break
				}
				continue
			}
			if res == nil {
				break
			}
			switch r := res.(type) {
			case *pgconn.ResultReader:
				for r.NextRow() {
					if inPrelude && value == nil && len(r.Values()) > 0 {
						value = bytes.Clone(r.Values()[0])
					}
				}
				if _, cerr := r.Close(); cerr != nil {
					fail(cerr)
				}
			case *pgconn.PipelineSync:
				inPrelude = false
			}
		}
	}
	if cerr := p.Close(); cerr != nil && preErr == nil && err == nil {
		err = cerr
	}
	if pre != nil {
		if preErr == nil && err != nil && value == nil {
			// The round trip failed before the prelude's answer came.
			preErr = err
		}
		pre.Done(value, preErr)
	}
	return err
}

// Prelude is a statement run on a snapshot's connection just before the
// snapshot begins, in the same round trip, in a transaction of its own
// that commits first: a write that must be in the database before the
// read it comes with (the audit's record of the read), at the cost of no
// round trip of its own. Its parameters are sent as text, nil for NULL.
type Prelude struct {
	SQL  string
	Args [][]byte
	// Done hears, exactly once, of the prelude's outcome: the first
	// column of its first row as text, or the error that ended it, or
	// [ErrPreludeNotRun] from [Prelude.Abandon].
	Done func(value []byte, err error)
	ran  bool
}

// name returns the name p's statement is prepared under.
func (p *Prelude) name() string {
	sum := sha256.Sum256([]byte(p.SQL))
	return "informe_prelude_" + hex.EncodeToString(sum[:8])
}

// ErrPreludeNotRun is what a [Prelude]'s Done hears when no snapshot ran
// it.
var ErrPreludeNotRun = errors.New("the prelude was not run")

// Abandon tells p's Done, if no snapshot ran p, that none will: for the
// reader of a read that ended before it began a snapshot. It is safe to
// call on nil and more than once.
func (p *Prelude) Abandon() {
	if p == nil || p.ran {
		return
	}
	p.ran = true
	p.Done(nil, ErrPreludeNotRun)
}

// checksClient reports whether the server has client_connection_check_interval
// (PostgreSQL 14 and later).
func checksClient(c *pgconn.PgConn) bool { return serverMajor(c) >= 14 }

// serverMajor returns the major version of the server of c, from the
// version it reported at connection ("15.8 (Debian 15.8-0+deb12u1)"); 0
// when it cannot be read.
func serverMajor(c *pgconn.PgConn) int {
	v := c.ParameterStatus("server_version")
	major, _ := strconv.Atoi(v[:strings.IndexFunc(v+".", func(r rune) bool { return r < '0' || r > '9' })])
	return major
}

// QueryRow runs sql, which returns one row, and scans it into dest.
func (s *Snapshot) QueryRow(sql string, args []any, dest ...any) error {
	if err := s.conn.QueryRow(s.ctx, sql, args...).Scan(dest...); err != nil {
		return ClassifyIn(s.ctx, err)
	}
	return nil
}

// Query runs sql and returns a [Rows] over its rows that closes the
// snapshot when it is closed: in one statement, or in batches through a
// cursor under [WithBatches].
func (s *Snapshot) Query(sql string, args []any) (*Rows, error) {
	var rows rowSource
	var err error
	if n := batchesOf(s.ctx); n > 0 {
		rows, err = s.queryBatches(sql, args, n)
	} else {
		rows, err = s.conn.Query(s.ctx, sql, args...)
	}
	if err != nil {
		return nil, ClassifyIn(s.ctx, fmt.Errorf("query: %w", err))
	}
	return &Rows{snap: s, rows: rows}, nil
}

// Serial plans the transaction's later statements without parallel
// workers (max_parallel_workers_per_gather 0, for this transaction only).
// A reader that is itself one of several reading at once, or that stops
// reading after a few rows in an order an index gives, gains nothing from
// workers: each would read its own share of the order, which a Gather
// Merge waits for and copies through shared memory.
func (s *Snapshot) Serial() error {
	var setting string
	if err := s.QueryRow("SELECT set_config('max_parallel_workers_per_gather', '0', true)", nil, &setting); err != nil {
		return fmt.Errorf("parallel workers: %w", err)
	}
	return nil
}

// Empty returns a [Rows] with no rows that closes the snapshot when it is
// closed: for a page past the last row.
func (s *Snapshot) Empty() *Rows { return &Rows{snap: s} }

// Close ends the transaction and returns its connection to the pool. It is
// safe to call more than once.
func (s *Snapshot) Close() error {
	if !s.open {
		return nil
	}
	s.open = false
	// Nothing was written: a rollback ends a read-only transaction as well
	// as a commit, and still works after the request's context is gone. A
	// connection that is not idle after it (broken, or cut mid-answer) is
	// closed by pgxpool rather than reused.
	var err error
	if !s.conn.Conn().PgConn().IsClosed() {
		_, err = s.conn.Exec(context.WithoutCancel(s.ctx), "ROLLBACK")
	}
	s.conn.Release()
	if err != nil {
		return Classify(fmt.Errorf("rollback: %w", err))
	}
	return nil
}

// Rows iterates over the rows of a query run in a [Snapshot], the way
// pgx.Rows does: call Next until it returns false, read each row with
// Values, then check Err. Close releases the rows, ends the snapshot and
// returns its connection to the pool; it must be called on every path.
type Rows struct {
	snap *Snapshot
	rows rowSource
	err  error
}

// Next advances to the next row, reporting whether there is one. It
// returns false at the end and after an error (see [Rows.Err]).
func (c *Rows) Next() bool {
	if c.rows == nil || c.err != nil {
		return false
	}
	if c.rows.Next() {
		return true
	}
	if err := c.rows.Err(); err != nil {
		c.err = ClassifyIn(c.snap.ctx, fmt.Errorf("rows: %w", err))
	}
	c.rows.Close()
	c.rows = nil
	return false
}

// Values returns the current row's raw values, one per selected column: the
// bytes PostgreSQL sent, in the format [Rows.Fields] says (text columns
// arrive as UTF-8 in either), nil for NULL. They are only valid until the
// next call to Next.
func (c *Rows) Values() [][]byte { return c.rows.RawValues() }

// Fields describes the result's columns: their types and whether their
// values come in PostgreSQL's binary or text format. It is nil for a
// cursor with no rows to read ([Snapshot.Empty]).
func (c *Rows) Fields() []pgconn.FieldDescription {
	if c.rows == nil {
		return nil
	}
	return c.rows.FieldDescriptions()
}

// Err returns the error, if any, that ended the iteration. Connection
// failures are failure.Unavailable.
func (c *Rows) Err() error { return c.err }

// Close releases the rows and the snapshot's connection. It returns the
// first error met by the iteration or by ending the snapshot, and is safe
// to call more than once.
func (c *Rows) Close() error {
	if c.rows != nil {
		c.rows.Close()
		if err := c.rows.Err(); err != nil && c.err == nil {
			c.err = ClassifyIn(c.snap.ctx, fmt.Errorf("rows: %w", err))
		}
		c.rows = nil
	}
	if err := c.snap.Close(); err != nil && c.err == nil {
		c.err = err
	}
	return c.err
}

// Classify turns errors that mean "the database cannot be reached or is not
// accepting work now" into failure.Unavailable, keeping the cause. Other
// errors are returned unchanged. Use [ClassifyIn] for the errors of work
// run under a context that may have been cancelled.
func Classify(err error) error {
	return ClassifyIn(context.Background(), err)
}

// ClassifyIn is [Classify] for an error of work run under ctx: when ctx was
// cancelled, whatever PostgreSQL or the driver said (57014, a closed
// connection) is the cancel's doing, and [failure.Classify] says why ctx
// was cancelled.
func ClassifyIn(ctx context.Context, err error) error {
	if err == nil || failure.CodeOf(err) != failure.Internal {
		return err
	}
	if ctx.Err() != nil {
		return failure.Classify(ctx, err)
	}
	if errors.Is(err, context.Canceled) {
		return err
	}
	var connectErr *pgconn.ConnectError
	var netErr net.Error
	var pgErr *pgconn.PgError
	switch {
	case errors.As(err, &connectErr), errors.As(err, &netErr),
		errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		// A connection that ends mid-answer (a backend killed) reads as an
		// unexpected EOF.
		return failure.Wrap(failure.Unavailable, err, "Service Unavailable: the database cannot be reached")
	case errors.As(err, &pgErr):
		// Class 08 is connection exception; 57P01-57P03 are shutdowns and
		// "cannot connect now"; 53300 is too many connections.
		switch {
		case strings.HasPrefix(pgErr.Code, "08"),
			pgErr.Code == "57P01", pgErr.Code == "57P02", pgErr.Code == "57P03", pgErr.Code == "53300":
			return failure.Wrap(failure.Unavailable, err, "Service Unavailable: the database cannot be reached")
		case pgErr.Code == "40001":
			// informe only reads: on a hot standby this is a recovery
			// conflict, gone on a retry.
			return failure.Wrap(failure.Unavailable, err, "Service Unavailable: the database replica cancelled the read to replay changes; try again")
		case pgErr.Code == "57014":
			// query_canceled with informe's context still live: the
			// server's statement_timeout, or someone's pg_cancel_backend.
			return failure.Wrap(failure.Unavailable, fmt.Errorf("%w: %w", failure.ErrStatementTimeout, err),
				"Service Unavailable: the query took longer than the database allows; ask for fewer rows, or try again")
		}
	}
	return err
}

// quoteLiteral quotes s as an SQL string literal.
func quoteLiteral(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// SelectList returns names as a comma-separated list of quoted identifiers.
func SelectList(names []string) string {
	quoted := make([]string, len(names))
	for i, n := range names {
		quoted[i] = pgx.Identifier{n}.Sanitize()
	}
	return strings.Join(quoted, ", ")
}
