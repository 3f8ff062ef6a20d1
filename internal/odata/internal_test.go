package odata

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/informe/informe/internal/dataset"
	"github.com/informe/informe/internal/failure"

	"github.com/informe/informe/export"

	"github.com/informe/informe/internal/testenv"
)

// checkString checks that export.AppendJSONString(nil, s) is one JSON string that
// decodes to what encoding/json's quoting of s decodes to (encoding/json
// writes \b and \f where appendString writes \u0008 and \u000c; both
// are JSON), and that it escapes what encoding/json escapes beyond JSON's
// needs: U+2028 and U+2029.
func checkString(t *testing.T, s []byte) {
	t.Helper()
	got := export.AppendJSONString(nil, s)
	want, err := json.Marshal(string(s))
	if err != nil {
		t.Fatal(err)
	}
	var g, w string
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatalf("export.AppendJSONString(%q) = %s: %v", s, got, err)
	}
	if err := json.Unmarshal(want, &w); err != nil {
		t.Fatal(err)
	}
	if g != w {
		t.Errorf("export.AppendJSONString(%q) = %s, decodes to %q, want %q", s, got, g, w)
	}
	if bytes.Contains(got, []byte("\u2028")) != bytes.Contains(want, []byte("\u2028")) ||
		bytes.Contains(got, []byte("\u2029")) != bytes.Contains(want, []byte("\u2029")) {
		t.Errorf("export.AppendJSONString(%q) = %s, want U+2028 and U+2029 escaped as in %s", s, got, want)
	}
}

func TestAppendString(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ in, want string }{
		{"", `""`},
		{"plain", `"plain"`},
		{`"quoted" \ back`, `"\"quoted\" \\ back"`},
		{"tab\tnl\ncr\r", `"tab\tnl\ncr\r"`},
		{"\x00\x01\b\f\x1f\x7f", `"\u0000\u0001\u0008\u000c\u001f` + "\x7f\""}, // DEL needs no escape
		{"Ñuñoa €", `"Ñuñoa €"`},
		{"bad \xff utf8 \xc3", `"bad \ufffd utf8 \ufffd"`},
		{"line\u2028para\u2029", `"line\u2028para\u2029"`},
		{"<html> & 'x'", `"<html> & 'x'"`},
	} {
		if got := string(export.AppendJSONString(nil, []byte(tt.in))); got != tt.want {
			t.Errorf("export.AppendJSONString(%q) = %s, want %s", tt.in, got, tt.want)
		}
		checkString(t, []byte(tt.in))
	}
}

func FuzzAppendString(f *testing.F) {
	f.Add([]byte("Se redacta la demanda, con \"comillas\"\ny salto de línea"))
	f.Add([]byte("\xed\xa0\x80 \u2028"))
	f.Fuzz(func(t *testing.T, s []byte) { checkString(t, s) })
}

