package postgres

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/informe/informe/internal/dataset"
	"github.com/informe/informe/internal/failure"
)

// Statement is one SQL statement and its arguments.
type Statement struct {
	SQL  string
	Args []any
	// Within, when not 0, says the statement orders its rows by the
	// first part of the dataset's key only, and ends each row with the
	// key's Within parts as bigint (0 for NULL): the cursor orders the
	// rows that share the first part by the others, so that PostgreSQL
	// sorts no whole rows.
	Within int
	// First is the index, from 0, of the statement's first row among the
	// rows of the whole reading it is a part of (see [dataset.ReportReading]'s
	// Split), or -1 when it is not known ([Parts].Places).
	First int64
}

// Store opens queries on datasets: the one road from a query to rows,
// which every door takes.
type Store struct {
	pool    *pgxpool.Pool
	reading Reading
}

// Reading is told of each read as it opens, with its context and query
// (which it may change before the rows are read: the persons they carry,
// [dataset.Query.Carried]), and says what the read must do for it. The audit
// records every read through it (internal/audit).
type Reading func(ctx context.Context, d *dataset.Dataset, q *dataset.Query) Told

// Told is what a [Reading] asks of the read it was told of.
type Told struct {
	// Before, unless nil, is run on the read's first connection in the
	// round trip that begins its snapshot ([BeginWith]), or
	// abandoned when the read ends before that.
	Before *Prelude
	// Wait, unless nil, is called once the read has opened, before its
	// cursors are handed out; its error fails the read.
	Wait func() error
}

// NewStore returns a Store reading from pool.
func NewStore(pool *pgxpool.Pool) *Store { return &Store{pool: pool} }

// Told returns a copy of s that tells r of every read.
func (s *Store) Told(r Reading) *Store { return &Store{pool: s.pool, reading: r} }

// begin tells s's Reading of the read of q on d, and returns what it
// asks of the read.
func (s *Store) begin(ctx context.Context, d *dataset.Dataset, q *query) Told {
	if s.reading == nil {
		return Told{}
	}
	return s.reading(ctx, d, &q.Query)
}

// Cursor reads the rows of a query, driven like pgx.Rows: Next, Values,
// Err, and Close on every path, which ends the snapshot and returns its
// connection to the pool. The rows are read typed, in PostgreSQL's binary
// format (or its text format, through a pooler), and Values holds one value
// per column of the query (then its position, with [dataset.Query.Position]) as
// text in the API's formats, written by [dataset.Row] (with
// [dataset.Query.Typed], the columns' values typed): nil for NULL, valid until
// the next call to Next.
type Cursor struct {
	cur    *Rows
	total  int64
	row    *dataset.Row
	within *within // for a [Statement.Within]
	first  int64   // see [Statement.First]
	values [][]byte
	n      int
	err    error
	etag   string // see [Validation]
	// onePart says why the export it is the one cursor of was read
	// through one connection ([Unsplit])
	onePart string
	// notModified says the client holds etag: nothing was read
	notModified bool
	pass        *withhold // the withheld persons' values, nil for none
	masked      []masked  // the masked columns' places, none for most tokens
}

// masked is the place of a masked column in a row, its mask and the
// buffer its value is written in.
type masked struct {
	i    int
	mask dataset.Mask
	buf  []byte
}

// newCursor returns the Cursor of st's rows in cur, whose first fields
// hold cols. A field whose type cannot hold its column's kind (an
// operator's view of the wrong type) is an error before any row is read.
// The personal values of the persons w withholds are nulled, by the hidden
// id columns that cols ends with (see [Withheld.prepare]), and carry is
// told whose the row carried.
func newCursor(cur *Rows, st Statement, d *dataset.Dataset, cols []dataset.Column, total int64, typed bool, w *Withheld, hidden int, carry dataset.Carrier) (*Cursor, error) {
	c := &Cursor{cur: cur, total: total, first: st.First}
	fields := cur.Fields()
	if fields == nil {
		return c, nil
	}
	if st.Within > 0 {
		w, err := newWithin(fields, st.Within)
		if err != nil {
			return nil, err
		}
		c.within, fields = w, fields[:w.n]
	}
	row, err := dataset.NewRow(cols, fields)
	if err != nil {
		return nil, err
	}
	for i := len(cols) - hidden; i < len(cols); i++ {
		row.Pass(i) // read raw by c.pass, then stripped
	}
	if typed {
		row.Typed()
	}
	c.row = row
	c.pass = w.pass(carry, d, cols, hidden, fields)
	for i, col := range cols {
		if col.Mask != dataset.Unmasked {
			c.masked = append(c.masked, masked{i: i, mask: col.Mask})
		}
	}
	return c, nil
}

