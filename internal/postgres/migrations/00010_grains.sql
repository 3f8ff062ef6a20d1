-- +goose Up
-- Each entity at its own grain, so that a column sums to the right total:
-- one row per contract, process, task, client and service, where the
-- general report repeats a contract's, client's and service's fields (and
-- its cost) on every task row. Each is a pair of views, as the report is:
-- <entity>_list_typed holds the typed values under the columns' names
-- (what $filter and $orderby compare, what indexes serve; '' read as
-- NULL), and <entity>_list renders the same rows as text in the API's
-- formats, NULL staying NULL (a JSON null, an empty CSV field). The key_*
-- columns, in both views, are the typed ids a row is found by, ordered by
-- and related by (the OData model's navigation).
--
-- Contracts and processes carry what an analyst would otherwise compute
-- from the report, and get wrong when the rows repeat: the number of
-- processes and of tasks, the tasks by status (the system's statuses
-- Pendiente, En Curso, Cancelado and Terminada; an operator whose system
-- names them otherwise says so here, in its own views), and the first and
-- last task end dates. Clients and services carry their number of
-- contracts. The counts are read through the (parent, id) indexes of
-- 00001, and only for the rows a page or an export sends: a page reads
-- its keys from the typed view, where the counts are not read unless a
-- filter or an order asks for them.
--
-- No table changes: operators who map their own tables redefine these
-- views (docs/your-own-tables.md).
CREATE VIEW contract_list_typed AS
SELECT
    c.id                                            AS contract_id,
    nullif(c.status, '')                            AS contract_status,
    nullif(c.code, '')                              AS code_contract,
    c.quantity_quotas                               AS quantity_quotas,
    c.date_first_payment                            AS date_first_payment,
    date_trunc('second', c.created_at)              AS contract_creation_date,
    nullif(c.attended_by, '')                       AS attended_by,
    c.client_id                                     AS client_id,
    nullif(c.client_rut, '')                        AS rut_client_contract,
    nullif(c.client_passport, '')                   AS passport_client_contract,
    nullif(c.client_first_name, '')                 AS first_name_client_contract,
    nullif(c.client_second_name, '')                AS second_name_client_contract,
    nullif(c.client_last_name, '')                  AS last_name_client_contract,
    nullif(c.client_second_last_name, '')           AS second_last_name_client_contract,
    c.client_birth_date                             AS client_birth_date_contract,
    nullif(c.client_occupation, '')                 AS client_occupation_contract,
    nullif(c.client_email, '')                      AS client_email_contract,
    nullif(c.client_phone, '')                      AS client_phone_contract,
    nullif(c.client_country, '')                    AS client_country_contract,
    nullif(c.client_marital_status, '')             AS client_marital_status_contract,
    nullif(c.client_gender, '')                     AS client_gender_contract,
    nullif(c.client_region, '')                     AS client_region_contract,
    nullif(c.client_commune, '')                    AS client_commune_contract,
    nullif(c.client_address, '')                    AS client_address_contract,
    nullif(c.payer_rut, '')                         AS rut_payer_contract,
    nullif(c.payer_passport, '')                    AS passport_payer_contract,
    nullif(c.payer_first_name, '')                  AS first_name_payer_contract,
    nullif(c.payer_second_name, '')                 AS second_name_payer_contract,
    nullif(c.payer_last_name, '')                   AS last_name_payer_contract,
    nullif(c.payer_second_last_name, '')            AS second_last_name_payer_contract,
    c.payer_birth_date                              AS payer_birth_date_contract,
    nullif(c.payer_occupation, '')                  AS payer_occupation_contract,
    nullif(c.payer_email, '')                       AS payer_email_contract,
    nullif(c.payer_phone, '')                       AS payer_phone_contract,
    nullif(c.payer_country, '')                     AS payer_country_contract,
    nullif(c.payer_marital_status, '')              AS payer_marital_status_contract,
    nullif(c.payer_gender, '')                      AS payer_gender_contract,
    nullif(c.payer_region, '')                      AS payer_region_contract,
    nullif(c.payer_commune, '')                     AS payer_commune_contract,
    nullif(c.payer_address, '')                     AS payer_address_contract,
    c.service_id                                    AS service_id,
    nullif(s.name, '')                              AS service,
    s.cost                                          AS costo_servicio,
    s.benefit_center_id                             AS benefit_center_id_service,
    nullif(bc.name, '')                             AS benefit_center_service,
    n.processes                                     AS processes,
    n.tasks                                         AS tasks,
    n.tasks_pending                                 AS tasks_pending,
    n.tasks_in_progress                             AS tasks_in_progress,
    n.tasks_cancelled                               AS tasks_cancelled,
    n.tasks_done                                    AS tasks_done,
    n.first_task_end_date                           AS first_task_end_date,
    n.last_task_end_date                            AS last_task_end_date,
    c.id                                            AS key_contract_id,
    c.client_id                                     AS key_client_id,
    c.service_id                                    AS key_service_id
FROM contracts c
LEFT JOIN services s ON s.id = c.service_id
LEFT JOIN benefit_centers bc ON bc.id = s.benefit_center_id
LEFT JOIN LATERAL (
    SELECT
        count(DISTINCT p.id)                                 AS processes,
        count(t.id)                                          AS tasks,
        count(t.id) FILTER (WHERE t.status = 'Pendiente')    AS tasks_pending,
        count(t.id) FILTER (WHERE t.status = 'En Curso')     AS tasks_in_progress,
        count(t.id) FILTER (WHERE t.status = 'Cancelado')    AS tasks_cancelled,
        count(t.id) FILTER (WHERE t.status = 'Terminada')    AS tasks_done,
        min(t.end_date)                                      AS first_task_end_date,
        max(t.end_date)                                      AS last_task_end_date
    FROM processes p
    LEFT JOIN tasks t ON t.process_id = p.id
    WHERE p.contract_id = c.id
) n ON true;

CREATE VIEW contract_list AS
SELECT
    t.contract_id::text                             AS contract_id,
    t.contract_status                               AS contract_status,
    t.code_contract                                 AS code_contract,
    t.quantity_quotas::text                         AS quantity_quotas,
    to_char(t.date_first_payment, 'YYYY-MM-DD')     AS date_first_payment,
    to_char(t.contract_creation_date, 'YYYY-MM-DD HH24:MI:SS')AS contract_creation_date,
    t.attended_by                                   AS attended_by,
    t.client_id::text                               AS client_id,
    t.rut_client_contract                           AS rut_client_contract,
    t.passport_client_contract                      AS passport_client_contract,
    t.first_name_client_contract                    AS first_name_client_contract,
    t.second_name_client_contract                   AS second_name_client_contract,
    t.last_name_client_contract                     AS last_name_client_contract,
    t.second_last_name_client_contract              AS second_last_name_client_contract,
    to_char(t.client_birth_date_contract, 'YYYY-MM-DD')AS client_birth_date_contract,
    t.client_occupation_contract                    AS client_occupation_contract,
    t.client_email_contract                         AS client_email_contract,
    t.client_phone_contract                         AS client_phone_contract,
    t.client_country_contract                       AS client_country_contract,
    t.client_marital_status_contract                AS client_marital_status_contract,
    t.client_gender_contract                        AS client_gender_contract,
    t.client_region_contract                        AS client_region_contract,
    t.client_commune_contract                       AS client_commune_contract,
    t.client_address_contract                       AS client_address_contract,
    t.rut_payer_contract                            AS rut_payer_contract,
    t.passport_payer_contract                       AS passport_payer_contract,
    t.first_name_payer_contract                     AS first_name_payer_contract,
    t.second_name_payer_contract                    AS second_name_payer_contract,
    t.last_name_payer_contract                      AS last_name_payer_contract,
    t.second_last_name_payer_contract               AS second_last_name_payer_contract,
    to_char(t.payer_birth_date_contract, 'YYYY-MM-DD')AS payer_birth_date_contract,
    t.payer_occupation_contract                     AS payer_occupation_contract,
    t.payer_email_contract                          AS payer_email_contract,
    t.payer_phone_contract                          AS payer_phone_contract,
    t.payer_country_contract                        AS payer_country_contract,
    t.payer_marital_status_contract                 AS payer_marital_status_contract,
    t.payer_gender_contract                         AS payer_gender_contract,
    t.payer_region_contract                         AS payer_region_contract,
    t.payer_commune_contract                        AS payer_commune_contract,
    t.payer_address_contract                        AS payer_address_contract,
    t.service_id::text                              AS service_id,
    t.service                                       AS service,
    trim_scale(t.costo_servicio)::text              AS costo_servicio,
    t.benefit_center_id_service::text               AS benefit_center_id_service,
    t.benefit_center_service                        AS benefit_center_service,
    t.processes::text                               AS processes,
    t.tasks::text                                   AS tasks,
    t.tasks_pending::text                           AS tasks_pending,
    t.tasks_in_progress::text                       AS tasks_in_progress,
    t.tasks_cancelled::text                         AS tasks_cancelled,
    t.tasks_done::text                              AS tasks_done,
    to_char(t.first_task_end_date, 'YYYY-MM-DD')    AS first_task_end_date,
    to_char(t.last_task_end_date, 'YYYY-MM-DD')     AS last_task_end_date,
    t.key_contract_id                               AS key_contract_id,
    t.key_client_id                                 AS key_client_id,
    t.key_service_id                                AS key_service_id
FROM contract_list_typed t;

CREATE VIEW process_list_typed AS
SELECT
    p.id                                            AS process_id,
    p.contract_id                                   AS contract_id,
    nullif(p.role, '')                              AS process_role,
    nullif(p.caption, '')                           AS caratulado_process,
    p.process_date                                  AS process_date,
    n.tasks                                         AS tasks,
    n.tasks_pending                                 AS tasks_pending,
    n.tasks_in_progress                             AS tasks_in_progress,
    n.tasks_cancelled                               AS tasks_cancelled,
    n.tasks_done                                    AS tasks_done,
    n.first_task_end_date                           AS first_task_end_date,
    n.last_task_end_date                            AS last_task_end_date,
    p.id                                            AS key_process_id,
    p.contract_id                                   AS key_contract_id
FROM processes p
LEFT JOIN LATERAL (
    SELECT
        count(t.id)                                          AS tasks,
        count(t.id) FILTER (WHERE t.status = 'Pendiente')    AS tasks_pending,
        count(t.id) FILTER (WHERE t.status = 'En Curso')     AS tasks_in_progress,
        count(t.id) FILTER (WHERE t.status = 'Cancelado')    AS tasks_cancelled,
        count(t.id) FILTER (WHERE t.status = 'Terminada')    AS tasks_done,
        min(t.end_date)                                      AS first_task_end_date,
        max(t.end_date)                                      AS last_task_end_date
    FROM tasks t
    WHERE t.process_id = p.id
) n ON true;

CREATE VIEW process_list AS
SELECT
    t.process_id::text                              AS process_id,
    t.contract_id::text                             AS contract_id,
    t.process_role                                  AS process_role,
    t.caratulado_process                            AS caratulado_process,
    to_char(t.process_date, 'YYYY-MM-DD')           AS process_date,
    t.tasks::text                                   AS tasks,
    t.tasks_pending::text                           AS tasks_pending,
    t.tasks_in_progress::text                       AS tasks_in_progress,
    t.tasks_cancelled::text                         AS tasks_cancelled,
    t.tasks_done::text                              AS tasks_done,
    to_char(t.first_task_end_date, 'YYYY-MM-DD')    AS first_task_end_date,
    to_char(t.last_task_end_date, 'YYYY-MM-DD')     AS last_task_end_date,
    t.key_process_id                                AS key_process_id,
    t.key_contract_id                               AS key_contract_id
FROM process_list_typed t;

CREATE VIEW task_list_typed AS
SELECT
    t.id                                            AS task_id,
    t.process_id                                    AS process_id,
    p.contract_id                                   AS contract_id,
    nullif(t.name, '')                              AS task,
    nullif(t.title, '')                             AS task_title,
    nullif(t.detail, '')                            AS task_detail,
    nullif(t.code, '')                              AS task_code,
    t.end_date                                      AS task_end_date,
    t.duration                                      AS task_duration,
    nullif(t.status, '')                            AS task_status,
    t.progress                                      AS task_progress,
    nullif(t.executor, '')                          AS task_executor,
    t.execution_date                                AS execution_date,
    t.id                                            AS key_task_id,
    t.process_id                                    AS key_process_id,
    p.contract_id                                   AS key_contract_id
FROM tasks t
LEFT JOIN processes p ON p.id = t.process_id;

CREATE VIEW task_list AS
SELECT
    t.task_id::text                                 AS task_id,
    t.process_id::text                              AS process_id,
    t.contract_id::text                             AS contract_id,
    t.task                                          AS task,
    t.task_title                                    AS task_title,
    t.task_detail                                   AS task_detail,
    t.task_code                                     AS task_code,
    to_char(t.task_end_date, 'YYYY-MM-DD')          AS task_end_date,
    t.task_duration::text                           AS task_duration,
    t.task_status                                   AS task_status,
    t.task_progress::text                           AS task_progress,
    t.task_executor                                 AS task_executor,
    to_char(t.execution_date AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS.US') || '+00'AS execution_date,
    t.key_task_id                                   AS key_task_id,
    t.key_process_id                                AS key_process_id,
    t.key_contract_id                               AS key_contract_id
FROM task_list_typed t;

CREATE VIEW client_list_typed AS
SELECT
    cl.id                                           AS client_id,
    nullif(cl.rut, '')                              AS client_rut,
    nullif(cl.passport, '')                         AS client_passport,
    nullif(cl.first_name, '')                       AS first_name_client,
    nullif(cl.second_name, '')                      AS second_name_client,
    nullif(cl.last_name, '')                        AS last_name_client,
    nullif(cl.second_last_name, '')                 AS second_last_name_client,
    nullif(cl.email, '')                            AS client_email,
    nullif(cl.phone, '')                            AS client_phone,
    nullif(cl.occupation, '')                       AS client_occupation,
    cl.birth_date                                   AS client_birth_date,
    nullif(cl.country, '')                          AS client_country,
    nullif(cl.marital_status, '')                   AS client_marital_status,
    nullif(cl.gender, '')                           AS client_gender,
    nullif(cl.region, '')                           AS client_region,
    nullif(cl.commune, '')                          AS client_commune,
    nullif(cl.address, '')                          AS client_address,
    date_trunc('second', cl.created_at)             AS client_creation_date,
    n.contracts                                     AS contracts,
    cl.id                                           AS key_client_id,
    rut_key(cl.rut)                                 AS key_client_rut
FROM clients cl
LEFT JOIN LATERAL (SELECT count(*) AS contracts FROM contracts c WHERE c.client_id = cl.id) n ON true;

CREATE VIEW client_list AS
SELECT
    t.client_id::text                               AS client_id,
    t.client_rut                                    AS client_rut,
    t.client_passport                               AS client_passport,
    t.first_name_client                             AS first_name_client,
    t.second_name_client                            AS second_name_client,
    t.last_name_client                              AS last_name_client,
    t.second_last_name_client                       AS second_last_name_client,
    t.client_email                                  AS client_email,
    t.client_phone                                  AS client_phone,
    t.client_occupation                             AS client_occupation,
    to_char(t.client_birth_date, 'YYYY-MM-DD')      AS client_birth_date,
    t.client_country                                AS client_country,
    t.client_marital_status                         AS client_marital_status,
    t.client_gender                                 AS client_gender,
    t.client_region                                 AS client_region,
    t.client_commune                                AS client_commune,
    t.client_address                                AS client_address,
    to_char(t.client_creation_date, 'YYYY-MM-DD HH24:MI:SS')AS client_creation_date,
    t.contracts::text                               AS contracts,
    t.key_client_id                                 AS key_client_id,
    t.key_client_rut                                AS key_client_rut
FROM client_list_typed t;

CREATE VIEW service_list_typed AS
SELECT
    s.id                                            AS service_id,
    nullif(s.name, '')                              AS service,
    s.cost                                          AS costo_servicio,
    s.benefit_center_id                             AS benefit_center_id_service,
    nullif(bc.name, '')                             AS benefit_center_service,
    n.contracts                                     AS contracts,
    s.id                                            AS key_service_id
FROM services s
LEFT JOIN benefit_centers bc ON bc.id = s.benefit_center_id
LEFT JOIN LATERAL (SELECT count(*) AS contracts FROM contracts c WHERE c.service_id = s.id) n ON true;

CREATE VIEW service_list AS
SELECT
    t.service_id::text                              AS service_id,
    t.service                                       AS service,
    trim_scale(t.costo_servicio)::text              AS costo_servicio,
    t.benefit_center_id_service::text               AS benefit_center_id_service,
    t.benefit_center_service                        AS benefit_center_service,
    t.contracts::text                               AS contracts,
    t.key_service_id                                AS key_service_id
FROM service_list_typed t;

-- +goose Down
DROP VIEW service_list, service_list_typed, client_list, client_list_typed, task_list, task_list_typed,
    process_list, process_list_typed, contract_list, contract_list_typed;
