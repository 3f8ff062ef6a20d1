package subjects

import (
	"hash/fnv"
	"testing"

	"github.com/informe/informe/internal/dataset"
)

// TestNameIDIsFNV1a keeps the ids of names that records already hold: a
// name's id is its 64-bit FNV-1a hash, from a string or from a row's bytes.
func TestNameIDIsFNV1a(t *testing.T) {
	for _, name := range []string{"", "María José Núñez", "ana", "\xff\xfe"} {
		h := fnv.New64a()
		h.Write([]byte(name))
		if got, want := NameID(name), int64(h.Sum64()); got != want || nameID([]byte(name)) != want {
			t.Errorf("NameID(%q) = %d, bytes %d; want %d", name, got, nameID([]byte(name)), want)
		}
	}
}

// TestCollectorBounded checks that a Collector's ids grow with the
// persons a response carried, not with its rows, and that its Set is the
// same as one collected without compaction.
func TestCollectorBounded(t *testing.T) {
	c := NewCollector()
	for row := range 1_000_000 {
		c.Carry(dataset.ClientID, int64(row%997))   // 997 clients, never two rows of one in a row
		c.CarryName([]byte{byte('a' + row%3), 'x'}) // 3 users named in free text
	}
	if n := len(c.ids[dataset.ClientID]); n > 2*minCompact {
		t.Errorf("%d client ids held for 997 clients over a million rows", n)
	}
	set := c.Set()
	if got := len(set.ids[dataset.ClientID]); got != 997 {
		t.Errorf("the set holds %d clients, want 997", got)
	}
	if got := len(set.ids[dataset.UserName]); got != 3 {
		t.Errorf("the set holds %d named users, want 3", got)
	}
}
