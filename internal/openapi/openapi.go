// Package openapi builds informe's OpenAPI 3.1 document: every path,
// parameter, format, header, security scheme and error of the API, the
// OData service included, with the row schemas generated from the
// datasets' column lists ([dataset.Dataset]) so that the document cannot
// drift from the rows the encoders write.
//
// [For] returns the document of the datasets it is given: the server
// answers GET /openapi.json, authenticated like every other path, with
// the document of what the request's token may read, its datasets as its
// rules restrict them. [JSON] is the document of every dataset, which a
// token with every scope and no rules reads; docs/openapi.json is a copy
// that a test keeps identical to it. After changing the API or a column
// list, regenerate the copy with
//
//	go generate ./internal/openapi
//
// which runs this package's TestDocFile with -update. internal/api's
// TestOpenAPI validates real requests and responses of every path and
// format against the document.
package openapi

//go:generate go test -run ^TestDocFile$ -update .

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/informe/informe/auth"
	"github.com/informe/informe/export"
	"github.com/informe/informe/internal/dataset"
	"github.com/informe/informe/report"
)

// Path is where the server serves the document.
const Path = "/openapi.json"

// JSON returns the OpenAPI 3.1 document of everything informe serves
// ([For] of every dataset of [dataset.All]): the same bytes on every call
// and every build of the same code. Each call returns a new copy.
func JSON() []byte { return bytes.Clone(documentJSON()) }

var documentJSON = sync.OnceValue(func() []byte { return For(dataset.All) })

// For returns the OpenAPI 3.1 document of the API as it serves datasets,
// as indented JSON ending in a newline: the paths, parameters and schemas
// of those datasets only, each with its columns as given (a token's
// restricted datasets, from source.Restrict, describe what the token
// sees: a hidden column is in no schema, parameter or example, a masked
// one is marked x-masked), and the OData service of their entity sets.
// The paths the API spec defines (the general report's, /users) are
// there when their dataset is given. For of [dataset.All] is [JSON]'s
// document. Serve it as application/json.
func For(datasets []*dataset.Dataset) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(newView(datasets).document()); err != nil {
		// Only strings, numbers, booleans, slices and objects go in: a
		// failure is a bug that every test of the package shows.
		panic(fmt.Sprintf("openapi: %v", err))
	}
	return b.Bytes()
}

// view is what one document describes: datasets, in the order given, and
// their OData entity sets.
type view struct {
	datasets []*dataset.Dataset
	sets     []odataSet
}

// newView returns the view of datasets. A navigation whose target set is
// not among them is left out, as $metadata leaves it out.
func newView(datasets []*dataset.Dataset) *view {
	v := &view{datasets: datasets}
	for _, d := range datasets {
		v.sets = append(v.sets, odataSet{d.EntitySet(), string(d.Scope)})
	}
	for i := range v.sets {
		s := &v.sets[i]
		s.Navigations = slices.DeleteFunc(slices.Clone(s.Navigations), func(n dataset.Navigation) bool {
			return !slices.ContainsFunc(v.sets, func(t odataSet) bool { return t.Name == n.Target })
		})
	}
	return v
}

// named returns the dataset of v called name, or nil.
func (v *view) named(name string) *dataset.Dataset {
	for _, d := range v.datasets {
		if d.Name == name {
			return d
		}
	}
	return nil
}

// uses reports whether a listing of v takes the spec's query parameter p.
func (v *view) uses(p string) bool {
	for _, d := range v.datasets {
		if slices.Contains(d.Params, p) || slices.Contains(d.PageParams, p) {
			return true
		}
	}
	return false
}

// plain reports whether every name is a column of a dataset of v that
// is not masked: one that $filter and $orderby may name, and an example
// may show.
func (v *view) plain(names ...string) bool {
	for _, n := range names {
		if !slices.ContainsFunc(v.datasets, func(d *dataset.Dataset) bool {
			return slices.ContainsFunc(d.Columns, func(c dataset.Column) bool { return c.Name == n && c.Mask == dataset.Unmasked })
		}) {
			return false
		}
	}
	return true
}

// example returns o with the example ex when v shows every column it
// names (see [view.plain]), else o: an example never names a column
// the reader may not see.
func (v *view) example(o object, ex any, names ...string) object {
	if !v.plain(names...) {
		return o
	}
	return o.with("example", ex)
}

func (v *view) document() object {
	tags := []object{}
	if v.named(dataset.GeneralReport.Name) != nil {
		tags = append(tags, obj("name", "report", "description", "The general report: one row per task of a process of a contract."))
	}
	if v.named(dataset.Users.Name) != nil {
		tags = append(tags, obj("name", "users", "description", "The users of the system."))
	}
	if len(v.entities()) > 0 {
		tags = append(tags, obj("name", "entities", "description", "Contracts, processes, tasks, clients and services, each at its own grain: one row per entity, so that a column sums to the right total."))
	}
	tags = append(tags,
		obj("name", "odata", "description", "The same data as an OData 4.0 service, for Excel and Power BI (Get Data → OData feed)."),
		obj("name", "meta", "description", "This document."),
	)
	return obj(
		"openapi", "3.1.0",
		"info", obj(
			"title", "informe",
			"version", "1",
			"summary", "The reporting API of a legal-services management system: users and the general report, as JSON, NDJSON, CSV, XLSX, Parquet and Arrow, and as an OData service.",
			"description", v.infoDescription(),
		),
		// Every path needs a valid token; the listings also need a scope,
		// stated by their own security requirements.
		"security", securityRequirements(""),
		"tags", tags,
		"paths", v.paths(),
		"components", v.components(),
	)
}

