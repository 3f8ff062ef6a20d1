package postgres

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// countedTables are the tables whose rows decide how many rows
// general_report_typed has; the report_rows_* triggers watch them.
var countedTables = []string{"contracts", "processes", "tasks"}

// lookupTables are the tables general_report_typed joins at most one row of per
// contract (its client, service and benefit centre): they add no rows.
var lookupTables = []string{"clients", "services", "benefit_centers"}

// countingTriggers are the triggers each counted table must have: the
// event each fires on (a pg_trigger.tgtype bit) and the function it runs.
var countingTriggers = []struct {
	name, event string
	bit         int16
	fn          func(table string) string
}{
	{"report_rows_ins", "inserts into", 1 << 2, onTable},
	{"report_rows_upd", "updates of", 1 << 4, onTable},
	{"report_rows_del", "deletes from", 1 << 3, onTable},
	{"report_rows_truncate", "truncates of", 1 << 5, func(string) string { return "report_rows_on_truncate()" }},
}

func onTable(table string) string { return "report_rows_on_" + table + "()" }

// countingObjects are the counter tables, the functions that keep them and
// the functions informe reads them with.
var countingObjects = []struct{ kind, name, lookup string }{
	{"table", "report_contract_rows", "to_regclass"},
	{"table", "report_bucket_rows", "to_regclass"},
	{"function", "report_rows_refresh(bigint[])", "to_regprocedure"},
	{"function", "report_rows_rebuild()", "to_regprocedure"},
	{"function", "report_bucket_width()", "to_regprocedure"},
	{"function", "report_bucket(bigint)", "to_regprocedure"},
	{"function", "report_rows_total()", "to_regprocedure"},
	{"function", "report_contract_at(bigint)", "to_regprocedure"},
}

// What to do, ending each message of CheckReportCounting.
const (
	fixMigrate = "; run informe migrate, or serve with --report-counts=view"
	fixView    = "; serve with --report-counts=view"
	// A trigger dropped or disabled after the migrations ran: migrate,
	// which runs each migration once, would not bring it back.
	fixTrigger = "; restore the trigger as migration 00002 creates it and recount with " +
		"SELECT report_rows_rebuild(), or serve with --report-counts=view"
)

// CheckReportCounting checks, as far as the catalogs can tell, that the row
// counts informe's triggers keep (migrations 00002 and 00003) are the row
// counts of the general_report_typed view, which informe reads the
// report's rows from:
//
//   - the counter tables and their functions exist;
//   - general_report_typed is a view that reads the tables contracts, processes
//     and tasks and, besides them, only the to-one lookups clients, services
//     and benefit_centers;
//   - each of those three tables has informe's report_rows_ins,
//     report_rows_upd, report_rows_del and report_rows_truncate triggers,
//     statement-level, and enabled for ordinary sessions.
//
// It only reads the catalogs, in one READ ONLY transaction, so it works on
// a hot standby too. It returns nil when all holds; an error whose message
// says what is wrong and what to do (run informe migrate, or serve with
// --report-counts=view) when something does not; and a database error,
// wrapped and classified as by [Classify], when the catalogs cannot be read.
func CheckReportCounting(ctx context.Context, pool *pgxpool.Pool) error {
	tx, err := pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return Classify(fmt.Errorf("report counts: begin: %w", err))
	}
	defer tx.Rollback(context.WithoutCancel(ctx))
	problem, err := countingProblem(ctx, tx)
	if err != nil {
		return Classify(fmt.Errorf("report counts: %w", err))
	}
	if problem != "" {
		return errors.New("report counts: " + problem)
	}
	return nil
}

