-- +goose Up
-- The keys of the report's task rows beside the values the OData steps
-- that spreadsheets fold most filter on (a task's status, its end date, its
-- execution date), kept by triggers, so that a filtered page finds its
-- rows' keys in the report's order from one index instead of joining the
-- report's tables to find them: a month of end dates, about 16,000 tasks
-- of a million rows, was found by reading and sorting every one of them
-- through the view's joins.
--
-- report_task_keys holds one row per task: its id, its process and that
-- process's contract (the row's key in general_report_typed), and its
-- status (as the typed view shows it: '' is NULL), end date and execution
-- date. A condition on those columns is true only where a row has a task,
-- so rows without a task need none here.
--
-- report_process_keys holds one row per process with its contract. Every
-- writer of a process's task keys first writes that row, in process id
-- order, and only then reads the process's contract and writes the keys:
-- a READ COMMITTED writer waits there for one moving the process and then
-- sees where it went; a REPEATABLE READ or SERIALIZABLE writer that a
-- concurrent one has moved past fails with a serialization failure
-- (40001), to be retried, as its isolation level provides.
--
-- The operator's tables are unchanged: only triggers are added to
-- processes and tasks (contracts need none: deleting one deletes its
-- processes and their tasks, and a contract with processes cannot change
-- its id). The fill below locks writes to processes and tasks while it
-- runs (under a minute per million tasks).
LOCK TABLE processes, tasks IN SHARE ROW EXCLUSIVE MODE;

CREATE TABLE report_process_keys (
    process_id  bigint PRIMARY KEY,
    contract_id bigint NOT NULL
);

CREATE TABLE report_task_keys (
    task_id        bigint PRIMARY KEY,
    process_id     bigint NOT NULL,
    contract_id    bigint NOT NULL,
    status         text,
    end_date       date,
    execution_date timestamptz
);

-- report_keys_lock writes the rows of report_process_keys of the given
-- processes (unchanged), locking them in id order so that writers cannot
-- deadlock: the serialization point of every writer of their keys.
-- +goose StatementBegin
CREATE FUNCTION report_keys_lock(ids bigint[]) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM 1 FROM report_process_keys x
    WHERE x.process_id IN (SELECT unnest(ids)) ORDER BY x.process_id FOR UPDATE;
    -- Written, not only locked: a REPEATABLE READ writer that a concurrent
    -- one has written past must fail, and a lock alone would not do that.
    UPDATE report_process_keys x SET contract_id = x.contract_id
    WHERE x.process_id IN (SELECT unnest(ids));
END $$;
-- +goose StatementEnd

-- report_keys_add inserts the keys of the given tasks, after their
-- processes were locked. A task whose process this snapshot cannot see
-- was written under a REPEATABLE READ snapshot taken before its process
-- was: a serialization failure, to be retried.
-- +goose StatementBegin
CREATE FUNCTION report_keys_add(task_ids bigint[], process_ids bigint[], statuses text[], end_dates date[],
                                execution_dates timestamptz[]) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    n bigint;
BEGIN
    INSERT INTO report_task_keys (task_id, process_id, contract_id, status, end_date, execution_date)
    SELECT a.id, a.process_id, x.contract_id, nullif(a.status, ''), a.end_date, a.execution_date
    FROM unnest(task_ids, process_ids, statuses, end_dates, execution_dates)
         AS a(id, process_id, status, end_date, execution_date)
    JOIN report_process_keys x ON x.process_id = a.process_id;
    GET DIAGNOSTICS n = ROW_COUNT;
    IF n <> cardinality(task_ids) THEN
        RAISE EXCEPTION 'could not serialize access: a task''s process was written after this transaction''s snapshot'
            USING ERRCODE = 'serialization_failure';
    END IF;
END $$;
-- +goose StatementEnd

-- report_keys_on_tasks writes the keys of the tasks a statement wrote. A
-- task's edited values are written over its keys' row, and a deleted
-- task's row is deleted: a writer moving its process at the same time
-- writes that same row, so the two take turns, or the later one fails
-- (REPEATABLE READ). A new task, or one moved to another process (or
-- renumbered), gets a new row, which no such writer would see: its process
-- is locked first (report_keys_lock).
-- +goose StatementBegin
CREATE FUNCTION report_keys_on_tasks() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
    ids      bigint[]; -- the tasks whose keys are added, with their values
    parents  bigint[];
    statuses text[];
    ends     date[];
    execs    timestamptz[];
BEGIN
    IF TG_OP = 'INSERT' THEN
        SELECT array_agg(n.id), array_agg(n.process_id), array_agg(n.status), array_agg(n.end_date),
               array_agg(n.execution_date)
        INTO ids, parents, statuses, ends, execs FROM new_rows n;
    ELSIF TG_OP = 'UPDATE' THEN
        -- Tasks that keep their id and process: only those whose filtered
        -- values changed (a progress or title edit leaves the keys alone).
        UPDATE report_task_keys k
        SET status = nullif(n.status, ''), end_date = n.end_date, execution_date = n.execution_date
        FROM new_rows n JOIN old_rows o ON o.id = n.id AND o.process_id = n.process_id
        WHERE k.task_id = n.id
          AND (nullif(o.status, ''), o.end_date, o.execution_date)
              IS DISTINCT FROM (nullif(n.status, ''), n.end_date, n.execution_date);
        -- The others: the old row goes, a new one comes.
        DELETE FROM report_task_keys k WHERE k.task_id IN (
            SELECT id FROM (SELECT id, process_id FROM old_rows EXCEPT SELECT id, process_id FROM new_rows) m);
        SELECT array_agg(n.id), array_agg(n.process_id), array_agg(n.status), array_agg(n.end_date),
               array_agg(n.execution_date)
        INTO ids, parents, statuses, ends, execs
        FROM new_rows n
        WHERE (n.id, n.process_id) IN (SELECT id, process_id FROM new_rows EXCEPT SELECT id, process_id FROM old_rows);
    ELSE
        DELETE FROM report_task_keys k WHERE k.task_id IN (SELECT o.id FROM old_rows o);
    END IF;
    IF ids IS NOT NULL THEN
        PERFORM report_keys_lock(ARRAY(SELECT DISTINCT unnest(parents)));
        PERFORM report_keys_add(ids, parents, statuses, ends, execs);
    END IF;
    RETURN NULL;
