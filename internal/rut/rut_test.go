package rut_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/informe/informe/internal/failure"
	"github.com/informe/informe/internal/rut"
)

func TestCheckDigit(t *testing.T) {
	tests := []struct {
		body int
		want byte
	}{
		{12345678, '5'},
		{11111111, '1'},
		{22222222, '2'},
		{10000013, 'K'},
		{1, '9'},
		{6, 'K'},
		{7, '8'},
		{0, '0'},
		{76086428, '5'},
		{99999999, '9'},
		{20123456, '5'},
	}
	for _, tt := range tests {
		if got := rut.CheckDigit(tt.body); got != tt.want {
			t.Errorf("CheckDigit(%d) = %q, want %q", tt.body, got, tt.want)
		}
	}
}

func TestCheckDigitRange(t *testing.T) {
	// Every body must get a check character that Parse accepts back.
	for body := 1; body < 200_000; body += 7 {
		r := rut.New(body)
		got, err := rut.Parse(r.String())
		if err != nil || got != r {
			t.Fatalf("Parse(%q) = %v, %v; want %v", r.String(), got, err, r)
		}
	}
}

func TestParse(t *testing.T) {
	tests := []struct {
		name  string
		in    string
		want  rut.RUT
		isErr error
		msg   string
	}{
		{name: "OKDotted", in: "12.345.678-5", want: rut.RUT{Body: 12345678, Check: '5'}},
		{name: "OKHyphen", in: "12345678-5", want: rut.RUT{Body: 12345678, Check: '5'}},
		{name: "OKPlain", in: "123456785", want: rut.RUT{Body: 12345678, Check: '5'}},
		{name: "OKSpaces", in: "  12.345.678-5\t", want: rut.RUT{Body: 12345678, Check: '5'}},
		{name: "OKLowerK", in: "10.000.013-k", want: rut.RUT{Body: 10000013, Check: 'K'}},
		{name: "OKUpperK", in: "10000013-K", want: rut.RUT{Body: 10000013, Check: 'K'}},
		{name: "OKPlainK", in: "10000013k", want: rut.RUT{Body: 10000013, Check: 'K'}},
		{name: "OKDottedNoHyphen", in: "12.345.6785", want: rut.RUT{Body: 12345678, Check: '5'}},
		{name: "OKSevenDigits", in: "7.654.321-6", want: rut.RUT{Body: 7654321, Check: '6'}},
		{name: "OKShort", in: "1-9", want: rut.RUT{Body: 1, Check: '9'}},
		{name: "OKLeadingZero", in: "012345678-5", want: rut.RUT{Body: 12345678, Check: '5'}},
		{name: "OKLeadingZeroDotted", in: "012.345.678-5", want: rut.RUT{Body: 12345678, Check: '5'}},
		{name: "OKMax", in: "99.999.999-9", want: rut.RUT{Body: 99999999, Check: '9'}},

		{name: "ErrEmpty", in: "", isErr: rut.ErrMalformed, msg: `rut "" is not a RUT: it is empty`},
		{name: "ErrBlank", in: "   ", isErr: rut.ErrMalformed, msg: `rut "" is not a RUT: it is empty`},
		{name: "ErrLetters", in: "abc", isErr: rut.ErrMalformed, msg: `rut "abc" is not a RUT: it must end in a check digit 0-9 or K`},
		{name: "ErrLetterInBody", in: "12a45678-5", isErr: rut.ErrMalformed, msg: `rut "12a45678-5" is not a RUT: it has the character 'a'`},
		{name: "ErrKInBody", in: "12k45678-5", isErr: rut.ErrMalformed, msg: `rut "12k45678-5" is not a RUT: K may only be the check digit`},
		{name: "ErrInnerSpace", in: "12 345 678-5", isErr: rut.ErrMalformed, msg: `rut "12 345 678-5" is not a RUT: it has the character ' '`},
		{name: "ErrMisplacedDots", in: "1.2345.678-5", isErr: rut.ErrMalformed, msg: `rut "1.2345.678-5" is not a RUT: its dots must separate groups of three digits`},
		{name: "ErrPartialDots", in: "12345.678-5", isErr: rut.ErrMalformed, msg: `rut "12345.678-5" is not a RUT: its dots must separate groups of three digits`},
		{name: "ErrDoubleDot", in: "12..345.678-5", isErr: rut.ErrMalformed, msg: `rut "12..345.678-5" is not a RUT: its dots must separate groups of three digits`},
		{name: "ErrLeadingDot", in: ".345.678-5", isErr: rut.ErrMalformed, msg: `rut ".345.678-5" is not a RUT: its dots must separate groups of three digits`},
		{name: "ErrTwoHyphens", in: "12345678--5", isErr: rut.ErrMalformed, msg: `rut "12345678--5" is not a RUT: the hyphen must come just before the check digit`},
		{name: "ErrHyphenInBody", in: "1234-5678-5", isErr: rut.ErrMalformed, msg: `rut "1234-5678-5" is not a RUT: the hyphen must come just before the check digit`},
		{name: "ErrNoCheck", in: "12345678-", isErr: rut.ErrMalformed, msg: `rut "12345678-" is not a RUT: it must end in a check digit 0-9 or K`},
		{name: "ErrOnlyCheck", in: "5", isErr: rut.ErrMalformed, msg: `rut "5" is not a RUT: it has no digits before the check digit`},
		{name: "ErrOnlyHyphenCheck", in: "-5", isErr: rut.ErrMalformed, msg: `rut "-5" is not a RUT: it has no digits before the check digit`},
		{name: "ErrZero", in: "0-0", isErr: rut.ErrMalformed, msg: `rut "0-0" is not a RUT: its number is zero`},
		{name: "ErrTooLarge", in: "100.000.000-4", isErr: rut.ErrMalformed, msg: `rut "100.000.000-4" is not a RUT: its number is too large`},
		{name: "ErrTooManyDigits", in: "1234567890123-4", isErr: rut.ErrMalformed, msg: `rut "1234567890123-4" is not a RUT: it has too many digits`},
		{name: "ErrNonASCIIDigit", in: "１2345678-5", isErr: rut.ErrMalformed, msg: `rut "１2345678-5" is not a RUT: it has the character '１'`},
		{name: "ErrCheckDigit", in: "12.345.678-9", isErr: rut.ErrCheckDigit, msg: `rut "12.345.678-9" has a wrong check digit`},
		{name: "ErrCheckDigitK", in: "12345678-k", isErr: rut.ErrCheckDigit, msg: `rut "12345678-k" has a wrong check digit`},
		{name: "ErrCheckDigitPlain", in: "123456780", isErr: rut.ErrCheckDigit, msg: `rut "123456780" has a wrong check digit`},
		{name: "ErrLongInputQuotedShort", in: strings.Repeat("x", 100) + "-5", isErr: rut.ErrMalformed,
			msg: `rut "` + strings.Repeat("x", 40) + `…" is not a RUT: it has the character 'x'`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := rut.Parse(tt.in)
			if tt.isErr == nil {
				if err != nil {
					t.Fatalf("Parse(%q) error: %v", tt.in, err)
				}
				if got != tt.want {
					t.Fatalf("Parse(%q) = %+v, want %+v", tt.in, got, tt.want)
				}
				return
			}
			if err == nil {
				t.Fatalf("Parse(%q) = %+v, want error", tt.in, got)
			}
			if !errors.Is(err, tt.isErr) {
				t.Errorf("Parse(%q) error %v is not %v", tt.in, err, tt.isErr)
			}
			other := rut.ErrCheckDigit
			if tt.isErr == rut.ErrCheckDigit {
				other = rut.ErrMalformed
			}
			if errors.Is(err, other) {
				t.Errorf("Parse(%q) error %v is also %v", tt.in, err, other)
			}
			if got, want := err.Error(), tt.msg; got != want {
				t.Errorf("Parse(%q) error\n got %s\nwant %s", tt.in, got, want)
			}
		})
	}
}

