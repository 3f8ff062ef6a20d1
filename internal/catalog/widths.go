package catalog

import (
	"strings"

	"github.com/informe/informe/internal/dataset"
)

// kindWidths are the typical bytes of a value in CSV by kind: ids of a few
// digits, dates, and timestamps as the API writes them
// ("2024-03-01 10:00:00" and "2024-03-01 10:00:00.123456+00").
var kindWidths = map[dataset.Kind]int{
	dataset.Integer: 5, dataset.Decimal: 7, dataset.Date: 10, dataset.Timestamp: 19, dataset.Timestamptz: 29, dataset.Text: 12,
}

// textWidths are the typical bytes of text columns, by the last word of
// their name with the role and "_contract" taken off: the lengths of
// the demo data's values (scripts/demo), rounded. They need not be exact:
// the page tells an estimate of a file's size, to warn before a big one.
var textWidths = map[string]int{
	"rut": 12, "passport": 9, "name": 8, "email": 24, "phone": 12, "country": 5,
	"status": 9, "gender": 9, "region": 24, "commune": 10, "address": 28, "occupation": 12,
	"service": 30, "role": 12, "process": 40, "task": 25, "title": 30, "detail": 90,
	"code": 8, "executor": 20, "by": 20, "contract": 10, "username": 10,
}

// width returns the typical bytes of col's values in CSV (see
// [Column].Width).
func width(col dataset.Column) int {
	if col.Kind != dataset.Text {
		return kindWidths[col.Kind]
	}
	name := strings.TrimSuffix(col.Name, "_contract")
	for _, role := range []string{"_client", "_payer", "_service"} {
		name = strings.TrimSuffix(name, role)
	}
	word := name[strings.LastIndexByte(name, '_')+1:]
	if w, ok := textWidths[word]; ok {
		return w
	}
	return kindWidths[dataset.Text]
}