// infoDescription is the document's introduction.
func (v *view) infoDescription() string {
	return `informe serves the general report of the legal-services system (contracts, clients, payers, services, processes and their tasks) and its users, to API clients that read JSON and to people who work in spreadsheets: the same paths stream JSON, NDJSON, CSV and XLSX (and Parquet and Arrow, with typed columns, for data tools), and an OData service feeds Excel and Power BI. Rows go from the database straight to the client, so a page of up to 10,000 rows never sits whole in memory.

## Authentication

Every path, this document and unknown paths included, needs a valid token: without one, every request is a 401 ` + "`{\"message\":\"Invalid Token\"}`" + ` whatever its path (so an unknown path is a 404 only with a valid token). Send the token as ` + "`Authorization: Bearer <token>`" + `, as the password of Basic credentials (any user name; Excel's credential dialogs offer Basic), or, for tools that cannot set headers, in the ` + "`access_token`" + ` query parameter (RFC 6750 §2.3). The header wins when both are present. Tokens carry scopes: ` + v.scopeSentence() + `; a token without the scope gets a 403.

## Formats

The listings answer in the format the ` + "`format`" + ` parameter names, else the one the ` + "`Accept`" + ` header prefers (RFC 9110 §12.5.1: lists, wildcards and quality values; ties go to JSON, CSV, NDJSON, XLSX, Parquet, Arrow in that order; no header is JSON):

| ` + "`format`" + ` | ` + "`Accept`" + ` | Content-Type |
|---|---|---|
| ` + "`json`" + ` | ` + "`application/json`" + ` | ` + "`application/json; charset=utf-8`" + ` |
| ` + "`ndjson`" + ` | ` + "`application/x-ndjson`, `application/jsonl`" + ` | ` + "`application/x-ndjson; charset=utf-8`" + `: one JSON object per line |
| ` + "`csv`" + ` | ` + "`text/csv`" + ` | ` + "`text/csv; charset=utf-8`" + ` (` + "`text/tab-separated-values; charset=utf-8`" + ` with ` + "`delimiter=tab`" + `) |
| ` + "`xlsx`" + ` | ` + "`application/vnd.openxmlformats-officedocument.spreadsheetml.sheet`" + ` | the same |
| ` + "`parquet`" + ` | ` + "`application/vnd.apache.parquet`" + ` | the same: an Apache Parquet file |
| ` + "`arrow`" + ` | ` + "`application/vnd.apache.arrow.stream`" + ` | the same: an Apache Arrow IPC stream |

An ` + "`Accept`" + ` header that excludes all of them is a 406. Bodies other than XLSX and Parquet are compressed with ` + "`gzip` or `zstd`" + ` when ` + "`Accept-Encoding`" + ` asks for one. Every format comes as an attachment (` + "`Content-Disposition`" + `) named for the dataset, its first filter and the date, so that a browser saves it as a file. Every value of a row is text in the formats of the field reference (docs/columns.md), whatever the format; XLSX cells are typed (numbers, dates), and Parquet and Arrow columns carry real types (64-bit integers, decimals, dates, timestamps; see docs/columns.md). In CSV, a text value that starts with ` + "`=`, `+`, `-`, `@`" + `, a tab or a carriage return is prefixed with ` + "`'`" + ` so that spreadsheets do not run it as a formula, unless it is plainly a number or a phone number (such as ` + "`+56 9 1234 5678`" + `).

## Parameters

Every parameter is given at most once and never empty; a wrong value is a 400 whose message names the parameter and what it allows. An unknown parameter is a 400 naming it. The listings also answer HEAD with the status and headers of a GET and no body, without reading the rows.

## Errors

Every error is ` + "`{\"message\": \"...\"}`" + ` as ` + "`application/json`" + `; a 400 about a parameter also carries ` + "`code`" + `, a stable name of what is wrong, and ` + "`target`" + `, the parameter (` + "`{\"message\": \"...\", \"code\": \"rut_check_digit\", \"target\": \"rut\"}`" + `), and, when the fault is at one place of an OData option's value, ` + "`position`" + `, in characters from 1 (` + "`{\"message\": \"...\", \"code\": \"not_property\", \"target\": \"$orderby\", \"position\": 1}`" + `), with the response's ` + "`X-Request-Id`" + `, which the server's log line carries too. Under ` + "`" + ODataRoot + "`" + ` errors come in OData's shape instead, ` + "`{\"error\": {\"code\": \"BadRequest\", \"message\": \"...\", \"target\": \"$orderby\", \"innererror\": {\"code\": \"not_property\", \"position\": 1}}}`" + `, the same code and position in ` + "`innererror`" + `, with the same statuses and headers (and ` + "`OData-Version`" + `), but for 401, which is the same on every path, OData's included. A malformed ` + "`$filter`" + `, ` + "`$orderby`" + `, ` + "`$select`" + ` or ` + "`$expand`" + ` is a 400 on every path; valid OData that informe does not implement (` + "`$apply`" + `, ` + "`$search`" + `, ordering by an expression, ...) a 501.

| status | when |
|---|---|
| 400 | a parameter is wrong; the message names it |
| 401 | the token is missing, malformed, unknown, expired or revoked; ` + "`WWW-Authenticate`" + ` offers Bearer and Basic |
| 403 | the token lacks the scope |
| 404 | the path does not exist (only with a valid token) |
| 405 | the method is not allowed on the path; ` + "`Allow`" + ` lists the allowed ones |
| 406 | no offered format satisfies ` + "`Accept`" + ` |
| 429 | a big response (a whole export, a page of more than 1,000 rows, XLSX) asked with a token that already has its own limit of them running or waiting; ` + "`Retry-After`" + ` says when to try again |
| 431 | the request's header fields are too large |
| 500 | ` + "`{\"message\":\"Internal Server Error\"}`" + `; the cause is logged with the request id |
| 503 | the database cannot be reached, or the server is at capacity; ` + "`Retry-After`" + ` says when to try again |

The status is decided before the first byte of the body. A failure after it cannot change the status: the server then cuts the connection before the chunked body is terminated, so no client can take a truncated body for a complete one.`
}

