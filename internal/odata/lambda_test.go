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
	"github.com/informe/informe/internal/postgres"
)

// TestFilterLambdaAndFoldSQL checks the SQL of the lambda operators any
// and all and of Informe.fold: EXISTS and NOT EXISTS over the target's
// typed view, related by the navigation's column, each depth its own
// alias; fold through informe_fold.
func TestFilterLambdaAndFoldSQL(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name   string
		set    *dataset.Dataset
		filter string
		where  string
		args   []any
	}{
		{"AnyEq", (dataset.Contracts), "Tasks/any(d:d/task_status eq 'Pendiente')",
			"EXISTS (SELECT 1 FROM task_list_typed l1 WHERE l1.key_contract_id = t.key_contract_id AND l1.task_status = $1::text)", []any{"Pendiente"}},
		{"AnyEmpty", (dataset.Contracts), "Processes/any()",
			"EXISTS (SELECT 1 FROM process_list_typed l1 WHERE l1.key_contract_id = t.key_contract_id)", nil},
		{"AnySpaces", (dataset.Contracts), "Tasks/any( d : d/task_end_date ge 2026-01-01 and d/task_end_date lt 2027-01-01 )",
			"EXISTS (SELECT 1 FROM task_list_typed l1 WHERE l1.key_contract_id = t.key_contract_id AND (l1.task_end_date >= $1::date AND l1.task_end_date < $2::date))",
			[]any{"2026-01-01", "2027-01-01"}},
		{"All", (dataset.Processes), "Tasks/all(d:d/task_status eq 'Terminada')",
			"(NOT EXISTS (SELECT 1 FROM task_list_typed l1 WHERE l1.key_process_id = t.key_process_id AND (l1.task_status = $1::text) IS NOT TRUE))", []any{"Terminada"}},
		{"NotAny", (dataset.Contracts), "not Tasks/any(d:d/task_status eq 'Pendiente')",
			"(NOT ((EXISTS (SELECT 1 FROM task_list_typed l1 WHERE l1.key_contract_id = t.key_contract_id AND l1.task_status = $1::text)) IS TRUE))", []any{"Pendiente"}},
		{"Nested", (dataset.Clients), "Contracts/any(c:c/Tasks/any(d:d/task_status eq 'Pendiente'))",
			"EXISTS (SELECT 1 FROM contract_list_typed l1 WHERE l1.key_client_id = t.key_client_id AND EXISTS (SELECT 1 FROM task_list_typed l2 WHERE l2.key_contract_id = l1.key_contract_id AND l2.task_status = $1::text))",
			[]any{"Pendiente"}},
		{"AndOuter", (dataset.Contracts), "contract_status eq 'APROBADO' and Tasks/any(d:d/task_status ne 'Terminada')",
			"(l1.task_status <> $2::text OR l1.task_status IS NULL)", []any{"APROBADO", "Terminada"}},
		{"Fold", (dataset.Clients), "Informe.fold(text=last_name_client) eq Informe.fold(text='Núñez')",
			"informe_fold(t.last_name_client) IS NOT DISTINCT FROM informe_fold($1::text)", []any{"Núñez"}},
		{"FoldContains", (dataset.Clients), "contains(Informe.fold(text=client_commune),Informe.fold(text='valpa'))",
			"(strpos(informe_fold(t.client_commune), informe_fold($1::text)) > 0)", []any{"valpa"}},
		{"FoldInLambda", (dataset.Contracts), "Tasks/any(d:contains(Informe.fold(text=d/task),'audiencia'))",
			"AND (strpos(informe_fold(l1.task), $1::text) > 0))", []any{"audiencia"}},
		{"FoldReport", (dataset.GeneralReport), "Informe.fold(text=client_region) eq 'nuble'",
			"informe_fold(t.client_region) = $1::text", []any{"nuble"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			q, err := odata.Parse(url.Values{"$filter": {tt.filter}}, odata.Of(tt.set))
			if err != nil {
				t.Fatal(err)
			}
			var dq dataset.Query
			q.Compile(&dq)
			where, args := postgres.Conditions(tt.set, dq)
			if !strings.Contains(where, tt.where) {
				t.Errorf("conditions\n%s\nwant in them\n%s", where, tt.where)
			}
			if len(args) != len(tt.args) || len(args) > 0 && !reflect.DeepEqual(args, tt.args) {
				t.Errorf("args %#v, want %#v", args, tt.args)
			}
		})
	}
}

