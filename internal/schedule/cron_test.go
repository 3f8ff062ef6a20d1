package schedule

import (
	"testing"
	"time"
)

func TestWhenNext(t *testing.T) {
	santiago, err := time.LoadLocation("America/Santiago")
	if err != nil {
		t.Fatal(err)
	}
	utc := func(s string) time.Time {
		t.Helper()
		at, err := time.Parse(time.RFC3339, s)
		if err != nil {
			t.Fatal(err)
		}
		return at
	}
	// Chile's clocks: 2026-04-05 00:00 -03 back to 2026-04-04 23:00 -04
	// (23:xx repeated); 2026-09-06 00:00 -04 on to 01:00 -03 (00:xx skipped).
	tests := []struct {
		name, expr string
		after      string
		want       []string // the next occurrences, in turn
	}{
		{"OK", "0 6 * * *", "2026-03-01T12:00:00Z", []string{"2026-03-02T09:00:00Z", "2026-03-03T09:00:00Z"}},
		{"OKWeekdays", "30 7 * * 1-5", "2026-03-06T12:00:00Z", []string{"2026-03-09T10:30:00Z"}}, // Friday noon -> Monday
		{"OKDayOrWeekday", "0 0 1 * 0", "2026-03-02T12:00:00Z", []string{"2026-03-08T03:00:00Z", "2026-03-15T03:00:00Z"}},
		{"SpringForwardSkipped", "30 0 * * *", "2026-09-05T12:00:00Z", []string{"2026-09-06T04:00:00Z", "2026-09-07T03:30:00Z"}},
		{"SpringForwardMidnight", "0 0 * * *", "2026-09-05T12:00:00Z", []string{"2026-09-06T04:00:00Z", "2026-09-07T03:00:00Z"}},
		{"SpringForwardTwoSkippedOnce", "0,30 0 * * *", "2026-09-05T12:00:00Z", []string{"2026-09-06T04:00:00Z", "2026-09-07T03:00:00Z"}},
		{"FallBackOnce", "30 23 * * *", "2026-04-04T12:00:00Z", []string{"2026-04-05T02:30:00Z", "2026-04-06T03:30:00Z"}},
		{"FallBackEveryHalfHour", "*/30 23 * * *", "2026-04-05T02:10:00Z", []string{"2026-04-05T02:30:00Z", "2026-04-06T03:00:00Z"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w, err := ParseWhen(tt.expr, santiago)
			if err != nil {
				t.Fatal(err)
			}
			at := utc(tt.after)
			for i, want := range tt.want {
				got := w.Next(at)
				if !got.Equal(utc(want)) {
					t.Fatalf("occurrence %d after %s = %s, want %s", i+1, tt.after, got.UTC().Format(time.RFC3339), want)
				}
				at = got
			}
		})
	}
}

func TestParseWhenRefuses(t *testing.T) {
	tests := []struct{ name, expr, want string }{
		{"ErrSixFields", "0 0 6 * * *", "not a cron expression of 5 fields (minute hour day-of-month month day-of-week): expected exactly 5 fields, found 6: [0 0 6 * * *]"},
		{"ErrRange", "61 * * * *", "not a cron expression of 5 fields (minute hour day-of-month month day-of-week): end of range (61) above maximum (59): 61"},
		{"ErrNever", "0 0 30 2 *", "the cron expression matches no day: it would never run"},
		{"ErrZone", "CRON_TZ=UTC 0 6 * * *", "write the time zone apart (--tz), not in the cron expression"},
		{"ErrEvery", "@every 5m", "@every is not a cron expression: write minute hour day-of-month month day-of-week"},
		{"ErrEmpty", "", "not a cron expression of 5 fields (minute hour day-of-month month day-of-week): empty spec string"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseWhen(tt.expr, time.UTC)
			if err == nil || err.Error() != tt.want {
				t.Fatalf("ParseWhen(%q) = %v, want %q", tt.expr, err, tt.want)
			}
		})
	}
}

// FuzzParseWhen checks that any expression either is refused or gives
// occurrences after the time asked, each a minute that the zone shows.
func FuzzParseWhen(f *testing.F) {
	for _, s := range []string{"0 6 * * *", "*/15 8-18 * * 1-5", "30 0 * * *", "0 0 1,15 * *", "@daily", "0 0 30 2 *", "61 * * * *", "CRON_TZ=UTC 0 6 * * *"} {
		f.Add(s, int64(1788667200)) // 2026-09-06, a daylight-saving change in Santiago
	}
	loc, err := Zone("")
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, expr string, unix int64) {
		w, err := ParseWhen(expr, loc)
		if err != nil {
			return
		}
		at := time.Unix(unix%(1<<32), 0)
		next := w.Next(at)
		if next.IsZero() {
			return
		}
		if !next.After(at) {
			t.Fatalf("Next(%s) = %s, not after", at, next)
		}
		if next.Second() != 0 {
			t.Fatalf("Next(%s) = %s, not on a minute", at, next)
		}
	})
}
