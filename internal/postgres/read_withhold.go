package postgres

import (
	"encoding/binary"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/informe/informe/internal/dataset"
)

// Withheld are the persons whose personal values informe withholds (their
// RUTs blocked with informe subjects block), resolved to ids in one
// request's snapshot by the view subject_withheld: so every instance sees
// a block from the next request, with nothing cached.
type Withheld struct {
	clients         map[int64]bool // clients' ids
	clientContracts map[int64]bool // contracts of those clients
	payers          map[int64]bool // contracts whose recorded payer is blocked
	users           map[int64]bool // users' ids
	names           map[string]bool
}

// withheldSQL reads the blocks in one row (see subject_withheld_ids):
// with no block (the usual case) it reads one empty table.
const withheldSQL = `SELECT clients, client_contracts, payers, users, names FROM subject_withheld_ids()`

// loadWithheld reads the blocks in snap: nil when there are none.
// withheldAt is the blocks [loadWithheldAt] read last, at a data version.
var withheldAt struct {
	sync.Mutex
	version string
	w       *Withheld
}

// loadWithheldAt is [loadWithheld] in a snapshot whose data version
// (Snapshot.DataVersion, of views that include subject_withheld)
// is version: at the version of the last read, the blocks and the ids
// they reach are those read then, since the version follows every table
// subject_withheld reads (subject_blocks, contracts, clients, users), and
// a request pays no query for them. An empty version (none known) reads
// them.
func loadWithheldAt(snap *Snapshot, version string) (*Withheld, error) {
	if version != "" {
		withheldAt.Lock()
		if withheldAt.version == version {
			w := withheldAt.w
			withheldAt.Unlock()
			return w, nil
		}
		withheldAt.Unlock()
	}
	w, err := loadWithheld(snap)
	if err != nil || version == "" {
		return w, err
	}
	withheldAt.Lock()
	withheldAt.version, withheldAt.w = version, w
	withheldAt.Unlock()
	return w, nil
}

func loadWithheld(snap *Snapshot) (*Withheld, error) {
	var clients, clientContracts, payers, users []int64
	var names []string
	if err := snap.QueryRow(withheldSQL, nil, &clients, &clientContracts, &payers, &users, &names); err != nil {
		return nil, err
	}
	if len(clients)+len(payers)+len(users) == 0 {
		return nil, nil
	}
	w := &Withheld{clients: set(clients), clientContracts: set(clientContracts), payers: set(payers), users: set(users),
		names: make(map[string]bool, len(names))}
	for _, n := range names {
		w.names[n] = true
	}
	return w, nil
}

func set(ids []int64) map[int64]bool {
	m := make(map[int64]bool, len(ids))
	for _, id := range ids {
		m[id] = true
	}
	return m
}

// subjectKey says how a row of d names the person whose personal values
// of kind s it holds: by an id column of d, looked up in one of the
// withheld sets (what subject_withheld calls it), or, for a user named in
// free text (attended_by, task_executor), by the value itself ("" column).
func subjectKey(d *dataset.Dataset, s dataset.Subject) (column string, kind dataset.IDKind) {
	return setKey(d.EntitySet(), s)
}

// setKey is subjectKey for the rows of an entity set's typed view.
func setKey(set dataset.EntitySet, s dataset.Subject) (column string, kind dataset.IDKind) {
	has := func(name string) bool {
		return slices.ContainsFunc(set.Columns, func(c dataset.Column) bool { return c.Name == name })
	}
	switch {
	case s == dataset.Client && has("client_id"):
		return "client_id", dataset.ClientID
	case s == dataset.Client && has("contract_id"):
		return "contract_id", dataset.ClientContractID
	case s == dataset.Payer && has("contract_id"):
		return "contract_id", dataset.PayerContractID
	case s == dataset.User && set.Typed == dataset.Users.Typed:
		return "id", dataset.UserID
	}
	return "", dataset.UserName
}

func (w *Withheld) ids(kind dataset.IDKind) map[int64]bool {
	if w == nil {
		return nil
	}
	switch kind {
	case dataset.ClientID:
		return w.clients
	case dataset.ClientContractID:
		return w.clientContracts
	case dataset.PayerContractID:
		return w.payers
	}
	return w.users
}

// withhold is the per-row pass of a query over d whose columns hold
// personal values of withheld persons: which values it nulls, by which
// hidden id field, and where those fields sit.
type withhold struct {
	w      *Withheld       // nil when no one is withheld
	carry  dataset.Carrier // nil when no one asks
	rules  []rule
	nCols  int // the query's own columns
	hidden int // id fields after them, dropped from Values
	out    [][]byte
}

