// Package audit keeps the record of every read in PostgreSQL (the table
// audit_records, migration 00019): one record per response that carries
// data, opened before its first byte and closed after its last, and the
// refused requests, counted.
//
// A door (the API's middleware, informe export, a schedule's run) makes a
// [Record] of who asks and how, and puts it in the context of its reads
// ([NewContext]). The one road to rows, [postgres.Store], calls
// [Log.Reading] as it opens a read: the record is inserted then, while the
// read's own queries run, and the read's cursor is handed out only once
// the insert has succeeded. Under [Required], a record that cannot be
// written fails the read with a 503 and Retry-After: no record, no data.
// The door closes the record when the response has ended ([Log.Close]),
// which queues the close: closes are written in batches, after the
// response, so that none waits for the database.
package audit

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"os/user"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/informe/informe/internal/dataset"
	"github.com/informe/informe/internal/failure"
	"github.com/informe/informe/internal/postgres"
	"github.com/informe/informe/internal/subjects"
)

// Mode says what informe does when a record cannot be written.
type Mode int

// The modes, as --audit names them.
const (
	// Required refuses the read (503 with Retry-After) when its record
	// cannot be written: no record, no data.
	Required Mode = iota
	// BestEffort logs the failure and serves the read unrecorded.
	BestEffort
	// Off records nothing.
	Off
)

var modeNames = [...]string{"required", "best-effort", "off"}

func (m Mode) String() string { return modeNames[m] }

// ParseMode reads a mode as --audit writes it.
func ParseMode(s string) (Mode, error) {
	for i, n := range modeNames {
		if s == n {
			return Mode(i), nil
		}
	}
	return 0, fmt.Errorf("--audit must be required, best-effort or off, got %q", s)
}

// Outcome is how a recorded response ended.
type Outcome string

// The outcomes of audit_records.
const (
	Complete    Outcome = "complete"     // every byte was sent
	Cut         Outcome = "cut"          // the response was cut, Reason says why
	Failed      Outcome = "failed"       // an error answered, Reason and Status say which
	NotModified Outcome = "not_modified" // a 304: the client held the rows' tag
	Refused     Outcome = "refused"      // refused requests, counted
	Recorded    Outcome = "recorded"     // an event: a token changed, the audit's mode, a prune
)

// Record is one response's record: the door fills in who asks and how
// before the read; the read adds what it reads; the door closes it with
// what was sent.
type Record struct {
	Started       time.Time
	RequestID     string
	Principal     string // the token's name; for a command, the OS user and host
	ClientAddress string
	UserAgent     string
	Path          string // the door: "GET /api/general-report", "informe export", ...
	Query         string // as asked, any token in it redacted
	Rules         string // the token's rules that applied, "" for none
	Format        string

	// Set when the record is closed.
	Ended   time.Time
	Rows    int64
	Bytes   int64
	Status  int
	Outcome Outcome
	Reason  string

	once     sync.Once
	mu       sync.Mutex    // guards datasets after the first read
	opened   chan struct{} // closed once the insert has returned
	id       int64         // 0 until inserted
	err      error         // the insert's
	datasets []string
	columns  []string
	carried  *subjects.Collector
}

type recordKey struct{}

// NewContext returns ctx carrying r: the reads under it are r's.
func NewContext(ctx context.Context, r *Record) context.Context {
	return context.WithValue(ctx, recordKey{}, r)
}

// FromContext returns the record ctx carries, nil for none.
func FromContext(ctx context.Context) *Record {
	r, _ := ctx.Value(recordKey{}).(*Record)
	return r
}

// Opened reports whether r was inserted (a read opened it).
func (r *Record) Opened() bool {
	if r == nil || r.opened == nil {
		return false
	}
	<-r.opened
	return r.id != 0
}

// Reading reports whether a read began under r, its record inserted or
// not.
func (r *Record) Reading() bool { return r != nil && r.opened != nil }

// Log writes records to PostgreSQL through its own pool, so that a
// record never waits behind the reads it records (and may go to the
// primary while the reads go to a standby).
type Log struct {
	pool     *pgxpool.Pool
	mode     Mode
	instance string
	logger   *slog.Logger
	now      func() time.Time
	onReads  bool

	closes chan closing
	stop   chan struct{}
	done   chan struct{}

	mu       sync.Mutex
	refusals map[refusalKey]*refusal
}

