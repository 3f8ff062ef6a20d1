package odata_test

import (
	"testing"

	"github.com/informe/informe/internal/dataset"
	"github.com/informe/informe/internal/odata"
)

// The definitions the HTTP layer is expected to use, over the real column
// lists.
var (
	reportDef = dataset.GeneralReport.EntitySet()
	usersDef  = dataset.Users.EntitySet()
)

// tokenBody is shaped like the body of an informe token: 43 base64url
// characters of both cases. Messages and next links must never repeat it,
// with or without the prefix informe_.
const tokenBody = "Zx3kQ9-vB7_mN2pL8rT4wY6sD1fG5hJ0aC3eU7iO9qW"

func mustSet(tb testing.TB, def dataset.EntitySet) *odata.EntitySet {
	tb.Helper()
	s, err := odata.NewEntitySet(def)
	if err != nil {
		tb.Fatal(err)
	}
	return s
}

func reportSet(tb testing.TB) *odata.EntitySet { return mustSet(tb, reportDef) }
func usersSet(tb testing.TB) *odata.EntitySet  { return mustSet(tb, usersDef) }

// reportRow returns a report row with the given values ("" elsewhere), then
// the key parts.
func reportRow(vals map[string]string, keyParts ...string) [][]byte {
	row := make([][]byte, 0, len(dataset.GeneralReport.Columns)+3)
	for _, c := range dataset.GeneralReport.Columns {
		row = append(row, []byte(vals[c.Name]))
	}
	for _, k := range keyParts {
		row = append(row, []byte(k))
	}
	return row
}

// userRow returns a users row: vals by column, nil for columns not in vals.
func userRow(vals map[string]string) [][]byte {
	row := make([][]byte, len(dataset.Users.Columns))
	for i, c := range dataset.Users.Columns {
		if v, ok := vals[c.Name]; ok {
			row[i] = []byte(v)
		}
	}
	return row
}

func kindOf(cols []dataset.Column, name string) (dataset.Kind, bool) {
	for _, c := range cols {
		if c.Name == name {
			return c.Kind, true
		}
	}
	return 0, false
}
