// Package schedule owns scheduled deliveries: schedules kept in
// PostgreSQL ([Store]), checked before they are kept ([Check]), and the
// [Runner] that every `informe serve` runs, which claims each occurrence
// in PostgreSQL so that it runs once however many instances are up,
// writes the file through the export's one road ([fileexport.Write]) to a
// destination ([destination.Destination]), and records each attempt in
// schedule_runs, the run history that the schedule-runs dataset reads.
// It knows no HTTP framework.
package schedule

import (
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/informe/informe/auth"
	"github.com/informe/informe/internal/dataset"
	"github.com/informe/informe/internal/destination"
	"github.com/informe/informe/internal/failure"
	"github.com/informe/informe/internal/fileexport"
	"github.com/informe/informe/internal/source"
	"github.com/informe/informe/report"
)

// Schedule is a delivery that runs by itself, as an operator wrote it.
type Schedule struct {
	// Name names the schedule, unique; chosen by an operator, it is shown
	// in the run history and in metrics' labels.
	Name string
	// Dataset is the dataset it writes: general-report, contracts, ...
	Dataset string
	// Query holds the filters, order and columns as the API's query
	// parameters ($filter, $orderby, columns, and the dataset's own
	// filters such as contract_id or rut), checked as the API checks them.
	Query url.Values
	// Format is csv, tsv, ndjson, json, xlsx, parquet or arrow.
	Format string
	// Options are the format's options.
	Options Options
	// Cron is the 5-field cron expression of its occurrences, read in
	// Zone ("" is America/Santiago).
	Cron, Zone string
	// To is the destination's URL (see docs/schedules.md).
	To string
	// TokenName names the token whose scopes (and rules) it reads with.
	TokenName string
	// Webhook, if not "", is an https:// URL told of each failed run.
	Webhook string
	// Always delivers each run, even when its bytes are those of the
	// last delivered run.
	Always bool
	// Paused schedules do not run.
	Paused bool
	// NextRun is its next occurrence due (read only).
	NextRun time.Time
}

// Options are a schedule's format options, as `informe export`'s.
type Options struct {
	Gzip         bool   `json:"gzip,omitempty"`
	BOM          bool   `json:"bom,omitempty"`
	NoHeader     bool   `json:"no_header,omitempty"`
	DecimalComma bool   `json:"decimal_comma,omitempty"`
	Labels       string `json:"labels,omitempty"` // "es" or "en"
}

// Checked is a schedule that can run: its query planned, its occurrences
// and its destination parsed.
type Checked struct {
	Plan        fileexport.Plan
	When        When
	Destination destination.Destination
	Webhook     destination.Destination // nil for none
	// Rules are the token's rules that hold in Plan, nil for none (set
	// when read as the token, [Store.readAs]).
	Rules *dataset.Rules
}

// Zone returns the time zone that zone names, "" being America/Santiago.
func Zone(zone string) (*time.Location, error) {
	if zone == "" {
		return destination.DefaultZone, nil
	}
	if zone == "Local" || strings.HasPrefix(zone, "/") {
		return nil, fmt.Errorf("unknown time zone %q: give an IANA name such as America/Santiago or UTC", zone)
	}
	loc, err := time.LoadLocation(zone)
	if err != nil {
		return nil, fmt.Errorf("unknown time zone %q: give an IANA name such as America/Santiago or UTC", zone)
	}
	return loc, nil
}

// Check checks everything about s that can be checked without connecting
// or reading a secret (the general report's plain counts read as counting
// says): the name, the dataset and its query (through the
// API's own parsing, [source.Source.Export]), the format and its
// options, the cron expression and the time zone, the destination's and
// the webhook's URLs. Its error joins (errors.Join) an Invalid
// [failure.Error] for each problem, whose Target names the field at fault
// (name, dataset, query, format, cron, tz, to, webhook) and whose message
// says what is wrong.
func Check(s Schedule, counting report.Counting) (Checked, error) {
	return checkAs(s, counting, nil)
}

// checkAs is [Check], the dataset read as the token as reads it when as
// is not nil ([source.As]): its hidden columns are unknown to the query,
// its masks and row condition hold, and its most rows.
func checkAs(s Schedule, counting report.Counting, as *auth.Token) (Checked, error) {
	var c Checked
	var errs []error
	bad := func(target, reason, format string, args ...any) {
		errs = append(errs, failure.Invalidf(target, reason, format, args...))
	}
	if s.Name == "" || strings.TrimSpace(s.Name) != s.Name || len(s.Name) > 100 || strings.ContainsFunc(s.Name, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
		bad("name", "name", "the schedule's name must be 1 to 100 characters with no surrounding spaces or control characters")
	}
	src, err := source.Named(s.Dataset, counting)
	if err != nil {
		bad("dataset", "dataset", "%s", err.Error())
	} else if as != nil {
		if src, err = source.As(src, as.Scopes, as.Rules); err != nil {
			errs = append(errs, &failure.Error{Code: failure.Forbidden, Target: "token_name", Reason: "token_rules",
				Message: fmt.Sprintf("the token %q: %s", as.Name, failure.MessageOf(err))})
		}
	}
	if s.Format == "" {
		bad("format", "format", "the format is required: csv, tsv, ndjson, json, xlsx, parquet or arrow")
	}
	if src != nil && s.Format != "" {
		q := s.Query
		if q == nil {
			q = url.Values{}
		}
		c.Plan, err = fileexport.NewPlan(fileexport.Flags{
			Source: src, Query: q, Output: "-", Format: s.Format, Gzip: s.Options.Gzip,
			BOM: s.Options.BOM, NoHeader: s.Options.NoHeader, DecimalComma: s.Options.DecimalComma, Labels: s.Options.Labels,
		})
		for _, e := range unjoin(err) {
			var fe *failure.Error
			if errors.As(e, &fe) {
				errs = append(errs, &failure.Error{Code: failure.Invalid, Target: "query", Reason: fe.Reason, Message: "query: " + fe.Message})
				continue
			}
			target := "format"
			if strings.Contains(e.Error(), "--labels") || strings.Contains(e.Error(), "--decimal-comma") {
				target = "options"
			}
			bad(target, "format", "%s", strings.TrimPrefix(e.Error(), "--format: "))
		}
	}
	loc, err := Zone(s.Zone)
	if err != nil {
		bad("tz", "time_zone", "%s", err.Error())
		loc = destination.DefaultZone
	}
	if c.When, err = ParseWhen(s.Cron, loc); err != nil {
		bad("cron", "cron", "cron: %s", err.Error())
	}
	if s.To == "" {
		bad("to", "destination", "the destination is required: a file://, sftp://, s3:// or https:// URL")
	} else if c.Destination, err = destination.Parse(s.To); err != nil {
		bad("to", "destination", "destination: %s", failure.MessageOf(err))
	}
	if s.Webhook != "" {
		if !strings.HasPrefix(s.Webhook, "https://") {
			bad("webhook", "webhook", "the webhook must be an https:// URL")
		} else if c.Webhook, err = destination.Parse(s.Webhook); err != nil {
			bad("webhook", "webhook", "webhook: %s", failure.MessageOf(err))
		}
	}
	if s.TokenName == "" {
		bad("token_name", "token", "the token name is required: the token whose scopes and rules the schedule reads with")
	}
	return c, errors.Join(errs...)
}

// unjoin returns the errors err joins, or err alone.
func unjoin(err error) []error {
	if err == nil {
		return nil
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return slices.Clone(j.Unwrap())
	}
	return []error{err}
}
