package api_test

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"encoding/json"
	"encoding/xml"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pb33f/libopenapi"
	validator "github.com/pb33f/libopenapi-validator"
	"github.com/pb33f/libopenapi-validator/config"
	oaerrors "github.com/pb33f/libopenapi-validator/errors"
	"github.com/pb33f/libopenapi-validator/paths"
	"github.com/pb33f/libopenapi-validator/responses"
	"github.com/pb33f/libopenapi-validator/schema_validation"
	"github.com/pb33f/libopenapi/datamodel/high/base"
	v3 "github.com/pb33f/libopenapi/datamodel/high/v3"
	"github.com/pb33f/libopenapi/orderedmap"

	"github.com/informe/informe/auth"
	"github.com/informe/informe/export"
	"github.com/informe/informe/internal/api"
	"github.com/informe/informe/internal/api/apitest"
	"github.com/informe/informe/internal/dataset"
	"github.com/informe/informe/internal/openapi"
	"github.com/informe/informe/internal/pgserver/pgtest"
	"github.com/informe/informe/internal/postgres"
	"github.com/informe/informe/internal/source"
	"github.com/informe/informe/metrics"
	"github.com/informe/informe/report"
)

// contract is the OpenAPI document, loaded into libopenapi-validator, a
// validator of OpenAPI 3.1 requests and responses.
type contract struct {
	doc    *v3.Document
	v      validator.Validator
	schema schema_validation.SchemaValidator
}

func loadContract(tb testing.TB) *contract {
	tb.Helper()
	doc, err := libopenapi.NewDocument(openapi.JSON())
	if err != nil {
		tb.Fatal(err)
	}
	model, err := doc.BuildV3Model()
	if err != nil {
		tb.Fatal(err)
	}
	v, errs := validator.NewValidator(doc, config.WithFormatAssertions())
	if len(errs) > 0 {
		tb.Fatal(errs)
	}
	return &contract{doc: &model.Model, v: v, schema: schema_validation.NewSchemaValidator(config.WithFormatAssertions())}
}

// exchange is a request sent to the test server and its response.
type exchange struct {
	req *http.Request
	response
}

// send sends a request, header holding name, value pairs, and reads the
// whole response.
func (ts *testServer) send(tb testing.TB, method, target string, header ...string) exchange {
	tb.Helper()
	req := apitest.NewRequest(tb, method, ts.URL+target, nil, header...)
	resp, err := apitest.Client.Do(req)
	if err != nil {
		tb.Fatalf("%s %s: %v", method, target, err)
	}
	defer resp.Body.Close()
	var r io.Reader = resp.Body
	if resp.Header.Get("Content-Encoding") == "gzip" {
		// Asked for explicitly, so the transport left it: decode it here.
		if r, err = gzip.NewReader(resp.Body); err != nil {
			tb.Fatal(err)
		}
	}
	body, err := io.ReadAll(r)
	if err != nil {
		tb.Fatalf("%s %s: reading body: %v", method, target, err)
	}
	return exchange{req: req, response: response{Status: resp.StatusCode, Header: resp.Header, Body: body}}
}

// httpResponse returns x's response with body as its body, for the
// validator.
func (x exchange) httpResponse(body []byte) *http.Response {
	return &http.Response{
		StatusCode: x.Status, Header: x.Header, Request: x.req,
		Body: io.NopCloser(bytes.NewReader(body)), ContentLength: int64(len(body)),
	}
}

// reportFindings writes the validator's findings as test errors.
func reportFindings(tb testing.TB, what string, errs []*oaerrors.ValidationError) {
	tb.Helper()
	for _, e := range errs {
		tb.Errorf("%s: %s: %s", what, e.Message, e.Reason)
		for _, f := range e.SchemaValidationErrors {
			tb.Errorf("  %s at %s (%s)", f.Reason, f.FieldPath, f.KeywordLocation)
		}
	}
}

// checkRequest validates x's request against the document: its path,
// parameters and credentials.
func (c *contract) checkRequest(x exchange) (bool, []*oaerrors.ValidationError) {
	return c.v.ValidateHttpRequest(x.req)
}

// dropHeaderCoercion drops the validator's findings that a response header
// holding a string that reads as a JSON number ("4.0") is not a string:
// libopenapi-validator decodes header values as JSON before it checks
// them. checkHeaders checks every header as the string it is.
func dropHeaderCoercion(errs []*oaerrors.ValidationError) []*oaerrors.ValidationError {
	var kept []*oaerrors.ValidationError
	for _, e := range errs {
		coerced := strings.HasPrefix(e.Message, "header '") && len(e.SchemaValidationErrors) > 0
		for _, f := range e.SchemaValidationErrors {
			coerced = coerced && f.Reason == "got number, want string"
		}
		if !coerced {
			kept = append(kept, e)
		}
	}
	return kept
}

