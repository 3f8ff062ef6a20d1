package postgres

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
)

// resolveSQL finds the relations that the views $1 read, through views
// over views (the dependencies of each view's rewrite rule): the views'
// rules, the functions they call, the tables (names and oids) and whether
// every one is a table watched by the data_version trigger (migration
// 00018), firing on every kind of write at statement level (not a table
// of an operator's own views without it, a materialized view, a foreign
// or partitioned table): a version that could stay the same over a change
// is no version. Each step is an index lookup.
const resolveSQL = `WITH RECURSIVE reads(oid) AS (
    SELECT unnest($1::text[]::regclass[])::oid
  UNION
    SELECT unnest(ARRAY(
        SELECT DISTINCT d.refobjid FROM pg_rewrite w
        JOIN pg_depend d ON d.classid = 'pg_rewrite'::regclass AND d.objid = w.oid
        WHERE w.ev_class = r.oid AND d.refclassid = 'pg_class'::regclass AND d.refobjid <> r.oid))
    FROM reads r
), rules AS (
    SELECT w.oid, w.ev_class
    FROM reads r CROSS JOIN LATERAL (SELECT oid, ev_class FROM pg_rewrite WHERE ev_class = r.oid OFFSET 0) w
), calls AS (
    SELECT DISTINCT p.oid
    FROM rules w
    JOIN pg_depend d ON d.classid = 'pg_rewrite'::regclass AND d.objid = w.oid AND d.refclassid = 'pg_proc'::regclass
    JOIN pg_proc p ON p.oid = d.refobjid
), read AS (
    SELECT c.oid, c.relname, c.relkind = 'r' AND EXISTS (
        SELECT 1 FROM pg_trigger t
        WHERE t.tgrelid = c.oid AND t.tgname = 'data_version'
          AND t.tgfoid = 'data_version_bump()'::regprocedure
          AND t.tgenabled IN ('O', 'A') AND t.tgtype & 61 = 60) AS watched
    FROM reads r
    CROSS JOIN LATERAL (SELECT oid, relname, relkind FROM pg_class WHERE oid = r.oid OFFSET 0) c
    WHERE c.relkind <> 'v'
)
SELECT ARRAY(SELECT oid FROM rules ORDER BY oid)::oid[], ARRAY(SELECT oid FROM calls ORDER BY oid)::oid[],
    ARRAY(SELECT relname::text FROM read ORDER BY relname)::text[], ARRAY(SELECT oid FROM read ORDER BY relname)::oid[],
    coalesce((SELECT bool_and(watched) FROM read), true)`

// versionSQL is a version of the relations [resolveSQL] found: the
// database's key and oid; the definitions of the views' rules and of the
// functions they call, and the data_version triggers of the tables, as
// they are now (each row's xmin: the transaction that last wrote it), the
// fingerprint that tells whether what was found still holds; then each
// table's name and the statements that wrote it. Each part is an index
// lookup, or a scan of data_changes' few rows. Its %[1]s to %[4]s are the
// resolution's rules, calls, tables and tables' oids, written into the
// text by [resolution.versionSQL]: a statement without parameters keeps
// one plan per connection, where one with array parameters was planned
// again at every read.
const versionSQL = `SELECT
    coalesce((SELECT string_agg(ev_class::text || ':' || oid::text || ':' || xmin::text, ',' ORDER BY oid) FROM pg_rewrite WHERE oid = ANY(%[1]s::oid[])), '')
    || ' calls ' || coalesce((SELECT string_agg(oid::text || ':' || xmin::text, ',' ORDER BY oid) FROM pg_proc WHERE oid = ANY(%[2]s::oid[])), '')
    || ' triggers ' || coalesce((SELECT string_agg(tgrelid::text || ':' || xmin::text || ':' || tgenabled::text, ',' ORDER BY tgrelid) FROM pg_trigger
        WHERE tgrelid = ANY(%[4]s::oid[]) AND tgname = 'data_version'), ''),
    (SELECT key FROM data_version_key) || ' ' ||
    (SELECT oid::text FROM pg_database WHERE datname = current_database()) || ' ' ||
    coalesce((SELECT string_agg(t.name || '=' || t.statements::text, ' ' ORDER BY t.name) FROM (
        SELECT n.name, coalesce(sum(d.statements), 0) AS statements
        FROM unnest(%[3]s::text[]) n(name) LEFT JOIN data_changes d ON d.table_name = n.name GROUP BY n.name) t), '')`

// resolution is what [resolveSQL] found for a list of views, and the
// fingerprint [versionSQL] gave right after, in the same snapshot.
type resolution struct {
	rules, calls, tableOIDs []uint32
	tables                  []string
	watched                 bool
	fingerprint             string
	version                 string // versionSQL with these values
}

// versionSQL returns [versionSQL] with r's values. Its arrays are
// literals (oids, and names quoted as literals), never text a client
// gave.
func (r *resolution) versionSQL() string {
	oids := func(ids []uint32) string {
		s := make([]string, len(ids))
		for i, id := range ids {
			s[i] = strconv.FormatUint(uint64(id), 10)
		}
		return "'{" + strings.Join(s, ",") + "}'"
	}
	names := make([]string, len(r.tables))
	for i, t := range r.tables {
		names[i] = quoteLiteral(t)
	}
	return fmt.Sprintf(versionSQL, oids(r.rules), oids(r.calls), "ARRAY["+strings.Join(names, ", ")+"]::text[]", oids(r.tableOIDs))
}

// resolved keeps, per list of views, what they read: finding it walks the
// catalogs (a few milliseconds of planning and reading), where checking
// that it still holds is three index lookups. A stale entry (a view
// replaced, a trigger disabled, another database of the same names) shows
// as another fingerprint, and is found again.
var resolved sync.Map // strings.Join(views, "\x00") -> *resolution

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
	key := strings.Join(views, "\x00")
	r, _ := resolved.Load(key)
	res, _ := r.(*resolution)
	for {
		fresh := res == nil
		if fresh {
			res = &resolution{}
			if err := s.QueryRow(resolveSQL, []any{views}, &res.rules, &res.calls, &res.tables, &res.tableOIDs, &res.watched); err != nil {
				return "", fmt.Errorf("data version: %w", err)
			}
			res.version = res.versionSQL()
		}
		var fingerprint, version string
		if err := s.QueryRow(res.version, nil, &fingerprint, &version); err != nil {
			return "", fmt.Errorf("data version: %w", err)
		}
		switch {
		case fresh:
			res.fingerprint = fingerprint
			resolved.Store(key, res)
		case fingerprint != res.fingerprint:
			res = nil // what the views read has changed: find it again
			continue
		}
		if !res.watched {
			return "", ErrNoDataVersion
		}
		return fingerprint + " " + version, nil
	}
}