func TestFilterLambdaAndFoldErrors(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name   string
		set    *odata.EntitySet
		filter string
		status int
		reason string
		msg    string
	}{
		{"ErrToOne", odata.Of(dataset.Contracts), "Client/any(c:c/client_rut eq '1-9')", 400, "unknown_navigation", `a single-valued navigation property "Client"`},
		{"ErrUnknownNav", odata.Of(dataset.Contracts), "Tareas/any(d:d/task eq 'x')", 400, "unknown_navigation", "its collection navigation properties are Processes, Tasks"},
		{"ErrOuterInside", odata.Of(dataset.Contracts), "Tasks/any(d:contract_status eq 'APROBADO')", 501, "unsupported_expression", "name Task's properties through its variable (d/contract_status)"},
		{"ErrOtherVariable", odata.Of(dataset.Contracts), "Tasks/any(d:x/task eq 'a')", 501, "unsupported_expression", `"x" is not it`},
		{"ErrNoColon", odata.Of(dataset.Contracts), "Tasks/any(d d/task eq 'a')", 400, "syntax", "':' after the lambda variable d"},
		{"ErrAllEmpty", odata.Of(dataset.Contracts), "Tasks/all()", 400, "syntax", "all needs a lambda expression"},
		{"ErrNotCondition", odata.Of(dataset.Contracts), "Tasks/any(d:d/task)", 400, "type_mismatch", "the lambda expression is Edm.String"},
		{"ErrUnknownInside", odata.Of(dataset.Contracts), "Tasks/any(d:d/contract_status eq 'x')", 400, "unknown_property", "contract_status"},
		{"ErrVariableIsProperty", odata.Of(dataset.Contracts), "Tasks/any(task:task/task eq 'x')", 400, "syntax", "is the name of a property"},
		{"ErrVariableTwice", odata.Of(dataset.Clients), "Contracts/any(d:d/Tasks/any(d:d/task eq 'x'))", 400, "syntax", "already in scope"},
		{"ErrTypeInside", odata.Of(dataset.Contracts), "Tasks/any(d:d/task_end_date eq 'x')", 400, "type_mismatch", "task_end_date is Edm.Date"},
		{"ErrFoldPositional", odata.Of(dataset.Clients), "Informe.fold(last_name_client) eq 'a'", 400, "syntax", "text= and the text"},
		{"ErrFoldType", odata.Of(dataset.Clients), "Informe.fold(text=client_id) eq 'a'", 400, "type_mismatch", "Informe.fold's text must be Edm.String, not Edm.Int64"},
		{"ErrFoldTwo", odata.Of(dataset.Clients), "Informe.fold(text='a',text='b') eq 'a'", 400, "syntax", "Informe.fold takes one parameter"},
		{"ErrOtherCustom", odata.Of(dataset.Clients), "Informe.unaccent(text='a') eq 'a'", 400, "unknown_function", "its own function is Informe.fold(text=...)"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := odata.Parse(url.Values{"$filter": {tt.filter}}, tt.set)
			var fe *failure.Error
			if !errors.As(err, &fe) {
				t.Fatalf("err = %v, want a *failure.Error", err)
			}
			if got := statusOf(err); got != tt.status {
				t.Errorf("status = %d, want %d (%s)", got, tt.status, fe.Message)
			}
			if fe.Reason != tt.reason {
				t.Errorf("reason = %q, want %q (%s)", fe.Reason, tt.reason, fe.Message)
			}
			if !strings.Contains(fe.Message, tt.msg) {
				t.Errorf("message %q does not contain %q", fe.Message, tt.msg)
			}
		})
	}
}

// TestFilterLambdaLiterals checks that the literals of a lambda
// expression are checked as its set's: a malformed RUT compared with a
// client's, under a service's contracts' client... is refused where the
// target checks RUTs, and nothing is checked against the outer set's
// rules inside.
func TestFilterLambdaLiterals(t *testing.T) {
	t.Parallel()
	_, err := odata.Parse(url.Values{"$filter": {"client_rut eq 'nope'"}}, odata.Of(dataset.Clients))
	wantErr(t, err, 400, "client_rut")
	if _, err := odata.Parse(url.Values{"$filter": {"Contracts/any(c:c/code_contract eq 'nope')"}}, odata.Of(dataset.Clients)); err != nil {
		t.Fatal(err)
	}
}
