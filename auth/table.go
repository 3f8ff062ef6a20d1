package auth

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
)

// WriteTable writes tokens to w as an aligned text table for people, one
// line per token under a header: NAME, SCOPES, CREATED, EXPIRES ("never"
// when the token does not expire) and STATE, which is "active", "expired"
// (as of now) or "revoked" with its time. Times are UTC. It never writes a
// secret (a [Token] holds none) and returns the first error writing to w.
func WriteTable(w io.Writer, tokens []Token, now time.Time) error {
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tSCOPES\tCREATED\tEXPIRES\tSTATE")
	for _, t := range tokens {
		state, expires := stateOf(t, now)
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", oneLine(t.Name), strings.Join(scopeStrings(t.Scopes), ","),
			t.CreatedAt.UTC().Format(time.DateTime), expires, state)
	}
	return tw.Flush()
}

// stateOf returns t's state as of now ("active", "expired", or "revoked"
// with its time) and its expiry ("never" when it has none), in UTC.
func stateOf(t Token, now time.Time) (state, expires string) {
	state, expires = "active", "never"
	if t.ExpiresAt != nil {
		expires = t.ExpiresAt.UTC().Format(time.DateTime)
		if !now.Before(*t.ExpiresAt) {
			state = "expired"
		}
	}
	if t.RevokedAt != nil {
		state = "revoked " + t.RevokedAt.UTC().Format(time.DateTime)
	}
	return state, expires
}

// oneLine is a token's name with tabs and line breaks as spaces: names are
// free text, and one of those would break a table.
func oneLine(name string) string {
	return strings.NewReplacer("\t", " ", "\n", " ", "\r", " ").Replace(name)
}

// WriteToken writes token t to w for people, one "field: value" line
// each: name, scopes, created, expires and state as [WriteTable] writes
// them, and max exports, its own limit of big responses at once ("default"
// for the server's --max-exports-per-token, 0 for none of its own). It
// never writes a secret and returns the first error writing to w.
func WriteToken(w io.Writer, t Token, now time.Time) error {
	state, expires := stateOf(t, now)
	maxExports := "default"
	if t.MaxExports != nil {
		maxExports = strconv.Itoa(*t.MaxExports)
	}
	tw := tabwriter.NewWriter(w, 0, 8, 1, ' ', 0)
	for _, f := range [][2]string{
		{"name", oneLine(t.Name)},
		{"scopes", strings.Join(scopeStrings(t.Scopes), ",")},
		{"created", t.CreatedAt.UTC().Format(time.DateTime)},
		{"expires", expires},
		{"state", state},
		{"max exports", maxExports},
		{"columns", ruleText(t.Rules, "columns")},
		{"mask", ruleText(t.Rules, "mask")},
		{"rows", ruleText(t.Rules, "rows")},
		{"max rows", ruleText(t.Rules, "max rows")},
	} {
		fmt.Fprintf(tw, "%s:\t%s\n", f[0], f[1])
	}
	return tw.Flush()
}
