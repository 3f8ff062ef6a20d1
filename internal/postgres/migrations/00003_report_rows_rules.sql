-- +goose Up
-- One home for each rule of the trigger-kept counts (00002): the bucket
-- width, how many report rows a contract yields, the total and the seek.
-- informe's Go code calls these functions and repeats none of them.

-- report_bucket_width is how many contract ids a bucket of
-- report_bucket_rows spans; report_bucket is a contract id's bucket.
CREATE FUNCTION report_bucket_width() RETURNS bigint
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$ SELECT 1024::bigint $$;
CREATE FUNCTION report_bucket(contract_id bigint) RETURNS bigint
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$ SELECT contract_id / report_bucket_width() $$;

-- report_rows_of returns how many general_report rows each of the given
-- contracts yields (all contracts when ids is NULL): one per task, one per
-- process without tasks, and one for a contract without processes.
-- Contracts that do not exist are left out.
-- +goose StatementBegin
CREATE FUNCTION report_rows_of(ids bigint[]) RETURNS TABLE (contract_id bigint, rows integer)
LANGUAGE sql STABLE AS $$
    SELECT c.id, greatest(1, coalesce(sum(greatest(1, coalesce(tc.n, 0))), 0))::integer
    FROM contracts c
    LEFT JOIN processes p ON p.contract_id = c.id
    LEFT JOIN LATERAL (SELECT count(*) AS n FROM tasks t WHERE t.process_id = p.id) tc ON true
    WHERE ids IS NULL OR c.id = ANY (ids)
    GROUP BY c.id
$$;
-- +goose StatementEnd

-- report_rows_total is the number of rows of general_report.
CREATE FUNCTION report_rows_total() RETURNS bigint
LANGUAGE sql STABLE AS $$ SELECT coalesce(sum(rows), 0)::bigint FROM report_bucket_rows $$;

-- report_contract_at returns the contract holding the report's row number
-- "row" (from 0) and the number of that contract's first row, walking the
-- bucket totals, then the contracts of one bucket. No row when "row" lies
-- past the end.
-- +goose StatementBegin
CREATE FUNCTION report_contract_at(row_number bigint, OUT contract_id bigint, OUT first_row bigint)
LANGUAGE sql STABLE AS $$
    WITH b AS (
        SELECT bucket, cum - rows AS before FROM (
            SELECT bucket, rows, sum(rows) OVER (ORDER BY bucket) AS cum FROM report_bucket_rows
        ) x WHERE cum > row_number ORDER BY bucket LIMIT 1
    )
    SELECT c.contract_id, b.before + c.cum - c.rows
    FROM b, LATERAL (
        SELECT r.contract_id, r.rows, sum(r.rows) OVER (ORDER BY r.contract_id) AS cum
        FROM report_contract_rows r
        WHERE r.contract_id >= b.bucket * report_bucket_width()
          AND r.contract_id < (b.bucket + 1) * report_bucket_width()
    ) c
    WHERE b.before + c.cum > row_number ORDER BY c.contract_id LIMIT 1
$$;
-- +goose StatementEnd

-- The counters' writers, now in terms of the rules above.
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

-- +goose StatementBegin
CREATE OR REPLACE FUNCTION report_rows_rebuild() RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    LOCK report_contract_rows, report_bucket_rows IN EXCLUSIVE MODE;
    DELETE FROM report_contract_rows;
    DELETE FROM report_bucket_rows;
    INSERT INTO report_contract_rows (contract_id, rows)
    SELECT n.contract_id, n.rows FROM report_rows_of(NULL) n;
    INSERT INTO report_bucket_rows (bucket, rows)
    SELECT report_bucket(r.contract_id), sum(r.rows) FROM report_contract_rows r GROUP BY 1;
END $$;
-- +goose StatementEnd

-- +goose Down
-- 00002's report_rows_refresh and report_rows_rebuild, which do not call
-- the functions dropped below.
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

-- +goose StatementBegin
CREATE OR REPLACE FUNCTION report_rows_rebuild() RETURNS void
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

DROP FUNCTION report_contract_at(bigint), report_rows_total(), report_rows_of(bigint[]),
    report_bucket(bigint), report_bucket_width();
-- report_bucket put contract ids below 0 in other buckets than id >> 10.
-- +goose StatementBegin
DO $$
BEGIN
    IF EXISTS (SELECT 1 FROM report_contract_rows WHERE contract_id < 0) THEN
        PERFORM report_rows_rebuild();
    END IF;
END $$;
-- +goose StatementEnd
