package dataset

// Services are the services at their own grain: one row per service,
// with its cost, its benefit center and its number of contracts.
// Read under the report:read scope from the views service_list (text)
// and service_list_typed (typed values) of 00010_grains.sql, in the
// order of its id; the OData set relates it to the other entities.
var Services = declare(6, &Dataset{
	Name: "services", Heading: "Services", Scope: ReportRead,
	File:  Phrase{"servicios", "services"},
	Title: Phrase{"Una fila por servicio", "One row per service"},
	Row:   Phrase{"Una fila por servicio, con su costo, su centro de beneficio y su número de contratos.", "One row per service, with its cost, its benefit centre and its number of contracts."},
	One:   "service",
	About: "One row per service, with its cost, its benefit center and its number of contracts.",
	Text:  "service_list", Typed: "service_list_typed",
	Keys: []string{"key_service_id"}, KeyColumn: "service_id",
	ExportPath: "/api/services/export", Params: []string{"columns"},
	OData: EntitySet{
		Name: "Services", TypeName: "Service",
		Key: "service_id", KeyColumns: []string{"key_service_id"}, OrderBy: []string{"service_id"},
		Navigations: []Navigation{
			{Name: "Contracts", Target: "Contracts", Many: true, Partner: "Service", Property: "service_id", Column: "key_service_id", Words: Phrase{"Contratos", "Contracts"}},
		},
	},
	Columns: []Column{
		{Name: "service_id", Kind: Integer, Group: keysAndCounts,
			Label: Phrase{"Número de servicio", "Service number"},
			About: Phrase{"Identificador del servicio", "The service's identifier"}},
		{Name: "service", Kind: Text, Nullable: true, Group: serviceGroup,
			Label: Phrase{"Servicio", "Service"},
			About: Phrase{"Nombre del servicio", "Service name"}},
		{Name: "costo_servicio", Kind: Decimal, Group: serviceGroup,
			Label: Phrase{"Costo del servicio", "Service cost"},
			About: Phrase{"Costo del servicio", "Service cost"}},
		{Name: "benefit_center_id_service", Kind: Integer, Nullable: true, Group: serviceGroup,
			Label: Phrase{"N° de centro de beneficio", "Benefit center id"},
			About: Phrase{"Número del centro de beneficio", "Benefit center id"}},
		{Name: "benefit_center_service", Kind: Text, Nullable: true, Group: serviceGroup,
			Label: Phrase{"Centro de beneficio", "Benefit center"},
			About: Phrase{"Nombre del centro de beneficio", "Benefit center name"}},
		{Name: "contracts", Kind: Integer, Group: keysAndCounts,
			Label: Phrase{"Contratos", "Contracts"},
			About: Phrase{"Número de contratos", "Number of contracts"}},
	},
})