// checkResponse validates x's response against the operation its request
// matches: its status, media type, headers (with their schemas, optional
// ones included) and, for JSON, its body; an NDJSON body line by line,
// each line against the schema of an NDJSON row.
func (c *contract) checkResponse(tb testing.TB, x exchange) {
	tb.Helper()
	what := x.req.Method + " " + x.req.URL.RequestURI() + " → " + strconv.Itoa(x.Status)
	mt := ""
	if ct := x.Header.Get("Content-Type"); ct != "" {
		mt = x.MediaType(tb)
	}
	if mt == "application/x-ndjson" && x.req.Method != http.MethodHead {
		lines := bytes.SplitAfter(x.Body, []byte("\n"))
		if last := lines[len(lines)-1]; len(last) == 0 {
			lines = lines[:len(lines)-1]
		} else {
			tb.Errorf("%s: NDJSON does not end in a newline", what)
		}
		if len(lines) == 0 {
			// No rows, no lines: validate the status and headers.
			lines = [][]byte{{}}
		}
		for i, line := range lines {
			_, errs := c.v.ValidateHttpResponse(x.req, x.httpResponse(bytes.TrimSuffix(line, []byte("\n"))))
			reportFindings(tb, what+" line "+strconv.Itoa(i+1), dropHeaderCoercion(errs))
		}
	} else {
		_, errs := c.v.ValidateHttpResponse(x.req, x.httpResponse(x.Body))
		reportFindings(tb, what, dropHeaderCoercion(errs))
	}
	if resp := c.response(tb, x); resp != nil {
		c.checkHeaders(tb, what, x, resp)
	}
	// Content-Disposition: every successful listing is an attachment.
	attachment := x.Status == http.StatusOK && (mt == "text/csv" || mt == "text/tab-separated-values" || mt == export.XLSX.ContentType() ||
		mt == export.Parquet.ContentType() || mt == export.Arrow.ContentType() ||
		((mt == "application/json" || mt == "application/x-ndjson") && !strings.HasPrefix(x.req.URL.Path, "/odata") && x.req.URL.Path != "/openapi.json"))
	if got := x.Header.Get("Content-Disposition"); (got != "") != attachment {
		tb.Errorf("%s: Content-Disposition %q on a response in %s", what, got, mt)
	}
}

// response returns the documented response that x's status answers, or
// nil when the request matches no operation.
func (c *contract) response(tb testing.TB, x exchange) *v3.Response {
	tb.Helper()
	item, _, _ := paths.FindPath(x.req, c.doc, nil) // templates too: /odata/Users({id})
	if item == nil {
		return nil
	}
	op := item.GetOperations().GetOrZero(strings.ToLower(x.req.Method))
	if op == nil {
		return nil
	}
	return op.Responses.Codes.GetOrZero(strconv.Itoa(x.Status))
}

// checkHeaders checks every header resp declares: required ones are
// present, and every one present fits its schema. (The validator checks
// the schemas of required headers only.)
func (c *contract) checkHeaders(tb testing.TB, what string, x exchange, resp *v3.Response) {
	tb.Helper()
	for name, h := range resp.Headers.FromOldest() {
		values := x.Header.Values(name)
		if len(values) == 0 {
			if h.Required {
				tb.Errorf("%s: no %s header", what, name)
			}
			continue
		}
		if h.Schema == nil {
			continue
		}
		s := h.Schema.Schema()
		for _, v := range values {
			var payload []byte
			if slices.Contains(s.Type, "integer") {
				if _, err := strconv.ParseInt(v, 10, 64); err != nil {
					tb.Errorf("%s: header %s: %q is not an integer", what, name, v)
					continue
				}
				payload = []byte(v)
			} else {
				payload, _ = json.Marshal(v)
			}
			if ok, errs := c.schema.ValidateSchemaBytes(s, payload); !ok {
				reportFindings(tb, what+": header "+name+" "+strconv.Quote(v), errs)
			}
		}
	}
}

// checkComponent validates a response that no operation describes (an
// unknown path, a method a path does not allow, a 401 before routing)
// against the response component name: headers, media type and body.
func (c *contract) checkComponent(tb testing.TB, name string, x exchange) {
	tb.Helper()
	what := x.req.Method + " " + x.req.URL.RequestURI() + " → " + strconv.Itoa(x.Status) + " (" + name + ")"
	resp := c.doc.Components.Responses.GetOrZero(name)
	if resp == nil {
		tb.Fatalf("no response component %s", name)
	}
	headers := orderedmap.New[string, *v3.Header]()
	for k, h := range resp.Headers.FromOldest() {
		headers.Set(k, h)
	}
	_, errs := responses.ValidateResponseHeaders(x.req, x.httpResponse(x.Body), headers, x.req.URL.Path, strconv.Itoa(x.Status))
	reportFindings(tb, what, dropHeaderCoercion(errs))
	c.checkHeaders(tb, what, x, resp)
	media := resp.Content.GetOrZero(x.MediaType(tb))
	if media == nil {
		tb.Fatalf("%s: media type %s is not documented", what, x.MediaType(tb))
	}
	c.checkBody(tb, what, media.Schema.Schema(), x.Body)
}

// checkBody validates a JSON body against schema.
func (c *contract) checkBody(tb testing.TB, what string, schema *base.Schema, body []byte) {
	tb.Helper()
	if ok, errs := c.schema.ValidateSchemaBytes(schema, body); !ok {
		reportFindings(tb, what+": body "+string(body), errs)
	}
}

// objectKeys returns the number of keys of each object in a JSON array of
// objects.
func objectKeys(tb testing.TB, body []byte) []int {
	tb.Helper()
	var rows []map[string]json.RawMessage
	if err := json.Unmarshal(body, &rows); err != nil {
		tb.Fatalf("%v: %s", err, body)
	}
	n := make([]int, len(rows))
	for i, r := range rows {
		n[i] = len(r)
	}
	return n
}

