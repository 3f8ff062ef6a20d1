package auth

import (
	"context"
	"strconv"
	"strings"

	"github.com/informe/informe/internal/dataset"
	"github.com/informe/informe/internal/postgres"
)

// ruleValues returns r as api_tokens holds it: NULLs for none.
func ruleValues(r *dataset.Rules) postgres.TokenRules {
	if r.Empty() {
		return postgres.TokenRules{}
	}
	v := postgres.TokenRules{Columns: r.Columns, NoPersonal: r.NoPersonal}
	if r.Rows != "" {
		v.Rows = &r.Rows
	}
	if r.MaxRows > 0 {
		v.MaxRows = &r.MaxRows
	}
	if len(r.Mask) > 0 {
		v.Mask = r.Mask
	}
	return v
}

// rules returns the rules read, nil when there are none: what a token
// without rules carries, so that nothing is restricted for it.
func rules(v postgres.TokenRules) *dataset.Rules {
	r := &dataset.Rules{Columns: v.Columns, NoPersonal: v.NoPersonal, Mask: v.Mask}
	if v.Rows != nil {
		r.Rows = *v.Rows
	}
	if v.MaxRows != nil {
		r.MaxRows = *v.MaxRows
	}
	if r.Empty() {
		return nil
	}
	return r
}

// SetRules replaces the rules of the token named name (nil or empty:
// none); a server applies them from the token's next request. The caller
// has checked them (source.CheckRules). An unknown name is a
// failure.NotFound.
func (s *Store) SetRules(ctx context.Context, name string, r *dataset.Rules) error {
	rows, err := postgres.SetTokenRules(ctx, s.db, name, ruleValues(r))
	return changed("set rules", name, rows, err)
}

// ruleText returns the rule field of r as token show writes it.
func ruleText(r *dataset.Rules, field string) string {
	if r == nil {
		r = &dataset.Rules{}
	}
	switch field {
	case "columns":
		switch {
		case r.NoPersonal:
			return "no personal data"
		case r.Columns != nil:
			return oneLine(strings.Join(r.Columns, ","))
		}
		return "all"
	case "mask":
		if len(r.Mask) == 0 {
			return "none"
		}
		return oneLine(strings.Join(r.Mask, ","))
	case "rows":
		if r.Rows == "" {
			return "all"
		}
		return oneLine(r.Rows)
	}
	if r.MaxRows == 0 {
		return "no limit"
	}
	return strconv.FormatInt(r.MaxRows, 10)
}
