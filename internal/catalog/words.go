package catalog

// reportGroups describes report.Columns, in its order, grouped as the
// API spec groups the report row (section 2.2).
var reportGroups = []group{
	{"contract", Text{"Contrato", "Contract"}, []described{
		{"contract_id", Text{"N° de contrato", "Contract id"}, Text{"Número del contrato", "Contract id"}},
		{"contract_status", Text{"Estado del contrato", "Contract status"}, Text{"Estado del contrato (por ejemplo APROBADO)", "Contract status (for example APROBADO)"}},
		{"code_contract", Text{"Código de contrato", "Contract code"}, Text{"Código del contrato", "Contract code"}},
		{"quantity_quotas", Text{"Cuotas", "Instalments"}, Text{"Número de cuotas", "Number of instalments"}},
		{"date_first_payment", Text{"Fecha del primer pago", "First payment date"}, Text{"Fecha del primer pago", "Date of the first payment"}},
		{"contract_creation_date", Text{"Creación del contrato", "Contract created"}, Text{"Fecha y hora de creación del contrato", "Date and time the contract was created"}},
		{"attended_by", Text{"Atendido por", "Attended by"}, Text{"Quién atendió el contrato", "Who attended the contract"}},
	}},
	{"contract_client", Text{"Cliente según el contrato", "Client as recorded on the contract"}, []described{
		{"rut_client_contract", Text{"RUT del cliente (contrato)", "Client's RUT (contract)"}, Text{"RUT del cliente según el contrato", "RUT of the client as recorded on the contract"}},
		{"passport_client_contract", Text{"Pasaporte del cliente (contrato)", "Client's passport (contract)"}, Text{"Pasaporte del cliente según el contrato", "Passport of the client as recorded on the contract"}},
		{"first_name_client_contract", Text{"Primer nombre del cliente (contrato)", "Client's first name (contract)"}, Text{"Primer nombre del cliente según el contrato", "First name of the client as recorded on the contract"}},
		{"second_name_client_contract", Text{"Segundo nombre del cliente (contrato)", "Client's second name (contract)"}, Text{"Segundo nombre del cliente según el contrato", "Second name of the client as recorded on the contract"}},
		{"last_name_client_contract", Text{"Apellido paterno del cliente (contrato)", "Client's last name (contract)"}, Text{"Apellido paterno del cliente según el contrato", "Last name of the client as recorded on the contract"}},
		{"second_last_name_client_contract", Text{"Apellido materno del cliente (contrato)", "Client's second last name (contract)"}, Text{"Apellido materno del cliente según el contrato", "Second last name of the client as recorded on the contract"}},
		{"client_birth_date_contract", Text{"Fecha de nacimiento del cliente (contrato)", "Client's date of birth (contract)"}, Text{"Fecha de nacimiento del cliente según el contrato", "Date of birth of the client as recorded on the contract"}},
		{"client_occupation_contract", Text{"Ocupación del cliente (contrato)", "Client's occupation (contract)"}, Text{"Ocupación del cliente según el contrato", "Occupation of the client as recorded on the contract"}},
		{"client_email_contract", Text{"Correo del cliente (contrato)", "Client's e-mail (contract)"}, Text{"Correo electrónico del cliente según el contrato", "E-mail address of the client as recorded on the contract"}},
		{"client_phone_contract", Text{"Teléfono del cliente (contrato)", "Client's phone (contract)"}, Text{"Teléfono del cliente según el contrato", "Phone number of the client as recorded on the contract"}},
		{"client_country_contract", Text{"País del cliente (contrato)", "Client's country (contract)"}, Text{"País del cliente según el contrato", "Country of the client as recorded on the contract"}},
		{"client_marital_status_contract", Text{"Estado civil del cliente (contrato)", "Client's marital status (contract)"}, Text{"Estado civil del cliente según el contrato", "Marital status of the client as recorded on the contract"}},
		{"client_gender_contract", Text{"Género del cliente (contrato)", "Client's gender (contract)"}, Text{"Género del cliente según el contrato", "Gender of the client as recorded on the contract"}},
		{"client_region_contract", Text{"Región del cliente (contrato)", "Client's region (contract)"}, Text{"Región del cliente según el contrato", "Region of the client as recorded on the contract"}},
		{"client_commune_contract", Text{"Comuna del cliente (contrato)", "Client's commune (contract)"}, Text{"Comuna del cliente según el contrato", "Commune of the client as recorded on the contract"}},
		{"client_address_contract", Text{"Dirección del cliente (contrato)", "Client's address (contract)"}, Text{"Dirección del cliente según el contrato", "Address of the client as recorded on the contract"}},
	}},
	{"payer", Text{"Pagador según el contrato", "Payer as recorded on the contract"}, []described{
		{"rut_payer_contract", Text{"RUT del pagador (contrato)", "Payer's RUT (contract)"}, Text{"RUT del pagador según el contrato", "RUT of the payer as recorded on the contract"}},
		{"passport_payer_contract", Text{"Pasaporte del pagador (contrato)", "Payer's passport (contract)"}, Text{"Pasaporte del pagador según el contrato", "Passport of the payer as recorded on the contract"}},
		{"first_name_payer_contract", Text{"Primer nombre del pagador (contrato)", "Payer's first name (contract)"}, Text{"Primer nombre del pagador según el contrato", "First name of the payer as recorded on the contract"}},
		{"second_name_payer_contract", Text{"Segundo nombre del pagador (contrato)", "Payer's second name (contract)"}, Text{"Segundo nombre del pagador según el contrato", "Second name of the payer as recorded on the contract"}},
		{"last_name_payer_contract", Text{"Apellido paterno del pagador (contrato)", "Payer's last name (contract)"}, Text{"Apellido paterno del pagador según el contrato", "Last name of the payer as recorded on the contract"}},
		{"second_last_name_payer_contract", Text{"Apellido materno del pagador (contrato)", "Payer's second last name (contract)"}, Text{"Apellido materno del pagador según el contrato", "Second last name of the payer as recorded on the contract"}},
		{"payer_birth_date_contract", Text{"Fecha de nacimiento del pagador (contrato)", "Payer's date of birth (contract)"}, Text{"Fecha de nacimiento del pagador según el contrato", "Date of birth of the payer as recorded on the contract"}},
		{"payer_occupation_contract", Text{"Ocupación del pagador (contrato)", "Payer's occupation (contract)"}, Text{"Ocupación del pagador según el contrato", "Occupation of the payer as recorded on the contract"}},
		{"payer_email_contract", Text{"Correo del pagador (contrato)", "Payer's e-mail (contract)"}, Text{"Correo electrónico del pagador según el contrato", "E-mail address of the payer as recorded on the contract"}},
		{"payer_phone_contract", Text{"Teléfono del pagador (contrato)", "Payer's phone (contract)"}, Text{"Teléfono del pagador según el contrato", "Phone number of the payer as recorded on the contract"}},
		{"payer_country_contract", Text{"País del pagador (contrato)", "Payer's country (contract)"}, Text{"País del pagador según el contrato", "Country of the payer as recorded on the contract"}},
		{"payer_marital_status_contract", Text{"Estado civil del pagador (contrato)", "Payer's marital status (contract)"}, Text{"Estado civil del pagador según el contrato", "Marital status of the payer as recorded on the contract"}},
		{"payer_gender_contract", Text{"Género del pagador (contrato)", "Payer's gender (contract)"}, Text{"Género del pagador según el contrato", "Gender of the payer as recorded on the contract"}},
		{"payer_region_contract", Text{"Región del pagador (contrato)", "Payer's region (contract)"}, Text{"Región del pagador según el contrato", "Region of the payer as recorded on the contract"}},
		{"payer_commune_contract", Text{"Comuna del pagador (contrato)", "Payer's commune (contract)"}, Text{"Comuna del pagador según el contrato", "Commune of the payer as recorded on the contract"}},
		{"payer_address_contract", Text{"Dirección del pagador (contrato)", "Payer's address (contract)"}, Text{"Dirección del pagador según el contrato", "Address of the payer as recorded on the contract"}},
	}},
	{"service", Text{"Servicio", "Service"}, []described{
		{"service", Text{"Servicio", "Service"}, Text{"Nombre del servicio", "Service name"}},
		{"costo_servicio", Text{"Costo del servicio", "Service cost"}, Text{"Costo del servicio", "Service cost"}},
		{"benefit_center_id_service", Text{"N° de centro de beneficio", "Benefit center id"}, Text{"Número del centro de beneficio", "Benefit center id"}},
		{"benefit_center_service", Text{"Centro de beneficio", "Benefit center"}, Text{"Nombre del centro de beneficio", "Benefit center name"}},
	}},
	{"process", Text{"Proceso", "Process"}, []described{
		{"process_id", Text{"N° de proceso", "Process id"}, Text{"Número del proceso", "Process id"}},
		{"process_role", Text{"Rol en el proceso", "Role in the process"}, Text{"Rol en el proceso", "Role in the process"}},
		{"caratulado_process", Text{"Caratulado", "Case caption"}, Text{"Caratulado de la causa", "Case caption"}},
		{"process_date", Text{"Fecha del proceso", "Process date"}, Text{"Fecha del proceso", "Process date"}},
	}},
	{"task", Text{"Tarea", "Task"}, []described{
		{"task", Text{"Tarea", "Task"}, Text{"Nombre de la tarea", "Task name"}},
		{"task_title", Text{"Título de la tarea", "Task title"}, Text{"Título de la tarea", "Task title"}},
		{"task_detail", Text{"Detalle de la tarea", "Task description"}, Text{"Detalle de la tarea", "Task description"}},
		{"task_code", Text{"Código de la tarea", "Task code"}, Text{"Código de la tarea", "Task code"}},
		{"task_end_date", Text{"Término de la tarea", "Task end date"}, Text{"Fecha de término de la tarea", "Task end date"}},
		{"task_duration", Text{"Duración de la tarea", "Task duration"}, Text{"Duración de la tarea", "Task duration"}},
		{"task_status", Text{"Estado de la tarea", "Task status"}, Text{"Estado de la tarea (Pendiente, En Curso, Cancelado o Terminada)", "Task status (Pendiente, En Curso, Cancelado or Terminada)"}},
		{"task_progress", Text{"Avance de la tarea", "Task progress"}, Text{"Avance de la tarea", "Task progress"}},
		{"task_executor", Text{"Ejecutor de la tarea", "Task executor"}, Text{"Quién ejecuta la tarea", "Who carries out the task"}},
		{"execution_date", Text{"Fecha de ejecución", "Execution date"}, Text{"Fecha y hora de ejecución (UTC)", "Execution date and time (UTC)"}},
	}},
	{"client", Text{"Cliente (ficha actual)", "Client (current record)"}, []described{
		{"client_id", Text{"N° de cliente", "Client id"}, Text{"Número del cliente", "Client id"}},
		{"client_rut", Text{"RUT del cliente", "Client's RUT"}, Text{"RUT del cliente", "Client's RUT"}},
		{"client_passport", Text{"Pasaporte del cliente", "Client's passport"}, Text{"Pasaporte del cliente", "Client's passport"}},
		{"first_name_client", Text{"Primer nombre del cliente", "Client's first name"}, Text{"Primer nombre del cliente", "Client's first name"}},
		{"second_name_client", Text{"Segundo nombre del cliente", "Client's second name"}, Text{"Segundo nombre del cliente", "Client's second name"}},
		{"last_name_client", Text{"Apellido paterno del cliente", "Client's last name"}, Text{"Apellido paterno del cliente", "Client's last name"}},
		{"second_last_name_client", Text{"Apellido materno del cliente", "Client's second last name"}, Text{"Apellido materno del cliente", "Client's second last name"}},
		{"client_email", Text{"Correo del cliente", "Client's e-mail"}, Text{"Correo electrónico del cliente", "Client's e-mail address"}},
		{"client_phone", Text{"Teléfono del cliente", "Client's phone"}, Text{"Teléfono del cliente", "Client's phone number"}},
		{"client_occupation", Text{"Ocupación del cliente", "Client's occupation"}, Text{"Ocupación del cliente", "Client's occupation"}},
		{"client_birth_date", Text{"Fecha de nacimiento del cliente", "Client's date of birth"}, Text{"Fecha de nacimiento del cliente", "Client's date of birth"}},
		{"client_country", Text{"País del cliente", "Client's country"}, Text{"País del cliente", "Client's country"}},
		{"client_marital_status", Text{"Estado civil del cliente", "Client's marital status"}, Text{"Estado civil del cliente", "Client's marital status"}},
		{"client_gender", Text{"Género del cliente", "Client's gender"}, Text{"Género del cliente", "Client's gender"}},
		{"client_region", Text{"Región del cliente", "Client's region"}, Text{"Región del cliente", "Client's region"}},
		{"client_commune", Text{"Comuna del cliente", "Client's commune"}, Text{"Comuna del cliente", "Client's commune"}},
		{"client_address", Text{"Dirección del cliente", "Client's address"}, Text{"Dirección del cliente", "Client's address"}},
	}},
}

