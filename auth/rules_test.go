package auth_test

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/informe/informe/auth"
	"github.com/informe/informe/internal/dataset"
	"github.com/informe/informe/internal/pgserver/pgtest"
)

func TestRulesKeptWithToken(t *testing.T) {
	ctx := context.Background()
	tokens := auth.NewStore(pgtest.New(t))
	for _, tt := range []struct {
		name  string
		rules *dataset.Rules
	}{
		{"NoRules", nil},
		{"Empty", &dataset.Rules{}},
		{"Columns", &dataset.Rules{Columns: []string{"contract_id", "client_rut"}, Mask: []string{"client_rut"}}},
		{"NoPersonal", &dataset.Rules{NoPersonal: true, Rows: "client_id eq 1", MaxRows: 10}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			secret, err := tokens.Create(ctx, tt.name, nil, time.Time{}, auth.WithRules(tt.rules))
			if err != nil {
				t.Fatal(err)
			}
			p, err := tokens.Authenticate(ctx, secret)
			if err != nil {
				t.Fatal(err)
			}
			want := tt.rules
			if want.Empty() {
				want = nil
			}
			if got := p.Rules; !reflect.DeepEqual(got, want) {
				t.Errorf("principal's rules = %+v, want %+v", got, want)
			}
			tok, err := tokens.Get(ctx, tt.name)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(tok.Rules, want) {
				t.Errorf("token's rules = %+v, want %+v", tok.Rules, want)
			}
			// Changed, then cleared.
			changed := &dataset.Rules{MaxRows: 5}
			if err := tokens.SetRules(ctx, tt.name, changed); err != nil {
				t.Fatal(err)
			}
			if p, _ := tokens.Authenticate(ctx, secret); !reflect.DeepEqual(p.Rules, changed) {
				t.Errorf("changed rules = %+v, want %+v", p.Rules, changed)
			}
			if err := tokens.SetRules(ctx, tt.name, nil); err != nil {
				t.Fatal(err)
			}
			if p, _ := tokens.Authenticate(ctx, secret); p.Rules != nil {
				t.Errorf("cleared rules = %+v, want none", p.Rules)
			}
		})
	}
	if err := tokens.SetRules(ctx, "nobody", nil); err == nil {
		t.Error("rules of an unknown token set")
	}
}
