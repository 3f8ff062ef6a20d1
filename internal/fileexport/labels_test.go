package fileexport

import (
	"bytes"
	"context"
	"net/url"
	"path/filepath"
	"strings"
	"testing"

	"github.com/informe/informe/internal/pgserver/pgtest"
	"github.com/informe/informe/internal/postgres"
	"github.com/informe/informe/internal/source"
)

// TestLabelsAndDecimalComma checks --labels and --decimal-comma: the
// header row named as the API's header=labels&lang= names it, the
// decimal comma passed to the CSV encoder; and the plans that cannot honour them refused.
func TestLabelsAndDecimalComma(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, tt := range []struct {
		name    string
		flags   Flags
		wantErr string
	}{
		{"ErrLabelsLanguage", Flags{Output: filepath.Join(dir, "r.csv"), Labels: "fr"}, `--labels must be es or en, got "fr"`},
		{"ErrDecimalCommaWithComma", Flags{Output: filepath.Join(dir, "r.csv"), DecimalComma: true}, "--decimal-comma needs CSV with --delimiter semicolon or tab"},
		{"ErrDecimalCommaJSON", Flags{Output: filepath.Join(dir, "r.json"), DecimalComma: true}, "--decimal-comma needs CSV"},
		{"OKDecimalCommaTSV", Flags{Output: filepath.Join(dir, "r.tsv"), DecimalComma: true}, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tt.flags.Source, tt.flags.Query = reportSource, url.Values{}
			_, err := NewPlan(tt.flags)
			if tt.wantErr == "" && err != nil || tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)) {
				t.Errorf("err = %v, want %q", err, tt.wantErr)
			}
		})
	}

	store := postgres.NewStore(pgtest.SmallSeeded(t))
	for _, tt := range []struct {
		name, labels, want string
	}{
		{"Spanish", "es", "Número de servicio;Servicio;Costo del servicio"},
		{"English", "en", "Service number;Service;Service cost"},
		{"Names", "", "service_id;service;costo_servicio"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			services, err := source.Named("services", 0)
			if err != nil {
				t.Fatal(err)
			}
			p := plan(t, Flags{Source: services, Output: "-", Format: "csv", Labels: tt.labels, DecimalComma: true,
				Query: url.Values{"delimiter": {"semicolon"}, "columns": {"service_id,service,costo_servicio"}}})
			var out, errOut bytes.Buffer
			if _, err := Run(context.Background(), store, p, &out, &errOut); err != nil {
				t.Fatal(err)
			}
			header, _, _ := strings.Cut(out.String(), "\r\n")
			if header != tt.want {
				t.Errorf("header %q, want %q", header, tt.want)
			}
			if !p.csv.DecimalComma {
				t.Error("the plan's CSV has no decimal comma")
			}
		})
	}
}
