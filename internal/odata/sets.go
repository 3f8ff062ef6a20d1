package odata

import (
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
			return err
		}},
	}
	// UsersDef is the users listing, keyed by id.
	UsersDef = EntitySetDef{
		Name: "Users", TypeName: "User", Columns: users.Columns,
		Key: "id", KeyColumns: []string{"key_id"}, OrderBy: []string{"id"},
	}
)

// The checked entity sets of [GeneralReportDef] and [UsersDef].
var (
	GeneralReport = mustSet(GeneralReportDef)
	Users         = mustSet(UsersDef)
)

func mustSet(def EntitySetDef) *EntitySet {
	set, err := NewEntitySet(def)
	if err != nil {
		panic(err) // the definitions are constants: a test covers them
	}
	return set
}
