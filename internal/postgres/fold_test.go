package postgres_test

import (
	"context"
	"testing"

	"github.com/informe/informe/internal/pgserver/pgtest"
)

// TestFold checks informe_fold, the function behind $filter's
// Informe.fold: capitals and the accents of Latin letters go, on a cluster
// in the C locale as the tests and the demo make theirs; what is no
// accented letter stays; null stays null.
func TestFold(t *testing.T) {
	t.Parallel()
	pool := pgtest.New(t)
	ctx := context.Background()
	for _, tt := range []struct{ name, in, want string }{
		{"Spanish", "ÁÉÍÓÚÜÑ áéíóúüñ", "aeiouun aeiouun"},
		{"Names", "Núñez Valparaíso Ñuble MAR Güemes", "nunez valparaiso nuble mar guemes"},
		{"Latin1", "ÀÂÃÄÅÇÈÊËÌÎÏÒÔÕÖØÙÛÝ àâãäåçèêëìîïòôõöøùûýÿ", "aaaaaceeeiiiooooouuy aaaaaceeeiiiooooouuyy"},
		{"ExtendedA", "ĀăĄčĎđĘěĞĪİŁłŃňŐřŚşŠŤŮűŹżŽ", "aaacddeegiillnnorssstuuzzz"},
		{"Romanian", "ȘșȚț", "sstt"},
		{"Decomposed", "Nu\u0303n\u0303ez Valparai\u0301so", "nunez valparaiso"},
		{"Kept", "æ œ ß þ 12.500,5 – 'x'", "æ œ ß þ 12.500,5 – 'x'"},
		{"ASCII", "CT-2024-000010", "ct-2024-000010"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var got string
			if err := pool.QueryRow(ctx, "SELECT informe_fold($1)", tt.in).Scan(&got); err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("informe_fold(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
	var null *string
	if err := pool.QueryRow(ctx, "SELECT informe_fold(NULL)").Scan(&null); err != nil || null != nil {
		t.Errorf("informe_fold(NULL) = %v, %v; want NULL", null, err)
	}
	var vol string
	if err := pool.QueryRow(ctx, "SELECT provolatile FROM pg_proc WHERE proname = 'informe_fold'").Scan(&vol); err != nil || vol != "i" {
		t.Errorf("informe_fold's volatility %q, %v; want i (IMMUTABLE)", vol, err)
	}
}
