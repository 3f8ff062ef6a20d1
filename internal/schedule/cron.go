package schedule

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/robfig/cron/v3"
)

// When is a checked cron expression read in a time zone: when a
// schedule's occurrences are.
type When struct {
	spec *cron.SpecSchedule
	loc  *time.Location
}

// starBit marks a day field written "*" or "?" (robfig/cron's own): a day
// then matches when both day fields do, else when either does, as cron's.
const starBit = 1 << 63

// yearsAhead bounds the search for the next occurrence: an expression
// that matches no day in that time (February 30th) never runs.
const yearsAhead = 30

// ParseWhen checks expr, a cron expression of 5 fields (minute, hour,
// day of month, month, day of week, as crontab(5) writes them, or one of
// @yearly, @monthly, @weekly, @daily, @hourly), read in loc. An
// expression cron cannot read, one with a time zone of its own (give the
// zone apart), @every, or one that never matches is refused, saying why.
func ParseWhen(expr string, loc *time.Location) (When, error) {
	f := strings.Fields(expr)
	if len(f) > 0 && (strings.HasPrefix(f[0], "CRON_TZ=") || strings.HasPrefix(f[0], "TZ=")) {
		return When{}, errors.New("write the time zone apart (--tz), not in the cron expression")
	}
	if len(f) > 0 && strings.HasPrefix(f[0], "@every") {
		return When{}, errors.New("@every is not a cron expression: write minute hour day-of-month month day-of-week")
	}
	s, err := cron.ParseStandard(expr)
	if err != nil {
		return When{}, fmt.Errorf("not a cron expression of 5 fields (minute hour day-of-month month day-of-week): %s", strings.TrimPrefix(err.Error(), "failed to parse "))
	}
	spec, ok := s.(*cron.SpecSchedule)
	if !ok {
		return When{}, errors.New("not a cron expression of 5 fields")
	}
	w := When{spec: spec, loc: loc}
	if w.Next(time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)).IsZero() {
		return When{}, errors.New("the cron expression matches no day: it would never run")
	}
	return w, nil
}

// Location returns w's time zone.
func (w When) Location() *time.Location { return w.loc }

// wall is a local date and time to the minute, with no zone.
type wall struct{ y, mo, d, h, mi int }

func wallOf(t time.Time) wall {
	return wall{t.Year(), int(t.Month()), t.Day(), t.Hour(), t.Minute()}
}

func (a wall) after(b wall) bool {
	for _, p := range [][2]int{{a.y, b.y}, {a.mo, b.mo}, {a.d, b.d}, {a.h, b.h}, {a.mi, b.mi}} {
		if p[0] != p[1] {
			return p[0] > p[1]
		}
	}
	return false
}

// Next returns w's first occurrence after t, or the zero time if there is
// none in the next 30 years. Occurrences are local times in w's zone,
// each run once: a local time that a daylight-saving change skips (the
// clock jumps from 24:00 to 01:00) runs at the first instant after it,
// the change itself; one it repeats (the clock goes back from 24:00 to
// 23:00) runs at its first instance only.
func (w When) Next(t time.Time) time.Time {
	from := wallOf(t.In(w.loc))
	day := time.Date(from.y, time.Month(from.mo), from.d, 0, 0, 0, 0, time.UTC)
	for range yearsAhead * 366 {
		if w.dayMatches(day) {
			for h := range 24 {
				if w.spec.Hour&(1<<uint(h)) == 0 {
					continue
				}
				for mi := range 60 {
					if w.spec.Minute&(1<<uint(mi)) == 0 {
						continue
					}
					c := wall{day.Year(), int(day.Month()), day.Day(), h, mi}
					if !c.after(from) {
						continue
					}
					if at := w.instant(c, t); !at.IsZero() {
						return at
					}
				}
			}
		}
		day = day.AddDate(0, 0, 1)
	}
	return time.Time{}
}

// dayMatches reports whether the date of day (read in UTC) is one of w's.
func (w When) dayMatches(day time.Time) bool {
	s := w.spec
	if s.Month&(1<<uint(day.Month())) == 0 {
		return false
	}
	dom := s.Dom&(1<<uint(day.Day())) != 0
	dow := s.Dow&(1<<uint(day.Weekday())) != 0
	if s.Dom&starBit != 0 || s.Dow&starBit != 0 {
		return dom && dow
	}
	return dom || dow
}

// instant returns the first instant after t at which w's zone shows c, or
// the instant of the daylight-saving change that skips c; zero if both
// instants that show c are not after t.
func (w When) instant(c wall, t time.Time) time.Time {
	naive := time.Date(c.y, time.Month(c.mo), c.d, c.h, c.mi, 0, 0, time.UTC)
	// The offsets in force a day before and a day after: the two zones of
	// any change near c (the same one, most days).
	_, before := naive.Add(-26 * time.Hour).In(w.loc).Zone()
	_, after := naive.Add(26 * time.Hour).In(w.loc).Zone()
	var shows []time.Time
	for _, off := range []int{before, after} {
		at := naive.Add(-time.Duration(off) * time.Second)
		if wallOf(at.In(w.loc)) == c && (len(shows) == 0 || !shows[0].Equal(at)) {
			shows = append(shows, at)
		}
	}
	if len(shows) == 0 {
		// Skipped: the change's instant, where the zone after it starts.
		late := naive.Add(-time.Duration(min(before, after)) * time.Second)
		start, _ := late.In(w.loc).ZoneBounds()
		if start.After(t) {
			return start
		}
		return time.Time{}
	}
	if len(shows) == 2 && shows[1].Before(shows[0]) {
		shows[0], shows[1] = shows[1], shows[0]
	}
	for _, at := range shows {
		if at.After(t) {
			return at
		}
	}
	return time.Time{}
}
