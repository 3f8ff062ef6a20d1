-- +goose Up
-- What a token may see besides its scopes (informe token create and
-- change): the columns it may read (NULL: all of them), only those that
-- hold no personal data, the columns it sees masked, a row condition in
-- the OData feed's $filter language, and the most rows one response may
-- carry (NULL: no limit). Read with the token on every request, in the
-- same row, so that a token without rules costs nothing more.
ALTER TABLE api_tokens
    ADD COLUMN rule_columns text[],
    ADD COLUMN rule_no_personal boolean NOT NULL DEFAULT false,
    ADD COLUMN rule_mask text[],
    ADD COLUMN rule_rows text,
    ADD COLUMN rule_max_rows bigint CHECK (rule_max_rows > 0);

-- +goose Down
ALTER TABLE api_tokens
    DROP COLUMN rule_columns,
    DROP COLUMN rule_no_personal,
    DROP COLUMN rule_mask,
    DROP COLUMN rule_rows,
    DROP COLUMN rule_max_rows;
