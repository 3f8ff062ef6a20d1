package auth

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/informe/informe/internal/dataset"
	"github.com/informe/informe/internal/failure"
	"github.com/informe/informe/internal/postgres"
)

// ruleColumns are api_tokens' columns of a token's rules, in the order
// of [ruleValues] and [ruleScan.dest].
const ruleColumns = "rule_columns, rule_no_personal, rule_mask, rule_rows, rule_max_rows"

// ruleValues returns r as the values of [ruleColumns]: NULLs for none.
func ruleValues(r *dataset.Rules) [5]any {
	if r.Empty() {
		return [5]any{nil, false, nil, nil, nil}
	}
	var rows, maxRows any
	if r.Rows != "" {
		rows = r.Rows
	}
	if r.MaxRows > 0 {
		maxRows = r.MaxRows
	}
	var mask any
	if len(r.Mask) > 0 {
		mask = r.Mask
	}
	var cols any
	if r.Columns != nil {
		cols = r.Columns
	}
	return [5]any{cols, r.NoPersonal, mask, rows, maxRows}
}

// ruleScan holds [ruleColumns] as read.
type ruleScan struct {
	columns, mask []string
	noPersonal    bool
	rows          *string
	maxRows       *int64
}

func (rs *ruleScan) dest() []any {
	return []any{&rs.columns, &rs.noPersonal, &rs.mask, &rs.rows, &rs.maxRows}
}

// rules returns the rules read, nil when there are none: what a token
// without rules carries, so that nothing is restricted for it.
func (rs *ruleScan) rules() *dataset.Rules {
	r := &dataset.Rules{Columns: rs.columns, NoPersonal: rs.noPersonal, Mask: rs.mask}
	if rs.rows != nil {
		r.Rows = *rs.rows
	}
	if rs.maxRows != nil {
		r.MaxRows = *rs.maxRows
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
	v := ruleValues(r)
	tag, err := s.db.Exec(ctx,
		"UPDATE api_tokens SET ("+ruleColumns+") = ($2, $3, $4, $5, $6) WHERE name = $1", name, v[0], v[1], v[2], v[3], v[4])
	if err != nil {
		return postgres.Classify(fmt.Errorf("auth: set rules: %w", err))
	}
	if tag.RowsAffected() == 0 {
		return failure.Errorf(failure.NotFound, "no token named %q", name)
	}
	return nil
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
