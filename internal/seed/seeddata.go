package seed

// The word lists [Seed] draws from. Their order is part of the seed's
// output: changing a list changes the rows every seed produces.

var maleNames = []string{
	"José", "Juan", "Luis", "Carlos", "Jorge", "Sebastián", "Matías", "Benjamín",
	"Cristóbal", "Nicolás", "Felipe", "Diego", "Tomás", "Vicente", "Martín",
	"Joaquín", "Agustín", "Ignacio", "Francisco", "Pedro", "Manuel", "Andrés",
	"Rodrigo", "Gonzalo", "Patricio", "Raúl", "Héctor", "Óscar", "Iván", "Ramón",
	"Hernán", "Rubén", "Simón", "Álvaro", "Germán", "Esteban", "Maximiliano",
}

var femaleNames = []string{
	"María", "Ana", "Francisca", "Javiera", "Catalina", "Constanza", "Valentina",
	"Camila", "Fernanda", "Daniela", "Carolina", "Paula", "Sofía", "Isidora",
	"Antonia", "Florencia", "Martina", "Agustina", "Josefa", "Trinidad",
	"Macarena", "Verónica", "Patricia", "Claudia", "Ximena", "Inés", "Mónica",
	"Begoña", "Leonor", "Belén", "Rocío", "Soledad", "Angélica", "Raquel", "Noemí",
}

var surnames = []string{
	"González", "Muñoz", "Rojas", "Díaz", "Pérez", "Soto", "Contreras", "Silva",
	"Martínez", "Sepúlveda", "Morales", "Rodríguez", "López", "Fuentes",
	"Hernández", "Torres", "Araya", "Flores", "Espinoza", "Valenzuela",
	"Castillo", "Ramírez", "Reyes", "Gutiérrez", "Castro", "Vargas", "Álvarez",
	"Vásquez", "Tapia", "Fernández", "Sánchez", "Carrasco", "Gómez", "Cortés",
	"Herrera", "Núñez", "Jara", "Vergara", "Rivera", "Figueroa", "Riquelme",
	"García", "Miranda", "Bravo", "Vera", "Molina", "Vega", "Campos", "Sandoval",
	"Olivares", "Orellana", "Zúñiga", "Ibáñez", "Gallardo", "Salazar",
	"Henríquez", "Cáceres", "Peña", "Aguilera", "Ortiz", "Yáñez", "Saavedra",
	"Pizarro", "Quiroz", "Acuña", "Mella", "Huenchumilla", "Catrileo",
	"Ñanculef", "Millapán", "O'Ryan", "Mac-Iver", "Echeverría", "Larraín",
}

// occupations are pairs of the masculine and feminine forms.
var occupations = [][2]string{
	{"Comerciante", "Comerciante"}, {"Profesor", "Profesora"}, {"Ingeniero civil", "Ingeniera civil"},
	{"Técnico en enfermería", "Técnica en enfermería"}, {"Contador auditor", "Contadora auditora"},
	{"Conductor", "Conductora"}, {"Dueño de casa", "Dueña de casa"}, {"Estudiante", "Estudiante"},
	{"Jubilado", "Jubilada"}, {"Vendedor", "Vendedora"}, {"Carpintero", "Carpintera"},
	{"Electricista", "Electricista"}, {"Médico cirujano", "Médica cirujana"},
	{"Administrativo", "Administrativa"}, {"Asesor del hogar", "Asesora del hogar"},
	{"Guardia de seguridad", "Guardia de seguridad"}, {"Operario de bodega", "Operaria de bodega"},
	{"Empresario", "Empresaria"}, {"Periodista", "Periodista"}, {"Psicólogo", "Psicóloga"},
	{"Cesante", "Cesante"}, {"Temporero agrícola", "Temporera agrícola"},
	{"Pescador artesanal", "Pescadora artesanal"}, {"Minero", "Minera"}, {"Enfermero", "Enfermera"},
	{"Cajero", "Cajera"}, {"Garzón", "Garzona"}, {"Peluquero", "Peluquera"},
}

// region is a Chilean region with some of its communes and a weight
// roughly proportional to its population.
type region struct {
	name     string
	weight   int
	communes []string
}

func (r region) w() int { return r.weight }

