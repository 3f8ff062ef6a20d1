package auth

import (
	"fmt"
	"io"
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
		state, expires := "active", "never"
		if t.ExpiresAt != nil {
			expires = t.ExpiresAt.UTC().Format(time.DateTime)
			if !now.Before(*t.ExpiresAt) {
				state = "expired"
			}
		}
		if t.RevokedAt != nil {
			state = "revoked " + t.RevokedAt.UTC().Format(time.DateTime)
		}
		// Names are free text: a tab or newline in one would break the table.
		name := strings.NewReplacer("\t", " ", "\n", " ", "\r", " ").Replace(t.Name)
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", name, strings.Join(scopeStrings(t.Scopes), ","),
			t.CreatedAt.UTC().Format(time.DateTime), expires, state)
	}
	return tw.Flush()
}