// usersGroups describes users.Columns, in its order.
var usersGroups = []group{
	{"user", Text{"Usuario", "User"}, []described{
		{"id", Text{"N° de usuario", "User id"}, Text{"Número del usuario", "User id"}},
		{"name", Text{"Nombre", "Name"}, Text{"Nombre completo", "Full name"}},
		{"email", Text{"Correo electrónico", "E-mail"}, Text{"Correo electrónico", "E-mail address"}},
		{"username", Text{"Usuario", "Login name"}, Text{"Nombre de usuario", "Login name"}},
		{"rut", Text{"RUT", "RUT"}, Text{"RUT", "RUT"}},
		{"phone", Text{"Teléfono", "Phone"}, Text{"Teléfono", "Phone number"}},
		{"last_entry", Text{"Último ingreso", "Last entry"}, Text{"Último ingreso (vacío si nunca ha entrado)", "Last entry (empty if never)"}},
		{"status", Text{"Estado", "Status"}, Text{"Estado (una letra)", "Status (one letter)"}},
		{"created_at", Text{"Creado", "Created"}, Text{"Fecha y hora de creación", "Date and time created"}},
		{"updated_at", Text{"Modificado", "Updated"}, Text{"Fecha y hora de la última modificación", "Date and time last updated"}},
	}},
}

