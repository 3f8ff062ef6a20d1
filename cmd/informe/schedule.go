package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/url"
	"os"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/urfave/cli/v3"

	"github.com/informe/informe/internal/failure"
	"github.com/informe/informe/internal/schedule"
	"github.com/informe/informe/report"
)

// scheduleValues are the flags of schedule add and change as given.
type scheduleValues struct {
	name, dataset, format, cron, tz, to, token, webhook, labels string
	params                                                      []string // as exportParams
	gzip, bom, noHeader, decimalComma, always, paused, check    bool
}

// scheduleFlags declares the flags of a schedule's settings on f; add
// says they are add's (with its defaults and --check).
func scheduleFlags(f *form, v *scheduleValues, add bool) []cli.Flag {
	dataset := ""
	if add {
		dataset = "general-report"
	}
	flags := slices.Concat([]cli.Flag{
		f.text("dataset", "", dataset, &v.dataset, "the `DATASET` to deliver: "+datasetNames()),
		f.text("format", "", "", &v.format, "the file's `FORMAT`: csv, tsv, ndjson, json, xlsx, parquet or arrow (required)"),
	}, fileFormat{gzip: &v.gzip, bom: &v.bom, noHeader: &v.noHeader, labels: &v.labels, decimalComma: &v.decimalComma}.
		flags(f, "gzip the file", false), []cli.Flag{
		f.text("cron", "", "", &v.cron, "when it runs: a cron `EXPRESSION` of 5 fields, minute hour day-of-month month day-of-week, such as \"0 6 * * 1-5\" (required)"),
		f.text("tz", "", "", &v.tz, "the time `ZONE` the cron expression and the file's {date} are read in; default America/Santiago"),
		f.text("to", "", "", &v.to, "the destination's `URL`: file:///folder/name-{date}.csv, sftp://user@host/folder/name.xlsx?..., s3://bucket/prefix/name.parquet?..., https://host/path?... (required)"),
		f.text("token-name", "", "", &v.token, "the `NAME` of the token whose scopes and rules the schedule reads with (required)"),
		f.text("webhook", "", "", &v.webhook, "an https:// `URL` told, by a signed POST of JSON, of each failed run"),
		typed(f, "always", "", false, &v.always, "deliver every run, even when its file would be that of the last delivery"),
		typed(f, "paused", "", false, &v.paused, "keep the schedule paused: it runs once resumed"),
	})
	v.params = make([]string, len(exportParams))
	for i, p := range exportParams {
		flags = append(flags, f.text(p.flag, "", "", &v.params[i], p.usage))
	}
	if add {
		flags = append([]cli.Flag{f.text("name", "", "", &v.name, "the schedule's unique `NAME` (required)")}, flags...)
		flags = append(flags, typed(f, "check", "", false, &v.check, "try the destination once, as a delivery would, before keeping the schedule"))
	}
	return flags
}

// apply sets on s the settings of v that were given (all of them for add).
func (v *scheduleValues) apply(f *form, s *schedule.Schedule, add bool) {
	given := func(name string) bool { return add || f.set(name) }
	for name, dst := range map[string]*string{"dataset": &s.Dataset, "format": &s.Format, "cron": &s.Cron, "tz": &s.Zone,
		"to": &s.To, "token-name": &s.TokenName, "webhook": &s.Webhook, "labels": &s.Options.Labels} {
		if given(name) {
			*dst = map[string]string{"dataset": v.dataset, "format": v.format, "cron": v.cron, "tz": v.tz, "to": v.to,
				"token-name": v.token, "webhook": v.webhook, "labels": v.labels}[name]
		}
	}
	for name, b := range map[string]struct {
		dst *bool
		v   bool
	}{"gzip": {&s.Options.Gzip, v.gzip}, "bom": {&s.Options.BOM, v.bom}, "no-header": {&s.Options.NoHeader, v.noHeader},
		"decimal-comma": {&s.Options.DecimalComma, v.decimalComma}, "always": {&s.Always, v.always}, "paused": {&s.Paused, v.paused}} {
		if given(name) {
			*b.dst = b.v
		}
	}
	if s.Query == nil {
		s.Query = url.Values{}
	}
	for i, p := range exportParams {
		if !f.set(p.flag) {
			continue
		}
		if v.params[i] == "" {
			s.Query.Del(p.param) // change --filter "" drops the filter
			continue
		}
		s.Query.Set(p.param, v.params[i])
	}
	if add {
		s.Name = v.name
	}
}

// scheduleError turns the error of a schedule that cannot work into a
// [usageError] naming each flag at fault; other errors pass.
func scheduleError(command string, err error) error {
	var lines []string
	for _, e := range unjoinErr(err) {
		var fe *failure.Error
		if !errors.As(e, &fe) || (fe.Code != failure.Invalid && fe.Code != failure.Forbidden && fe.Code != failure.Conflict) {
			return err
		}
		flag := map[string]string{"name": "--name", "dataset": "--dataset", "query": "--filter, --orderby, --columns", "format": "--format",
			"options": "--labels, --decimal-comma", "cron": "--cron", "tz": "--tz", "to": "--to", "webhook": "--webhook", "token_name": "--token-name"}[fe.Target]
		if flag == "" {
			flag = "the schedule"
		}
		lines = append(lines, flag+": "+fe.Message)
	}
	return &usageError{command: command, lines: lines}
}