func TestAppendTimestamp(t *testing.T) {
	t.Parallel()
	santiago, err := time.LoadLocation("America/Santiago")
	if err != nil {
		testenv.Missing(t, "%v", err) // the external tests load time/tzdata; this one needs only the machine's
	}
	for _, tt := range []struct {
		name   string
		in     string
		loc    *time.Location
		offset bool
		want   string // "" for invalid
	}{
		{"OKUTC", "2024-03-05 14:22:10", nil, false, `"2024-03-05T14:22:10Z"`},
		{"OKT", "2024-03-05T14:22:10", nil, false, `"2024-03-05T14:22:10Z"`},
		{"OKFraction", "2024-03-05 14:22:10.5", nil, false, `"2024-03-05T14:22:10.5Z"`},
		{"OKSantiagoSummer", "2024-01-15 09:30:00", santiago, false, `"2024-01-15T09:30:00-03:00"`},
		{"OKSantiagoWinter", "2024-07-01 10:00:00", santiago, false, `"2024-07-01T10:00:00-04:00"`},
		{"OKFixedZone", "2024-07-01 10:00:00", time.FixedZone("IST", 5*3600+1800), false, `"2024-07-01T10:00:00+05:30"`},
		{"OKTzUTC", "2024-03-05 14:07:09.123456+00", nil, true, `"2024-03-05T14:07:09.123456Z"`},
		{"OKTzHours", "2024-03-05 14:07:09-03", nil, true, `"2024-03-05T14:07:09-03:00"`},
		{"OKTzMinutes", "2024-03-05 14:07:09+05:30", nil, true, `"2024-03-05T14:07:09+05:30"`},
		{"OKTzSeconds", "1890-01-01 00:00:00-04:42:46", nil, true, `"1890-01-01T00:00:00-04:42"`},
		{"OKTzZeroMinutes", "2024-03-05 14:07:09+00:00", nil, true, `"2024-03-05T14:07:09Z"`},
		{"ErrShort", "2024-03-05 14:22", nil, false, ""},
		{"ErrMonth", "2024-00-05 14:22:10", nil, false, ""},
		{"ErrHour", "2024-03-05 24:00:00", nil, false, ""},
		{"ErrSep", "2024-03-05_14:22:10", nil, false, ""},
		{"ErrEmptyFraction", "2024-03-05 14:22:10.", nil, false, ""},
		{"ErrTrailing", "2024-03-05 14:22:10 UTC", nil, false, ""},
		{"ErrOffsetWithout", "2024-03-05 14:22:10+00", nil, false, ""},
		{"ErrTzMissing", "2024-03-05 14:22:10", nil, true, ""},
		{"ErrTzMalformed", "2024-03-05 14:22:10+0530", nil, true, ""},
		{"ErrTzMinutes", "2024-03-05 14:22:10+05:75", nil, true, ""},
		{"ErrTzLarge", "2024-03-05 14:22:10+19", nil, true, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := appendTimestamp(nil, []byte(tt.in), tt.loc, tt.offset)
			if tt.want == "" {
				if ok {
					t.Errorf("appendTimestamp(%q) = %s, want invalid", tt.in, got)
				}
				return
			}
			if !ok || string(got) != tt.want {
				t.Errorf("appendTimestamp(%q) = %s, %v; want %s", tt.in, got, ok, tt.want)
			}
			// What is written is RFC 3339.
			if _, err := time.Parse(time.RFC3339Nano, strings.Trim(string(got), `"`)); err != nil {
				t.Error(err)
			}
		})
	}
}

func TestNumbers(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		in       string
		integer  bool
		decimal_ bool
	}{
		{"0", true, true}, {"42", true, true}, {"-7", true, true}, {"9223372036854775807", true, true},
		{"-9223372036854775808", true, true}, {"9223372036854775808", false, true},
		{"1.5", false, true}, {"150000.25", false, true}, {"-0.5", false, true},
		{"", false, false}, {"-", false, false}, {"007", false, false}, {"1.", false, false}, {".5", false, false},
		{"1e5", false, false}, {"NaN", false, false}, {"+1", false, false}, {"1 ", false, false}, {"1.2.3", false, false},
	} {
		_, isInt := parseInt([]byte(tt.in))
		if isInt != tt.integer {
			t.Errorf("parseInt(%q) ok = %v, want %v", tt.in, isInt, tt.integer)
		}
		if got := isDecimal([]byte(tt.in)); got != tt.decimal_ {
			t.Errorf("isDecimal(%q) = %v, want %v", tt.in, got, tt.decimal_)
		}
		if tt.decimal_ && !json.Valid([]byte(tt.in)) {
			t.Errorf("%q passes but is not a JSON number", tt.in)
		}
	}
}

