package odata_test

import (
	"net/http"
	"net/url"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/informe/informe/internal/dataset"
	"github.com/informe/informe/internal/failure"
	"github.com/informe/informe/internal/odata"
	"github.com/informe/informe/internal/postgres"
)

func parseFilter(t testing.TB, set *odata.EntitySet, filter string) ([]odata.Eq, error) {
	q, err := odata.Parse(url.Values{"$filter": {filter}}, set)
	if err != nil {
		return nil, err
	}
	return q.Filter, nil
}

func TestFilter(t *testing.T) {
	t.Parallel()
	set := reportSet(t)
	c42 := odata.Eq{Property: "contract_id", Text: "42", Int: 42}
	code := odata.Eq{Property: "code_contract", Text: "CT-001"}
	for _, tt := range []struct {
		name, filter string
		want         []odata.Eq
	}{
		{"OKInteger", "contract_id eq 42", []odata.Eq{c42}},
		{"OKIntegerPlus", "contract_id eq +42", []odata.Eq{c42}},
		{"OKIntegerMax", "client_id eq 9223372036854775807", []odata.Eq{{Property: "client_id", Text: "9223372036854775807", Int: 1<<63 - 1}}},
		{"OKString", "code_contract eq 'CT-001'", []odata.Eq{code}},
		{"OKStringQuote", "code_contract eq 'O''Higgins'''", []odata.Eq{{Property: "code_contract", Text: "O'Higgins'"}}},
		{"OKStringEmpty", "code_contract eq ''", []odata.Eq{{Property: "code_contract", Text: ""}}},
		{"OKStringUnicode", "code_contract eq 'Ñuñoa, \"x\" & y'", []odata.Eq{{Property: "code_contract", Text: `Ñuñoa, "x" & y`}}},
		{"OKRUTAsTyped", "client_rut eq '17.000.003-k'", []odata.Eq{{Property: "client_rut", Text: "17.000.003-k"}}},
		{"OKLiteralFirst", "42 eq contract_id", []odata.Eq{c42}},
		{"OKAnd", "contract_id eq 42 and code_contract eq 'CT-001'", []odata.Eq{c42, code}},
		{"OKAndCase", "contract_id EQ 42 AND code_contract Eq 'CT-001'", []odata.Eq{c42, code}},
		{"OKParens", "((contract_id eq 42)) and (code_contract eq 'CT-001')", []odata.Eq{c42, code}},
		{"OKParensTight", "(contract_id eq 42)and(code_contract eq 'CT-001')", []odata.Eq{c42, code}},
		{"OKTabs", "\tcontract_id\teq\t42\t", []odata.Eq{c42}},
		{"OKSameTwice", "contract_id eq 42 and contract_id eq 42", []odata.Eq{c42}},
		{"OKAll", "client_rut eq '1-9' and client_id eq 2 and code_contract eq 'CT-001' and contract_id eq 42",
			[]odata.Eq{{Property: "client_rut", Text: "1-9"}, {Property: "client_id", Text: "2", Int: 2}, code, c42}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseFilter(t, set, tt.filter)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestFilterErrors(t *testing.T) {
	t.Parallel()
	set := reportSet(t)
	const help = "$filter supports eq, ne, gt, ge, lt, le, in, and, or, not"
	for _, tt := range []struct {
		name, filter string
		status       int
		msgs         []string
	}{
		// Valid OData that informe does not implement: 501, saying what is supported.
		{"ErrArithmetic", "contract_id add 1 eq 2", 501, []string{"arithmetic (add) is not supported"}},
		{"ErrNegation", "-contract_id eq 2", 501, []string{"negation"}},
		{"ErrLambdaNoNavigation", "tasks/any(t:t/status eq 'x')", 400, []string{`GeneralReportRow has no collection navigation property "tasks"`}},
		{"ErrPath", "client_id/x eq 1", 501, []string{`the path "client_id/x" is not supported`}},
		{"ErrIt", "$it eq 1", 501, []string{"$it is not supported"}},
		{"ErrAlias", "contract_id eq @p1", 501, []string{"parameter aliases (@p1)"}},
		// Malformed or ill-typed: 400.
		{"ErrEmpty", "  ", 400, []string{"$filter is empty", help}},
		{"ErrUnknown", "contrat_id eq 1", 400, []string{`no property "contrat_id"`}},
		{"ErrCase", "Contract_Id eq 1", 400, []string{"did you mean contract_id?"}},
		{"ErrQuotedInteger", "contract_id eq '42'", 400, []string{"contract_id is Edm.Int64: write the number without quotes"}},
		{"ErrTooBig", "contract_id eq 9223372036854775808", 400, []string{"not an integer within Edm.Int64's range"}},
		{"ErrBoolInteger", "contract_id eq true", 400, []string{"contract_id is Edm.Int64 and cannot be compared with Edm.Boolean"}},
		{"ErrBareString", "code_contract eq CT", 400, []string{`no property "CT"`}},
		{"ErrNumberString", "code_contract eq 1", 400, []string{"code_contract is Edm.String: put the value in single quotes, e.g. code_contract eq 'text'"}},
		{"ErrTypedLiteral", "code_contract eq binary'AA=='", 400, []string{"typed literals"}},
		{"ErrUnterminated", "code_contract eq 'CT", 400, []string{"no closing quote"}},
		{"ErrDanglingAnd", "contract_id eq 1 and", 400, []string{"found the end"}},
		{"ErrMissingValue", "contract_id eq", 400, []string{"found the end"}},
		{"ErrBareProperty", "contract_id", 400, []string{"the expression is Edm.Int64, not a condition"}},
		{"ErrBarePropertyAnd", "contract_id and client_id eq 1", 400, []string{"and joins conditions, and one side is Edm.Int64"}},
		{"ErrUnclosed", "(contract_id eq 1", 400, []string{"expected ')'"}},
		{"ErrExtraClose", "contract_id eq 1)", 400, []string{"position 17"}},
		{"ErrJunk", "contract_id eq 1 ; drop", 400, []string{`found ";"`}},
		{"ErrEqEq", "contract_id eq 1 eq 2", 400, []string{"operator eq cannot follow a comparison"}},
		{"ErrFunction", "round(costo_servicio) eq 2", 501, []string{"function round() is not supported"}},
		{"ErrGtNull", "task_end_date gt null", 400, []string{"null can only be compared with eq or ne"}},
		{"ErrDateString", "task_end_date ge '2024-03-01'", 400, []string{"task_end_date is Edm.Date and cannot be compared with Edm.String"}},
		{"ErrDateTimeForDate", "execution_date ge 2024-03-01", 400, []string{"execution_date is Edm.DateTimeOffset", "2024-03-05T00:00:00Z"}},
		{"ErrBadDate", "task_end_date ge 2024-02-30", 400, []string{"is not a valid literal"}},
		{"ErrHour24", "execution_date ge 2024-02-01T24:00:00Z", 400, []string{"is not a valid literal"}},
		{"ErrYearLeadingZero", "task_end_date ge 02024-02-01", 400, []string{"is not a valid literal"}},
		{"ErrYearThreeDigits", "task_end_date ge 202-02-01", 400, []string{"is not a valid literal"}},
		{"ErrFraction13Digits", "execution_date eq 2021-08-01T15:54:30.0961720001234Z", 400,
			[]string{"has more than 12 digits of fractional seconds, which OData's grammar does not allow", "position 19"}},
		{"ErrFractionEmpty", "execution_date eq 2021-08-01T15:54:30.Z", 400, []string{"is not a valid literal"}},
		{"ErrDateAfterPostgres", "task_end_date lt 5874898-01-01", 400, []string{"outside the range of PostgreSQL's dates", "5874897-12-31"}},
		{"ErrDateBeforePostgres", "task_end_date gt -4713-11-23", 400, []string{"outside the range of PostgreSQL's dates"}},
		{"ErrYearTenDigits", "task_end_date gt 1000000000-01-01", 400, []string{"outside the range of PostgreSQL's dates"}},
		{"ErrDateTimeAfterPostgres", "execution_date lt 294277-01-01T00:00:00Z", 400, []string{"outside the range", "294276-12-31T23:59:59.999999Z"}},
		{"ErrContainsNumber", "contains(task, 1)", 400, []string{"argument 2 of contains() must be Edm.String"}},
		{"ErrSubstringNegative", "substring(task, -1) eq 'x'", 400, []string{"at least 0"}},
		{"ErrNotNumber", "not contract_id", 400, []string{"not applies to a condition"}},
		{"ErrTokenNotEchoed", "informe_XXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX eq 1", 400, []string{"$filter holds a value that looks like an access token"}},
		{"ErrDeep", strings.Repeat("(", 40) + "contract_id eq 1" + strings.Repeat(")", 40), 400, []string{"nested too deeply"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseFilter(t, set, tt.filter)
			if err == nil {
				t.Fatalf("got %+v, want an error", got)
			}
			wantErr(t, err, tt.status, tt.msgs...)
			if e := err.(*failure.Error); e.Target != "$filter" {
				t.Errorf("Target = %q, want $filter", e.Target)
			}
		})
	}
}

// FuzzFilter checks that any $filter either parses into equalities on
// filter properties with valid values, or fails with a 400 or a 501; never
// a panic or another error.
func FuzzFilter(f *testing.F) {
	for _, s := range []string{
		"contract_id eq 42",
		"code_contract eq 'CT-''001' and client_id eq 7",
		"(client_rut eq '12.345.678-5') and (contract_id eq 1)",
		"contract_id gt 1 or contains(task,'x')",
		"((((",
		"'",
	} {
		f.Add(s)
	}
	set := reportSet(f)
	f.Fuzz(func(t *testing.T, filter string) {
		eqs, err := parseFilter(t, set, filter) // Filter: the equalities, when that is all there is
		if err != nil {
			e, ok := err.(*failure.Error)
			if st := statusOf(err); !ok || (st != http.StatusBadRequest && st != http.StatusNotImplemented) || e.Message == "" {
				t.Fatalf("Parse(%q) = %v (%T)", filter, err, err)
			}
			return
		}
		seen := map[string]bool{}
		for _, e := range eqs {
			switch e.Property {
			case "contract_id", "client_id":
				if e.Int < 1 {
					t.Fatalf("Parse(%q): %s = %d", filter, e.Property, e.Int)
				}
			case "code_contract", "client_rut":
			default:
				t.Fatalf("Parse(%q): comparison on %s", filter, e.Property)
			}
			if seen[e.Property] {
				t.Fatalf("Parse(%q): %s twice", filter, e.Property)
			}
			seen[e.Property] = true
		}
	})
}

// TestFilterLiteralSQL checks how literals reach the database: date-times
// at their own precision (up to 12 digits, none rounded into a match),
// OData's astronomical years in PostgreSQL's eras, substring's position
// and length within PostgreSQL's integer, and two literals compared.
func TestFilterLiteralSQL(t *testing.T) {
	t.Parallel()
	set := reportSet(t)
	const micro = "2021-08-01 15:54:30.096172+00"
	for _, tt := range []struct {
		name, filter string
		where        string // a part of the conditions
		args         []any
	}{
		{"FractionOf10NeverEqual", "execution_date eq 2021-08-01T15:54:30.0961720001Z", "FALSE", nil},
		{"FractionOf10InMatchesNothing", "execution_date in (2021-08-01T15:54:30.0961720001Z)", "FALSE", nil},
		{"FractionOf10Ne", "execution_date ne 2021-08-01T15:54:30.0961720001Z", "TRUE", nil},
		{"FractionOf10Gt", "execution_date gt 2021-08-01T15:54:30.0961720001Z", "t.execution_date > $1::timestamptz", []any{micro}},
		{"FractionOf10Ge", "execution_date ge 2021-08-01T15:54:30.0961720001Z", "t.execution_date > $1::timestamptz", []any{micro}},
		{"FractionOf12Lt", "execution_date lt 2021-08-01T15:54:30.096172000001Z", "t.execution_date <= $1::timestamptz", []any{micro}},
		{"FractionOf12Le", "2021-08-01T15:54:30.096172000001Z ge execution_date", "t.execution_date <= $1::timestamptz", []any{micro}},
		{"FractionOf12Zeros", "execution_date eq 2021-08-01T15:54:30.096172000000Z", "t.execution_date = $1::timestamptz", []any{micro}},
		{"FractionOffset", "execution_date eq 2021-08-01T12:54:30.0961720-03:00", "t.execution_date = $1::timestamptz", []any{micro}},
		{"YearZeroDate", "task_end_date gt 0000-01-01", "t.task_end_date > $1::date", []any{"0001-01-01 BC"}},
		{"YearMinus44", "task_end_date ge -0044-03-15", "t.task_end_date >= $1::date", []any{"0045-03-15 BC"}},
		{"YearFiveDigits", "task_end_date lt 10000-01-01", "t.task_end_date < $1::date", []any{"10000-01-01"}},
		{"YearZeroDateTime", "execution_date gt 0000-01-01T00:00:00Z", "t.execution_date > $1::timestamptz", []any{"0001-01-01 00:00:00.000000+00 BC"}},
		{"YearZeroOffsetIntoYearOne", "execution_date ge 0000-12-31T23:00:00-01:00", "t.execution_date >= $1::timestamptz", []any{"0001-01-01 00:00:00.000000+00"}},
		{"YearAstronomical", "year(task_end_date) eq 0", "(extract(year FROM t.task_end_date) + (extract(year FROM t.task_end_date) < 0)::int)::bigint", []any{int64(0)}},
		{"SubstringPastInteger", "substring(task,2147483648) eq ''", "substr(t.task, $1::integer)", []any{int64(1<<30 - 1), ""}},
		{"SubstringMax", "substring(task,9223372036854775807,9223372036854775807) eq ''", "substr(t.task, $1::integer, $2::integer)", []any{int64(1<<30 - 1), int64(1<<30 - 1), ""}},
		{"SubstringSmall", "substring(task,1,2) eq 'ab'", "substr(t.task, $1::integer, $2::integer)", []any{int64(2), int64(2), "ab"}},
		{"TwoIntegers", "1 eq 1", "$1::bigint = $2::bigint", []any{int64(1), int64(1)}},
		{"IntegerAndDecimal", "1 lt 1.5", "$1::numeric > $2::bigint", []any{"1.5", int64(1)}},
		{"TwoStrings", "'a' ne 'b'", "($1::text <> $2::text OR $1::text IS NULL)", []any{"b", "a"}},
		{"LiteralIn", "1 in (2, 1)", "($1::bigint = $2::bigint OR $3::bigint = $4::bigint)", []any{int64(2), int64(1), int64(1), int64(1)}},
		{"TwoDateTimesEqual", "2024-01-01T00:00:00.0000001Z eq 2024-01-01T00:00:00.000000100Z", "TRUE", nil},
		{"TwoDateTimesFiner", "2024-01-01T00:00:00.0000001Z lt 2024-01-01T00:00:00.000000100001Z", "TRUE", nil},
		{"TwoDateTimesNotEqual", "2024-01-01T00:00:00.0000001Z eq 2024-01-01T00:00:00.000000100001Z", "FALSE", nil},
		{"TwoDateTimesIn", "2024-01-01T00:00:00.0000001Z in (2024-01-01T00:00:00.0000002Z, 2024-01-01T00:00:00.0000001Z)", "(FALSE OR TRUE)", nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			q, err := odata.Parse(url.Values{"$filter": {tt.filter}}, set)
			if err != nil {
				t.Fatal(err)
			}
			var dq dataset.Query
			q.Compile(&dq)
			where, args := postgres.Conditions(dataset.GeneralReport, dq)
			if !strings.Contains(where, tt.where) {
				t.Errorf("conditions %s, want %s in them", where, tt.where)
			}
			if len(args) != len(tt.args) || len(args) > 0 && !reflect.DeepEqual(args, tt.args) {
				t.Errorf("args %#v, want %#v", args, tt.args)
			}
		})
	}
}

// TestFilterSQLJoined checks which tests of an outer-joined table's
// column the SQL of a $filter carries: one wherever the filter holds only
// where a property of that table has a value, none where it can hold on a
// row without that table's row.
func TestFilterSQLJoined(t *testing.T) {
	t.Parallel()
	set := reportSet(t)
	const task, client, service = "t.key_task_id IS NOT NULL", "t.client_id IS NOT NULL", "t.costo_servicio IS NOT NULL"
	for _, tt := range []struct {
		filter string
		want   []string
	}{
		{"task_status eq 'Terminada'", []string{task}},
		{"task_end_date ge 2024-03-01 and task_end_date lt 2024-04-01", []string{task}},
		{"startswith(client_email,'a')", []string{client}},
		{"length(trim(client_email)) gt 3 and service eq 'x'", []string{client, service}},
		{"task_status in ('a','b')", []string{task}},
		{"task_status eq 'a' or startswith(task,'b')", []string{task}},
		{"task_status ne 'a'", nil},
		{"task_status in ('a',null)", nil},
		{"task_status eq 'a' or task_end_date eq null", nil},
		{"task_status eq 'a' or contract_status eq 'b'", nil},
		{"not (task_status eq 'a')", nil},
		{"task_status eq task_title", nil},
		{"costo_servicio gt 100000 and contract_id eq 4", nil},
	} {
		q, err := odata.Parse(url.Values{"$filter": {tt.filter}}, set)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		var dq dataset.Query
		q.Compile(&dq)
		where, _ := postgres.Conditions(dataset.GeneralReport, dq)
		for _, c := range []string{task, client, service, "t.key_process_id IS NOT NULL"} {
			if strings.Contains(where, c) {
				got = append(got, c)
			}
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: got %q, want %q", tt.filter, got, tt.want)
		}
	}
}

// FuzzFilterSQL checks the SQL of every $filter that parses: each literal
// is a bound parameter, never text in the statement (the only quoted text
// is informe's own constants), and the parameters are exactly $1 to $n.
func FuzzFilterSQL(f *testing.F) {
	for _, s := range []string{
		"task_status eq 'Pendiente'",
		"task_end_date ge 2024-03-01 and task_end_date lt 2024-04-01",
		"startswith(client_email,'a''; drop table x; --')",
		"costo_servicio gt 100.5 or costo_servicio eq null",
		"execution_date ge 2024-03-01T00:00:00Z and execution_date lt 2024-03-01T00:00:00-03:00",
		"not (contains(tolower(task),'x') or length(trim(task)) gt 3)",
		"task_status in ('a','b',null) and year(task_end_date) eq 2024",
		"substring(concat(task,'x'),1,2) eq 'ab' and indexof(task,'a') ge 0",
		"client_rut in ('12.345.678-5','1-9') and row_id ne '1-0-0'",
		"contract_creation_date lt 2024-03-01T10:00:00+01:00 and hour(contract_creation_date) eq 3",
	} {
		f.Add(s)
	}
	set := reportSet(f)
	constants := strings.NewReplacer(`E' \t\n\r'`, "", "'UTC'", "", "'YYYY-MM-DD'", "", `'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'`, "",
		`'YYYY-MM-DD"T"HH24:MI:SS.US'`, "", "'-'", "", `COLLATE "default"`, "")
	f.Fuzz(func(t *testing.T, filter string) {
		q, err := odata.Parse(url.Values{"$filter": {filter}}, set)
		if err != nil {
			return
		}
		var dq dataset.Query
		q.Compile(&dq)
		where, args := postgres.Conditions(dataset.GeneralReport, dq)
		if strings.ContainsAny(constants.Replace(where), `'"`) || strings.Contains(where, "--") ||
			strings.Contains(where, ";") {
			t.Fatalf("%q: SQL holds text of its own: %s", filter, where)
		}
		for i := range args {
			if !strings.Contains(where+" ", "$"+strconv.Itoa(i+1)+"::") {
				t.Fatalf("%q: $%d unused in %s", filter, i+1, where)
			}
		}
		if strings.Contains(where, "$"+strconv.Itoa(len(args)+1)+"::") {
			t.Fatalf("%q: more placeholders than arguments in %s", filter, where)
		}
	})
}
