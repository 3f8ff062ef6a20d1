package main

import (
	"context"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"
	_ "time/tzdata" // America/Santiago, for --before, on any machine

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/urfave/cli/v3"

	"github.com/informe/informe/internal/audit"
	"github.com/informe/informe/internal/dataset"
	"github.com/informe/informe/internal/secret"
)

// pruneZone is the zone a --before given as a date is read in: the law
// firm's.
const pruneZone = "America/Santiago"

// parseBefore reads --before: a date, YYYY-MM-DD, meaning its midnight in
// [pruneZone], or an RFC 3339 time.
func parseBefore(s string) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, nil
	}
	loc, err := time.LoadLocation(pruneZone)
	if err != nil {
		return time.Time{}, err
	}
	if t, err := time.ParseInLocation(time.DateOnly, s, loc); err == nil {
		return t, nil
	}
	return time.Time{}, fmt.Errorf("must be a date, YYYY-MM-DD (midnight in %s), or an RFC 3339 time, 2026-01-01T00:00:00-03:00, got %s",
		pruneZone, secret.Quote(s))
}

func auditCommand() *cli.Command {
	prune := newForm("audit prune")
	var db, before string
	var beforeT time.Time
	prune.validate = func(cmd *cli.Command) {
		if cmd.NArg() > 0 {
			prune.extra = append(prune.extra, "takes no arguments")
		}
		if before == "" {
			prune.fail("before", "is required: the records that started before this date are removed")
			return
		}
		t, err := parseBefore(before)
		prune.check("before", err)
		beforeT = t
	}
	return &cli.Command{
		Name: "audit", Usage: "keep the record of every read",
		Commands: []*cli.Command{
			{
				Name: "prune", Usage: "remove the audit records that started before a date, and record that it did",
				Flags: []cli.Flag{databaseFlag(prune, &db),
					prune.text("before", "INFORME_AUDIT_BEFORE", "", &before,
						"remove the records that started before this `DATE`: YYYY-MM-DD (midnight in "+pruneZone+") or an RFC 3339 time (required)")},
				Action: withPool(prune, &db, func(ctx context.Context, cmd *cli.Command, pool *pgxpool.Pool) error {
					n, err := audit.Prune(ctx, pool, beforeT, audit.Command(), audit.Instance())
					if err != nil {
						return err
					}
					fmt.Printf("removed %d audit records that started before %s\n", n, beforeT.UTC().Format(time.RFC3339))
					return nil
				}),
			},
		},
	}
}

// given returns the flags given on f but those named in except, as a
// record's query keeps them: each by its name, with its value as read
// and any token in it redacted.
func (f *form) given(except ...string) url.Values {
	v := url.Values{}
	for _, name := range f.names {
		fl := f.flags[name]
		if !fl.IsSet() || slices.Contains(except, name) {
			continue
		}
		switch x := fl.Get().(type) {
		case []string:
			for _, s := range x {
				v.Add(name, secret.Redact(s))
			}
		default:
			v.Set(name, secret.Redact(fmt.Sprint(x)))
		}
	}
	return v
}

// recordToken records, through tx, a token command's change: path names
// the command, query the flags given (never the token's secret, which
// no flag holds), rules the token's rules once changed. It is written in
// the transaction that makes the change (auth's Store.Atomic), so that a
// change is never made unrecorded: a record that cannot be written (the
// audit table missing) undoes the change, and the command fails saying
// why.
func recordToken(ctx context.Context, pool *pgxpool.Pool, tx pgx.Tx, path string, query url.Values, rules *dataset.Rules) error {
	records := audit.New(pool, audit.Required, audit.Instance(), nil)
	if err := records.EventIn(ctx, tx, audit.Command(), path, audit.QueryText(query), audit.RulesText(rules)); err != nil {
		return fmt.Errorf("%s: the change was not made, as its record could not be written: %w", strings.TrimPrefix(path, "informe "), err)
	}
	return nil
}