// rule nulls the values at cols when the id in field (or, with field -1,
// the value itself, a user's name) is withheld.
type rule struct {
	field int
	kind  dataset.IDKind
	bin   bool
	ids   map[int64]bool
	cols  []int
}

// conditionColumn finds the columns a condition names, with their alias:
// the doors write them as alias.name, and bind every value as a
// parameter, so no value is read as a name.
var conditionColumn = regexp.MustCompile(`\b([a-z][a-z0-9]*)\."?([a-z_0-9]+)`)

// withhold prepares q, a query over d, for the persons w withholds:
// conditions that name a personal column of a kind w holds never match
// those persons' rows (the condition ANDed with their exclusion), related
// rows are read withheld, and, when q reads personal
// columns, the id columns that name their persons are read after q's
// columns (returned, for [Withheld.pass]). With w nil, q is left as is.
func (w *Withheld) prepare(d *dataset.Dataset, q *query) []dataset.Column {
	if w == nil && q.Carried == nil {
		return nil
	}
	if w != nil {
		w.conditions(d, q)
	}
	// Columns.
	cols := q.columns(d)
	if !slices.ContainsFunc(cols, func(c dataset.Column) bool { return c.Personal != dataset.NotPersonal }) {
		return nil
	}
	var hidden []dataset.Column
	for _, c := range cols {
		if c.Personal == dataset.NotPersonal {
			continue
		}
		col, _ := subjectKey(d, c.Personal)
		if col != "" && !slices.ContainsFunc(hidden, func(h dataset.Column) bool { return h.Name == col }) {
			i := slices.IndexFunc(d.Columns, func(c dataset.Column) bool { return c.Name == col })
			hidden = append(hidden, d.Columns[i])
		}
	}
	q.Columns = append(slices.Clip(cols), hidden...)
	return hidden
}

// conditions makes q's conditions that name a personal column never match
// the rows of the persons w withholds, and its related rows read withheld.
func (w *Withheld) conditions(d *dataset.Dataset, q *query) {
	q.withheld = true
	var excl []string
	for _, cond := range q.where {
		for _, e := range exclusions(d.EntitySet(), "t", cond) {
			if !slices.Contains(excl, e) {
				excl = append(excl, e)
			}
		}
	}
	if len(excl) == 0 {
		return
	}
	q.where, q.on, q.more = slices.Clip(q.where), slices.Clip(q.on), true
	for _, e := range excl {
		q.where, q.on = append(q.where, e), append(q.on, On{})
	}
}

// Unblocked returns cond, a condition on the row of set's typed view
// aliased alias, so that it is never true of a row whose person is
// blocked (see [Withheld]) when it names one of that person's personal
// columns: an OData lambda's condition on related rows. Without such a
// column it is cond itself. It reads the blocks in the statement's own
// snapshot, and costs an anti-join with the (usually empty) blocks only
// where a condition names a personal column.
func Unblocked(set dataset.EntitySet, alias, cond string) string {
	excl := exclusions(set, alias, cond)
	if len(excl) == 0 {
		return cond
	}
	return "((" + cond + ") AND " + strings.Join(excl, " AND ") + ")"
}

// exclusions returns the conditions, over set's typed view aliased alias,
// that a row's persons of the kinds whose personal columns cond names
// there are not blocked; none when it names none.
func exclusions(set dataset.EntitySet, alias, cond string) []string {
	named := map[dataset.Subject]bool{}
	for _, m := range conditionColumn.FindAllStringSubmatch(cond, -1) {
		if m[1] != alias {
			continue
		}
		name := m[2]
		for prop, n := range set.Normalized {
			if n[0] == name {
				name = prop
			}
		}
		if i := slices.IndexFunc(set.Columns, func(c dataset.Column) bool { return c.Name == name }); i >= 0 && set.Columns[i].Personal != dataset.NotPersonal {
			named[set.Columns[i].Personal] = true
		}
	}
	var out []string
	for _, s := range []dataset.Subject{dataset.Client, dataset.Payer, dataset.User} {
		if !named[s] {
			continue
		}
		col, kind := setKey(set, s)
		if col != "" {
			out = append(out, "NOT EXISTS (SELECT FROM subject_withheld w WHERE w.kind = '"+kind.String()+"' AND w.id = "+alias+"."+ident(col)+")")
			continue
		}
		// No id: every column of that kind is matched by the value, a
		// user's name (attended_by, task_executor).
		for _, c := range set.Columns {
			if c.Personal == s {
				out = append(out, "NOT EXISTS (SELECT FROM subject_withheld w WHERE w.kind = 'user' AND w.name = "+alias+"."+ident(c.Name)+")")
			}
		}
	}
	return out
}

