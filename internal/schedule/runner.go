package schedule

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/informe/informe/internal/audit"
	"github.com/informe/informe/internal/delivery"
	"github.com/informe/informe/internal/destination"
	"github.com/informe/informe/internal/failure"
	"github.com/informe/informe/internal/fileexport"
	"github.com/informe/informe/internal/postgres"
	"github.com/informe/informe/report"
)

// The outcomes of an attempt, as schedule_runs records them.
const (
	Running   = "running"   // an instance holds its lease
	Delivered = "delivered" // the file was written and committed
	Unchanged = "unchanged" // its bytes were those of the last delivered run: nothing sent
	Retried   = "retried"   // it failed in a way worth trying again, or its instance stopped: another attempt follows
	Failed    = "failed"    // it failed for good: the webhook is told
)

// Backoff are the waits before the second, third and fourth attempts at
// an occurrence that failed in a way that may go away by itself (the
// destination unreachable, the database unavailable): MaxAttempts in
// all, then the run is failed.
var Backoff = []time.Duration{time.Minute, 5 * time.Minute, 15 * time.Minute}

// MaxAttempts is how many attempts an occurrence gets.
var MaxAttempts = len(Backoff) + 1

// DefaultLease is how long an attempt's instance holds it without
// renewing (it renews every third of it): an attempt whose instance died
// is taken over, as a new attempt, once its lease has run out.
const DefaultLease = 2 * time.Minute

// DefaultEvery is how often a runner looks for due work.
const DefaultEvery = 20 * time.Second

// Observer is told what runs do: package metrics counts them.
type Observer interface {
	// ScheduleRun counts an attempt that ended with outcome.
	ScheduleRun(outcome string)
	// ScheduleDelivered records that the schedule called name delivered
	// a file at at.
	ScheduleDelivered(name string, at time.Time)
}

// Config configures a [Runner].
type Config struct {
	// Instance names this runner in the attempts it runs; "" makes a name
	// of the host, the process and a random part.
	Instance string
	// Now is the clock; nil is time.Now.
	Now func() time.Time
	// Lease is how long an attempt is held without renewal; 0 is
	// [DefaultLease].
	Lease time.Duration
	// Every is how often [Runner.Serve] looks for due work; 0 is
	// [DefaultEvery].
	Every time.Duration
	// Counting says where the general report's plain counts come from.
	Counting report.Counting
	// Observer, if not nil, is told of each attempt's end.
	Observer Observer
	// Logger logs each attempt's end; nil logs nothing.
	Logger *slog.Logger
	// Audit records each attempt's read (internal/audit); nil records
	// nothing.
	Audit *audit.Log
}

// Runner runs the schedules kept in one database. Any number of runners,
// in any number of processes, may run over the same database: they share
// nothing but it.
type Runner struct {
	cfg       Config
	pool      *pgxpool.Pool
	store     *postgres.Store
	schedules *Store
	// wrap, if not nil, wraps what an attempt writes to its destination
	// (a test stops a delivery halfway with it).
	wrap func(io.Writer) io.Writer
}

