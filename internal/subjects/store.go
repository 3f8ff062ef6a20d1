package subjects

import (
	"context"
	"encoding/csv"
	"errors"
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
	"github.com/informe/informe/internal/rut"
)

// ParseRUT reads a RUT as the API does, refusing a malformed one or one
// with a wrong check digit with the API's message (failure.Invalid).
func ParseRUT(s string) (rut.RUT, error) {
	r, err := rut.Parse(s)
	if err == nil {
		return r, nil
	}
	reason := "rut_malformed"
	if errors.Is(err, rut.ErrCheckDigit) {
		reason = "rut_check_digit"
	}
	return rut.RUT{}, &failure.Error{Code: failure.Invalid, Target: "rut", Reason: reason, Message: err.Error(), Err: err}
}

// Block holds back the personal data of the person of r (as client, as
// payer, as user) from the next request on, for reason, and records that
// actor did it. Blocking a blocked RUT again replaces its reason.
func Block(ctx context.Context, pool *pgxpool.Pool, r rut.RUT, reason, actor string) error {
	if reason == "" {
		return &failure.Error{Code: failure.Invalid, Target: "reason", Reason: "reason_empty", Message: "a block needs a reason"}
	}
	return pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `INSERT INTO subject_blocks (rut_key, reason, blocked_by) VALUES ($1, $2, $3)
			ON CONFLICT (rut_key) DO UPDATE SET reason = excluded.reason, blocked_by = excluded.blocked_by, blocked_at = now()`,
			r.Key(), reason, actor); err != nil {
			return fmt.Errorf("block: %w", err)
		}
		return event(ctx, tx, r, "block", reason, actor)
	})
}

// Unblock releases the person of r and records that actor did it. A RUT
// that is not blocked is failure.NotFound.
func Unblock(ctx context.Context, pool *pgxpool.Pool, r rut.RUT, actor string) error {
	return pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `DELETE FROM subject_blocks WHERE rut_key = $1`, r.Key())
		if err != nil {
			return fmt.Errorf("unblock: %w", err)
		}
		if tag.RowsAffected() == 0 {
			return &failure.Error{Code: failure.NotFound, Target: "rut", Reason: "not_blocked", Message: "that RUT is not blocked"}
		}
		return event(ctx, tx, r, "unblock", "", actor)
	})
}

func event(ctx context.Context, tx pgx.Tx, r rut.RUT, action, reason, actor string) error {
	if _, err := tx.Exec(ctx, `INSERT INTO subject_block_events (rut_key, action, reason, actor) VALUES ($1, $2, NULLIF($3, ''), $4)`,
		r.Key(), action, reason, actor); err != nil {
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
	rows, err := pool.Query(ctx, `SELECT rut_key, reason, blocked_by, blocked_at FROM subject_blocks ORDER BY length(rut_key), rut_key`)
	if err != nil {
		return nil, fmt.Errorf("list: %w", err)
	}
	var out []Blocked
	for rows.Next() {
		var key string
		var b Blocked
		if err := rows.Scan(&key, &b.Reason, &b.By, &b.At); err != nil {
			return nil, fmt.Errorf("list: %w", err)
		}
		body, _ := strconv.Atoi(key[:len(key)-1])
		b.RUT = rut.RUT{Body: body, Check: key[len(key)-1]}
		out = append(out, b)
	}
	return out, rows.Err()
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
	var clients, clientContracts, payers, users []int64
	var names []string
	err := pool.QueryRow(ctx, `WITH client AS (
    SELECT id FROM clients WHERE rut_key(rut) = $1
    UNION SELECT client_id FROM contracts WHERE rut_key(client_rut) = $1)
SELECT ARRAY(SELECT id FROM client),
  ARRAY(SELECT k.id FROM contracts k WHERE k.client_id IN (SELECT id FROM client)),
  ARRAY(SELECT id FROM contracts WHERE rut_key(payer_rut) = $1),
  ARRAY(SELECT id FROM users WHERE rut_key(rut) = $1),
  ARRAY(SELECT name FROM users WHERE rut_key(rut) = $1)`, r.Key()).Scan(&clients, &clientContracts, &payers, &users, &names)
	if err != nil {
		return nil, fmt.Errorf("resolve: %w", err)
	}
	c := NewCollector()
	for _, id := range clients {
		c.Carry(dataset.ClientID, id)
	}
	for _, id := range clientContracts {
		c.Carry(dataset.ClientContractID, id)
	}
	for _, id := range payers {
		c.Carry(dataset.PayerContractID, id)
	}
	for _, id := range users {
		c.Carry(dataset.UserID, id)
	}
	for _, n := range names {
		c.CarryName([]byte(n))
	}
	return c.Set(), nil
}

// Report writes, as CSV with a header, every response recorded in
// audit_records since since (the zero time for all) whose subjects met
// the person of r: when it started and ended (empty: it never finished),
// its request id, to whom, from where, through which path and dataset,
// which personal columns it sent, and how it ended. Records are read in
// the order they started.
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
	rows, err := pool.Query(ctx, `SELECT started_at, ended_at, request_id, principal, coalesce(client_address, ''), path,
  coalesce(dataset, ''), coalesce(columns, ''), CASE WHEN outcome = 'open' THEN 'unfinished' ELSE outcome END, subjects
FROM audit_records WHERE subjects IS NOT NULL AND started_at >= $1 ORDER BY started_at, id`, since)
	if err != nil {
		return fmt.Errorf("report: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var started time.Time
		var ended *time.Time
		var id, principal, addr, path, ds, cols, outcome string
		var enc []byte
		if err := rows.Scan(&started, &ended, &id, &principal, &addr, &path, &ds, &cols, &outcome, &enc); err != nil {
			return fmt.Errorf("report: %w", err)
		}
		carried, err := Decode(enc)
		if err != nil {
			return fmt.Errorf("report: record %s: %w", id, err)
		}
		if !carried.Meets(person) {
			continue
		}
		end := ""
		if ended != nil {
			end = ended.UTC().Format(time.RFC3339Nano)
		}
		c.Write([]string{started.UTC().Format(time.RFC3339Nano), end, id, principal, addr, path, ds, personalColumns(ds, cols), outcome})
	}
	if err := rows.Err(); err != nil {
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
