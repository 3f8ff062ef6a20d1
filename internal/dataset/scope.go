package dataset

import "slices"

// Scope names a permission a token carries: what a token needs to read a
// dataset ([Dataset.Scope]). Package auth gives tokens their scopes.
type Scope string

// The scopes.
const (
	ReportRead Scope = "report:read" // the general report and the entities at their own grain
	UsersRead  Scope = "users:read"  // GET /users
	// SchedulesRead reads the scheduled deliveries (schedules) and their
	// run history (schedule-runs): not given to a new token unless asked
	// for, since it says where the files go.
	SchedulesRead Scope = "schedules:read"
)

// Scopes returns the scopes the datasets of [All] need, each once, in
// their order.
func Scopes() []Scope {
	var out []Scope
	for _, d := range All {
		if !slices.Contains(out, d.Scope) {
			out = append(out, d.Scope)
		}
	}
	return out
}
