package dataset

import "slices"

// Tasks are the tasks at their own grain: one row per task, with its
// process's and contract's ids.
// Read under the report:read scope from the views task_list (text)
// and task_list_typed (typed values) of 00010_grains.sql, in the
// order of its id; the OData set relates it to the other entities.
var Tasks = declare(4, &Dataset{
	Name: "tasks", Heading: "Tasks", Scope: ReportRead,
	File:      Phrase{"tareas", "tasks"},
	Title:     Phrase{"Una fila por tarea, sin datos del contrato", "One row per task, without the contract's fields"},
	Row:       Phrase{"Una fila por tarea, con su proceso y su contrato como claves.", "One row per task, with its process and contract as keys."},
	One:       "task",
	About:     "One row per task, with its `process_id` and `contract_id`.",
	Text:      "task_list",
	KeyColumn: "task_id",
	OData: EntitySet{
		Name: "Tasks", TypeName: "Task",
		Navigations: []Navigation{
			{Name: "Process", Target: "Processes", Partner: "Tasks", Property: "process_id", Column: "key_process_id"},
			{Name: "Contract", Target: "Contracts", Partner: "Tasks", Property: "contract_id", Column: "key_contract_id"},
		},
	},
	Columns: slices.Concat(
		[]Column{
			{Name: "task_id", Kind: Integer, Group: keysAndCounts,
				Label: Phrase{"Número de tarea", "Task number"},
				About: Phrase{"Identificador de la tarea", "The task's identifier"}},
		},
		reportColumns("process_id", "contract_id"),
		nullable(reportColumns("task", "task_title", "task_detail", "task_code", "task_end_date",
			"task_duration", "task_status", "task_progress", "task_executor", "execution_date")),
	),
})