// fileWords start the names of a dataset's files, by its source name, in
// Spanish and English; FileWords has the words of their other parts.
var fileWords = map[string]Text{
	"general-report": {"informe-general", "general-report"},
	"contracts":      {"contratos", "contracts"},
	"processes":      {"procesos", "processes"},
	"tasks":          {"tareas", "tasks"},
	"clients":        {"clientes", "clients"},
	"services":       {"servicios", "services"},
	"users":          {"usuarios", "users"},
}

// FileWords are the words of a file's name after its dataset's (see
// [Dataset].File): a page of the report and the filter that names it, in
// Spanish and English, by their English word.
var FileWords = map[string]Text{
	"page": {"pagina", "page"}, "contract": {"contrato", "contract"}, "code": {"codigo", "code"},
	"client": {"cliente", "client"}, "rut": {"rut", "rut"},
}

// relatedWords name the rows of each collection navigation, as the
// page's conditions on related rows are headed: «Tareas: Estado».
var relatedWords = map[string]Text{
	"Processes": {"Procesos", "Processes"},
	"Tasks":     {"Tareas", "Tasks"},
	"Contracts": {"Contratos", "Contracts"},
}

// grainWords name each entity's dataset and say what its row is.
var grainWords = map[string]struct{ title, row Text }{
	"contracts": {Text{"Una fila por contrato", "One row per contract"}, Text{
		"Una fila por contrato, con su cliente, su pagador y su servicio, y el costo una sola vez: una suma de costos es la suma de los contratos. Cuenta además sus procesos y sus tareas por estado.",
		"One row per contract, with its client, payer and service, and its cost once: a sum of costs is the sum of the contracts. It also counts its processes and its tasks by status."}},
	"processes": {Text{"Una fila por proceso", "One row per process"}, Text{
		"Una fila por proceso (causa), con su contrato y sus tareas por estado.",
		"One row per process (case), with its contract and its tasks by status."}},
	"tasks": {Text{"Una fila por tarea, sin datos del contrato", "One row per task, without the contract's fields"}, Text{
		"Una fila por tarea, con su proceso y su contrato como claves.",
		"One row per task, with its process and contract as keys."}},
	"clients": {Text{"Una fila por cliente", "One row per client"}, Text{
		"Una fila por cliente, con su número de contratos.", "One row per client, with their number of contracts."}},
	"services": {Text{"Una fila por servicio", "One row per service"}, Text{
		"Una fila por servicio, con su costo, su centro de beneficio y su número de contratos.",
		"One row per service, with its cost, its benefit centre and its number of contracts."}},
}

