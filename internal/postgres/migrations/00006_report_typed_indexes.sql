-- +goose Up
-- Four of 00005's indexes, rebuilt so that the OData steps they serve read
-- only the index (an index-only scan) and no table row; the tables keep as
-- many indexes as before, and every column indexed now was indexed already,
-- so writers update as many indexes as before and the updates that were
-- HOT stay HOT. The rebuild locks each table against writes while its
-- index is built (a few seconds for a million tasks).
--
-- tasks: a filter on a task's end date or execution date (a month of
-- task_end_date, Power BI's incremental-refresh window) finds the tasks in
-- the index, each with its process and id, which is all the report's
-- order needs from a task: the rows are ordered by contract, process and
-- task without reading a task row.
DROP INDEX tasks_end_date_idx, tasks_execution_date_idx;
CREATE INDEX tasks_end_date_idx ON tasks (end_date, process_id, id);
CREATE INDEX tasks_execution_date_idx ON tasks (execution_date, process_id, id);

-- contracts: the contracts of a service in id order, and client_id beside
-- them, which PostgreSQL still reads for the report's join to clients even
-- where the query needs no client: without it, a sort on the service's
-- cost read every contract row.
DROP INDEX contracts_service_id_idx;
CREATE INDEX contracts_service_id_idx ON contracts (service_id, id) INCLUDE (client_id);

-- services: in the order $orderby=costo_servicio desc asks for (OData
-- puts null last descending, first ascending, and a backward scan gives
-- the latter), so that the first page's costs are found by walking the
-- services from the dearest.
DROP INDEX services_cost_idx;
CREATE INDEX services_cost_idx ON services (cost DESC NULLS LAST);

-- +goose Down
DROP INDEX services_cost_idx, contracts_service_id_idx, tasks_execution_date_idx, tasks_end_date_idx;
CREATE INDEX tasks_end_date_idx ON tasks (end_date);
CREATE INDEX tasks_execution_date_idx ON tasks (execution_date);
CREATE INDEX services_cost_idx ON services (cost);
CREATE INDEX contracts_service_id_idx ON contracts (service_id, id);