// reportScope is the scope of the example of a 403.
var reportScope = string(dataset.GeneralReport.Scope)

// securityRequirements returns the three ways to present a token, any
// one of which suffices, each needing scope ("" for none). Scopes on
// http and apiKey schemes are roles, as OpenAPI 3.1 allows.
func securityRequirements(scope string) []object {
	roles := []string{}
	if scope != "" {
		roles = []string{scope}
	}
	return []object{obj("bearer", roles), obj("basic", roles), obj("accessToken", roles)}
}

// ref returns a reference to the component of the given type and name.
func ref(typ, name string) object { return obj("$ref", "#/components/"+typ+"/"+name) }

func (v *view) paths() object {
	var p object
	for _, d := range v.datasets {
		if d.Spec {
			p = append(p, specPaths(d)...)
		}
	}
	p = append(p, member{Path, documentPath()})
	for _, d := range v.entities() {
		p = append(p, member{d.ExportPath, listingPath(listing{
			d: d, op: d.OData.Name + "Export", tag: "entities",
			summary:     "Every " + d.One + ", once",
			description: about(d) + " Every row matching `$filter`, ordered by `" + d.OData.Key + "` (or by `$orderby`), in one response read from one snapshot. `X-Total-Count` gives their number. The same rows are the OData entity set `" + d.OData.Name + "`.",
			file:        "`" + d.Name + ".csv` (`.tsv`, `.xlsx`, `.parquet`, `.arrow`)",
		})})
	}
	return append(p, v.odataPaths()...)
}

// specPaths returns the paths the API spec defines for d (the general
// report's page and export, the users), with the parameters d takes.
func specPaths(d *dataset.Dataset) object {
	switch d.Name {
	case dataset.GeneralReport.Name:
		return obj(
			d.PagePath, listingPath(listing{
				d: d, page: "GeneralReportPage", op: "GeneralReport", tag: "report",
				summary: "One page of the general report",
				description: "One row per task of a process of a contract, ordered by contract id, process id and task id, stable across pages. A contract without processes, or a process without tasks, still has exactly one row. Filters combine with AND. The count and the page are read in one snapshot, so `totalPages` never disagrees with the rows; a page past the end is a 200 without rows.\n\n" +
					"Paging travels in headers too, in every format: `X-Total-Count`, `X-Total-Pages`, `X-Current-Page` and `Link`.",
				file: "`general-report-page-<page>-<filter>-<date>.csv` (`.tsv`, `.xlsx`, `.json`, `.ndjson`, `.parquet`, `.arrow`)",
			}),
			d.ExportPath, listingPath(listing{
				d: d, op: "GeneralReportExport", tag: "report",
				summary:     "Every row of the general report",
				description: "Every row matching the filters, in the order of the paged report (or of `$orderby`), in one response read from one snapshot: for exports and spreadsheet data connections that want the whole report. The JSON format is a bare array of rows. `page` and `result_per_page` are a 400 here: an export has no pages.",
				file:        "`general-report-<filter>-<date>.csv` (`.tsv`, `.xlsx`, `.json`, `.ndjson`, `.parquet`, `.arrow`)",
			}),
		)
	case dataset.Users.Name:
		return obj(
			d.ExportPath, listingPath(listing{
				d: d, op: "Users", tag: "users",
				summary:     "The users",
				description: "Every user matching `$filter`, ordered by id (or by `$orderby`). `X-Total-Count` gives their number.",
				file:        "`users-<date>.csv` (`.tsv`, `.xlsx`, `.json`, `.ndjson`, `.parquet`, `.arrow`)",
			}),
		)
	}
	// A dataset of the spec whose paths are not written here: a test of
	// the package fails on it.
	panic("openapi: no paths written for the spec's dataset " + d.Name)
}

