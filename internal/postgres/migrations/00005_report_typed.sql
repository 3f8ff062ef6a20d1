-- +goose Up
-- The report's fields as typed values, so that OData's $filter and $orderby
-- compare by value (a date as a date, a cost as a number) and indexes can
-- serve them, while general_report stays the one place the report's text
-- is rendered, byte for byte as before.
--
-- general_report_typed is the report's SQL: its joins, one row per task of
-- a process of a contract (a contract without processes, or a process
-- without tasks, still one row), and each of the 74 fields under its own
-- name, typed:
--
--   - ids and counts: bigint or integer, as stored;
--   - costo_servicio: numeric (services.cost);
--   - dates: date;
--   - contract_creation_date: timestamp (without time zone, UTC wall
--     clock), truncated to the second as the report shows it;
--   - execution_date: timestamptz;
--   - text: text, with '' read as NULL, as the OData feed shows it.
--
-- A field that is absent (no process, no task, an empty value) is NULL.
-- The key_* columns are the same as general_report's: the row's contract,
-- process and task ids (NULL for an absent process or task), and the keys
-- of the paged API's filters. Readers that want typed values (OData, a
-- benchmark, an operator's own reports) read this view; general_report
-- renders it.
DROP VIEW general_report;

CREATE VIEW general_report_typed AS
SELECT
    c.id                                                             AS contract_id,
    nullif(c.status, '')                                             AS contract_status,
    nullif(c.code, '')                                               AS code_contract,
    c.quantity_quotas                                                AS quantity_quotas,
    c.date_first_payment                                             AS date_first_payment,
    date_trunc('second', c.created_at)                               AS contract_creation_date,
    nullif(c.attended_by, '')                                        AS attended_by,
    nullif(c.client_rut, '')                                         AS rut_client_contract,
    nullif(c.client_passport, '')                                    AS passport_client_contract,
    nullif(c.client_first_name, '')                                  AS first_name_client_contract,
    nullif(c.client_second_name, '')                                 AS second_name_client_contract,
    nullif(c.client_last_name, '')                                   AS last_name_client_contract,
    nullif(c.client_second_last_name, '')                            AS second_last_name_client_contract,
    c.client_birth_date                                              AS client_birth_date_contract,
    nullif(c.client_occupation, '')                                  AS client_occupation_contract,
    nullif(c.client_email, '')                                       AS client_email_contract,
    nullif(c.client_phone, '')                                       AS client_phone_contract,
    nullif(c.client_country, '')                                     AS client_country_contract,
    nullif(c.client_marital_status, '')                              AS client_marital_status_contract,
    nullif(c.client_gender, '')                                      AS client_gender_contract,
    nullif(c.client_region, '')                                      AS client_region_contract,
    nullif(c.client_commune, '')                                     AS client_commune_contract,
    nullif(c.client_address, '')                                     AS client_address_contract,
    nullif(c.payer_rut, '')                                          AS rut_payer_contract,
    nullif(c.payer_passport, '')                                     AS passport_payer_contract,
    nullif(c.payer_first_name, '')                                   AS first_name_payer_contract,
    nullif(c.payer_second_name, '')                                  AS second_name_payer_contract,
    nullif(c.payer_last_name, '')                                    AS last_name_payer_contract,
    nullif(c.payer_second_last_name, '')                             AS second_last_name_payer_contract,
    c.payer_birth_date                                               AS payer_birth_date_contract,
    nullif(c.payer_occupation, '')                                   AS payer_occupation_contract,
    nullif(c.payer_email, '')                                        AS payer_email_contract,
    nullif(c.payer_phone, '')                                        AS payer_phone_contract,
    nullif(c.payer_country, '')                                      AS payer_country_contract,
    nullif(c.payer_marital_status, '')                               AS payer_marital_status_contract,
    nullif(c.payer_gender, '')                                       AS payer_gender_contract,
    nullif(c.payer_region, '')                                       AS payer_region_contract,
    nullif(c.payer_commune, '')                                      AS payer_commune_contract,
    nullif(c.payer_address, '')                                      AS payer_address_contract,
    nullif(s.name, '')                                               AS service,
    s.cost                                                           AS costo_servicio,
    s.benefit_center_id                                              AS benefit_center_id_service,
    nullif(bc.name, '')                                              AS benefit_center_service,
    p.id                                                             AS process_id,
    nullif(p.role, '')                                               AS process_role,
    nullif(p.caption, '')                                            AS caratulado_process,
    p.process_date                                                   AS process_date,
    nullif(t.name, '')                                               AS task,
    nullif(t.title, '')                                              AS task_title,
    nullif(t.detail, '')                                             AS task_detail,
    nullif(t.code, '')                                               AS task_code,
    t.end_date                                                       AS task_end_date,
    t.duration                                                       AS task_duration,
    nullif(t.status, '')                                             AS task_status,
    t.progress                                                       AS task_progress,
    nullif(t.executor, '')                                           AS task_executor,
    t.execution_date                                                 AS execution_date,
    cl.id                                                            AS client_id,
    nullif(cl.rut, '')                                               AS client_rut,
    nullif(cl.passport, '')                                          AS client_passport,
    nullif(cl.first_name, '')                                        AS first_name_client,
    nullif(cl.second_name, '')                                       AS second_name_client,
    nullif(cl.last_name, '')                                         AS last_name_client,
    nullif(cl.second_last_name, '')                                  AS second_last_name_client,
    nullif(cl.email, '')                                             AS client_email,
    nullif(cl.phone, '')                                             AS client_phone,
    nullif(cl.occupation, '')                                        AS client_occupation,
    cl.birth_date                                                    AS client_birth_date,
    nullif(cl.country, '')                                           AS client_country,
    nullif(cl.marital_status, '')                                    AS client_marital_status,
    nullif(cl.gender, '')                                            AS client_gender,
    nullif(cl.region, '')                                            AS client_region,
    nullif(cl.commune, '')                                           AS client_commune,
    nullif(cl.address, '')                                           AS client_address,
    c.id                                                             AS key_contract_id,
    p.id                                                             AS key_process_id,
    t.id                                                             AS key_task_id,
    c.client_id                                                      AS key_client_id,
    c.code                                                           AS key_code_contract,
    rut_key(cl.rut)                                                  AS key_client_rut
