package odata_test

import (
	"net/http"
	"net/url"
	"testing"

	"github.com/informe/informe/internal/dataset"
	"github.com/informe/informe/internal/failure"
	"github.com/informe/informe/internal/odata"
)

// TestOptionErrors checks the status, reason, target and position of the
// errors of $filter, $orderby, $select and $expand: what OData's grammar
// does not make is a 400 (malformed, whatever else it holds), valid OData
// that informe does not implement a 501. Positions count characters of
// the option's value from 1; 0 is the whole value.
func TestOptionErrors(t *testing.T) {
	t.Parallel()
	report, contracts := reportSet(t), odata.Of(dataset.Contracts)
	for _, tt := range []struct {
		name     string
		set      *odata.EntitySet
		option   string // the option's value, as decoded from the URL
		value    string
		status   int
		reason   string
		position int
	}{
		// $orderby
		{"OrderByNumbers", report, "$orderby", "1,2", 400, "not_property", 1},
		{"OrderByMinusZero", report, "$orderby", "-0", 400, "not_property", 1},
		{"OrderBySecondLiteral", report, "$orderby", "contract_id,'x'", 400, "not_property", 13},
		{"OrderByNull", report, "$orderby", "null desc", 400, "not_property", 1},
		{"OrderByEmpty", report, "$orderby", "", 400, "empty", 0},
		{"OrderByBlank", report, "$orderby", "  ", 400, "empty", 0},
		{"OrderByComma", report, "$orderby", ",", 400, "syntax", 1},
		{"OrderByTrailingComma", report, "$orderby", "contract_id,", 400, "syntax", 13},
		{"OrderByEmptyItem", report, "$orderby", "contract_id,,task", 400, "syntax", 13},
		{"OrderByDirection", report, "$orderby", "contract_id up", 400, "syntax", 13},
		{"OrderByTwoDirections", report, "$orderby", "contract_id asc desc", 400, "syntax", 17},
		{"OrderBySemicolon", report, "$orderby", "task;drop", 400, "syntax", 5},
		{"OrderByUnclosed", report, "$orderby", "length(task", 400, "syntax", 12},
		{"OrderByQuote", report, "$orderby", "'x", 400, "syntax", 1},
		{"OrderByBadNumber", report, "$orderby", "1x", 400, "bad_literal", 1},
		{"OrderByUnknown", report, "$orderby", "task,nope", 400, "unknown_property", 6},
		{"OrderByUnknownFunction", report, "$orderby", "nope(task)", 400, "unknown_function", 1},
		{"OrderByArgumentType", report, "$orderby", "length(contract_id)", 400, "type_mismatch", 8},
		{"OrderByFunction", report, "$orderby", "task,tolower(task)", 501, "unsupported_expression", 6},
		{"OrderByComparison", report, "$orderby", "task eq 'x'", 501, "unsupported_expression", 1},
		{"OrderByRound", report, "$orderby", "round(costo_servicio)", 501, "unsupported_function", 1},
		{"OrderByArithmetic", report, "$orderby", "contract_id add 1", 501, "unsupported_operator", 13},
		{"OrderByNegation", report, "$orderby", "-contract_id", 501, "unsupported_operator", 1},
		{"OrderByPath", report, "$orderby", "Client/client_rut", 501, "unsupported_expression", 1},
		{"OrderByAlias", report, "$orderby", "@p1", 501, "unsupported_expression", 1},
		{"OrderByAfterUnicode", report, "$orderby", "contains(task,'ñu'),x", 501, "unsupported_expression", 1},
		{"OrderByUnknownAfterUnicode", report, "$orderby", "task eq 'ñ' x", 501, "unsupported_expression", 1},
		// $expand
		{"ExpandPlusOne", contracts, "$expand", " 1", 400, "syntax", 2}, // $expand=+1 in a URL
		{"ExpandPlusOneReport", report, "$expand", " 1", 400, "syntax", 2},
		{"ExpandNumber", contracts, "$expand", "1", 400, "syntax", 1},
		{"ExpandComma", contracts, "$expand", ",", 400, "syntax", 1},
		{"ExpandEmpty", contracts, "$expand", "", 400, "empty", 0},
		{"ExpandEmptyReport", report, "$expand", "", 400, "empty", 0},
		{"ExpandTrailingComma", contracts, "$expand", "Client,", 400, "syntax", 8},
		{"ExpandUnbalanced", contracts, "$expand", "Client($select=client_rut", 400, "syntax", 7},
		{"ExpandClosedTwice", contracts, "$expand", "Client)", 400, "syntax", 7},
		{"ExpandAfterParens", contracts, "$expand", "Client($select=client_rut)x", 400, "syntax", 27},
		{"ExpandNotOption", contracts, "$expand", "Client(client_rut)", 400, "syntax", 8},
		{"ExpandUnknownOption", contracts, "$expand", "Client($foo=1)", 400, "syntax", 8},
		{"ExpandDash", contracts, "$expand", "Client-x", 400, "syntax", 1},
		{"ExpandUnknown", contracts, "$expand", "Processes,Nope", 400, "unknown_navigation", 11},
		{"ExpandTwice", contracts, "$expand", "Client,Client", 400, "repeated", 8},
		{"ExpandSelectTwice", contracts, "$expand", "Client($select=client_rut;$select=client_region)", 400, "repeated", 27},
		{"ExpandSelectUnknown", contracts, "$expand", "Client($select=client_rut,nope)", 400, "unknown_property", 27},
		{"ExpandSelectNumber", contracts, "$expand", "Client($select= 1)", 400, "syntax", 17},
		{"ExpandSelectEmpty", contracts, "$expand", "Client($select=)", 400, "empty", 0},
		{"ExpandStar", contracts, "$expand", "*", 501, "unsupported_expand", 1},
		{"ExpandRef", contracts, "$expand", "Client/$ref", 501, "unsupported_expand", 1},
		{"ExpandNestedExpand", contracts, "$expand", "Processes($expand=Tasks)", 501, "unsupported_expand", 11},
		{"ExpandNestedTop", contracts, "$expand", "Processes($top=1)", 501, "unsupported_expand", 11},
		{"ExpandNoNavigations", report, "$expand", "Tasks", 501, "unsupported_expand", 0},
		// $select
		{"SelectNumber", report, "$select", "1", 400, "syntax", 1},
		{"SelectEmpty", report, "$select", "", 400, "empty", 0},
		{"SelectComma", report, "$select", ",", 400, "syntax", 1},
		{"SelectEmptyItem", report, "$select", "task, ,contract_id", 400, "syntax", 6},
		{"SelectOrder", report, "$select", "task desc", 400, "syntax", 1},
		{"SelectUnknown", report, "$select", "task, nope", 400, "unknown_property", 7},
		// $filter
		{"FilterEmpty", report, "$filter", "", 400, "empty", 0},
		{"FilterNumber", report, "$filter", "1", 400, "type_mismatch", 1},
		{"FilterJunk", report, "$filter", "contract_id eq 1 ; drop", 400, "syntax", 18},
		{"FilterUnclosed", report, "$filter", "(contract_id eq 1", 400, "syntax", 18},
		{"FilterUnterminated", report, "$filter", "task eq 'x", 400, "syntax", 9},
		{"FilterUnknown", report, "$filter", "task eq 'x' or nope eq 1", 400, "unknown_property", 16},
		{"FilterUnknownFunction", report, "$filter", "nope(task)", 400, "unknown_function", 1},
		{"FilterType", report, "$filter", "task_end_date ge '2024-03-01'", 400, "type_mismatch", 18},
		{"FilterTypeAfterUnicode", report, "$filter", "task eq 'ñandú' or contract_id eq 'x'", 400, "type_mismatch", 35},
		{"FilterBadLiteral", report, "$filter", "task_end_date ge 2024-02-30", 400, "bad_literal", 18},
		{"FilterGtNull", report, "$filter", "task_end_date gt null", 400, "type_mismatch", 18},
		{"FilterArgumentCount", report, "$filter", "contains(task) ", 400, "argument_count", 1},
		{"FilterRUT", report, "$filter", "client_rut eq '12.345.678-9'", 400, "rut_check_digit", 15},
		{"FilterRUTMalformed", report, "$filter", "client_rut in ('1-9','x')", 400, "rut_malformed", 22},
		{"FilterTooDeep", report, "$filter", "((((((((((((((((((((((((((((((((((contract_id eq 1))))))))))))))))))))))))))))))))))", 400, "too_deep", 33},
		{"FilterToken", report, "$filter", "informe_XXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX eq 1", 400, "token_in_parameter", 0},
		{"FilterNotText", report, "$filter", "task eq '\xff'", 400, "not_text", 0},
		{"FilterArithmetic", report, "$filter", "contract_id add 1 eq 2", 501, "unsupported_operator", 13},
		{"FilterRound", report, "$filter", "round(costo_servicio) eq 2", 501, "unsupported_function", 1},
		{"FilterLambdaNoNavigation", report, "$filter", "tasks/any(t:t/status eq 'x')", 400, "unknown_navigation", 1},
		{"FilterPath", report, "$filter", "contract_id/x eq 1", 501, "unsupported_expression", 1},
		{"FilterAlias", report, "$filter", "contract_id eq @p1", 501, "unsupported_expression", 16},
		// The other options
		{"TopNegative", report, "$top", "-1", 400, "not_integer", 0},
		{"CountYes", report, "$count", "yes", 400, "not_boolean", 0},
		{"Search", report, "$search", "perez", 501, "unsupported_option", 0},
		{"Unknown", report, "$foo", "1", 400, "unknown_option", 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := odata.Parse(url.Values{tt.option: {tt.value}}, tt.set)
			checkOptionError(t, err, tt.status, tt.option, tt.reason, tt.position)
		})
	}
}

