package dataset

import "slices"

// Clients are the clients at their own grain: one row per client, its
// current record, with its number of contracts.
// Read under the report:read scope from the views client_list (text)
// and client_list_typed (typed values) of 00010_grains.sql, in the
// order of its id; the OData set relates it to the other entities.
var Clients = declare(5, &Dataset{
	Name: "clients", Heading: "Clients", Scope: ReportRead,
	File:      Phrase{"clientes", "clients"},
	Title:     Phrase{"Una fila por cliente", "One row per client"},
	Row:       Phrase{"Una fila por cliente, con su número de contratos.", "One row per client, with their number of contracts."},
	One:       "client",
	About:     "One row per client, its current record, with its number of contracts.",
	Text:      "client_list",
	KeyColumn: "client_id",
	OData: EntitySet{
		Name: "Clients", TypeName: "Client",
		Normalized: map[string][2]string{"client_rut": {"key_client_rut", "rut_key"}},
		Literals:   map[string]func(string) error{"client_rut": checkRUT},
		Navigations: []Navigation{
			{Name: "Contracts", Target: "Contracts", Many: true, Partner: "Client", Property: "client_id", Column: "key_client_id", Words: Phrase{"Contratos", "Contracts"}},
		},
	},
	Columns: slices.Concat(
		reportColumns("client_id"),
		nullable(reportColumns("client_rut", "client_passport", "first_name_client", "second_name_client",
			"last_name_client", "second_last_name_client", "client_email", "client_phone",
			"client_occupation", "client_birth_date", "client_country", "client_marital_status",
			"client_gender", "client_region", "client_commune", "client_address")),
		[]Column{
			{Name: "client_creation_date", Kind: Timestamp, Group: keysAndCounts,
				Label: Phrase{"Alta del cliente", "Client since"},
				About: Phrase{"Cuándo se registró el cliente", "When the client was registered"}},
			{Name: "contracts", Kind: Integer, Group: keysAndCounts,
				Label: Phrase{"Contratos", "Contracts"},
				About: Phrase{"Número de contratos", "Number of contracts"}},
		},
	),
})
