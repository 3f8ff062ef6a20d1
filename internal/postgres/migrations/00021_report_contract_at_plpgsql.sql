-- +goose Up
-- report_contract_at finds the contract holding a row of the report, for
-- every unfiltered page. As an SQL function its body was planned again at
-- each call, and read every contract of the row's bucket (a bitmap scan
-- and a sort of up to 1,024 counters) before it took the first that
-- reached the row. In PL/pgSQL its two statements keep their plans per
-- connection, and each reads its counters in their index's order and
-- stops at the first that reaches the row. The answers are the same.
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION report_contract_at(row_number bigint, OUT contract_id bigint, OUT first_row bigint)
LANGUAGE plpgsql STABLE AS $$
DECLARE
    b      bigint;
    before bigint;
BEGIN
    SELECT x.bucket, x.cum - x.rows INTO b, before FROM (
        SELECT t.bucket, t.rows, sum(t.rows) OVER (ORDER BY t.bucket) AS cum
        FROM report_bucket_rows t ORDER BY t.bucket
    ) x WHERE x.cum > row_number LIMIT 1;
    IF NOT FOUND THEN
        RETURN;
    END IF;
    SELECT c.contract_id, before + c.cum - c.rows INTO contract_id, first_row FROM (
        SELECT r.contract_id, r.rows, sum(r.rows) OVER (ORDER BY r.contract_id) AS cum
        FROM report_contract_rows r
        WHERE r.contract_id >= b * report_bucket_width() AND r.contract_id < (b + 1) * report_bucket_width()
        ORDER BY r.contract_id
    ) c WHERE before + c.cum > row_number LIMIT 1;
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
