-- +goose Up
-- Exact row counts of general_report, kept by triggers, so that an unfiltered
-- page neither counts a million joined rows nor skips them with OFFSET.
--
-- report_contract_rows holds how many report rows each contract yields;
-- report_bucket_rows sums them per bucket of 1024 contract ids. The total is
-- a sum over the buckets, and page N is found by walking the buckets, then
-- the contracts of one bucket, then a short OFFSET inside one contract.
-- The triggers run in the writer's transaction, so the counts are exactly as
-- consistent as the rows: a REPEATABLE READ reader sees both or neither.

CREATE TABLE report_contract_rows (
    contract_id bigint PRIMARY KEY,
    rows        integer NOT NULL CHECK (rows > 0)
);

CREATE TABLE report_bucket_rows (
    bucket bigint PRIMARY KEY,
    rows   bigint NOT NULL CHECK (rows >= 0)
);

-- report_rows_refresh recounts the report rows of the given contracts and
-- moves the bucket totals by the difference.
-- +goose StatementBegin
CREATE FUNCTION report_rows_refresh(ids bigint[]) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    buckets bigint[];
    deltas  bigint[];
BEGIN
    -- Lock the counters first, in id order so that writers cannot deadlock.
    -- A concurrent writer of the same contract waits here; the next
    -- statement takes a fresh snapshot (READ COMMITTED) that sees its rows.
    PERFORM 1 FROM report_contract_rows
    WHERE contract_id = ANY (ids) ORDER BY contract_id FOR UPDATE;

    WITH affected AS (
        SELECT DISTINCT id FROM unnest(ids) AS id WHERE id IS NOT NULL
    ), fresh AS (
        SELECT a.id AS contract_id,
               CASE WHEN c.id IS NULL THEN 0 ELSE greatest(1, (
                   SELECT coalesce(sum(greatest(1, (
                       SELECT count(*) FROM tasks t WHERE t.process_id = p.id))), 0)
                   FROM processes p WHERE p.contract_id = c.id))
               END::integer AS new_rows,
               coalesce(r.rows, 0) AS old_rows
        FROM affected a
        LEFT JOIN contracts c ON c.id = a.id
        LEFT JOIN report_contract_rows r ON r.contract_id = a.id
    ), upserted AS (
        INSERT INTO report_contract_rows (contract_id, rows)
        SELECT contract_id, new_rows FROM fresh WHERE new_rows > 0 AND new_rows <> old_rows
        ON CONFLICT (contract_id) DO UPDATE SET rows = excluded.rows
    ), deleted AS (
        DELETE FROM report_contract_rows
        WHERE contract_id IN (SELECT contract_id FROM fresh WHERE new_rows = 0)
    )
    SELECT array_agg(bucket ORDER BY bucket), array_agg(delta ORDER BY bucket)
    INTO buckets, deltas
    FROM (SELECT contract_id >> 10 AS bucket, sum(new_rows - old_rows)::bigint AS delta
          FROM fresh GROUP BY 1 HAVING sum(new_rows - old_rows) <> 0) d;

    IF buckets IS NULL THEN
        RETURN;
    END IF;
    -- Move the bucket totals by the differences. Not with one INSERT ...
    -- ON CONFLICT DO UPDATE: PostgreSQL checks the proposed row, a negative
    -- difference, against CHECK (rows >= 0) before it finds the conflict.
    -- Existing buckets are locked in bucket order, like the counters.
    PERFORM 1 FROM report_bucket_rows
    WHERE bucket = ANY (buckets) ORDER BY bucket FOR UPDATE;
    UPDATE report_bucket_rows b SET rows = b.rows + d.delta
    FROM unnest(buckets, deltas) AS d(bucket, delta)
    WHERE b.bucket = d.bucket;
    -- A bucket not counted yet holds only new contracts, so its difference
    -- is positive. A writer that creates it meanwhile is added to.
    INSERT INTO report_bucket_rows AS b (bucket, rows)
    SELECT d.bucket, d.delta FROM unnest(buckets, deltas) AS d(bucket, delta)
    WHERE NOT EXISTS (SELECT 1 FROM report_bucket_rows x WHERE x.bucket = d.bucket)
    ORDER BY d.bucket
    ON CONFLICT (bucket) DO UPDATE SET rows = b.rows + excluded.rows;
END $$;
-- +goose StatementEnd

-- report_rows_rebuild recounts everything; TRUNCATE and bulk loads use it.
-- +goose StatementBegin
CREATE FUNCTION report_rows_rebuild() RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    LOCK report_contract_rows, report_bucket_rows IN EXCLUSIVE MODE;
    DELETE FROM report_contract_rows;
    DELETE FROM report_bucket_rows;
    INSERT INTO report_contract_rows (contract_id, rows)
    SELECT c.id, greatest(1, coalesce(sum(greatest(1, coalesce(tc.n, 0))), 0))
    FROM contracts c
    LEFT JOIN processes p ON p.contract_id = c.id
    LEFT JOIN (SELECT process_id, count(*) AS n FROM tasks GROUP BY process_id) tc
           ON tc.process_id = p.id
    GROUP BY c.id;
    INSERT INTO report_bucket_rows (bucket, rows)
    SELECT contract_id >> 10, sum(rows) FROM report_contract_rows GROUP BY 1;