// listingParams returns the parameters of a listing of d that takes the
// spec's parameters spec ("columns" being d's own columns parameter),
// then $filter, $orderby, $select and the cache-buster.
func listingParams(d *dataset.Dataset, spec []string) []any {
	var params []any
	for _, p := range spec {
		if p == "columns" {
			p = columnsParam(d)
		}
		params = append(params, ref("parameters", p))
	}
	return append(params, ref("parameters", "odata.filter"), ref("parameters", "orderby"), ref("parameters", "select"), ref("parameters", "cacheBuster"))
}

// about describes a row of d: its declaration's About, or, when that
// names (in backquotes) a column d lacks, one hidden from the reader, only
// what a row is.
func about(d *dataset.Dataset) string {
	for _, m := range quoted.FindAllStringSubmatch(d.About, -1) {
		if !slices.Contains(dataset.Names(d.Columns), m[1]) {
			return "One row per " + d.One + "."
		}
	}
	return d.About
}

// quoted matches a name in backquotes.
var quoted = regexp.MustCompile("`([^`]*)`")

// userAbout describes a user whose columns are cols: the values that may
// be null named.
func userAbout(cols []dataset.Column) string {
	desc := "A user. Every value is a string"
	if slices.ContainsFunc(cols, func(c dataset.Column) bool { return c.Name == "id" }) {
		desc += ", `id` included"
	}
	var nullable []string
	for _, c := range cols {
		if c.Nullable {
			nullable = append(nullable, "`"+c.Name+"`")
		}
	}
	switch len(nullable) {
	case 0:
		return desc + "."
	case 1:
		return desc + "; " + nullable[0] + " is `null` when absent."
	}
	return desc + "; " + strings.Join(nullable[:len(nullable)-1], ", ") + " and " + nullable[len(nullable)-1] + " are `null` when absent."
}

// columnsParam names the component of d's columns parameter.
func columnsParam(d *dataset.Dataset) string {
	if d.Name == dataset.GeneralReport.Name {
		return "reportColumns"
	}
	return d.Name + "Columns"
}

// entities are the datasets of v that the API spec does not define (the
// general report's and the users' paths are written in specPaths): the
// entities at their own grain, each described from its declaration.
func (v *view) entities() []*dataset.Dataset {
	var out []*dataset.Dataset
	for _, d := range v.datasets {
		if !d.Spec {
			out = append(out, d)
		}
	}
	return out
}

// documentPath returns the path of this document, GET and HEAD.
func documentPath() object {
	errs := obj(
		"401", ref("responses", "Unauthorized"),
		"431", ref("responses", "RequestHeaderFieldsTooLarge"),
		"500", ref("responses", "InternalServerError"),
		"503", ref("responses", "ServiceUnavailable"),
	)
	headers := headerRefs("X-Request-Id", "Cache-Control")
	return obj(
		"get", obj(
			"operationId", "getOpenAPI",
			"tags", []string{"meta"},
			"summary", "This document",
			"description", "The OpenAPI 3.1 document of the API; any valid token may read it.",
			"responses", append(obj("200", obj(
				"description", "The document.",
				"headers", headers,
				"content", obj("application/json", obj("schema", obj("type", "object", "description", "An OpenAPI 3.1 document."))),
			)), errs...),
		),
		"head", obj(
			"operationId", "headOpenAPI",
			"tags", []string{"meta"},
			"summary", "This document (headers only)",
			"description", "The GET's status and headers without its body.",
			"responses", append(obj("200", obj("description", "The headers a GET would answer, without a body.", "headers", headers)), errs...),
		),
	)
}

// listing describes a path that streams the rows of d in every format:
// its parameters, scope, row schema (d.OData.TypeName, an NDJSON line)
// and worksheet's name (d.Name) are d's.
type listing struct {
	d *dataset.Dataset
	// page is the schema of a paged listing's JSON body; "" for an
	// export, whose JSON body is a bare array of rows, and whose rows
	// X-Total-Count counts.
	page                 string
	op, tag              string
	summary, description string
	file                 string // the attachment's name, for the description
}

// formatParams are the parameters of every listing: format negotiation
// and the CSV options.
var formatParams = []any{ref("parameters", "format"), ref("parameters", "header"), ref("parameters", "lang"), ref("parameters", "bom"), ref("parameters", "delimiter"), ref("parameters", "decimal")}

