package openapi

import (
	"fmt"

	"github.com/informe/informe/internal/dataset"
)

// kindKeyword is the schema keyword (a specification extension) that
// carries a value's column kind, [dataset.Kind.String]: "text",
// "integer", "decimal", "date", "timestamp" or "timestamptz". Clients can
// read it to type a value that travels as text; the tests read it to
// check the document against the column lists.
const kindKeyword = "x-informe-kind"

// maskKeyword is the schema keyword (a specification extension) that
// marks a column the reader sees masked, with its mask
// ([dataset.Mask.String]: "rut", "email", "phone", "name", "withheld",
// "other"): its values are written masked, and $filter and $orderby do
// not take it. Only a document for a token with rules has it.
const maskKeyword = "x-masked"

// kindText says how a value of each kind is written, for descriptions.
var kindText = map[dataset.Kind]string{
	dataset.Text:        "Text.",
	dataset.Integer:     "An integer written in base 10, e.g. `42`; a number cell in XLSX (text past 15 digits, which Excel would round).",
	dataset.Decimal:     "A decimal number with a dot, e.g. `350000` or `1500.5`; a number cell in XLSX.",
	dataset.Date:        "A date, `YYYY-MM-DD`; a date cell in XLSX.",
	dataset.Timestamp:   "A date and time, `YYYY-MM-DD HH:MM:SS`; a date-time cell in XLSX.",
	dataset.Timestamptz: "A UTC date and time with microseconds, `YYYY-MM-DD HH:MM:SS.ffffff+00`; a date-time cell in XLSX.",
}

// kindPattern is the regular expression a non-empty value of each kind
// matches (none for text). Character classes are spelled out, so that
// every regular expression dialect (ECMA-262, RE2) reads them alike.
var kindPattern = map[dataset.Kind]string{
	dataset.Integer:     `-?[0-9]+`,
	dataset.Decimal:     `-?[0-9]+(\.[0-9]+)?`,
	dataset.Date:        datePattern,
	dataset.Timestamp:   datePattern + ` ` + timePattern,
	dataset.Timestamptz: datePattern + ` ` + timePattern + `\.[0-9]{6}\+00`,
}

const (
	datePattern = `[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])`
	timePattern = `([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9]`
)

// valueSchema returns the schema of one value of column c as the JSON,
// NDJSON and CSV formats write it: always a string. emptyAllowed says a
// missing value is "" (the general report); otherwise only Text values
// may be empty and a missing value of a Nullable column is null.
func valueSchema(c dataset.Column, emptyAllowed bool) object {
	s := obj("type", "string")
	if c.Nullable {
		s = obj("type", []string{"string", "null"})
	}
	desc := kindText[c.Kind]
	switch {
	case emptyAllowed:
		desc += " `\"\"` when absent."
	case c.Nullable:
		desc += " `null` when absent."
	}
	s = s.with("description", desc)
	if p, ok := kindPattern[c.Kind]; ok {
		if emptyAllowed {
			s = s.with("pattern", "^("+p+")?$")
		} else {
			s = s.with("pattern", "^"+p+"$")
		}
	}
	s = s.with(kindKeyword, c.Kind.String())
	if c.Personal != dataset.NotPersonal {
		// Whose personal data it holds: client, payer or user.
		s = s.with("x-personal", c.Personal.String())
	}
	if c.Mask != dataset.Unmasked {
		s = s.with(maskKeyword, c.Mask.String())
	}
	return s
}

// rowSchema returns the schema of a row of cols: an object whose
// properties are the columns in order. No property is required, because
// the columns parameter chooses which keys a row carries; without it every
// row carries all of them, in this order.
func rowSchema(title, desc string, cols []dataset.Column, emptyAllowed bool) object {
	props := make(object, 0, len(cols))
	for _, c := range cols {
		props = append(props, member{c.Name, valueSchema(c, emptyAllowed)})
	}
	return obj(
		"title", title,
		"description", desc+fmt.Sprintf(" Without `columns` a row has all %d properties, in the order listed here; with `columns` it has exactly the fields chosen, in the order chosen.", len(cols)),
		"type", "object",
		"properties", props,
		"additionalProperties", false,
		"minProperties", 1,
	)
}

// columnsParameter returns the columns query parameter of a listing of
// cols: a comma-separated list of distinct field names.
func columnsParameter(cols []dataset.Column, docs string) object {
	return obj(
		"name", "columns",
		"in", "query",
		"description", "The fields to return, comma-separated, each at most once, in the order wanted (e.g. `"+cols[0].Name+","+cols[len(cols)-1].Name+"`); every format then carries only these, in this order. Without it, every field. An unknown, empty or repeated name is a 400 naming it. The fields are listed in "+docs+".",
		"style", "form",
		"explode", false,
		"schema", obj(
			"type", "array",
			"minItems", 1,
			"uniqueItems", true,
			"items", obj("type", "string", "enum", dataset.Names(cols)),
		),
	)
}
