-- scale-check: grows and shrinks the end of the report on the primary while
-- informe reads the standby: a contract with one process of 150 tasks (rows
-- appear in two steps: the process alone, then its tasks), then its removal.
INSERT INTO contracts (client_id, service_id, status, code)
SELECT (SELECT min(id) FROM clients), (SELECT min(id) FROM services), 'APROBADO', 'SCALE-CHURN-' || txid_current()
RETURNING id AS churn \gset
INSERT INTO processes (contract_id) VALUES (:churn) RETURNING id AS churn_process \gset
INSERT INTO tasks (process_id, name, status)
SELECT :churn_process, 'Tarea ' || k, 'PENDIENTE' FROM generate_series(1, 150) AS k;
SELECT pg_sleep(0.05);
DELETE FROM contracts WHERE id = :churn;
SELECT pg_sleep(0.05);
