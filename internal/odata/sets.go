package odata

import (
	"errors"

	"github.com/informe/informe/entities"
	"github.com/informe/informe/internal/failure"
	"github.com/informe/informe/internal/rut"
	"github.com/informe/informe/report"
	"github.com/informe/informe/users"
)

// The entity sets informe serves, declared once for the server and for the
// OpenAPI document, from the one column lists.
var (
	// GeneralReportDef is the general report: rows keyed by row_id, made
	// of the contract, process and task ids, filterable and sortable on every
	// property.
	GeneralReportDef = EntitySetDef{
		Name: "GeneralReport", TypeName: "GeneralReportRow", Columns: report.Columns,
		Key: "row_id", RowKey: []string{"contract_id", "process_id", "task_id"},
		KeyColumns:  []string{"key_contract_id", "key_process_id", "key_task_id"},
		Normalized:  map[string][2]string{"client_rut": {"key_client_rut", "rut_key"}},
		OrderBy:     []string{"contract_id", "process_id"},
		Filters:     []string{"contract_id", "code_contract", "client_id", "client_rut"},
		EmptyIsNull: true,
		// The tables general_report_typed outer-joins, each by a column
		// of its own that is never NULL there: tasks, processes, clients
		// and services (whose cost is NOT NULL).
		Joined: map[string][]string{
			"key_task_id": {"task", "task_title", "task_detail", "task_code", "task_end_date", "task_duration",
				"task_status", "task_progress", "task_executor", "execution_date"},
			"key_process_id": {"process_role", "caratulado_process", "process_date"},
			"client_id": {"client_rut", "client_passport", "first_name_client", "second_name_client", "last_name_client",
				"second_last_name_client", "client_email", "client_phone", "client_occupation", "client_birth_date",
				"client_country", "client_marital_status", "client_gender", "client_region", "client_commune", "client_address"},
			"costo_servicio": {"service"},
		},
		SortIndexed: []string{"costo_servicio"},
		Literals: map[string]func(string) error{"client_rut": func(s string) error {
			_, err := rut.Parse(s)
			if err == nil {
				return nil
			}
			// The reasons of the rut parameter's errors: a RUT is
			// refused alike in $filter.
			reason := "rut_malformed"
			if errors.Is(err, rut.ErrCheckDigit) {
				reason = "rut_check_digit"
			}
			return &failure.Error{Code: failure.Invalid, Reason: reason, Message: err.Error(), Err: err}
		}},
	}
	// UsersDef is the users listing, keyed by id.
	UsersDef = EntitySetDef{
		Name: "Users", TypeName: "User", Columns: users.Columns,
		Key: "id", KeyColumns: []string{"key_id"}, OrderBy: []string{"id"},
	}
)

// The entities at their own grain (package entities), related: a task
// belongs to a process and a contract, a process to a contract, a contract
// to a client and maybe a service; each has the collections back. Each is
// keyed by its id and filterable and sortable on every property.
var (
	ContractsDef = EntitySetDef{
		Name: "Contracts", TypeName: "Contract", Typed: entities.Contracts.Typed, Columns: entities.ContractColumns,
		Key: "contract_id", KeyColumns: []string{"key_contract_id"}, OrderBy: []string{"contract_id"},
		Navigations: []Navigation{
			{Name: "Client", Target: "Clients", Partner: "Contracts", Property: "client_id", Column: "key_client_id"},
			{Name: "Service", Target: "Services", Partner: "Contracts", Property: "service_id", Column: "key_service_id", Optional: true},
			{Name: "Processes", Target: "Processes", Many: true, Partner: "Contract", Property: "contract_id", Column: "key_contract_id"},
			{Name: "Tasks", Target: "Tasks", Many: true, Partner: "Contract", Property: "contract_id", Column: "key_contract_id"},
		},
	}
	ProcessesDef = EntitySetDef{
		Name: "Processes", TypeName: "Process", Typed: entities.Processes.Typed, Columns: entities.ProcessColumns,
		Key: "process_id", KeyColumns: []string{"key_process_id"}, OrderBy: []string{"process_id"},
		Navigations: []Navigation{
			{Name: "Contract", Target: "Contracts", Partner: "Processes", Property: "contract_id", Column: "key_contract_id"},
			{Name: "Tasks", Target: "Tasks", Many: true, Partner: "Process", Property: "process_id", Column: "key_process_id"},
		},
	}
	TasksDef = EntitySetDef{
		Name: "Tasks", TypeName: "Task", Typed: entities.Tasks.Typed, Columns: entities.TaskColumns,
		Key: "task_id", KeyColumns: []string{"key_task_id"}, OrderBy: []string{"task_id"},
		Navigations: []Navigation{
			{Name: "Process", Target: "Processes", Partner: "Tasks", Property: "process_id", Column: "key_process_id"},
			{Name: "Contract", Target: "Contracts", Partner: "Tasks", Property: "contract_id", Column: "key_contract_id"},
		},
	}
	ClientsDef = EntitySetDef{
		Name: "Clients", TypeName: "Client", Typed: entities.Clients.Typed, Columns: entities.ClientColumns,
		Key: "client_id", KeyColumns: []string{"key_client_id"}, OrderBy: []string{"client_id"},
		Normalized: map[string][2]string{"client_rut": {"key_client_rut", "rut_key"}},
		Literals:   GeneralReportDef.Literals,
		Navigations: []Navigation{
			{Name: "Contracts", Target: "Contracts", Many: true, Partner: "Client", Property: "client_id", Column: "key_client_id"},
		},
	}
	ServicesDef = EntitySetDef{
		Name: "Services", TypeName: "Service", Typed: entities.Services.Typed, Columns: entities.ServiceColumns,
		Key: "service_id", KeyColumns: []string{"key_service_id"}, OrderBy: []string{"service_id"},
		Navigations: []Navigation{
			{Name: "Contracts", Target: "Contracts", Many: true, Partner: "Service", Property: "service_id", Column: "key_service_id"},
		},
	}
)

// The checked entity sets of the definitions above.
var (
	GeneralReport = mustSet(GeneralReportDef)
	Users         = mustSet(UsersDef)
	Contracts     = mustSet(ContractsDef)
	Processes     = mustSet(ProcessesDef)
	Tasks         = mustSet(TasksDef)
	Clients       = mustSet(ClientsDef)
	Services      = mustSet(ServicesDef)
)

// mustSet returns the checked set of def, declared as the target of
// navigations by its name.
func mustSet(def EntitySetDef) *EntitySet {
	set, err := NewEntitySet(def)
	if err != nil {
		panic(err) // the definitions are constants: a test covers them
	}
	declared.Store(def.Name, set)
	return set
}
