-- +goose Up
-- A person's data held back on request (informe subjects block): one row
-- per blocked RUT, normalized by rut_key, with who blocked it, when and
-- why. While it is here, informe withholds that person's personal columns
-- (as client, as payer, as user) in every response.
CREATE TABLE subject_blocks (
    rut_key    text PRIMARY KEY CHECK (rut_key <> ''),
    reason     text NOT NULL CHECK (reason <> ''),
    blocked_by text NOT NULL,
    blocked_at timestamptz NOT NULL DEFAULT now()
);

-- Every block and unblock, kept after an unblock.
CREATE TABLE subject_block_events (
    id      bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    rut_key text NOT NULL,
    action  text NOT NULL CHECK (action IN ('block', 'unblock')),
    reason  text,
    actor   text NOT NULL,
    at      timestamptz NOT NULL DEFAULT now()
);

-- The persons a block reaches are found through these at every request.
CREATE INDEX contracts_client_rut_key_idx ON contracts (rut_key(client_rut));
CREATE INDEX contracts_payer_rut_key_idx ON contracts (rut_key(payer_rut));
CREATE INDEX users_rut_key_idx ON users (rut_key(rut));

-- subject_withheld resolves the blocks, in the reader's snapshot, to the
-- ids whose personal values are withheld: 'client' a client's id (its RUT
-- in clients, or the client_rut recorded on one of its contracts);
-- 'client_contract' a contract of such a client (what a process names its
-- client by); 'payer' a contract whose recorded payer_rut is blocked;
-- 'user' a user's id, with its name (attended_by and task_executor hold
-- names).
CREATE VIEW subject_withheld AS
WITH client AS (
    SELECT c.id FROM subject_blocks b JOIN clients c ON rut_key(c.rut) = b.rut_key
    UNION
    SELECT k.client_id FROM subject_blocks b JOIN contracts k ON rut_key(k.client_rut) = b.rut_key
)
SELECT 'client'::text AS kind, id, NULL::text AS name FROM client
UNION ALL
SELECT 'client_contract', k.id, NULL FROM client JOIN contracts k ON k.client_id = client.id
UNION ALL
SELECT 'payer', k.id, NULL FROM subject_blocks b JOIN contracts k ON rut_key(k.payer_rut) = b.rut_key
UNION ALL
SELECT 'user', u.id, u.name FROM subject_blocks b JOIN users u ON rut_key(u.rut) = b.rut_key;

-- subject_withheld_ids returns subject_withheld's ids by kind, and the
-- blocked users' names: what every request reads, in its own snapshot.
-- With no block (the usual case) it reads one empty table; its statements'
-- plans are kept by the session, so a request plans one function call.
-- +goose StatementBegin
CREATE FUNCTION subject_withheld_ids(OUT clients bigint[], OUT client_contracts bigint[], OUT payers bigint[],
                                     OUT users bigint[], OUT names text[])
LANGUAGE plpgsql STABLE AS $$
BEGIN
    clients := '{}'; client_contracts := '{}'; payers := '{}'; users := '{}'; names := '{}';
    IF NOT EXISTS (SELECT FROM subject_blocks) THEN
        RETURN;
    END IF;
    SELECT coalesce(array_agg(id) FILTER (WHERE kind = 'client'), '{}'),
           coalesce(array_agg(id) FILTER (WHERE kind = 'client_contract'), '{}'),
           coalesce(array_agg(id) FILTER (WHERE kind = 'payer'), '{}'),
           coalesce(array_agg(id) FILTER (WHERE kind = 'user'), '{}'),
           coalesce(array_agg(name) FILTER (WHERE kind = 'user'), '{}')
      INTO clients, client_contracts, payers, users, names
      FROM subject_withheld;
END
$$;
-- +goose StatementEnd

-- +goose Down
DROP FUNCTION subject_withheld_ids();
DROP VIEW subject_withheld;
DROP INDEX users_rut_key_idx;
DROP INDEX contracts_payer_rut_key_idx;
DROP INDEX contracts_client_rut_key_idx;
DROP TABLE subject_block_events;
DROP TABLE subject_blocks;
