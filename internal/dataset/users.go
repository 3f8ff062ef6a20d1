package dataset

// Users is the spec's listing of users (GET /users): one row per user,
// read from the user_list view (text) and user_list_typed (typed values),
// in id order. Its columns are in the order of the API spec (section 2.1);
// last_entry and updated_at are NULL (JSON null) when absent.
var Users = declare(1, &Dataset{
	Name: "users", Heading: "Users", Spec: true, Scope: UsersRead,
	File:  Phrase{"usuarios", "users"},
	Title: Phrase{"Usuarios", "Users"},
	Row:   Phrase{"Una fila por usuario.", "One row per user."},
	One:   "user",
	Text:  "user_list", Typed: "user_list_typed", Keys: []string{"key_id"}, KeyColumn: "id",
	ExportPath: "/users", Params: []string{"columns"}, Small: true,
	OData: EntitySet{
		Name: "Users", TypeName: "User",
		Key: "id", KeyColumns: []string{"key_id"}, OrderBy: []string{"id"},
	},
	Columns: []Column{
		{Name: "id", Kind: Integer, Group: userGroup,
			Label: Phrase{"N° de usuario", "User id"},
			About: Phrase{"Número del usuario", "User id"}},
		{Name: "name", Kind: Text, Personal: User, Group: userGroup,
			Label: Phrase{"Nombre", "Name"},
			About: Phrase{"Nombre completo", "Full name"}},
		{Name: "email", Kind: Text, Personal: User, Group: userGroup,
			Label: Phrase{"Correo electrónico", "E-mail"},
			About: Phrase{"Correo electrónico", "E-mail address"}},
		{Name: "username", Kind: Text, Personal: User, Group: userGroup,
			Label: Phrase{"Usuario", "Login name"},
			About: Phrase{"Nombre de usuario", "Login name"}},
		{Name: "rut", Kind: Text, Personal: User, Group: userGroup,
			Label: Phrase{"RUT", "RUT"},
			About: Phrase{"RUT", "RUT"}},
		{Name: "phone", Kind: Text, Personal: User, Group: userGroup,
			Label: Phrase{"Teléfono", "Phone"},
			About: Phrase{"Teléfono", "Phone number"}},
		{Name: "last_entry", Kind: Timestamp, Nullable: true, Group: userGroup,
			Label: Phrase{"Último ingreso", "Last entry"},
			About: Phrase{"Último ingreso (vacío si nunca ha entrado)", "Last entry (empty if never)"}},
		{Name: "status", Kind: Text, Group: userGroup,
			Label: Phrase{"Estado", "Status"},
			About: Phrase{"Estado (una letra)", "Status (one letter)"}},
		{Name: "created_at", Kind: Timestamp, Group: userGroup,
			Label: Phrase{"Creado", "Created"},
			About: Phrase{"Fecha y hora de creación", "Date and time created"}},
		{Name: "updated_at", Kind: Timestamp, Nullable: true, Group: userGroup,
			Label: Phrase{"Modificado", "Updated"},
			About: Phrase{"Fecha y hora de la última modificación", "Date and time last updated"}},
	},
})

var userGroup = &Group{Name: "user", Title: Phrase{"Usuario", "User"}, Order: 1}
