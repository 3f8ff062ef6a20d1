package postgres

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// ErrNameTaken is the error of an insert or change that would give a
// token or a schedule a name already in use.
var ErrNameTaken = errors.New("the name is taken")

// ScheduleRow is a row of schedules.
type ScheduleRow struct {
	ID                 int64
	Name, Dataset      string
	Query              []byte // the query parameters, in JSON
	Format             string
	Options            []byte // the format's options, in JSON
	Cron, Zone         string
	Destination        string
	TokenName, Webhook string // Webhook "" for none (NULL)
	Always, Paused     bool
	NextRun            time.Time
}

// scheduleColumns are a schedule's columns as read.
const scheduleColumns = "id, name, dataset, query, format, options, cron, time_zone, destination, token_name, coalesce(webhook, ''), always, paused, next_run"

// scanSchedule reads a schedule from row; false if there is none.
func scanSchedule(row pgx.Row) (ScheduleRow, bool, error) {
	var s ScheduleRow
	err := row.Scan(&s.ID, &s.Name, &s.Dataset, &s.Query, &s.Format, &s.Options, &s.Cron, &s.Zone, &s.Destination, &s.TokenName, &s.Webhook, &s.Always, &s.Paused, &s.NextRun)
	if errors.Is(err, pgx.ErrNoRows) {
		return ScheduleRow{}, false, nil
	}
	return s, err == nil, err
}

// nameTaken returns [ErrNameTaken] for a unique violation, err otherwise.
func nameTaken(err error) error {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == "23505" {
		return ErrNameTaken
	}
	return err
}

// InsertSchedule inserts s (its ID is the database's). A name already in
// use is [ErrNameTaken].
func InsertSchedule(ctx context.Context, q Querier, s ScheduleRow) error {
	_, err := q.Exec(ctx, `INSERT INTO schedules (name, dataset, query, format, options, cron, time_zone, destination, token_name, webhook, always, paused, next_run)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, nullif($10, ''), $11, $12, $13)`,
		s.Name, s.Dataset, s.Query, s.Format, s.Options, s.Cron, s.Zone, s.Destination, s.TokenName,
		s.Webhook, s.Always, s.Paused, s.NextRun)
	return nameTaken(err)
}

// UpdateSchedule replaces the schedule called name by s (its ID is
// kept), and returns how many it changed (0 or 1). A name already in use
// is [ErrNameTaken].
func UpdateSchedule(ctx context.Context, q Querier, name string, s ScheduleRow) (int64, error) {
	tag, err := q.Exec(ctx, `UPDATE schedules SET name = $2, dataset = $3, query = $4, format = $5, options = $6, cron = $7, time_zone = $8,
destination = $9, token_name = $10, webhook = nullif($11, ''), always = $12, paused = $13, next_run = $14, changed_at = now() WHERE name = $1`,
		name, s.Name, s.Dataset, s.Query, s.Format, s.Options, s.Cron, s.Zone, s.Destination, s.TokenName,
		s.Webhook, s.Always, s.Paused, s.NextRun)
	return tag.RowsAffected(), nameTaken(err)
}

// ScheduleNamed returns the schedule called name; false if there is none.
func ScheduleNamed(ctx context.Context, q Querier, name string) (ScheduleRow, bool, error) {
	return scanSchedule(q.QueryRow(ctx, "SELECT "+scheduleColumns+" FROM schedules WHERE name = $1", name))
}

// ScheduleByID returns the schedule of id; false if there is none.
func ScheduleByID(ctx context.Context, q Querier, id int64) (ScheduleRow, bool, error) {
	return scanSchedule(q.QueryRow(ctx, "SELECT "+scheduleColumns+" FROM schedules WHERE id = $1", id))
}

// DueSchedule returns the schedule, not paused, whose next occurrence is
// the earliest due at now, and locks its row until q's transaction ends,
// skipping the rows others have locked; false if there is none.
func DueSchedule(ctx context.Context, q Querier, now time.Time) (ScheduleRow, bool, error) {
	return scanSchedule(q.QueryRow(ctx, "SELECT "+scheduleColumns+" FROM schedules WHERE NOT paused AND next_run <= $1 ORDER BY next_run LIMIT 1 FOR UPDATE SKIP LOCKED", now))
}