var regions = []region{
	{"Región Metropolitana de Santiago", 40, []string{
		"Santiago", "Providencia", "Las Condes", "Ñuñoa", "Maipú", "Puente Alto",
		"La Florida", "San Bernardo", "Peñalolén", "Estación Central", "Recoleta",
		"Quilicura", "La Reina", "Vitacura", "Lo Barnechea", "Independencia",
		"San Miguel", "Pudahuel", "Cerrillos", "Macul", "Conchalí", "Renca"}},
	{"Región de Valparaíso", 10, []string{
		"Valparaíso", "Viña del Mar", "Quilpué", "Villa Alemana", "San Antonio",
		"Los Andes", "Quillota", "Concón"}},
	{"Región del Biobío", 9, []string{
		"Concepción", "Talcahuano", "Chiguayante", "San Pedro de la Paz",
		"Los Ángeles", "Coronel", "Hualpén"}},
	{"Región del Maule", 6, []string{"Talca", "Curicó", "Linares", "Constitución"}},
	{"Región de La Araucanía", 5, []string{"Temuco", "Padre Las Casas", "Villarrica", "Pucón", "Angol"}},
	{"Región del Libertador General Bernardo O'Higgins", 5, []string{"Rancagua", "San Fernando", "Rengo", "Machalí"}},
	{"Región de Los Lagos", 5, []string{"Puerto Montt", "Osorno", "Castro", "Puerto Varas"}},
	{"Región de Antofagasta", 4, []string{"Antofagasta", "Calama", "Tocopilla", "Mejillones"}},
	{"Región de Coquimbo", 4, []string{"La Serena", "Coquimbo", "Ovalle", "Illapel"}},
	{"Región de Ñuble", 3, []string{"Chillán", "Chillán Viejo", "San Carlos"}},
	{"Región de Los Ríos", 2, []string{"Valdivia", "La Unión", "Panguipulli"}},
	{"Región de Tarapacá", 2, []string{"Iquique", "Alto Hospicio", "Pozo Almonte"}},
	{"Región de Atacama", 2, []string{"Copiapó", "Vallenar", "Caldera"}},
	{"Región de Arica y Parinacota", 1, []string{"Arica", "Putre"}},
	{"Región de Aysén del General Carlos Ibáñez del Campo", 1, []string{"Coyhaique", "Aysén"}},
	{"Región de Magallanes y de la Antártica Chilena", 1, []string{"Punta Arenas", "Natales", "Porvenir"}},
}

var streets = []string{
	"Av. Libertador Bernardo O'Higgins", "Av. Providencia", "Av. Vicuña Mackenna",
	"Los Carrera", "Av. Irarrázaval", "Gran Avenida José Miguel Carrera",
	"Pasaje Los Aromos", "Los Copihues", "Av. Pedro de Valdivia", "Av. Grecia",
	"Manuel Montt", "Av. Matta", "Av. Argentina", "Blanco Encalada", "Arturo Prat",
	"Colo Colo", "Caupolicán", "Lautaro", "Freire", "Av. Alemania", "Yungay",
	"Serrano", "Chacabuco", "San Martín", "Av. España", "Las Heras",
	"Pasaje Los Pinos", "Av. Ñuble", "Los Peumos", "Av. José Pedro Alessandri",
}

var emailDomains = []string{
	"gmail.com", "gmail.com", "gmail.com", "gmail.com", "hotmail.com",
	"hotmail.com", "outlook.com", "yahoo.es", "live.cl", "icloud.com", "vtr.net",
}

// foreignCountries are the clients' countries other than Chile, with the
// two letters their passports start with in the seed.
var foreignCountries = []struct{ name, prefix string }{
	{"Perú", "PE"}, {"Perú", "PE"}, {"Venezuela", "VE"}, {"Venezuela", "VE"},
	{"Colombia", "CO"}, {"Haití", "HT"}, {"Bolivia", "BO"}, {"Argentina", "AR"},
}

var benefitCenters = []string{
	"Santiago Centro", "Providencia", "Concepción", "Valparaíso", "Temuco", "Antofagasta",
}

// seedService is a legal service: its cost in Chilean pesos, as numeric
// text, and its benefit center (an index into benefitCenters plus one; 0
// for none).
var seedServices = []struct {
	name   string
	cost   string
	center int
}{
	{"Divorcio de mutuo acuerdo", "350000", 1},
	{"Divorcio unilateral", "550000", 2},
	{"Posesión efectiva", "180000", 1},
	{"Demanda de alimentos", "250000", 3},
	{"Aumento de pensión de alimentos", "220000", 4},
	{"Cuidado personal de menores", "400000", 5},
	{"Régimen de relación directa y regular", "300000", 6},
	{"Juicio laboral por despido injustificado", "450000", 1},
	{"Tutela de derechos fundamentales", "600000", 2},
	{"Defensa penal", "900000", 1},
	{"Querella criminal", "750000", 3},
	{"Cobranza judicial", "200000", 4},
	{"Juicio de arrendamiento", "280000", 2},
	{"Demanda de precario", "320000", 5},
	{"Prescripción de deudas", "190000", 6},
	{"Redacción de contrato de compraventa", "150000", 1},
	{"Constitución de sociedad", "250000", 2},
	{"Recurso de protección", "380000", 3},
	{"Liquidación voluntaria de persona deudora", "650000", 1},
	{"Gestión de certificados y copias autorizadas", "12500.50", 0},
}

