package dataset

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"slices"
	"strconv"

	"github.com/informe/informe/internal/postgres"
)

// Validation asks [Store.Open] for the entity tag of a query's rows (see
// [Query.Validate]): a value that is the same exactly when the response
// would be, derived from the data version of the tables the dataset's
// views read (postgres.Snapshot.DataVersion), read in the rows' own
// snapshot, the dataset, the whole query as compiled, and Representation.
type Validation struct {
	// Representation is what, besides the data and the query, decides
	// the bytes of the response: its format and options, its content
	// coding, informe's build.
	Representation string
	// Held are the opaque tags the client holds (If-None-Match's,
	// compared weakly: without their W/), Any says it sent "*": when the
	// rows' tag is one of them, or Any, Open reads nothing more and
	// returns a cursor whose [Cursor.NotModified] is true.
	Held []string
	Any  bool
	// Head reads no rows, only the tag and, with [Query.Count], the count
	// (a HEAD request, OData's /$count): the tag is the one the rows
	// would have.
	Head bool
}

// validate returns the entity tag of q's rows of d in snap, "" when the
// data they come from has no version (a view over tables informe does
// not watch: then nothing is ever "not modified"), and whether the client
// holds it.
func validate(snap *postgres.Snapshot, d *Dataset, q *Query) (tag, version string, held bool, err error) {
	v := q.Validate
	// subject_withheld: the blocked persons, whose values every row
	// withholds (see [Withheld]).
	views := slices.Concat([]string{d.Typed, d.Text, "subject_withheld"}, q.Reads())
	version, err = snap.DataVersion(views)
	if errors.Is(err, postgres.ErrNoDataVersion) {
		return "", "", v.Any, nil // "*" holds whatever exists
	}
	if err != nil {
		return "", "", false, fmt.Errorf("%s: %w", d.Name, err)
	}
	h := sha256.New()
	hashField(h, "informe entity tag 1")
	hashField(h, v.Representation)
	hashField(h, d.Name)
	hashField(h, version)
	q.digest(h)
	tag = base64.RawURLEncoding.EncodeToString(h.Sum(nil)[:18])
	return tag, version, v.Any || slices.Contains(v.Held, tag), nil
}

// digest writes to h everything of q that decides which rows it reads,
// in which order, and how: its columns, conditions and their arguments,
// order, position, window, count and related rows, never Validate.
func (q *Query) digest(h hash.Hash) {
	n := func(i int64) { hashField(h, strconv.FormatInt(i, 10)) }
	b := func(x bool) { hashField(h, strconv.FormatBool(x)) }
	list := func(ss []string) {
		n(int64(len(ss)))
		for _, s := range ss {
			hashField(h, s)
		}
	}
	n(int64(len(q.Columns)))
	for _, c := range q.Columns {
		hashField(h, c.Name)
		n(int64(c.Mask)) // a token's mask changes the bytes, not the rows
	}
	n(int64(len(q.Sort)))
	for i, s := range q.Sort {
		hashField(h, q.sorts[i].expr)
		hashField(h, q.sorts[i].text)
		b(s.Desc)
	}
	n(q.Skip)
	n(q.Limit)
	b(q.Count)
	list(q.related(false))
	list(q.Reads())
	b(q.Typed)
	b(q.Position)
	n(int64(len(q.Key)))
	for _, k := range q.Key {
		n(k)
	}
	b(q.Key == nil)
	b(q.bound)
	hashField(h, q.afterValue)
	hashField(h, q.afterFloor)
	list(q.where)
	list(q.after)
	b(q.more)
	n(int64(q.nWhere))
	n(int64(len(q.args)))
	for _, a := range q.args {
		hashField(h, fmt.Sprintf("%T %v", a, a))
	}
}

// hashField writes s to h after its length, so that no two lists of fields
// write the same bytes.
func hashField(h hash.Hash, s string) {
	var n [binary.MaxVarintLen64]byte
	h.Write(n[:binary.PutUvarint(n[:], uint64(len(s)))])
	h.Write([]byte(s))
}
