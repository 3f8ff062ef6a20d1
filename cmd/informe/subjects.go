package main

import (
	"context"
	"os"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/urfave/cli/v3"

	"github.com/informe/informe/internal/audit"
	"github.com/informe/informe/internal/rut"
	"github.com/informe/informe/internal/subjects"
)

// subjectRUT is the --rut of a subjects command, checked as the API
// checks a RUT.
func subjectRUT(f *form, s string, dst *rut.RUT) {
	if s == "" {
		f.fail("rut", "is required: the person's RUT")
		return
	}
	r, err := rut.ParseAs("rut", s)
	f.check("rut", err)
	*dst = r
}

func subjectsCommand() *cli.Command {
	block, unblock, list, report := newForm("subjects block"), newForm("subjects unblock"), newForm("subjects list"), newForm("subjects report")
	var blockDB, unblockDB, listDB, reportDB, blockRUT, unblockRUT, reportRUT, reason, since string
	var blockR, unblockR, reportR rut.RUT
	var sinceT time.Time
	block.validate = func(*cli.Command) {
		subjectRUT(block, blockRUT, &blockR)
		if reason == "" {
			block.fail("reason", "is required: why the person's data is held back")
		}
	}
	unblock.validate = func(*cli.Command) { subjectRUT(unblock, unblockRUT, &unblockR) }
	report.validate = func(*cli.Command) {
		subjectRUT(report, reportRUT, &reportR)
		if since != "" {
			t, err := time.Parse(time.DateOnly, since)
			if err != nil {
				report.fail("since", "must be a date, YYYY-MM-DD, got %q", since)
			}
			sinceT = t
		}
	}
	rutFlag := func(f *form, dst *string) cli.Flag {
		return f.text("rut", "INFORME_SUBJECT_RUT", "", dst, "the person's `RUT`, in any form people type (required)")
	}
	noArgs := func(f *form) func(*cli.Command) {
		prev := f.validate
		return func(cmd *cli.Command) {
			if cmd.NArg() > 0 {
				f.extra = append(f.extra, "takes no arguments")
			}
			if prev != nil {
				prev(cmd)
			}
		}
	}
	block.validate, unblock.validate, list.validate, report.validate = noArgs(block), noArgs(unblock), noArgs(list), noArgs(report)
	return &cli.Command{
		Name: "subjects", Usage: "hold back a person's personal data on request, and report who received it",
		Commands: []*cli.Command{
			{
				Name: "block", Usage: "withhold the personal data of the person of a RUT (as client, payer and user) from the next request on",
				Flags: []cli.Flag{databaseFlag(block, &blockDB), rutFlag(block, &blockRUT),
					block.text("reason", "INFORME_SUBJECT_REASON", "", &reason, "why, as recorded with the block (required)")},
				Action: withPool(block, &blockDB, func(ctx context.Context, cmd *cli.Command, pool *pgxpool.Pool) error {
					return subjects.Block(ctx, pool, blockR, reason, audit.Command())
				}),
			},
			{
				Name: "unblock", Usage: "serve the personal data of the person of a RUT again",
				Flags: []cli.Flag{databaseFlag(unblock, &unblockDB), rutFlag(unblock, &unblockRUT)},
				Action: withPool(unblock, &unblockDB, func(ctx context.Context, cmd *cli.Command, pool *pgxpool.Pool) error {
					return subjects.Unblock(ctx, pool, unblockR, audit.Command())
				}),
			},
			{
				Name: "list", Usage: "list the blocks in force (CSV with a header)",
				Flags: []cli.Flag{databaseFlag(list, &listDB)},
				Action: withPool(list, &listDB, func(ctx context.Context, cmd *cli.Command, pool *pgxpool.Pool) error {
					blocks, err := subjects.List(ctx, pool)
					if err != nil {
						return err
					}
					return subjects.WriteList(os.Stdout, blocks)
				}),
			},
			{
				Name: "report", Usage: "list the responses that carried the personal data of the person of a RUT (CSV with a header)",
				Flags: []cli.Flag{databaseFlag(report, &reportDB), rutFlag(report, &reportRUT),
					report.text("since", "INFORME_SUBJECT_SINCE", "", &since, "only responses from this `date` on (YYYY-MM-DD, UTC)")},
				Action: withPool(report, &reportDB, func(ctx context.Context, cmd *cli.Command, pool *pgxpool.Pool) error {
					return subjects.Report(ctx, pool, reportR, sinceT, os.Stdout)
				}),
			},
		},
	}
}