END $$;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE FUNCTION report_keys_on_processes() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        INSERT INTO report_process_keys (process_id, contract_id)
        SELECT n.id, n.contract_id FROM new_rows n;
    ELSIF TG_OP = 'UPDATE' THEN
        -- A process with tasks cannot change its id (tasks reference it),
        -- so a new id is a process without keys: its row is replaced. A
        -- new contract moves the process's keys, after its row is written.
        PERFORM report_keys_lock(ARRAY(
            SELECT o.id FROM old_rows o JOIN new_rows n ON n.id = o.id WHERE n.contract_id <> o.contract_id));
        DELETE FROM report_process_keys x
        WHERE x.process_id IN (SELECT id FROM old_rows EXCEPT SELECT id FROM new_rows);
        INSERT INTO report_process_keys (process_id, contract_id)
        SELECT n.id, n.contract_id FROM new_rows n
        WHERE n.id IN (SELECT id FROM new_rows EXCEPT SELECT id FROM old_rows);
        UPDATE report_process_keys x SET contract_id = n.contract_id
        FROM new_rows n WHERE x.process_id = n.id AND x.contract_id <> n.contract_id;
        -- Found through the tasks' own index by process: an index of the
        -- keys by process would cost every write of a task's keys.
        UPDATE report_task_keys k SET contract_id = n.contract_id
        FROM new_rows n JOIN tasks t ON t.process_id = n.id
        WHERE k.task_id = t.id AND k.contract_id <> n.contract_id;
    ELSE
        -- Its tasks went with it (ON DELETE CASCADE), and their keys with them.
        DELETE FROM report_process_keys x WHERE x.process_id IN (SELECT o.id FROM old_rows o);
    END IF;
    RETURN NULL;
END $$;
-- +goose StatementEnd

-- report_keys_rebuild fills both tables from processes and tasks again;
-- TRUNCATE uses it.
-- +goose StatementBegin
CREATE FUNCTION report_keys_rebuild() RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    LOCK report_process_keys, report_task_keys IN EXCLUSIVE MODE;
    DELETE FROM report_task_keys;
    DELETE FROM report_process_keys;
    INSERT INTO report_process_keys (process_id, contract_id) SELECT p.id, p.contract_id FROM processes p;
    INSERT INTO report_task_keys (task_id, process_id, contract_id, status, end_date, execution_date)
    SELECT t.id, t.process_id, p.contract_id, nullif(t.status, ''), t.end_date, t.execution_date
    FROM tasks t JOIN processes p ON p.id = t.process_id;
END $$;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE FUNCTION report_keys_on_truncate() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM report_keys_rebuild();
    RETURN NULL;
END $$;
-- +goose StatementEnd

CREATE TRIGGER report_keys_ins AFTER INSERT ON processes REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION report_keys_on_processes();
CREATE TRIGGER report_keys_upd AFTER UPDATE ON processes REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION report_keys_on_processes();
CREATE TRIGGER report_keys_del AFTER DELETE ON processes REFERENCING OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION report_keys_on_processes();
CREATE TRIGGER report_keys_ins AFTER INSERT ON tasks REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION report_keys_on_tasks();
CREATE TRIGGER report_keys_upd AFTER UPDATE ON tasks REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION report_keys_on_tasks();
CREATE TRIGGER report_keys_del AFTER DELETE ON tasks REFERENCING OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION report_keys_on_tasks();
CREATE TRIGGER report_keys_truncate AFTER TRUNCATE ON processes
    FOR EACH STATEMENT EXECUTE FUNCTION report_keys_on_truncate();
CREATE TRIGGER report_keys_truncate AFTER TRUNCATE ON tasks
    FOR EACH STATEMENT EXECUTE FUNCTION report_keys_on_truncate();

SELECT report_keys_rebuild();

-- Each filtered value with the report's order after it, so that the keys
-- of a page come from the index in that order (an equality, a day), or
-- from the index alone (a range, then sorted).
CREATE INDEX report_task_keys_status_idx ON report_task_keys (status, contract_id, process_id, task_id);
CREATE INDEX report_task_keys_end_date_idx ON report_task_keys (end_date, contract_id, process_id, task_id);
CREATE INDEX report_task_keys_execution_date_idx ON report_task_keys (execution_date, contract_id, process_id, task_id);

-- +goose Down
DROP TRIGGER report_keys_truncate ON tasks;
DROP TRIGGER report_keys_truncate ON processes;
DROP TRIGGER report_keys_del ON tasks;
DROP TRIGGER report_keys_upd ON tasks;
DROP TRIGGER report_keys_ins ON tasks;
DROP TRIGGER report_keys_del ON processes;
DROP TRIGGER report_keys_upd ON processes;
DROP TRIGGER report_keys_ins ON processes;
DROP FUNCTION report_keys_on_truncate(), report_keys_rebuild(), report_keys_on_processes(), report_keys_on_tasks(),
    report_keys_add(bigint[], bigint[], text[], date[], timestamptz[]), report_keys_lock(bigint[]);
DROP TABLE report_task_keys, report_process_keys;
