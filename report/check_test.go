package report_test

import (
	"context"
	"strings"
	"testing"

	"github.com/informe/informe/internal/pgserver/pgtest"
	"github.com/informe/informe/report"
)

func TestStoreCheckCounting(t *testing.T) {
	t.Parallel()
	const dropped = "report counts: table tasks has no report_rows_del trigger"
	for _, tt := range []struct {
		name     string
		counting report.Counting
		setup    string
		want     string // the start of the error's message; "" for none
	}{
		{"OK", report.Maintained, "", ""},
		{"ErrTriggerDropped", report.Maintained, "DROP TRIGGER report_rows_del ON tasks", dropped},
		{"ErrViewOverOtherTable", report.Maintained,
			// The counters exist, but the view reads another view, not
			// the tables they count.
			"ALTER VIEW general_report_typed RENAME TO old_report; CREATE VIEW general_report_typed AS SELECT * FROM old_report",
			"report counts: the general_report_typed view reads old_report"},
		{"FromView", report.FromView, "", ""},
		{"FromViewTriggerDropped", report.FromView, "DROP TRIGGER report_rows_del ON tasks", ""},
		{"FromViewNoCounters", report.FromView, "DROP TABLE report_contract_rows, report_bucket_rows", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			pool := pgtest.New(t)
			ctx := context.Background()
			if tt.setup != "" {
				if _, err := pool.Exec(ctx, tt.setup); err != nil {
					t.Fatal(err)
				}
			}
			err := report.CheckCounting(ctx, pool, tt.counting)
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("CheckCounting = %v, want nil", err)
			case tt.want != "" && (err == nil || !strings.HasPrefix(err.Error(), tt.want)):
				t.Fatalf("CheckCounting = %v, want an error starting %q", err, tt.want)
			case tt.want != "" && !strings.Contains(err.Error(), "--report-counts=view"):
				t.Fatalf("CheckCounting = %v, which does not point at --report-counts=view", err)
			}
		})
	}
}
