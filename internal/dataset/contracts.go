package dataset

import "slices"

// Contracts are the contracts at their own grain: one row per contract,
// its client and payer as recorded on it, its service with its cost and
// benefit center (the cost once, so that it sums to the right total), then
// its number of processes and of tasks, its tasks by status, and its first
// and last task end dates (null without tasks that have one).
// Read under the report:read scope from the views contract_list (text)
// and contract_list_typed (typed values) of 00010_grains.sql, in the
// order of its id; the OData set relates it to the other entities.
var Contracts = declare(2, &Dataset{
	Name: "contracts", Heading: "Contracts", Scope: ReportRead,
	File:      Phrase{"contratos", "contracts"},
	Title:     Phrase{"Una fila por contrato", "One row per contract"},
	Row:       Phrase{"Una fila por contrato, con su cliente, su pagador y su servicio, y el costo una sola vez: una suma de costos es la suma de los contratos. Cuenta además sus procesos y sus tareas por estado.", "One row per contract, with its client, payer and service, and its cost once: a sum of costs is the sum of the contracts. It also counts its processes and its tasks by status."},
	One:       "contract",
	About:     "One row per contract: its client and payer as recorded on it, its service with its cost (once, so that the cost sums to the right total), its number of processes and of tasks, its tasks by status (`tasks_pending`, `tasks_in_progress`, `tasks_cancelled`, `tasks_done`) and its first and last task end dates.",
	Text:      "contract_list",
	KeyColumn: "contract_id",
	OData: EntitySet{
		Name: "Contracts", TypeName: "Contract",
		Navigations: []Navigation{
			{Name: "Client", Target: "Clients", Partner: "Contracts", Property: "client_id", Column: "key_client_id"},
			{Name: "Service", Target: "Services", Partner: "Contracts", Property: "service_id", Column: "key_service_id", Optional: true},
			{Name: "Processes", Target: "Processes", Many: true, Partner: "Contract", Property: "contract_id", Column: "key_contract_id", Words: Phrase{"Procesos", "Processes"}},
			{Name: "Tasks", Target: "Tasks", Many: true, Partner: "Contract", Property: "contract_id", Column: "key_contract_id", Words: Phrase{"Tareas", "Tasks"}},
		},
	},
	Columns: slices.Concat(
		reportColumns("contract_id"),
		nullable(reportColumns("contract_status", "code_contract", "quantity_quotas", "date_first_payment")),
		reportColumns("contract_creation_date"),
		nullable(reportColumns("attended_by")),
		reportColumns("client_id"),
		nullable(reportColumns("rut_client_contract", "passport_client_contract",
			"first_name_client_contract", "second_name_client_contract", "last_name_client_contract",
			"second_last_name_client_contract", "client_birth_date_contract", "client_occupation_contract",
			"client_email_contract", "client_phone_contract", "client_country_contract",
			"client_marital_status_contract", "client_gender_contract", "client_region_contract",
			"client_commune_contract", "client_address_contract", "rut_payer_contract",
			"passport_payer_contract", "first_name_payer_contract", "second_name_payer_contract",
			"last_name_payer_contract", "second_last_name_payer_contract", "payer_birth_date_contract",
			"payer_occupation_contract", "payer_email_contract", "payer_phone_contract",
			"payer_country_contract", "payer_marital_status_contract", "payer_gender_contract",
			"payer_region_contract", "payer_commune_contract", "payer_address_contract")),
		[]Column{
			{Name: "service_id", Kind: Integer, Nullable: true, Group: keysAndCounts,
				Label: Phrase{"Número de servicio", "Service number"},
				About: Phrase{"Identificador del servicio", "The service's identifier"}},
		},
		nullable(reportColumns("service", "costo_servicio", "benefit_center_id_service", "benefit_center_service")),
		[]Column{
			{Name: "processes", Kind: Integer, Group: keysAndCounts,
				Label: Phrase{"Procesos", "Processes"},
				About: Phrase{"Número de procesos del contrato", "The contract's number of processes"}},
		},
		taskCounts,
	),
})

// keysAndCounts groups the entities' own columns, keys and counts that the
// general report does not have; it comes first.
var keysAndCounts = &Group{Name: "own", Title: Phrase{"Claves y cuentas", "Keys and counts"}, Order: 0}

// taskCounts are the counts of a contract's or a process's tasks, by
// status, and their first and last end dates.
var taskCounts = []Column{
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
}
