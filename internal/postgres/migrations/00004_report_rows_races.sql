-- +goose Up
-- Three fixes to the trigger-kept counts of 00002 and 00003, found while
-- writing the random writers of internal/postgres/report_counts_random_test.go,
-- which show them, and pinned by report_counts_races_test.go:
--
-- 1. A task written while another transaction moved its process to another
--    contract was counted in the old contract only: the tasks trigger read
--    the process's contract before the mover committed, waited for the
--    mover's counter locks, then recounted the old contract and never
--    looked again. It now looks again after each recount, until no new
--    contract turns up.
-- 2. A REPEATABLE READ or SERIALIZABLE writer recounts with its
--    transaction's snapshot, blind to what others committed since. Where a
--    concurrent writer had left a contract's count as it was (a first task
--    in an empty process) it did not write the counter, so nothing told
--    the later writer, whose recount then lost that row. report_rows_refresh
--    now writes every counter it recounts: such a writer fails with a
--    serialization failure (40001), to be retried, as its isolation level
--    provides.
-- 3. report_bucket divided with truncation toward zero, so a contract id
--    below 0 fell into a bucket whose id range, which report_contract_at
--    reads, does not hold it. It now rounds down, as 00002's id >> 10 did.

-- +goose StatementBegin
CREATE OR REPLACE FUNCTION report_bucket(contract_id bigint) RETURNS bigint
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT CASE WHEN contract_id >= 0 THEN contract_id / report_bucket_width()
                ELSE -(-(contract_id + 1) / report_bucket_width()) - 1 END
$$;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE OR REPLACE FUNCTION report_rows_refresh(ids bigint[]) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    buckets bigint[];
    deltas  bigint[];
BEGIN
    -- Lock the counters first, in id order so that writers cannot deadlock.
    -- A concurrent writer of the same contract waits here; the next
    -- statement takes a fresh snapshot (READ COMMITTED) that sees its rows.
    -- Under REPEATABLE READ, a counter another writer wrote since the
    -- snapshot fails here with 40001 instead.
    PERFORM 1 FROM report_contract_rows r
    WHERE r.contract_id = ANY (ids) ORDER BY r.contract_id FOR UPDATE;

    WITH affected AS (
        SELECT DISTINCT id FROM unnest(ids) AS id WHERE id IS NOT NULL
    ), fresh AS (
        SELECT a.id AS contract_id, coalesce(n.rows, 0) AS new_rows, coalesce(r.rows, 0) AS old_rows
        FROM affected a
        LEFT JOIN report_rows_of(ARRAY(SELECT id FROM affected)) n ON n.contract_id = a.id
        LEFT JOIN report_contract_rows r ON r.contract_id = a.id
    ), upserted AS (
        -- Every counter recounted is written, changed or not, so that a
        -- REPEATABLE READ writer of the same contract conflicts (see 2.).
        INSERT INTO report_contract_rows (contract_id, rows)
        SELECT f.contract_id, f.new_rows FROM fresh f WHERE f.new_rows > 0
        ON CONFLICT (contract_id) DO UPDATE SET rows = excluded.rows
    ), deleted AS (
        DELETE FROM report_contract_rows r
        WHERE r.contract_id IN (SELECT f.contract_id FROM fresh f WHERE f.new_rows = 0)
    )
    SELECT array_agg(bucket ORDER BY bucket), array_agg(delta ORDER BY bucket)
    INTO buckets, deltas
    FROM (SELECT report_bucket(f.contract_id) AS bucket, sum(f.new_rows - f.old_rows)::bigint AS delta
          FROM fresh f GROUP BY 1 HAVING sum(f.new_rows - f.old_rows) <> 0) d;

    IF buckets IS NULL THEN
        RETURN;
    END IF;
    -- Move the bucket totals by the differences (see 00002 for why not
    -- with one INSERT ... ON CONFLICT), locking buckets in order.
    PERFORM 1 FROM report_bucket_rows b
    WHERE b.bucket = ANY (buckets) ORDER BY b.bucket FOR UPDATE;
    UPDATE report_bucket_rows b SET rows = b.rows + d.delta
    FROM unnest(buckets, deltas) AS d(bucket, delta)
    WHERE b.bucket = d.bucket;
    INSERT INTO report_bucket_rows AS b (bucket, rows)
    SELECT d.bucket, d.delta FROM unnest(buckets, deltas) AS d(bucket, delta)
    WHERE NOT EXISTS (SELECT 1 FROM report_bucket_rows x WHERE x.bucket = d.bucket)
    ORDER BY d.bucket
    ON CONFLICT (bucket) DO UPDATE SET rows = b.rows + excluded.rows;
END $$;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE OR REPLACE FUNCTION report_rows_on_tasks() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
    changed bigint[]; -- the processes whose tasks changed
    done    bigint[] := '{}';
    todo    bigint[];
