-- +goose Up
-- Scheduled deliveries (docs/schedules.md). A schedule names a dataset and
-- its query (the API's parameters, as a JSON object of lists), a format
-- and its options, a 5-field cron expression read in a time zone, a
-- destination URL (which names where its secrets are, never holds them),
-- the token it reads with, and an optional webhook called when a run
-- fails. next_run is the next occurrence due: an instance claims a due
-- schedule by locking its row (FOR UPDATE SKIP LOCKED), recording the
-- occurrence's run and moving next_run past now in one transaction, so
-- each occurrence is claimed once however many instances run, and after
-- downtime a schedule runs once, not once per missed occurrence.
CREATE TABLE schedules (
    id          bigserial   PRIMARY KEY,
    name        text        NOT NULL UNIQUE CHECK (name <> ''),
    dataset     text        NOT NULL,
    query       jsonb       NOT NULL DEFAULT '{}',
    format      text        NOT NULL,
    options     jsonb       NOT NULL DEFAULT '{}',
    cron        text        NOT NULL,
    time_zone   text        NOT NULL DEFAULT 'America/Santiago',
    destination text        NOT NULL,
    token_name  text        NOT NULL,
    webhook     text,
    always      boolean     NOT NULL DEFAULT false,
    paused      boolean     NOT NULL DEFAULT false,
    next_run    timestamptz NOT NULL,
    created_at  timestamptz NOT NULL DEFAULT now(),
    changed_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX schedules_due ON schedules (next_run) WHERE NOT paused;

-- One row per attempt at an occurrence. An attempt is 'running' while an
-- instance holds its lease (lease_until, renewed as it works); one whose
-- lease ran out, or that failed in a way worth retrying, becomes
-- 'retried', and the attempt after it is claimed at retry_at by whichever
-- instance comes first (followed marks it taken). The last attempt ends
-- 'delivered', 'unchanged' (the bytes were those of the last delivered
-- run: nothing sent) or 'failed', with the reason. schedule_name is kept
-- so that the history outlives a removed schedule.
CREATE TABLE schedule_runs (
    id            bigserial   PRIMARY KEY,
    schedule_id   bigint      REFERENCES schedules (id) ON DELETE SET NULL,
    schedule_name text        NOT NULL,
    occurrence    timestamptz NOT NULL,
    attempt       integer     NOT NULL DEFAULT 1 CHECK (attempt >= 1),
    run_now       boolean     NOT NULL DEFAULT false,
    outcome       text        NOT NULL DEFAULT 'running'
        CHECK (outcome IN ('running', 'delivered', 'unchanged', 'failed', 'retried')),
    started_at    timestamptz NOT NULL,
    ended_at      timestamptz,
    rows          bigint,
    bytes         bigint,
    destination   text        NOT NULL,
    file_name     text,
    reason        text,
    sha256        bytea,
    instance      text        NOT NULL,
    lease_until   timestamptz,
    retry_at      timestamptz,
    followed      boolean     NOT NULL DEFAULT false,
    UNIQUE (schedule_id, occurrence, attempt)
);
CREATE INDEX schedule_runs_running ON schedule_runs (lease_until) WHERE outcome = 'running';
CREATE INDEX schedule_runs_retry ON schedule_runs (retry_at) WHERE outcome = 'retried' AND NOT followed;
CREATE INDEX schedule_runs_last ON schedule_runs (schedule_id, ended_at) WHERE outcome = 'delivered';

-- The run history as a dataset (schedule-runs, OData ScheduleRuns), read
-- under the schedules:read scope: the typed view and its text rendering,
-- as every dataset's.
CREATE VIEW schedule_run_list_typed AS
SELECT
    r.id             AS run_id,
    r.schedule_name  AS schedule,
    r.occurrence     AS occurrence,
    r.attempt        AS attempt,
    r.outcome        AS outcome,
    r.reason         AS reason,
    r.started_at     AS started_at,
    r.ended_at       AS ended_at,
    r.rows           AS rows,
    r.bytes          AS bytes,
    r.destination    AS destination,
    r.file_name      AS file,
    r.id             AS key_run_id
FROM schedule_runs r;

CREATE VIEW schedule_run_list AS
SELECT
    t.run_id::text                                                  AS run_id,
    t.schedule                                                      AS schedule,
    to_char(t.occurrence AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS.US') || '+00' AS occurrence,
    t.attempt::text                                                 AS attempt,
    t.outcome                                                       AS outcome,
    t.reason                                                        AS reason,
    to_char(t.started_at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS.US') || '+00' AS started_at,
    to_char(t.ended_at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS.US') || '+00'   AS ended_at,
    t.rows::text                                                    AS rows,
    t.bytes::text                                                   AS bytes,
    t.destination                                                   AS destination,
    t.file                                                          AS file,
    t.key_run_id                                                    AS key_run_id
FROM schedule_run_list_typed t;

-- +goose Down
DROP VIEW schedule_run_list, schedule_run_list_typed;
DROP TABLE schedule_runs, schedules;
