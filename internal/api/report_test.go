package api_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/informe/informe/internal/pgserver/pgtest"
)

// specColumns reads a field list of the API spec, copied into testdata.
func specColumns(tb testing.TB, file string) []string {
	tb.Helper()
	b, err := os.ReadFile("../../docs/spec/" + file)
	if err != nil {
		tb.Fatal(err)
	}
	return strings.Fields(string(b))
}

// field is one key and value of a report row, in the order sent.
type field struct{ Key, Value string }

// reportPage is a decoded general report response.
type reportPage struct {
	Rows        [][]field
	Raw         []json.RawMessage // the rows as sent
	TotalPages  int
	CurrentPage int
}

// decodeReport decodes a general report body token by token, failing the
// test unless it is exactly {"data":[...],"totalPages":N,"currentPage":P}
// in that key order, with rows of string values only.
func decodeReport(tb testing.TB, body []byte) reportPage {
	tb.Helper()
	var p reportPage
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	next := func() json.Token {
		tb.Helper()
		tok, err := dec.Token()
		if err != nil {
			tb.Fatalf("decoding %.300s: %v", body, err)
		}
		return tok
	}
	expect := func(want json.Token) {
		tb.Helper()
		if got := next(); got != want {
			tb.Fatalf("got token %v, want %v in %.300s", got, want, body)
		}
	}
	number := func() int {
		tb.Helper()
		n, ok := next().(json.Number)
		if !ok {
			tb.Fatalf("want a number in %.300s", body)
		}
		i, err := n.Int64()
		if err != nil {
			tb.Fatal(err)
		}
		return int(i)
	}
	expect(json.Delim('{'))
	expect("data")
	expect(json.Delim('['))
	for dec.More() {
		expect(json.Delim('{'))
		var row []field
		for dec.More() {
			k, ok := next().(string)
			if !ok {
				tb.Fatalf("want a key in %.300s", body)
			}
			v, ok := next().(string)
			if !ok {
				tb.Fatalf("value of %s is not a JSON string", k)
			}
			row = append(row, field{k, v})
		}
		expect(json.Delim('}'))
		p.Rows = append(p.Rows, row)
	}
	expect(json.Delim(']'))
	expect("totalPages")
	p.TotalPages = number()
	expect("currentPage")
	p.CurrentPage = number()
	expect(json.Delim('}'))
	if _, err := dec.Token(); err != io.EOF {
		tb.Fatalf("data after the envelope: %v", err)
	}
	var env struct{ Data []json.RawMessage }
	if err := json.Unmarshal(body, &env); err != nil {
		tb.Fatal(err)
	}
	p.Raw = env.Data
	if !bytes.HasPrefix(body, []byte(`{"data":[`)) {
		tb.Errorf("body starts %.20q, want {\"data\":[", body)
	}
	if tail := fmt.Sprintf(`],"totalPages":%d,"currentPage":%d}`, p.TotalPages, p.CurrentPage); !bytes.HasSuffix(body, []byte(tail)) {
		tb.Errorf("body does not end in %s", tail)
	}
	return p
}

func rowMap(row []field) map[string]string {
	m := make(map[string]string, len(row))
	for _, f := range row {
		m[f.Key] = f.Value
	}
	return m
}

// rowKey names a row by contract, process and task code: "1/1/T1", and
// "2//" for a contract without processes.
func rowKey(row []field) string {
	m := rowMap(row)
	return m["contract_id"] + "/" + m["process_id"] + "/" + m["task_code"]
}

func rowKeys(p reportPage) []string {
	keys := []string{}
	for _, r := range p.Rows {
		keys = append(keys, rowKey(r))
	}
	return keys
}

// allRows are the fixture's report rows in report order.
var allRows = []string{
	"1/1/T1", "1/1/T2", "1/2/T3", "2//", "3/3/", "4/4/T4", "4/4/T5", "5/5/T6", "6/6/T8", "6/6/T9", "6/7/T7",
}

// getReport fetches a report page as JSON and decodes it, failing unless
// the status is 200.
func (ts *testServer) getReport(tb testing.TB, query string) reportPage {
	tb.Helper()
	r := ts.Get(tb, "/api/general-report"+query)
	if r.Status != http.StatusOK {
		tb.Fatalf("GET %s: status = %d; body %s", query, r.Status, r.Body)
	}
	if got, want := r.MediaType(tb), "application/json"; got != want {
		tb.Fatalf("Content-Type = %q, want %q", got, want)
	}
	return decodeReport(tb, r.Body)
}

