package odata_test

import (
	"bytes"
	"encoding/json"
	"net/url"
	"testing"

	"github.com/informe/informe/internal/odata"
)

func TestNegotiate(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name   string
		format string // $format, "" for none
		accept []string
		ieee   bool
	}{
		{"OKNoAccept", "", nil, false},
		{"OKStar", "", []string{"*/*"}, false},
		{"OKApplicationStar", "", []string{"application/*"}, false},
		{"OKJSON", "", []string{"application/json"}, false},
		{"OKPowerQuery", "", []string{"application/json;odata.metadata=minimal;q=1.0,application/json;odata=minimalmetadata;q=0.9,application/atomsvc+xml;q=0.8,application/atom+xml;q=0.8,application/xml;q=0.7,text/plain;q=0.7"}, false},
		{"OKIEEE", "", []string{"application/json;odata.metadata=minimal;IEEE754Compatible=true"}, true},
		{"OKIEEECase", "", []string{`Application/JSON; ieee754compatible="TRUE"; Metadata=Minimal`}, true},
		{"OKIEEEFalse", "", []string{"application/json;IEEE754Compatible=false"}, false},
		{"OKHigherQWins", "", []string{"application/json;IEEE754Compatible=true;q=0.5, application/json;q=0.9"}, false},
		{"OKHigherQWinsIEEE", "", []string{"application/json;q=0.5", "application/json;IEEE754Compatible=true"}, true},
		{"OKFullSkipped", "", []string{"application/json;odata.metadata=full, */*;q=0.1"}, false},
		{"OKNoneSkipped", "", []string{"application/json;odata.metadata=none, */*;q=0.1"}, false},
		{"OKMalformedIgnored", "", []string{"garbage"}, false},
		{"OKFormatJSON", "JSON", []string{"text/csv"}, false},
		{"OKFormatIEEE", "application/json;odata.metadata=minimal;IEEE754Compatible=true", nil, true},
		{"OKFormatWinsOverAccept", "application/json", []string{"application/json;IEEE754Compatible=true"}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			v := url.Values{}
			if tt.format != "" {
				v.Set("$format", tt.format)
			}
			got, err := odata.Negotiate(v, tt.accept)
			if err != nil {
				t.Fatal(err)
			}
			if got.IEEE754Compatible != tt.ieee {
				t.Errorf("IEEE754Compatible = %v, want %v", got.IEEE754Compatible, tt.ieee)
			}
		})
	}
}

func TestNegotiateErrors(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name   string
		values url.Values
		accept []string
		status int
		msg    string
	}{
		{"ErrCSV", nil, []string{"text/csv"}, 406, "application/json;odata.metadata=minimal"},
		{"ErrFull", nil, []string{"application/json;odata.metadata=full"}, 406, "Accept allows no format"},
		{"ErrNone", nil, []string{"application/json;odata.metadata=none"}, 406, "Accept allows no format"},
		{"ErrNoneOldName", nil, []string{"application/json;metadata=none;IEEE754Compatible=true"}, 406, "Accept allows no format"},
		{"ErrFormatNone", url.Values{"$format": {"application/json;odata.metadata=none"}}, nil, 406, "odata.metadata=none is not supported"},
		{"ErrFormatToken", url.Values{"$format": {"informe_" + tokenBody}}, nil, 406, `$format a value that looks like an access token is not supported`},
		{"ErrJSONRefused", nil, []string{"application/json;q=0, */*"}, 406, "Accept refuses application/json"},
		{"ErrFormatXML", url.Values{"$format": {"xml"}}, nil, 406, `$format "xml" is not supported`},
		{"ErrFormatTwice", url.Values{"$format": {"json", "json"}}, nil, 400, "more than once"},
		{"ErrFormatMetadata", url.Values{"$format": {"application/json;odata.metadata=lots"}}, nil, 400, "odata.metadata must be"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := odata.Negotiate(tt.values, tt.accept)
			wantErr(t, err, tt.status, tt.msg)
		})
	}
}

func TestContentType(t *testing.T) {
	t.Parallel()
	if got, want := (odata.Format{}).ContentType(), "application/json;odata.metadata=minimal;odata.streaming=true;IEEE754Compatible=false;charset=utf-8"; got != want {
		t.Errorf("ContentType() = %q, want %q", got, want)
	}
	if got, want := (odata.Format{IEEE754Compatible: true}).ContentType(), "application/json;odata.metadata=minimal;odata.streaming=true;IEEE754Compatible=true;charset=utf-8"; got != want {
		t.Errorf("ContentType() = %q, want %q", got, want)
	}
}