// Next advances to the next row and writes its text, reporting whether
// there is one; false at the end and after an error ([Cursor.Err]).
func (c *Cursor) Next() bool {
	if c.err != nil {
		return false
	}
	var raw [][]byte
	if c.within == nil {
		if !c.cur.Next() {
			return false
		}
		raw = c.cur.Values()
	} else if raw = c.within.row(); raw == nil {
		ok, err := c.within.fill(c.cur.Next, c.cur.Values)
		if !ok {
			c.err = err
			return false
		}
		raw = c.within.row()
	}
	if c.pass != nil {
		c.pass.apply(raw)
	}
	c.values, c.err = c.row.Render(raw)
	if c.err != nil {
		return false
	}
	if c.pass != nil {
		c.values = c.pass.strip(c.values)
	}
	for i := range c.masked {
		m := &c.masked[i]
		v := m.mask.Apply(m.buf, c.values[m.i])
		if v != nil { // a null keeps the buffer for the next value
			m.buf = v
		}
		c.values[m.i] = v
	}
	c.n++
	return true
}

// Values returns the current row's values as text.
func (c *Cursor) Values() [][]byte { return c.values }

// Err returns the error, if any, that ended the iteration. Connection
// failures are failure.Unavailable.
func (c *Cursor) Err() error {
	if c.err != nil {
		return c.err
	}
	return c.cur.Err()
}

// Count returns the number of rows read so far.
func (c *Cursor) Count() int { return c.n }

// Close releases the rows and the snapshot's connection; see
// [Rows.Close]. It returns the first error met by the iteration
// or by ending the snapshot, and is safe to call more than once.
func (c *Cursor) Close() error {
	err := c.cur.Close()
	if c.err != nil {
		return c.err
	}
	return err
}

// First returns the index, from 0, of the cursor's first row among the
// rows of all the cursors [Store.OpenParts] returned together; -1 when it
// was not asked for ([Parts].Places) and is not known.
func (c *Cursor) First() int64 { return c.first }

// OnePart returns why the whole export this cursor alone reads was read
// through one connection ([Unsplit]'s words), "" for a cursor of an export
// read in parts, or of a page.
func (c *Cursor) OnePart() string { return c.onePart }

// Total returns the number of rows matching the query's conditions, over
// all pages, or -1 when the query did not ask to count them (or
// [Cursor.NotModified]).
func (c *Cursor) Total() int64 { return c.total }

// ETag returns the opaque tag of the rows of a query with
// [dataset.Query.Validate] (see [dataset.Validation]), "" without one or when the views'
// data has no version.
func (c *Cursor) ETag() string { return c.etag }

// NotModified reports that the client holds the rows' tag
// ([dataset.Validation]'s Held or Any): the cursor has no rows and no count.
func (c *Cursor) NotModified() bool { return c.notModified }

// Open counts the rows q asks for when q.Count says so and opens a
// [Cursor] on them, both in one REPEATABLE READ, READ ONLY snapshot, so
// that the count never disagrees with the rows. With q.Validate, it first
// reads the rows' tag in the same snapshot (one small query), and reads
// nothing more when the client holds it. Connection failures are
// failure.Unavailable; the cursor's queries are cancelled with ctx.
func (s *Store) Open(ctx context.Context, d *dataset.Dataset, dq dataset.Query) (*Cursor, error) {
	q := compile(d, dq)
	told := s.begin(ctx, d, &q)
	c, err := s.open(ctx, d, q, told.Before)
	told.Before.Abandon()
	if err == nil && told.Wait != nil {
		if err = told.Wait(); err != nil {
			c.Close()
			return nil, err
		}
	}
	return c, err
}

