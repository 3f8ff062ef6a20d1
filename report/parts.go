package report

import (
	"context"
	"fmt"

	"github.com/informe/informe/internal/failure"
	"github.com/informe/informe/internal/postgres"
)

// Parts says how [Store.ExportParts] may split a whole export.
type Parts struct {
	// Max is the most connections the export may read through at once; 1
	// or less reads through one.
	Max int
	// MinRows is the fewest rows worth a part of their own: an export of
	// fewer than 2*MinRows rows is read through one connection.
	MinRows int64
}

// ExportParts is [Store.Export] read through up to p.Max connections at
// once, all in one REPEATABLE READ, READ ONLY snapshot: the first
// connection exports its snapshot (pg_export_snapshot) and counts, the
// others import it (SET TRANSACTION SNAPSHOT) before the first holds
// nothing else open. Each cursor reads one range of contracts, split by
// the maintained counts so that the parts hold about the same number of
// rows; read one after the other, in the order returned, they give the
// rows [Store.Export] gives, in the same order. Every cursor's Page is
// the whole export's.
//
// Only an unfiltered export with maintained counts is split (a filtered
// one is small, and its count is no index of where rows are); so is
// nothing on a server that cannot export a snapshot: then, and for
// exports under 2*p.MinRows rows, ExportParts returns one cursor, from
// [Store.Export]. On failure, every cursor opened is closed.
func (s *Store) ExportParts(ctx context.Context, q Query, p Parts) (_ []*Cursor, err error) {
	if p.Max <= 1 || q.Filtered() || s.counting != Maintained {
		return s.one(ctx, q)
	}
	first, err := postgres.Begin(ctx, s.pool)
	if err != nil {
		return nil, err
	}
	snaps := []*postgres.Snapshot{first}
	defer func() {
		if err != nil {
			for _, s := range snaps {
				s.Close()
			}
		}
	}()
	id, err := first.Export()
	if err != nil {
		if failure.CodeOf(err) != failure.Internal || ctx.Err() != nil {
			return nil, err
		}
		// This server cannot export a snapshot (a pooler, an old
		// standby): its transaction is aborted; read through one.
		first.Close()
		snaps = nil
		return s.one(ctx, q)
	}
	page := Page{CurrentPage: 1}
	if err := s.count(first, q, &page); err != nil {
		return nil, err
	}
	k := int64(p.Max)
	if p.MinRows > 0 {
		k = min(k, page.Total/p.MinRows)
	}
	bounds, err := split(first, page.Total, max(k, 1))
	if err != nil {
		return nil, err
	}
	for range bounds {
		snap, err := postgres.BeginAt(ctx, s.pool, id)
		if err != nil {
			return nil, err
		}
		snaps = append(snaps, snap)
	}
	cols := q.columns()
	curs := make([]*Cursor, 0, len(snaps))
	defer func() {
		if err != nil {
			for _, c := range curs {
				c.Close()
			}
			snaps = snaps[len(curs):]
		}
	}()
	for i, snap := range snaps {
		// Each part is one of several backends reading at once: parallel
		// workers under each would only contend with the others for the
		// machine, and copy every row once more through a Gather Merge.
		if len(snaps) > 1 {
			if err := snap.Serial(); err != nil {
				return nil, fmt.Errorf("report: part %d: %w", i+1, err)
			}
		}
		sql, args := selectFrom(cols), []any(nil)
		switch {
		case len(bounds) == 0:
		case i == 0:
			sql, args = sql+" WHERE key_contract_id < $1", []any{bounds[0]}
		case i == len(bounds):
			sql, args = sql+" WHERE key_contract_id >= $1", []any{bounds[i-1]}
		default:
			sql, args = sql+" WHERE key_contract_id >= $1 AND key_contract_id < $2", []any{bounds[i-1], bounds[i]}
		}
		cur, err := snap.Query(sql+order, args)
		if err != nil {
			return nil, fmt.Errorf("report: part %d: %w", i+1, err)
		}
		curs = append(curs, &Cursor{Cursor: cur, page: page})
	}
	return curs, nil
}

// one returns the single cursor of [Store.Export].
func (s *Store) one(ctx context.Context, q Query) ([]*Cursor, error) {
	cur, err := s.Export(ctx, q)
	if err != nil {
		return nil, err
	}
	return []*Cursor{cur}, nil
}

// split returns the first contracts of parts 2..k of total rows: the
// contracts holding rows total*i/k, without repeats (a contract is never
// split, so a large one makes fewer parts).
func split(snap *postgres.Snapshot, total, k int64) ([]int64, error) {
	var bounds []int64
	for i := int64(1); i < k; i++ {
		var contract, firstRow int64
		err := snap.QueryRow("SELECT contract_id, first_row FROM report_contract_at($1)", []any{total * i / k}, &contract, &firstRow)
		if err != nil {
			return nil, fmt.Errorf("report: split: %w", err)
		}
		if firstRow == 0 || (len(bounds) > 0 && contract == bounds[len(bounds)-1]) {
			continue
		}
		bounds = append(bounds, contract)
	}
	return bounds, nil
}
