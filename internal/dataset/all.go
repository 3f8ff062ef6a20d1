package dataset

import (
	"errors"
	"slices"

	"github.com/informe/informe/internal/failure"
	"github.com/informe/informe/internal/rut"
)

// All are the datasets informe serves, in the order of the model: the
// general report, the users, then the entities at their own grain from
// the many to the one (contracts, processes, tasks, clients, services).
// Each file of a dataset adds its declaration with [declare]; the routes,
// the OData model, the OpenAPI document, the catalog, the docs and the
// export command all iterate this list.
var All []*Dataset

// declare adds d to All at its position and returns it.
func declare(position int, d *Dataset) *Dataset {
	d.position = position
	All = append(All, d)
	slices.SortStableFunc(All, func(a, b *Dataset) int { return a.position - b.position })
	return d
}

// Named returns the dataset called name, or nil.
func Named(name string) *Dataset {
	for _, d := range All {
		if d.Name == name {
			return d
		}
	}
	return nil
}

// checkRUT checks a RUT compared with a client_rut in $filter: one that
// does not parse is refused with the reasons of the spec's rut parameter.
func checkRUT(s string) error {
	_, err := rut.Parse(s)
	if err == nil {
		return nil
	}
	reason := "rut_malformed"
	if errors.Is(err, rut.ErrCheckDigit) {
		reason = "rut_check_digit"
	}
	return &failure.Error{Code: failure.Invalid, Reason: reason, Message: err.Error(), Err: err}
}