// closing is a closed record to write, or, with flushed, a caller to tell
// once every close queued before it is written.
type closing struct {
	r       *Record
	flushed chan error
}

// New returns a Log writing to pool under mode, its records naming
// instance (the host and process); logger hears of records it could not
// write. Call [Log.Run] to write closes and refusals.
func New(pool *pgxpool.Pool, mode Mode, instance string, logger *slog.Logger) *Log {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &Log{
		pool: pool, mode: mode, instance: instance, logger: logger, now: time.Now,
		closes: make(chan closing, 1<<16), stop: make(chan struct{}), done: make(chan struct{}),
		refusals: map[refusalKey]*refusal{},
	}
}

// Mode returns l's mode; a nil Log's is [Off].
func (l *Log) Mode() Mode {
	if l == nil {
		return Off
	}
	return l.mode
}

// Instance names this process for records: its host and process id.
func Instance() string {
	host, _ := os.Hostname()
	return host + ":" + strconv.Itoa(os.Getpid())
}

// Command is the principal of a command run by hand: the operating
// system's user and host.
func Command() string {
	name := "unknown"
	if u, err := user.Current(); err == nil {
		name = u.Username
	}
	host, err := os.Hostname()
	if err != nil {
		host = "unknown"
	}
	return name + "@" + host
}

// errUnrecorded is the answer to a read whose record could not be written
// under [Required].
func errUnrecorded(err error) error {
	return failure.Wrap(failure.Busy, err, "Service Unavailable: the record of this read could not be written, and informe serves no data unrecorded; try again")
}

// errNoRecord is a read under [Required] through a door that made no
// record: a fault of informe's, never served.
var errNoRecord = failure.Errorf(failure.Internal, "a read was made without an audit record")

// Reading is [postgres.Store]'s hook: it begins recording the read of q on
// d under the record ctx carries, and asks the read to wait for the
// record before it hands out its cursor. A record is inserted once, at its
// first read; further reads under it add their dataset. The insert rides
// in the read's first round trip ([postgres.Prelude]) when l writes to the
// reads' database ([Log.OnReads]), and runs beside the read, through l's
// own pool, when not.
func (l *Log) Reading(ctx context.Context, d *dataset.Dataset, q *dataset.Query) postgres.Told {
	if l.Mode() == Off {
		return postgres.Told{}
	}
	r := FromContext(ctx)
	if r == nil {
		if l.mode == Required {
			return postgres.Told{Wait: func() error { return errNoRecord }}
		}
		return postgres.Told{}
	}
	first := false
	r.once.Do(func() {
		first = true
		r.opened = make(chan struct{})
		r.datasets = []string{d.Name}
		for _, v := range q.Reads() {
			for _, o := range dataset.All {
				if o.Text == v && !slices.Contains(r.datasets, o.Name) {
					r.datasets = append(r.datasets, o.Name)
				}
			}
		}
		cols := q.Columns
		if cols == nil {
			cols = d.Columns
		}
		personal := len(q.Expand) > 0
		for _, c := range cols {
			r.columns = append(r.columns, c.Name)
			personal = personal || c.Personal != dataset.NotPersonal
		}
		if personal && q.Carried == nil {
			r.carried = subjects.NewCollector()
		}
	})
	if !first {
		<-r.opened
		r.mu.Lock()
		if !slices.Contains(r.datasets, d.Name) {
			r.datasets = append(r.datasets, d.Name)
		}
		r.mu.Unlock()
	}
	if r.carried != nil && q.Carried == nil {
		q.Carried = r.carried
	}
	if !first {
		return postgres.Told{Wait: func() error { return l.failed(r.err) }}
	}
	wait := func() error {
		select {
		case <-r.opened:
		case <-ctx.Done():
			return context.Cause(ctx)
		}
		return l.failed(r.err)
	}
	if !l.onReads {
		go l.open(ctx, r)
		return postgres.Told{Wait: wait}
	}
	before := postgres.AuditOpenPrelude(opening(r, l.instance), func(id int64, err error) {
		if errors.Is(err, postgres.ErrPreludeNotRun) {
			// The read failed before its snapshot began: the record,
			// of a read that failed, is written beside.
			go l.open(ctx, r)
			return
		}
		if err == nil {
			r.id = id
		}
		l.inserted(ctx, r, err)
	})
	return postgres.Told{Before: before, Wait: wait}
}