func TestReportFilters(t *testing.T) {
	t.Parallel()
	ts := newServer(t, pgtest.Fixture(t))
	client1 := []string{"1/1/T1", "1/1/T2", "1/2/T3", "2//"}
	client2 := []string{"3/3/", "4/4/T4", "4/4/T5"}
	client3 := []string{"5/5/T6", "6/6/T8", "6/6/T9", "6/7/T7"}
	for _, tt := range []struct {
		name  string
		query string
		want  []string
	}{
		{"NoFilter", "", allRows},
		{"CacheBusterIgnored", "?_=1732000000000", allRows},
		{"ContractID", "?contract_id=1", []string{"1/1/T1", "1/1/T2", "1/2/T3"}},
		{"ContractWithoutProcess", "?contract_id=2", []string{"2//"}},
		{"ProcessWithoutTask", "?contract_id=3", []string{"3/3/"}},
		{"ContractIDNoMatch", "?contract_id=99", nil},
		{"CodeContract", "?code_contract=CT-SHARED", []string{"4/4/T4", "4/4/T5", "5/5/T6"}},
		{"CodeContractNoMatch", "?code_contract=CT-999", nil},
		{"ClientID", "?client_id=3", client3},
		{"ClientIDNoMatch", "?client_id=4", nil},
		{"RUTDottedStoredDotted", "?rut=12.345.678-5", client1},
		{"RUTHyphenStoredDotted", "?rut=12345678-5", client1},
		{"RUTBareStoredDotted", "?rut=123456785", client1},
		{"RUTSpacesAround", "?rut=%2012.345.678-5%20", client1},
		{"RUTLeadingZero", "?rut=012.345.678-5", client1},
		{"RUTLeadingZeroBare", "?rut=0123456785", client1},
		{"RUTDottedStoredHyphen", "?rut=9.876.543-3", client2},
		{"RUTHyphenStoredHyphen", "?rut=9876543-3", client2},
		{"RUTBareStoredHyphen", "?rut=98765433", client2},
		{"RUTUpperKStoredLowerK", "?rut=17.000.003-K", client3},
		{"RUTLowerKDotted", "?rut=17.000.003-k", client3},
		{"RUTLowerKHyphen", "?rut=17000003-k", client3},
		{"RUTUpperKBare", "?rut=17000003K", client3},
		{"RUTLowerKBare", "?rut=17000003k", client3},
		{"RUTNoClient", "?rut=11.111.111-1", nil},
		{"ContractAndClient", "?contract_id=1&client_id=1", []string{"1/1/T1", "1/1/T2", "1/2/T3"}},
		{"ContractAndOtherClient", "?contract_id=1&client_id=2", nil},
		{"CodeAndClient", "?code_contract=CT-SHARED&client_id=3", []string{"5/5/T6"}},
		{"CodeAndRUT", "?code_contract=CT-SHARED&rut=9.876.543-3", []string{"4/4/T4", "4/4/T5"}},
		{"CodeAndContract", "?code_contract=CT-SHARED&contract_id=5", []string{"5/5/T6"}},
		{"AllFour", "?contract_id=4&code_contract=CT-SHARED&client_id=2&rut=98765433", []string{"4/4/T4", "4/4/T5"}},
		{"AllFourOneOff", "?contract_id=4&code_contract=CT-SHARED&client_id=2&rut=17000003k", nil},
		{"ContractAndOtherRUT", "?contract_id=5&rut=12345678-5", nil},
		{"ContractAndOtherCode", "?contract_id=6&code_contract=CT-001", nil},
		{"ClientAndRUT", "?client_id=1&rut=12345678-5", client1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := ts.Get(t, "/api/general-report"+tt.query)
			if r.Status != http.StatusOK {
				t.Fatalf("status = %d; body %s", r.Status, r.Body)
			}
			if tt.want == nil {
				if got, want := string(r.Body), `{"data":[],"totalPages":0,"currentPage":1}`; got != want {
					t.Fatalf("body = %s, want %s", got, want)
				}
				return
			}
			p := decodeReport(t, r.Body)
			if got, want := rowKeys(p), tt.want; !slices.Equal(got, want) {
				t.Errorf("rows = %v, want %v", got, want)
			}
			if got, want := p.TotalPages, 1; got != want {
				t.Errorf("totalPages = %d, want %d", got, want)
			}
			if got, want := p.CurrentPage, 1; got != want {
				t.Errorf("currentPage = %d, want %d", got, want)
			}
		})
	}
}