// open is [Store.Open] untold.
func (s *Store) open(ctx context.Context, d *dataset.Dataset, q query, pre *Prelude) (_ *Cursor, err error) {
	snap, err := BeginWith(ctx, s.pool, pre)
	if err != nil {
		return nil, err
	}
	opened := false
	defer func() {
		if !opened { // an error, or a panic: the connection goes back
			snap.Close()
		}
	}()
	held, etag, version, err := validate(snap, d, &q)
	if err != nil {
		return nil, err
	}
	if held != nil {
		opened = true
		return held, nil
	}
	if q.Validate != nil && q.Validate.Head {
		q.Limit = 0
	}
	// The blocks are read first, so in the snapshot the rows are read in.
	w, err := loadWithheldAt(snap, version)
	if err != nil {
		return nil, fmt.Errorf("%s: withheld: %w", d.Name, err)
	}
	hidden := len(w.prepare(d, &q))
	total := int64(-1)
	if q.Count {
		if total, err = count(snap, d, &q); err != nil {
			return nil, err
		}
	}
	st := Statement{}
	if q.Limit != 0 {
		if st, err = read(snap, d, &q, total); err != nil {
			return nil, err
		}
	}
	if st.SQL == "" {
		opened = true
		return &Cursor{cur: snap.Empty(), total: total, etag: etag}, nil
	}
	cur, err := snap.Query(st.SQL, st.Args)
	if err != nil {
		// The query failed (a statement timeout, say): no cursor will
		// close the snapshot, so the deferred Close must.
		return nil, fmt.Errorf("%s: %w", d.Name, err)
	}
	c, err := newCursor(cur, st, d, q.columns(d), total, q.Typed, w, hidden, q.Carried)
	if err != nil {
		cur.Close()
		return nil, fmt.Errorf("%s: %w", d.Name, err)
	}
	c.etag = etag
	opened = true
	return c, nil
}

// count returns the number of d's rows matching q's conditions.
func count(snap *Snapshot, d *dataset.Dataset, q *query) (int64, error) {
	if d.Plain != nil && q.FilterPlain() {
		return reportReading(*d.Plain).Count(snap, q)
	}
	n, _, err := countBefore(snap, d, q, nil)
	return n, err
}

// countBefore returns the number of d's rows matching q's conditions and,
// for each of bounds, how many of them come before it: the rows whose
// key's first part is less. It counts them in one statement, in d's
// KeyTable where that answers q (keyed), else in the typed view.
func countBefore(snap *Snapshot, d *dataset.Dataset, q *query, bounds []int64) (int64, []int64, error) {
	where, args := q.conditions()
	from, first := ident(d.Typed)+" t", ""
	if len(bounds) > 0 {
		first = "t." + d.Keys[0]
	}
	if conds, ok := keyed(d, q); ok {
		from, where, first = ident(d.KeyTable.Table)+" k", strings.Join(conds, " AND "), "k."+ident(d.KeyTable.Keys[0])
	}
	list := []string{"count(*)"}
	args = slices.Clip(args)
	for _, b := range bounds {
		args = append(args, b)
		list = append(list, "count(*) FILTER (WHERE "+first+" < $"+strconv.Itoa(len(args))+")")
	}
	sql := "SELECT " + strings.Join(list, ", ") + " FROM " + from
	if where != "" {
		sql += " WHERE " + where
	}
	counts := make([]int64, len(list))
	dest := make([]any, len(list))
	for i := range counts {
		dest[i] = &counts[i]
	}
	if err := snap.QueryRow(sql, args, dest...); err != nil {
		return 0, nil, fmt.Errorf("%s: count: %w", d.Name, err)
	}
	return counts[0], counts[1:], nil
}

// read returns the statement reading q's rows.
func read(snap *Snapshot, d *dataset.Dataset, q *query, total int64) (Statement, error) {
	if d.Plain != nil && q.Plain() {
		return reportReading(*d.Plain).Read(snap, q, q.columns(d), total)
	}
	if st, ok, err := keyRead(snap, d, q); ok {
		return st, err
	}
	// A page in the key's order, or in an order an index gives, reads
	// rows in that order until it has enough: parallel workers would each
	// read their own share of the order, all of which a Gather Merge
	// waits for, and read several times the rows, later (a first page of
	// task_status eq 'Terminada' on a million rows: 45 ms alone, 130 ms
	// with two workers). A sort no index gives reads every matching row,
	// which workers share; so may the count.
	if q.Limit > 0 && (len(q.Sort) == 0 || q.bound) {
		if err := snap.Serial(); err != nil {
			return Statement{}, err
		}
	}
	b, err := bounded(snap, d, *q)
	if err != nil {
		return Statement{}, fmt.Errorf("%s: %w", d.Name, err)
	}
	if len(b.Sort) > 0 && len(b.Expand) == 0 && b.Limit > 0 && (b.wide || !b.bound) {
		st, err := sortedKeys(snap, d, &b)
		if err != nil {
			return Statement{}, fmt.Errorf("%s: %w", d.Name, err)
		}
		return st, nil
	}
	return typed(d, &b), nil
}

