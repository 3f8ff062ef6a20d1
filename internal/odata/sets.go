package odata

import (
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
	}
	// UsersDef is the users listing, keyed by id.
	UsersDef = EntitySetDef{
		Name: "Users", TypeName: "User", Columns: users.Columns,
		Key: "id", KeyColumns: []string{"key_id"}, OrderBy: []string{"id"},
	}
)