func listingPath(l listing) object {
	row, scope := l.d.OData.TypeName, string(l.d.Scope)
	headers := []string{"X-Request-Id", "Cache-Control", "Vary", "X-Total-Count"}
	json, specParams := obj("type", "array", "items", ref("schemas", row)), l.d.Params
	if l.page != "" {
		headers = append(headers, "X-Total-Pages", "X-Current-Page", "Link")
		json, specParams = ref("schemas", l.page), l.d.PageParams
	}
	headers = append(headers, "Content-Disposition", "Content-Encoding", "ETag")
	ok := obj(
		"description", "The rows, in the negotiated format (see `format`). In JSON, every value is a string. NDJSON is one `"+row+"` object per line, each line ending in `\\n`; no rows, no lines. CSV follows RFC 4180 (UTF-8, CRLF line ends) with a header row of the field names; XLSX is one worksheet named `"+l.d.Name+"` with a bold, frozen header row, an autofilter and typed cells; Parquet (Snappy-compressed, in row groups of up to 65,536 rows) and Arrow (an IPC stream, in record batches) have a column per field, named as in JSON, typed as docs/columns.md says, with NULL for a missing value. Every format comes as an attachment named "+l.file+", where `<filter>` is the first filter given (`contract-<id>`, `code-<code>`, `client-<id>` or `rut-<rut>`; none without one) and `<date>` the day it was made (YYYY-MM-DD).",
		"headers", headerRefs(headers...),
		"content", obj(
			"application/json", obj("schema", json),
			"application/x-ndjson", obj("schema", ref("schemas", row)),
			"text/csv", obj("schema", obj("type", "string", "description", "RFC 4180 CSV: a header row of the field names (unless `header=false`), then a record per row.")),
			"text/tab-separated-values", obj("schema", obj("type", "string", "description", "The CSV format with tabs (`delimiter=tab`).")),
			export.XLSX.ContentType(), obj(),
			export.Parquet.ContentType(), obj(),
			export.Arrow.ContentType(), obj(),
		),
	)
	errs := obj(
		"400", ref("responses", "BadRequest"),
		"401", ref("responses", "Unauthorized"),
		"403", ref("responses", "Forbidden"),
		"406", ref("responses", "NotAcceptable"),
		"429", ref("responses", "TooManyRequests"),
		"431", ref("responses", "RequestHeaderFieldsTooLarge"),
		"500", ref("responses", "InternalServerError"),
		"503", ref("responses", "ServiceUnavailable"),
	)
	params := append(append(listingParams(l.d, specParams), formatParams...), ref("parameters", "ifNoneMatch"))
	get := obj(
		"operationId", "get"+l.op,
		"tags", []string{l.tag},
		"summary", l.summary,
		"description", l.description+"\n\nNeeds the `"+scope+"` scope.",
		"parameters", params,
		"security", securityRequirements(scope),
		"responses", append(obj("200", ok, "304", ref("responses", "NotModified")), errs...),
	)
	headOK := obj(
		"description", "The headers a GET would answer, Content-Type and Content-Disposition included, without a body; the rows are not read.",
		"headers", headerRefs(headers...),
	)
	head := obj(
		"operationId", "head"+l.op,
		"tags", []string{l.tag},
		"summary", l.summary+" (headers only)",
		"description", "The GET's status and headers without its body.",
		"parameters", params,
		"security", securityRequirements(scope),
		"responses", append(obj("200", headOK, "304", ref("responses", "NotModified")), errs...),
	)
	return obj("get", get, "head", head)
}

// headerRefs returns references to the named header components.
func headerRefs(names ...string) object {
	o := make(object, 0, len(names))
	for _, n := range names {
		o = append(o, member{n, ref("headers", n)})
	}
	return o
}

func (v *view) components() object {
	return obj(
		"schemas", v.schemas(),
		"parameters", v.parameters(),
		"headers", headers(),
		"responses", responses(),
		"securitySchemes", obj(
			"bearer", obj("type", "http", "scheme", "bearer",
				"description", "`Authorization: Bearer <token>`. Tokens are created with `informe token create`; the header wins over `access_token`."),
			"basic", obj("type", "http", "scheme", "basic",
				"description", "Basic credentials with any user name and the token as the password, for tools whose credential dialogs offer Basic (Excel, Power BI)."),
			"accessToken", obj("type", "apiKey", "in", "query", "name", "access_token",
				"description", "The token in the query string, for tools that cannot send headers (Google Sheets' IMPORTDATA). Given at most once and not empty; ignored when an Authorization header is present. The server never writes it in a log line, an error or a Link header, but treat such URLs as secrets: give each spreadsheet a token of its own."),
		),
	)
}

