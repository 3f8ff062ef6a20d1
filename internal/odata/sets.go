package odata

import "github.com/informe/informe/internal/dataset"

// Sets are the entity sets of the datasets informe serves
// ([dataset.All]), in its order: the service document's and $metadata's.
var Sets = func() []*EntitySet {
	sets := make([]*EntitySet, len(dataset.All))
	for i, d := range dataset.All {
		set, err := NewEntitySet(d.EntitySet())
		if err != nil {
			panic(err) // the declarations are constants: a test covers them
		}
		declared.Store(set.Name(), set) // the target of navigations
		sets[i] = set
	}
	return sets
}()

// Of returns the entity set of d, one of [dataset.All].
func Of(d *dataset.Dataset) *EntitySet {
	for i, a := range dataset.All {
		if a == d {
			return Sets[i]
		}
	}
	panic("odata: " + d.Name + " is not in dataset.All")
}