// sortedKeys returns the statement reading a sorted page that PostgreSQL
// must sort, not read in order (its rows span several sort values, or no
// index gives the order), in two steps: it sorts the matching rows' keys
// and sort values alone and keeps the page's keys, in order, then the
// statement reads the rows of those keys. Sorted whole, every column of
// every row that shares the page's sort values would be computed first (a
// page of a feed by cost where the cost changes, on a million rows: 320
// ms, against about 20 ms for the other pages). An empty page is an empty
// statement.
func sortedKeys(snap *Snapshot, d *dataset.Dataset, q *query) (Statement, error) {
	// The keys, then the sort values, of each row; ordered as typed orders
	// them, by the sort values, then the keys.
	var sel, order, aggOrder []string
	for _, k := range d.Keys {
		sel = append(sel, "t."+k)
	}
	cols := names(len(d.Keys))
	for i, s := range q.Sort {
		sel = append(sel, q.sorts[i].expr)
		cols = append(cols, "s"+strconv.Itoa(i))
		order = append(order, q.sorts[i].expr+direction(s))
		aggOrder = append(aggOrder, "p.s"+strconv.Itoa(i)+direction(s))
	}
	for i, k := range d.Keys {
		order = append(order, "t."+k)
		aggOrder = append(aggOrder, "p.k"+strconv.Itoa(i))
	}
	sql, args := q.typedSelect(d, sel, order)
	if q.split != nil {
		sql, args = q.splitSelect(d, sel, order)
	}
	arrays, err := pageKeys(snap, sql, args, len(d.Keys), cols, aggOrder)
	if err != nil {
		return Statement{}, fmt.Errorf("sorted keys: %w", err)
	}
	if arrays == nil {
		return Statement{}, nil
	}
	return keyRows(d, q, arrays, true), nil
}

// splitSelect is typedSelect for a wide page of a few sort values
// (q.split): the rows of each value apart, each read in the order the
// rest of q's order gives among them (as a page of one value is), rather
// than every row of the values between the first and the last sorted
// together. The page's rows of its first value are those after the
// position and q.Skip of them, from q.afterFloor when that value is the
// position's; of each later value, its first, which are after the
// position by their value alone.
func (q *query) splitSelect(d *dataset.Dataset, list, order []string) (string, []any) {
	e := q.sorts[0].expr
	args := slices.Clip(q.args[:q.splitArgs])
	var branches []string
	for i, sv := range q.split {
		args = append(args, sv.value)
		conds := slices.Clip(q.where)
		if i == 0 {
			conds = append(conds, q.after[:len(q.after)-1]...) // the position's, not the bound
			if q.splitFloor {
				conds = append(conds, q.afterFloor)
			}
		}
		conds = append(conds, e+" = $"+strconv.Itoa(len(args)))
		b := "(" + fromTyped(d, strings.Join(list, ", "), conds) + " ORDER BY " + strings.Join(order, ", ")
		if i == 0 && q.Skip > 0 {
			b += " OFFSET " + strconv.FormatInt(q.Skip, 10)
		}
		branches = append(branches, b+" LIMIT "+strconv.FormatInt(sv.rows, 10)+")")
	}
	return strings.Join(branches, " UNION ALL "), args
}

// Parts says how [Store.OpenParts] may split a whole export.
type Parts struct {
	// Max is the most connections the export may read through at once; 1
	// or less reads through one.
	Max int
	// MinRows is the fewest rows worth a part of their own: an export of
	// fewer than 2*MinRows rows is read through one connection.
	MinRows int64
	// Places says each part must know the place of its first row in the
	// whole export ([Cursor.First]): an encoding that numbers its rows
	// ([github.com/informe/informe/export.Format.Places]). A filtered export then counts the rows
	// before each part in the one count it needs; without, a filtered
	// export's parts past the first do not know it (-1).
	Places bool
}