func TestReportParameterErrors(t *testing.T) {
	t.Parallel()
	ts := newServer(t, pgtest.Fixture(t))
	for _, tt := range []struct {
		name  string
		query string
		param string // the parameter the message must name
	}{
		{"ErrPageZero", "page=0", "page"},
		{"ErrPageNegative", "page=-1", "page"},
		{"ErrPageFraction", "page=1.5", "page"},
		{"ErrPageWord", "page=abc", "page"},
		{"ErrPageEmpty", "page=", "page"},
		{"ErrPageTwice", "page=1&page=1", "page"},
		{"ErrPageHuge", "page=99999999999999999999", "page"},
		{"ErrPerPageZero", "result_per_page=0", "result_per_page"},
		{"ErrPerPageNegative", "result_per_page=-1", "result_per_page"},
		{"ErrPerPageFraction", "result_per_page=1.5", "result_per_page"},
		{"ErrPerPageWord", "result_per_page=abc", "result_per_page"},
		{"ErrPerPageTooLarge", "result_per_page=10001", "result_per_page"},
		{"ErrPerPageEmpty", "result_per_page=", "result_per_page"},
		{"ErrPerPageTwice", "result_per_page=2&result_per_page=3", "result_per_page"},
		{"ErrContractIDZero", "contract_id=0", "contract_id"},
		{"ErrContractIDNegative", "contract_id=-1", "contract_id"},
		{"ErrContractIDFraction", "contract_id=1.5", "contract_id"},
		{"ErrContractIDWord", "contract_id=abc", "contract_id"},
		{"ErrContractIDEmpty", "contract_id=", "contract_id"},
		{"ErrContractIDTwice", "contract_id=1&contract_id=1", "contract_id"},
		{"ErrContractIDHuge", "contract_id=9223372036854775808", "contract_id"},
		{"ErrClientIDZero", "client_id=0", "client_id"},
		{"ErrClientIDNegative", "client_id=-1", "client_id"},
		{"ErrClientIDFraction", "client_id=1.5", "client_id"},
		{"ErrClientIDWord", "client_id=abc", "client_id"},
		{"ErrClientIDEmpty", "client_id=", "client_id"},
		{"ErrClientIDTwice", "client_id=1&client_id=2", "client_id"},
		{"ErrCodeContractEmpty", "code_contract=", "code_contract"},
		{"ErrCodeContractTwice", "code_contract=CT-001&code_contract=CT-002", "code_contract"},
		{"ErrRUTEmpty", "rut=", "rut"},
		{"ErrRUTTwice", "rut=12345678-5&rut=12345678-5", "rut"},
		{"ErrRUTNoCheckDigit", "rut=12.345.678", "rut"},
		{"ErrRUTHyphenOnly", "rut=12.345.678-", "rut"},
		{"ErrRUTWord", "rut=abc", "rut"},
		{"ErrRUTTwoHyphens", "rut=1234-5678-5", "rut"},
		{"ErrRUTBadDots", "rut=12.34.5678-5", "rut"},
		{"ErrRUTCheckDigit", "rut=12.345.678-4", "rut"},
		{"ErrRUTCheckDigitK", "rut=12345678-K", "rut"},
		{"ErrRUTCheckDigitNotK", "rut=17000003-3", "rut"},
		{"ErrRUTZero", "rut=0-0", "rut"},
		{"ErrMalformedQuery", "page=%zz", "query"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := ts.Get(t, "/api/general-report?"+tt.query)
			r.WantError(t, http.StatusBadRequest, tt.param)
			if r.Header.Get("X-Request-Id") == "" {
				t.Error("no X-Request-Id")
			}
		})
	}
}