// Schedules returns every schedule, by name.
func Schedules(ctx context.Context, q Querier) ([]ScheduleRow, error) {
	rows, err := q.Query(ctx, "SELECT "+scheduleColumns+" FROM schedules ORDER BY name")
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (ScheduleRow, error) {
		s, _, err := scanSchedule(r)
		return s, err
	})
}

// SetSchedulePaused pauses (or resumes) the schedule called name, its
// next occurrence next.
func SetSchedulePaused(ctx context.Context, q Querier, name string, paused bool, next time.Time) error {
	_, err := q.Exec(ctx, "UPDATE schedules SET paused = $2, next_run = $3, changed_at = now() WHERE name = $1", name, paused, next)
	return err
}

// SetNextRun moves the next occurrence of the schedule of id to next.
func SetNextRun(ctx context.Context, q Querier, id int64, next time.Time) error {
	_, err := q.Exec(ctx, "UPDATE schedules SET next_run = $2 WHERE id = $1", id, next)
	return err
}

// DeleteSchedule removes the schedule called name, and returns how many
// it removed (0 or 1).
func DeleteSchedule(ctx context.Context, q Querier, name string) (int64, error) {
	tag, err := q.Exec(ctx, "DELETE FROM schedules WHERE name = $1", name)
	return tag.RowsAffected(), err
}

// RunRow is a row of schedule_runs, an attempt at a schedule's occurrence.
type RunRow struct {
	ID          int64
	Schedule    string
	Occurrence  time.Time
	Attempt     int
	Outcome     string
	Reason      string // "" for NULL
	Started     time.Time
	Ended       *time.Time
	Rows, Bytes *int64 // not read by [RunByID]
	Destination string
	FileName    string // "" for NULL
}

// ScheduleRuns returns the last n attempts of the schedule called name,
// the latest first.
func ScheduleRuns(ctx context.Context, q Querier, name string, n int) ([]RunRow, error) {
	rows, err := q.Query(ctx, `SELECT id, schedule_name, occurrence, attempt, outcome, coalesce(reason, ''), started_at, ended_at, rows, bytes, destination, coalesce(file_name, '')
FROM schedule_runs WHERE schedule_name = $1 ORDER BY id DESC LIMIT $2`, name, n)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (RunRow, error) {
		var x RunRow
		err := r.Scan(&x.ID, &x.Schedule, &x.Occurrence, &x.Attempt, &x.Outcome, &x.Reason, &x.Started, &x.Ended, &x.Rows, &x.Bytes, &x.Destination, &x.FileName)
		return x, err
	})
}

// RunByID returns the attempt id (pgx.ErrNoRows if there is none).
func RunByID(ctx context.Context, q Querier, id int64) (RunRow, error) {
	var x RunRow
	err := q.QueryRow(ctx, `SELECT id, schedule_name, occurrence, attempt, outcome, coalesce(reason, ''), started_at, ended_at, destination, coalesce(file_name, '')
FROM schedule_runs WHERE id = $1`, id).Scan(&x.ID, &x.Schedule, &x.Occurrence, &x.Attempt, &x.Outcome, &x.Reason, &x.Started, &x.Ended, &x.Destination, &x.FileName)
	return x, err
}

// LastDeliveries calls each with every schedule's name and its last
// delivery's end, skipping those it cannot read.
func LastDeliveries(ctx context.Context, q Querier, each func(schedule string, at time.Time)) error {
	rows, err := q.Query(ctx, "SELECT schedule_name, max(ended_at) FROM schedule_runs WHERE outcome = 'delivered' GROUP BY schedule_name")
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var name string
		var at time.Time
		if rows.Scan(&name, &at) == nil {
			each(name, at)
		}
	}
	return nil
}

// ExpiredRun is an attempt [ExpireLeases] ended: its id and outcome.
type ExpiredRun struct {
	ID      int64
	Outcome string
}

// ExpireLeases ends, at now, the running attempts whose lease ran out
// before now: as retried, or failed when they were attempt maxAttempts
// or later.
func ExpireLeases(ctx context.Context, q Querier, now time.Time, maxAttempts int) ([]ExpiredRun, error) {
	rows, err := q.Query(ctx, `UPDATE schedule_runs SET
    outcome = CASE WHEN attempt >= $2 THEN 'failed' ELSE 'retried' END,
    reason = 'the instance running it stopped renewing its lease (' || instance || ')',
    ended_at = $1, retry_at = $1, lease_until = NULL
WHERE outcome = 'running' AND lease_until < $1
RETURNING id, outcome`, now, maxAttempts)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (ExpiredRun, error) {
		var e ExpiredRun
		return e, row.Scan(&e.ID, &e.Outcome)
	})
}

