package compress

import (
	"strings"
	"testing"
)

func TestNegotiate(t *testing.T) {
	for _, tt := range []struct {
		name   string
		fields []string
		want   Coding
	}{
		{"NoField", nil, Identity},
		{"EmptyField", []string{""}, Identity},
		{"Gzip", []string{"gzip"}, Gzip},
		{"XGzip", []string{"x-gzip"}, Gzip},
		{"Zstd", []string{"zstd"}, Zstd},
		{"CaseInsensitive", []string{"GZip"}, Gzip},
		{"Chrome", []string{"gzip, deflate, br, zstd"}, Zstd},
		{"Curl", []string{"deflate, gzip, br, zstd"}, Zstd},
		{"PowerQuery", []string{"gzip, deflate"}, Gzip},
		{"UnknownOnly", []string{"br, deflate"}, Identity},
		{"HigherQWins", []string{"zstd;q=0.5, gzip;q=0.8"}, Gzip},
		{"ThreeDecimals", []string{"zstd;q=0.501, gzip;q=0.5"}, Zstd},
		{"SpacesAroundQ", []string{"gzip ; q=0.5 , zstd ;q=0.4"}, Gzip},
		{"UpperQ", []string{"zstd;Q=0.1, gzip"}, Gzip},
		{"QZeroExcludes", []string{"gzip;q=0"}, Identity},
		{"QZeroExcludesZstd", []string{"zstd;q=0, gzip;q=0.1"}, Gzip},
		{"NamedTwiceHighestCounts", []string{"gzip;q=0, gzip;q=0.5"}, Gzip},
		{"IdentityPreferred", []string{"gzip;q=0.5, identity"}, Identity},
		{"IdentityEqualLoses", []string{"identity, gzip"}, Gzip},
		{"IdentityExcluded", []string{"identity;q=0, gzip"}, Gzip},
		{"AllExcluded", []string{"identity;q=0, *;q=0"}, Identity},
		{"StarAlone", []string{"*"}, Gzip},
		{"StarLowQ", []string{"*;q=0.1"}, Gzip},
		{"StarBeatsLowerNamed", []string{"gzip;q=0.5, *"}, Zstd},
		{"StarDoesNotOverrideNamed", []string{"gzip;q=0, *"}, Zstd},
		{"StarZeroNamedGzip", []string{"*;q=0, gzip"}, Gzip},
		{"StarZeroExcludesIdentity", []string{"*;q=0"}, Identity},
		{"StarVersusIdentity", []string{"identity;q=0.5, *;q=0.4"}, Identity},
		{"NamedBeatsStarAtEqualQ", []string{"*;q=0.5, gzip;q=0.5"}, Gzip},
		{"TwoLines", []string{"gzip;q=0.5", "zstd;q=0.9"}, Zstd},
		{"TwoLinesExclude", []string{"zstd", "zstd;q=0"}, Zstd},
		{"EmptyElements", []string{" , ,gzip,,"}, Gzip},
		{"BadQSkipped", []string{"zstd;q=2, gzip"}, Gzip},
		// Lenient like Accept (httplist.Quality): extra digits are truncated.
		{"LongQDigits", []string{"zstd;q=0.1234, gzip;q=0.1"}, Zstd},
		{"BadQ", []string{"zstd;q=0.1x, gzip;q=0.1"}, Gzip},
		{"BadQLetters", []string{"zstd;q=abc, gzip;q=0.1"}, Gzip},
		{"QOneWithZeros", []string{"zstd;q=1.000"}, Zstd},
		{"QOneWithNonZero", []string{"zstd;q=1.001, gzip;q=0.1"}, Gzip},
		{"OtherParamIgnored", []string{"zstd;level=3"}, Zstd},
		{"MalformedParamSkipped", []string{"zstd;=3, gzip;q=0.2"}, Gzip},
		{"NotAToken", []string{"gz ip, zstd;q=0.3"}, Zstd},
		{"Tabs", []string{"\tgzip\t;\tq=0.3"}, Gzip},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := Negotiate(tt.fields...); got != tt.want {
				t.Errorf("Negotiate(%q) = %v, want %v", tt.fields, got, tt.want)
			}
		})
	}
}

// FuzzNegotiate checks what must hold for any header: a coding comes out,
// a compressed one only if the header could have asked for it, and several
// field lines mean what they mean joined by a comma.
// Run with: go test -fuzz FuzzNegotiate ./internal/compress/
func FuzzNegotiate(f *testing.F) {
	for _, s := range []string{"gzip, deflate, br, zstd", "*;q=0", "identity;q=0, gzip;q=0.5", "zstd;q=0.001"} {
		f.Add(s, "")
	}
	f.Add("gzip;q=0.5", "zstd;q=0.9")
	f.Fuzz(func(t *testing.T, a, b string) {
		got := Negotiate(a, b)
		if got != Identity && got != Gzip && got != Zstd {
			t.Fatalf("Negotiate(%q, %q) = %v", a, b, got)
		}
		all := strings.ToLower(a + "," + b)
		if got == Gzip && !strings.Contains(all, "gzip") && !strings.Contains(all, "*") {
			t.Errorf("Negotiate(%q, %q) = gzip, never asked for", a, b)
		}
		if got == Zstd && !strings.Contains(all, "zstd") && !strings.Contains(all, "*") {
			t.Errorf("Negotiate(%q, %q) = zstd, never asked for", a, b)
		}
		if joined := Negotiate(a + "," + b); joined != got {
			t.Errorf("Negotiate(%q, %q) = %v but Negotiate(%q) = %v", a, b, got, a+","+b, joined)
		}
	})
}