// Why a whole export was read through one connection ([Unsplit],
// [Cursor.OnePart]): the word its request line carries.
const (
	OneSorted     = "sorted"         // in another order than the dataset's: PostgreSQL sorts the rows whole
	OneExpanded   = "expanded"       // with related rows ($expand)
	OneEqualities = "equalities"     // filtered by equalities, which an index reads
	OneDataset    = "dataset"        // a dataset without ranges of its own to split (all but the general report)
	OneFewRows    = "few_rows"       // fewer rows than two parts' worth
	OneNoRanges   = "no_ranges"      // the report's counts are not maintained (--report-counts=view)
	OneNoSnapshot = "no_snapshot"    // the server cannot export a snapshot (a pooler)
	OneConnection = "one_connection" // it could take one connection only (see [Parts].Max)
)

// Unsplit returns why [Store.OpenParts] reads q's rows of d through one
// connection whatever its [Parts], or "" when it may read them in parts: a
// dataset with a [dataset.ReportReading], in its own order, filtered or
// not, but by no equality (which its own reading reads through an index)
// and with no expansion. Each part is a range of contracts
// (reportReading.Split).
func Unsplit(d *dataset.Dataset, q dataset.Query) string {
	switch {
	case d.Plain == nil:
		return OneDataset
	case len(q.Sort) > 0:
		return OneSorted
	case len(q.Expand) > 0:
		return OneExpanded
	case len(q.Equalities()) > 0 || q.Key != nil:
		return OneEqualities
	}
	return ""
}

// OpenParts is [Store.Open] for every row q asks for (its Skip and Limit
// are ignored), counted, read through up to p.Max connections at once, all
// in one REPEATABLE READ, READ ONLY snapshot: the first connection exports
// its snapshot (pg_export_snapshot) and counts, the others import it (SET
// TRANSACTION SNAPSHOT). Read one after the other, in the order returned,
// the cursors give the rows Open gives, in the same order; each one's
// Total is the whole export's.
//
// Only what the dataset's [dataset.ReportReading] reading can split is split; anything
// else, a server that cannot export a snapshot (a pooler, an old standby),
// and exports under 2*p.MinRows rows are read through one cursor. With
// q.Validate, the first connection reads the rows' tag before it counts,
// and every cursor carries it; when the client holds it, the one cursor
// returned is [Cursor.NotModified]. On failure, every cursor opened is
// closed.
func (s *Store) OpenParts(ctx context.Context, d *dataset.Dataset, dq dataset.Query, p Parts) ([]*Cursor, error) {
	dq.Skip, dq.Limit, dq.Count = 0, -1, true
	q := compile(d, dq)
	told := s.begin(ctx, d, &q)
	curs, err := s.openParts(ctx, d, q, p, told.Before)
	told.Before.Abandon()
	if err == nil && told.Wait != nil {
		if err = told.Wait(); err != nil {
			for _, c := range curs {
				c.Close()
			}
			return nil, err
		}
	}
	return curs, err
}

