package schedule

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/informe/informe/auth"
	"github.com/informe/informe/internal/failure"
	"github.com/informe/informe/internal/postgres"
	"github.com/informe/informe/report"
)

// Store keeps schedules in the schedules table.
type Store struct {
	pool     *pgxpool.Pool
	tokens   *auth.Store
	counting report.Counting
}

// NewStore returns a Store on pool; the general report's plain counts are
// read as counting says.
func NewStore(pool *pgxpool.Pool, counting report.Counting) *Store {
	return &Store{pool: pool, tokens: auth.NewStore(pool), counting: counting}
}

// readAs checks s as [Check] does, as the token it names reads at now:
// the token exists, is neither revoked nor expired, and carries the
// dataset's scope, and its rules (columns, masks, row condition, most
// rows; [source.As]) hold in the plan, as they do in what the token
// reads through the API. It is where a token's rules apply to what a
// schedule reads. Its token errors are Forbidden or Invalid
// [failure.Error] values that name the token (an operator's name, never
// its secret).
func (s *Store) readAs(ctx context.Context, sc Schedule, now time.Time) (Checked, error) {
	c, err := Check(sc, s.counting)
	if err != nil {
		return c, err
	}
	name := sc.TokenName
	t, err := s.tokens.Get(ctx, name)
	if err != nil {
		if failure.CodeOf(err) == failure.NotFound {
			return c, &failure.Error{Code: failure.Invalid, Target: "token_name", Reason: "token", Message: fmt.Sprintf("no token named %q: create it with informe token create", name)}
		}
		return c, err
	}
	d := c.Plan.Dataset()
	switch {
	case t.RevokedAt != nil:
		return c, &failure.Error{Code: failure.Forbidden, Target: "token_name", Reason: "token", Message: fmt.Sprintf("the token %q is revoked", name)}
	case t.ExpiresAt != nil && !t.ExpiresAt.After(now):
		return c, &failure.Error{Code: failure.Forbidden, Target: "token_name", Reason: "token", Message: fmt.Sprintf("the token %q has expired", name)}
	case !slices.Contains(t.Scopes, d.Scope):
		return c, &failure.Error{Code: failure.Forbidden, Target: "token_name", Reason: "scope", Message: fmt.Sprintf("the token %q lacks the scope %s that %s needs", name, d.Scope, d.Name)}
	case t.Rules.Empty():
		return c, nil
	}
	c, err = checkAs(sc, s.counting, &t)
	c.Rules = t.Rules
	return c, err
}

// check checks s as [Check] does, and that its token may read its
// dataset at now.
func (s *Store) check(ctx context.Context, sc Schedule, now time.Time) (Checked, error) {
	return s.readAs(ctx, sc, now)
}

// Add checks sc (see [Check], and its token) and keeps it, its first
// occurrence the first after now. A name already in use is a Conflict.
func (s *Store) Add(ctx context.Context, sc Schedule, now time.Time) error {
	c, err := s.check(ctx, sc, now)
	if err != nil {
		return err
	}
	query, options, err := encode(sc)
	if err != nil {
		return err
	}
	err = postgres.InsertSchedule(ctx, s.pool, row(sc, c, query, options, c.When.Next(now)))
	if errors.Is(err, postgres.ErrNameTaken) {
		return &failure.Error{Code: failure.Conflict, Target: "name", Reason: "name_taken", Message: fmt.Sprintf("a schedule named %q already exists: change it, or remove it first", sc.Name)}
	}
	if err != nil {
		return postgres.Classify(fmt.Errorf("schedule: add: %w", err))
	}
	return nil
}

// row returns sc, as c checked it, as kept: its query and options
// encoded, its next occurrence next.
func row(sc Schedule, c Checked, query, options []byte, next time.Time) postgres.ScheduleRow {
	return postgres.ScheduleRow{
		Name: sc.Name, Dataset: sc.Dataset, Query: query, Format: sc.Format, Options: options, Cron: sc.Cron,
		Zone: c.When.Location().String(), Destination: c.Destination.String(), TokenName: sc.TokenName,
		Webhook: webhookText(c), Always: sc.Always, Paused: sc.Paused, NextRun: next,
	}
}

// webhookText is c's webhook as stored, "" for none.
func webhookText(c Checked) string {
	if c.Webhook == nil {
		return ""
	}
	return c.Webhook.String()
}

// encode returns sc's query and options as stored.
func encode(sc Schedule) ([]byte, []byte, error) {
	q := sc.Query
	if q == nil {
		q = url.Values{}
	}
	query, err := json.Marshal(q)
	if err != nil {
		return nil, nil, err
	}
	options, err := json.Marshal(sc.Options)
	return query, options, err
}

// decode returns the schedule kept in r, and its id.
func decode(r postgres.ScheduleRow) (int64, Schedule, error) {
	sc := Schedule{Name: r.Name, Dataset: r.Dataset, Format: r.Format, Cron: r.Cron, Zone: r.Zone, To: r.Destination,
		TokenName: r.TokenName, Webhook: r.Webhook, Always: r.Always, Paused: r.Paused, NextRun: r.NextRun}
	if err := json.Unmarshal(r.Query, &sc.Query); err != nil {
		return 0, sc, err
	}
	return r.ID, sc, json.Unmarshal(r.Options, &sc.Options)
}