func TestPageSize(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name    string
		prefer  []string
		size    int
		applied string
	}{
		{"OKNone", nil, odata.MaxPageSize, ""},
		{"OKMaxPageSize", []string{"odata.maxpagesize=100"}, 100, "odata.maxpagesize=100"},
		{"OKBareName", []string{"maxpagesize=5"}, 5, "odata.maxpagesize=5"},
		{"OKSpacesQuotesCase", []string{`return=minimal, ODATA.MaxPageSize = "250" ; foo=bar`}, 250, "odata.maxpagesize=250"},
		{"OKSecondField", []string{"respond-async", "odata.maxpagesize=7"}, 7, "odata.maxpagesize=7"},
		{"OKFirstWins", []string{"odata.maxpagesize=7, odata.maxpagesize=9"}, 7, "odata.maxpagesize=7"},
		{"OKLastBelowMax", []string{"odata.maxpagesize=9999"}, 9999, "odata.maxpagesize=9999"},
		{"OKAtMax", []string{"odata.maxpagesize=10000"}, odata.MaxPageSize, ""},
		{"OKAboveMax", []string{"odata.maxpagesize=50000"}, odata.MaxPageSize, ""},
		{"OKZeroIgnored", []string{"odata.maxpagesize=0"}, odata.MaxPageSize, ""},
		{"OKNegativeIgnored", []string{"odata.maxpagesize=-5"}, odata.MaxPageSize, ""},
		{"OKLeadingZeroIgnored", []string{"odata.maxpagesize=010"}, odata.MaxPageSize, ""},
		{"OKWordIgnored", []string{"odata.maxpagesize=many"}, odata.MaxPageSize, ""},
		{"OKNoValueIgnored", []string{"odata.maxpagesize"}, odata.MaxPageSize, ""},
		{"OKOtherPreferences", []string{"odata.track-changes, wait=10"}, odata.MaxPageSize, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			size, applied := odata.PageSize(tt.prefer)
			if size != tt.size || applied != tt.applied {
				t.Errorf("PageSize(%q) = %d, %q; want %d, %q", tt.prefer, size, applied, tt.size, tt.applied)
			}
		})
	}
}

func TestWriteError(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name                          string
		code, message, target, reason string
		position                      int
		want                          string
	}{
		{"OK", "NotImplemented", `operator "gt"`, "$filter", "", 0,
			`{"error":{"code":"NotImplemented","message":"operator \"gt\"","target":"$filter"}}`},
		{"OKNoTarget", "NotFound", "no entity has that key", "", "", 0,
			`{"error":{"code":"NotFound","message":"no entity has that key"}}`},
		{"OKReason", "BadRequest", "$orderby: ...", "$orderby", "not_property", 3,
			`{"error":{"code":"BadRequest","message":"$orderby: ...","target":"$orderby","innererror":{"code":"not_property","position":3}}}`},
		{"OKReasonNoPosition", "BadRequest", "$orderby is empty", "$orderby", "empty", 0,
			`{"error":{"code":"BadRequest","message":"$orderby is empty","target":"$orderby","innererror":{"code":"empty"}}}`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := odata.WriteError(&b, tt.code, tt.message, tt.target, tt.reason, tt.position); err != nil {
				t.Fatal(err)
			}
			if got := b.String(); got != tt.want {
				t.Errorf("got %s, want %s", got, tt.want)
			}
			if !json.Valid(b.Bytes()) {
				t.Error("not valid JSON")
			}
		})
	}
}

// FuzzNegotiate checks that any Accept header and $format either choose a
// format or fail with a 400 or a 406.
func FuzzNegotiate(f *testing.F) {
	f.Add("", "application/json;odata.metadata=minimal;q=1.0,application/json;odata=minimalmetadata;q=0.9,application/xml;q=0.7")
	f.Add("application/json;IEEE754Compatible=true", "*/*")
	f.Add("", `application/json;x="a,b;c";q=0.5, */*;q=0`)
	f.Fuzz(func(t *testing.T, format, accept string) {
		v := url.Values{}
		if format != "" {
			v.Set("$format", format)
		}
		_, err := odata.Negotiate(v, []string{accept})
		if err != nil {
			if st := statusOf(err); st != 400 && st != 406 {
				t.Fatalf("Negotiate(%q, %q) = %v", format, accept, err)
			}
		}
	})
}

// FuzzPageSize checks that PageSize always returns a size from 1 to
// MaxPageSize, applied exactly when below it.
func FuzzPageSize(f *testing.F) {
	f.Add("odata.maxpagesize=100")
	f.Add(`return=minimal, maxpagesize="7";x=1`)
	f.Fuzz(func(t *testing.T, prefer string) {
		size, applied := odata.PageSize([]string{prefer})
		if size < 1 || size > odata.MaxPageSize || (applied != "") != (size < odata.MaxPageSize) {
			t.Fatalf("PageSize(%q) = %d, %q", prefer, size, applied)
		}
	})
}