func unjoinErr(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}

func scheduleCommand() *cli.Command {
	add, list, show, change, pause, resume, remove, runNow := newForm("schedule add"), newForm("schedule list"), newForm("schedule show"),
		newForm("schedule change"), newForm("schedule pause"), newForm("schedule resume"), newForm("schedule remove"), newForm("schedule run-now")
	var addDB, listDB, showDB, changeDB, pauseDB, resumeDB, removeDB, runDB, counts string
	var addV, changeV scheduleValues
	for _, f := range []*form{show, change, pause, resume, remove, runNow} {
		f.validate = func(cmd *cli.Command) { oneScheduleName(f, cmd) }
	}
	return &cli.Command{
		Name: "schedule", Usage: "add, list, show, change, pause, resume, remove and run scheduled deliveries (informe serve runs them)",
		Commands: []*cli.Command{
			{
				Name: "add", Usage: "add a schedule: a dataset and its query delivered as a file, at the times of a cron expression, to a destination",
				Flags: append([]cli.Flag{databaseFlag(add, &addDB)}, scheduleFlags(add, &addV, true)...),
				Action: withPool(add, &addDB, func(ctx context.Context, cmd *cli.Command, pool *pgxpool.Pool) error {
					var s schedule.Schedule
					addV.apply(add, &s, true)
					store := schedule.NewStore(pool, report.Maintained)
					if addV.check {
						c, err := schedule.Check(s, report.Maintained)
						if err != nil {
							return scheduleError("schedule add", err)
						}
						if err := c.Destination.Check(ctx); err != nil {
							return fmt.Errorf("--check: the destination %s refused: %s", c.Destination, failure.MessageOf(err))
						}
						fmt.Fprintf(os.Stderr, "the destination %s was tried and works\n", c.Destination)
					}
					if err := store.Add(ctx, s, time.Now()); err != nil {
						return scheduleError("schedule add", err)
					}
					s, err := store.Get(ctx, s.Name)
					if err != nil {
						return err
					}
					fmt.Fprintf(os.Stderr, "added %s; next run %s\n", s.Name, localTime(s, s.NextRun))
					return nil
				}),
			},
			{
				Name: "list", Usage: "list the schedules, each with its next run and its last outcome", Flags: []cli.Flag{databaseFlag(list, &listDB)},
				Action: withPool(list, &listDB, func(ctx context.Context, cmd *cli.Command, pool *pgxpool.Pool) error {
					store := schedule.NewStore(pool, report.Maintained)
					all, err := store.List(ctx)
					if err != nil {
						return err
					}
					tw := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
					fmt.Fprintln(tw, "NAME\tDATASET\tFORMAT\tCRON\tZONE\tNEXT RUN\tSTATE\tLAST OUTCOME")
					for _, s := range all {
						state, next := "active", localTime(s, s.NextRun)
						if s.Paused {
							state, next = "paused", "-"
						}
						last := "-"
						if runs, err := store.Runs(ctx, s.Name, 1); err == nil && len(runs) > 0 {
							last = runs[0].Outcome + " " + localTime(s, runs[0].Started)
						}
						fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", s.Name, s.Dataset, s.Format, s.Cron, s.Zone, next, state, last)
					}
					return tw.Flush()
				}),
			},
			{
				Name: "show", Usage: "show the schedule called NAME and its last runs", ArgsUsage: "NAME", Flags: []cli.Flag{databaseFlag(show, &showDB)},
				Action: withPool(show, &showDB, func(ctx context.Context, cmd *cli.Command, pool *pgxpool.Pool) error {
					store := schedule.NewStore(pool, report.Maintained)
					s, err := store.Get(ctx, cmd.Args().First())
					if err != nil {
						return err
					}
					runs, err := store.Runs(ctx, s.Name, 10)
					if err != nil {
						return err
					}
					return writeSchedule(os.Stdout, s, runs)
				}),
			},
			{
				Name: "change", Usage: "change the settings given of the schedule called NAME; the others stay", ArgsUsage: "NAME",
				Flags: append([]cli.Flag{databaseFlag(change, &changeDB)}, scheduleFlags(change, &changeV, false)...),
				Action: withPool(change, &changeDB, func(ctx context.Context, cmd *cli.Command, pool *pgxpool.Pool) error {
					err := schedule.NewStore(pool, report.Maintained).Change(ctx, cmd.Args().First(), time.Now(), func(s *schedule.Schedule) {
						changeV.apply(change, s, false)
					})
					if err != nil {
						return scheduleError("schedule change", err)
					}
					return nil
				}),
			},
			{
				Name: "pause", Usage: "pause the schedule called NAME", ArgsUsage: "NAME", Flags: []cli.Flag{databaseFlag(pause, &pauseDB)},
				Action: withPool(pause, &pauseDB, func(ctx context.Context, cmd *cli.Command, pool *pgxpool.Pool) error {
					return schedule.NewStore(pool, report.Maintained).SetPaused(ctx, cmd.Args().First(), true, time.Now())
				}),
			},
			{
				Name: "resume", Usage: "resume the schedule called NAME from its next occurrence", ArgsUsage: "NAME", Flags: []cli.Flag{databaseFlag(resume, &resumeDB)},
				Action: withPool(resume, &resumeDB, func(ctx context.Context, cmd *cli.Command, pool *pgxpool.Pool) error {
					return schedule.NewStore(pool, report.Maintained).SetPaused(ctx, cmd.Args().First(), false, time.Now())
				}),
			},
			{
				Name: "remove", Usage: "remove the schedule called NAME (its run history stays)", ArgsUsage: "NAME", Flags: []cli.Flag{databaseFlag(remove, &removeDB)},
				Action: withPool(remove, &removeDB, func(ctx context.Context, cmd *cli.Command, pool *pgxpool.Pool) error {
					return schedule.NewStore(pool, report.Maintained).Remove(ctx, cmd.Args().First())
				}),
			},
			{
				Name: "run-now", Usage: "run the schedule called NAME once, now, in this process, and print how it ended", ArgsUsage: "NAME",
				Flags: []cli.Flag{databaseFlag(runNow, &runDB), countsFlag(runNow, &counts)},
				Action: withPool(runNow, &runDB, func(ctx context.Context, cmd *cli.Command, pool *pgxpool.Pool) error {
					counting, err := report.ParseCounting(counts)
					if err != nil {
						return err
					}
					run, err := schedule.NewRunner(pool, schedule.Config{Counting: counting}).RunNow(ctx, cmd.Args().First())
					if err != nil {
						return err
					}
					fmt.Println(runLine(run))
					if run.Outcome == schedule.Failed || run.Outcome == schedule.Retried {
						return fmt.Errorf("the run %s: %s", run.Outcome, run.Reason)
					}
					return nil
				}),
			},
		},
	}
}

