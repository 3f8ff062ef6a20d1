package odata_test

import (
	"errors"
	"net/url"
	"reflect"
	"strings"
	"testing"

	"github.com/informe/informe/internal/dataset"
	"github.com/informe/informe/internal/failure"
	"github.com/informe/informe/internal/odata"
)

// statusOf is the HTTP status the API answers err with.
func statusOf(err error) int {
	var e *failure.Error
	if !errors.As(err, &e) {
		return 0
	}
	return map[failure.Code]int{failure.Invalid: 400, failure.NotAcceptable: 406, failure.NotImplemented: 501}[e.Code]
}

// wantErr checks that err is a *failure.Error answered with status, with a
// message containing each of msgs.
func wantErr(t *testing.T, err error, status int, msgs ...string) {
	t.Helper()
	e, ok := err.(*failure.Error)
	if !ok {
		t.Fatalf("err = %v (%T), want *failure.Error", err, err)
	}
	if got, want := statusOf(err), status; got != want {
		t.Errorf("status = %d, want %d (message %q)", got, want, e.Message)
	}
	for _, m := range msgs {
		if !strings.Contains(e.Message, m) {
			t.Errorf("message %q does not contain %q", e.Message, m)
		}
	}
}

func query(raw string) url.Values {
	v, err := url.ParseQuery(raw)
	if err != nil {
		panic(err)
	}
	return v
}