func (v *view) schemas() object {
	s := object{}
	if d := v.named(dataset.GeneralReport.Name); d != nil {
		s = append(s, obj(
			"GeneralReportRow", rowSchema("General report row",
				"One task of a process of a contract, with its contract, payer, service, process and client. Every value is a string; an absent value is `\"\"`.",
				d.Columns, true),
			"GeneralReportPage", obj(
				"title", "General report page",
				"type", "object",
				"required", []string{"data", "totalPages", "currentPage"},
				"additionalProperties", false,
				"properties", obj(
					"data", obj("type", "array", "items", ref("schemas", "GeneralReportRow"), "description", "The rows of the page."),
					"totalPages", obj("type", "integer", "minimum", 0, "description", "ceil(matching rows / result_per_page); 0 when no row matches."),
					"currentPage", obj("type", "integer", "minimum", 1, "description", "The page asked for."),
				),
			),
		)...)
	}
	if d := v.named(dataset.Users.Name); d != nil {
		s = append(s, member{"User", rowSchema("User", userAbout(d.Columns), d.Columns, false)})
	}
	for _, d := range v.entities() {
		s = append(s, member{d.OData.TypeName, rowSchema(d.OData.TypeName, about(d)+" Every value is a string; an absent value is `null`.", d.Columns, false)})
	}
	s = append(s, obj(
		"Error", obj(
			"title", "Error",
			"type", "object",
			"required", []string{"message"},
			"additionalProperties", false,
			"properties", obj(
				"message", obj("type", "string", "description", "What went wrong, safe to show; it names the parameter at fault."),
				"code", obj("type", "string", "description", "A stable name of what is wrong, for clients that word it themselves: "+
					"`repeated`, `empty`, `not_text`, `token_in_parameter`, `not_integer`, `not_boolean`, `not_allowed`, `bad_column`, "+
					"`rut_malformed`, `rut_check_digit`, `unknown_parameter`, `select_and_columns`; for OData's options "+reasonList+
					". Absent when informe names none."),
				"target", obj("type", "string", "description", "The parameter at fault, with `code`."),
				"position", positionSchema,
			),
		),
		"InvalidToken", obj(
			"title", "Authentication error",
			"type", "object",
			"required", []string{"message"},
			"additionalProperties", false,
			"properties", obj("message", obj("const", auth.InvalidToken)),
		),
	)...)
	return append(s, v.odataSchemas()...)
}

// integerParam returns the schema of a query parameter holding a
// positive integer written in digits only.
func integerParam(name, desc string, max, def int64) object {
	s := obj("type", "integer", "format", "int64", "minimum", 1)
	if max > 0 {
		s = s.with("maximum", max)
	}
	if def > 0 {
		s = s.with("default", def)
	}
	return obj("name", name, "in", "query", "description", desc+" Digits only.", "schema", s)
}

func (v *view) parameters() object {
	p := object{}
	// The spec's filters, where a listing takes them.
	for _, f := range []member{
		{"contract_id", integerParam("contract_id", "Only the rows of this contract.", 0, 0)},
		{"code_contract", obj("name", "code_contract", "in", "query",
			"description", "Only the rows of contracts with exactly this code.",
			"schema", obj("type", "string", "minLength", 1))},
		{"client_id", integerParam("client_id", "Only the rows of this client's contracts.", 0, 0)},
		{"rut", obj("name", "rut", "in", "query",
			"description", "Only the rows of the client with this RUT, written as people type it: `12.345.678-5`, `12345678-5` or `123456785`, the check character `k` or `K`; it matches whatever form the RUT is stored in. A malformed RUT or a wrong check digit is a 400.",
			"schema", obj("type", "string", "pattern", `^ *[0-9.]*[0-9][0-9.]*-?[0-9kK] *$`),
			"example", "12.345.678-5")},
		{"page", integerParam("page", "The page to return, from 1.", 0, 1)},
	} {
		if v.uses(f.key) {
			p = append(p, f)
		}
	}
	p = append(p, obj(
		"ifNoneMatch", obj("name", "If-None-Match", "in", "header",
			"description", "`*` or entity tags (`\"...\"`, `W/\"...\"`, comma-separated) from earlier responses' `ETag`: when one is the current tag, the answer is a 304 without a body. Compared weakly. Anything else is a 400.",
			"schema", obj("type", "string"),
			"example", `"3q9Zb0l2Qm1xN2s0cFhRcWxB"`),
		"select", v.example(obj("name", "$select", "in", "query",
			"description", "OData's `$select`: the fields to return, comma-separated, in that order; `*` is all of them. The same choice as `columns`: giving both is a 400.",
			"schema", obj("type", "string", "minLength", 1)),
			"contract_id,task_status", "contract_id", "task_status"),
		"orderby", v.example(obj("name", "$orderby", "in", "query",
			"description", "OData's `$orderby`: fields, comma-separated, each optionally followed by `asc` or `desc`; nulls come first ascending and last descending, ties in the path's own order. An export in an order no index gives is sorted whole by PostgreSQL before its first row.",
			"schema", obj("type", "string", "minLength", 1)),
			"task_end_date desc", "task_end_date"),
		"cacheBuster", obj("name", "_", "in", "query",
			"description", "Ignored: the cache-buster that jQuery's `ajax` adds with `cache: false`. Any other parameter a path does not list is a 400 that names it.",
			"schema", obj("type", "string")),
	)...)
	if v.uses("result_per_page") {
		p = append(p, member{"result_per_page", integerParam("result_per_page", "Rows per page.", report.MaxPerPage, report.MaxPerPage)})
	}
	for _, d := range v.datasets {
		row := d.OData.TypeName
		switch d.Name {
		case dataset.GeneralReport.Name:
			row = "GeneralReportRow"
		case dataset.Users.Name:
			row = "User"
		}
		p = append(p, member{columnsParam(d), columnsParameter(d.Columns, "the `"+row+"` schema and docs/columns.md")})
	}
	p = append(p, obj(
		"format", obj("name", "format", "in", "query",
			"description", "The response format, case-insensitive; it wins over `Accept` (for tools that cannot set headers). Another value is a 400.",
			"schema", obj("type", "string", "enum", formatNames())),
		"header", obj("name", "header", "in", "query",
			"description", "CSV: `false` leaves out the header row of field names. CSV and XLSX: `labels` writes each column's readable label (in `lang`) in the header row instead of its field name, for people who open the file; JSON keys and Parquet and Arrow columns stay the field names.",
			"schema", obj("type", "string", "enum", []string{"true", "false", "labels"}, "default", "true")),
		"lang", obj("name", "lang", "in", "query",
			"description", "With `header=labels`: the language of the labels, `es` (Spanish) or `en` (English).",
			"schema", obj("type", "string", "enum", []string{"es", "en"}, "default", "es")),
		"bom", obj("name", "bom", "in", "query",
			"description", "CSV: `true` starts the file with a UTF-8 byte order mark, which Excel on Windows needs to read UTF-8 (without it, á and ñ come out garbled).",
			"schema", obj("type", "boolean", "default", false)),
		"delimiter", obj("name", "delimiter", "in", "query",
			"description", "CSV: the field delimiter. `semicolon` is what Excel expects where the decimal separator is a comma (Chile, most of Latin America and much of Europe); `tab` answers `text/tab-separated-values`.",
			"schema", obj("type", "string", "enum", export.DelimiterNames, "default", export.DelimiterNames[0])),
		"decimal", obj("name", "decimal", "in", "query",
			"description", "CSV and TSV: `comma` writes the decimal columns' values with a comma as decimal separator and no thousands separator (`12500,5`), as Excel and LibreOffice read numbers with Chilean regional settings. It needs `delimiter=semicolon` or `delimiter=tab` (a 400 beside the comma delimiter), and is a 400 in any other format.",
			"schema", obj("type", "string", "enum", []string{"point", "comma"}, "default", "point")),
	)...)
	return append(p, v.odataParameters()...)
}