// RunStart is an attempt as it starts, running under a lease.
type RunStart struct {
	ScheduleID  int64
	Schedule    string
	Occurrence  time.Time
	Attempt     int
	RunNow      bool
	Started     time.Time
	Destination string
	Instance    string
	LeaseUntil  time.Time
}

// InsertRun records s, and returns its id.
func InsertRun(ctx context.Context, q Querier, s RunStart) (int64, error) {
	var id int64
	err := q.QueryRow(ctx, `INSERT INTO schedule_runs (schedule_id, schedule_name, occurrence, attempt, run_now, started_at, destination, instance, lease_until)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) RETURNING id`,
		s.ScheduleID, s.Schedule, s.Occurrence, s.Attempt, s.RunNow, s.Started, s.Destination, s.Instance, s.LeaseUntil).Scan(&id)
	return id, err
}

// Retry is an attempt that was retried, and is due to be followed.
type Retry struct {
	ID         int64
	ScheduleID *int64 // nil: the schedule was removed since
	Occurrence time.Time
	Attempt    int
	RunNow     bool
}

// DueRetry returns the retried attempt not yet followed whose retry is
// the earliest due at now, and locks its row until q's transaction ends,
// skipping the rows others have locked; false if there is none.
func DueRetry(ctx context.Context, q Querier, now time.Time) (Retry, bool, error) {
	var r Retry
	err := q.QueryRow(ctx, `SELECT id, schedule_id, occurrence, attempt, run_now FROM schedule_runs
WHERE outcome = 'retried' AND NOT followed AND retry_at <= $1 ORDER BY retry_at, id LIMIT 1 FOR UPDATE SKIP LOCKED`, now).
		Scan(&r.ID, &r.ScheduleID, &r.Occurrence, &r.Attempt, &r.RunNow)
	if errors.Is(err, pgx.ErrNoRows) {
		return Retry{}, false, nil
	}
	return r, err == nil, err
}

// FollowRun marks the retried attempt id as followed.
func FollowRun(ctx context.Context, q Querier, id int64) error {
	_, err := q.Exec(ctx, "UPDATE schedule_runs SET followed = true WHERE id = $1", id)
	return err
}

// LastDeliveredSum returns the SHA-256 of the last file the schedule of
// id delivered to destination, nil if none.
func LastDeliveredSum(ctx context.Context, q Querier, id int64, destination string) ([]byte, error) {
	var sum []byte
	err := q.QueryRow(ctx, `SELECT sha256 FROM schedule_runs WHERE schedule_id = $1 AND destination = $2 AND outcome = 'delivered'
ORDER BY ended_at DESC, id DESC LIMIT 1`, id, destination).Scan(&sum)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	return sum, err
}

// RenewLease extends to until the lease of attempt id if instance runs it
// still, and returns how many it renewed (0 or 1).
func RenewLease(ctx context.Context, q Querier, id int64, instance string, until time.Time) (int64, error) {
	tag, err := q.Exec(ctx, "UPDATE schedule_runs SET lease_until = $3 WHERE id = $1 AND instance = $2 AND outcome = 'running'",
		id, instance, until)
	return tag.RowsAffected(), err
}

// RunEnd is how an attempt ended.
type RunEnd struct {
	ID       int64
	Instance string // the instance that ran it
	Outcome  string
	Reason   string // "" for NULL
	Ended    time.Time
	Rows     *int64
	Bytes    *int64
	SHA256   []byte
	FileName string // "" for NULL
	RetryAt  *time.Time
}

// FinishRun records e if e.Instance runs the attempt still, and returns
// how many it recorded (0 or 1).
func FinishRun(ctx context.Context, q Querier, e RunEnd) (int64, error) {
	tag, err := q.Exec(ctx, `UPDATE schedule_runs SET outcome = $3, reason = nullif($4, ''), ended_at = $5, rows = $6, bytes = $7,
sha256 = $8, file_name = nullif($9, ''), retry_at = $10, lease_until = NULL
WHERE id = $1 AND instance = $2 AND outcome = 'running'`,
		e.ID, e.Instance, e.Outcome, e.Reason, e.Ended, e.Rows, e.Bytes, e.SHA256, e.FileName, e.RetryAt)
	return tag.RowsAffected(), err
}
