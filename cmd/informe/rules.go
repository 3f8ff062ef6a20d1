package main

import (
	"errors"
	"strconv"
	"strings"

	"github.com/urfave/cli/v3"

	"github.com/informe/informe/internal/dataset"
	"github.com/informe/informe/internal/failure"
	"github.com/informe/informe/internal/source"
)

// ruleFlags are token create's and change's flags of what a token may
// see, as written.
type ruleFlags struct {
	columns, mask, rows, maxRows string
	noPersonal                   bool
}

// ruleFlagNames are the flags of [ruleFlags], which token change reads
// as something to change.
var ruleFlagNames = []string{"columns", "no-personal", "mask", "rows", "max-rows"}

// flags declares r's flags on f.
func (r *ruleFlags) flags(f *form) []cli.Flag {
	return []cli.Flag{
		f.text("columns", "INFORME_TOKEN_COLUMNS", "", &r.columns,
			"the only columns the token may read, comma-separated, of any dataset (docs/columns.md); empty: all"),
		typed(f, "no-personal", "INFORME_TOKEN_NO_PERSONAL", false, &r.noPersonal,
			"the token reads only the columns that hold no personal data"),
		f.text("mask", "INFORME_TOKEN_MASK", "", &r.mask,
			"personal columns the token sees masked, comma-separated; empty: none"),
		f.text("rows", "INFORME_TOKEN_ROWS", "", &r.rows,
			"a condition in the OData feed's $filter language that every read of the token is ANDed with; empty: none"),
		f.text("max-rows", "INFORME_TOKEN_MAX_ROWS", "0", &r.maxRows,
			"the most rows one response may carry (a larger export is refused); 0: no limit"),
	}
}

// given reports whether any of r's flags was given on f.
func (r *ruleFlags) given(f *form) bool {
	for _, n := range ruleFlagNames {
		if f.set(n) {
			return true
		}
	}
	return false
}

// apply returns base (nil: no rules) with the rules given on f, and
// records on f what does not parse or does not check
// ([source.CheckRules]). Giving --columns clears --no-personal and the
// other way round; an empty value clears its rule.
func (r *ruleFlags) apply(f *form, base *dataset.Rules) *dataset.Rules {
	var out dataset.Rules
	if base != nil {
		out = *base
	}
	if f.set("columns") {
		out.Columns, out.NoPersonal = names(r.columns), false
	}
	if f.set("no-personal") {
		if f.set("columns") && r.noPersonal && out.Columns != nil {
			f.fail("no-personal", "give --columns or --no-personal, not both")
			return nil
		}
		out.NoPersonal = r.noPersonal
		if r.noPersonal {
			out.Columns = nil
		}
	}
	if f.set("mask") {
		out.Mask = names(r.mask)
	}
	if f.set("rows") {
		out.Rows = strings.TrimSpace(r.rows)
	}
	if f.set("max-rows") {
		n, err := strconv.ParseInt(r.maxRows, 10, 64)
		if err != nil || n < 0 {
			f.fail("max-rows", "must be a whole number, 0 for no limit, got %q", r.maxRows)
			return nil
		}
		out.MaxRows = n
	}
	if err := source.CheckRules(&out); err != nil {
		var fe *failure.Error
		target := "columns"
		msg := err.Error()
		if errors.As(err, &fe) {
			target, msg = fe.Target, fe.Message
		}
		f.fail(target, "%s", msg)
		return nil
	}
	return &out
}

// names splits a comma-separated list; nil for an empty one.
func names(s string) []string {
	var out []string
	for _, n := range strings.Split(s, ",") {
		if n = strings.TrimSpace(n); n != "" {
			out = append(out, n)
		}
	}
	return out
}