BEGIN
    IF TG_OP = 'INSERT' THEN
        changed := ARRAY(SELECT DISTINCT n.process_id FROM new_rows n);
    ELSIF TG_OP = 'UPDATE' THEN
        -- Only tasks whose id or process changed move rows; a status or
        -- progress edit leaves the counts alone.
        changed := ARRAY(SELECT DISTINCT m.process_id FROM (
            (SELECT id, process_id FROM old_rows EXCEPT SELECT id, process_id FROM new_rows)
            UNION ALL
            (SELECT id, process_id FROM new_rows EXCEPT SELECT id, process_id FROM old_rows)) m);
    ELSE
        changed := ARRAY(SELECT DISTINCT o.process_id FROM old_rows o);
    END IF;
    -- Recount the contracts of those processes, then read their contracts
    -- again: the recount may have waited for a writer that moved one of
    -- them to another contract, and each statement here sees what that
    -- writer committed (READ COMMITTED; see 1.). A task deleted along with
    -- its process finds no process here; the processes trigger recounts
    -- that contract.
    LOOP
        -- Joins, not = ANY (array): a bulk load changes many processes.
        todo := ARRAY(SELECT DISTINCT p.contract_id FROM processes p
                      WHERE p.id IN (SELECT unnest(changed))
                        AND NOT EXISTS (SELECT 1 FROM unnest(done) AS d(id) WHERE d.id = p.contract_id));
        EXIT WHEN cardinality(todo) = 0;
        PERFORM report_rows_refresh(todo);
        done := done || todo;
    END LOOP;
    RETURN NULL;
END $$;
-- +goose StatementEnd

-- Buckets of contract ids below 0 were keyed by the old rule.
-- +goose StatementBegin
DO $$
BEGIN
    IF EXISTS (SELECT 1 FROM report_contract_rows WHERE contract_id < 0) THEN
        PERFORM report_rows_rebuild();
    END IF;
END $$;
-- +goose StatementEnd

-- +goose Down
-- 00003's definitions.
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION report_bucket(contract_id bigint) RETURNS bigint
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$ SELECT contract_id / report_bucket_width() $$;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE OR REPLACE FUNCTION report_rows_refresh(ids bigint[]) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    buckets bigint[];
    deltas  bigint[];
BEGIN
    -- Lock the counters first, in id order so that writers cannot deadlock.
    -- A concurrent writer of the same contract waits here; the next
    -- statement takes a fresh snapshot (READ COMMITTED) that sees its rows.
    PERFORM 1 FROM report_contract_rows r
    WHERE r.contract_id = ANY (ids) ORDER BY r.contract_id FOR UPDATE;

    WITH affected AS (
        SELECT DISTINCT id FROM unnest(ids) AS id WHERE id IS NOT NULL
    ), fresh AS (
        SELECT a.id AS contract_id, coalesce(n.rows, 0) AS new_rows, coalesce(r.rows, 0) AS old_rows
        FROM affected a
        LEFT JOIN report_rows_of(ARRAY(SELECT id FROM affected)) n ON n.contract_id = a.id
        LEFT JOIN report_contract_rows r ON r.contract_id = a.id
    ), upserted AS (
        INSERT INTO report_contract_rows (contract_id, rows)
        SELECT f.contract_id, f.new_rows FROM fresh f WHERE f.new_rows > 0 AND f.new_rows <> f.old_rows
        ON CONFLICT (contract_id) DO UPDATE SET rows = excluded.rows
    ), deleted AS (
        DELETE FROM report_contract_rows r
        WHERE r.contract_id IN (SELECT f.contract_id FROM fresh f WHERE f.new_rows = 0)
    )
    SELECT array_agg(bucket ORDER BY bucket), array_agg(delta ORDER BY bucket)
    INTO buckets, deltas
    FROM (SELECT report_bucket(f.contract_id) AS bucket, sum(f.new_rows - f.old_rows)::bigint AS delta
          FROM fresh f GROUP BY 1 HAVING sum(f.new_rows - f.old_rows) <> 0) d;

    IF buckets IS NULL THEN
        RETURN;
    END IF;
    -- Move the bucket totals by the differences (see 00002 for why not
    -- with one INSERT ... ON CONFLICT), locking buckets in order.
    PERFORM 1 FROM report_bucket_rows b
    WHERE b.bucket = ANY (buckets) ORDER BY b.bucket FOR UPDATE;
    UPDATE report_bucket_rows b SET rows = b.rows + d.delta
    FROM unnest(buckets, deltas) AS d(bucket, delta)
    WHERE b.bucket = d.bucket;
    INSERT INTO report_bucket_rows AS b (bucket, rows)
    SELECT d.bucket, d.delta FROM unnest(buckets, deltas) AS d(bucket, delta)
    WHERE NOT EXISTS (SELECT 1 FROM report_bucket_rows x WHERE x.bucket = d.bucket)
    ORDER BY d.bucket
    ON CONFLICT (bucket) DO UPDATE SET rows = b.rows + excluded.rows;
END $$;
-- +goose StatementEnd

-- 00002's definition.
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION report_rows_on_tasks() RETURNS trigger
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
DO $$
BEGIN
    IF EXISTS (SELECT 1 FROM report_contract_rows WHERE contract_id < 0) THEN
        PERFORM report_rows_rebuild();
    END IF;
END $$;
-- +goose StatementEnd
