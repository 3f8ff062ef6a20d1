package postgres

import (
	"errors"
	"fmt"
)

// dataVersionSQL finds the tables that the views $1 read, through views
// over views (the dependencies of each view's rewrite rule), and returns
// their data versions (migration 00018) as one text: the database's key
// and oid, each view's definition and each function it calls as they are
// now (the transaction that last wrote their catalog rows: a CREATE OR
// REPLACE changes it), then each table's name and the statements that
// wrote it. It returns NULL when any relation read is not a table watched
// by the data_version trigger, firing on every kind of write at statement
// level (a table of an operator's own views without it, a materialized
// view, a foreign or partitioned table): a version that could stay the
// same over a change is no version. Each step is an index lookup.
const dataVersionSQL = `WITH RECURSIVE reads(oid) AS (
    SELECT unnest($1::text[]::regclass[])::oid
  UNION
    SELECT unnest(ARRAY(
        SELECT DISTINCT d.refobjid FROM pg_rewrite w
        JOIN pg_depend d ON d.classid = 'pg_rewrite'::regclass AND d.objid = w.oid
        WHERE w.ev_class = r.oid AND d.refclassid = 'pg_class'::regclass AND d.refobjid <> r.oid))
    FROM reads r
), rules AS (
    SELECT w.oid, w.ev_class, w.xmin::text AS written
    FROM reads r CROSS JOIN LATERAL (SELECT oid, ev_class, xmin FROM pg_rewrite WHERE ev_class = r.oid OFFSET 0) w
), calls AS (
    SELECT DISTINCT p.oid, p.xmin::text AS written
    FROM rules w
    JOIN pg_depend d ON d.classid = 'pg_rewrite'::regclass AND d.objid = w.oid AND d.refclassid = 'pg_proc'::regclass
    JOIN pg_proc p ON p.oid = d.refobjid
), read AS (
    SELECT c.relname, c.relkind = 'r' AND EXISTS (
        SELECT 1 FROM pg_trigger t
        WHERE t.tgrelid = c.oid AND t.tgname = 'data_version'
          AND t.tgfoid = 'data_version_bump()'::regprocedure
          AND t.tgenabled IN ('O', 'A') AND t.tgtype & 61 = 60) AS watched
    FROM reads r
    CROSS JOIN LATERAL (SELECT oid, relname, relkind FROM pg_class WHERE oid = r.oid OFFSET 0) c
    WHERE c.relkind <> 'v'
), sums AS (
    SELECT table_name, sum(statements) AS statements FROM data_changes GROUP BY table_name
)
SELECT CASE WHEN bool_and(watched) THEN
    (SELECT key FROM data_version_key) || ' ' ||
    (SELECT oid::text FROM pg_database WHERE datname = current_database()) || ' views ' ||
    (SELECT string_agg(ev_class::text || ':' || written, ',' ORDER BY ev_class, oid) FROM rules) || ' calls ' ||
    coalesce((SELECT string_agg(oid::text || ':' || written, ',' ORDER BY oid) FROM calls), '') || ' ' ||
    string_agg(read.relname || '=' || coalesce(sums.statements, 0)::text, ' ' ORDER BY read.relname)
END
FROM read LEFT JOIN sums ON sums.table_name = read.relname`

// ErrNoDataVersion is the cause of [Snapshot.DataVersion]'s error when the
// views read a relation whose writes no data version follows.
var ErrNoDataVersion = errors.New("the views read a relation whose writes no data version follows")

// DataVersion returns, in s's snapshot, a text that changes whenever
// anything the views named views read changes: every table they read,
// through other views too, with the number of statements that have
// written it (migration 00018), and the views' and their functions'
// definitions. A function that reads a table itself is not followed into
// it. Two snapshots of one database that return
// the same text see the same rows of those views. It fails with
// [ErrNoDataVersion] when the views read a relation that is not a table
// with the data_version trigger (the views of an operator's own tables,
// say), and with the database's error otherwise (failure.Unavailable for
// a connection's).
func (s *Snapshot) DataVersion(views []string) (string, error) {
	var v *string
	if err := s.QueryRow(dataVersionSQL, []any{views}, &v); err != nil {
		return "", fmt.Errorf("data version: %w", err)
	}
	if v == nil {
		return "", ErrNoDataVersion
	}
	return *v, nil
}