// OnReads makes l insert each record on its read's own connection, in
// the round trip that begins the read's snapshot: for a Log whose
// database is the reads' (no --audit-database-url). A record then costs
// the read no round trip, connection or backend of its own. It returns l.
func (l *Log) OnReads() *Log {
	l.onReads = true
	return l
}

// failed returns what a read whose record's insert ended with err gets:
// the error under Required, nothing otherwise.
func (l *Log) failed(err error) error {
	if err == nil || l.mode != Required {
		return nil
	}
	return errUnrecorded(err)
}

// opening returns r as its record is opened, by instance.
func opening(r *Record, instance string) postgres.AuditOpening {
	return postgres.AuditOpening{
		Started: r.Started, RequestID: r.RequestID, Principal: r.Principal, ClientAddress: r.ClientAddress,
		UserAgent: r.UserAgent, Path: r.Path, Datasets: strings.Join(r.datasets, ","), Query: r.Query,
		Rules: r.Rules, Format: r.Format, Columns: strings.Join(r.columns, ","), Instance: instance,
	}
}

// open inserts r's record through l's pool.
func (l *Log) open(ctx context.Context, r *Record) {
	ctx = context.WithoutCancel(ctx)
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	id, err := postgres.OpenAuditRecord(ctx, l.pool, opening(r, l.instance))
	r.id = id
	l.inserted(ctx, r, err)
}

// inserted tells r.opened that r's insert ended, with err.
func (l *Log) inserted(ctx context.Context, r *Record, err error) {
	if err != nil {
		r.id, r.err = 0, err
		l.logger.LogAttrs(ctx, slog.LevelWarn, "an audit record could not be written",
			slog.String("request_id", r.RequestID), slog.String("audit", l.mode.String()), slog.String("error", errText(err)))
	}
	close(r.opened)
}

// Close queues r's close: its end, rows, bytes, status, outcome and
// reason as the door set them, and the persons its rows carried. A record
// no read opened is not written; a refused request's (a status of 4xx) is
// counted instead ([Log.Refuse]).
func (l *Log) Close(r *Record) {
	if l.Mode() == Off || r == nil || !r.Opened() {
		return
	}
	if r.Ended.IsZero() {
		r.Ended = l.now()
	}
	l.closes <- closing{r: r}
}