func TestReportPagination(t *testing.T) {
	t.Parallel()
	ts := newServer(t, pgtest.Fixture(t))
	for _, tt := range []struct {
		name        string
		query       string
		rows        []string
		totalPages  int
		currentPage int
	}{
		{"DefaultPage", "?result_per_page=2", allRows[0:2], 6, 1},
		{"Middle", "?result_per_page=2&page=3", allRows[4:6], 6, 3},
		{"LastPartial", "?result_per_page=2&page=6", allRows[10:], 6, 6},
		{"PastTheEnd", "?result_per_page=2&page=7", nil, 6, 7},
		{"FarPastTheEnd", "?result_per_page=2&page=9223372036854775807", nil, 6, 9223372036854775807},
		{"OnePerPage", "?result_per_page=1&page=11", allRows[10:], 11, 11},
		{"AllInOnePage", "?result_per_page=11", allRows, 1, 1},
		{"OneOverAPage", "?result_per_page=10&page=2", allRows[10:], 2, 2},
		{"MaxPerPage", "?result_per_page=10000", allRows, 1, 1},
		{"DefaultPerPage", "?page=1", allRows, 1, 1},
		{"DefaultPerPagePastTheEnd", "?page=2", nil, 1, 2},
		{"FilteredExactMultiple", "?client_id=1&result_per_page=2&page=2", []string{"1/2/T3", "2//"}, 2, 2},
		{"FilteredExactMultiplePastTheEnd", "?client_id=1&result_per_page=2&page=3", nil, 2, 3},
		{"FilteredLastPartial", "?client_id=2&result_per_page=2&page=2", []string{"4/4/T5"}, 2, 2},
		{"FilteredMiddle", "?client_id=3&result_per_page=1&page=3", []string{"6/6/T9"}, 4, 3},
		{"NoMatchPageThree", "?contract_id=99&page=3", nil, 0, 3},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p := ts.getReport(t, tt.query)
			if got, want := rowKeys(p), tt.rows; !slices.Equal(got, want) && !(len(got) == 0 && len(want) == 0) {
				t.Errorf("rows = %v, want %v", got, want)
			}
			if got, want := p.TotalPages, tt.totalPages; got != want {
				t.Errorf("totalPages = %d, want %d", got, want)
			}
			if got, want := p.CurrentPage, tt.currentPage; got != want {
				t.Errorf("currentPage = %d, want %d", got, want)
			}
		})
	}
	t.Run("PastTheEndExact", func(t *testing.T) {
		r := ts.Get(t, "/api/general-report?result_per_page=2&page=7")
		if got, want := string(r.Body), `{"data":[],"totalPages":6,"currentPage":7}`; got != want {
			t.Errorf("body = %s, want %s", got, want)
		}
	})

	// Walking the pages gives the rows of the one full page, in order,
	// each once: with the maintained counts (unfiltered) and with counts
	// of the view (filtered).
	for _, filter := range []string{"", "&client_id=3", "&code_contract=CT-SHARED"} {
		full := ts.getReport(t, "?result_per_page=10000"+filter)
		for _, per := range []int{1, 2, 3, 4} {
			t.Run(fmt.Sprintf("Walk%s/%d", filter, per), func(t *testing.T) {
				var got []json.RawMessage
				pages := 0
				for page := 1; ; page++ {
					p := ts.getReport(t, fmt.Sprintf("?result_per_page=%d&page=%d%s", per, page, filter))
					if len(p.Raw) == 0 {
						if page != p.TotalPages+1 {
							t.Fatalf("page %d empty, but totalPages = %d", page, p.TotalPages)
						}
						break
					}
					if len(p.Raw) > per {
						t.Fatalf("page %d has %d rows, more than %d", page, len(p.Raw), per)
					}
					pages++
					got = append(got, p.Raw...)
				}
				if len(got) != len(full.Raw) {
					t.Fatalf("pages hold %d rows, the full page %d", len(got), len(full.Raw))
				}
				for i := range got {
					if !bytes.Equal(got[i], full.Raw[i]) {
						t.Errorf("row %d differs:\n got %s\nwant %s", i, got[i], full.Raw[i])
					}
				}
				if want := (len(full.Raw) + per - 1) / per; pages != want {
					t.Errorf("%d pages, want ceil(%d/%d) = %d", pages, len(full.Raw), per, want)
				}
			})
		}
	}
}