// formatNames returns the names the format parameter takes.
func formatNames() []string {
	var names []string
	for f := export.JSON; f <= export.Arrow; f++ {
		names = append(names, f.String())
	}
	return names
}

func headers() object {
	h := obj(
		"X-Request-Id", obj("required", true,
			"description", "The request's id, on every response and in the server's log line: the client's own `X-Request-Id` when it is 1 to 64 letters, digits, `-`, `_` or `.`, else a new one.",
			"schema", obj("type", "string", "pattern", `^[A-Za-z0-9._-]{1,64}$`)),
		"Cache-Control", obj("required", true,
			"description", "Responses carry personal data, and may answer a URL holding a token: no cache may keep them.",
			"schema", obj("type", "string", "const", "private, no-store")),
		"Vary", obj("required", true,
			"description", "The format depends on `Accept`, and the content coding of formats that may be compressed (all but XLSX and Parquet) on `Accept-Encoding`.",
			"schema", obj("type", "string", "enum", []string{"Accept", "Accept, Accept-Encoding"})),
		"Content-Encoding", obj(
			"description", "`gzip` or `zstd` when `Accept-Encoding` asks for one (zstd wins at equal quality) and the body is likely over 1 KiB; XLSX and Parquet, compressed already, never are. Without `Accept-Encoding`, no coding.",
			"schema", obj("type", "string", "enum", []string{"gzip", "zstd"})),
		"X-Total-Count", obj("required", true,
			"description", "The number of matching rows (of all pages).",
			"schema", obj("type", "integer", "minimum", 0)),
		"X-Total-Pages", obj("required", true,
			"description", "The number of pages, as `totalPages`.",
			"schema", obj("type", "integer", "minimum", 0)),
		"X-Current-Page", obj("required", true,
			"description", "The page returned, as `currentPage`.",
			"schema", obj("type", "integer", "minimum", 1)),
		"Link", obj("required", true,
			"description", "RFC 8288 links to the `first`, `prev` (from page 2), `next` (before the last page) and `last` pages (`last` is page 1 when nothing matches), as references relative to the request with its other parameters and without `access_token`.",
			"schema", obj("type", "string", "pattern", `^<[^>]+>; rel="first"(, <[^>]+>; rel="prev")?(, <[^>]+>; rel="next")?, <[^>]+>; rel="last"$`)),
		"Content-Disposition", obj(
			"description", "An attachment named for what it holds: the dataset, the first filter and the date; `filename` in ASCII (other characters as `_`), `filename*` in UTF-8 (RFC 6266).",
			"schema", obj("type", "string", "pattern", `^attachment; filename="[ -~]+\.(csv|tsv|xlsx|json|ndjson|parquet|arrow)"; filename\*=UTF-8''[!-~]+$`)),
		"WWW-Authenticate", obj("required", true,
			"description", "Two challenges, as two header lines: `Bearer realm=\"informe\"` (with `, error=\"invalid_token\"` when a token was given) and `Basic realm=\"informe\", charset=\"UTF-8\"`, so that clients that wait for a challenge (Excel) send Basic credentials.",
			"schema", obj("type", "string", "pattern", `^(Bearer realm="informe"(, error="invalid_token")?|Basic realm="informe", charset="UTF-8")$`)),
		"Allow", obj("required", true,
			"description", "The methods the path allows.",
			"schema", obj("type", "string", "pattern", `^[A-Z]+(, ?[A-Z]+)*$`)),
		"Retry-After", obj("required", true,
			"description", "Seconds to wait before trying again.",
			"schema", obj("type", "integer", "minimum", 1)),
		"ETag", obj(
			"description", "The entity tag of this response: the same exactly when the rows, the query, the format and its options, the content coding and informe's build are; any write of a table the dataset reads gives a new one. Weak (`W/`) when the same rows may come as other bytes: a body that may be compressed, a whole XLSX, Parquet or Arrow export that may be read in parts. Send it back in `If-None-Match` to get a 304 when nothing changed. Absent for views over tables informe does not watch.",
			"schema", obj("type", "string", "pattern", `^(W/)?"[A-Za-z0-9_-]+"$`)),
	)
	return append(h, odataHeaders()...)
}