// NewRunner returns a runner of the schedules in pool's database.
func NewRunner(pool *pgxpool.Pool, cfg Config) *Runner {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Lease <= 0 {
		cfg.Lease = DefaultLease
	}
	if cfg.Every <= 0 {
		cfg.Every = DefaultEvery
	}
	if cfg.Instance == "" {
		host, _ := os.Hostname()
		var b [3]byte
		_, _ = rand.Read(b[:])
		cfg.Instance = fmt.Sprintf("%s-%d-%s", host, os.Getpid(), hex.EncodeToString(b[:]))
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	store := postgres.NewStore(pool)
	if cfg.Audit != nil {
		store = store.Told(cfg.Audit.Reading)
	}
	return &Runner{cfg: cfg, pool: pool, store: store, schedules: NewStore(pool, cfg.Counting)}
}

// now is the runner's clock, to the microsecond PostgreSQL keeps.
func (r *Runner) now() time.Time { return r.cfg.Now().Truncate(time.Microsecond) }

// Serve runs due work every Config.Every until ctx ends: each time, what
// [Runner.Tick] does. A failed look (the database unavailable) is logged
// and tried again at the next.
func (r *Runner) Serve(ctx context.Context) error {
	r.prime(ctx)
	t := time.NewTicker(r.cfg.Every)
	defer t.Stop()
	for {
		if _, err := r.Tick(ctx); err != nil && ctx.Err() == nil {
			r.cfg.Logger.Warn("schedules: cannot look for due runs", slog.String("error", failure.MessageOf(postgres.Classify(err))))
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// prime tells the observer each schedule's last delivery, as recorded.
func (r *Runner) prime(ctx context.Context) {
	if r.cfg.Observer == nil {
		return
	}
	_ = postgres.LastDeliveries(ctx, r.pool, r.cfg.Observer.ScheduleDelivered)
}

// attempt is an attempt this runner has claimed.
type attempt struct {
	id         int64
	scheduleID int64
	schedule   Schedule
	occurrence time.Time
	number     int
	runNow     bool // asked for by [Runner.RunNow], or the retry of one
	started    time.Time
}

// Tick does the work due at the runner's now, and returns the attempts
// it ended: it takes over the attempts whose lease ran out (their
// instance died), then runs each schedule whose next occurrence is due
// (one attempt per schedule, however many occurrences were missed), then
// each retry that is due. Each is claimed in PostgreSQL (a locked row, a
// unique occurrence and attempt), so that no two runners run the same.
func (r *Runner) Tick(ctx context.Context) ([]Run, error) {
	now := r.now()
	var done []Run
	if err := r.expire(ctx, now); err != nil {
		return done, err
	}
	for _, claim := range []func(context.Context, time.Time) (attempt, bool, error){r.claimDue, r.claimRetry} {
		for ctx.Err() == nil {
			a, ok, err := claim(ctx, now)
			if err != nil {
				return done, err
			}
			if !ok {
				break
			}
			if run, ok := r.run(ctx, a); ok {
				done = append(done, run)
			}
		}
	}
	return done, ctx.Err()
}

// expire ends the attempts whose lease ran out before now as retried (or
// failed, when they were the last), so that another attempt follows.
func (r *Runner) expire(ctx context.Context, now time.Time) error {
	list, err := postgres.ExpireLeases(ctx, r.pool, now, MaxAttempts)
	if err != nil {
		return err
	}
	for _, e := range list {
		r.observe(e.Outcome)
		if e.Outcome == Failed {
			if run, err := r.runByID(ctx, e.ID); err == nil {
				r.notify(ctx, run)
			}
		}
	}
	return nil
}

// claimDue claims the next occurrence of one due schedule: in one
// transaction, it locks the schedule's row (skipping those another runner
// holds), records the attempt and moves next_run to the first occurrence
// after now.
func (r *Runner) claimDue(ctx context.Context, now time.Time) (attempt, bool, error) {
	return r.claim(ctx, now, func(tx pgx.Tx) (attempt, bool, error) {
		due, ok, err := postgres.DueSchedule(ctx, tx, now)
		if err != nil || !ok {
			return attempt{}, false, err
		}
		id, sc, err := decode(due)
		if err != nil {
			return attempt{}, false, err
		}
		next := now.Add(24 * time.Hour) // for a schedule that no longer checks: its attempt fails
		if loc, err := Zone(sc.Zone); err == nil {
			if w, err := ParseWhen(sc.Cron, loc); err == nil {
				next = w.Next(now)
			}
		}
		if err := postgres.SetNextRun(ctx, tx, id, next); err != nil {
			return attempt{}, false, err
		}
		return attempt{scheduleID: id, schedule: sc, occurrence: sc.NextRun, number: 1}, true, nil
	})
}

// claim finds an attempt with find and records it, in the same
// transaction, as running under this runner's lease; ok is false, and
// nothing is recorded, when find found none.
func (r *Runner) claim(ctx context.Context, now time.Time, find func(pgx.Tx) (a attempt, ok bool, err error)) (attempt, bool, error) {
	var a attempt
	var ok bool
	err := pgx.BeginFunc(ctx, r.pool, func(tx pgx.Tx) error {
		var err error
		if a, ok, err = find(tx); err != nil || !ok {
			return err
		}
		a.started = now
		a.id, err = postgres.InsertRun(ctx, tx, postgres.RunStart{
			ScheduleID: a.scheduleID, Schedule: a.schedule.Name, Occurrence: a.occurrence, Attempt: a.number, RunNow: a.runNow,
			Started: now, Destination: a.schedule.To, Instance: r.cfg.Instance, LeaseUntil: now.Add(r.cfg.Lease),
		})
		return err
	})
	return a, ok, err
}

// claimRetry claims the attempt after one that was retried and is due.
func (r *Runner) claimRetry(ctx context.Context, now time.Time) (attempt, bool, error) {
	followed := false // a retry was marked as followed
	a, claimed, err := r.claim(ctx, now, func(tx pgx.Tx) (attempt, bool, error) {
		retry, ok, err := postgres.DueRetry(ctx, tx, now)
		if err != nil || !ok {
			return attempt{}, false, err
		}
		if err := postgres.FollowRun(ctx, tx, retry.ID); err != nil {
			return attempt{}, false, err
		}
		followed = true
		if retry.ScheduleID == nil {
			return attempt{}, false, nil // removed since: nothing follows
		}
		row, ok, err := postgres.ScheduleByID(ctx, tx, *retry.ScheduleID)
		if err != nil || !ok {
			return attempt{}, false, err
		}
		id, sc, err := decode(row)
		if err != nil {
			return attempt{}, false, err
		}
		return attempt{scheduleID: id, schedule: sc, occurrence: retry.Occurrence, number: retry.Attempt + 1, runNow: retry.RunNow}, true, nil
	})
	if err == nil && !claimed && followed {
		// A retry with nothing to follow was marked; look for the next.
		return r.claimRetry(ctx, now)
	}
	return a, claimed, err
}

// RunNow runs the schedule called name once, now, in this process,
// paused or not, and returns its attempt. A failure worth retrying is
// retried by the runners of `informe serve`, as a scheduled run's.
func (r *Runner) RunNow(ctx context.Context, name string) (Run, error) {
	now := r.now()
	a, _, err := r.claim(ctx, now, func(tx pgx.Tx) (attempt, bool, error) {
		row, ok, err := postgres.ScheduleNamed(ctx, tx, name)
		if err != nil {
			return attempt{}, false, err
		}
		if !ok {
			return attempt{}, false, notFound(name)
		}
		id, sc, err := decode(row)
		if err != nil {
			return attempt{}, false, err
		}
		return attempt{scheduleID: id, schedule: sc, occurrence: now, number: 1, runNow: true}, true, nil
	})
	if err != nil {
		return Run{}, postgres.Classify(err)
	}
	run, ok := r.run(ctx, a)
	if !ok {
		return run, errors.New("the run was taken over by another instance")
	}
	return run, nil
}

// errLeaseLost ends an attempt whose lease another runner took over.
var errLeaseLost = errors.New("another instance took the run over")

// run runs a's attempt and records its end; ok is false when another
// runner took it over, which then records it.
func (r *Runner) run(ctx context.Context, a attempt) (Run, bool) {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	stop := r.heartbeat(ctx, a.id, cancel)
	defer stop()
	res := result{outcome: Delivered}
	c, err := r.schedules.readAs(ctx, a.schedule, r.now())
	if err != nil {
		res.fail(err, false)
		return r.finish(ctx, a, res)
	}
	res.file = c.Destination.Name(a.occurrence, c.When.Location())
	w, err := c.Destination.Open(ctx, res.file)
	if err != nil {
		res.fail(err, r.transient(ctx, err))
		return r.finish(ctx, a, res)
	}
	defer w.Close()
	h := sha256.New()
	var sink io.Writer = w
	if r.wrap != nil {
		sink = r.wrap(w)
	}
	var n fileexport.Written
	rec := &audit.Record{
		RequestID: "schedule-run-" + strconv.FormatInt(a.id, 10),
		Principal: a.schedule.TokenName, Path: "schedule " + a.schedule.Name,
		Query: a.schedule.Query.Encode(), Rules: audit.RulesText(c.Rules), Format: a.schedule.Format,
	}
	err = r.cfg.Audit.Do(ctx, rec, func(ctx context.Context) (int64, int64, error) {
		var err error
		n, err = fileexport.Write(ctx, r.store, c.Plan, io.MultiWriter(sink, h), nil)
		return n.Rows, n.Bytes, err
	})
	if err != nil {
		_ = w.Abort()
		res.fail(fileexport.Why(ctx, err), r.transient(ctx, err))
		return r.finish(ctx, a, res)
	}
	res.rows, res.bytes, res.sum = n.Rows, n.Bytes, h.Sum(nil)
	if !a.schedule.Always {
		last, err := r.lastDelivered(ctx, a)
		if err != nil {
			_ = w.Abort()
			res.fail(err, r.transient(ctx, err))
			return r.finish(ctx, a, res)
		}
		if bytes.Equal(last, res.sum) {
			_ = w.Abort()
			res.outcome = Unchanged
			return r.finish(ctx, a, res)
		}
	}
	// Still ours? A runner that took the attempt over delivers it.
	if err := r.renew(ctx, a.id); err != nil {
		_ = w.Abort()
		res.fail(err, !errors.Is(err, errLeaseLost) && r.transient(ctx, err))
		return r.finish(ctx, a, res)
	}
	if err := w.Commit(); err != nil {
		res.fail(err, r.transient(ctx, err))
		return r.finish(ctx, a, res)
	}
	return r.finish(ctx, a, res)
}

// result is how an attempt ended.
type result struct {
	outcome     string
	reason      string
	retry       bool
	file        string
	rows, bytes int64
	sum         []byte
	err         error
}

// fail sets res to the failure err, retried when retry says so.
func (res *result) fail(err error, retry bool) {
	res.outcome, res.err, res.retry = Failed, err, retry
	res.reason = reasonOf(err)
	if retry {
		res.outcome = Retried
	}
}

// reasonOf says why an attempt failed with err, for the run history,
// logs and the webhook: a destination's reason and message, which never
// hold a secret, or the message of the export's failure.
func reasonOf(err error) string {
	var fe *failure.Error
	if errors.As(err, &fe) {
		if fe.Reason != "" {
			return fe.Reason + ": " + fe.Message
		}
		return fe.Message
	}
	return err.Error()
}

// transient reports whether err, of an attempt run under ctx, may go
// away by itself: the destination unreachable, the database unavailable,
// the runner stopped.
func (r *Runner) transient(ctx context.Context, err error) bool {
	return destination.Retryable(err) || ctx.Err() != nil ||
		delivery.Reason(ctx, err) == delivery.DatabaseUnavailable || failure.CodeOf(postgres.ClassifyIn(ctx, err)) == failure.Unavailable
}

// lastDelivered returns the SHA-256 of the last file a's schedule
// delivered to the same destination, nil if none.
func (r *Runner) lastDelivered(ctx context.Context, a attempt) ([]byte, error) {
	return postgres.LastDeliveredSum(ctx, r.pool, a.scheduleID, a.schedule.To)
}

// heartbeat renews the lease of attempt id every third of the lease
// until stop is called, cancelling the attempt with [errLeaseLost] if
// another runner took it over.
func (r *Runner) heartbeat(ctx context.Context, id int64, cancel context.CancelCauseFunc) (stop func()) {
	done := make(chan struct{})
	go func() {
		t := time.NewTicker(r.cfg.Lease / 3)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-t.C:
				if err := r.renew(ctx, id); errors.Is(err, errLeaseLost) {
					cancel(errLeaseLost)
					return
				}
			}
		}
	}()
	return func() { close(done) }
}

// renew extends the lease of attempt id, or returns errLeaseLost if it
// is no longer this runner's.
func (r *Runner) renew(ctx context.Context, id int64) error {
	renewed, err := postgres.RenewLease(ctx, r.pool, id, r.cfg.Instance, r.now().Add(r.cfg.Lease))
	if err != nil {
		return err
	}
	if renewed == 0 {
		return errLeaseLost
	}
	return nil
}

// finish records how a's attempt ended, if it is still this runner's,
// and tells the observer, the log and, for a failure, the webhook.
func (r *Runner) finish(ctx context.Context, a attempt, res result) (Run, bool) {
	if errors.Is(res.err, errLeaseLost) || errors.Is(context.Cause(ctx), errLeaseLost) {
		return Run{}, false
	}
	// The record is written even when ctx was cancelled (the runner
	// stops): a stopped attempt is retried at once by another.
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	now := r.now()
	if res.retry && a.number >= MaxAttempts {
		res.outcome, res.retry = Failed, false
	}
	var retryAt *time.Time
	if res.retry {
		at := now.Add(Backoff[a.number-1])
		if ctx.Err() != nil {
			at = now // stopped, not failing: another may go on at once
		}
		retryAt = &at
	}
	var rows, size *int64
	if res.outcome == Delivered || res.outcome == Unchanged {
		rows, size = &res.rows, &res.bytes
	}
	var sum []byte
	if res.outcome == Delivered {
		sum = res.sum
	}
	recorded, err := postgres.FinishRun(wctx, r.pool, postgres.RunEnd{
		ID: a.id, Instance: r.cfg.Instance, Outcome: res.outcome, Reason: res.reason, Ended: now,
		Rows: rows, Bytes: size, SHA256: sum, FileName: res.file, RetryAt: retryAt,
	})
	if err != nil {
		r.cfg.Logger.Warn("schedules: cannot record a run's end", slog.String("schedule", a.schedule.Name), slog.Int64("run", a.id),
			slog.String("error", failure.MessageOf(postgres.Classify(err))))
		return Run{}, false
	}
	if recorded == 0 {
		return Run{}, false // taken over meanwhile
	}
	run := Run{ID: a.id, Schedule: a.schedule.Name, Occurrence: a.occurrence, Attempt: a.number, Outcome: res.outcome, Reason: res.reason,
		Started: a.started, Ended: &now, Destination: a.schedule.To, FileName: res.file}
	if rows != nil {
		run.Rows, run.Bytes = rows, size
	}
	attrs := []any{slog.String("schedule", a.schedule.Name), slog.Int64("run", a.id), slog.Int("attempt", a.number), slog.String("outcome", res.outcome)}
	if res.reason != "" {
		attrs = append(attrs, slog.String("reason", res.reason))
	}
	if rows != nil {
		attrs = append(attrs, slog.Int64("rows", res.rows), slog.Int64("bytes", res.bytes))
	}
	r.cfg.Logger.Info("schedule run", attrs...)
	r.observe(res.outcome)
	if res.outcome == Delivered && r.cfg.Observer != nil {
		r.cfg.Observer.ScheduleDelivered(a.schedule.Name, now)
	}
	if res.outcome == Failed {
		r.notify(wctx, run)
	}
	return run, true
}

// observe tells the observer of an attempt that ended with outcome.
func (r *Runner) observe(outcome string) {
	if r.cfg.Observer != nil {
		r.cfg.Observer.ScheduleRun(outcome)
	}
}

// runByID reads the recorded attempt id.
func (r *Runner) runByID(ctx context.Context, id int64) (Run, error) {
	x, err := postgres.RunByID(ctx, r.pool, id)
	return Run(x), err
}

// Hook is the body of a webhook's call about a failed run.
type Hook struct {
	Schedule string  `json:"schedule"`
	Run      HookRun `json:"run"`
	Reason   string  `json:"reason"`
}

// HookRun is the failed attempt in a [Hook].
type HookRun struct {
	ID          int64      `json:"id"`
	Occurrence  time.Time  `json:"occurrence"`
	Attempt     int        `json:"attempt"`
	Ended       *time.Time `json:"ended_at"`
	Destination string     `json:"destination"`
	File        string     `json:"file,omitempty"`
}

// notify calls the webhook of run's schedule, if it has one, about the
// failed run: a POST of a [Hook] in JSON, signed as an https://
// destination's file. A webhook that fails is logged, not retried.
func (r *Runner) notify(ctx context.Context, run Run) {
	sc, err := r.schedules.Get(ctx, run.Schedule)
	if err != nil || sc.Webhook == "" {
		return
	}
	err = func() error {
		d, err := destination.Parse(sc.Webhook)
		if err != nil {
			return err
		}
		body, err := json.Marshal(Hook{Schedule: run.Schedule, Reason: run.Reason, Run: HookRun{
			ID: run.ID, Occurrence: run.Occurrence.UTC(), Attempt: run.Attempt, Ended: run.Ended, Destination: run.Destination, File: run.FileName}})
		if err != nil {
			return err
		}
		loc, _ := Zone(sc.Zone)
		ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		w, err := d.Open(ctx, d.Name(run.Occurrence, loc))
		if err != nil {
			return err
		}
		defer w.Close()
		if _, err := w.Write(body); err != nil {
			return err
		}
		return w.Commit()
	}()
	if err != nil {
		r.cfg.Logger.Warn("schedules: the webhook failed", slog.String("schedule", run.Schedule), slog.Int64("run", run.ID), slog.String("error", reasonOf(err)))
	}
}
