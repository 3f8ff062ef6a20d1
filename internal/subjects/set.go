// Package subjects owns what informe knows of the persons whose data it
// serves: the blocks that hold a person's personal data back (informe
// subjects block, unblock, list; read on every request by
// [github.com/informe/informe/internal/postgres.Withheld]), the compact [Set] of the persons whose personal
// values a response carried, built as its rows stream by a [Collector],
// the ids a RUT is known by ([Resolve]) and the report of the responses
// that carried a person's data ([Report]).
package subjects

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/informe/informe/internal/dataset"
)

// parts are the kinds of id a Set holds, in its encoding's order.
const parts = int(dataset.UserName) + 1

// Set is a set of persons, each known by one kind of id
// ([dataset.IDKind]): clients' ids, contracts of clients, contracts by
// their payer, users' ids, and users named in free text (by a 64-bit hash
// of the name). The zero Set is empty.
type Set struct {
	ids [parts][]int64 // each sorted, without repeats
}

// Contains reports whether s holds the id of kind.
func (s *Set) Contains(kind dataset.IDKind, id int64) bool {
	_, ok := slices.BinarySearch(s.ids[kind], id)
	return ok
}

// ContainsName reports whether s holds a user named name in free text.
func (s *Set) ContainsName(name string) bool {
	return s.Contains(dataset.UserName, NameID(name))
}

// Meets reports whether s and o hold a person in common.
func (s *Set) Meets(o *Set) bool {
	for k := range s.ids {
		for _, id := range o.ids[k] {
			if _, ok := slices.BinarySearch(s.ids[k], id); ok {
				return true
			}
		}
	}
	return false
}

// Len returns the number of ids s holds.
func (s *Set) Len() int {
	n := 0
	for _, ids := range s.ids {
		n += len(ids)
	}
	return n
}

// NameID is the id of a user named name in free text: its 64-bit FNV-1a
// hash, so that the name itself is never stored.
func NameID(name string) int64 { return nameID(name) }

// nameID is [NameID] of a string or of bytes, without allocating: it is
// computed for every row that names a user.
func nameID[T string | []byte](name T) int64 {
	const (
		offset64 = 14695981039346656037
		prime64  = 1099511628211
	)
	h := uint64(offset64)
	for i := 0; i < len(name); i++ {
		h ^= uint64(name[i])
		h *= prime64
	}
	return int64(h)
}

// The encodings of one part of a Set.
const (
	encRuns   = 1 // runs of consecutive ids: gap and length, as uvarints
	encBitmap = 2 // a bitmap from the least id
)

// Encode returns s's compact binary form: nil for an empty set (a
// response without personal values carries nothing). Each part is
// written as runs of consecutive ids or as a bitmap, whichever is
// smaller: a whole export of 100,000 contracts takes a few dozen KiB.
func (s *Set) Encode() []byte {
	if s.Len() == 0 {
		return nil
	}
	b := []byte{1} // version
	for k, ids := range s.ids {
		if len(ids) == 0 {
			continue
		}
		runs := encodeRuns(ids)
		bits := encodeBitmap(ids)
		b = append(b, byte(k))
		if bits != nil && len(bits) < len(runs) {
			b = append(b, encBitmap)
			b = binary.AppendUvarint(b, uint64(len(bits)))
			b = append(b, bits...)
		} else {
			b = append(b, encRuns)
			b = binary.AppendUvarint(b, uint64(len(runs)))
			b = append(b, runs...)
		}
	}
	return b
}

// encodeRuns writes ids as a count of runs, then each run's gap from the
// end of the last (from 0 for the first, zig-zagged) and its length less
// one.
func encodeRuns(ids []int64) []byte {
	var out []byte
	var n uint64
	var body []byte
	prev := int64(0)
	for i := 0; i < len(ids); {
		j := i + 1
		for j < len(ids) && ids[j] == ids[j-1]+1 {
			j++
		}
		body = binary.AppendVarint(body, ids[i]-prev)
		body = binary.AppendUvarint(body, uint64(j-i-1))
		prev = ids[j-1]
		n++
		i = j
	}
	out = binary.AppendUvarint(out, n)
	return append(out, body...)
}

// encodeBitmap writes ids as the least id, then a bitmap of the others
// from it; nil when they span more than 2^24 values.
func encodeBitmap(ids []int64) []byte {
	lo, hi := ids[0], ids[len(ids)-1]
	if uint64(hi-lo) >= 1<<24 {
		return nil
	}
	out := binary.AppendVarint(nil, lo)
	bits := make([]byte, (hi-lo)/8+1)
	for _, id := range ids {
		d := id - lo
		bits[d/8] |= 1 << (d % 8)
	}
	return append(out, bits...)
}

