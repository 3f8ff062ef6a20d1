package dataset

// AuditRead reads the record of every read (audit): who read which data,
// when, from where. No token gets it unless asked for.
const AuditRead Scope = "audit:read"

// Audit is the record of every read: one row per response that carried
// data (a page, an export, a feed page, a count, a key lookup, informe
// export, a schedule's run), per count of refused requests, and per event
// that governs reads (a token created, changed or revoked; the audit's
// mode at start-up; a prune). Read under the audit:read scope from the
// views audit_log (text) and audit_log_typed (typed values) of
// 00019_audit.sql, in the order of its id. Its values are what requests
// said of themselves (addresses, user agents, queries, with any token
// redacted) and the names of tokens. They are personal data of their
// readers (an address), and a query may name a client (rut=, a $filter
// on client_rut): the scope, given to no token unless asked for, is what
// keeps them; no column is marked as a client's, payer's or user's.
var Audit = declare(8, &Dataset{
	Name: "audit", Heading: "Audit log", Scope: AuditRead,
	File:      Phrase{"auditoria", "audit"},
	Title:     Phrase{"Registro de lecturas", "Audit log"},
	Row:       Phrase{"Una respuesta, un conteo de rechazos o un evento por fila.", "One response, count of refusals or event per row."},
	One:       "audit record",
	About:     "One row per response that carried data, per count of refused requests and per change to what governs reads: when, who, from where, through which door, what was asked, under which rules, and how it ended.",
	Text:      "audit_log",
	KeyColumn: "record_id",
	OData:     EntitySet{Name: "AuditLog", TypeName: "AuditRecord"},
	Columns: []Column{
		{Name: "record_id", Kind: Integer, Group: auditGroup,
			Label: Phrase{"N° de registro", "Record number"},
			About: Phrase{"N° de registro", "Record number"}},
		{Name: "started_at", Kind: Timestamptz, Group: auditGroup,
			Label: Phrase{"Inicio", "Start"},
			About: Phrase{"Inicio", "Start"}},
		{Name: "ended_at", Kind: Timestamptz, Nullable: true, Group: auditGroup,
			Label: Phrase{"Fin", "End"},
			About: Phrase{"Cuándo salió el último byte; vacío si no terminó", "When the last byte went out; empty if it never finished"}},
		{Name: "request_id", Kind: Text, Group: auditGroup,
			Label: Phrase{"Id de solicitud", "Request id"},
			About: Phrase{"Id de solicitud", "Request id"}},
		{Name: "principal", Kind: Text, Group: auditGroup,
			Label: Phrase{"Quién", "Who"},
			About: Phrase{"El nombre del token; para un comando, usuario y equipo", "The token's name; for a command, user and host"}},
		{Name: "client_address", Kind: Text, Nullable: true, Group: auditGroup,
			Label: Phrase{"Dirección del cliente", "Client address"},
			About: Phrase{"Dirección del cliente", "Client address"}},
		{Name: "user_agent", Kind: Text, Nullable: true, Group: auditGroup,
			Label: Phrase{"Agente de usuario", "User agent"},
			About: Phrase{"Agente de usuario", "User agent"}},
		{Name: "path", Kind: Text, Group: auditGroup,
			Label: Phrase{"Puerta", "Door"},
			About: Phrase{"Puerta", "Door"}},
		{Name: "dataset", Kind: Text, Nullable: true, Group: auditGroup,
			Label: Phrase{"Conjunto de datos", "Dataset"},
			About: Phrase{"Conjunto de datos", "Dataset"}},
		{Name: "query", Kind: Text, Nullable: true, Group: auditGroup,
			Label: Phrase{"Consulta", "Query"},
			About: Phrase{"Tal como se pidió, sin tokens", "As asked, tokens redacted"}},
		{Name: "rules", Kind: Text, Nullable: true, Group: auditGroup,
			Label: Phrase{"Reglas", "Rules"},
			About: Phrase{"Reglas", "Rules"}},
		{Name: "format", Kind: Text, Nullable: true, Group: auditGroup,
			Label: Phrase{"Formato", "Format"},
			About: Phrase{"Formato", "Format"}},
		{Name: "columns", Kind: Text, Nullable: true, Group: auditGroup,
			Label: Phrase{"Columnas", "Columns"},
			About: Phrase{"Columnas", "Columns"}},
		{Name: "rows", Kind: Integer, Nullable: true, Group: auditGroup,
			Label: Phrase{"Filas", "Rows"},
			About: Phrase{"Filas", "Rows"}},
		{Name: "bytes", Kind: Integer, Nullable: true, Group: auditGroup,
			Label: Phrase{"Bytes", "Bytes"},
			About: Phrase{"Bytes", "Bytes"}},
		{Name: "status", Kind: Integer, Nullable: true, Group: auditGroup,
			Label: Phrase{"Estado HTTP", "HTTP status"},
			About: Phrase{"Estado HTTP", "HTTP status"}},
		{Name: "outcome", Kind: Text, Group: auditGroup,
			Label: Phrase{"Resultado", "Outcome"},
			About: Phrase{"complete, cut, failed, not_modified, refused, recorded, unfinished", "complete, cut, failed, not_modified, refused, recorded, unfinished"}},
		{Name: "reason", Kind: Text, Nullable: true, Group: auditGroup,
			Label: Phrase{"Motivo", "Reason"},
			About: Phrase{"Motivo", "Reason"}},
		{Name: "requests", Kind: Integer, Group: auditGroup,
			Label: Phrase{"Solicitudes", "Requests"},
			About: Phrase{"1, o cuántos rechazos cuenta la fila", "1, or how many refusals the row counts"}},
		{Name: "instance", Kind: Text, Group: auditGroup,
			Label: Phrase{"Instancia", "Instance"},
			About: Phrase{"Instancia", "Instance"}},
	},
})

var auditGroup = &Group{Name: "audit", Title: Phrase{"Registro", "Record"}, Order: 1}
