-- scale-check: one new contract on the primary, written the way a system of
-- record would, in one transaction: three processes with 2, 0 and 4 tasks,
-- so 2 + 1 + 4 = 7 report rows. The row-count triggers run inside it.
-- Prints the new contract's id.
BEGIN;
INSERT INTO contracts (client_id, service_id, status, code, quantity_quotas, date_first_payment, attended_by)
SELECT (SELECT min(id) FROM clients), (SELECT min(id) FROM services),
       'APROBADO', 'SCALE-CHECK-1', 3, DATE '2025-03-01', 'scale-check'
RETURNING id AS contract \gset
INSERT INTO processes (contract_id, role, caption, process_date)
VALUES (:contract, 'Demandante', 'SCALE con CHECK', DATE '2025-03-02') RETURNING id AS p1 \gset
INSERT INTO processes (contract_id, role, caption, process_date)
VALUES (:contract, 'Demandado', 'SCALE con CHECK II', NULL) RETURNING id AS p2 \gset
INSERT INTO processes (contract_id, role, caption, process_date)
VALUES (:contract, '', '', NULL) RETURNING id AS p3 \gset
INSERT INTO tasks (process_id, name, title, detail, code, end_date, duration, status, progress, executor, execution_date)
SELECT p, 'Tarea ' || k, 'Título ' || k, 'Detalle, con "comillas" y ñ', 'T-' || k, DATE '2025-04-01' + k,
       k * 10, 'PENDIENTE', k * 20, 'scale-check', TIMESTAMPTZ '2025-04-01 12:00:00.123456+00' + k * INTERVAL '1 hour'
FROM (VALUES (:p1, 2), (:p3, 4)) AS v(p, n), generate_series(1, v.n) AS k;
COMMIT;
SELECT :contract;