func oaBasic(user, password string) string {
	return "Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+password))
}

// TestOpenAPI validates real requests and responses of every path and
// format against the OpenAPI document: the server over loopback HTTP, on
// the fixture in PostgreSQL.
func TestOpenAPI(t *testing.T) {
	t.Parallel()
	c := loadContract(t)
	ts := newServer(t, pgtest.Fixture(t))
	bearer := []string{"Authorization", "Bearer " + ts.Token}
	reportOnly := ts.NewToken(t, "report-only", []dataset.Scope{dataset.ReportRead}, time.Time{})
	usersOnly := ts.NewToken(t, "users-only", []dataset.Scope{dataset.UsersRead}, time.Time{})

	t.Run("OK", func(t *testing.T) {
		for _, tt := range []struct {
			target string
			header []string
			media  string
			cols   int // keys of each JSON row; 0: not a JSON listing
		}{
			{"/users", nil, "application/json", len(dataset.Users.Columns)},
			{"/users?format=ndjson", nil, "application/x-ndjson", 0},
			{"/users", []string{"Accept", "application/jsonl"}, "application/x-ndjson", 0},
			{"/users?format=csv", nil, "text/csv", 0},
			{"/users", []string{"Accept", "text/csv"}, "text/csv", 0},
			{"/users?format=csv&delimiter=tab", nil, "text/tab-separated-values", 0},
			{"/users?format=csv&delimiter=semicolon&bom=true&header=false", nil, "text/csv", 0},
			{"/users?format=xlsx", nil, export.XLSX.ContentType(), 0},
			{"/users?columns=last_entry,id,updated_at", nil, "application/json", 3},
			{"/users?columns=name&format=ndjson", nil, "application/x-ndjson", 0},
			{"/users?columns=id,created_at&format=csv", nil, "text/csv", 0},

			{"/api/general-report", nil, "application/json", 0},
			{"/api/general-report", []string{"Accept-Encoding", "gzip"}, "application/json", 0},
			{"/users?format=csv", []string{"Accept-Encoding", "gzip"}, "text/csv", 0},
			{"/api/general-report?result_per_page=2&page=2", nil, "application/json", 0},
			{"/api/general-report?result_per_page=5&page=99", nil, "application/json", 0},
			{"/api/general-report?contract_id=999", nil, "application/json", 0},
			{"/api/general-report?contract_id=1&client_id=1", nil, "application/json", 0},
			{"/api/general-report?code_contract=CT-SHARED", nil, "application/json", 0},
			{"/api/general-report?rut=12.345.678-5", nil, "application/json", 0},
			{"/api/general-report?rut=17000003k", nil, "application/json", 0},
			{"/api/general-report?columns=contract_id,task,execution_date,costo_servicio", nil, "application/json", 0},
			{"/api/general-report?format=ndjson&result_per_page=3", nil, "application/x-ndjson", 0},
			{"/api/general-report?format=ndjson&contract_id=999", nil, "application/x-ndjson", 0},
			{"/api/general-report?format=ndjson&columns=process_date,task_status", nil, "application/x-ndjson", 0},
			{"/api/general-report?format=csv&page=2&result_per_page=4", nil, "text/csv", 0},
			{"/api/general-report?format=csv&delimiter=tab&columns=task", nil, "text/tab-separated-values", 0},
			{"/api/general-report?format=xlsx", nil, export.XLSX.ContentType(), 0},
			{"/api/general-report?format=xlsx&columns=client_birth_date,contract_id", nil, export.XLSX.ContentType(), 0},
			{"/api/general-report", []string{"Accept", "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"}, export.XLSX.ContentType(), 0},

			{"/api/general-report/export", nil, "application/json", len(dataset.GeneralReport.Columns)},
			{"/api/general-report/export?client_id=3&columns=contract_id,task_progress", nil, "application/json", 2},
			{"/api/general-report/export?contract_id=999", nil, "application/json", 0},
			{"/api/general-report/export?format=ndjson", nil, "application/x-ndjson", 0},
			{"/api/general-report/export?format=csv&bom=true", nil, "text/csv", 0},
			{"/api/general-report/export?format=csv&delimiter=tab", nil, "text/tab-separated-values", 0},
			{"/api/general-report/export?format=xlsx&rut=9876543-3", nil, export.XLSX.ContentType(), 0},

			{"/api/contracts/export", nil, "application/json", len(dataset.Contracts.Columns)},
			{"/api/contracts/export?columns=contract_id,service,costo_servicio,tasks_pending&format=ndjson", nil, "application/x-ndjson", 0},
			{"/api/contracts/export?$filter=tasks%20gt%200&$select=contract_id,first_task_end_date", nil, "application/json", 2},
			{"/api/processes/export?format=csv", nil, "text/csv", 0},
			{"/api/processes/export", nil, "application/json", len(dataset.Processes.Columns)},
			{"/api/tasks/export?format=xlsx", nil, export.XLSX.ContentType(), 0},
			{"/api/tasks/export", nil, "application/json", len(dataset.Tasks.Columns)},
			{"/api/clients/export?format=csv&delimiter=tab", nil, "text/tab-separated-values", 0},
			{"/api/clients/export", nil, "application/json", len(dataset.Clients.Columns)},
			{"/api/services/export?$orderby=costo_servicio%20desc", nil, "application/json", len(dataset.Services.Columns)},
		} {
			t.Run(tt.target+strings.Join(tt.header, "="), func(t *testing.T) {
				x := ts.send(t, http.MethodGet, tt.target, append(bearer, tt.header...)...)
				if x.Status != http.StatusOK {
					t.Fatalf("status %d: %s", x.Status, x.Body)
				}
				if got := x.MediaType(t); got != tt.media {
					t.Errorf("media type = %s, want %s", got, tt.media)
				}
				if ok, errs := c.checkRequest(x); !ok {
					reportFindings(t, "request", errs)
				}
				c.checkResponse(t, x)
				// No row schema requires its properties (columns= chooses
				// them): check here that the keys are the ones asked for.
				if tt.cols > 0 {
					for i, n := range objectKeys(t, x.Body) {
						if n != tt.cols {
							t.Errorf("row %d has %d keys, want %d", i+1, n, tt.cols)
						}
					}
				}
			})
		}
	})

	t.Run("Head", func(t *testing.T) {
		for _, target := range []string{"/users", "/users?format=xlsx", "/api/general-report?format=csv&result_per_page=2", "/api/general-report/export?format=ndjson"} {
			t.Run(target, func(t *testing.T) {
				x := ts.send(t, http.MethodHead, target, bearer...)
				if x.Status != http.StatusOK {
					t.Fatalf("status %d", x.Status)
				}
				if ok, errs := c.checkRequest(x); !ok {
					reportFindings(t, "request", errs)
				}
				c.checkResponse(t, x)
			})
		}
	})

	t.Run("NotModified", func(t *testing.T) {
		for _, target := range []string{"/users?format=csv", "/api/general-report?format=csv&result_per_page=2", "/api/general-report/export?format=xlsx",
			openapi.ODataRoot + "/Tasks?$top=2", openapi.ODataRoot + "/Tasks/$count"} {
			t.Run(target, func(t *testing.T) {
				// The same coding for both (Go asks for gzip on a GET only).
				header := append(bearer[:len(bearer):len(bearer)], "Accept-Encoding", "gzip")
				tag := ts.send(t, http.MethodGet, target, header...).Header.Get("ETag")
				for _, method := range []string{http.MethodGet, http.MethodHead} {
					x := ts.send(t, method, target, append(header, "If-None-Match", tag)...)
					if x.Status != http.StatusNotModified {
						t.Fatalf("%s: status %d", method, x.Status)
					}
					if ok, errs := c.checkRequest(x); !ok {
						reportFindings(t, "request", errs)
					}
					c.checkResponse(t, x)
				}
			})
		}
	})

	t.Run("Credentials", func(t *testing.T) {
		for _, tt := range []struct {
			name, target string
			header       []string
		}{
			{"Basic", "/users", []string{"Authorization", oaBasic("finanzas", ts.Token)}},
			{"AccessToken", "/api/general-report?format=csv&access_token=" + url.QueryEscape(ts.Token), nil},
			{"ScopedReport", "/api/general-report/export?format=ndjson", []string{"Authorization", "Bearer " + reportOnly}},
			{"ScopedUsers", "/users?format=xlsx", []string{"Authorization", "Bearer " + usersOnly}},
		} {
			t.Run(tt.name, func(t *testing.T) {
				x := ts.send(t, http.MethodGet, tt.target, tt.header...)
				if x.Status != http.StatusOK {
					t.Fatalf("status %d: %s", x.Status, x.Body)
				}
				if ok, errs := c.checkRequest(x); !ok {
					reportFindings(t, "request", errs)
				}
				c.checkResponse(t, x)
			})
		}
		// The document knows a request without credentials is wrong.
		x := ts.send(t, http.MethodGet, "/users")
		if ok, _ := c.checkRequest(x); ok {
			t.Error("the document accepts a request without credentials")
		}
	})

	t.Run("Errors", func(t *testing.T) {
		for _, tt := range []struct {
			name, method, target string
			header               []string
			status               int
			// docRejects says the document itself tells the request is
			// wrong (a parameter outside its schema).
			docRejects bool
		}{
			{"PageZero", "GET", "/api/general-report?page=0", bearer, 400, true},
			{"PerPageTooBig", "GET", "/api/general-report?result_per_page=10001", bearer, 400, true},
			{"ContractNotInteger", "GET", "/api/general-report?contract_id=abc", bearer, 400, true},
			{"ClientIDZero", "GET", "/api/general-report/export?client_id=0", bearer, 400, true},
			{"EmptyCode", "GET", "/api/general-report?code_contract=", bearer, 400, true},
			{"RUTMalformed", "GET", "/api/general-report?rut=abc", bearer, 400, true},
			{"RUTCheckDigit", "GET", "/api/general-report?rut=12.345.678-0", bearer, 400, false},
			{"PageTwice", "GET", "/api/general-report?page=1&page=2", bearer, 400, false},
			{"UnknownFormat", "GET", "/users?format=pdf", bearer, 400, true},
			{"UnknownDelimiter", "GET", "/users?format=csv&delimiter=pipe", bearer, 400, true},
			{"HeaderNotBool", "GET", "/users?format=csv&header=yes", bearer, 400, true},
			{"UnknownColumn", "GET", "/users?columns=id,nope", bearer, 400, true},
			{"RepeatedColumn", "GET", "/api/general-report/export?columns=task,task", bearer, 400, true},
			{"NoToken", "GET", "/users", nil, 401, true},
			{"BadToken", "GET", "/api/general-report", []string{"Authorization", "Bearer " + apitest.WellFormedToken()}, 401, false},
			{"BadBasic", "GET", "/api/general-report/export", []string{"Authorization", oaBasic("x", "nope")}, 401, false},
			{"BadQueryToken", "GET", "/users?access_token=nope", nil, 401, false},
			{"NoTokenDocument", "GET", openapi.Path, nil, 401, true},
			{"ForbiddenReport", "GET", "/api/general-report", []string{"Authorization", "Bearer " + usersOnly}, 403, false},
			{"ForbiddenExport", "GET", "/api/general-report/export?format=csv", []string{"Authorization", "Bearer " + usersOnly}, 403, false},
			{"ForbiddenUsers", "GET", "/users", []string{"Authorization", "Bearer " + reportOnly}, 403, false},
			{"NotAcceptableUsers", "GET", "/users", append([]string{"Accept", "image/png"}, bearer...), 406, false},
			{"NotAcceptableReport", "GET", "/api/general-report", append([]string{"Accept", "text/html, application/xml;q=0.9"}, bearer...), 406, false},
			{"NotAcceptableExport", "GET", "/api/general-report/export", append([]string{"Accept", "application/json;q=0"}, bearer...), 406, false},
			{"HeadersTooLarge", "GET", "/users", append([]string{"X-Padding", strings.Repeat("x", 70<<10)}, bearer...), 431, false},
		} {
			t.Run(tt.name, func(t *testing.T) {
				x := ts.send(t, tt.method, tt.target, tt.header...)
				if x.Status != tt.status {
					t.Fatalf("status = %d, want %d; body %s", x.Status, tt.status, x.Body)
				}
				if ok, _ := c.checkRequest(x); ok == tt.docRejects {
					if tt.docRejects {
						t.Error("the document accepts this request")
					} else {
						t.Error("the document rejects this request, which only the server can tell wrong")
					}
				}
				c.checkResponse(t, x)
				if c.response(t, x) == nil {
					t.Errorf("status %d of %s is not documented", x.Status, tt.target)
				}
			})
		}
	})

	// Responses that no operation describes: the response components.
	t.Run("Undocumented", func(t *testing.T) {
		for _, tt := range []struct {
			name, method, target string
			header               []string
			status               int
			component            string
		}{
			{"UnknownPathNoToken", "GET", "/nope", nil, 401, "Unauthorized"},
			{"UnknownPath", "GET", "/nope", bearer, 404, "NotFound"},
			{"TrailingSlash", "GET", "/users/", bearer, 404, "NotFound"},
			{"PostUsers", "POST", "/users", bearer, 405, "MethodNotAllowed"},
			{"DeleteReport", "DELETE", "/api/general-report", bearer, 405, "MethodNotAllowed"},
			{"PostNoToken", "POST", "/users", nil, 401, "Unauthorized"},
			{"ODataUnknownSetNoToken", "GET", openapi.ODataRoot + "/Nope", nil, 401, "Unauthorized"},
			{"ODataUnknownSet", "GET", openapi.ODataRoot + "/Nope", bearer, 404, "ODataNotFound"},
			{"ODataPost", "POST", openapi.ODataRoot + "/Users", bearer, 405, "ODataMethodNotAllowed"},
		} {
			t.Run(tt.name, func(t *testing.T) {
				x := ts.send(t, tt.method, tt.target, tt.header...)
				if x.Status != tt.status {
					t.Fatalf("status = %d, want %d; body %s", x.Status, tt.status, x.Body)
				}
				c.checkComponent(t, tt.component, x)
			})
		}
	})

	t.Run("Document", func(t *testing.T) {
		// The whole document is for a token that reads everything (see
		// TestOpenAPIRules for the others).
		every := ts.NewToken(t, "every-scope", auth.Known, time.Time{})
		x := ts.send(t, http.MethodGet, openapi.Path, "Authorization", "Bearer "+every)
		if x.Status != http.StatusOK { // a 404 too: the document is routed, and must stay so
			t.Fatalf("status %d: %s", x.Status, x.Body)
		}
		if ok, errs := c.checkRequest(x); !ok {
			reportFindings(t, "request", errs)
		}
		c.checkResponse(t, x)
		if !bytes.Equal(x.Body, openapi.JSON()) {
			t.Errorf("%s does not serve openapi.JSON()", openapi.Path)
		}
		h := ts.send(t, http.MethodHead, openapi.Path, bearer...)
		if h.Status != http.StatusOK {
			t.Errorf("HEAD: status %d", h.Status)
		}
		c.checkResponse(t, h)
		// Any valid token may read it.
		y := ts.send(t, http.MethodGet, openapi.Path+"?access_token="+url.QueryEscape(reportOnly))
		if y.Status != http.StatusOK {
			t.Errorf("with a report-only token in the query: status %d", y.Status)
		}
	})

	t.Run("OData", func(t *testing.T) { checkOData(t, c, ts) })
}

