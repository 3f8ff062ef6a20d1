package dataset

import "slices"

// Services are the services at their own grain: one row per service,
// with its cost, its benefit center and its number of contracts.
// Read under the report:read scope from the views service_list (text)
// and service_list_typed (typed values) of 00010_grains.sql, in the
// order of its id; the OData set relates it to the other entities.
var Services = declare(6, &Dataset{
	Name: "services", Heading: "Services", Scope: ReportRead,
	File:      Phrase{"servicios", "services"},
	Title:     Phrase{"Una fila por servicio", "One row per service"},
	Row:       Phrase{"Una fila por servicio, con su costo, su centro de beneficio y su número de contratos.", "One row per service, with its cost, its benefit centre and its number of contracts."},
	One:       "service",
	About:     "One row per service, with its cost, its benefit center and its number of contracts.",
	Text:      "service_list",
	KeyColumn: "service_id",
	OData: EntitySet{
		Name: "Services", TypeName: "Service",
		Navigations: []Navigation{
			{Name: "Contracts", Target: "Contracts", Many: true, Partner: "Service", Property: "service_id", Column: "key_service_id", Words: Phrase{"Contratos", "Contracts"}},
		},
	},
	Columns: slices.Concat(
		[]Column{
			{Name: "service_id", Kind: Integer, Group: keysAndCounts,
				Label: Phrase{"Número de servicio", "Service number"},
				About: Phrase{"Identificador del servicio", "The service's identifier"}},
		},
		nullable(reportColumns("service")),
		reportColumns("costo_servicio"),
		nullable(reportColumns("benefit_center_id_service", "benefit_center_service")),
		[]Column{
			{Name: "contracts", Kind: Integer, Group: keysAndCounts,
				Label: Phrase{"Contratos", "Contracts"},
				About: Phrase{"Número de contratos", "Number of contracts"}},
		},
	),
})