// ErrEncoding is the error of [Decode] for bytes no [Set.Encode] wrote.
var ErrEncoding = errors.New("subjects: not an encoded set")

// Decode returns the set b encodes; nil or empty b is the empty set.
func Decode(b []byte) (*Set, error) {
	s := &Set{}
	if len(b) == 0 {
		return s, nil
	}
	if b[0] != 1 {
		return nil, fmt.Errorf("%w: version %d", ErrEncoding, b[0])
	}
	b = b[1:]
	for len(b) > 0 {
		if len(b) < 2 || int(b[0]) >= parts {
			return nil, ErrEncoding
		}
		k, enc := b[0], b[1]
		n, w := binary.Uvarint(b[2:])
		if w <= 0 || n > uint64(len(b)-2-w) {
			return nil, ErrEncoding
		}
		body := b[2+w : 2+w+int(n)]
		b = b[2+w+int(n):]
		var ids []int64
		var err error
		switch enc {
		case encRuns:
			ids, err = decodeRuns(body)
		case encBitmap:
			ids, err = decodeBitmap(body)
		default:
			err = ErrEncoding
		}
		if err != nil {
			return nil, err
		}
		s.ids[k] = ids
	}
	return s, nil
}

func decodeRuns(b []byte) ([]int64, error) {
	n, w := binary.Uvarint(b)
	if w <= 0 {
		return nil, ErrEncoding
	}
	b = b[w:]
	var ids []int64
	prev := int64(0)
	for range n {
		gap, w := binary.Varint(b)
		if w <= 0 {
			return nil, ErrEncoding
		}
		b = b[w:]
		l, w := binary.Uvarint(b)
		if w <= 0 || l > 1<<32 {
			return nil, ErrEncoding
		}
		b = b[w:]
		first := prev + gap
		for i := int64(0); i <= int64(l); i++ {
			ids = append(ids, first+i)
		}
		prev = first + int64(l)
	}
	return ids, nil
}

func decodeBitmap(b []byte) ([]int64, error) {
	lo, w := binary.Varint(b)
	if w <= 0 {
		return nil, ErrEncoding
	}
	var ids []int64
	for i, c := range b[w:] {
		for bit := 0; bit < 8; bit++ {
			if c&(1<<bit) != 0 {
				ids = append(ids, lo+int64(i*8+bit))
			}
		}
	}
	return ids, nil
}

// Collector builds the [Set] of the persons whose personal values a
// response's rows carried: it is the [dataset.Carrier] of the response's
// query ([dataset.Query.Carried]), told of each row's persons as the rows
// stream. It is safe for concurrent use: the parts of a whole export
// ([github.com/informe/informe/internal/postgres.Store.OpenParts]) are read at once, all telling the same
// Collector.
type Collector struct {
	mu  sync.Mutex
	ids [parts][]int64
	// recent are the last ids added of each kind, recent[kind][next[kind]]
	// the next to be replaced: the rows of one person come together, and a
	// row names a few (a contract's client and payer, two users).
	recent [parts][4]int64
	next   [parts]uint8
	// compactAt is the length at which ids are sorted and deduplicated,
	// so that they grow with the persons, not with the rows.
	compactAt [parts]int
}

// minCompact is the fewest ids a Collector holds of one kind before it
// sorts and deduplicates them.
const minCompact = 4096

// NewCollector returns an empty Collector.
func NewCollector() *Collector { return &Collector{} }

// Carry adds the person known by id of kind.
func (c *Collector) Carry(kind dataset.IDKind, id int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	ids := c.ids[kind]
	if len(ids) > 0 && slices.Contains(c.recent[kind][:min(len(ids), 4)], id) {
		return
	}
	c.recent[kind][c.next[kind]] = id
	c.next[kind] = (c.next[kind] + 1) % 4
	ids = append(ids, id)
	if len(ids) >= max(c.compactAt[kind], minCompact) {
		slices.Sort(ids)
		ids = slices.Compact(ids)
		c.compactAt[kind] = 2 * len(ids)
	}
	c.ids[kind] = ids
}

// CarryName adds the user named name in free text.
func (c *Collector) CarryName(name []byte) {
	c.Carry(dataset.UserName, nameID(name))
}

// Set returns the set of the persons collected so far.
func (c *Collector) Set() *Set {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := &Set{}
	for k, ids := range c.ids {
		ids = slices.Clone(ids)
		slices.Sort(ids)
		s.ids[k] = slices.Compact(ids)
	}
	return s
}
