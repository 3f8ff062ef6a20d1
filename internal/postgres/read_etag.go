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

// validate returns the entity tag of q's rows of d in snap, "" when the
// data they come from has no version (a view over tables informe does
// not watch: then nothing is ever "not modified"), and whether the client
// holds it.
func validate(snap *Snapshot, d *dataset.Dataset, q *query) (tag, version string, held bool, err error) {
	v := q.Validate
	// subject_withheld: the blocked persons, whose values every row
	// withholds (see [Withheld]).
	views := slices.Concat([]string{d.Typed, d.Text, "subject_withheld"}, q.Reads())
	version, err = snap.DataVersion(views)
	if errors.Is(err, ErrNoDataVersion) {
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