// countingProblem returns what makes the maintained counts wrong, and what
// to do about it, or "" when nothing it can see does.
func countingProblem(ctx context.Context, tx pgx.Tx) (string, error) {
	for _, o := range countingObjects {
		var exists bool
		if err := tx.QueryRow(ctx, "SELECT "+o.lookup+"($1) IS NOT NULL", o.name).Scan(&exists); err != nil {
			return "", err
		}
		if !exists {
			return fmt.Sprintf("%s %s does not exist: the database lacks informe's report row counts%s",
				o.kind, o.name, fixMigrate), nil
		}
	}

	var kind string
	err := tx.QueryRow(ctx, `SELECT relkind::text FROM pg_class WHERE oid = to_regclass('general_report_typed')`).Scan(&kind)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return "general_report_typed does not exist" + fixMigrate, nil
	case err != nil:
		return "", err
	case kind != "v":
		return "general_report_typed is not a view, so informe cannot tell which rows it holds" + fixView, nil
	}

	// The relations the view's query reads are what its rewrite rule
	// depends on: each table or view named in its FROM clause.
	type relation struct {
		oid         uint32
		name, shown string // relname, and the name as the search path shows it
	}
	rows, err := tx.Query(ctx, `
		WITH reads(oid) AS (
			SELECT d.refobjid
			FROM pg_rewrite r
			JOIN pg_depend d ON d.classid = 'pg_rewrite'::regclass AND d.objid = r.oid
			                AND d.refclassid = 'pg_class'::regclass
			WHERE r.ev_class = to_regclass('general_report_typed') AND r.rulename = '_RETURN'
			  AND d.refobjid <> r.ev_class
		)
		SELECT DISTINCT c.oid, c.relname::text, c.oid::regclass::text
		FROM reads JOIN pg_class c ON c.oid = reads.oid
		ORDER BY 3`)
	if err != nil {
		return "", err
	}
	var counted []relation
	var others []string
	var rel relation
	_, err = pgx.ForEachRow(rows, []any{&rel.oid, &rel.name, &rel.shown}, func() error {
		switch {
		case slices.Contains(countedTables, rel.name):
			counted = append(counted, rel)
		case !slices.Contains(lookupTables, rel.name):
			others = append(others, rel.shown)
		}
		return nil
	})
	if err != nil {
		return "", err
	}
	if len(others) > 0 {
		return fmt.Sprintf("the general_report_typed view reads %s, whose rows informe does not count "+
			"(it counts the rows of contracts, processes and tasks)%s", strings.Join(others, ", "), fixView), nil
	}
	for _, t := range countedTables {
		if !slices.ContainsFunc(counted, func(r relation) bool { return r.name == t }) {
			return fmt.Sprintf("the general_report_typed view does not read table %s, "+
				"so informe's row counts are not its rows%s", t, fixView), nil
		}
	}

	for _, r := range counted {
		for _, trg := range countingTriggers {
			var enabled string
			var ours bool
			// tgtype bits: 1 row-level, 2 before, 64 instead of.
			err := tx.QueryRow(ctx, `
				SELECT tgenabled::text,
				       tgtype & (1 | 2 | 64) = 0 AND tgtype & $3::int2 <> 0
				       AND tgfoid = coalesce(to_regprocedure($4), 0)
				FROM pg_trigger WHERE tgrelid = $1 AND tgname = $2`,
				r.oid, trg.name, trg.bit, trg.fn(r.name)).Scan(&enabled, &ours)
			switch {
			case errors.Is(err, pgx.ErrNoRows):
				return fmt.Sprintf("table %s has no %s trigger (the general_report_typed view reads tables "+
					"whose row counts informe does not maintain)%s", r.shown, trg.name, fixTrigger), nil
			case err != nil:
				return "", err
			case !ours:
				return fmt.Sprintf("trigger %s on table %s is not informe's: it must run %s after each "+
					"statement, for %s the table%s", trg.name, r.shown, trg.fn(r.name), trg.event, fixTrigger), nil
			case enabled == "D":
				return fmt.Sprintf("trigger %s on table %s is disabled, so informe's row counts miss %s it%s",
					trg.name, r.shown, trg.event, fixTrigger), nil
			case enabled == "R":
				// ENABLE REPLICA TRIGGER: it fires only in sessions with
				// session_replication_role = replica.
				return fmt.Sprintf("trigger %s on table %s fires only in replica sessions, "+
					"so informe's row counts miss ordinary %s it%s", trg.name, r.shown, trg.event, fixTrigger), nil
			}
		}
	}
	return "", nil
}
