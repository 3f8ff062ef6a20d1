package report_test

import (
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/informe/informe/internal/dataset"
	"github.com/informe/informe/internal/pgserver/pgtest"
)

// TestColumnsMatchSpecAndView checks that the one column list, the spec's
// field order (docs/spec/general-report-columns.txt) and the general_report
// view agree.
func TestColumnsMatchSpecAndView(t *testing.T) {
	t.Parallel()
	spec, err := os.ReadFile("../docs/spec/general-report-columns.txt")
	if err != nil {
		t.Fatal(err)
	}
	got, want := dataset.Names(dataset.GeneralReport.Columns), strings.Fields(string(spec))
	if !slices.Equal(got, want) {
		t.Fatalf("dataset.GeneralReport.Columns = %v\nwant spec order %v", got, want)
	}

	pool := pgtest.New(t)
	view := pgtest.Columns(t, pool, "general_report")
	keys := []string{"key_contract_id", "key_process_id", "key_task_id", "key_client_id", "key_code_contract", "key_client_rut"}
	if want := append(slices.Clone(got), keys...); !slices.Equal(view, want) {
		t.Errorf("general_report columns = %v\nwant %v", view, want)
	}
}
