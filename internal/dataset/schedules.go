package dataset

// Schedules are the scheduled deliveries themselves: one row per
// schedule, what it exports, in which format, when and where to. Read
// under the schedules:read scope from the views schedule_list (text) and
// schedule_list_typed (typed values) of 00021_schedule_list.sql, in the
// order of its id. A schedule's query (which may name a client), its
// webhook (whose address may hold a secret) and its token are no columns;
// its destination is its URL, which names where its secrets are, never
// the secrets.
var Schedules = declare(9, &Dataset{
	Name: "schedules", Heading: "Schedules", Scope: SchedulesRead,
	File:      Phrase{"programaciones", "schedules"},
	Title:     Phrase{"Programaciones de entregas", "Delivery schedules"},
	Row:       Phrase{"Una programación por fila.", "One schedule per row."},
	One:       "schedule",
	About:     "One row per scheduled delivery: which dataset it exports, in which format, when, to which destination, whether it is paused and when it runs next.",
	Text:      "schedule_list",
	KeyColumn: "schedule_id",
	OData:     EntitySet{Name: "Schedules", TypeName: "Schedule"},
	Columns: []Column{
		{Name: "schedule_id", Kind: Integer, Group: scheduleGroup,
			Label: Phrase{"N° de programación", "Schedule number"},
			About: Phrase{"Identificador", "Identifier"}},
		{Name: "title", Kind: Text, Group: scheduleGroup,
			Label: Phrase{"Nombre", "Name"},
			About: Phrase{"Su nombre, único", "Its name, unique"}},
		{Name: "exports", Kind: Text, Group: scheduleGroup,
			Label: Phrase{"Datos", "Dataset"},
			About: Phrase{"Los datos que entrega", "The dataset it delivers"}},
		{Name: "file_format", Kind: Text, Group: scheduleGroup,
			Label: Phrase{"Formato", "Format"},
			About: Phrase{"csv, xlsx, parquet…", "csv, xlsx, parquet…"}},
		{Name: "cron", Kind: Text, Group: scheduleGroup,
			Label: Phrase{"Cuándo", "When"},
			About: Phrase{"Expresión cron", "Cron expression"}},
		{Name: "time_zone", Kind: Text, Group: scheduleGroup,
			Label: Phrase{"Zona horaria", "Time zone"},
			About: Phrase{"En la que se lee el cron", "The cron expression's"}},
		{Name: "delivers_to", Kind: Text, Group: scheduleGroup,
			Label: Phrase{"Destino", "Destination"},
			About: Phrase{"Su URL, sin secretos", "Its URL, no secret"}},
		{Name: "state", Kind: Text, Group: scheduleGroup,
			Label: Phrase{"Estado", "State"},
			About: Phrase{"active o paused", "active or paused"}},
		{Name: "next_run", Kind: Timestamptz, Group: scheduleGroup,
			Label: Phrase{"Próxima entrega", "Next run"},
			About: Phrase{"Cuándo toca la próxima", "When the next one is due"}},
		{Name: "created", Kind: Timestamptz, Group: scheduleGroup,
			Label: Phrase{"Creada", "Created"},
			About: Phrase{"Creada", "Created"}},
		{Name: "changed", Kind: Timestamptz, Group: scheduleGroup,
			Label: Phrase{"Cambiada", "Changed"},
			About: Phrase{"Último cambio", "Last change"}},
	},
})

var scheduleGroup = &Group{Name: "schedule", Title: Phrase{"Programación", "Schedule"}, Order: 1}