// Get returns the schedule called name; an unknown name is a NotFound.
func (s *Store) Get(ctx context.Context, name string) (Schedule, error) {
	r, ok, err := postgres.ScheduleNamed(ctx, s.pool, name)
	if err != nil {
		return Schedule{}, postgres.Classify(fmt.Errorf("schedule: get: %w", err))
	}
	if !ok {
		return Schedule{}, notFound(name)
	}
	_, sc, err := decode(r)
	if err != nil {
		return sc, postgres.Classify(fmt.Errorf("schedule: get: %w", err))
	}
	return sc, nil
}

func notFound(name string) error {
	return &failure.Error{Code: failure.NotFound, Target: "name", Reason: "not_found", Message: fmt.Sprintf("no schedule named %q (informe schedule list lists them)", name)}
}

// List returns every schedule, by name.
func (s *Store) List(ctx context.Context) ([]Schedule, error) {
	rows, err := postgres.Schedules(ctx, s.pool)
	if err != nil {
		return nil, postgres.Classify(fmt.Errorf("schedule: list: %w", err))
	}
	out := make([]Schedule, 0, len(rows))
	for _, r := range rows {
		_, sc, err := decode(r)
		if err != nil {
			return nil, postgres.Classify(fmt.Errorf("schedule: list: %w", err))
		}
		out = append(out, sc)
	}
	return out, nil
}

// Change applies edit to the schedule called name, checks the result as
// [Store.Add] does, and keeps it; a changed cron expression or time zone
// moves its next occurrence to the first after now.
func (s *Store) Change(ctx context.Context, name string, now time.Time, edit func(*Schedule)) error {
	old, err := s.Get(ctx, name)
	if err != nil {
		return err
	}
	sc := old
	sc.Query = url.Values{}
	for k, v := range old.Query {
		sc.Query[k] = slices.Clone(v)
	}
	edit(&sc)
	c, err := s.check(ctx, sc, now)
	if err != nil {
		return err
	}
	next := old.NextRun
	if sc.Cron != old.Cron || c.When.Location().String() != old.Zone {
		next = c.When.Next(now)
	}
	query, options, err := encode(sc)
	if err != nil {
		return err
	}
	changed, err := postgres.UpdateSchedule(ctx, s.pool, name, row(sc, c, query, options, next))
	if errors.Is(err, postgres.ErrNameTaken) {
		return &failure.Error{Code: failure.Conflict, Target: "name", Reason: "name_taken", Message: fmt.Sprintf("a schedule named %q already exists", sc.Name)}
	}
	if err != nil {
		return postgres.Classify(fmt.Errorf("schedule: change: %w", err))
	}
	if changed == 0 {
		return notFound(name)
	}
	return nil
}

// SetPaused pauses (paused true) or resumes the schedule called name. A
// resumed schedule's next occurrence is the first after now: the ones it
// missed while paused are not run.
func (s *Store) SetPaused(ctx context.Context, name string, paused bool, now time.Time) error {
	sc, err := s.Get(ctx, name)
	if err != nil {
		return err
	}
	next := sc.NextRun
	if !paused && sc.Paused {
		loc, err := Zone(sc.Zone)
		if err != nil {
			return err
		}
		w, err := ParseWhen(sc.Cron, loc)
		if err != nil {
			return err
		}
		next = w.Next(now)
	}
	if err := postgres.SetSchedulePaused(ctx, s.pool, name, paused, next); err != nil {
		return postgres.Classify(fmt.Errorf("schedule: pause: %w", err))
	}
	return nil
}

// Remove removes the schedule called name; its run history stays.
func (s *Store) Remove(ctx context.Context, name string) error {
	removed, err := postgres.DeleteSchedule(ctx, s.pool, name)
	if err != nil {
		return postgres.Classify(fmt.Errorf("schedule: remove: %w", err))
	}
	if removed == 0 {
		return notFound(name)
	}
	return nil
}

// Run is one attempt at a schedule's occurrence, as recorded.
type Run struct {
	ID          int64
	Schedule    string
	Occurrence  time.Time
	Attempt     int
	Outcome     string // running, delivered, unchanged, retried or failed
	Reason      string // why it failed or is tried again
	Started     time.Time
	Ended       *time.Time
	Rows, Bytes *int64
	Destination string
	FileName    string
}

// Runs returns the last n attempts of the schedule called name, the
// latest first.
func (s *Store) Runs(ctx context.Context, name string, n int) ([]Run, error) {
	rows, err := postgres.ScheduleRuns(ctx, s.pool, name, n)
	if err != nil {
		return nil, postgres.Classify(fmt.Errorf("schedule: runs: %w", err))
	}
	out := make([]Run, len(rows))
	for i, r := range rows {
		out[i] = Run(r)
	}
	return out, nil
}
