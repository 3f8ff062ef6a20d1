package dataset

// Processes are the processes at their own grain: one row per process,
// with its contract's id and its task counts and end dates as a contract
// has them.
// Read under the report:read scope from the views process_list (text)
// and process_list_typed (typed values) of 00010_grains.sql, in the
// order of its id; the OData set relates it to the other entities.
var Processes = declare(3, &Dataset{
	Name: "processes", Heading: "Processes", Scope: ReportRead,
	Title: Phrase{"Una fila por proceso", "One row per process"},
	Row:   Phrase{"Una fila por proceso (causa), con su contrato y sus tareas por estado.", "One row per process (case), with its contract and its tasks by status."},
	One:   "process",
	About: "One row per process (causa), with its `contract_id`, its number of tasks, its tasks by status and its first and last task end dates.",
	Text:  "process_list", Typed: "process_list_typed",
	Keys: []string{"key_process_id"}, KeyColumn: "process_id",
	ExportPath: "/api/processes/export", Params: []string{"columns"},
	OData: EntitySet{
		Name: "Processes", TypeName: "Process",
		Key: "process_id", KeyColumns: []string{"key_process_id"}, OrderBy: []string{"process_id"},
		Navigations: []Navigation{
			{Name: "Contract", Target: "Contracts", Partner: "Processes", Property: "contract_id", Column: "key_contract_id"},
			{Name: "Tasks", Target: "Tasks", Many: true, Partner: "Process", Property: "process_id", Column: "key_process_id"},
		},
	},
	Columns: []Column{
		{Name: "process_id", Kind: Integer, Group: processGroup,
			Label: Phrase{"N° de proceso", "Process id"},
			About: Phrase{"Número del proceso", "Process id"}},
		{Name: "contract_id", Kind: Integer, Group: contractGroup,
			Label: Phrase{"N° de contrato", "Contract id"},
			About: Phrase{"Número del contrato", "Contract id"}},
		{Name: "process_role", Kind: Text, Nullable: true, Group: processGroup,
			Label: Phrase{"Rol en el proceso", "Role in the process"},
			About: Phrase{"Rol en el proceso", "Role in the process"}},
		{Name: "caratulado_process", Kind: Text, Nullable: true, Group: processGroup,
			Label: Phrase{"Caratulado", "Case caption"},
			About: Phrase{"Caratulado de la causa", "Case caption"}},
		{Name: "process_date", Kind: Date, Nullable: true, Group: processGroup,
			Label: Phrase{"Fecha del proceso", "Process date"},
			About: Phrase{"Fecha del proceso", "Process date"}},
		{Name: "tasks", Kind: Integer, Group: keysAndCounts,
			Label: Phrase{"Tareas", "Tasks"},
			About: Phrase{"Número de tareas", "Number of tasks"}},
		{Name: "tasks_pending", Kind: Integer, Group: keysAndCounts,
			Label: Phrase{"Tareas pendientes", "Pending tasks"},
			About: Phrase{"Tareas en estado Pendiente", "Tasks whose status is Pendiente"}},
		{Name: "tasks_in_progress", Kind: Integer, Group: keysAndCounts,
			Label: Phrase{"Tareas en curso", "Tasks in progress"},
			About: Phrase{"Tareas en estado En Curso", "Tasks whose status is En Curso"}},
		{Name: "tasks_cancelled", Kind: Integer, Group: keysAndCounts,
			Label: Phrase{"Tareas canceladas", "Cancelled tasks"},
			About: Phrase{"Tareas en estado Cancelado", "Tasks whose status is Cancelado"}},
		{Name: "tasks_done", Kind: Integer, Group: keysAndCounts,
			Label: Phrase{"Tareas terminadas", "Finished tasks"},
			About: Phrase{"Tareas en estado Terminada", "Tasks whose status is Terminada"}},
		{Name: "first_task_end_date", Kind: Date, Nullable: true, Group: keysAndCounts,
			Label: Phrase{"Primer término de tarea", "First task end"},
			About: Phrase{"La fecha de término más temprana de sus tareas", "The earliest end date of its tasks"}},
		{Name: "last_task_end_date", Kind: Date, Nullable: true, Group: keysAndCounts,
			Label: Phrase{"Último término de tarea", "Last task end"},
			About: Phrase{"La fecha de término más tardía de sus tareas", "The latest end date of its tasks"}},
	},
})
