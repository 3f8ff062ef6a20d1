package subjects

import (
	"hash/fnv"
	"testing"
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
