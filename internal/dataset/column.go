package dataset

import (
	"errors"
	"fmt"
	"slices"

	"github.com/informe/informe/internal/secret"
)

// Kind says what a column's text holds, so that typed formats (XLSX,
// Parquet, Arrow) can turn it back into a number or a date, and text
// formats can tell data from prose.
type Kind uint8

// The kinds of column. Values of every kind travel as text in the API's
// formats; see [Column].
const (
	Text        Kind = iota // free text
	Integer                 // base-10 integer, e.g. "42"
	Decimal                 // decimal number, e.g. "150000" or "1500.5"
	Date                    // "YYYY-MM-DD"
	Timestamp               // "YYYY-MM-DD HH:MM:SS"
	Timestamptz             // "YYYY-MM-DD HH:MM:SS.ffffff+00"
)

var kindNames = [...]string{"text", "integer", "decimal", "date", "timestamp", "timestamptz"}

// String returns the kind's lower-case name, as used in the docs.
func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "unknown"
}

// Subject is whose personal data a column holds, in the sense of Chile's
// personal data law (Ley 21.719): data about an identified or
// identifiable person. Ids are keys of the system, not of a person's
// record elsewhere: they are not marked.
type Subject uint8

// The subjects of informe's data. A column that names or describes a
// person (a RUT, a name, an e-mail, a phone, an address, a birth date,
// an occupation, where they live) is marked with whom it describes.
const (
	NotPersonal Subject = iota // holds no personal data
	Client                     // the client's, current or as recorded on a contract; a process's caption names its parties
	Payer                      // the payer's, as recorded on a contract
	User                       // a user of the system: its listing, who attended a contract, who executes a task
)

var subjectNames = [...]string{"", "client", "payer", "user"}

// String returns the subject's name ("client", "payer", "user"), or ""
// for [NotPersonal].
func (s Subject) String() string {
	if int(s) < len(subjectNames) {
		return subjectNames[s]
	}
	return "unknown"
}

// Column describes one field of a row.
type Column struct {
	Name string // field name, exactly as in the API spec
	Kind Kind
	// Personal says whose personal data the column holds, if any.
	Personal Subject
	// Mask, for a token that sees the column masked ([Rules.Mask]), is
	// how its values are written; never set in a declaration.
	Mask Mask
	// Nullable columns are rendered as JSON null when the value is nil;
	// other columns never carry nil.
	Nullable bool
	// Group is the run of related columns it belongs to, for people.
	Group *Group
	// Label is a short name, unique in its dataset in each language (the
	// web page's name of the column, and a file's header with
	// header=labels); About a one-line description.
	Label, About Phrase
}

// Phrase is a phrase in Spanish and English.
type Phrase struct {
	ES string `json:"es"`
	EN string `json:"en"`
}

// Group is a titled group of related columns: the contract's, the
// client's, ... Order places it among the groups of a dataset, lowest
// first.
type Group struct {
	Name  string
	Title Phrase
	Order int
}

// Names returns the names of cols in order.
func Names(cols []Column) []string {
	names := make([]string, len(cols))
	for i, c := range cols {
		names[i] = c.Name
	}
	return names
}

// Select returns the columns of all named by names, in the order of names.
// An unknown, empty or repeated name is an error that names it and, for an
// unknown one, says where the field names are listed.
func Select(all []Column, names []string) ([]Column, error) {
	out := make([]Column, 0, len(names))
	seen := make(map[string]bool, len(names))
	for _, n := range names {
		if seen[n] {
			return nil, fmt.Errorf("%s is given more than once", secret.Quote(n))
		}
		seen[n] = true
		i := slices.IndexFunc(all, func(c Column) bool { return c.Name == n })
		if i < 0 {
			if n == "" {
				return nil, errors.New("an empty field name is not allowed")
			}
			return nil, fmt.Errorf("unknown field %s (the field names are the API's, as in docs/columns.md)", secret.Quote(n))
		}
		out = append(out, all[i])
	}
	return out, nil
}

// In returns p in lang, "es" or "en" (Spanish for any other).
func (p Phrase) In(lang string) string {
	if lang == "en" {
		return p.EN
	}
	return p.ES
}

// Labelled returns cols, columns of d, named by their labels in lang
// ("es" or "en"): the header of a file whose columns are headed by their
// readable names (header=labels). A column d does not declare keeps its
// name.
func (d *Dataset) Labelled(cols []Column, lang string) []Column {
	labels := make(map[string]string, len(d.Columns))
	for _, c := range d.Columns {
		labels[c.Name] = c.Label.In(lang)
	}
	named := make([]Column, len(cols))
	for i, c := range cols {
		named[i] = c
		if l := labels[c.Name]; l != "" {
			named[i].Name = l
		}
	}
	return named
}
