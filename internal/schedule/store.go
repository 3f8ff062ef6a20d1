package schedule

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
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
	_, err = s.pool.Exec(ctx, `INSERT INTO schedules (name, dataset, query, format, options, cron, time_zone, destination, token_name, webhook, always, paused, next_run)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, nullif($10, ''), $11, $12, $13)`,
		sc.Name, sc.Dataset, query, sc.Format, options, sc.Cron, c.When.Location().String(), c.Destination.String(), sc.TokenName,
		webhookText(c), sc.Always, sc.Paused, c.When.Next(now))
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == "23505" {
		return &failure.Error{Code: failure.Conflict, Target: "name", Reason: "name_taken", Message: fmt.Sprintf("a schedule named %q already exists: change it, or remove it first", sc.Name)}
	}
	if err != nil {
		return postgres.Classify(fmt.Errorf("schedule: add: %w", err))
	}
	return nil
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

// columns are a schedule's columns as read.
const columns = "id, name, dataset, query, format, options, cron, time_zone, destination, token_name, coalesce(webhook, ''), always, paused, next_run"

// scan reads a schedule and its id from row.
func scan(row pgx.Row) (int64, Schedule, error) {
	var id int64
	var sc Schedule
	var query, options []byte
	err := row.Scan(&id, &sc.Name, &sc.Dataset, &query, &sc.Format, &options, &sc.Cron, &sc.Zone, &sc.To, &sc.TokenName, &sc.Webhook, &sc.Always, &sc.Paused, &sc.NextRun)
	if err != nil {
		return 0, sc, err
	}
	if err := json.Unmarshal(query, &sc.Query); err != nil {
		return 0, sc, err
	}
	return id, sc, json.Unmarshal(options, &sc.Options)
}

// Get returns the schedule called name; an unknown name is a NotFound.
func (s *Store) Get(ctx context.Context, name string) (Schedule, error) {
	_, sc, err := scan(s.pool.QueryRow(ctx, "SELECT "+columns+" FROM schedules WHERE name = $1", name))
	if errors.Is(err, pgx.ErrNoRows) {
		return sc, notFound(name)
	}
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
	rows, err := s.pool.Query(ctx, "SELECT "+columns+" FROM schedules ORDER BY name")
	if err != nil {
		return nil, postgres.Classify(fmt.Errorf("schedule: list: %w", err))
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Schedule, error) {
		_, sc, err := scan(r)
		return sc, err
	})
	if err != nil {
		return nil, postgres.Classify(fmt.Errorf("schedule: list: %w", err))
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
	tag, err := s.pool.Exec(ctx, `UPDATE schedules SET name = $2, dataset = $3, query = $4, format = $5, options = $6, cron = $7, time_zone = $8,
destination = $9, token_name = $10, webhook = nullif($11, ''), always = $12, paused = $13, next_run = $14, changed_at = now() WHERE name = $1`,
		name, sc.Name, sc.Dataset, query, sc.Format, options, sc.Cron, c.When.Location().String(), c.Destination.String(), sc.TokenName,
		webhookText(c), sc.Always, sc.Paused, next)
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == "23505" {
		return &failure.Error{Code: failure.Conflict, Target: "name", Reason: "name_taken", Message: fmt.Sprintf("a schedule named %q already exists", sc.Name)}
	}
	if err != nil {
		return postgres.Classify(fmt.Errorf("schedule: change: %w", err))
	}
	if tag.RowsAffected() == 0 {
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
	_, err = s.pool.Exec(ctx, "UPDATE schedules SET paused = $2, next_run = $3, changed_at = now() WHERE name = $1", name, paused, next)
	if err != nil {
		return postgres.Classify(fmt.Errorf("schedule: pause: %w", err))
	}
	return nil
}

// Remove removes the schedule called name; its run history stays.
func (s *Store) Remove(ctx context.Context, name string) error {
	tag, err := s.pool.Exec(ctx, "DELETE FROM schedules WHERE name = $1", name)
	if err != nil {
		return postgres.Classify(fmt.Errorf("schedule: remove: %w", err))
	}
	if tag.RowsAffected() == 0 {
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
	rows, err := s.pool.Query(ctx, `SELECT id, schedule_name, occurrence, attempt, outcome, coalesce(reason, ''), started_at, ended_at, rows, bytes, destination, coalesce(file_name, '')
FROM schedule_runs WHERE schedule_name = $1 ORDER BY id DESC LIMIT $2`, name, n)
	if err != nil {
		return nil, postgres.Classify(fmt.Errorf("schedule: runs: %w", err))
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Run, error) {
		var x Run
		err := r.Scan(&x.ID, &x.Schedule, &x.Occurrence, &x.Attempt, &x.Outcome, &x.Reason, &x.Started, &x.Ended, &x.Rows, &x.Bytes, &x.Destination, &x.FileName)
		return x, err
	})
	if err != nil {
		return nil, postgres.Classify(fmt.Errorf("schedule: runs: %w", err))
	}
	return out, nil
}
