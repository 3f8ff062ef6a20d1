-- The schedules dataset: one row per schedule, under schedules:read. Its
-- query (which may name a client), its webhook (whose address may hold a
-- secret) and its token are not shown; its destination is stored as its
-- URL, which names where its secrets are, never the secrets.

-- +goose Up
CREATE VIEW schedule_list_typed AS
SELECT
    s.id                                                  AS schedule_id,
    s.name                                                AS title,
    s.dataset                                             AS exports,
    s.format                                              AS file_format,
    s.cron                                                AS cron,
    s.time_zone                                           AS time_zone,
    s.destination                                         AS delivers_to,
    CASE WHEN s.paused THEN 'paused' ELSE 'active' END    AS state,
    s.next_run                                            AS next_run,
    s.created_at                                          AS created,
    s.changed_at                                          AS changed,
    s.id                                                  AS key_schedule_id
FROM schedules s;

CREATE VIEW schedule_list AS
SELECT
    t.schedule_id::text                                                            AS schedule_id,
    t.title                                                                        AS title,
    t.exports                                                                      AS exports,
    t.file_format                                                                  AS file_format,
    t.cron                                                                         AS cron,
    t.time_zone                                                                    AS time_zone,
    t.delivers_to                                                                  AS delivers_to,
    t.state                                                                        AS state,
    to_char(t.next_run AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS.US') || '+00'    AS next_run,
    to_char(t.created AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS.US') || '+00'     AS created,
    to_char(t.changed AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS.US') || '+00'     AS changed,
    t.key_schedule_id                                                              AS key_schedule_id
FROM schedule_list_typed t;

-- +goose Down
DROP VIEW schedule_list, schedule_list_typed;
