// Package source serves the datasets of dataset.All, each with its OData
// entity set, and compiles the parameters of a request for its rows (the
// spec's own, and OData's $filter, $orderby and $select) into the one
// [dataset.Query]: the HTTP paths and the export command call it alike, so
// that a filter means the same on every door and none is ignored.
package source

import (
	"fmt"
	"net/url"
	"slices"
	"sort"
	"strings"

	"github.com/informe/informe/internal/dataset"
	"github.com/informe/informe/internal/failure"
	"github.com/informe/informe/internal/odata"
	"github.com/informe/informe/internal/param"
	"github.com/informe/informe/internal/secret"
	"github.com/informe/informe/report"
	"github.com/informe/informe/users"
)

// Source is a dataset as informe serves it: its declaration and its
// OData entity set.
type Source struct {
	*dataset.Dataset
	// Set is its OData entity set, declared from the same columns: the
	// names and types its $filter, $orderby and $select speak of.
	Set   *odata.EntitySet
	parse func(url.Values) (dataset.Query, error)
	// its row condition in rows (nil for none), parsed over the whole
	// dataset's set, and its most rows per response in maxRows.
	rules      bool
	rows       *odata.Query
	maxRows    int64
	restricted bool
}

// Report returns the general report, its plain queries counted as
// counting says.
func Report(counting report.Counting) *Source {
	return &Source{
		Dataset: report.Dataset(counting), Set: odata.Of(dataset.GeneralReport),
		parse: func(v url.Values) (dataset.Query, error) {
			q, _, err := report.ParseQuery(v)
			return q, err
		},
	}
}

// All returns the sources of [dataset.All], in its order, rep being the
// general report's ([Report]): the users' parameters are read by package
// users, the entities' (the spec's columns) here.
func All(rep *Source) []*Source {
	out := make([]*Source, len(dataset.All))
	for i, d := range dataset.All {
		switch d {
		case dataset.GeneralReport:
			out[i] = rep
		case dataset.Users:
			out[i] = &Source{Dataset: d, Set: odata.Of(d), parse: users.ParseQuery}
		default:
			out[i] = &Source{Dataset: d, Set: odata.Of(d), parse: func(v url.Values) (dataset.Query, error) {
				cols, err := param.Columns(v, d.Columns)
				return dataset.Query{Columns: cols}, err
			}}
		}
	}
	return out
}

// Feed returns the query of one response of the OData feed q asks for:
// at most limit rows, each with its position for the next link, then, for
// each item of $expand, its related rows, counted when count says so.
func (s *Source) Feed(q *odata.Query, limit int64, count bool) dataset.Query {
	dq := dataset.Query{Limit: limit, Count: count, Position: true, Skip: q.Skip}
	if s.rows != nil {
		s.rows.Compile(&dq)
	}
	q.Compile(&dq)
	for _, x := range q.Expansions() {
		dq.Expand = append(dq.Expand, dataset.Expansion{Target: bySet(x.Target), Columns: x.Columns,
			Local: x.Local, Remote: x.Remote, Order: x.Order})
	}
	return dq
}

// bySet returns the dataset whose entity set is set.
func bySet(set *odata.EntitySet) *dataset.Dataset {
	for i, s := range odata.Sets {
		if s == set {
			return dataset.All[i]
		}
	}
	panic("source: no dataset for entity set " + set.Name()) // navigations lead to declared sets
}

// Named returns the source of [dataset.All] called name (the report's
// plain queries counted as counting says), or an error listing the names
// there are.
func Named(name string, counting report.Counting) (*Source, error) {
	var names []string
	for _, s := range All(Report(counting)) {
		if s.Name == name {
			return s, nil
		}
		names = append(names, s.Name)
	}
	return nil, fmt.Errorf("the dataset must be one of %s, got %q", strings.Join(names, ", "), name)
}

// Page compiles values into the query of one page of the general
// report, s, and the page it asks for ([report.ParseQuery]); the columns
// are those s lets the token read ([Restrict]).
func (s *Source) Page(values url.Values) (dataset.Query, report.Page, error) {
	q, p, err := report.ParseQuery(values)
	if err != nil || !s.restricted {
		return q, p, err
	}
	rq, err := s.parse(values)
	q.Columns = rq.Columns
	return q, p, err
}

// AnyPath are the parameters every path takes besides its own: the token,
// for clients that cannot send headers, and "_", the cache-buster that
// jQuery's ajax adds with cache: false, whose value means nothing.
var AnyPath = []string{"access_token", "_"}

// Export compiles values into the query of a whole export of s: every
// row matching the spec's filters and $filter, in the order of $orderby,
// counted. other are the caller's own parameters (a format), which it
// reads itself; any parameter that is none of these is a 400 naming it.
func (s *Source) Export(values url.Values, other ...string) (dataset.Query, error) {
	accepted := slices.Concat(s.Params, odata.ReadOptions, other)
	if err := Known(values, accepted); err != nil {
		return dataset.Query{}, err
	}
	q, err := s.parse(values)
	if err != nil {
		return q, err
	}
	if err := s.Options(values, &q); err != nil {
		return q, err
	}
	q.Skip, q.Limit, q.Count = 0, -1, true
	return q, nil
}

// Options adds the OData options of values ($filter, $orderby, $select)
// to q, as [odata.ParseRead] reads them for s, and sets q.Columns to all
// of s's when nothing chose them. $select and the spec's columns choose
// the same thing: both is a 400.
func (s *Source) Options(values url.Values, q *dataset.Query) error {
	oq, err := odata.ParseRead(values, s.Set)
	if err != nil {
		return err
	}
	if oq.Selected() {
		if _, ok := values["columns"]; ok {
			return &failure.Error{Code: failure.Invalid, Target: "$select", Reason: "select_and_columns",
				Message: "give columns or $select, not both: they choose the same thing"}
		}
		if cols := oq.Columns(); cols != nil { // else "*"
			q.Columns = cols
		}
	}
	if q.Columns == nil {
		q.Columns = s.Columns
	}
	if s.rows != nil {
		s.rows.Compile(q)
	}
	oq.Compile(q)
	return nil
}

// Known fails with a 400 naming the first parameter of values, in sorted
// order, that is none of accepted nor of [AnyPath], and listing those
// accepted: a parameter informe ignored would give a plausible wrong
// answer. $-options are [odata.ParseRead]'s to check.
func Known(values url.Values, accepted []string) error {
	names := make([]string, 0, len(values))
	for name := range values {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if strings.HasPrefix(name, "$") || slices.Contains(accepted, name) || slices.Contains(AnyPath, name) {
			continue
		}
		takes := "this path accepts " + strings.Join(accepted, ", ")
		if len(accepted) == 0 {
			takes = "this path takes OData's system query options ($select, $filter, ...) and access_token only"
		}
		return &failure.Error{Code: failure.Invalid, Target: secret.Redact(name), Reason: "unknown_parameter",
			Message: "unknown query parameter " + secret.Quote(name) + "; " + takes}
	}
	return nil
}