// checkOptionError checks that err is the *failure.Error of option
// answered with status, with reason and position.
func checkOptionError(t *testing.T, err error, status int, option, reason string, position int) {
	t.Helper()
	e, ok := err.(*failure.Error)
	if !ok {
		t.Fatalf("err = %v (%T), want *failure.Error", err, err)
	}
	if got, want := statusOf(err), status; got != want {
		t.Errorf("status = %d, want %d (%s)", got, want, e.Message)
	}
	if got, want := e.Reason, reason; got != want {
		t.Errorf("reason = %q, want %q (%s)", got, want, e.Message)
	}
	if got, want := e.Target, option; got != want {
		t.Errorf("target = %q, want %q", got, want)
	}
	if got, want := e.Position, position; got != want {
		t.Errorf("position = %d, want %d (%s)", got, want, e.Message)
	}
	if e.Message == "" {
		t.Error("no message")
	}
}

// TestReadOptionErrors checks that the paths other than the feed refuse
// malformed options alike, and their own refusals with a reason.
func TestReadOptionErrors(t *testing.T) {
	t.Parallel()
	set := reportSet(t)
	for _, tt := range []struct {
		name, query    string
		status         int
		option, reason string
		position       int
	}{
		{"OrderByNumbers", "$orderby=1,2", 400, "$orderby", "not_property", 1},
		{"OrderByMinusZero", "$orderby=-0", 400, "$orderby", "not_property", 1},
		{"SelectNumber", "$select=1", 400, "$select", "syntax", 1},
		{"SelectKey", "$select=task,row_id", 400, "$select", "not_column", 0},
		{"FilterSyntax", "$filter=task eq", 400, "$filter", "syntax", 8},
		{"OrderByFunction", "$orderby=tolower(task)", 501, "$orderby", "unsupported_expression", 1},
		{"Expand", "$expand=%2B1", 400, "$expand", "feed_only", 0},
		{"Top", "$top=1", 400, "$top", "feed_only", 0},
		{"Apply", "$apply=groupby((task))", 501, "$apply", "unsupported_option", 0},
		{"Unknown", "$foo=1", 400, "$foo", "unknown_option", 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := odata.ParseRead(query(tt.query), set)
			checkOptionError(t, err, tt.status, tt.option, tt.reason, tt.position)
		})
	}
}

