package source_test

import (
	"errors"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/informe/informe/internal/dataset"
	"github.com/informe/informe/internal/failure"
	"github.com/informe/informe/internal/odata"
	"github.com/informe/informe/internal/secret"
	"github.com/informe/informe/internal/source"
	"github.com/informe/informe/report"
)

// src returns the source called name.
func src(name string) *source.Source {
	s, err := source.Named(name, report.Maintained)
	if err != nil {
		panic(err)
	}
	return s
}

// names returns the names of q's columns.
func names(q dataset.Query) []string {
	var out []string
	for _, c := range q.Columns {
		out = append(out, c.Name)
	}
	return out
}

// refusal returns err's failure, failing t if err is none.
func refusal(t *testing.T, err error) *failure.Error {
	t.Helper()
	var f *failure.Error
	if !errors.As(err, &f) {
		t.Fatalf("error = %v, want a *failure.Error", err)
	}
	return f
}

func TestExportCompilesEveryDoorsParameters(t *testing.T) {
	t.Parallel()
	rep := source.Report(report.Maintained)
	tests := []struct {
		name   string
		src    *source.Source
		query  string
		other  []string
		cols   []string // nil: every column of the dataset
		eq     []dataset.Eq
		more   bool // conditions beyond the spec's equalities
		sorted bool
	}{
		{name: "nothing", src: rep, query: ""},
		{name: "the token and jQuery's cache-buster", src: rep, query: "access_token=x&_=1"},
		{name: "the caller's own parameter", src: rep, query: "format=csv", other: []string{"format"}},
		{
			name: "the spec's filters", src: rep, query: "contract_id=7&code_contract=C-1&client_id=3&rut=12.345.678-5",
			eq: []dataset.Eq{
				{Column: "key_contract_id", Value: int64(7)}, {Column: "key_code_contract", Value: "C-1"},
				{Column: "key_client_id", Value: int64(3)}, {Column: "key_client_rut", Value: "123456785"},
			},
		},
		{name: "columns", src: rep, query: "columns=task,contract_id", cols: []string{"task", "contract_id"}},
		{name: "$select", src: rep, query: "$select=task,contract_id", cols: []string{"task", "contract_id"}},
		{name: "$select=*", src: rep, query: "$select=*"},
		{name: "$filter", src: rep, query: "$filter=task_progress gt 50", more: true},
		// $filter's equalities are conditions on the typed view like any
		// other: only the spec's filters are the plain reading's.
		{name: "$filter of an equality", src: rep, query: "$filter=contract_id eq 7", more: true},
		{name: "$orderby", src: rep, query: "$orderby=costo_servicio desc", sorted: true},
		{name: "the users' columns", src: src("users"), query: "columns=id,email", cols: []string{"id", "email"}},
		{name: "a grain's $filter", src: src("contracts"), query: "$filter=costo_servicio gt 100000", more: true},
		{name: "a grain's columns", src: src("tasks"), query: "columns=task_id", cols: []string{"task_id"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			values, err := url.ParseQuery(tt.query)
			if err != nil {
				t.Fatal(err)
			}
			q, err := tt.src.Export(values, tt.other...)
			if err != nil {
				t.Fatalf("Export(%q) = %v", tt.query, err)
			}
			// A whole export: every row, counted.
			if q.Skip != 0 || q.Limit != -1 || !q.Count {
				t.Errorf("Skip, Limit, Count = %d, %d, %v; want 0, -1, true", q.Skip, q.Limit, q.Count)
			}
			want := tt.cols
			if want == nil {
				for _, c := range tt.src.Columns {
					want = append(want, c.Name)
				}
			}
			if got := names(q); !slices.Equal(got, want) {
				t.Errorf("columns = %v, want %v", got, want)
			}
			if got := q.Equalities(); !slices.Equal(got, tt.eq) {
				t.Errorf("equalities = %v, want %v", got, tt.eq)
			}
			if q.FilterPlain() == tt.more {
				t.Errorf("FilterPlain() = %v, want %v", q.FilterPlain(), !tt.more)
			}
			if q.Filtered() != (tt.more || len(tt.eq) > 0) {
				t.Errorf("Filtered() = %v", q.Filtered())
			}
			if (len(q.Sort) > 0) != tt.sorted {
				t.Errorf("Sort = %v, want sorted %v", q.Sort, tt.sorted)
			}
		})
	}
}