func TestParse(t *testing.T) {
	t.Parallel()
	set := reportSet(t)
	for _, tt := range []struct {
		name  string
		query string
		want  odata.Query // Filter, Top, Skip, Count; After checked apart
	}{
		{"OKEmpty", "", odata.Query{Top: -1}},
		{"OKCustomOptionsIgnored", "access_token=secret&format=csv&page=2", odata.Query{Top: -1}},
		{"OKTopSkipCount", "$top=25&$skip=50&$count=true", odata.Query{Top: 25, Skip: 50, Count: true}},
		{"OKZeroTop", "$top=0&$count=false", odata.Query{Top: 0}},
		{"OKCaseInsensitiveNames", "$TOP=5&$Skip=1&$COUNT=TRUE", odata.Query{Top: 5, Skip: 1, Count: true}},
		{"OKSelect", "$select=task,contract_id,task", odata.Query{Top: -1}},
		{"OKSelectStar", "$select=*", odata.Query{Top: -1}},
		{"OKOrderBy", "$orderby=contract_id", odata.Query{Top: -1}},
		{"OKOrderByFull", "$orderby=contract_id asc,process_id ASC", odata.Query{Top: -1}},
		{"OKFormat", "$format=application/json%3Bodata.metadata%3Dminimal%3BIEEE754Compatible%3Dtrue", odata.Query{Top: -1}},
		{"OKFilter", "$filter=contract_id eq 42 and code_contract eq 'CT-0''1'", odata.Query{Top: -1, Filter: []odata.Eq{
			{Property: "contract_id", Text: "42", Int: 42},
			{Property: "code_contract", Text: "CT-0'1"},
		}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			q, err := odata.Parse(query(tt.query), set)
			if err != nil {
				t.Fatal(err)
			}
			got := odata.Query{Filter: q.Filter, Top: q.Top, Skip: q.Skip, Count: q.Count}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
			if q.After != nil {
				t.Errorf("After = %v, want nil", q.After)
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	t.Parallel()
	set := reportSet(t)
	for _, tt := range []struct {
		name   string
		query  string
		status int
		msgs   []string
	}{
		{"ErrUnknownOption", "$foo=1", 400, []string{"$foo", "supported are $select, $filter"}},
		{"ErrExpand", "$expand=Tasks", 501, []string{"$expand is not supported", "supported are"}},
		{"ErrSearch", "$search=perez", 501, []string{"$search"}},
		{"ErrApply", "$apply=groupby((task))", 501, []string{"$apply"}},
		{"ErrCompute", "$compute=a add b as c", 501, []string{"$compute"}},
		{"ErrTwice", "$top=1&$top=2", 400, []string{"$top is given more than once"}},
		{"ErrTwiceSpellings", "$top=1&$TOP=2", 400, []string{"$top is given more than once"}},
		{"ErrTopNegative", "$top=-1", 400, []string{"$top must be a non-negative integer"}},
		{"ErrTopWord", "$top=ten", 400, []string{"$top", `"ten"`}},
		{"ErrTopEmpty", "$top=", 400, []string{"$top"}},
		{"ErrTopHuge", "$top=99999999999999999999", 400, []string{"$top is too large"}},
		{"ErrSkipDecimal", "$skip=1.5", 400, []string{"$skip"}},
		{"ErrCount", "$count=yes", 400, []string{"$count must be true or false"}},
		{"ErrSelectUnknown", "$select=contract_id,nope", 400, []string{`no property "nope"`}},
		{"ErrSelectCase", "$select=Contract_ID", 400, []string{"did you mean contract_id?"}},
		{"ErrSelectEmptyItem", "$select=contract_id,,task", 400, []string{"empty item"}},
		{"ErrSelectStarThenUnknown", "$select=*,nope", 400, []string{`no property "nope"`}},
		{"ErrSelectUnknownThenStar", "$select=nope,*", 400, []string{`no property "nope"`}},
		{"ErrSelectPath", "$select=Informe.GeneralReportRow/task", 400, []string{"no property"}},
		{"ErrOrderByUnknown", "$orderby=nope", 400, []string{`no property "nope"`}},
		{"ErrOrderByDirection", "$orderby=contract_id up", 400, []string{"asc or desc"}},
		{"ErrOrderByExpression", "$orderby=length(task)", 501, []string{"order by properties"}},
		{"ErrFormatCSV", "$format=csv", 406, []string{`$format "csv" is not supported`}},
		{"ErrFormatFull", "$format=application/json%3Bodata.metadata%3Dfull", 406, []string{"odata.metadata=full"}},
		{"ErrFormatIEEE", "$format=application/json%3BIEEE754Compatible%3Dmaybe", 400, []string{"IEEE754Compatible must be true or false"}},
		{"ErrSkipToken", "$skiptoken=abc", 400, []string{"$skiptoken is not valid"}},
		{"ErrFilterLiteral", "$filter=contract_id eq 'x'", 400, []string{"contract_id is Edm.Int64"}},
		{"ErrFilterProperty", "$filter=nope eq 1", 400, []string{`no property "nope"`}},
		{"ErrFilterNotUTF8", "$filter=task eq '%FF'", 400, []string{"$filter is not UTF-8 text"}},
		{"ErrFilterNUL", "$filter=task eq 'a%00b'", 400, []string{"$filter is not UTF-8 text, or holds a NUL"}},
		{"ErrOrderByNUL", "$orderby=task_status%00", 400, []string{"$orderby is not UTF-8 text, or holds a NUL"}},
		{"ErrFilterToken", "$filter=code_contract eq '" + tokenBody + "'", 400, []string{"$filter holds a value that looks like an access token"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := odata.Parse(query(tt.query), set)
			wantErr(t, err, tt.status, tt.msgs...)
			if e, ok := err.(*failure.Error); ok && e.Target == "" {
				t.Errorf("Target is empty")
			}
		})
	}
}

// TestParseNeverEchoesToken sends a token, and a token's body without its
// prefix, in every option: no message or target repeats it.
func TestParseNeverEchoesToken(t *testing.T) {
	t.Parallel()
	set := reportSet(t)
	for _, tok := range []string{"informe_" + tokenBody, tokenBody, "INFORME_" + tokenBody} {
		for _, tt := range []struct {
			name  string
			query url.Values
		}{
			{"Select", url.Values{"$select": {tok}}},
			{"SelectList", url.Values{"$select": {"task," + tok}}},
			{"SelectEmptyItem", url.Values{"$select": {tok + ",,task"}}},
			{"OrderBy", url.Values{"$orderby": {tok}}},
			{"OrderByDirection", url.Values{"$orderby": {"contract_id " + tok}}},
			{"OrderByUnsupported", url.Values{"$orderby": {"contract_id,process_id,task_id," + tok}}},
			{"Top", url.Values{"$top": {tok}}},
			{"Skip", url.Values{"$skip": {tok}}},
			{"Count", url.Values{"$count": {tok}}},
			{"Format", url.Values{"$format": {tok}}},
			{"SkipToken", url.Values{"$skiptoken": {tok}}},
			{"Filter", url.Values{"$filter": {tok}}},
			{"FilterProperty", url.Values{"$filter": {tok + " eq 1"}}},
			{"FilterLiteral", url.Values{"$filter": {"contract_id eq '" + tok + "'"}}},
			{"FilterFunction", url.Values{"$filter": {tok + "(task) eq 1"}}},
			{"FilterAlias", url.Values{"$filter": {"contract_id eq @" + tok}}},
			{"FilterNumber", url.Values{"$filter": {"contract_id eq 1" + tok}}},
			{"FilterUnexpected", url.Values{"$filter": {"contract_id eq 1 " + tok}}},
			{"OptionName", url.Values{"$" + tok: {"1"}}},
			{"OptionNameTwice", url.Values{"$" + tok: {"1", "2"}}},
		} {
			t.Run(tt.name, func(t *testing.T) {
				_, err := odata.Parse(tt.query, set)
				if err == nil {
					_, err = odata.Negotiate(tt.query, nil)
				}
				e, ok := err.(*failure.Error)
				if !ok {
					t.Fatalf("err = %v, want a *failure.Error", err)
				}
				if strings.Contains(e.Message+e.Target, tokenBody) {
					t.Errorf("message %q, target %q repeat the token", e.Message, e.Target)
				}
			})
		}
	}
}

func TestParseUsers(t *testing.T) {
	t.Parallel()
	set := usersSet(t)
	plain := func(q *odata.Query) bool {
		var dq dataset.Query
		q.Compile(&dq)
		return dq.Plain()
	}
	q, err := odata.Parse(query("$filter=id eq 1"), set)
	if err != nil || plain(q) {
		t.Errorf("$filter=id eq 1: %v, plain %v", err, q != nil && plain(q))
	}
	q, err = odata.Parse(query("$orderby=id desc"), set)
	if err != nil || plain(q) {
		t.Errorf("$orderby=id desc: %v", err)
	}
	if _, err := odata.Parse(query("$orderby=id&$select=name"), set); err != nil {
		t.Error(err)
	}
}

func TestLimit(t *testing.T) {
	t.Parallel()
	set := reportSet(t)
	for _, tt := range []struct {
		name     string
		query    string
		pageSize int
		want     int64
	}{
		{"NoTop", "", 0, odata.MaxPageSize + 1},
		{"NoTopSmallPage", "", 100, 101},
		{"TopBelowPage", "$top=10", 100, 10},
		{"TopIsPage", "$top=100", 100, 100},
		{"TopAbovePage", "$top=250", 100, 101},
		{"TopZero", "$top=0", 100, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			q, err := odata.Parse(query(tt.query), set)
			if err != nil {
				t.Fatal(err)
			}
			if got := q.Limit(tt.pageSize); got != tt.want {
				t.Errorf("Limit(%d) = %d, want %d", tt.pageSize, got, tt.want)
			}
		})
	}
}

func TestEqual(t *testing.T) {
	t.Parallel()
	q, err := odata.Parse(query("$filter=client_rut eq '12.345.678-5' and client_id eq 7"), reportSet(t))
	if err != nil {
		t.Fatal(err)
	}
	if e, ok := q.Equal("client_rut"); !ok || e.Text != "12.345.678-5" {
		t.Errorf("Equal(client_rut) = %+v, %v", e, ok)
	}
	if e, ok := q.Equal("client_id"); !ok || e.Int != 7 || e.Text != "7" {
		t.Errorf("Equal(client_id) = %+v, %v", e, ok)
	}
	if _, ok := q.Equal("contract_id"); ok {
		t.Error("Equal(contract_id) found a comparison")
	}
}