// openParts is [Store.OpenParts] untold.
func (s *Store) openParts(ctx context.Context, d *dataset.Dataset, q query, p Parts, pre *Prelude) (_ []*Cursor, err error) {
	one := func(why string) ([]*Cursor, error) {
		// pre, if the first connection ran it, is not run again.
		cur, err := s.open(ctx, d, q, pre)
		if err != nil {
			return nil, err
		}
		cur.onePart = why
		return []*Cursor{cur}, nil
	}
	if why := Unsplit(d, q.Query); why != "" {
		return one(why)
	}
	if p.Max <= 1 {
		return one(OneConnection)
	}
	first, err := BeginWith(ctx, s.pool, pre)
	if err != nil {
		return nil, err
	}
	snaps := []*Snapshot{first}
	opened := false
	defer func() {
		if !opened { // an error, or a panic: every connection goes back
			for _, s := range snaps {
				s.Close()
			}
		}
	}()
	held, etag, _, err := validate(first, d, &q)
	if err != nil {
		return nil, err
	}
	if held != nil {
		opened = true
		return []*Cursor{held}, nil
	}
	id, err := first.Export()
	if err != nil {
		if failure.CodeOf(err) != failure.Internal || ctx.Err() != nil {
			return nil, err
		}
		// This server cannot export a snapshot: its transaction is
		// aborted; read through one.
		first.Close()
		snaps = nil
		return one(OneNoSnapshot)
	}
	w, err := loadWithheld(first)
	if err != nil {
		return nil, fmt.Errorf("%s: withheld: %w", d.Name, err)
	}
	hidden := len(w.prepare(d, &q))
	cols := q.columns(d)
	var (
		parts []Statement
		total int64
	)
	if q.Filtered() { // by the doors' filters, or to withhold persons
		total = -1
		if !p.Places {
			if total, err = count(first, d, &q); err != nil {
				return nil, err
			}
		}
		if parts, total, err = reportReading(*d.Plain).SplitFiltered(first, d, &q, cols, int64(p.Max), p.MinRows, p.Places, total); err != nil {
			return nil, err
		}
	} else {
		if total, err = reportReading(*d.Plain).Count(first, &q); err != nil {
			return nil, err
		}
		k := int64(p.Max)
		if p.MinRows > 0 {
			k = min(k, total/p.MinRows)
		}
		if k > 1 {
			if parts, err = reportReading(*d.Plain).Split(first, &q, cols, total, k); err != nil {
				return nil, err
			}
		}
	}
	why := ""
	if len(parts) == 0 {
		why = OneFewRows
		if !d.Plain.Maintained {
			why = OneNoRanges
		}
		st, err := read(first, d, &q, total)
		if err != nil {
			return nil, err
		}
		if st.SQL == "" { // no rows
			opened = true
			return []*Cursor{{cur: first.Empty(), total: total, etag: etag, onePart: why}}, nil
		}
		parts = []Statement{st}
	}
	for range parts[1:] {
		snap, err := BeginAt(ctx, s.pool, id)
		if err != nil {
			return nil, err
		}
		snaps = append(snaps, snap)
	}
	curs := make([]*Cursor, 0, len(snaps))
	defer func() {
		if !opened {
			for _, c := range curs {
				c.Close()
			}
			snaps = snaps[len(curs):]
		}
	}()
	for i, snap := range snaps {
		// Each part is one of several backends reading at once: parallel
		// workers under each would only contend with the others for the
		// machine, and copy every row once more through a Gather Merge.
		if len(snaps) > 1 {
			if err := snap.Serial(); err != nil {
				return nil, fmt.Errorf("%s: part %d: %w", d.Name, i+1, err)
			}
		}
		cur, err := snap.Query(parts[i].SQL, parts[i].Args)
		if err != nil {
			return nil, fmt.Errorf("%s: part %d: %w", d.Name, i+1, err)
		}
		c, err := newCursor(cur, parts[i], d, cols, total, q.Typed, w, hidden, q.Carried)
		if err != nil {
			cur.Close()
			return nil, fmt.Errorf("%s: part %d: %w", d.Name, i+1, err)
		}
		c.etag = etag
		curs = append(curs, c)
	}
	curs[0].onePart = why
	opened = true
	return curs, nil
}

// typed returns the statement reading q's rows of d from its typed view,
// found in order by their typed values with the indexes those can use;
// Go writes their text ([dataset.Row], in [Cursor]). Only OData's
// related rows (q.Expand) are read from the text view, joined to the rows
// of the page by their keys.
func typed(d *dataset.Dataset, q *query) Statement {
	extra := len(q.Expand) > 0
	var list, order, korder []string
	for i, c := range q.columns(d) {
		col := "t." + ident(c.Name)
		if extra {
			col += " AS col_" + strconv.Itoa(i+1)
		}
		list = append(list, col)
	}
	if extra {
		for _, k := range d.Keys {
			list = append(list, "t."+k)
		}
	} else if q.Position {
		list = append(list, keyText(d, "t")...)
	}
	for i, s := range q.Sort {
		n := strconv.Itoa(i + 1)
		if q.Position {
			list = append(list, q.sorts[i].text+" AS sort_text_"+n)
		}
		if extra {
			list = append(list, q.sorts[i].expr+" AS sort_"+n)
		}
		order = append(order, q.sorts[i].expr+direction(s))
		korder = append(korder, "k.sort_"+n+direction(s))
	}
	for _, k := range d.Keys {
		order = append(order, "t."+k)
		korder = append(korder, "k."+k)
	}
	sql, args := q.typedSelect(d, list, order)
	if !extra {
		return Statement{SQL: sql, Args: args}
	}
	var outer, join []string
	for i := range q.columns(d) {
		outer = append(outer, "k.col_"+strconv.Itoa(i+1))
	}
	outer = append(outer, q.related(q.withheld)...)
	if q.Position {
		outer = append(outer, keyText(d, "k")...)
		for i := range q.Sort {
			outer = append(outer, "k.sort_text_"+strconv.Itoa(i+1))
		}
	}
	for i, k := range d.Keys {
		op := " IS NOT DISTINCT FROM "
		if i == 0 {
			op = " = " // the first key part is never NULL: an index serves it
		}
		join = append(join, "r."+k+op+"k."+k)
	}
	return Statement{
		SQL: "SELECT " + strings.Join(outer, ", ") + " FROM (" + sql + ") k JOIN " + ident(d.Text) +
			" r ON " + strings.Join(join, " AND ") + " ORDER BY " + strings.Join(korder, ", "),
		Args: args,
	}
}