// TestOpenAPIServerErrors validates the 500 and 503 responses, which need
// servers that fail.
func TestOpenAPIServerErrors(t *testing.T) {
	t.Parallel()
	c := loadContract(t)
	pool := pgtest.New(t)
	down := closedPortPool(t)

	// A Server without its report store panics in the report handler.
	broken := serve(t, &api.Server{Report: source.Report(report.Maintained), Tokens: auth.NewStore(pool), Metrics: metrics.New(pool)})
	brokenToken := broken.NewToken(t, "broken", nil, time.Time{})
	storesDown := serve(t, &api.Server{
		Data: postgres.NewStore(down), Report: source.Report(report.Maintained),
		Tokens: auth.NewStore(pool), Metrics: metrics.New(pool),
	})
	downToken := storesDown.NewToken(t, "down", nil, time.Time{})
	allDown := serve(t, &api.Server{
		Data: postgres.NewStore(down), Report: source.Report(report.Maintained),
		Tokens: auth.NewStore(down), Metrics: metrics.New(down),
	})

	for _, tt := range []struct {
		name   string
		ts     *testServer
		token  string
		target string
		status int
	}{
		{"Panic", broken, brokenToken, "/api/general-report", 500},
		{"PanicCSV", broken, brokenToken, "/api/general-report/export?format=csv", 500},
		{"UsersDown", storesDown, downToken, "/users", 503},
		{"ReportDown", storesDown, downToken, "/api/general-report?format=xlsx", 503},
		{"ExportDown", storesDown, downToken, "/api/general-report/export?format=ndjson", 503},
		{"TokensDown", allDown, apitest.WellFormedToken(), "/users", 503},
	} {
		t.Run(tt.name, func(t *testing.T) {
			x := tt.ts.send(t, http.MethodGet, tt.target, "Authorization", "Bearer "+tt.token)
			if x.Status != tt.status {
				t.Fatalf("status = %d, want %d; body %s", x.Status, tt.status, x.Body)
			}
			if ok, errs := c.checkRequest(x); !ok {
				reportFindings(t, "request", errs)
			}
			c.checkResponse(t, x)
		})
	}
}

