// Package entities declares the legal-services data at each entity's own
// grain: one row per contract, process, task, client and service, each a
// read-only dataset under the report:read scope, read from a pair of views
// (migration 00010_grains.sql). Where the general report repeats a
// contract's, client's and service's fields (and its cost) on every task
// row, a column of these sums to the right total; the OData model relates
// them (Task → Process → Contract → Client and Service).
package entities

import (
	"slices"

	"github.com/informe/informe/internal/dataset"
)

// ContractColumns are a contract's fields: the contract, the client and
// payer as recorded on it, its service with its cost and benefit center,
// then its number of processes and of tasks, its tasks by status, and its
// first and last task end dates (null without tasks that have one).
var ContractColumns = slices.Concat([]dataset.Column{
	{Name: "contract_id", Kind: dataset.Integer},
	{Name: "contract_status", Kind: dataset.Text, Nullable: true},
	{Name: "code_contract", Kind: dataset.Text, Nullable: true},
	{Name: "quantity_quotas", Kind: dataset.Integer, Nullable: true},
	{Name: "date_first_payment", Kind: dataset.Date, Nullable: true},
	{Name: "contract_creation_date", Kind: dataset.Timestamp},
	{Name: "attended_by", Kind: dataset.Text, Nullable: true},
	{Name: "client_id", Kind: dataset.Integer},
	{Name: "rut_client_contract", Kind: dataset.Text, Nullable: true},
	{Name: "passport_client_contract", Kind: dataset.Text, Nullable: true},
	{Name: "first_name_client_contract", Kind: dataset.Text, Nullable: true},
	{Name: "second_name_client_contract", Kind: dataset.Text, Nullable: true},
	{Name: "last_name_client_contract", Kind: dataset.Text, Nullable: true},
	{Name: "second_last_name_client_contract", Kind: dataset.Text, Nullable: true},
	{Name: "client_birth_date_contract", Kind: dataset.Date, Nullable: true},
	{Name: "client_occupation_contract", Kind: dataset.Text, Nullable: true},
	{Name: "client_email_contract", Kind: dataset.Text, Nullable: true},
	{Name: "client_phone_contract", Kind: dataset.Text, Nullable: true},
	{Name: "client_country_contract", Kind: dataset.Text, Nullable: true},
	{Name: "client_marital_status_contract", Kind: dataset.Text, Nullable: true},
	{Name: "client_gender_contract", Kind: dataset.Text, Nullable: true},
	{Name: "client_region_contract", Kind: dataset.Text, Nullable: true},
	{Name: "client_commune_contract", Kind: dataset.Text, Nullable: true},
	{Name: "client_address_contract", Kind: dataset.Text, Nullable: true},
	{Name: "rut_payer_contract", Kind: dataset.Text, Nullable: true},
	{Name: "passport_payer_contract", Kind: dataset.Text, Nullable: true},
	{Name: "first_name_payer_contract", Kind: dataset.Text, Nullable: true},
	{Name: "second_name_payer_contract", Kind: dataset.Text, Nullable: true},
	{Name: "last_name_payer_contract", Kind: dataset.Text, Nullable: true},
	{Name: "second_last_name_payer_contract", Kind: dataset.Text, Nullable: true},
	{Name: "payer_birth_date_contract", Kind: dataset.Date, Nullable: true},
	{Name: "payer_occupation_contract", Kind: dataset.Text, Nullable: true},
	{Name: "payer_email_contract", Kind: dataset.Text, Nullable: true},
	{Name: "payer_phone_contract", Kind: dataset.Text, Nullable: true},
	{Name: "payer_country_contract", Kind: dataset.Text, Nullable: true},
	{Name: "payer_marital_status_contract", Kind: dataset.Text, Nullable: true},
	{Name: "payer_gender_contract", Kind: dataset.Text, Nullable: true},
	{Name: "payer_region_contract", Kind: dataset.Text, Nullable: true},
	{Name: "payer_commune_contract", Kind: dataset.Text, Nullable: true},
	{Name: "payer_address_contract", Kind: dataset.Text, Nullable: true},
	{Name: "service_id", Kind: dataset.Integer, Nullable: true},
	{Name: "service", Kind: dataset.Text, Nullable: true},
	{Name: "costo_servicio", Kind: dataset.Decimal, Nullable: true},
	{Name: "benefit_center_id_service", Kind: dataset.Integer, Nullable: true},
	{Name: "benefit_center_service", Kind: dataset.Text, Nullable: true},
	{Name: "processes", Kind: dataset.Integer},
}, taskCounts)

// taskCounts are the task counts and end dates a contract and a process
// both carry, after their own fields.
var taskCounts = []dataset.Column{
	{Name: "tasks", Kind: dataset.Integer},
	{Name: "tasks_pending", Kind: dataset.Integer},
	{Name: "tasks_in_progress", Kind: dataset.Integer},
	{Name: "tasks_cancelled", Kind: dataset.Integer},
	{Name: "tasks_done", Kind: dataset.Integer},
	{Name: "first_task_end_date", Kind: dataset.Date, Nullable: true},
	{Name: "last_task_end_date", Kind: dataset.Date, Nullable: true},
}