func TestFormats(t *testing.T) {
	tests := []struct {
		name             string
		r                rut.RUT
		str, dotted, key string
	}{
		{"EightDigits", rut.RUT{Body: 12345678, Check: '5'}, "12345678-5", "12.345.678-5", "123456785"},
		{"SevenDigits", rut.RUT{Body: 7654321, Check: '6'}, "7654321-6", "7.654.321-6", "76543216"},
		{"K", rut.RUT{Body: 10000013, Check: 'K'}, "10000013-K", "10.000.013-K", "10000013K"},
		{"ThreeDigits", rut.RUT{Body: 999, Check: rut.CheckDigit(999)}, "999-" + string(rut.CheckDigit(999)), "999-" + string(rut.CheckDigit(999)), "999" + string(rut.CheckDigit(999))},
		{"FourDigits", rut.RUT{Body: 1000, Check: rut.CheckDigit(1000)}, "1000-" + string(rut.CheckDigit(1000)), "1.000-" + string(rut.CheckDigit(1000)), "1000" + string(rut.CheckDigit(1000))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got, want := tt.r.String(), tt.str; got != want {
				t.Errorf("String() = %q, want %q", got, want)
			}
			if got, want := tt.r.Dotted(), tt.dotted; got != want {
				t.Errorf("Dotted() = %q, want %q", got, want)
			}
			if got, want := tt.r.Key(), tt.key; got != want {
				t.Errorf("Key() = %q, want %q", got, want)
			}
		})
	}
}