// TestOpenAPIValidatorCatches makes sure the validation above is not
// vacuous: responses that break the document are reported.
func TestOpenAPIValidatorCatches(t *testing.T) {
	t.Parallel()
	c := loadContract(t)
	req, err := http.NewRequest(http.MethodGet, "http://informe.test/users", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer x")
	good := http.Header{
		"Content-Type":  {"application/json; charset=utf-8"},
		"X-Request-Id":  {"abc"},
		"Cache-Control": {"private, no-store"},
		"Vary":          {"Accept"},
		"X-Total-Count": {"1"},
	}
	user := `{"id":"1","name":"A","email":"a@b","username":"a@b","rut":"1-9","phone":"","last_entry":null,"status":"A","created_at":"2024-01-01 00:00:00","updated_at":null}`
	for _, tt := range []struct {
		name   string
		header func(http.Header)
		body   string
		valid  bool
	}{
		{"OK", nil, "[" + user + "]", true},
		{"IDNumber", nil, `[` + strings.Replace(user, `"id":"1"`, `"id":1`, 1) + `]`, false},
		{"BadTimestamp", nil, `[` + strings.Replace(user, `2024-01-01 00:00:00`, `2024-01-01T00:00:00Z`, 1) + `]`, false},
		{"UnknownKey", nil, `[` + strings.Replace(user, `"id":"1"`, `"id":"1","x":"y"`, 1) + `]`, false},
		{"NoRequestID", func(h http.Header) { h.Del("X-Request-Id") }, "[" + user + "]", false},
		{"NotCSVType", func(h http.Header) { h.Set("Content-Type", "text/plain") }, "a", false},
		{"CountNotInteger", func(h http.Header) { h.Set("X-Total-Count", "many") }, "[" + user + "]", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h := good.Clone()
			if tt.header != nil {
				tt.header(h)
			}
			x := exchange{req: req, response: response{Status: 200, Header: h, Body: []byte(tt.body)}}
			ok, _ := c.v.ValidateHttpResponse(req, x.httpResponse(x.Body))
			if ok != tt.valid {
				t.Errorf("valid = %v, want %v", ok, tt.valid)
			}
		})
	}
}