// ProcessColumns are a process's fields, with its contract's id and its
// task counts and end dates as a contract has them.
var ProcessColumns = slices.Concat([]dataset.Column{
	{Name: "process_id", Kind: dataset.Integer},
	{Name: "contract_id", Kind: dataset.Integer},
	{Name: "process_role", Kind: dataset.Text, Nullable: true},
	{Name: "caratulado_process", Kind: dataset.Text, Nullable: true},
	{Name: "process_date", Kind: dataset.Date, Nullable: true},
}, taskCounts)

// TaskColumns are a task's fields, with its process's and contract's ids.
var TaskColumns = []dataset.Column{
	{Name: "task_id", Kind: dataset.Integer},
	{Name: "process_id", Kind: dataset.Integer},
	{Name: "contract_id", Kind: dataset.Integer},
	{Name: "task", Kind: dataset.Text, Nullable: true},
	{Name: "task_title", Kind: dataset.Text, Nullable: true},
	{Name: "task_detail", Kind: dataset.Text, Nullable: true},
	{Name: "task_code", Kind: dataset.Text, Nullable: true},
	{Name: "task_end_date", Kind: dataset.Date, Nullable: true},
	{Name: "task_duration", Kind: dataset.Integer, Nullable: true},
	{Name: "task_status", Kind: dataset.Text, Nullable: true},
	{Name: "task_progress", Kind: dataset.Integer, Nullable: true},
	{Name: "task_executor", Kind: dataset.Text, Nullable: true},
	{Name: "execution_date", Kind: dataset.Timestamptz, Nullable: true},
}

// ClientColumns are a client's current record, with its number of
// contracts.
var ClientColumns = []dataset.Column{
	{Name: "client_id", Kind: dataset.Integer},
	{Name: "client_rut", Kind: dataset.Text, Nullable: true},
	{Name: "client_passport", Kind: dataset.Text, Nullable: true},
	{Name: "first_name_client", Kind: dataset.Text, Nullable: true},
	{Name: "second_name_client", Kind: dataset.Text, Nullable: true},
	{Name: "last_name_client", Kind: dataset.Text, Nullable: true},
	{Name: "second_last_name_client", Kind: dataset.Text, Nullable: true},
	{Name: "client_email", Kind: dataset.Text, Nullable: true},
	{Name: "client_phone", Kind: dataset.Text, Nullable: true},
	{Name: "client_occupation", Kind: dataset.Text, Nullable: true},
	{Name: "client_birth_date", Kind: dataset.Date, Nullable: true},
	{Name: "client_country", Kind: dataset.Text, Nullable: true},
	{Name: "client_marital_status", Kind: dataset.Text, Nullable: true},
	{Name: "client_gender", Kind: dataset.Text, Nullable: true},
	{Name: "client_region", Kind: dataset.Text, Nullable: true},
	{Name: "client_commune", Kind: dataset.Text, Nullable: true},
	{Name: "client_address", Kind: dataset.Text, Nullable: true},
	{Name: "client_creation_date", Kind: dataset.Timestamp},
	{Name: "contracts", Kind: dataset.Integer},
}

// ServiceColumns are a service with its cost, its benefit center and its
// number of contracts.
var ServiceColumns = []dataset.Column{
	{Name: "service_id", Kind: dataset.Integer},
	{Name: "service", Kind: dataset.Text, Nullable: true},
	{Name: "costo_servicio", Kind: dataset.Decimal},
	{Name: "benefit_center_id_service", Kind: dataset.Integer, Nullable: true},
	{Name: "benefit_center_service", Kind: dataset.Text, Nullable: true},
	{Name: "contracts", Kind: dataset.Integer},
}

// The datasets, each read from <entity>_list (text) and
// <entity>_list_typed (typed values), in the order of its id.
var (
	Contracts = declare("contracts", ContractColumns, "contract", "contract_id")
	Processes = declare("processes", ProcessColumns, "process", "process_id")
	Tasks     = declare("tasks", TaskColumns, "task", "task_id")
	Clients   = declare("clients", ClientColumns, "client", "client_id")
	Services  = declare("services", ServiceColumns, "service", "service_id")
)

// All are the datasets, in the order of the model, from the many to the
// one: a task belongs to a process, a process to a contract, a contract to
// a client and a service.
var All = []*dataset.Dataset{Contracts, Processes, Tasks, Clients, Services}

// declare returns the dataset name of entity, keyed by its id column key
// (key_<key> in both views).
func declare(name string, cols []dataset.Column, entity, key string) *dataset.Dataset {
	return &dataset.Dataset{
		Name: name, Scope: dataset.ReportRead, Columns: cols,
		Text: entity + "_list", Typed: entity + "_list_typed",
		Keys: []string{"key_" + key}, KeyColumn: key,
	}
}
