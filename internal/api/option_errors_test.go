package api_test

import (
	"errors"
	"net/url"
	"testing"

	"github.com/informe/informe/internal/api/apitest"
	"github.com/informe/informe/internal/failure"
	"github.com/informe/informe/internal/fileexport"
	"github.com/informe/informe/internal/pgserver/pgtest"
	"github.com/informe/informe/internal/source"
	"github.com/informe/informe/report"
)

// TestOptionErrorsOnEveryDoor checks that a malformed $filter, $orderby,
// $select or $expand is a 400, and valid OData that informe does not
// implement a 501, with the same reason, target and position on every
// door: the OData feed (in OData's shape, the reason and position in
// innererror), the JSON page, the CSV export and informe export.
func TestOptionErrorsOnEveryDoor(t *testing.T) {
	t.Parallel()
	ts := newServer(t, pgtest.New(t))
	reportDoors := []struct {
		name string
		get  func(t *testing.T, query string) optionError
	}{
		{"feed", func(t *testing.T, query string) optionError {
			return optionError(apitest.ODataOptionError(t, ts.Server, "/odata/GeneralReport?"+query))
		}},
		{"json page", func(t *testing.T, query string) optionError {
			return optionError(apitest.JSONOptionError(t, ts.Server, "/api/general-report?"+query))
		}},
		{"csv export", func(t *testing.T, query string) optionError {
			return optionError(apitest.JSONOptionError(t, ts.Server, "/api/general-report/export?format=csv&"+query))
		}},
		{"informe export", func(t *testing.T, query string) optionError {
			return commandOptionError(t, source.Report(report.Maintained), query)
		}},
	}
	for _, tt := range []struct {
		name, query string // the query string, as a URL carries it
		want        optionError
	}{
		{"OrderByNumbers", "$orderby=1,2", optionError{400, "not_property", "$orderby", 1}},
		{"OrderByMinusZero", "$orderby=-0", optionError{400, "not_property", "$orderby", 1}},
		{"OrderByEmpty", "$orderby=", optionError{400, "empty", "$orderby", 0}},
		{"OrderByComma", "$orderby=,", optionError{400, "syntax", "$orderby", 1}},
		{"OrderBySecondItem", "$orderby=task%20desc,%2B", optionError{400, "syntax", "$orderby", 11}},
		{"OrderByDirection", "$orderby=task%20sideways", optionError{400, "syntax", "$orderby", 6}},
		{"OrderByUnknown", "$orderby=task,nope", optionError{400, "unknown_property", "$orderby", 6}},
		{"OrderByFunction", "$orderby=tolower(task)", optionError{501, "unsupported_expression", "$orderby", 1}},
		{"SelectNumber", "$select=1", optionError{400, "syntax", "$select", 1}},
		{"SelectEmptyItem", "$select=task,,contract_id", optionError{400, "syntax", "$select", 6}},
		{"FilterSyntax", "$filter=task%20eq", optionError{400, "syntax", "$filter", 8}},
		{"FilterType", "$filter=" + url.QueryEscape("task_end_date ge 'x'"), optionError{400, "type_mismatch", "$filter", 18}},
		{"FilterRUT", "$filter=" + url.QueryEscape("client_rut eq '12.345.678-9'"), optionError{400, "rut_check_digit", "$filter", 15}},
		{"FilterFraction13Digits", "$filter=" + url.QueryEscape("execution_date eq 2021-08-01T15:54:30.0961720001234Z"), optionError{400, "syntax", "$filter", 19}},
		{"FilterDateOutOfRange", "$filter=" + url.QueryEscape("task_end_date gt 5874898-01-01"), optionError{400, "bad_literal", "$filter", 18}},
		{"FilterArithmetic", "$filter=" + url.QueryEscape("contract_id add 1 eq 2"), optionError{501, "unsupported_operator", "$filter", 13}},
		{"Apply", "$apply=groupby((task))", optionError{501, "unsupported_option", "$apply", 0}},
	} {
		for _, d := range reportDoors {
			t.Run(tt.name+"/"+d.name, func(t *testing.T) {
				if got := d.get(t, tt.query); got != tt.want {
					t.Errorf("%s: got %+v, want %+v", tt.query, got, tt.want)
				}
			})
		}
	}
	// $expand is the feed's: garbage in it is a 400 there, whatever the
	// set, and a 400 of its own on the other doors.
	for _, tt := range []struct {
		name, target string
		want         optionError
	}{
		{"ExpandPlusOne", "/odata/Contracts?$expand=+1", optionError{400, "syntax", "$expand", 2}},
		{"ExpandPlusOneNoNavigation", "/odata/GeneralReport?$expand=+1", optionError{400, "syntax", "$expand", 2}},
		{"ExpandComma", "/odata/Contracts?$expand=,", optionError{400, "syntax", "$expand", 1}},
		{"ExpandEmpty", "/odata/Contracts?$expand=", optionError{400, "empty", "$expand", 0}},
		{"ExpandUnknown", "/odata/Contracts?$expand=Client,Nope", optionError{400, "unknown_navigation", "$expand", 8}},
		{"ExpandNested", "/odata/Contracts?$expand=Processes($top=1)", optionError{501, "unsupported_expand", "$expand", 11}},
		{"ExpandNoNavigation", "/odata/GeneralReport?$expand=Tasks", optionError{501, "unsupported_expand", "$expand", 0}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := optionError(apitest.ODataOptionError(t, ts.Server, tt.target)); got != tt.want {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
	for _, target := range []string{"/api/contracts/export?$expand=+1", "/api/general-report?$expand=Tasks"} {
		if got, want := optionError(apitest.JSONOptionError(t, ts.Server, target)), (optionError{400, "feed_only", "$expand", 0}); got != want {
			t.Errorf("%s: got %+v, want %+v", target, got, want)
		}
	}
}

// commandOptionError returns the error informe export gives for the
// query, with the status the API answers it with.
func commandOptionError(t *testing.T, src *source.Source, query string) optionError {
	t.Helper()
	v, err := url.ParseQuery(query)
	if err != nil {
		t.Fatal(err)
	}
	_, err = fileexport.NewPlan(fileexport.Flags{Source: src, Query: v, Output: "-", Format: "csv"})
	var e *failure.Error
	if !errors.As(err, &e) {
		t.Fatalf("%s: %v, want the API's error", query, err)
	}
	st := map[failure.Code]int{failure.Invalid: 400, failure.NotImplemented: 501}[e.Code]
	return optionError{st, e.Reason, e.Target, e.Position}
}
