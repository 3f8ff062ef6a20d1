-- +goose Up
-- report_contract_at (00003) as two statements, each stopping at its first
-- match: the bucket holding the row, then the contract within that bucket.
-- As one SQL statement, PostgreSQL summed every contract of the bucket and
-- sorted them before taking the first (about 1.5 ms a call at 1,024
-- contracts a bucket, twice per page), and planned it again on each call;
-- PL/pgSQL keeps each statement's plan for the session. Same results.
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION report_contract_at(row_number bigint, OUT contract_id bigint, OUT first_row bigint)
LANGUAGE plpgsql STABLE AS $$
DECLARE
    found_bucket bigint;
    before bigint;
BEGIN
    SELECT x.bucket, x.cum - x.rows INTO found_bucket, before FROM (
        SELECT b.bucket, b.rows, sum(b.rows) OVER (ORDER BY b.bucket) AS cum
        FROM report_bucket_rows b
    ) x WHERE x.cum > row_number ORDER BY x.bucket LIMIT 1;
    IF NOT FOUND THEN
        RETURN;
    END IF;
    SELECT c.contract_id, before + c.cum - c.rows INTO contract_id, first_row FROM (
        SELECT r.contract_id, r.rows, sum(r.rows) OVER (ORDER BY r.contract_id) AS cum
        FROM report_contract_rows r
        WHERE r.contract_id >= found_bucket * report_bucket_width()
          AND r.contract_id < (found_bucket + 1) * report_bucket_width()
    ) c WHERE before + c.cum > row_number ORDER BY c.contract_id LIMIT 1;
END
$$;
-- +goose StatementEnd

-- +goose Down
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION report_contract_at(row_number bigint, OUT contract_id bigint, OUT first_row bigint)
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
