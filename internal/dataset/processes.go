package dataset

import "slices"

// Processes are the processes at their own grain: one row per process,
// with its contract's id and its task counts and end dates as a contract
// has them.
// Read under the report:read scope from the views process_list (text)
// and process_list_typed (typed values) of 00010_grains.sql, in the
// order of its id; the OData set relates it to the other entities.
var Processes = declare(3, &Dataset{
	Name: "processes", Heading: "Processes", Scope: ReportRead,
	File:      Phrase{"procesos", "processes"},
	Title:     Phrase{"Una fila por proceso", "One row per process"},
	Row:       Phrase{"Una fila por proceso (causa), con su contrato y sus tareas por estado.", "One row per process (case), with its contract and its tasks by status."},
	One:       "process",
	About:     "One row per process (causa), with its `contract_id`, its number of tasks, its tasks by status and its first and last task end dates.",
	Text:      "process_list",
	KeyColumn: "process_id",
	OData: EntitySet{
		Name: "Processes", TypeName: "Process",
		Navigations: []Navigation{
			{Name: "Contract", Target: "Contracts", Partner: "Processes", Property: "contract_id", Column: "key_contract_id"},
			{Name: "Tasks", Target: "Tasks", Many: true, Partner: "Process", Property: "process_id", Column: "key_process_id", Words: Phrase{"Tareas", "Tasks"}},
		},
	},
	Columns: slices.Concat(
		reportColumns("process_id", "contract_id"),
		nullable(reportColumns("process_role", "caratulado_process", "process_date")),
		taskCounts,
	),
})