// csdl is the part of an OData CSDL document the test compares.
type csdl struct {
	Types []struct {
		Name string `xml:"Name,attr"`
		Key  struct {
			Name string `xml:"Name,attr"`
		} `xml:"Key>PropertyRef"`
		Props []struct {
			Name     string `xml:"Name,attr"`
			Type     string `xml:"Type,attr"`
			Nullable string `xml:"Nullable,attr"`
		} `xml:"Property"`
		Navs []struct {
			Name string `xml:"Name,attr"`
		} `xml:"NavigationProperty"`
	} `xml:"DataServices>Schema>EntityType"`
	Sets []struct {
		Name string `xml:"Name,attr"`
		Type string `xml:"EntityType,attr"`
	} `xml:"DataServices>Schema>EntityContainer>EntitySet"`
}

// checkOData validates the OData service.
func checkOData(t *testing.T, c *contract, ts *testServer) {
	bearer := []string{"Authorization", "Bearer " + ts.Token}
	root := ts.send(t, http.MethodGet, openapi.ODataRoot+"/", bearer...)
	if root.Status != http.StatusOK {
		t.Fatalf("%s/ answers %d, want 200 (the OData service is routed, and must stay so): %s", openapi.ODataRoot, root.Status, root.Body)
	}
	check := func(t *testing.T, x exchange, status int) {
		t.Helper()
		if x.Status != status {
			t.Fatalf("status = %d, want %d; body %s", x.Status, status, x.Body)
		}
		// Power Query refuses a doubled OData-Version. A 401 is the same
		// on every path: without one.
		want := []string{"4.0"}
		if status == http.StatusUnauthorized {
			want = nil
		}
		if got := x.Header.Values("OData-Version"); !slices.Equal(got, want) {
			t.Errorf("OData-Version = %q, want %q", got, want)
		}
		c.checkResponse(t, x)
	}
	t.Run("ServiceDocument", func(t *testing.T) {
		if ok, errs := c.checkRequest(root); !ok {
			reportFindings(t, "request", errs)
		}
		check(t, root, 200)
		x := ts.send(t, http.MethodGet, openapi.ODataRoot, bearer...)
		check(t, x, 200)
		if !bytes.Equal(x.Body, root.Body) {
			t.Errorf("%s and %s/ differ", openapi.ODataRoot, openapi.ODataRoot)
		}
	})

	t.Run("Head", func(t *testing.T) {
		for _, target := range []string{"", "/", "/$metadata", "/GeneralReport?$top=1", "/Users?$count=true"} {
			x := ts.send(t, http.MethodHead, openapi.ODataRoot+target, bearer...)
			if ok, errs := c.checkRequest(x); !ok {
				reportFindings(t, "request", errs)
			}
			check(t, x, 200)
		}
	})

	t.Run("Metadata", func(t *testing.T) {
		x := ts.send(t, http.MethodGet, openapi.ODataRoot+"/$metadata", bearer...)
		check(t, x, 200)
		var doc csdl
		if err := xml.Unmarshal(x.Body, &doc); err != nil {
			t.Fatal(err)
		}
		// The document's entity schemas list the properties of the CSDL's
		// entity types, in order, typed alike.
		for _, et := range doc.Types {
			var set string
			for _, s := range doc.Sets {
				if strings.HasSuffix(s.Type, "."+et.Name) {
					set = s.Name
				}
			}
			schema := c.doc.Components.Schemas.GetOrZero("OData" + set + "Entity")
			if schema == nil {
				t.Errorf("entity type %s (set %q) has no schema OData%sEntity", et.Name, set, set)
				continue
			}
			s := schema.Schema()
			var names []string
			for name := range s.Properties.KeysFromOldest() {
				names = append(names, name)
			}
			var want []string
			for _, p := range et.Props {
				want = append(want, p.Name)
				prop := s.Properties.GetOrZero(p.Name)
				if prop == nil {
					continue
				}
				ps := prop.Schema()
				if nullable := slices.Contains(ps.Type, "null"); nullable != (p.Nullable == "true") {
					t.Errorf("%s.%s: nullable %v in the document, Nullable=%q in $metadata", et.Name, p.Name, nullable, p.Nullable)
				}
				if ps.Description != "" && !strings.HasPrefix(ps.Description, p.Type+".") && p.Name != et.Key.Name {
					t.Errorf("%s.%s: described as %q, typed %s in $metadata", et.Name, p.Name, ps.Description, p.Type)
				}
			}
			for _, n := range et.Navs {
				want = append(want, n.Name) // what $expand adds, after the properties
			}
			if !slices.Equal(names, want) {
				t.Errorf("%s: properties %v in the document, %v in $metadata", et.Name, names, want)
			}
			if !slices.Contains(s.Required, et.Key.Name) {
				t.Errorf("%s: key %s not required in the document", et.Name, et.Key.Name)
			}
		}
	})

	t.Run("Feeds", func(t *testing.T) {
		ieee := "$format=" + url.QueryEscape("application/json;IEEE754Compatible=true")
		for _, target := range []string{
			"/GeneralReport",
			"/GeneralReport?$count=true&$top=3",
			"/GeneralReport?$select=contract_id,task,costo_servicio,execution_date,client_birth_date&$filter=client_id%20eq%201",
			"/GeneralReport?$filter=code_contract%20eq%20'CT-SHARED'&$orderby=contract_id&" + ieee,
			"/GeneralReport?$skip=2&$top=2&$count=true&" + ieee,
			"/Users",
			"/Users?$select=last_entry,name&$count=true",
			"/Users?$orderby=id%20asc&" + ieee,
			"/Contracts?$expand=Client($select=client_rut,client_region),Service,Processes($select=tasks),Tasks",
			"/Contracts?$select=contract_id,costo_servicio&$filter=tasks%20gt%200&$orderby=costo_servicio%20desc&$expand=Client&" + ieee,
			"/Processes?$expand=Contract($select=code_contract),Tasks($select=task_status)&$count=true",
			"/Tasks?$expand=Process,Contract($select=client_id)&$top=3",
			"/Clients?$expand=Contracts($select=costo_servicio)",
			"/Services?$expand=Contracts",
			"/Contracts(3)?$expand=Service,Processes",
			"/Tasks(2)?$select=task_id&$expand=Contract",
		} {
			t.Run(target, func(t *testing.T) {
				x := ts.send(t, http.MethodGet, openapi.ODataRoot+target, bearer...)
				if ok, errs := c.checkRequest(x); !ok {
					reportFindings(t, "request", errs)
				}
				check(t, x, 200)
			})
		}
		// Pages and next links: follow them to the end.
		next := ts.URL + openapi.ODataRoot + "/GeneralReport?$count=true"
		for page := 1; next != ""; page++ {
			if page > 20 {
				t.Fatal("more than 20 pages of 2")
			}
			u, err := url.Parse(next)
			if err != nil || !u.IsAbs() {
				t.Fatalf("@odata.nextLink %q is not an absolute URL", next)
			}
			x := ts.send(t, http.MethodGet, u.RequestURI(), append([]string{"Prefer", "odata.maxpagesize=2"}, bearer...)...)
			check(t, x, 200)
			if got, want := x.Header.Get("Preference-Applied"), "odata.maxpagesize=2"; got != want {
				t.Errorf("Preference-Applied = %q, want %q", got, want)
			}
			var feed struct {
				Next string `json:"@odata.nextLink"`
			}
			if err := json.Unmarshal(x.Body, &feed); err != nil {
				t.Fatal(err)
			}
			next = feed.Next
		}
	})

	t.Run("CountAndKey", func(t *testing.T) {
		// Keys that exist: those of the first entity of each set.
		var first struct {
			Value []struct {
				RowID string `json:"row_id"`
				ID    int64  `json:"id"`
			} `json:"value"`
		}
		keys := map[string]string{}
		for set, key := range map[string]func() string{
			"GeneralReport": func() string { return "'" + first.Value[0].RowID + "'" },
			"Users":         func() string { return strconv.FormatInt(first.Value[0].ID, 10) },
		} {
			x := ts.send(t, http.MethodGet, openapi.ODataRoot+"/"+set+"?$top=1", bearer...)
			if err := json.Unmarshal(x.Body, &first); err != nil || len(first.Value) != 1 {
				t.Fatalf("%s?$top=1: %v: %s", set, err, x.Body)
			}
			keys[set] = key()
		}
		for _, tt := range []struct {
			method, target string
			header         []string
			status         int
		}{
			{"GET", "/GeneralReport/$count", bearer, 200},
			{"HEAD", "/GeneralReport/$count", bearer, 200},
			{"GET", "/GeneralReport/$count?$filter=client_id%20eq%201%20and%20task_end_date%20ne%20null", bearer, 200},
			{"GET", "/Users/$count?$filter=startswith(name,'a')", bearer, 200},
			{"GET", "/GeneralReport/$count?$filter=task%20eq%201", bearer, 400},
			{"GET", "/GeneralReport/$count?$filter=round(costo_servicio)%20eq%201", bearer, 501},
			{"GET", "/Users/$count", nil, 401},
			{"GET", "/GeneralReport(" + keys["GeneralReport"] + ")", bearer, 200},
			{"HEAD", "/GeneralReport(" + keys["GeneralReport"] + ")", bearer, 200},
			{"GET", "/GeneralReport(" + keys["GeneralReport"] + ")?$select=task,costo_servicio", bearer, 200},
			{"GET", "/GeneralReport('999999-0-0')", bearer, 404},
			{"GET", "/GeneralReport('1-x-0')", bearer, 400},
			{"GET", "/GeneralReport(" + keys["GeneralReport"] + ")?$top=1", bearer, 400},
			{"GET", "/Users(" + keys["Users"] + ")", bearer, 200},
			{"GET", "/Users(" + keys["Users"] + ")?$select=name", bearer, 200},
			{"GET", "/Users(999999999)", bearer, 404},
			{"GET", "/Users(" + keys["Users"] + ")", nil, 401},
		} {
			t.Run(tt.method+" "+tt.target, func(t *testing.T) {
				x := ts.send(t, tt.method, openapi.ODataRoot+tt.target, tt.header...)
				check(t, x, tt.status)
				if c.response(t, x) == nil {
					t.Errorf("status %d of %s %s is not documented", x.Status, tt.method, tt.target)
				}
				if ok, errs := c.checkRequest(x); tt.status == 200 && !ok {
					reportFindings(t, "request", errs)
				}
			})
		}
	})

	t.Run("Errors", func(t *testing.T) {
		for _, tt := range []struct {
			target     string
			header     []string
			status     int
			docRejects bool
		}{
			{"/GeneralReport?$top=-1", bearer, 400, true},
			{"/GeneralReport?$filter=nope%20eq%201", bearer, 400, false},
			{"/GeneralReport?$skiptoken=AAAA", bearer, 400, false},
			{"/GeneralReport?$expand=x", bearer, 501, false},
			{"/GeneralReport?$filter=round(costo_servicio)%20eq%201", bearer, 501, false},
			{"/GeneralReport?$filter=task%20eq%201", bearer, 400, false},
			{"/GeneralReport?$orderby=tolower(task)", bearer, 501, true},
			{"/Users?$format=xml", bearer, 406, false},
			{"/Users", append([]string{"Accept", "text/csv"}, bearer...), 406, false},
			{"/Users", nil, 401, true},
		} {
			t.Run(tt.target, func(t *testing.T) {
				x := ts.send(t, http.MethodGet, openapi.ODataRoot+tt.target, tt.header...)
				if ok, _ := c.checkRequest(x); ok == tt.docRejects {
					t.Errorf("the document says the request is valid: %v, want %v", ok, !tt.docRejects)
				}
				check(t, x, tt.status)
			})
		}
	})
}