END $$;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE FUNCTION report_rows_on_contracts() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        PERFORM report_rows_refresh(ARRAY(SELECT id FROM new_rows));
    ELSIF TG_OP = 'UPDATE' THEN
        -- Only a changed id moves rows; other edits leave the counts alone.
        PERFORM report_rows_refresh(ARRAY(
            (SELECT id FROM old_rows EXCEPT SELECT id FROM new_rows)
            UNION (SELECT id FROM new_rows EXCEPT SELECT id FROM old_rows)));
    ELSE
        PERFORM report_rows_refresh(ARRAY(SELECT id FROM old_rows));
    END IF;
    RETURN NULL;
END $$;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE FUNCTION report_rows_on_processes() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        PERFORM report_rows_refresh(ARRAY(SELECT contract_id FROM new_rows));
    ELSIF TG_OP = 'UPDATE' THEN
        -- Only processes whose id or contract changed move rows.
        PERFORM report_rows_refresh(ARRAY(
            SELECT contract_id FROM (
                (SELECT id, contract_id FROM old_rows EXCEPT SELECT id, contract_id FROM new_rows)
                UNION ALL
                (SELECT id, contract_id FROM new_rows EXCEPT SELECT id, contract_id FROM old_rows)) moved));
    ELSE
        PERFORM report_rows_refresh(ARRAY(SELECT contract_id FROM old_rows));
    END IF;
    RETURN NULL;
END $$;
-- +goose StatementEnd

-- A task deleted along with its process finds no process here; the
-- processes trigger recounts that contract.
-- +goose StatementBegin
CREATE FUNCTION report_rows_on_tasks() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        PERFORM report_rows_refresh(ARRAY(
            SELECT p.contract_id FROM processes p
            WHERE p.id IN (SELECT process_id FROM new_rows)));
    ELSIF TG_OP = 'UPDATE' THEN
        PERFORM report_rows_refresh(ARRAY(
            SELECT p.contract_id FROM processes p
            WHERE p.id IN (
                -- Only tasks whose id or process changed move rows; a
                -- status or progress edit leaves the counts alone.
                SELECT process_id FROM (
                    (SELECT id, process_id FROM old_rows EXCEPT SELECT id, process_id FROM new_rows)
                    UNION ALL
                    (SELECT id, process_id FROM new_rows EXCEPT SELECT id, process_id FROM old_rows)) moved)));
    ELSE
        PERFORM report_rows_refresh(ARRAY(
            SELECT p.contract_id FROM processes p
            WHERE p.id IN (SELECT process_id FROM old_rows)));
    END IF;
    RETURN NULL;
END $$;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE FUNCTION report_rows_on_truncate() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM report_rows_rebuild();
    RETURN NULL;
END $$;
-- +goose StatementEnd

-- Transition tables allow one event per trigger, hence three per table.
CREATE TRIGGER report_rows_ins AFTER INSERT ON contracts REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION report_rows_on_contracts();
CREATE TRIGGER report_rows_upd AFTER UPDATE ON contracts REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION report_rows_on_contracts();
CREATE TRIGGER report_rows_del AFTER DELETE ON contracts REFERENCING OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION report_rows_on_contracts();
CREATE TRIGGER report_rows_ins AFTER INSERT ON processes REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION report_rows_on_processes();
CREATE TRIGGER report_rows_upd AFTER UPDATE ON processes REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION report_rows_on_processes();
CREATE TRIGGER report_rows_del AFTER DELETE ON processes REFERENCING OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION report_rows_on_processes();
CREATE TRIGGER report_rows_ins AFTER INSERT ON tasks REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION report_rows_on_tasks();
CREATE TRIGGER report_rows_upd AFTER UPDATE ON tasks REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION report_rows_on_tasks();
CREATE TRIGGER report_rows_del AFTER DELETE ON tasks REFERENCING OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION report_rows_on_tasks();
CREATE TRIGGER report_rows_truncate AFTER TRUNCATE ON contracts
    FOR EACH STATEMENT EXECUTE FUNCTION report_rows_on_truncate();
CREATE TRIGGER report_rows_truncate AFTER TRUNCATE ON processes
    FOR EACH STATEMENT EXECUTE FUNCTION report_rows_on_truncate();
CREATE TRIGGER report_rows_truncate AFTER TRUNCATE ON tasks
    FOR EACH STATEMENT EXECUTE FUNCTION report_rows_on_truncate();

SELECT report_rows_rebuild();

-- +goose Down
DROP TRIGGER report_rows_truncate ON tasks;
DROP TRIGGER report_rows_truncate ON processes;
DROP TRIGGER report_rows_truncate ON contracts;
DROP TRIGGER report_rows_del ON tasks;
DROP TRIGGER report_rows_upd ON tasks;
DROP TRIGGER report_rows_ins ON tasks;
DROP TRIGGER report_rows_del ON processes;
DROP TRIGGER report_rows_upd ON processes;
DROP TRIGGER report_rows_ins ON processes;
DROP TRIGGER report_rows_del ON contracts;
DROP TRIGGER report_rows_upd ON contracts;
DROP TRIGGER report_rows_ins ON contracts;
DROP FUNCTION report_rows_on_truncate(), report_rows_on_tasks(), report_rows_on_processes(),
    report_rows_on_contracts(), report_rows_rebuild(), report_rows_refresh(bigint[]);
DROP TABLE report_bucket_rows, report_contract_rows;
