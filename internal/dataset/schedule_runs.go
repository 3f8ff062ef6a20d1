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
	File:  Phrase{"ejecuciones-programadas", "schedule-runs"},
	Title: Phrase{"Una fila por intento de entrega programada", "One row per attempt at a scheduled delivery"},
	Row:   Phrase{"Una fila por intento de entrega programada: cuándo, con qué resultado, cuántas filas y bytes, a qué destino y archivo.", "One row per attempt at a scheduled delivery: when, with what outcome, how many rows and bytes, to which destination and file."},
	One:   "schedule run",
	About: "One row per attempt at a scheduled delivery: when, with what outcome, how many rows and bytes, to which destination and file.",
	Text:  "schedule_run_list", Typed: "schedule_run_list_typed",
	Keys: []string{"key_run_id"}, KeyColumn: "run_id",
	ExportPath: "/api/schedule-runs/export", Params: []string{"columns"},
	OData: EntitySet{
		Name: "ScheduleRuns", TypeName: "ScheduleRun",
		Key: "run_id", KeyColumns: []string{"key_run_id"}, OrderBy: []string{"run_id"},
	},
	Columns: []Column{
		{Name: "run_id", Kind: Integer, Group: runGroup,
			Label: Phrase{"Número de ejecución", "Run number"},
			About: Phrase{"Identificador del intento", "The attempt's identifier"}},
		{Name: "schedule", Kind: Text, Group: runGroup,
			Label: Phrase{"Programación", "Schedule"},
			About: Phrase{"Nombre de la programación", "The schedule's name"}},
		{Name: "occurrence", Kind: Timestamptz, Group: runGroup,
			Label: Phrase{"Ocurrencia", "Occurrence"},
			About: Phrase{"Momento en que tocaba la entrega (o en que se pidió, si fue a mano)", "When the delivery was due (or asked for, if run by hand)"}},
		{Name: "attempt", Kind: Integer, Group: runGroup,
			Label: Phrase{"Intento", "Attempt"},
			About: Phrase{"Número del intento en esa ocurrencia, desde 1", "The attempt's number at that occurrence, from 1"}},
		{Name: "outcome", Kind: Text, Group: runGroup,
			Label: Phrase{"Resultado", "Outcome"},
			About: Phrase{"running, delivered, unchanged (los mismos datos que la última entrega: no se envió nada), retried (se reintenta) o failed", "running, delivered, unchanged (the same data as the last delivery: nothing sent), retried (tried again) or failed"}},
		{Name: "reason", Kind: Text, Nullable: true, Group: runGroup,
			Label: Phrase{"Motivo", "Reason"},
			About: Phrase{"Por qué falló o se reintenta", "Why it failed or is tried again"}},
		{Name: "started_at", Kind: Timestamptz, Group: runGroup,
			Label: Phrase{"Inicio", "Start"},
			About: Phrase{"Inicio del intento", "When the attempt started"}},
		{Name: "ended_at", Kind: Timestamptz, Nullable: true, Group: runGroup,
			Label: Phrase{"Fin", "End"},
			About: Phrase{"Fin del intento", "When the attempt ended"}},
		{Name: "rows", Kind: Integer, Nullable: true, Group: runGroup,
			Label: Phrase{"Filas", "Rows"},
			About: Phrase{"Filas escritas", "Rows written"}},
		{Name: "bytes", Kind: Integer, Nullable: true, Group: runGroup,
			Label: Phrase{"Bytes", "Bytes"},
			About: Phrase{"Bytes del archivo", "Bytes of the file"}},
		{Name: "destination", Kind: Text, Group: runGroup,
			Label: Phrase{"Destino", "Destination"},
			About: Phrase{"URL del destino, sin secretos", "The destination's URL, with no secret"}},
		{Name: "file", Kind: Text, Nullable: true, Group: runGroup,
			Label: Phrase{"Archivo", "File"},
			About: Phrase{"Nombre del archivo escrito", "The name of the file written"}},
	},
})

var runGroup = &Group{Name: "run", Title: Phrase{"Ejecución", "Run"}, Order: 1}
