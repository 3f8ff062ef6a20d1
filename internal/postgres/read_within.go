package postgres

import (
	"encoding/binary"
	"fmt"
	"slices"
	"strconv"

	"github.com/jackc/pgx/v5/pgconn"
)

// within orders, in Go, the rows that share the first part of a
// dataset's key, for a statement ordered by that part alone
// ([Statement.Within]): PostgreSQL then sorts no whole rows, which for the
// report's 74 columns cost it more than a third of its CPU a row. The
// rows of one first key part (a contract's, about ten) are held, copied,
// until the next one's first row comes; in every plan seen they arrive
// in order already, and are sorted when they do not.
type within struct {
	n     int     // the rows' fields before the key's
	bin   []bool  // whether each key field is in binary format
	held  []*held // the current group, in order; reused
	rows  int     // rows held in the current group
	next  int     // the next held row to hand out
	ahead bool    // the cursor is on the next group's first row
	done  bool    // the cursor has no more rows
}

// held is one row, copied: its fields before the key's, and its key.
type held struct {
	vals [][]byte
	buf  []byte
	key  []int64
}

// newWithin returns the within of a result whose last k fields are the
// key's parts as bigint.
func newWithin(fields []pgconn.FieldDescription, k int) (*within, error) {
	if len(fields) < k {
		return nil, fmt.Errorf("%d fields for a key of %d parts", len(fields), k)
	}
	w := &within{n: len(fields) - k}
	for _, f := range fields[w.n:] {
		if f.DataTypeOID != 20 { // int8
			return nil, fmt.Errorf("key field %s is not a bigint", f.Name)
		}
		w.bin = append(w.bin, f.Format == 1)
	}
	return w, nil
}

// hold copies raw as the next row of the current group.
func (w *within) hold(raw [][]byte) error {
	if w.rows == len(w.held) {
		w.held = append(w.held, &held{vals: make([][]byte, w.n), buf: make([]byte, 0, 2048), key: make([]int64, len(w.bin))})
	}
	h := w.held[w.rows]
	h.buf = h.buf[:0]
	for _, v := range raw[:w.n] {
		h.buf = append(h.buf, v...)
	}
	at := 0
	for i, v := range raw[:w.n] {
		if v == nil {
			h.vals[i] = nil
			continue
		}
		h.vals[i] = h.buf[at : at+len(v) : at+len(v)]
		at += len(v)
	}
	for i, v := range raw[w.n:] {
		k, err := w.keyPart(i, v)
		if err != nil {
			return err
		}
		h.key[i] = k
	}
	w.rows++
	return nil
}

// keyPart decodes the i-th key part of a row.
func (w *within) keyPart(i int, v []byte) (int64, error) {
	switch {
	case v == nil:
		return 0, fmt.Errorf("key part %d is NULL", i+1)
	case w.bin[i] && len(v) == 8:
		return int64(binary.BigEndian.Uint64(v)), nil
	case w.bin[i]:
		return 0, fmt.Errorf("key part %d has %d bytes", i+1, len(v))
	}
	return strconv.ParseInt(string(v), 10, 64)
}

// fill reads the next group of rows from cur, reporting whether there is
// one. cur's error, if any, is the cursor's to report.
func (w *within) fill(next func() bool, values func() [][]byte) (bool, error) {
	w.rows, w.next = 0, 0
	if !w.ahead {
		if w.done || !next() {
			w.done = true
			return false, nil
		}
	}
	w.ahead = false
	if err := w.hold(values()); err != nil {
		return false, err
	}
	first := w.held[0].key[0]
	for {
		if !next() {
			w.done = true
			break
		}
		raw := values()
		k, err := w.keyPart(0, raw[w.n])
		if err != nil {
			return false, err
		}
		if k != first {
			w.ahead = true // held at the next fill: the row stays current
			break
		}
		if err := w.hold(raw); err != nil {
			return false, err
		}
	}
	group := w.held[:w.rows]
	if !slices.IsSortedFunc(group, compareHeld) {
		slices.SortStableFunc(group, compareHeld)
	}
	return true, nil
}

func compareHeld(a, b *held) int { return slices.Compare(a.key, b.key) }

// row returns the next held row's fields, or nil when the group is done.
func (w *within) row() [][]byte {
	if w.next == w.rows {
		return nil
	}
	w.next++
	return w.held[w.next-1].vals
}
