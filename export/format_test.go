package export

import (
	"errors"
	"strings"
	"testing"

	"github.com/informe/informe/internal/dataset"
)

func TestFormat(t *testing.T) {
	for _, tt := range []struct {
		f                 Format
		name, contentType string
	}{
		{JSON, "json", "application/json; charset=utf-8"},
		{NDJSON, "ndjson", "application/x-ndjson; charset=utf-8"},
		{CSV, "csv", "text/csv; charset=utf-8"},
		{XLSX, "xlsx", "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"},
		{Format(9), "Format(9)", "application/octet-stream"},
	} {
		if got, want := tt.f.String(), tt.name; got != want {
			t.Errorf("String() = %q, want %q", got, want)
		}
		if got, want := tt.f.ContentType(), tt.contentType; got != want {
			t.Errorf("%v.ContentType() = %q, want %q", tt.f, got, want)
		}
	}
}

func TestParseFormat(t *testing.T) {
	for _, tt := range []struct {
		name, in string
		want     Format
		err      string
	}{
		{"JSON", "json", JSON, ""},
		{"NDJSON", "ndjson", NDJSON, ""},
		{"CSV", "csv", CSV, ""},
		{"XLSX", "xlsx", XLSX, ""},
		{"UpperCase", "CSV", CSV, ""},
		{"MixedCase", "XlSx", XLSX, ""},
		{"Parquet", "parquet", Parquet, ""},
		{"Arrow", "Arrow", Arrow, ""},
		{"ErrEmpty", "", 0, `unknown format "": allowed values are json, ndjson, csv, xlsx, parquet, arrow`},
		{"ErrUnknown", "pdf", 0, `unknown format "pdf": allowed values are json, ndjson, csv, xlsx, parquet, arrow`},
		{"ErrSpace", " csv", 0, `unknown format " csv": allowed values are json, ndjson, csv, xlsx, parquet, arrow`},
		{"ErrMediaType", "text/csv", 0, `unknown format "text/csv": allowed values are json, ndjson, csv, xlsx, parquet, arrow`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseFormat(tt.in)
			if tt.err != "" {
				if err == nil || err.Error() != tt.err || !errors.Is(err, ErrUnknownFormat) {
					t.Fatalf("err = %v, want %q wrapping ErrUnknownFormat", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Fatalf("got %v, want %v", got, tt.want)
			}
		})
	}
}

func TestNegotiate(t *testing.T) {
	const xlsxType = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
	for _, tt := range []struct {
		name, accept string
		want         Format
		notAcc       bool
	}{
		{"Empty", "", JSON, false},
		{"Spaces", "   ", JSON, false},
		{"JSON", "application/json", JSON, false},
		{"CSV", "text/csv", CSV, false},
		{"NDJSON", "application/x-ndjson", NDJSON, false},
		{"JSONLAlias", "application/jsonl", NDJSON, false},
		{"XLSX", xlsxType, XLSX, false},
		{"CaseInsensitive", "TEXT/CSV", CSV, false},
		{"ParamsIgnored", "text/csv; charset=utf-8; header=present", CSV, false},
		{"AnyGivesJSON", "*/*", JSON, false},
		{"ApplicationWildcardGivesJSON", "application/*", JSON, false},
		{"TextWildcardGivesCSV", "text/*", CSV, false},
		{"ListFirstEqualByPreference", "application/x-ndjson, text/csv", CSV, false},
		{"ListPreferenceXLSXLast", xlsxType + ", application/jsonl", NDJSON, false},
		{"QValues", "text/csv;q=0.5, application/json;q=0.9", JSON, false},
		{"QValuesReversed", "text/csv;q=0.9, application/json;q=0.5", CSV, false},
		{"QWithSpaces", "text/csv ; q=0.9 , application/json ; q = 0.5", CSV, false},
		{"QThreeDecimals", "application/json;q=0.101, text/csv;q=0.102", CSV, false},
		{"QLeadingDot", "application/json;q=.2, text/csv;q=.3", CSV, false},
		{"LowAnyPlusCSV", "*/*;q=0.1, text/csv", CSV, false},
		{"Browser", "text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8", JSON, false},
		{"Curl", "*/*", JSON, false},
		{"JavaStar", "text/html, image/gif, image/jpeg, *; q=.2, */*; q=.2", JSON, false},
		{"SpecificBeatsWildcard", "application/json;q=0.1, application/*;q=0.9", NDJSON, false},
		{"SpecificBeatsAny", "text/csv;q=0.2, */*;q=0.9", JSON, false},
		{"TypeWildcardBeatsAny", "text/*;q=0.1, */*", JSON, false},
		{"Q0ExcludesJSON", "application/json;q=0, */*", CSV, false},
		{"Q0ExcludesSpecificUnderWildcard", "application/*, application/json;q=0", NDJSON, false},
		{"Q0ExcludesNDJSONAliasOnly", "application/jsonl;q=0, application/x-ndjson", NDJSON, false},
		{"Q0All", "*/*;q=0", 0, true},
		{"Q0JSONOnly", "application/json;q=0", 0, true},
		{"Unsatisfiable", "text/html", 0, true},
		{"UnsatisfiableList", "text/html, image/png;q=0.5", 0, true},
		{"UnsatisfiableTextWildcardMinusCSV", "text/*, text/csv;q=0", 0, true},
		{"Garbage", "%%%garbage%%%", JSON, false},
		{"GarbageParts", "garbage, text/csv;q=0.5, ;;;, /, a/, /b", CSV, false},
		{"BadQSkipsPart", "application/json;q=2, text/csv;q=0.5", CSV, false},
		{"BadQOnlyPart", "text/csv;q=abc", JSON, false},
		{"WildcardTypeWithSubtype", "*/csv", JSON, false},
		{"QuotedComma", `text/csv;foo="a,b";q=0.9, application/json;q=0.5`, CSV, false},
		{"EmptyElements", ",,text/csv,,", CSV, false},
		{"Parquet", "application/vnd.apache.parquet", Parquet, false},
		{"ArrowStream", "application/vnd.apache.arrow.stream, application/json;q=0.5", Arrow, false},
		{"ApplicationWildcardPrefersJSON", "application/*", JSON, false},
		{"DuplicateRangesHighestQ", "text/csv;q=0.1, text/csv;q=0.8, application/json;q=0.5", CSV, false},
		{"AcceptExtAfterQ", "text/csv;q=0.9;level=1, application/json;q=0.5", CSV, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Negotiate(tt.accept)
			if tt.notAcc {
				if !errors.Is(err, ErrNotAcceptable) {
					t.Fatalf("err = %v, want ErrNotAcceptable", err)
				}
				for _, typ := range Offered {
					if !strings.Contains(err.Error(), typ) {
						t.Errorf("error %q does not list %s", err, typ)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Fatalf("Negotiate(%q) = %v, want %v", tt.accept, got, tt.want)
			}
		})
	}
}

func TestNegotiateErrorMessage(t *testing.T) {
	_, err := Negotiate("image/png")
	got := err.Error()
	want := "not acceptable: the offered media types are application/json, text/csv, application/x-ndjson, application/jsonl, application/vnd.openxmlformats-officedocument.spreadsheetml.sheet, application/vnd.apache.parquet, application/vnd.apache.arrow.stream"
	if got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
}

func FuzzNegotiate(f *testing.F) {
	for _, s := range []string{
		"", "*/*", "text/csv;q=0.5, application/json;q=0.9", "application/*;q=0",
		`a/b;x="y,z;q=1";q=0.3`, "*; q=.2", "text/html,*/*;q=0.8",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, accept string) {
		got, err := Negotiate(accept)
		if err != nil {
			if !errors.Is(err, ErrNotAcceptable) {
				t.Fatalf("Negotiate(%q): unexpected error %v", accept, err)
			}
			return
		}
		if !got.valid() {
			t.Fatalf("Negotiate(%q) = %v, not a format", accept, got)
		}
	})
}

// TestMessagesNeverEchoToken checks that ParseFormat and Select name a
// client's value only when it cannot be a token.
func TestMessagesNeverEchoToken(t *testing.T) {
	const body = "Zx3kQ9-vB7_mN2pL8rT4wY6sD1fG5hJ0aC3eU7iO9qW"
	cols := []dataset.Column{{Name: "a"}}
	for _, tok := range []string{"informe_" + body, body} {
		_, ferr := ParseFormat(tok)
		_, serr := dataset.Select(cols, []string{tok})
		_, derr := dataset.Select(cols, []string{tok, tok})
		for _, err := range []error{ferr, serr, derr} {
			if err == nil || strings.Contains(err.Error(), body) || !strings.Contains(err.Error(), "looks like an access token") {
				t.Errorf("err = %v, want one that does not repeat the token", err)
			}
		}
	}
	if _, err := ParseFormat("xml"); err == nil || !strings.Contains(err.Error(), `"xml"`) {
		t.Errorf("ParseFormat(xml) = %v, want it to name \"xml\"", err)
	}
}
