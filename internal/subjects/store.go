package subjects

import (
	"context"
	"encoding/csv"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/informe/informe/internal/dataset"
	"github.com/informe/informe/internal/failure"
	"github.com/informe/informe/internal/postgres"
	"github.com/informe/informe/internal/rut"
)

// Block holds back the personal data of the person of r (as client, as
// payer, as user) from the next request on, for reason, and records that
// actor did it. Blocking a blocked RUT again replaces its reason.
func Block(ctx context.Context, pool *pgxpool.Pool, r rut.RUT, reason, actor string) error {
	if reason == "" {
		return &failure.Error{Code: failure.Invalid, Target: "reason", Reason: "reason_empty", Message: "a block needs a reason"}
	}
	return pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		if err := postgres.BlockSubject(ctx, tx, r.Key(), reason, actor); err != nil {
			return fmt.Errorf("block: %w", err)
		}
		return event(ctx, tx, r, "block", reason, actor)
	})
}

// Unblock releases the person of r and records that actor did it. A RUT
// that is not blocked is failure.NotFound.
func Unblock(ctx context.Context, pool *pgxpool.Pool, r rut.RUT, actor string) error {
	return pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		removed, err := postgres.UnblockSubject(ctx, tx, r.Key())
		if err != nil {
			return fmt.Errorf("unblock: %w", err)
		}
		if removed == 0 {
			return &failure.Error{Code: failure.NotFound, Target: "rut", Reason: "not_blocked", Message: "that RUT is not blocked"}
		}
		return event(ctx, tx, r, "unblock", "", actor)
	})
}

func event(ctx context.Context, tx pgx.Tx, r rut.RUT, action, reason, actor string) error {
	if err := postgres.RecordSubjectEvent(ctx, tx, r.Key(), action, reason, actor); err != nil {
		return fmt.Errorf("%s: record: %w", action, err)
	}
	return nil
}

// Blocked is one block, as [List] reads it.
type Blocked struct {
	RUT    rut.RUT
	Reason string
	By     string
	At     time.Time
}

// List returns the blocks in force, in the order of their RUTs.
func List(ctx context.Context, pool *pgxpool.Pool) ([]Blocked, error) {
	blocks, err := postgres.SubjectBlocks(ctx, pool)
	if err != nil {
		return nil, fmt.Errorf("list: %w", err)
	}
	var out []Blocked
	for _, b := range blocks {
		key := b.Key
		body, _ := strconv.Atoi(key[:len(key)-1])
		out = append(out, Blocked{RUT: rut.RUT{Body: body, Check: key[len(key)-1]}, Reason: b.Reason, By: b.By, At: b.At})
	}
	return out, nil
}

// WriteList writes blocks as CSV with a header: rut, reason, blocked_by,
// blocked_at.
func WriteList(w io.Writer, blocks []Blocked) error {
	c := csv.NewWriter(w)
	c.Write([]string{"rut", "reason", "blocked_by", "blocked_at"})
	for _, b := range blocks {
		c.Write([]string{b.RUT.Dotted(), b.Reason, b.By, b.At.UTC().Format(time.RFC3339)})
	}
	c.Flush()
	return c.Error()
}

// Resolve returns the set of the ids the person of r is known by: the
// clients of that RUT (in clients, or as recorded on a contract), their
// contracts, the contracts whose recorded payer it is, the users of that
// RUT and their names. A [Set] a response carried meets it ([Set.Meets])
// when the response carried that person's personal values.
func Resolve(ctx context.Context, pool *pgxpool.Pool, r rut.RUT) (*Set, error) {
	ids, err := postgres.SubjectIDsOf(ctx, pool, r.Key())
	if err != nil {
		return nil, fmt.Errorf("resolve: %w", err)
	}
	c := NewCollector()
	for _, id := range ids.Clients {
		c.Carry(dataset.ClientID, id)
	}
	for _, id := range ids.ClientContracts {
		c.Carry(dataset.ClientContractID, id)
	}
	for _, id := range ids.Payers {
		c.Carry(dataset.PayerContractID, id)
	}
	for _, id := range ids.Users {
		c.Carry(dataset.UserID, id)
	}
	for _, n := range ids.Names {
		c.CarryName([]byte(n))
	}
	return c.Set(), nil
}

// Report writes, as CSV with a header, every response recorded in
// audit_records since since (the zero time for all) whose subjects met
// the person of r: when it started and ended (empty: it never finished),
// its request id, to whom, from where, through which path and dataset,
// which personal columns it sent, and how it ended. A response that never
// finished (its instance killed) and could carry personal columns is
// named too, as "unfinished: may have carried": whose data it carried is
// written only at a response's end. Records are read in the order they
// started.
func Report(ctx context.Context, pool *pgxpool.Pool, r rut.RUT, since time.Time, w io.Writer) error {
	person, err := Resolve(ctx, pool, r)
	if err != nil {
		return err
	}
	c := csv.NewWriter(w)
	c.Write([]string{"started_at", "ended_at", "request_id", "principal", "client_address", "path", "dataset", "columns", "outcome"})
	if person.Len() == 0 {
		c.Flush()
		return c.Error()
	}
	var undecoded error // a record's subjects that could not be decoded
	err = postgres.SubjectRecords(ctx, pool, since, func(rec postgres.SubjectRecord) error {
		started, ended, id, principal, addr, path, ds, cols, outcome, enc := rec.Started, rec.Ended, rec.RequestID,
			rec.Principal, rec.ClientAddress, rec.Path, rec.Dataset, rec.Columns, rec.Outcome, rec.Subjects
		personal := personalColumns(ds, cols)
		if enc == nil {
			// A response that never finished: whose data it carried was
			// to be written at its end. One that could carry personal
			// columns is named, as one that may have carried the person.
			if personal == "" {
				return nil
			}
			outcome = "unfinished: may have carried"
		} else if carried, err := Decode(enc); err != nil {
			undecoded = fmt.Errorf("report: record %s: %w", id, err)
			return undecoded
		} else if !carried.Meets(person) {
			return nil
		}
		end := ""
		if ended != nil {
			end = ended.UTC().Format(time.RFC3339Nano)
		}
		c.Write([]string{started.UTC().Format(time.RFC3339Nano), end, id, principal, addr, path, ds, personal, outcome})
		return nil
	})
	if undecoded != nil {
		return undecoded
	}
	if err != nil {
		return fmt.Errorf("report: %w", err)
	}
	c.Flush()
	return c.Error()
}

// personalColumns returns those of cols (comma-separated, as a record
// keeps them) that are personal in one of the datasets named in ds.
func personalColumns(ds, cols string) string {
	var out []string
	for _, name := range strings.Split(cols, ",") {
		for _, dn := range strings.Split(ds, ",") {
			d := dataset.Named(dn)
			if d == nil {
				continue
			}
			if i := slices.IndexFunc(d.Columns, func(c dataset.Column) bool { return c.Name == name }); i >= 0 && d.Columns[i].Personal != dataset.NotPersonal {
				out = append(out, name)
				break
			}
		}
	}
	return strings.Join(out, ",")
}
