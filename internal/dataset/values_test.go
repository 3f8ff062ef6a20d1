package dataset

import (
	"testing"
	"time"
)

// TestParseValue checks ParseValue's days and microseconds against the
// time package's, for years of four to seven digits and before Christ.
func TestParseValue(t *testing.T) {
	t.Parallel()
	day := func(y int, m time.Month, d int) int64 {
		return time.Date(y, m, d, 0, 0, 0, 0, time.UTC).Unix() / 86400
	}
	for _, tc := range []struct {
		kind Kind
		text string
		want int64
	}{
		{Date, "1970-01-02", 1},
		{Date, "0044-03-15 BC", day(-43, 3, 15)},
		{Date, "10000-01-01", day(10000, 1, 1)},
		{Date, "294276-12-31", day(294276, 12, 31)},
		{Date, "5874897-12-31", day(5874897, 12, 31)},
		{Timestamp, "12345-06-07 08:09:10", time.Date(12345, 6, 7, 8, 9, 10, 0, time.UTC).UnixMicro()},
		{Timestamptz, "12345-06-07 08:09:10.5-03", time.Date(12345, 6, 7, 11, 9, 10, 500_000_000, time.UTC).UnixMicro()},
		{Decimal, "-1500.5", -150050},
		{Integer, "+7", 7},
	} {
		got, ok := ParseValue(tc.kind, []byte(tc.text))
		if !ok || got != tc.want {
			t.Errorf("ParseValue(%s, %q) = %d, %v; want %d", tc.kind, tc.text, got, ok, tc.want)
		}
	}
	for _, tc := range []struct {
		kind Kind
		text string
	}{
		{Date, "010000-01-01"}, {Date, "10000-01-01 BC"}, {Date, "12345678-01-01"},
		{Timestamp, "294248-01-01 00:00:00"}, {Text, "x"}, {Decimal, "NaN"},
		{Date, ""}, {Date, " BC"}, {Timestamp, ""}, {Integer, ""}, {Decimal, ""},
	} {
		if got, ok := ParseValue(tc.kind, []byte(tc.text)); ok {
			t.Errorf("ParseValue(%s, %q) = %d, want false", tc.kind, tc.text, got)
		}
	}
}
