package schedule

import (
	"bytes"
	"context"
	"net/url"
	"strings"
	"testing"

	"github.com/informe/informe/auth"
	"github.com/informe/informe/internal/dataset"
	"github.com/informe/informe/internal/failure"
)

// TestReadsAsTokensRules checks that a schedule reads with its token's
// rules, as the token reads through the API: a token that may not see
// personal data gets a file without them, the same bytes as its API
// export, and a schedule that names a column the token may not see is
// refused when added, as a column that does not exist is.
func TestReadsAsTokensRules(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := newEnv(t)
	if err := auth.NewStore(e.pool).SetRules(ctx, "finanzas", &dataset.Rules{NoPersonal: true}); err != nil {
		t.Fatal(err)
	}
	p := folderPlace(t)
	clk := &clock{t: santiago(2026, 3, 1, 0, 0)}
	sc := Schedule{Name: "sin-datos-personales", Dataset: "general-report", Query: pending, Format: "csv", Cron: "0 6 * * *",
		To: p.to, TokenName: "finanzas", Always: true}
	if err := e.store.Add(ctx, sc, clk.Now()); err != nil {
		t.Fatal(err)
	}
	clk.Set(santiago(2026, 3, 1, 6, 0))
	runs, err := e.runner("a", clk).Tick(ctx)
	if err != nil || len(runs) != 1 || runs[0].Outcome != Delivered {
		t.Fatalf("runs %+v, %v; want one delivered", runs, err)
	}
	got, ok := p.read(t, "pendientes-2026-03-01.csv")
	if !ok {
		t.Fatal("no file delivered")
	}
	want := e.export(t, "csv", pending) // as the token reads it now
	if !bytes.Equal(got, want) {
		t.Errorf("the file holds %d bytes, the token's API export %d", len(got), len(want))
	}
	header, _, _ := strings.Cut(string(got), "\n")
	for _, c := range dataset.GeneralReport.Columns {
		if c.Personal != dataset.NotPersonal && strings.Contains(","+header+",", ","+c.Name+",") {
			t.Errorf("the file's header has the personal column %s: %s", c.Name, header)
		}
	}
	if !strings.HasPrefix(header, "contract_id,") {
		t.Errorf("header %q", header)
	}

	hidden := sc
	hidden.Name, hidden.Query = "por-correo", url.Values{"$filter": {"client_email eq 'x@y.cl'"}}
	missing := sc
	missing.Name, missing.Query = "por-nada", url.Values{"$filter": {"no_such_column eq 'x@y.cl'"}}
	errHidden, errMissing := e.store.Add(ctx, hidden, clk.Now()), e.store.Add(ctx, missing, clk.Now())
	if errHidden == nil || errMissing == nil {
		t.Fatalf("adding a filter on a hidden column: %v; on a missing one: %v; want both refused", errHidden, errMissing)
	}
	if failure.CodeOf(errHidden) != failure.CodeOf(errMissing) ||
		strings.ReplaceAll(errHidden.Error(), "client_email", "C") != strings.ReplaceAll(errMissing.Error(), "no_such_column", "C") {
		t.Errorf("a hidden column is told apart from a missing one:\n%v\n%v", errHidden, errMissing)
	}
}