// pass returns the per-row pass over a result of d whose fields are
// cols (q's own, then hidden), then Expand and the position: nil when no
// column of cols holds personal data.
func (w *Withheld) pass(carry dataset.Carrier, d *dataset.Dataset, cols []dataset.Column, hidden int, fields []pgconn.FieldDescription) *withhold {
	if w == nil && carry == nil {
		return nil
	}
	p := &withhold{w: w, carry: carry, nCols: len(cols) - hidden, hidden: hidden}
	own := cols[:p.nCols]
	for i, c := range own {
		if c.Personal == dataset.NotPersonal {
			continue
		}
		col, kind := subjectKey(d, c.Personal)
		field := -1
		if col != "" {
			field = p.nCols + slices.IndexFunc(cols[p.nCols:], func(h dataset.Column) bool { return h.Name == col })
		}
		r := slices.IndexFunc(p.rules, func(r rule) bool { return r.field == field && r.kind == kind })
		if r < 0 {
			rr := rule{field: field, kind: kind}
			if field >= 0 {
				rr.ids = w.ids(kind)
				rr.bin = fields[field].Format == 1
			}
			p.rules = append(p.rules, rr)
			r = len(p.rules) - 1
		}
		p.rules[r].cols = append(p.rules[r].cols, i)
	}
	if len(p.rules) == 0 && hidden == 0 {
		return nil
	}
	return p
}

// apply nulls, in raw, the personal values of the withheld persons, then
// tells the carrier whose personal values the row still holds.
func (p *withhold) apply(raw [][]byte) {
	for _, r := range p.rules {
		if r.field < 0 {
			for _, i := range r.cols {
				if raw[i] == nil {
					continue
				}
				if p.w != nil && p.w.names[string(raw[i])] {
					raw[i] = nil
				} else if p.carry != nil && len(raw[i]) > 0 {
					p.carry.CarryName(raw[i])
				}
			}
			continue
		}
		id, ok := fieldID(raw[r.field], r.bin)
		if !ok {
			continue
		}
		if r.ids[id] {
			for _, i := range r.cols {
				raw[i] = nil
			}
			continue
		}
		if p.carry != nil && slices.ContainsFunc(r.cols, func(i int) bool { return len(raw[i]) > 0 }) {
			p.carry.Carry(r.kind, id)
		}
	}
}

// strip returns values without the hidden id fields.
func (p *withhold) strip(values [][]byte) [][]byte {
	if p.hidden == 0 {
		return values
	}
	p.out = append(append(p.out[:0], values[:p.nCols]...), values[p.nCols+p.hidden:]...)
	return p.out
}

// fieldID reads an integer field, bigint or integer, binary or text.
func fieldID(v []byte, bin bool) (int64, bool) {
	if v == nil {
		return 0, false
	}
	if !bin {
		n, err := strconv.ParseInt(string(v), 10, 64)
		return n, err == nil
	}
	switch len(v) {
	case 8:
		return int64(binary.BigEndian.Uint64(v)), true
	case 4:
		return int64(int32(binary.BigEndian.Uint32(v))), true
	}
	return 0, false
}

// WithheldText returns the expression of column c of d's text view
// aliased alias with its value NULL when its person is withheld (see
// [Withheld]): what OData's related rows read while any person is
// blocked. A column that holds no personal data is itself.
func WithheldText(d *dataset.Dataset, alias string, c dataset.Column) string {
	v := alias + "." + ident(c.Name)
	if c.Personal == dataset.NotPersonal {
		return v
	}
	col, kind := subjectKey(d, c.Personal)
	test := alias + "." + ident(col) + " IN (SELECT id::text FROM subject_withheld WHERE kind = '" + kind.String() + "')"
	if col == "" {
		test = v + " IN (SELECT name FROM subject_withheld WHERE kind = 'user')"
	}
	return "CASE WHEN " + test + " THEN NULL ELSE " + v + " END"
}

// WithheldTyped returns the expression of column col of set's typed view
// aliased alias, NULL where its person is blocked (see [Withheld]): what
// an order on a personal column sorts by, so that neither the order nor a
// position written from it carries a blocked person's value. A column
// that holds no personal data is itself.
func WithheldTyped(set dataset.EntitySet, alias, col string) string {
	v := alias + "." + col
	excl := exclusions(set, alias, v)
	if len(excl) == 0 {
		return v
	}
	return "CASE WHEN " + strings.Join(excl, " AND ") + " THEN " + v + " END"
}
