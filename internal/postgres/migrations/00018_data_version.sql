-- +goose Up
-- The data version behind every response's ETag: a value that changes
-- whenever the data a dataset reads changes, read in the request's own
-- snapshot.
--
-- Each statement that writes a watched table (INSERT, UPDATE, DELETE,
-- TRUNCATE, COPY) inserts one row here, in the writer's transaction: a
-- reader sees it exactly when it sees the statement's rows. A table's
-- version is the sum of its rows' statements, which only grows with each
-- commit, so two snapshots that agree on it saw the same writes. Writers
-- only insert: none waits for another, none can deadlock on this table,
-- and none in REPEATABLE READ or SERIALIZABLE fails for writing to the
-- same table as another (a counter row updated by every writer would do
-- all three). A sequence's nextval would not do: a reader can see a new
-- value before the writer's rows commit.
--
-- Rows are folded into one per table now and then, by a READ COMMITTED
-- writer, so that a reader sums a few hundred rows at most; folding skips
-- rows another folder holds, so it never waits either.
CREATE TABLE data_changes (
    id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    table_name text NOT NULL,
    statements bigint NOT NULL DEFAULT 1 CHECK (statements > 0)
);

-- The database's own part of every version, so that two databases whose
-- counts happen to agree (a copy, a new demo) never share a version.
CREATE TABLE data_version_key (
    key text NOT NULL
);
INSERT INTO data_version_key (key) VALUES (md5(random()::text || clock_timestamp()::text));

-- SECURITY DEFINER, with the search_path of the migration: the roles
-- that write the tables need no privilege on data_changes, so that no
-- writer of the system of record fails for lacking one.
-- +goose StatementBegin
CREATE FUNCTION data_version_bump() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path FROM CURRENT AS $$
DECLARE
    n bigint;
BEGIN
    INSERT INTO data_changes (table_name) VALUES (TG_TABLE_NAME) RETURNING id INTO n;
    -- In REPEATABLE READ a row another transaction folded since this one's
    -- snapshot could not be deleted without a serialization failure.
    IF n % 128 = 0 AND current_setting('transaction_isolation') = 'read committed' THEN
        WITH folded AS (
            DELETE FROM data_changes
            WHERE id IN (SELECT id FROM data_changes FOR UPDATE SKIP LOCKED)
            RETURNING table_name, statements
        )
        INSERT INTO data_changes (table_name, statements)
        SELECT table_name, sum(statements) FROM folded GROUP BY table_name;
    END IF;
    RETURN NULL;
END $$;
-- +goose StatementEnd

-- One statement-level trigger per table, for every kind of write. ENABLE
-- ALWAYS: it fires in replica sessions too (session_replication_role), so
-- that a write there still changes the version.
CREATE TRIGGER data_version AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON clients
    FOR EACH STATEMENT EXECUTE FUNCTION data_version_bump();
CREATE TRIGGER data_version AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON contracts
    FOR EACH STATEMENT EXECUTE FUNCTION data_version_bump();
CREATE TRIGGER data_version AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON services
    FOR EACH STATEMENT EXECUTE FUNCTION data_version_bump();
CREATE TRIGGER data_version AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON benefit_centers
    FOR EACH STATEMENT EXECUTE FUNCTION data_version_bump();
CREATE TRIGGER data_version AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON processes
    FOR EACH STATEMENT EXECUTE FUNCTION data_version_bump();
CREATE TRIGGER data_version AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON tasks
    FOR EACH STATEMENT EXECUTE FUNCTION data_version_bump();
CREATE TRIGGER data_version AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON users
    FOR EACH STATEMENT EXECUTE FUNCTION data_version_bump();
-- A block or unblock changes what every dataset's rows show of a person
-- (informe subjects block): every response's version reads it too.
CREATE TRIGGER data_version AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON subject_blocks
    FOR EACH STATEMENT EXECUTE FUNCTION data_version_bump();
ALTER TABLE clients ENABLE ALWAYS TRIGGER data_version;
ALTER TABLE subject_blocks ENABLE ALWAYS TRIGGER data_version;
ALTER TABLE contracts ENABLE ALWAYS TRIGGER data_version;
ALTER TABLE services ENABLE ALWAYS TRIGGER data_version;
ALTER TABLE benefit_centers ENABLE ALWAYS TRIGGER data_version;
ALTER TABLE processes ENABLE ALWAYS TRIGGER data_version;
ALTER TABLE tasks ENABLE ALWAYS TRIGGER data_version;
ALTER TABLE users ENABLE ALWAYS TRIGGER data_version;

-- +goose Down
DROP TRIGGER data_version ON subject_blocks;
DROP TRIGGER data_version ON users;
DROP TRIGGER data_version ON tasks;
DROP TRIGGER data_version ON processes;
DROP TRIGGER data_version ON benefit_centers;
DROP TRIGGER data_version ON services;
DROP TRIGGER data_version ON contracts;
DROP TRIGGER data_version ON clients;
DROP FUNCTION data_version_bump();
DROP TABLE data_version_key, data_changes;
