package httplist_test

import (
	"reflect"
	"slices"
	"strings"
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

func TestEntityTags(t *testing.T) {
	for _, tt := range []struct {
		name, in string
		tags     []string
		any, ok  bool
	}{
		{"OK", `"abc"`, []string{"abc"}, false, true},
		{"OKWeak", `W/"abc"`, []string{"abc"}, false, true},
		{"OKList", `"a", W/"b" ,"c"`, []string{"a", "b", "c"}, false, true},
		{"OKEmptyElements", ` , "a",, `, []string{"a"}, false, true},
		{"OKCommaInside", `"a,b"`, []string{"a,b"}, false, true},
		{"OKEmptyTag", `""`, []string{""}, false, true},
		{"OKEmpty", ``, nil, false, true},
		{"OKStar", ` * `, nil, true, true},
		{"ErrUnquoted", `abc`, nil, false, false},
		{"ErrUnclosed", `"abc`, nil, false, false},
		{"ErrSpaceInside", `"a b"`, nil, false, false},
		{"ErrStarInList", `"a", *`, nil, false, false},
		{"ErrLowerWeak", `w/"a"`, nil, false, false},
		{"ErrJunkAfter", `"a"b`, nil, false, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tags, any, ok := httplist.EntityTags(tt.in)
			if !slices.Equal(tags, tt.tags) || any != tt.any || ok != tt.ok {
				t.Errorf("EntityTags(%q) = %q, %v, %v; want %q, %v, %v", tt.in, tags, any, ok, tt.tags, tt.any, tt.ok)
			}
		})
	}
}

// FuzzEntityTags checks that EntityTags never panics, and that what it
// accepts it gives back as tags that, quoted again, it reads the same.
func FuzzEntityTags(f *testing.F) {
	for _, s := range []string{`"a"`, `W/"a", "b"`, `*`, ``, `"a`, `W/`, `"a" "b"`, "\"\x80\""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		tags, any, ok := httplist.EntityTags(s)
		if !ok || any {
			return
		}
		var again []string
		for _, tag := range tags {
			again = append(again, `"`+tag+`"`)
		}
		got, _, ok := httplist.EntityTags(strings.Join(again, ", "))
		if !ok || !slices.Equal(got, tags) {
			t.Errorf("EntityTags(%q) = %q; its tags quoted again read %q, %v", s, tags, got, ok)
		}
	})
}
