package postgres_test

import (
	"context"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/informe/informe/internal/pgserver/pgtest"
)

// TestCaseCollationMapsUnicode checks informe_case, the collation of
// $filter's tolower and toupper, on a cluster made as the tests and the
// demo make theirs (C locale, where lower() and upper() change only ASCII
// letters): every letter of Latin-1, Latin Extended-A and -B, Greek and
// Cyrillic maps to what Go's unicode package says, but where Unicode maps
// one character to several (ß to SS: full case mapping), which Go's
// per-character mapping cannot show.
func TestCaseCollationMapsUnicode(t *testing.T) {
	t.Parallel()
	pool := pgtest.New(t)
	ctx := context.Background()
	if got := queryString(t, pool, "SELECT upper('vásquez ñanculef región')"); got != "VáSQUEZ ñANCULEF REGIóN" {
		t.Logf("the database's own upper() gives %q: the cluster is not in the C locale", got)
	}
	var letters []string
	for _, rng := range [][2]rune{{0x41, 0x24F}, {0x370, 0x3FF}, {0x400, 0x4FF}} {
		for r := rng[0]; r <= rng[1]; r++ {
			if unicode.IsLetter(r) {
				letters = append(letters, string(r))
			}
		}
	}
	rows, err := pool.Query(ctx, `SELECT c, lower(c COLLATE informe_case), upper(c COLLATE informe_case) FROM unnest($1::text[]) c`, letters)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	n, full := 0, 0
	for rows.Next() {
		var c, lower, upper string
		if err := rows.Scan(&c, &lower, &upper); err != nil {
			t.Fatal(err)
		}
		n++
		for _, m := range []struct{ op, got, want string }{
			{"lower", lower, strings.ToLower(c)},
			{"upper", upper, strings.ToUpper(c)},
		} {
			if utf8.RuneCountInString(m.got) > 1 {
				full++ // a full case mapping, such as ß to SS
				continue
			}
			if m.got != m.want {
				t.Errorf("%s(%q) = %q, want %q", m.op, c, m.got, m.want)
			}
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if n != len(letters) || n < 600 {
		t.Fatalf("%d letters mapped, want %d", n, len(letters))
	}
	for _, tt := range []struct{ sql, want string }{
		{"SELECT upper('vásquez núñez región ü' COLLATE informe_case)", "VÁSQUEZ NÚÑEZ REGIÓN Ü"},
		{"SELECT lower('ÑANCULEF ÁÉÍÓÚ' COLLATE informe_case)", "ñanculef áéíóú"},
	} {
		if got := queryString(t, pool, tt.sql); got != tt.want {
			t.Errorf("%s = %q, want %q", tt.sql, got, tt.want)
		}
	}
	t.Logf("%d letters, %d full case mappings", n, full)
}