// typedSelect returns the SELECT of list from d's typed view aliased t,
// under q's conditions and position, in order, within q's window (see
// Window), and its arguments.
func (q *query) typedSelect(d *dataset.Dataset, list, order []string) (string, []any) {
	sql := fromTyped(d, strings.Join(list, ", "), append(slices.Clip(q.where), q.after...))
	return q.Window(sql+" ORDER BY "+strings.Join(order, ", "), slices.Clip(q.args))
}

// fromTyped returns the SELECT of list from d's typed view aliased t, under
// conds.
func fromTyped(d *dataset.Dataset, list string, conds []string) string {
	sql := "SELECT " + list + " FROM " + ident(d.Typed) + " t"
	if len(conds) > 0 {
		sql += " WHERE " + strings.Join(conds, " AND ")
	}
	return sql
}

// direction is s's order in SQL: ascending with NULLs first, or
// descending with NULLs last.
func direction(s dataset.Sort) string {
	if s.Desc {
		return " DESC NULLS LAST"
	}
	return " ASC NULLS FIRST"
}

// Window returns sql, an ordered SELECT whose parameters are args, with
// q's Skip as its OFFSET and q's Limit as its LIMIT, each only when it
// bounds anything, given as parameters after args.
func (q *query) Window(sql string, args []any) (string, []any) {
	if q.Skip > 0 {
		args = append(args, q.Skip)
		sql += " OFFSET $" + strconv.Itoa(len(args))
	}
	if q.Limit >= 0 {
		args = append(args, q.Limit)
		sql += " LIMIT $" + strconv.Itoa(len(args))
	}
	return sql, args
}

