package dataset_test

import (
	"context"
	"syscall"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/informe/informe/internal/dataset"
	"github.com/informe/informe/internal/pgserver/pgtest"
	"github.com/informe/informe/report"
)

// BenchmarkRender renders the seeded general report's rows (74 columns and
// the key parts as text), read from general_report_typed in binary format
// (pgx's default) and in text format (its exec mode, as behind PgBouncer).
// One op is one row.
func BenchmarkRender(b *testing.B) {
	pool := pgtest.SmallSeeded(b)
	d := report.Dataset(report.Maintained)
	for _, m := range []struct {
		name string
		mode pgx.QueryExecMode
	}{
		{"binary", pgx.QueryExecModeCacheStatement},
		{"text", pgx.QueryExecModeExec},
	} {
		b.Run(m.name, func(b *testing.B) {
			rows, err := pool.Query(context.Background(), selectTyped(d)+" ORDER BY t.key_contract_id, t.key_process_id, t.key_task_id", m.mode)
			if err != nil {
				b.Fatal(err)
			}
			fields := append([]pgconn.FieldDescription(nil), rows.FieldDescriptions()...)
			var all [][][]byte
			for rows.Next() {
				all = append(all, copyRow(rows.RawValues()))
			}
			rows.Close()
			if err := rows.Err(); err != nil {
				b.Fatal(err)
			}
			if len(all) == 0 {
				b.Fatal("no rows")
			}
			r, err := dataset.NewRow(d.Columns, fields)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			i := 0
			cpu := cpuTime(b)
			for b.Loop() {
				if _, err := r.Render(all[i]); err != nil {
					b.Fatal(err)
				}
				if i++; i == len(all) {
					i = 0
				}
			}
			// On a shared machine wall time says more of the neighbours
			// than of Render: the process's CPU time a row says less.
			b.ReportMetric(float64(cpuTime(b)-cpu)/float64(b.N), "cpu-ns/row")
		})
	}
}

// cpuTime returns the process's user and system CPU time in nanoseconds.
func cpuTime(b *testing.B) int64 {
	var u syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &u); err != nil {
		b.Fatal(err)
	}
	return u.Utime.Nano() + u.Stime.Nano()
}