// choice is a value drawn with a weight.
type choice struct {
	name   string
	weight int
}

func (c choice) w() int { return c.weight }

var contractStatuses = []choice{
	{"APROBADO", 85}, {"PENDIENTE", 6}, {"TERMINADO", 6}, {"ANULADO", 3},
}

var quotaChoices = []int{1, 1, 1, 2, 3, 3, 4, 6, 6, 6, 8, 10, 12, 12, 12, 18, 24}

var processRoles = []struct {
	name    string
	plaintf bool // the client is the one who sues or asks
}{
	{"Demandante", true}, {"Demandante", true}, {"Demandado", false},
	{"Requirente", true}, {"Requerido", false}, {"Querellante", true},
	{"Imputado", false}, {"Solicitante", true}, {"Recurrente", true},
	{"Ejecutante", true}, {"Ejecutado", false}, {"Denunciante", true},
}

var courts = []string{
	"1° Juzgado Civil de Santiago", "14° Juzgado Civil de Santiago",
	"2° Juzgado de Letras del Trabajo de Santiago", "Juzgado de Familia de Pudahuel",
	"4° Juzgado de Familia de Santiago", "Juzgado de Garantía de Temuco",
	"Juzgado de Letras de Concepción", "Corte de Apelaciones de Valparaíso",
	"7° Juzgado de Garantía de Santiago", "Juzgado de Familia de Antofagasta",
}

var taskNames = []string{
	"Redacción de demanda", "Presentación de demanda", "Notificación personal",
	"Audiencia preparatoria", "Audiencia de juicio", "Reunión con cliente",
	"Revisión de expediente", "Solicitud de certificado", "Inscripción en Conservador",
	"Escrito de téngase presente", "Contestación de demanda", "Mediación familiar",
	"Audiencia de conciliación", "Recopilación de antecedentes", "Pago de arancel",
	"Alegato en Corte", "Presentación de recurso", "Liquidación de crédito",
	"Embargo de bienes", "Cierre del caso",
}

var documents = []string{
	"certificado de nacimiento", "liquidaciones de sueldo", "copia de la cédula de identidad",
	"certificado de matrimonio", "contrato de trabajo", "finiquito", "boletas de gastos",
	"certificado de deuda", "escritura de la propiedad", "poder simple firmado",
}

// taskDetails are the templates of a task's detail. %[1]s is a document,
// %[2]s a court, %[3]s a date, %[4]s a time. Some hold commas, quotes and
// line breaks, as people write them.
var taskDetails = []string{
	"Se coordina con el cliente la entrega de antecedentes, incluyendo %[1]s.",
	"Cliente indica que \"no ha recibido notificación\"; se revisa la Oficina Judicial Virtual.",
	"Audiencia fijada para el %[3]s a las %[4]s hrs. en el %[2]s.",
	"Pendiente:\n- %[1]s\n- comprobante de domicilio",
	"Se presenta escrito y el tribunal provee \"como se pide\".",
	"Se llama al cliente, no contesta. Se deja mensaje, se reintenta mañana.",
	"Se solicita copia de la resolución al tribunal (%[2]s), pendiente respuesta.",
	"Tribunal acoge la solicitud; se notifica por cédula a la contraparte.",
	"Se revisa %[1]s entregado por el cliente.\nFalta firma ante notario.",
	"Se envía correo al cliente con el resumen de la audiencia del %[3]s.",
	"Contraparte ofrece acuerdo de pago en 6 cuotas, \"sin intereses\"; cliente lo evaluará.",
	"Receptor judicial informa búsqueda negativa; se pide notificación por el artículo 44.",
}

// oddDetails start with a character a spreadsheet reads as a formula, so
// that exports must neutralize them. A few tasks get one.
var oddDetails = []string{
	`=HYPERLINK("http://ejemplo.cl/expediente","ver expediente")`,
	"-- revisar con el abogado jefe",
	"+56 9 8765 4321 llamar antes de las 18:00",
	"@cliente confirmar asistencia a la audiencia",
	"=1+1",
	"-5% de descuento aprobado por gerencia",
}

var taskStatuses = []choice{
	{"Pendiente", 40}, {"En Curso", 33}, {"Cancelado", 22}, {"Terminada", 5},
}

type maritalStatus struct {
	male, female string
	weight       int
}

func (m maritalStatus) w() int { return m.weight }

var maritalStatuses = []maritalStatus{
	{"Soltero", "Soltera", 45}, {"Casado", "Casada", 35}, {"Divorciado", "Divorciada", 10},
	{"Viudo", "Viuda", 4}, {"Conviviente civil", "Conviviente civil", 6},
}
