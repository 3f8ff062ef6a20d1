package dataset

// ScheduleRuns is the run history of scheduled deliveries: one row per
// attempt at a schedule's occurrence, with its outcome and what it wrote.
// Read under the schedules:read scope from the views schedule_run_list
// (text) and schedule_run_list_typed (typed values) of
// 00017_schedules.sql, in the order of its id. No column holds a secret:
// a destination is stored and shown as its URL, which names where its
// secrets are, never the secrets.
var ScheduleRuns = declare(7, &Dataset{
	Name: "schedule-runs", Heading: "Schedule runs", Scope: SchedulesRead,
	File:      Phrase{"entregas", "schedule-runs"},
	Title:     Phrase{"Entregas programadas", "Scheduled deliveries"},
	Row:       Phrase{"Un intento por fila.", "One attempt per row."},
	One:       "schedule run",
	About:     "One row per attempt at a scheduled delivery: when, with what outcome, how many rows and bytes, to which destination and file.",
	Text:      "schedule_run_list",
	KeyColumn: "run_id",
	OData:     EntitySet{Name: "ScheduleRuns", TypeName: "ScheduleRun"},
	Columns: []Column{
		{Name: "run_id", Kind: Integer, Group: runGroup,
			Label: Phrase{"N° de ejecución", "Run number"},
			About: Phrase{"Identificador", "Identifier"}},
		{Name: "schedule", Kind: Text, Group: runGroup,
			Label: Phrase{"Programación", "Schedule"},
			About: Phrase{"Su nombre", "Its name"}},
		{Name: "occurrence", Kind: Timestamptz, Group: runGroup,
			Label: Phrase{"Ocurrencia", "Occurrence"},
			About: Phrase{"Cuándo tocaba", "When it was due"}},
		{Name: "attempt", Kind: Integer, Group: runGroup,
			Label: Phrase{"Intento", "Attempt"},
			About: Phrase{"Desde 1", "From 1"}},
		{Name: "outcome", Kind: Text, Group: runGroup,
			Label: Phrase{"Resultado", "Outcome"},
			About: Phrase{"delivered, unchanged, retried, failed…", "delivered, unchanged, retried, failed…"}},
		{Name: "reason", Kind: Text, Nullable: true, Group: runGroup,
			Label: Phrase{"Motivo", "Reason"},
			About: Phrase{"Por qué falló", "Why it failed"}},
		{Name: "started_at", Kind: Timestamptz, Group: runGroup,
			Label: Phrase{"Inicio", "Start"},
			About: Phrase{"Inicio", "Start"}},
		{Name: "ended_at", Kind: Timestamptz, Nullable: true, Group: runGroup,
			Label: Phrase{"Fin", "End"},
			About: Phrase{"Fin", "End"}},
		{Name: "rows", Kind: Integer, Nullable: true, Group: runGroup,
			Label: Phrase{"Filas", "Rows"},
			About: Phrase{"Filas", "Rows"}},
		{Name: "bytes", Kind: Integer, Nullable: true, Group: runGroup,
			Label: Phrase{"Bytes", "Bytes"},
			About: Phrase{"Bytes", "Bytes"}},
		{Name: "destination", Kind: Text, Group: runGroup,
			Label: Phrase{"Destino", "Destination"},
			About: Phrase{"Su URL, sin secretos", "Its URL, no secret"}},
		{Name: "file", Kind: Text, Nullable: true, Group: runGroup,
			Label: Phrase{"Archivo", "File"},
			About: Phrase{"Su nombre", "Its name"}},
	},
})

var runGroup = &Group{Name: "run", Title: Phrase{"Ejecución", "Run"}, Order: 1}