// grainColumns are the words of the entities' own columns: keys and counts
// the general report does not have.
var grainColumns = map[string]described{
	"task_id":              {"task_id", Text{"Número de tarea", "Task number"}, Text{"Identificador de la tarea", "The task's identifier"}},
	"service_id":           {"service_id", Text{"Número de servicio", "Service number"}, Text{"Identificador del servicio", "The service's identifier"}},
	"processes":            {"processes", Text{"Procesos", "Processes"}, Text{"Número de procesos del contrato", "The contract's number of processes"}},
	"tasks":                {"tasks", Text{"Tareas", "Tasks"}, Text{"Número de tareas", "Number of tasks"}},
	"tasks_pending":        {"tasks_pending", Text{"Tareas pendientes", "Pending tasks"}, Text{"Tareas en estado Pendiente", "Tasks whose status is Pendiente"}},
	"tasks_in_progress":    {"tasks_in_progress", Text{"Tareas en curso", "Tasks in progress"}, Text{"Tareas en estado En Curso", "Tasks whose status is En Curso"}},
	"tasks_cancelled":      {"tasks_cancelled", Text{"Tareas canceladas", "Cancelled tasks"}, Text{"Tareas en estado Cancelado", "Tasks whose status is Cancelado"}},
	"tasks_done":           {"tasks_done", Text{"Tareas terminadas", "Finished tasks"}, Text{"Tareas en estado Terminada", "Tasks whose status is Terminada"}},
	"first_task_end_date":  {"first_task_end_date", Text{"Primer término de tarea", "First task end"}, Text{"La fecha de término más temprana de sus tareas", "The earliest end date of its tasks"}},
	"last_task_end_date":   {"last_task_end_date", Text{"Último término de tarea", "Last task end"}, Text{"La fecha de término más tardía de sus tareas", "The latest end date of its tasks"}},
	"client_creation_date": {"client_creation_date", Text{"Alta del cliente", "Client since"}, Text{"Cuándo se registró el cliente", "When the client was registered"}},
	"contracts":            {"contracts", Text{"Contratos", "Contracts"}, Text{"Número de contratos", "Number of contracts"}},
}