// FuzzOrderBy checks that any $orderby either parses or fails with a 400
// or a 501 that has a reason and a target; never a panic or another error.
func FuzzOrderBy(f *testing.F) {
	for _, s := range []string{"contract_id desc,task", "1,2", "-0", "tolower(task) asc", ",", "task eq 'x'"} {
		f.Add(s)
	}
	set := reportSet(f)
	f.Fuzz(func(t *testing.T, orderby string) {
		checkFuzzedError(t, "$orderby", orderby, set)
	})
}

// FuzzExpand is FuzzOrderBy for $expand.
func FuzzExpand(f *testing.F) {
	for _, s := range []string{"Client($select=client_rut),Processes", " 1", ",", "*", "Client(", "Processes($top=1;$select=x)"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, expand string) {
		checkFuzzedError(t, "$expand", expand, odata.Of(dataset.Contracts))
	})
}

func checkFuzzedError(t *testing.T, option, value string, set *odata.EntitySet) {
	_, err := odata.Parse(url.Values{option: {value}}, set)
	if err == nil {
		return
	}
	e, ok := err.(*failure.Error)
	if st := statusOf(err); !ok || (st != http.StatusBadRequest && st != http.StatusNotImplemented) || e.Message == "" ||
		e.Reason == "" || e.Target != option || e.Position < 0 || e.Position > len([]rune(value))+1 {
		t.Fatalf("%s=%q: %#v", option, value, err)
	}
}
