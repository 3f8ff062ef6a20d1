package source_test

import (
	"slices"
	"testing"

	"github.com/informe/informe/internal/dataset"
	"github.com/informe/informe/internal/source"
)

// TestMaskGaps checks that a mask is said to be given away by a column
// beside it that holds the same person's value of the same kind, read as
// it is, and by no other column.
func TestMaskGaps(t *testing.T) {
	const rutGap = "general-report: rut_client_contract holds the client's rut as client_rut does, and is not masked"
	for _, tt := range []struct {
		name  string
		rules *dataset.Rules
		want  []string
	}{
		{"none", nil, nil},
		{"client rut alone", &dataset.Rules{Mask: []string{"client_rut"}}, []string{rutGap}},
		{"both of the client's ruts", &dataset.Rules{Mask: []string{"client_rut", "rut_client_contract"}}, nil},
		{"the other not read", &dataset.Rules{Columns: []string{"contract_id", "client_rut"}, Mask: []string{"client_rut"}}, nil},
		{"no personal data read", &dataset.Rules{NoPersonal: true, Mask: []string{"client_rut"}}, nil},
		// The payer's RUT is another person's: masking it says nothing
		// of the client's.
		{"the payer's rut", &dataset.Rules{Mask: []string{"rut_payer_contract"}}, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := source.MaskGaps(tt.rules)
			for _, w := range tt.want {
				if !slices.Contains(got, w) {
					t.Errorf("MaskGaps = %q, want it to hold %q", got, w)
				}
			}
			if tt.want == nil && slices.ContainsFunc(got, func(g string) bool { return g == rutGap }) {
				t.Errorf("MaskGaps = %q, want no gap of the client's rut", got)
			}
			if tt.rules == nil && got != nil {
				t.Errorf("MaskGaps(nil) = %q", got)
			}
		})
	}
}