func TestExportRefusesWhatItCannotHonour(t *testing.T) {
	t.Parallel()
	rep := source.Report(report.Maintained)
	tests := []struct {
		name, query   string
		src           *source.Source
		target        string
		reason        string
		messageHas    string
		messageHasNot string
	}{
		{
			name: "an unknown parameter", src: rep, query: "contract=7", target: "contract", reason: "unknown_parameter",
			messageHas: "contract_id, code_contract, client_id, rut, columns",
		},
		{
			// A page's parameters are the page's: a whole export has
			// every row, and an ignored page would be a wrong answer.
			name: "page on a whole export", src: rep, query: "page=2", target: "page", reason: "unknown_parameter",
		},
		{name: "the spec's filter on a grain that lacks it", src: src("contracts"), query: "contract_id=7", target: "contract_id", reason: "unknown_parameter"},
		{name: "columns and $select", src: rep, query: "columns=task&$select=task", target: "$select", reason: "select_and_columns"},
		{name: "a RUT with a wrong check digit", src: rep, query: "rut=12.345.678-9", target: "rut", reason: "rut_check_digit"},
		{name: "a malformed RUT", src: rep, query: "rut=abc", target: "rut", reason: "rut_malformed"},
		{name: "a contract id that is no integer", src: rep, query: "contract_id=x", target: "contract_id"},
		{name: "a parameter given twice", src: rep, query: "client_id=1&client_id=2", target: "client_id"},
		{name: "an unknown column", src: src("users"), query: "columns=id,client_rut", target: "columns"},
		{name: "a $filter on an unknown property", src: rep, query: "$filter=nothing eq 1", target: "$filter"},
		{name: "an unknown $-option", src: rep, query: "$expand=Tasks", target: "$expand"},
		{
			// The parameter's name may be a token pasted in the wrong
			// place: the message never repeats it.
			name: "a token as a parameter's name", src: rep, query: secret.TokenPrefix + strings.Repeat("aB", 21) + "c=1",
			reason: "unknown_parameter", messageHasNot: strings.Repeat("aB", 21),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			values, err := url.ParseQuery(tt.query)
			if err != nil {
				t.Fatal(err)
			}
			_, err = tt.src.Export(values)
			if err == nil {
				t.Fatalf("Export(%q) accepted it", tt.query)
			}
			f := refusal(t, err)
			if f.Code != failure.Invalid && f.Code != failure.NotImplemented {
				t.Errorf("code = %v, want Invalid or NotImplemented", f.Code)
			}
			if tt.target != "" && f.Target != tt.target {
				t.Errorf("target = %q, want %q (%s)", f.Target, tt.target, f.Message)
			}
			if tt.reason != "" && f.Reason != tt.reason {
				t.Errorf("reason = %q, want %q (%s)", f.Reason, tt.reason, f.Message)
			}
			if !strings.Contains(f.Message, tt.messageHas) {
				t.Errorf("message %q does not say %q", f.Message, tt.messageHas)
			}
			if tt.messageHasNot != "" && strings.Contains(f.Message+f.Target, tt.messageHasNot) {
				t.Errorf("the refusal repeats %q: %q, target %q", tt.messageHasNot, f.Message, f.Target)
			}
		})
	}
}

func TestFeedReadsAPageWithItsExpansions(t *testing.T) {
	t.Parallel()
	values, err := url.ParseQuery("$filter=costo_servicio gt 1&$expand=Tasks($select=task,task_status),Client&$skip=3")
	if err != nil {
		t.Fatal(err)
	}
	oq, err := odata.Parse(values, src("contracts").Set)
	if err != nil {
		t.Fatal(err)
	}
	q := src("contracts").Feed(oq, 100, true)
	if q.Limit != 100 || !q.Count || !q.Position || q.Skip != 3 {
		t.Errorf("Limit, Count, Position, Skip = %d, %v, %v, %d; want 100, true, true, 3", q.Limit, q.Count, q.Position, q.Skip)
	}
	if q.FilterPlain() {
		t.Error("the $filter was not compiled into the page's query")
	}
	if len(q.Expand) != 2 {
		t.Fatalf("Expand = %d items, want one per expanded navigation (2)", len(q.Expand))
	}
	// The related rows are read from each target, by the columns that
	// relate them, with their key and the columns $select names.
	tasks, client := q.Expand[0], q.Expand[1]
	if tasks.Target != src("tasks").Dataset || client.Target != src("clients").Dataset {
		t.Errorf("Expand reads %s and %s; want tasks and clients", tasks.Target.Name, client.Target.Name)
	}
	if tasks.Local != "key_contract_id" || tasks.Remote != "key_contract_id" || client.Local != "key_client_id" || client.Remote != "key_client_id" {
		t.Errorf("related by %s = %s and %s = %s", tasks.Local, tasks.Remote, client.Local, client.Remote)
	}
	var names []string
	for _, c := range tasks.Columns {
		names = append(names, c.Name)
	}
	if strings.Join(names, ",") != "task_id,task,task_status" {
		t.Errorf("the tasks' columns are %v, want the key, then task and task_status", names)
	}
	if got := q.Reads(); len(got) != 2 || got[0] != src("tasks").Text || got[1] != src("clients").Text {
		t.Errorf("Reads() = %v, want the views of tasks and clients", got)
	}
}

func TestNamed(t *testing.T) {
	t.Parallel()
	for _, s := range source.All(source.Report(report.FromView)) {
		got, err := source.Named(s.Name, report.FromView)
		if err != nil || got.Name != s.Name || got.Set != s.Set {
			t.Errorf("Named(%q) = %v, %v", s.Name, got, err)
		}
	}
	_, err := source.Named("payments", report.Maintained)
	if err == nil || !strings.Contains(err.Error(), "general-report, users, contracts") || !strings.Contains(err.Error(), `"payments"`) {
		t.Errorf("Named(payments) = %v; want an error listing the datasets there are", err)
	}
}
