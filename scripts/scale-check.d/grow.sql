-- scale-check: 10,000 more contracts on the primary, each with one process
-- of 10 tasks: 100,000 report rows at the end of the report, so that a whole
-- export is large enough to be read in parts (50,000 rows a part at least).
-- The clients take turns; the row-count triggers run as for any write.
INSERT INTO contracts (client_id, service_id, status, code)
SELECT c.ids[1 + k % array_length(c.ids, 1)], (SELECT min(id) FROM services), 'APROBADO', 'SCALE-GROW-' || k
FROM generate_series(1, 10000) AS k, (SELECT array_agg(id ORDER BY id) AS ids FROM clients) AS c;
INSERT INTO processes (contract_id, role, caption, process_date)
SELECT id, 'Demandante', 'GROW ' || id, DATE '2025-05-01' + (id % 90)::int FROM contracts WHERE code LIKE 'SCALE-GROW-%';
INSERT INTO tasks (process_id, name, status, progress, duration)
SELECT p.id, 'Tarea ' || k, 'PENDIENTE', k * 10, (p.id % 97)::int
FROM processes p JOIN contracts c ON c.id = p.contract_id AND c.code LIKE 'SCALE-GROW-%', generate_series(1, 10) AS k;