// errorResponse returns an error response of informe's {"message"} form.
func errorResponse(desc, example string, headers ...string) object {
	return obj(
		"description", desc,
		"headers", headerRefs(append([]string{"X-Request-Id", "Cache-Control"}, headers...)...),
		"content", obj("application/json", obj(
			"schema", ref("schemas", "Error"),
			"example", obj("message", example),
		)),
	)
}

func responses() object {
	r := obj(
		"NotModified", obj(
			"description", "The client holds the current `ETag` (`If-None-Match`): nothing it reads changed. No body; decided without reading rows.",
			"headers", headerRefs("X-Request-Id", "Cache-Control", "ETag"),
		),
		"BadRequest", errorResponse("A parameter is wrong; the message names it and says what it allows.",
			`page must be an integer of 1 or more, got "0"`),
		"Unauthorized", obj(
			"description", "The token is missing, malformed, unknown, expired or revoked. The body is always `{\"message\":\"Invalid Token\"}`.",
			"headers", headerRefs("X-Request-Id", "Cache-Control", "WWW-Authenticate"),
			"content", obj("application/json", obj(
				"schema", ref("schemas", "InvalidToken"),
				"example", obj("message", auth.InvalidToken),
			)),
		),
		"Forbidden", errorResponse("The token lacks the scope the path needs.", "this token lacks the "+reportScope+" scope"),
		"NotFound", errorResponse("The path does not exist (answered only to a valid token: without one, every path is a 401).", "Not Found"),
		"MethodNotAllowed", errorResponse("The path does not allow the method.", "Method Not Allowed", "Allow"),
		"NotAcceptable", errorResponse("No offered format satisfies `Accept`; the message lists the offered media types.",
			"not acceptable: the offered media types are "+strings.Join(export.Offered, ", "), "Vary"),
		"RequestHeaderFieldsTooLarge", errorResponse("The request's header fields, with its URL, are too large.",
			"Request Header Fields Too Large: the request's header fields may take 64 KiB at most"),
		"TooManyRequests", errorResponse("A big response asked with a token that already has as many big responses running or waiting as it may (its own limit); try again after `Retry-After` seconds, or once some have ended.",
			"Too Many Requests: this token has as many exports running and waiting as it may; try again when some have ended", "Retry-After"),
		"InternalServerError", errorResponse("An unexpected failure; its cause is logged with the request id, never sent.", "Internal Server Error"),
		"ServiceUnavailable", errorResponse("The database cannot be reached, a request took longer than the server allows, or the server is at capacity (too many exports at once); try again after `Retry-After` seconds.",
			"Service Unavailable: the database cannot be reached", "Retry-After"),
	)
	return append(r, odataResponses()...)
}

// scopeSentence says which datasets of v each scope reads: "`report:read`
// for general-report, contracts, ...; `users:read` for users; ...".
func (v *view) scopeSentence() string {
	var parts []string
	for _, sc := range dataset.Scopes() {
		var names []string
		for _, d := range v.datasets {
			if d.Scope == sc {
				names = append(names, d.Name)
			}
		}
		if len(names) > 0 {
			parts = append(parts, "`"+string(sc)+"` for "+strings.Join(names, ", "))
		}
	}
	return strings.Join(parts, "; ")
}