// Value formats of the spec (section 2.2) by field.
var (
	dateFields      = []string{"date_first_payment", "client_birth_date_contract", "payer_birth_date_contract", "process_date", "task_end_date", "client_birth_date"}
	timestampFields = []string{"contract_creation_date"}
	integerFields   = []string{"contract_id", "quantity_quotas", "benefit_center_id_service", "process_id", "task_duration", "task_progress", "client_id"}
	dateRE          = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}$`)
	timestampRE     = regexp.MustCompile(`^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$`)
	timestamptzRE   = regexp.MustCompile(`^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}\.\d{6}\+00$`)
	integerRE       = regexp.MustCompile(`^\d+$`)
	numberRE        = regexp.MustCompile(`^\d+(\.\d+)?$`)
)

func TestReportRows(t *testing.T) {
	t.Parallel()
	ts := newServer(t, pgtest.Fixture(t))
	p := ts.getReport(t, "")
	cols := specColumns(t, "general-report-columns.txt")
	if len(cols) != 74 {
		t.Fatalf("spec lists %d columns, want 74", len(cols))
	}

	t.Run("KeysInSpecOrder", func(t *testing.T) {
		for i, row := range p.Rows {
			var keys []string
			for _, f := range row {
				keys = append(keys, f.Key)
			}
			if !slices.Equal(keys, cols) {
				t.Fatalf("row %d keys:\n%v\nwant\n%v", i, keys, cols)
			}
		}
	})

	t.Run("ValueFormats", func(t *testing.T) {
		check := func(row map[string]string, names []string, re *regexp.Regexp) {
			t.Helper()
			for _, n := range names {
				if v := row[n]; v != "" && !re.MatchString(v) {
					t.Errorf("row %s: %s = %q, want it to match %s", rowKey(p.Rows[0]), n, v, re)
				}
			}
		}
		for _, r := range p.Rows {
			m := rowMap(r)
			check(m, dateFields, dateRE)
			check(m, timestampFields, timestampRE)
			check(m, integerFields, integerRE)
			check(m, []string{"costo_servicio"}, numberRE)
			check(m, []string{"execution_date"}, timestamptzRE)
		}
	})

	t.Run("ExecutionDates", func(t *testing.T) {
		want := map[string]string{
			"1/1/T1": "2024-03-05 14:07:09.123456+00",
			"1/1/T2": "2024-07-01 14:00:00.000000+00", // written as 10:00 in America/Santiago
			"1/2/T3": "",
			"2//":    "",
			"3/3/":   "",
			"4/4/T4": "2024-04-01 12:00:00.250000+00", // written as 09:00:00.25-03
			"4/4/T5": "2023-12-31 23:59:59.000001+00",
			"5/5/T6": "",
			"6/6/T8": "2024-05-01 16:30:00.000000+00",
			"6/6/T9": "2024-05-02 09:00:00.000000+00",
			"6/7/T7": "",
		}
		for _, r := range p.Rows {
			if got, want := rowMap(r)["execution_date"], want[rowKey(r)]; got != want {
				t.Errorf("row %s: execution_date = %q, want %q", rowKey(r), got, want)
			}
		}
	})

	// Whole rows: every field, "" for absent values.
	for _, tt := range []struct {
		name string
		key  string
		want map[string]string
	}{
		{"FullRow", "1/1/T1", map[string]string{
			"contract_id": "1", "contract_status": "APROBADO", "code_contract": "CT-001", "quantity_quotas": "12",
			"date_first_payment": "2024-02-01", "contract_creation_date": "2024-01-15 09:30:00", "attended_by": "Ana Abogada",
			"rut_client_contract": "12.345.678-5", "first_name_client_contract": "María", "second_name_client_contract": "José",
			"last_name_client_contract": "González", "second_last_name_client_contract": "Muñoz",
			"client_birth_date_contract": "1980-02-29", "client_occupation_contract": "Docente",
			"client_email_contract": "maria@example.cl", "client_phone_contract": "+56911112222",
			"client_country_contract": "Chile", "client_marital_status_contract": "Casada", "client_gender_contract": "Femenino",
			"client_region_contract": "Región Metropolitana de Santiago", "client_commune_contract": "Ñuñoa",
			"client_address_contract": "Av. Irarrázaval 1234",
			"rut_payer_contract":      "9.876.543-3", "first_name_payer_contract": "Juan", "last_name_payer_contract": "Pérez",
			"payer_birth_date_contract": "1975-12-31", "payer_occupation_contract": "Comerciante",
			"payer_email_contract": "juan@example.cl", "payer_phone_contract": "+56933334444", "payer_country_contract": "Chile",
			"payer_marital_status_contract": "Soltero", "payer_gender_contract": "Masculino",
			"payer_region_contract": "Región de Valparaíso", "payer_commune_contract": "Viña del Mar",
			"payer_address_contract": "Los Carrera 55",
			"service":                "Divorcio de mutuo acuerdo", "costo_servicio": "350000", "benefit_center_id_service": "1",
			"benefit_center_service": "Santiago Centro",
			"process_id":             "1", "process_role": "Demandante", "caratulado_process": "González con Pérez", "process_date": "2024-02-10",
			"task": "Redacción de demanda", "task_title": "Demanda", "task_detail": "Se redacta la demanda, con \"comillas\"\ny salto de línea",
			"task_code": "T1", "task_end_date": "2024-03-10", "task_duration": "90", "task_status": "En Curso", "task_progress": "50",
			"task_executor": "Ana Abogada", "execution_date": "2024-03-05 14:07:09.123456+00",
			"client_id": "1", "client_rut": "12.345.678-5", "first_name_client": "María", "second_name_client": "José",
			"last_name_client": "González", "second_last_name_client": "Muñoz", "client_email": "maria.gonzalez@example.cl",
			"client_phone": "+56911112222", "client_occupation": "Docente", "client_birth_date": "1980-02-29",
			"client_country": "Chile", "client_marital_status": "Casada", "client_gender": "Femenino",
			"client_region": "Región Metropolitana de Santiago", "client_commune": "Ñuñoa",
			"client_address": "Av. Irarrázaval 1234, depto \"B\"",
		}},
		{"ContractWithoutProcess", "2//", map[string]string{
			"contract_id": "2", "contract_status": "PENDIENTE", "code_contract": "CT-002",
			"contract_creation_date": "2024-02-20 18:45:00",
			"service":                "Gestión de certificados y copias autorizadas", "costo_servicio": "12500.5",
			"client_id": "1", "client_rut": "12.345.678-5", "first_name_client": "María", "second_name_client": "José",
			"last_name_client": "González", "second_last_name_client": "Muñoz", "client_email": "maria.gonzalez@example.cl",
			"client_phone": "+56911112222", "client_occupation": "Docente", "client_birth_date": "1980-02-29",
			"client_country": "Chile", "client_marital_status": "Casada", "client_gender": "Femenino",
			"client_region": "Región Metropolitana de Santiago", "client_commune": "Ñuñoa",
			"client_address": "Av. Irarrázaval 1234, depto \"B\"",
		}},
		{"ProcessWithoutTask", "3/3/", map[string]string{
			"contract_id": "3", "contract_status": "ANULADO", "code_contract": "CT-003",
			"contract_creation_date": "2023-11-01 10:00:00",
			"process_id":             "3", "process_role": "Demandado", "caratulado_process": "Banco con Pérez", "process_date": "2023-11-05",
			"client_id": "2", "client_rut": "9876543-3", "first_name_client": "Juan", "last_name_client": "Pérez",
		}},
		{"TaskWithNulls", "1/2/T3", map[string]string{
			"contract_id": "1", "contract_status": "APROBADO", "code_contract": "CT-001", "quantity_quotas": "12",
			"date_first_payment": "2024-02-01", "contract_creation_date": "2024-01-15 09:30:00", "attended_by": "Ana Abogada",
			"rut_client_contract": "12.345.678-5", "first_name_client_contract": "María", "second_name_client_contract": "José",
			"last_name_client_contract": "González", "second_last_name_client_contract": "Muñoz",
			"client_birth_date_contract": "1980-02-29", "client_occupation_contract": "Docente",
			"client_email_contract": "maria@example.cl", "client_phone_contract": "+56911112222",
			"client_country_contract": "Chile", "client_marital_status_contract": "Casada", "client_gender_contract": "Femenino",
			"client_region_contract": "Región Metropolitana de Santiago", "client_commune_contract": "Ñuñoa",
			"client_address_contract": "Av. Irarrázaval 1234",
			"rut_payer_contract":      "9.876.543-3", "first_name_payer_contract": "Juan", "last_name_payer_contract": "Pérez",
			"payer_birth_date_contract": "1975-12-31", "payer_occupation_contract": "Comerciante",
			"payer_email_contract": "juan@example.cl", "payer_phone_contract": "+56933334444", "payer_country_contract": "Chile",
			"payer_marital_status_contract": "Soltero", "payer_gender_contract": "Masculino",
			"payer_region_contract": "Región de Valparaíso", "payer_commune_contract": "Viña del Mar",
			"payer_address_contract": "Los Carrera 55",
			"service":                "Divorcio de mutuo acuerdo", "costo_servicio": "350000", "benefit_center_id_service": "1",
			"benefit_center_service": "Santiago Centro",
			"process_id":             "2",
			"task":                   "Audiencia preparatoria", "task_code": "T3", "task_status": "Cancelado",
			"client_id": "1", "client_rut": "12.345.678-5", "first_name_client": "María", "second_name_client": "José",
			"last_name_client": "González", "second_last_name_client": "Muñoz", "client_email": "maria.gonzalez@example.cl",
			"client_phone": "+56911112222", "client_occupation": "Docente", "client_birth_date": "1980-02-29",
			"client_country": "Chile", "client_marital_status": "Casada", "client_gender": "Femenino",
			"client_region": "Región Metropolitana de Santiago", "client_commune": "Ñuñoa",
			"client_address": "Av. Irarrázaval 1234, depto \"B\"",
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var row []field
			for _, r := range p.Rows {
				if rowKey(r) == tt.key {
					row = r
				}
			}
			if row == nil {
				t.Fatalf("no row %s", tt.key)
			}
			got := rowMap(row)
			for _, c := range cols {
				if got[c] != tt.want[c] {
					t.Errorf("%s = %q, want %q", c, got[c], tt.want[c])
				}
			}
		})
	}
}

func TestUsers(t *testing.T) {
	t.Parallel()
	ts := newServer(t, pgtest.Fixture(t))
	r := ts.Get(t, "/users")
	if r.Status != http.StatusOK {
		t.Fatalf("status = %d; body %s", r.Status, r.Body)
	}
	if got, want := r.MediaType(t), "application/json"; got != want {
		t.Errorf("Content-Type = %q, want %q", got, want)
	}
	want := `[` +
		`{"id":"1","name":"Admin","email":"admin@informe.cl","username":"admin@informe.cl","rut":"22222222-2","phone":"",` +
		`"last_entry":null,"status":"A","created_at":"2023-01-01 08:00:00","updated_at":null},` +
		`{"id":"2","name":"Pedro Soto","email":"pedro@informe.cl","username":"pedro@informe.cl","rut":"7654321-6","phone":"+56977778888",` +
		`"last_entry":"2024-01-02 03:04:05","status":"I","created_at":"2023-03-03 03:03:03","updated_at":null},` +
		`{"id":"3","name":"Carla Díaz","email":"carla@informe.cl","username":"carla@informe.cl","rut":"11111111-1","phone":"+56955556666",` +
		`"last_entry":"2024-05-06 07:08:09","status":"A","created_at":"2023-06-01 12:00:00","updated_at":"2024-05-07 10:00:00"}` +
		`]`
	if got := string(r.Body); got != want {
		t.Errorf("body =\n%s\nwant\n%s", got, want)
	}
	// The keys follow the spec's list.
	cols := specColumns(t, "users-columns.txt")
	dec := json.NewDecoder(bytes.NewReader(r.Body))
	var keys []string
	objects := 0
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		switch tok {
		case json.Delim('{'):
			objects++
			keys = keys[:0]
			for dec.More() {
				k, _ := dec.Token()
				keys = append(keys, k.(string))
				if _, err := dec.Token(); err != nil {
					t.Fatal(err)
				}
			}
			if !slices.Equal(keys, cols) {
				t.Errorf("keys %v, want %v", keys, cols)
			}
		}
	}
	if objects != 3 {
		t.Errorf("%d users, want 3", objects)
	}

	t.Run("Empty", func(t *testing.T) {
		ts := newServer(t, pgtest.Fixture(t))
		if _, err := ts.Pool.Exec(t.Context(), "DELETE FROM users"); err != nil {
			t.Fatal(err)
		}
		r := ts.Get(t, "/users")
		if got, want := string(r.Body), `[]`; r.Status != 200 || got != want {
			t.Errorf("status %d, body %s; want 200 %s", r.Status, got, want)
		}
	})
}