FROM contracts c
LEFT JOIN clients cl ON cl.id = c.client_id
LEFT JOIN services s ON s.id = c.service_id
LEFT JOIN benefit_centers bc ON bc.id = s.benefit_center_id
LEFT JOIN processes p ON p.contract_id = c.id
LEFT JOIN tasks t ON t.process_id = p.id;

-- general_report renders general_report_typed as text in the spec's formats
-- with NULL as '' (see 00001_schema.sql): the same 74 fields and key_*
-- columns, the same bytes.
CREATE VIEW general_report AS
SELECT
    t.contract_id::text                                              AS contract_id,
    coalesce(t.contract_status, '')                                  AS contract_status,
    coalesce(t.code_contract, '')                                    AS code_contract,
    coalesce(t.quantity_quotas::text, '')                            AS quantity_quotas,
    coalesce(to_char(t.date_first_payment, 'YYYY-MM-DD'), '')        AS date_first_payment,
    coalesce(to_char(t.contract_creation_date, 'YYYY-MM-DD HH24:MI:SS'), '') AS contract_creation_date,
    coalesce(t.attended_by, '')                                      AS attended_by,
    coalesce(t.rut_client_contract, '')                              AS rut_client_contract,
    coalesce(t.passport_client_contract, '')                         AS passport_client_contract,
    coalesce(t.first_name_client_contract, '')                       AS first_name_client_contract,
    coalesce(t.second_name_client_contract, '')                      AS second_name_client_contract,
    coalesce(t.last_name_client_contract, '')                        AS last_name_client_contract,
    coalesce(t.second_last_name_client_contract, '')                 AS second_last_name_client_contract,
    coalesce(to_char(t.client_birth_date_contract, 'YYYY-MM-DD'), '') AS client_birth_date_contract,
    coalesce(t.client_occupation_contract, '')                       AS client_occupation_contract,
    coalesce(t.client_email_contract, '')                            AS client_email_contract,
    coalesce(t.client_phone_contract, '')                            AS client_phone_contract,
    coalesce(t.client_country_contract, '')                          AS client_country_contract,
    coalesce(t.client_marital_status_contract, '')                   AS client_marital_status_contract,
    coalesce(t.client_gender_contract, '')                           AS client_gender_contract,
    coalesce(t.client_region_contract, '')                           AS client_region_contract,
    coalesce(t.client_commune_contract, '')                          AS client_commune_contract,
    coalesce(t.client_address_contract, '')                          AS client_address_contract,
    coalesce(t.rut_payer_contract, '')                               AS rut_payer_contract,
    coalesce(t.passport_payer_contract, '')                          AS passport_payer_contract,
    coalesce(t.first_name_payer_contract, '')                        AS first_name_payer_contract,
    coalesce(t.second_name_payer_contract, '')                       AS second_name_payer_contract,
    coalesce(t.last_name_payer_contract, '')                         AS last_name_payer_contract,
    coalesce(t.second_last_name_payer_contract, '')                  AS second_last_name_payer_contract,
    coalesce(to_char(t.payer_birth_date_contract, 'YYYY-MM-DD'), '') AS payer_birth_date_contract,
    coalesce(t.payer_occupation_contract, '')                        AS payer_occupation_contract,
    coalesce(t.payer_email_contract, '')                             AS payer_email_contract,
    coalesce(t.payer_phone_contract, '')                             AS payer_phone_contract,
    coalesce(t.payer_country_contract, '')                           AS payer_country_contract,
    coalesce(t.payer_marital_status_contract, '')                    AS payer_marital_status_contract,
    coalesce(t.payer_gender_contract, '')                            AS payer_gender_contract,
    coalesce(t.payer_region_contract, '')                            AS payer_region_contract,
    coalesce(t.payer_commune_contract, '')                           AS payer_commune_contract,
    coalesce(t.payer_address_contract, '')                           AS payer_address_contract,
    coalesce(t.service, '')                                          AS service,
    coalesce(trim_scale(t.costo_servicio)::text, '')                 AS costo_servicio,
    coalesce(t.benefit_center_id_service::text, '')                  AS benefit_center_id_service,
    coalesce(t.benefit_center_service, '')                           AS benefit_center_service,
    coalesce(t.process_id::text, '')                                 AS process_id,
    coalesce(t.process_role, '')                                     AS process_role,
    coalesce(t.caratulado_process, '')                               AS caratulado_process,
    coalesce(to_char(t.process_date, 'YYYY-MM-DD'), '')              AS process_date,
    coalesce(t.task, '')                                             AS task,
    coalesce(t.task_title, '')                                       AS task_title,
    coalesce(t.task_detail, '')                                      AS task_detail,
    coalesce(t.task_code, '')                                        AS task_code,
    coalesce(to_char(t.task_end_date, 'YYYY-MM-DD'), '')             AS task_end_date,
    coalesce(t.task_duration::text, '')                              AS task_duration,
    coalesce(t.task_status, '')                                      AS task_status,
    coalesce(t.task_progress::text, '')                              AS task_progress,
    coalesce(t.task_executor, '')                                    AS task_executor,
    coalesce(to_char(t.execution_date AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS.US') || '+00', '') AS execution_date,
    coalesce(t.client_id::text, '')                                  AS client_id,
    coalesce(t.client_rut, '')                                       AS client_rut,
    coalesce(t.client_passport, '')                                  AS client_passport,
    coalesce(t.first_name_client, '')                                AS first_name_client,
    coalesce(t.second_name_client, '')                               AS second_name_client,
    coalesce(t.last_name_client, '')                                 AS last_name_client,
    coalesce(t.second_last_name_client, '')                          AS second_last_name_client,
    coalesce(t.client_email, '')                                     AS client_email,
    coalesce(t.client_phone, '')                                     AS client_phone,
    coalesce(t.client_occupation, '')                                AS client_occupation,
    coalesce(to_char(t.client_birth_date, 'YYYY-MM-DD'), '')         AS client_birth_date,
    coalesce(t.client_country, '')                                   AS client_country,
    coalesce(t.client_marital_status, '')                            AS client_marital_status,
    coalesce(t.client_gender, '')                                    AS client_gender,
    coalesce(t.client_region, '')                                    AS client_region,
    coalesce(t.client_commune, '')                                   AS client_commune,
    coalesce(t.client_address, '')                                   AS client_address,
    t.key_contract_id                                                AS key_contract_id,
    t.key_process_id                                                 AS key_process_id,
    t.key_task_id                                                    AS key_task_id,
    t.key_client_id                                                  AS key_client_id,
    t.key_code_contract                                              AS key_code_contract,
    t.key_client_rut                                                 AS key_client_rut
FROM general_report_typed t;

-- user_list_typed is user_list's typed form: the users as stored, the
-- timestamps truncated to the second as user_list shows them, phone ''
-- when absent and status as text, as user_list has them.
DROP VIEW user_list;

CREATE VIEW user_list_typed AS
SELECT
    u.id                                                    AS id,
    u.name                                                  AS name,
    u.email                                                 AS email,
    u.username                                              AS username,
    u.rut                                                   AS rut,
    coalesce(u.phone, '')                                   AS phone,
    date_trunc('second', u.last_entry)                      AS last_entry,
    u.status::text                                          AS status,
    date_trunc('second', u.created_at)                      AS created_at,
    date_trunc('second', u.updated_at)                      AS updated_at,
    u.id                                                    AS key_id
FROM users u;

CREATE VIEW user_list AS
SELECT
    u.id::text                                              AS id,
    u.name                                                  AS name,
    u.email                                                 AS email,
    u.username                                              AS username,
    u.rut                                                   AS rut,
    u.phone                                                 AS phone,
    to_char(u.last_entry, 'YYYY-MM-DD HH24:MI:SS')          AS last_entry,
    u.status                                                AS status,
    to_char(u.created_at, 'YYYY-MM-DD HH24:MI:SS')          AS created_at,
    to_char(u.updated_at, 'YYYY-MM-DD HH24:MI:SS')          AS updated_at,
    u.key_id                                                AS key_id
FROM user_list_typed u;

-- Indexes for the steps a spreadsheet folds most: a task's status, end
-- date and execution date (the incremental-refresh window), a client's
-- e-mail (startswith, with text_pattern_ops so that LIKE 'a%' can use it
-- whatever the collation) and a service's cost, with the contracts of a
-- service in id order. Each is on the expression
-- general_report_typed reads, so that the planner matches it. The report's
-- order needs none: contracts' primary key and the (parent, id) indexes
-- serve it.
CREATE INDEX tasks_status_idx ON tasks ((nullif(status, '')));
CREATE INDEX tasks_end_date_idx ON tasks (end_date);
CREATE INDEX tasks_execution_date_idx ON tasks (execution_date);
CREATE INDEX clients_email_idx ON clients ((nullif(email, '')) text_pattern_ops);
CREATE INDEX services_cost_idx ON services (cost);
CREATE INDEX contracts_service_id_idx ON contracts (service_id, id);

-- +goose Down
DROP INDEX contracts_service_id_idx, services_cost_idx, clients_email_idx, tasks_execution_date_idx, tasks_end_date_idx, tasks_status_idx;
DROP VIEW user_list;
DROP VIEW user_list_typed;
DROP VIEW general_report;
DROP VIEW general_report_typed;

CREATE VIEW general_report AS
SELECT
    c.id::text                                                       AS contract_id,
    coalesce(c.status, '')                                           AS contract_status,
    coalesce(c.code, '')                                             AS code_contract,
    coalesce(c.quantity_quotas::text, '')                            AS quantity_quotas,
    coalesce(to_char(c.date_first_payment, 'YYYY-MM-DD'), '')        AS date_first_payment,
    coalesce(to_char(c.created_at, 'YYYY-MM-DD HH24:MI:SS'), '')     AS contract_creation_date,
    coalesce(c.attended_by, '')                                      AS attended_by,
    coalesce(c.client_rut, '')                                       AS rut_client_contract,
    coalesce(c.client_passport, '')                                  AS passport_client_contract,
    coalesce(c.client_first_name, '')                                AS first_name_client_contract,
    coalesce(c.client_second_name, '')                               AS second_name_client_contract,
    coalesce(c.client_last_name, '')                                 AS last_name_client_contract,
    coalesce(c.client_second_last_name, '')                          AS second_last_name_client_contract,
    coalesce(to_char(c.client_birth_date, 'YYYY-MM-DD'), '')         AS client_birth_date_contract,
    coalesce(c.client_occupation, '')                                AS client_occupation_contract,
    coalesce(c.client_email, '')                                     AS client_email_contract,
    coalesce(c.client_phone, '')                                     AS client_phone_contract,
    coalesce(c.client_country, '')                                   AS client_country_contract,
    coalesce(c.client_marital_status, '')                            AS client_marital_status_contract,
    coalesce(c.client_gender, '')                                    AS client_gender_contract,
    coalesce(c.client_region, '')                                    AS client_region_contract,
    coalesce(c.client_commune, '')                                   AS client_commune_contract,
    coalesce(c.client_address, '')                                   AS client_address_contract,
    coalesce(c.payer_rut, '')                                        AS rut_payer_contract,
    coalesce(c.payer_passport, '')                                   AS passport_payer_contract,
    coalesce(c.payer_first_name, '')                                 AS first_name_payer_contract,
    coalesce(c.payer_second_name, '')                                AS second_name_payer_contract,
    coalesce(c.payer_last_name, '')                                  AS last_name_payer_contract,
    coalesce(c.payer_second_last_name, '')                           AS second_last_name_payer_contract,
    coalesce(to_char(c.payer_birth_date, 'YYYY-MM-DD'), '')          AS payer_birth_date_contract,
    coalesce(c.payer_occupation, '')                                 AS payer_occupation_contract,
    coalesce(c.payer_email, '')                                      AS payer_email_contract,
    coalesce(c.payer_phone, '')                                      AS payer_phone_contract,
    coalesce(c.payer_country, '')                                    AS payer_country_contract,
    coalesce(c.payer_marital_status, '')                             AS payer_marital_status_contract,
    coalesce(c.payer_gender, '')                                     AS payer_gender_contract,
    coalesce(c.payer_region, '')                                     AS payer_region_contract,
    coalesce(c.payer_commune, '')                                    AS payer_commune_contract,
    coalesce(c.payer_address, '')                                    AS payer_address_contract,
    coalesce(s.name, '')                                             AS service,
    coalesce(trim_scale(s.cost)::text, '')                           AS costo_servicio,
    coalesce(s.benefit_center_id::text, '')                          AS benefit_center_id_service,
    coalesce(bc.name, '')                                            AS benefit_center_service,
    coalesce(p.id::text, '')                                         AS process_id,
    coalesce(p.role, '')                                             AS process_role,
    coalesce(p.caption, '')                                          AS caratulado_process,
    coalesce(to_char(p.process_date, 'YYYY-MM-DD'), '')              AS process_date,
    coalesce(t.name, '')                                             AS task,
    coalesce(t.title, '')                                            AS task_title,
    coalesce(t.detail, '')                                           AS task_detail,
    coalesce(t.code, '')                                             AS task_code,
    coalesce(to_char(t.end_date, 'YYYY-MM-DD'), '')                  AS task_end_date,
    coalesce(t.duration::text, '')                                   AS task_duration,
    coalesce(t.status, '')                                           AS task_status,
    coalesce(t.progress::text, '')                                   AS task_progress,
    coalesce(t.executor, '')                                         AS task_executor,
    coalesce(to_char(t.execution_date AT TIME ZONE 'UTC',
                     'YYYY-MM-DD HH24:MI:SS.US') || '+00', '')       AS execution_date,
    coalesce(cl.id::text, '')                                        AS client_id,
    coalesce(cl.rut, '')                                             AS client_rut,
    coalesce(cl.passport, '')                                        AS client_passport,
    coalesce(cl.first_name, '')                                      AS first_name_client,
    coalesce(cl.second_name, '')                                     AS second_name_client,
    coalesce(cl.last_name, '')                                       AS last_name_client,
    coalesce(cl.second_last_name, '')                                AS second_last_name_client,
    coalesce(cl.email, '')                                           AS client_email,
    coalesce(cl.phone, '')                                           AS client_phone,
    coalesce(cl.occupation, '')                                      AS client_occupation,
    coalesce(to_char(cl.birth_date, 'YYYY-MM-DD'), '')               AS client_birth_date,
    coalesce(cl.country, '')                                         AS client_country,
    coalesce(cl.marital_status, '')                                  AS client_marital_status,
    coalesce(cl.gender, '')                                          AS client_gender,
    coalesce(cl.region, '')                                          AS client_region,
    coalesce(cl.commune, '')                                         AS client_commune,
    coalesce(cl.address, '')                                         AS client_address,
    c.id                                                             AS key_contract_id,
    p.id                                                             AS key_process_id,
    t.id                                                             AS key_task_id,
    c.client_id                                                      AS key_client_id,
    c.code                                                           AS key_code_contract,
    rut_key(cl.rut)                                                  AS key_client_rut
FROM contracts c
LEFT JOIN clients cl ON cl.id = c.client_id
LEFT JOIN services s ON s.id = c.service_id
LEFT JOIN benefit_centers bc ON bc.id = s.benefit_center_id
LEFT JOIN processes p ON p.contract_id = c.id
LEFT JOIN tasks t ON t.process_id = p.id;

CREATE VIEW user_list AS
SELECT
    u.id::text                                              AS id,
    u.name                                                  AS name,
    u.email                                                 AS email,
    u.username                                              AS username,
    u.rut                                                   AS rut,
    coalesce(u.phone, '')                                   AS phone,
    to_char(u.last_entry, 'YYYY-MM-DD HH24:MI:SS')          AS last_entry,
    u.status::text                                          AS status,
    to_char(u.created_at, 'YYYY-MM-DD HH24:MI:SS')          AS created_at,
    to_char(u.updated_at, 'YYYY-MM-DD HH24:MI:SS')          AS updated_at,
    u.id                                                    AS key_id
FROM users u;
