package httplist_test

import (
	"reflect"
	"testing"

	"github.com/informe/informe/internal/httplist"
)

func TestSplit(t *testing.T) {
	for _, tt := range []struct {
		name, in string
		want     []string
	}{
		{"One", "a", []string{"a"}},
		{"Empty", "", []string{""}},
		{"Several", "a, b,c", []string{"a", " b", "c"}},
		{"Quoted", `a;x="1,2", b`, []string{`a;x="1,2"`, " b"}},
		{"Escaped", `a;x="\",", b`, []string{`a;x="\","`, " b"}},
		{"Trailing", "a,", []string{"a"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := httplist.Split(tt.in, ','); !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("Split(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestQuality(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want int
		ok   bool
	}{
		{"1", 1000, true}, {"0", 0, true}, {"0.5", 500, true}, {"1.000", 1000, true},
		{".5", 500, true}, {"0.1234", 123, true}, {"1.5", 0, false}, {"2", 0, false},
		{"", 0, false}, {".", 0, false}, {"0.x", 0, false},
	} {
		if got, ok := httplist.Quality(tt.in); got != tt.want || ok != tt.ok {
			t.Errorf("Quality(%q) = %d, %v; want %d, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}

func TestIsToken(t *testing.T) {
	for in, want := range map[string]bool{"gzip": true, "x-ndjson": true, "": false, "a b": false, `"a"`: false, "a/b": false} {
		if got := httplist.IsToken(in); got != want {
			t.Errorf("IsToken(%q) = %v", in, got)
		}
	}
}
