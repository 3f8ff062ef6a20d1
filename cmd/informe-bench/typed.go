package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/informe/informe/internal/dataset"
	"github.com/informe/informe/internal/postgres"
)

// rendered returns sql, a statement informe runs on the report's typed
// view, on its text view instead: the same rows, the same key columns, each
// value rendered by PostgreSQL as informe sends it. COPY of it is what
// PostgreSQL alone takes to give the text informe gives.
func rendered(sql string) string {
	return strings.ReplaceAll(sql, "general_report_typed", "general_report")
}

// typed measures the whole report as CSV from the current informe and
// from the first baseline, from a fresh process each, next to psql's \copy of the
// rendered view in the report's order, interleaved: how fast informe is next
// to PostgreSQL's own COPY, and what each informe costs PostgreSQL a row.
func (b *bench) typed(ctx context.Context) error {
	set, err := b.exports(ctx)
	if err != nil {
		return err
	}
	all := set.all
	sql := postgres.SelectOrdered("general_report", dataset.Names(dataset.GeneralReport.Columns), dataset.GeneralReport.Keys)
	var copied samples
	copyStep := func(ctx context.Context) error {
		s, err := timed(psql(ctx, b.dbURL, postgres.PsqlCopyCSV(sql)))
		copied = append(copied, s)
		return err
	}
	logf("typed: the whole report (%d rows) as CSV from %d informes and psql \\copy, %d rounds", all.rows, len(b.guarded()), b.o.exportRuns)
	if _, err := copyOnce(ctx, b.pool, copySQL(sql), all.rows); err != nil { // warms the cache
		return err
	}
	var ss []*informe
	for _, l := range b.guarded() {
		s, err := b.session(ctx, l, "csv export, "+l.label, set.warm.path("csv"), all.path("csv"), all.rows)
		if err != nil {
			stopAll(ss)
			return err
		}
		ss = append(ss, s)
	}
	if err := measureAll(ctx, b.o.exportRuns, ss, copyStep); err != nil {
		return err
	}
	t := table{title: "Go writes the text", header: []string{"export", "rows", "bytes", "wall s", "min-max ms", "rows/s", "x psql \\copy",
		"CPU s", "PG CPU s", "PG CPU µs/row"},
		notes: []string{
			fmt.Sprintf("the whole report as CSV over HTTP, each informe a fresh process, and psql's \\copy of the 74 columns of general_report in the key's order, as CSV with a header, to its standard output, its start-up included; %d rounds interleaved; medians", b.o.exportRuns),
			"CPU s: informe's; PG CPU s: its backends' (/proc schedstat), mean per export",
		}}
	t.add("psql \\copy of the rendered view", all.rows, copied.bytes(), fmt.Sprintf("%.3f", copied.wall().Seconds()), copied.spread(),
		fmt.Sprintf("%.0f", float64(all.rows)/copied.wall().Seconds()), "1.00", "-", "-", "-")
	for i, s := range ss {
		perRow := s.ss.pgCPU() / float64(all.rows) * 1e6
		t.add("csv export, "+b.launchers[i].label, all.rows, s.ss.bytes(), fmt.Sprintf("%.3f", s.ss.wall().Seconds()), s.ss.spread(),
			fmt.Sprintf("%.0f", float64(all.rows)/s.ss.wall().Seconds()), fmt.Sprintf("%.2f", copied.wall().Seconds()/s.ss.wall().Seconds()),
			fmt.Sprintf("%.2f", s.ss.cpu()), fmt.Sprintf("%.2f", s.ss.pgCPU()), fmt.Sprintf("%.2f", perRow))
	}
	cur := ss[0].ss
	b.res.check("typed-copy", "csv export, whole report", copied.wall().Seconds()/cur.wall().Seconds(), "%.2f vs %.2f s", cur.wall().Seconds(), copied.wall().Seconds())
	if len(ss) > 1 {
		base := ss[1].ss
		b.res.check("typed-pg-cpu", "csv export, whole report", cur.pgCPU()/base.pgCPU(), "%.2f vs %.2f µs a row (%s)",
			cur.pgCPU()/float64(all.rows)*1e6, base.pgCPU()/float64(all.rows)*1e6, b.launchers[1].label)
	}
	b.res.tables = append(b.res.tables, t)
	return nil
}

// guarded returns the current informe and the first baseline, the one the
// guards compare with: older baselines may lack what the part measures
// (whole exports, OData).
func (b *bench) guarded() []*launcher { return b.launchers[:min(2, len(b.launchers))] }
