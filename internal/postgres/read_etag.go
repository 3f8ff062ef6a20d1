package postgres

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"slices"
	"strconv"

	"github.com/informe/informe/internal/dataset"
)

// validate tags q's rows of d in snap when q asks for it (q.Validate):
// it returns their entity tag, "" when the data they come from has no
// version (a view over tables informe does not watch: then nothing is
// ever "not modified"), and that version; and, when the client holds the
// tag, notModified, the cursor of the answer Not Modified, which reads no
// rows. A query that asks for no tag gets none.
func validate(snap *Snapshot, d *dataset.Dataset, q *query) (notModified *Cursor, tag, version string, err error) {
	v := q.Validate
	if v == nil {
		return nil, "", "", nil
	}
	// subject_withheld: the blocked persons, whose values every row
	// withholds (see [Withheld]).
	views := slices.Concat([]string{d.Typed, d.Text, "subject_withheld"}, q.Reads())
	version, err = snap.DataVersion(views)
	if errors.Is(err, ErrNoDataVersion) {
		version = "" // "*" holds whatever exists
	} else if err != nil {
		return nil, "", "", fmt.Errorf("%s: %w", d.Name, err)
	} else {
		h := sha256.New()
		hashField(h, "informe entity tag 1")
		hashField(h, v.Representation)
		hashField(h, d.Name)
		hashField(h, version)
		q.digest(h)
		tag = base64.RawURLEncoding.EncodeToString(h.Sum(nil)[:18])
	}
	if v.Any || (tag != "" && slices.Contains(v.Held, tag)) {
		return &Cursor{cur: snap.Empty(), total: -1, etag: tag, notModified: true}, tag, version, nil
	}
	return nil, tag, version, nil
}

// digest writes to h everything of q that decides which rows it reads,
// in which order, and how: its columns, conditions and their arguments,
// order, position, window, count and related rows, never Validate.
func (q *query) digest(h hash.Hash) {
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