func testSet(t testing.TB, name string, synthetic bool) *EntitySet {
	t.Helper()
	def := dataset.EntitySet{Name: name, TypeName: name + "Type",
		Columns: []dataset.Column{{Name: "a", Kind: dataset.Integer}, {Name: "b", Kind: dataset.Integer}},
		Key:     "a", OrderBy: []string{"a"}}
	if synthetic {
		def.Key, def.RowKey, def.EmptyIsNull = "row_id", []string{"a", "b", "c"}, true
		def.KeyColumns = []string{"key_a", "key_b", "key_c"}
	}
	s, err := NewEntitySet(def)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestSkipToken(t *testing.T) {
	t.Parallel()
	report, other, users := testSet(t, "GeneralReport", true), testSet(t, "Other", true), testSet(t, "Users", false)
	for _, tt := range []struct {
		name string
		set  *EntitySet
		key  []int64
	}{
		{"OKReport", report, []int64{1, 2, 3}},
		{"OKAbsent", report, []int64{2, 0, 0}},
		{"OKLarge", report, []int64{1<<63 - 1, 1<<62 + 12345, -1}},
		{"OKUsers", users, []int64{42}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tok := string(appendSkipToken(nil, tt.set, nil, nil, nil, tt.key))
			if strings.Trim(tok, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_") != "" {
				t.Errorf("token %q is not URL-safe", tok)
			}
			got, _, err := decodeSkipToken(tok, tt.set, nil, nil)
			if err != nil {
				t.Fatalf("decode(%q): %v", tok, err)
			}
			if len(got) != len(tt.key) {
				t.Fatalf("decode(%q) = %v, want %v", tok, got, tt.key)
			}
			for i := range got {
				if got[i] != tt.key[i] {
					t.Fatalf("decode(%q) = %v, want %v", tok, got, tt.key)
				}
			}
		})
	}

	tok := string(appendSkipToken(nil, report, nil, nil, nil, []int64{1, 2, 3}))
	bad := map[string]string{
		"ErrEmpty":      "",
		"ErrOtherSet":   tok,
		"ErrPadding":    tok + "=",
		"ErrNotBase64":  tok[:5] + "*" + tok[6:],
		"ErrTruncated":  tok[:len(tok)-2],
		"ErrUsersToken": string(appendSkipToken(nil, users, nil, nil, nil, []int64{1})),
	}
	// Every one-character edit is refused.
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
	for i := range tok {
		for _, c := range []byte(alphabet) {
			if c != tok[i] {
				bad["ErrEdit"+tok[:i]+string(c)+tok[i+1:]] = tok[:i] + string(c) + tok[i+1:]
			}
		}
	}
	for name, tok := range bad {
		set := report
		if name == "ErrOtherSet" {
			set = other
		}
		if key, _, err := decodeSkipToken(tok, set, nil, nil); err == nil {
			// A change in the last character's unused bits decodes the
			// same bytes; Strict refuses it.
			t.Errorf("%s: decode(%q) = %v, want an error", name, tok, key)
		} else if e := err.(*failure.Error); e.Code != failure.Invalid || e.Target != "$skiptoken" {
			t.Errorf("%s: error %+v", name, e)
		}
	}
}

// FuzzSkipToken checks that a token either is refused with a 400 or holds
// a key whose token it is: one token per key.
func FuzzSkipToken(f *testing.F) {
	set := testSet(f, "GeneralReport", true)
	f.Add(string(appendSkipToken(nil, set, nil, nil, nil, []int64{1, 2, 3})))
	f.Add("AQICBEfwGNI")
	f.Add("")
	f.Fuzz(func(t *testing.T, tok string) {
		key, _, err := decodeSkipToken(tok, set, nil, nil)
		if err != nil {
			if e, ok := err.(*failure.Error); !ok || e.Code != failure.Invalid {
				t.Fatalf("decode(%q) = %v", tok, err)
			}
			return
		}
		if again := string(appendSkipToken(nil, set, nil, nil, nil, key)); again != tok {
			t.Fatalf("decode(%q) = %v, whose token is %q", tok, key, again)
		}
	})
}

func TestSortedSkipToken(t *testing.T) {
	t.Parallel()
	set, err := NewEntitySet(dataset.GeneralReport.EntitySet())
	if err != nil {
		t.Fatal(err)
	}
	cost, end := set.byName["costo_servicio"], set.byName["task_end_date"]
	order := []orderItem{{prop: cost, desc: true}, {prop: end}}
	tok := string(appendSkipToken(nil, set, order, nil, [][]byte{[]byte("1500.5"), nil}, []int64{6, 7, 0}))
	key, sort, err := decodeSkipToken(tok, set, order, nil)
	if err != nil || len(key) != 3 || key[0] != 6 || key[1] != 7 || key[2] != 0 ||
		len(sort) != 2 || sort[0] == nil || *sort[0] != "1500.5" || sort[1] != nil {
		t.Fatalf("decode = %v %v %v", key, sort, err)
	}
	for _, tt := range []struct {
		name  string
		tok   string
		order []orderItem
	}{
		{"OtherOrder", tok, []orderItem{{prop: cost}, {prop: end}}},
		{"NoOrder", tok, nil},
		{"Edited", tok[:len(tok)-2] + "AA", order},
		// A token whose checksum holds but whose value is not a decimal:
		// refused before it reaches the database.
		{"BadValue", string(appendSkipToken(nil, set, order, nil, [][]byte{[]byte("1e5; x"), nil}, []int64{1, 0, 0})), order},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if _, _, err := decodeSkipToken(tt.tok, set, tt.order, nil); err == nil || err.(*failure.Error).Code != failure.Invalid {
				t.Fatalf("err = %v, want a 400", err)
			}
		})
	}
}