// Flush waits until every close queued before it is written, and the
// refusals counted so far, or ctx ends.
func (l *Log) Flush(ctx context.Context) error {
	if l.Mode() == Off {
		return nil
	}
	c := closing{flushed: make(chan error, 1)}
	select {
	case l.closes <- c:
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case err := <-c.flushed:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Run writes queued closes and counted refusals until ctx ends, then
// writes what is left (for at most five seconds) and returns. A batch
// being written when ctx ends is written within those five seconds too.
func (l *Log) Run(ctx context.Context) {
	if l.Mode() == Off {
		return
	}
	// The writes' context outlives ctx by five seconds.
	w, cancel := context.WithCancel(context.WithoutCancel(ctx))
	defer cancel()
	defer context.AfterFunc(ctx, func() { time.AfterFunc(5*time.Second, cancel) })()
	tick := time.NewTicker(refusalInterval)
	defer tick.Stop()
	for {
		select {
		case c := <-l.closes:
			l.writeCloses(w, ctx.Done(), c, closeGather)
		case <-tick.C:
			l.writeRefusals(w)
		case <-ctx.Done():
			for {
				select {
				case c := <-l.closes:
					l.writeCloses(w, nil, c, 0)
					continue
				default:
				}
				break
			}
			l.writeRefusals(w)
			return
		}
	}
}

// maxBatch is the most closes written by one statement.
const maxBatch = 512

// closeGather is how long the closes that follow one are waited for, to
// be written with it: a record is closed at most this long after its
// response ends (and at once on Flush and at shutdown).
const closeGather = 250 * time.Millisecond

// writeCloses writes first and the closes queued behind it, in batches,
// and tells the flushes among them.
//
// With gather, the closes that arrive within gather of first (and before
// a flush, or stop) join the batch: one statement then closes the records
// of many responses, which costs the database far less than one each.
func (l *Log) writeCloses(ctx context.Context, stop <-chan struct{}, first closing, gather time.Duration) {
	batch := []closing{first}
	var deadline <-chan time.Time
	if gather > 0 && first.flushed == nil {
		t := time.NewTimer(gather)
		defer t.Stop()
		deadline = t.C
	}
collect:
	for len(batch) < maxBatch {
		if deadline == nil {
			select {
			case c := <-l.closes:
				batch = append(batch, c)
				continue
			default:
				break collect
			}
		}
		select {
		case c := <-l.closes:
			batch = append(batch, c)
			if c.flushed != nil {
				deadline = nil
			}
		case <-deadline:
			deadline = nil
		case <-stop:
			deadline = nil
		}
	}
	var cs postgres.AuditCloses
	for _, c := range batch {
		if c.r == nil {
			continue
		}
		r := c.r
		cs.IDs = append(cs.IDs, r.id)
		cs.Ended = append(cs.Ended, r.Ended)
		cs.Rows = append(cs.Rows, r.Rows)
		cs.Bytes = append(cs.Bytes, max(r.Bytes, 0))
		cs.Status = append(cs.Status, int32(r.Status))
		cs.Outcome = append(cs.Outcome, string(r.Outcome))
		cs.Reason = append(cs.Reason, nullable(r.Reason))
		var enc []byte
		if r.carried != nil {
			if set := r.carried.Set(); set.Len() > 0 {
				enc = set.Encode()
			}
		}
		cs.Subjects = append(cs.Subjects, enc)
		cs.Formats = append(cs.Formats, nullable(r.Format))
		r.mu.Lock()
		cs.Datasets = append(cs.Datasets, strings.Join(r.datasets, ","))
		r.mu.Unlock()
	}
	var err error
	if len(cs.IDs) > 0 {
		err = l.write(ctx, func(ctx context.Context) error {
			return postgres.CloseAuditRecords(ctx, l.pool, cs)
		})
		if err != nil {
			l.logger.LogAttrs(ctx, slog.LevelError, "audit records could not be closed; they read as unfinished",
				slog.Int("records", len(cs.IDs)), slog.String("error", errText(err)))
		}
	}
	flush := false
	for _, c := range batch {
		flush = flush || c.flushed != nil
	}
	if flush {
		l.writeRefusals(ctx)
	}
	for _, c := range batch {
		if c.flushed != nil {
			c.flushed <- err
		}
	}
}

// write runs w, trying again for a minute while the database cannot be
// reached (a restart, a failover), so that a close is not lost to a
// moment's outage.
func (l *Log) write(ctx context.Context, w func(context.Context) error) error {
	deadline := time.Now().Add(time.Minute)
	wait := 100 * time.Millisecond
	for {
		wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		err := w(wctx)
		cancel()
		if err == nil || !transient(err) || time.Now().After(deadline) || ctx.Err() != nil {
			return err
		}
		select {
		case <-time.After(wait):
		case <-ctx.Done():
			return err
		}
		wait = min(2*wait, 5*time.Second)
	}
}

// transient reports whether err may pass: the database could not be
// reached (no PostgreSQL error), or was shutting down or starting (class
// 57, operator intervention; class 08, connection exception).
func transient(err error) bool {
	var pe *pgconn.PgError
	if !errors.As(err, &pe) {
		return !errors.Is(err, context.Canceled)
	}
	return strings.HasPrefix(pe.Code, "57") || strings.HasPrefix(pe.Code, "08")
}

// Event records something done to what governs reads (a token created,
// changed or revoked; the audit's mode at start-up; a prune): path names
// the command, query what it was given (never a secret), rules the rules
// that result.
//
// An event is recorded under every mode, off included, so that the choice
// of off is itself on record.
func (l *Log) Event(ctx context.Context, principal, path, query, rules string) error {
	if l == nil {
		return nil
	}
	if err := l.event(ctx, l.pool, principal, path, query, rules); err != nil {
		return fmt.Errorf("audit: %w", err)
	}
	return nil
}

// Executor runs a statement: a pool, or the transaction of the change an
// event records.
type Executor interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
}

// EventIn records an event as [Log.Event] does, but through db: given the
// transaction that makes the change, the record is committed with the
// change or not at all. Under [Off] it records nothing. A database whose
// audit_records table is missing (not migrated) gives a failure.Unavailable
// that says to run informe migrate; any other error is wrapped.
func (l *Log) EventIn(ctx context.Context, db Executor, principal, path, query, rules string) error {
	if l.Mode() == Off {
		return nil
	}
	err := l.event(ctx, db, principal, path, query, rules)
	var pe *pgconn.PgError
	if errors.As(err, &pe) && pe.Code == "42P01" { // undefined_table
		return failure.Wrap(failure.Unavailable, err, "the audit table audit_records is missing: the database is not migrated (run informe migrate)")
	}
	if err != nil {
		return fmt.Errorf("audit: %w", err)
	}
	return nil
}

func (l *Log) event(ctx context.Context, db Executor, principal, path, query, rules string) error {
	return postgres.RecordAuditEvent(ctx, db, l.now(), principal, path, nullable(query), nullable(rules), l.instance)
}

// Prune deletes the records that started before before, and records that
// it did, as principal; it returns how many it deleted.
func Prune(ctx context.Context, pool *pgxpool.Pool, before time.Time, principal, instance string) (int64, error) {
	n, err := postgres.PruneAudit(ctx, pool, before, principal, instance)
	if err != nil {
		return 0, fmt.Errorf("audit prune: %w", err)
	}
	return n, nil
}

// RulesText returns r as a record keeps it: each rule that restricts,
// "" for none.
func RulesText(r *dataset.Rules) string {
	if r.Empty() {
		return ""
	}
	var parts []string
	switch {
	case r.NoPersonal:
		parts = append(parts, "columns=no personal data")
	case r.Columns != nil:
		parts = append(parts, "columns="+strings.Join(r.Columns, ","))
	}
	if len(r.Mask) > 0 {
		parts = append(parts, "mask="+strings.Join(r.Mask, ","))
	}
	if r.Rows != "" {
		parts = append(parts, "rows="+r.Rows)
	}
	if r.MaxRows > 0 {
		parts = append(parts, "max_rows="+strconv.FormatInt(r.MaxRows, 10))
	}
	return strings.Join(parts, "; ")
}

// QueryText returns a command's query as a record keeps it: values
// encoded, sorted by name.
func QueryText(v url.Values) string { return v.Encode() }

func nullable(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// errText is err for a log line: a PostgreSQL error's message and code
// (never its detail, which may quote a row's values).
func errText(err error) string {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Message + " (SQLSTATE " + pe.Code + ")"
	}
	return err.Error()
}

// Do records the read that read makes under ctx, as a door other than
// the API's does (informe export, a schedule's run): rec's record is
// opened when read's read begins, through the store, and closed when read
// returns, with the rows and bytes it wrote and its outcome, before Do
// returns. A record that cannot be closed is an error under [Required].
func (l *Log) Do(ctx context.Context, rec *Record, read func(context.Context) (rows, bytes int64, err error)) error {
	if l.Mode() == Off {
		_, _, err := read(ctx)
		return err
	}
	if rec.Started.IsZero() {
		rec.Started = l.now()
	}
	rows, bytes, err := read(NewContext(ctx, rec))
	if !rec.Opened() {
		return err
	}
	rec.Ended, rec.Rows, rec.Bytes = l.now(), rows, bytes
	switch {
	case err == nil:
		rec.Outcome = Complete
	case bytes > 0:
		rec.Outcome, rec.Reason = Cut, cmp.Or(failure.ReasonOf(err), "error")
	default:
		rec.Outcome, rec.Reason = Failed, cmp.Or(failure.ReasonOf(err), "error")
	}
	done := make(chan error, 1)
	l.writeCloses(context.WithoutCancel(ctx), nil, closing{r: rec, flushed: done}, 0)
	if cerr := <-done; cerr != nil && err == nil && l.mode == Required {
		return fmt.Errorf("audit: the record of this read could not be closed: %w", cerr)
	}
	return err
}
