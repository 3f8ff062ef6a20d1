package param_test

import (
	"net/url"
	"strings"
	"testing"

	"github.com/informe/informe/internal/dataset"
	"github.com/informe/informe/internal/failure"
	"github.com/informe/informe/internal/param"
)

func TestInt(t *testing.T) {
	for _, tt := range []struct {
		name, query string
		want        int64
		wantErr     string // substring of the message; "" for success
	}{
		{"Absent", "", 7, ""},
		{"OK", "n=42", 42, ""},
		{"Max", "n=100", 100, ""},
		{"LeadingZeros", "n=007", 7, ""},
		{"ErrZero", "n=0", 0, "n must be an integer from 1 to 100"},
		{"ErrNegative", "n=-1", 0, "n must be an integer from 1 to 100"},
		{"ErrPlus", "n=%2B5", 0, "n must be an integer from 1 to 100"},
		{"ErrFraction", "n=1.5", 0, `got "1.5"`},
		{"ErrLetters", "n=abc", 0, "n must be an integer"},
		{"ErrOverMax", "n=101", 0, "from 1 to 100"},
		{"ErrOverflow", "n=99999999999999999999", 0, "n must be an integer"},
		{"ErrEmpty", "n=", 0, "n must not be empty"},
		{"ErrTwice", "n=1&n=2", 0, "n must be given at most once"},
		{"ErrSpace", "n=+1", 0, "n must be an integer"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			v, _ := url.ParseQuery(tt.query)
			got, err := param.Int(v, "n", 7, 100)
			if tt.wantErr == "" {
				if err != nil || got != tt.want {
					t.Fatalf("Int = %d, %v; want %d", got, err, tt.want)
				}
				return
			}
			if failure.CodeOf(err) != failure.Invalid || !strings.Contains(failure.MessageOf(err), tt.wantErr) {
				t.Fatalf("Int err = %v; want Invalid containing %q", err, tt.wantErr)
			}
		})
	}
}

func TestBoolAndOneOf(t *testing.T) {
	v, _ := url.ParseQuery("b=true&f=false&x=yes&d=tab&e=pipe")
	if got, err := param.Bool(v, "b", false); err != nil || !got {
		t.Errorf("Bool(b) = %v, %v", got, err)
	}
	if got, err := param.Bool(v, "f", true); err != nil || got {
		t.Errorf("Bool(f) = %v, %v", got, err)
	}
	if got, err := param.Bool(v, "absent", true); err != nil || !got {
		t.Errorf("Bool(absent) = %v, %v", got, err)
	}
	if _, err := param.Bool(v, "x", false); !strings.Contains(failure.MessageOf(err), "x must be true or false") {
		t.Errorf("Bool(x) err = %v", err)
	}
	if got, err := param.OneOf(v, "d", "comma", "comma", "tab"); err != nil || got != "tab" {
		t.Errorf("OneOf(d) = %q, %v", got, err)
	}
	if got, err := param.OneOf(v, "absent", "comma", "comma", "tab"); err != nil || got != "comma" {
		t.Errorf("OneOf(absent) = %q, %v", got, err)
	}
	if _, err := param.OneOf(v, "e", "comma", "comma", "tab"); !strings.Contains(failure.MessageOf(err), "e must be one of comma, tab") {
		t.Errorf("OneOf(e) err = %v", err)
	}
}

func TestSingle(t *testing.T) {
	for _, tt := range []struct {
		name, query string
		want        string
		wantErr     string
	}{
		{"OK", "s=CT-%C3%91", "CT-Ñ", ""},
		{"ErrInvalidUTF8", "s=%FF", "", "s must be UTF-8 text without NUL characters"},
		{"ErrTruncatedUTF8", "s=ab%C3", "", "s must be UTF-8 text"},
		{"ErrNUL", "s=a%00b", "", "s must be UTF-8 text without NUL characters"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			v, err := url.ParseQuery(tt.query)
			if err != nil {
				t.Fatal(err)
			}
			got, _, err := param.Single(v, "s")
			if tt.wantErr == "" {
				if err != nil || got != tt.want {
					t.Fatalf("Single = %q, %v; want %q", got, err, tt.want)
				}
				return
			}
			if failure.CodeOf(err) != failure.Invalid || !strings.Contains(failure.MessageOf(err), tt.wantErr) {
				t.Fatalf("err = %v, want Invalid containing %q", err, tt.wantErr)
			}
		})
	}
}

// TestNeverEchoesToken sends a token, and its body without the prefix, to
// every reader: each refuses it with a message that does not repeat it.
func TestNeverEchoesToken(t *testing.T) {
	const body = "Zx3kQ9-vB7_mN2pL8rT4wY6sD1fG5hJ0aC3eU7iO9qW"
	cols := []dataset.Column{{Name: "contract_id"}, {Name: "task"}}
	for _, tok := range []string{"informe_" + body, body, "Informe_" + body} {
		for _, tt := range []struct {
			name string
			read func(url.Values) error
		}{
			{"Single", func(v url.Values) error { _, _, err := param.Single(v, "p"); return err }},
			{"Int", func(v url.Values) error { _, err := param.Int(v, "p", 1, 100); return err }},
			{"Bool", func(v url.Values) error { _, err := param.Bool(v, "p", false); return err }},
			{"OneOf", func(v url.Values) error { _, err := param.OneOf(v, "p", "comma", "comma", "tab"); return err }},
			{"Columns", func(v url.Values) error {
				_, err := param.Columns(url.Values{"columns": v["p"]}, cols)
				return err
			}},
		} {
			for _, val := range []string{tok, "task," + tok, "x" + tok + "x"} {
				t.Run(tt.name, func(t *testing.T) {
					err := tt.read(url.Values{"p": {val}})
					msg := failure.MessageOf(err)
					if failure.CodeOf(err) != failure.Invalid || !strings.Contains(msg, "looks like an access token") {
						t.Fatalf("err = %v, want Invalid saying a value looks like a token", err)
					}
					if strings.Contains(msg, body) || strings.Contains(err.Error(), body) {
						t.Errorf("message %q repeats the token", msg)
					}
				})
			}
		}
	}
}