// sqlKey does in Go what the database's rut_key(text) does:
// ltrim(upper(regexp_replace(rut, '[^0-9kK]', ”, 'g')), '0').
func sqlKey(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c >= '0' && c <= '9', c == 'K':
			b.WriteByte(c)
		case c == 'k':
			b.WriteByte('K')
		}
	}
	return strings.TrimLeft(b.String(), "0")
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"12.345.678-5", "123456785", "10000013-k", " 7.654.321-6 ", "abc", "12.345.678-9", "0-0"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := rut.Parse(s)
		if err != nil {
			if !errors.Is(err, rut.ErrMalformed) && !errors.Is(err, rut.ErrCheckDigit) {
				t.Fatalf("Parse(%q) error %v wraps neither sentinel", s, err)
			}
			return
		}
		if r.Body < 1 || r.Body > rut.MaxBody || r.Check != rut.CheckDigit(r.Body) {
			t.Fatalf("Parse(%q) = %+v, not a valid RUT", s, r)
		}
		for _, form := range []string{r.String(), r.Dotted(), r.Key()} {
			back, err := rut.Parse(form)
			if err != nil || back != r {
				t.Fatalf("Parse(%q) = %+v; Parse(%q) = %+v, %v", s, r, form, back, err)
			}
		}
		if got, want := r.Key(), sqlKey(s); got != want {
			t.Fatalf("Parse(%q).Key() = %q, SQL rut_key gives %q", s, got, want)
		}
	})
}

func TestParseAs(t *testing.T) {
	for _, tc := range []struct{ name, in, reason string }{
		{"CheckDigit", "12.345.678-9", "rut_check_digit"},
		{"Malformed", "12-345", "rut_malformed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := rut.ParseAs("rut", tc.in)
			var f *failure.Error
			if !errors.As(err, &f) || f.Reason != tc.reason || f.Code != failure.Invalid || f.Target != "rut" {
				t.Fatalf("ParseAs(%q) = %#v, want %s naming rut", tc.in, err, tc.reason)
			}
		})
	}
	want, _ := rut.Parse("12.345.678-5")
	if r, err := rut.ParseAs("rut", "12.345.678-5"); err != nil || r != want {
		t.Fatalf("ParseAs(12.345.678-5) = %v, %v, want %v", r, err, want)
	}
}