// bounded returns q with a condition on its first sort value that the rows
// it reads meet, or q itself when it has no sort, q.bound is false or it
// reads every row. The rows from the (Skip+1)-th to the (Skip+Limit)-th in
// q's order hold the same first sort values as those in the order of that
// value alone, which an index on it finds by reading about as many rows
// (services_cost_idx for a service's cost): bounded by their least and
// greatest, the statement sorts only the rows that share the page's
// values, not every matching row; and when the page holds one value, its
// order is the rest of q's order among the rows of that value, which
// PostgreSQL can read in that order, from q.afterFloor's bound when that
// value is the position's.
func bounded(snap *Snapshot, d *dataset.Dataset, q query) (query, error) {
	if len(q.Sort) == 0 || !q.bound || q.Limit < 0 {
		return q, nil
	}
	e, dir := q.sorts[0].expr, direction(q.Sort[0])
	conds := append(slices.Clip(q.where), q.after...)
	n := len(q.args)
	p := func(i int) string { return "$" + strconv.Itoa(n+i) }
	sql := fromTyped(d, e+" AS v", conds)
	same := "false"
	if q.afterValue != "" {
		same = "coalesce(min(v) = " + q.afterValue + " AND max(v) = " + q.afterValue + ", false)"
	}
	page := sql + " ORDER BY 1" + dir + " OFFSET " + p(1) + " LIMIT " + p(2) // the page's values, v
	sql = "SELECT count(*), count(v), min(v), max(v), min(v) = max(v), " + same + " FROM (" + page + ") page"
	var rows, values int64
	var least, greatest any
	var one *bool
	var after bool
	if err := snap.QueryRow(sql, append(slices.Clip(q.args), q.Skip, q.Limit), &rows, &values, &least, &greatest, &one, &after); err != nil {
		return q, fmt.Errorf("bound: %w", err)
	}
	var cond string
	switch {
	case rows == 0:
		return q, nil
	case values == 0:
		cond = e + " IS NULL"
	case *one:
		cond = e + " = " + p(1)
		q.args = append(slices.Clip(q.args), least)
	default:
		cond = e + " BETWEEN " + p(1) + " AND " + p(2)
		q.args = append(slices.Clip(q.args), least, greatest)
		q.wide = true
		if values == rows {
			split, atPosition, err := splitValues(snap, page, dir, q.afterValue, q.args[:n], q.Skip, q.Limit)
			if err != nil {
				return q, err
			}
			q.split, q.splitArgs = split, n
			q.splitFloor = atPosition && q.afterFloor != ""
		}
	}
	if values > 0 && values < rows { // and nulls
		cond = "(" + cond + " OR " + e + " IS NULL)"
		q.wide = true
	}
	if after && values == rows { // every row of the page shares the position's value
		cond += " AND " + q.afterFloor
	}
	// The rows skipped that the bound leaves out come before the page's
	// first sort value: they are skipped no more.
	if q.Skip > 0 {
		desc := q.Sort[0].Desc
		first := least // the page's first value
		if desc {
			first = greatest
		}
		var before string
		switch {
		case values == 0 && desc: // the page is in the nulls, last
			before = e + " IS NOT NULL"
		case values == 0 || (values < rows && !desc): // in the nulls, first
		case desc:
			before = e + " > " + p(1)
		default:
			before = "(" + e + " < " + p(1) + " OR " + e + " IS NULL)"
		}
		if before != "" {
			args := slices.Clip(q.args[:n])
			if strings.Contains(before, p(1)) {
				args = append(args, first)
			}
			sql := fromTyped(d, "count(*)", append(slices.Clip(conds), before))
			var skipped int64
			if err := snap.QueryRow(sql, args, &skipped); err != nil {
				return q, fmt.Errorf("bound: skipped: %w", err)
			}
			q.Skip -= skipped
		}
	}
	q.after = append(slices.Clip(q.after), cond)
	return q, nil
}

// maxSplit is the most sort values a wide page is read in, each value's
// rows apart (see sortedKeys).
const maxSplit = 4

// splitValues returns the first sort values of a wide page whose values
// are page's, v, in order dir, and how many rows have each, in the page's
// order; nil for more than maxSplit values. atPosition says that the
// first is the position's value, after (an expression of args; none when
// empty).
func splitValues(snap *Snapshot, page, dir, after string, args []any, skip, limit int64) (split []splitValue, atPosition bool, err error) {
	var elems []string
	values := make([]any, maxSplit+1)
	counts := make([]*int64, maxSplit+1)
	var dest []any
	for i := range values {
		elems = append(elems, "(array_agg(v ORDER BY v"+dir+"))["+strconv.Itoa(i+1)+"]")
		dest = append(dest, &values[i])
	}
	for i := range counts {
		elems = append(elems, "(array_agg(c ORDER BY v"+dir+"))["+strconv.Itoa(i+1)+"]")
		dest = append(dest, &counts[i])
	}
	if after == "" {
		after = "NULL"
	}
	elems = append(elems, "coalesce((array_agg(v ORDER BY v"+dir+"))[1] = "+after+", false)")
	dest = append(dest, &atPosition)
	sql := "SELECT " + strings.Join(elems, ", ") + " FROM (SELECT v, count(*) AS c FROM (" + page + ") p GROUP BY v) g"
	if err := snap.QueryRow(sql, append(slices.Clip(args), skip, limit), dest...); err != nil {
		return nil, false, fmt.Errorf("bound: values: %w", err)
	}
	if counts[maxSplit] != nil {
		return nil, false, nil
	}
	for i, c := range counts {
		if c != nil {
			split = append(split, splitValue{value: values[i], rows: *c})
		}
	}
	return split, atPosition, nil
}

func ident(name string) string { return pgx.Identifier{name}.Sanitize() }
