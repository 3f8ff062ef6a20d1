-- +goose Up
-- A token's own limit of big responses at once (informe token create and
-- change --max-exports): NULL follows informe serve's
-- --max-exports-per-token, 0 is no limit of its own.
ALTER TABLE api_tokens ADD COLUMN max_exports integer CHECK (max_exports >= 0);

-- +goose Down
ALTER TABLE api_tokens DROP COLUMN max_exports;