// oneScheduleName is the check of a schedule command that takes exactly
// one NAME.
func oneScheduleName(f *form, cmd *cli.Command) {
	if cmd.NArg() != 1 {
		f.extra = append(f.extra, "takes exactly one NAME, the schedule's")
	}
}

// localTime writes t in s's zone.
func localTime(s schedule.Schedule, t time.Time) string {
	loc, err := schedule.Zone(s.Zone)
	if err != nil {
		loc = time.UTC
	}
	return t.In(loc).Format("2006-01-02 15:04 MST")
}

// runLine describes a run in one line.
func runLine(r schedule.Run) string {
	s := fmt.Sprintf("run %d attempt %d: %s", r.ID, r.Attempt, r.Outcome)
	if r.Rows != nil {
		s += fmt.Sprintf(", %d rows, %d bytes", *r.Rows, *r.Bytes)
	}
	if r.FileName != "" {
		s += ", " + r.FileName
	}
	if r.Reason != "" {
		s += ": " + r.Reason
	}
	return s
}

// writeSchedule writes s and its runs, the latest first, for people.
func writeSchedule(w io.Writer, s schedule.Schedule, runs []schedule.Run) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	state := "active"
	if s.Paused {
		state = "paused"
	}
	var query []string
	for _, k := range slices.Sorted(maps.Keys(s.Query)) {
		query = append(query, k+"="+strings.Join(s.Query[k], ","))
	}
	opts := []string{}
	for name, on := range map[string]bool{"gzip": s.Options.Gzip, "bom": s.Options.BOM, "no-header": s.Options.NoHeader, "decimal-comma": s.Options.DecimalComma, "always": s.Always} {
		if on {
			opts = append(opts, name)
		}
	}
	if s.Options.Labels != "" {
		opts = append(opts, "labels="+s.Options.Labels)
	}
	slices.Sort(opts)
	for _, row := range [][2]string{
		{"name", s.Name}, {"dataset", s.Dataset}, {"query", strings.Join(query, " ")}, {"format", s.Format}, {"options", strings.Join(opts, " ")},
		{"cron", s.Cron}, {"zone", s.Zone}, {"to", s.To}, {"token", s.TokenName}, {"webhook", s.Webhook}, {"state", state},
		{"next run", localTime(s, s.NextRun)},
	} {
		fmt.Fprintf(tw, "%s:\t%s\n", row[0], row[1])
	}
	fmt.Fprintln(tw, "\nlast runs:")
	if len(runs) == 0 {
		fmt.Fprintln(tw, "  none yet")
	}
	for _, r := range runs {
		fmt.Fprintf(tw, "  %s\t%s\n", localTime(s, r.Started), runLine(r))
	}
	return tw.Flush()
}
