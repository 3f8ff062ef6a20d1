-- +goose Up
-- The record of every read (docs/privacy.md#the-record-of-every-read). An
-- instance inserts a record before a response's first byte (outcome
-- 'open', ended_at NULL) and closes it after the last (ended_at, rows,
-- bytes, outcome, reason, subjects): a record that stays open belongs to
-- a response that never finished, its instance killed or its database
-- connection lost. Refused requests are counted, one record per path,
-- principal, address and status over a short interval (outcome
-- 'refused', requests the count). Token changes, the audit's mode at each
-- start-up and each prune are records too (their path names the command).
-- subjects is the compact set of the persons whose personal values the
-- response carried (internal/subjects), NULL when it carried none.
CREATE TABLE audit_records (
    id             bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    started_at     timestamptz NOT NULL,
    ended_at       timestamptz,
    request_id     text        NOT NULL,
    principal      text        NOT NULL,
    client_address text,
    user_agent     text,
    path           text        NOT NULL,
    dataset        text,
    query          text,
    rules          text,
    format         text,
    columns        text,
    rows           bigint,
    bytes          bigint,
    status         integer,
    outcome        text        NOT NULL DEFAULT 'open'
        CHECK (outcome IN ('open', 'complete', 'cut', 'failed', 'not_modified', 'refused', 'recorded')),
    reason         text,
    requests       integer     NOT NULL DEFAULT 1 CHECK (requests >= 1),
    instance       text        NOT NULL,
    subjects       bytea
);
CREATE INDEX audit_records_started ON audit_records (started_at);

-- Append-only: a record is inserted, closed once (only the closing fields
-- change, from an open record), and deleted only by audit_prune. The
-- triggers hold for every role, the table's owner included, unless the
-- owner disables them: run informe under a role that does not own the
-- table (docs/privacy.md gives the grants). Their WHEN conditions are
-- checked without calling a function, so that the close of a record that
-- keeps the rules costs no PL/pgSQL call; the function only refuses.
-- +goose StatementBegin
CREATE FUNCTION audit_records_refuse() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'UPDATE' THEN
        IF OLD.outcome = 'open' THEN
            RAISE EXCEPTION 'an audit record is only closed: its end, rows, bytes, status, outcome, reason, format, columns and persons'
                USING ERRCODE = 'insufficient_privilege';
        END IF;
        RAISE EXCEPTION 'audit record % is closed: records are not changed', OLD.id USING ERRCODE = 'insufficient_privilege';
    END IF;
    RAISE EXCEPTION 'audit records are deleted only by informe audit prune' USING ERRCODE = 'insufficient_privilege';
END
$$;
-- +goose StatementEnd
CREATE TRIGGER audit_records_close BEFORE UPDATE ON audit_records FOR EACH ROW
    WHEN (OLD.ended_at IS NOT NULL OR OLD.outcome <> 'open' OR NEW.ended_at IS NULL OR NEW.outcome = 'open'
        OR (NEW.id, NEW.started_at, NEW.request_id, NEW.principal, NEW.client_address, NEW.user_agent, NEW.path,
            NEW.query, NEW.rules, NEW.requests, NEW.instance)
        IS DISTINCT FROM
           (OLD.id, OLD.started_at, OLD.request_id, OLD.principal, OLD.client_address, OLD.user_agent, OLD.path,
            OLD.query, OLD.rules, OLD.requests, OLD.instance))
    EXECUTE FUNCTION audit_records_refuse();
CREATE TRIGGER audit_records_delete BEFORE DELETE ON audit_records FOR EACH ROW
    WHEN (current_setting('informe.audit_prune', true) IS DISTINCT FROM 'on')
    EXECUTE FUNCTION audit_records_refuse();
CREATE TRIGGER audit_records_no_truncate BEFORE TRUNCATE ON audit_records
    FOR EACH STATEMENT EXECUTE FUNCTION audit_records_refuse();

-- audit_prune deletes the records that started before before, and records
-- that it did (principal, instance: who and where), in one transaction.
-- It runs with its owner's rights (SECURITY DEFINER), so informe's role
-- needs no DELETE on the table, only EXECUTE on this function.
-- +goose StatementBegin
CREATE FUNCTION audit_prune(before timestamptz, principal text, instance text) RETURNS bigint
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, public AS $$
DECLARE
    n bigint;
BEGIN
    PERFORM set_config('informe.audit_prune', 'on', true);
    DELETE FROM audit_records WHERE started_at < before;
    GET DIAGNOSTICS n = ROW_COUNT;
    PERFORM set_config('informe.audit_prune', 'off', true);
    INSERT INTO audit_records (started_at, ended_at, request_id, principal, path, query, rows, outcome, instance)
    VALUES (clock_timestamp(), clock_timestamp(), 'prune', principal, 'informe audit prune',
            'before=' || to_char(before AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'), n, 'recorded', instance);
    RETURN n;
END
$$;
-- +goose StatementEnd
-- Only roles granted it may prune (the owner, and whom it grants).
REVOKE EXECUTE ON FUNCTION audit_prune(timestamptz, text, text) FROM PUBLIC;

-- The record as a dataset (audit, OData AuditLog), read under the
-- audit:read scope: the typed view and its text rendering, as every
-- dataset's.
CREATE VIEW audit_log_typed AS
SELECT
    a.id             AS record_id,
    a.started_at     AS started_at,
    a.ended_at       AS ended_at,
    a.request_id     AS request_id,
    a.principal      AS principal,
    a.client_address AS client_address,
    a.user_agent     AS user_agent,
    a.path           AS path,
    a.dataset        AS dataset,
    a.query          AS query,
    a.rules          AS rules,
    a.format         AS format,
    a.columns        AS columns,
    a.rows           AS rows,
    a.bytes          AS bytes,
    a.status         AS status,
    CASE WHEN a.outcome = 'open' THEN 'unfinished' ELSE a.outcome END AS outcome,
    a.reason         AS reason,
    a.requests       AS requests,
    a.instance       AS instance,
    a.id             AS key_record_id
FROM audit_records a;

CREATE VIEW audit_log AS
SELECT
    t.record_id::text                                                             AS record_id,
    to_char(t.started_at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS.US') || '+00' AS started_at,
    to_char(t.ended_at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS.US') || '+00'   AS ended_at,
    t.request_id                                                                  AS request_id,
    t.principal                                                                   AS principal,
    t.client_address                                                              AS client_address,
    t.user_agent                                                                  AS user_agent,
    t.path                                                                        AS path,
    t.dataset                                                                     AS dataset,
    t.query                                                                       AS query,
    t.rules                                                                       AS rules,
    t.format                                                                      AS format,
    t.columns                                                                     AS columns,
    t.rows::text                                                                  AS rows,
    t.bytes::text                                                                 AS bytes,
    t.status::text                                                                AS status,
    t.outcome                                                                     AS outcome,
    t.reason                                                                      AS reason,
    t.requests::text                                                              AS requests,
    t.instance                                                                    AS instance,
    t.key_record_id                                                               AS key_record_id
FROM audit_log_typed t;

-- +goose Down
DROP VIEW audit_log, audit_log_typed;
DROP FUNCTION audit_prune(timestamptz, text, text);
DROP TABLE audit_records;
DROP FUNCTION audit_records_refuse();
