package openapi

import (
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/informe/informe/internal/dataset"
	"github.com/informe/informe/internal/odata"
)

// This file describes the OData service, whose entity sets are those of
// the datasets a document describes ([view]), as the server's. The tests
// check the schemas against package odata's own feeds, errors and
// $metadata, and internal/api's TestOpenAPI against the server's.

// ODataRoot is the path of the OData service root.
const ODataRoot = "/odata"

// odataSet is an entity set of the OData service and the scope a token
// needs to read it.
type odataSet struct {
	dataset.EntitySet
	Scope string
}

// syntheticKey reports whether s's key is made of RowKey rather than a
// column.
func (s odataSet) syntheticKey() bool { return len(s.RowKey) > 0 }

// propertyNames returns the names of s's properties in declaration order:
// a synthetic key first, then the columns.
func (s odataSet) propertyNames() []string {
	var names []string
	if s.syntheticKey() {
		names = append(names, s.Key)
	}
	return append(names, dataset.Names(s.Columns)...)
}

// orderNames returns the names $orderby takes on s: its properties but
// the masked columns, which neither $filter nor $orderby may name.
func (s odataSet) orderNames() []string {
	var names []string
	if s.syntheticKey() {
		names = append(names, s.Key)
	}
	for _, c := range s.Columns {
		if c.Mask == dataset.Unmasked {
			names = append(names, c.Name)
		}
	}
	return names
}

// odataValueSchema returns the schema of property c of s in an OData
// entity. Edm.Int64 and Edm.Decimal are JSON numbers, or strings when the
// response is IEEE754Compatible=true; dates are RFC 3339 full dates and
// date-times with an offset ("Z" for UTC).
func odataValueSchema(s odataSet, c dataset.Column) object {
	nullable := c.Name != s.Key && (c.Nullable || s.EmptyIsNull)
	types := func(t ...string) any {
		if nullable {
			t = append(t, "null")
		}
		if len(t) == 1 {
			return t[0]
		}
		return t
	}
	var sch object
	switch c.Kind {
	case dataset.Integer:
		sch = obj("type", types("integer", "string"), "format", "int64", "pattern", `^-?[0-9]+$`)
	case dataset.Decimal:
		sch = obj("type", types("number", "string"), "format", "decimal", "pattern", `^-?[0-9]+(\.[0-9]+)?$`)
	case dataset.Date:
		sch = obj("type", types("string"), "format", "date")
	case dataset.Timestamp, dataset.Timestamptz:
		sch = obj("type", types("string"), "format", "date-time")
	default:
		sch = obj("type", types("string"))
	}
	desc := odata.EDMType(c.Kind) + "."
	switch c.Kind {
	case dataset.Integer, dataset.Decimal:
		desc += " A JSON number; a string holding it when the response is `IEEE754Compatible=true`."
	case dataset.Date:
		desc += " `YYYY-MM-DD`."
	case dataset.Timestamp:
		desc += " RFC 3339, e.g. `2024-03-05T14:07:09Z`."
	case dataset.Timestamptz:
		desc += " RFC 3339 with microseconds, e.g. `2024-03-05T14:07:09.123456Z`."
	}
	if nullable {
		desc += " `null` when absent."
	}
	sch = sch.with("description", desc, kindKeyword, c.Kind.String())
	if c.Mask != dataset.Unmasked {
		sch = sch.with(maskKeyword, c.Mask.String())
	}
	return sch
}

// odataEntitySchema returns the schema of an entity of s: in a feed, or,
// byKey, the body of a request by key, which adds its context URL; or,
// related, as $expand writes it inside another entity, without navigation
// properties (one level).
func odataEntitySchema(s odataSet, byKey, related bool) object {
	props := object{}
	required := []string{s.Key}
	title := "OData " + s.TypeName
	if byKey {
		props = append(props, member{"@odata.context", obj("type", "string", "format", "uri",
			"description", "`<service root>/$metadata#"+s.Name+"/$entity`, with the `$select` list in parentheses after the set's name when given.")})
		required = append([]string{"@odata.context"}, required...)
		title += " by key"
	}
	if s.syntheticKey() {
		props = append(props, member{s.Key, obj(
			"type", "string",
			"pattern", "^[0-9]+(-[0-9]+){"+fmt.Sprint(len(s.RowKey)-1)+"}$",
			"description", "The key: "+strings.Join(s.RowKey, ", ")+" in base 10, joined by `-`, 0 standing for an absent one (e.g. `6-7-7`, `2-0-0`).",
		)})
	}
	for _, c := range s.Columns {
		props = append(props, member{c.Name, odataValueSchema(s, c)})
	}
	desc := "An entity of " + s.Name + " (type " + odata.Namespace + "." + s.TypeName + "). With `$select` it has the key and the properties chosen, in `$select` order; without, every property in this order."
	for _, n := range s.Navigations {
		if related {
			break
		}
		entity := ref("schemas", "OData"+n.Target+"Related")
		if n.Many {
			props = append(props, member{n.Name, obj("type", "array", "items", entity,
				"description", "With `$expand="+n.Name+"` only: the related entities of "+n.Target+", in the order of their key; `[]` for none.")})
		} else {
			props = append(props, member{n.Name, obj("anyOf", []object{entity, obj("type", "null")},
				"description", "With `$expand="+n.Name+"` only: the related entity of "+n.Target+" (its `"+n.Property+"`), `null` for none.")})
		}
	}
	if related {
		title += " (related)"
		desc = "An entity of " + s.Name + " as `$expand` writes it inside a related entity: its key and the properties the nested `$select` chose, or all of them in this order."
	} else if len(s.Navigations) > 0 {
		desc += " Each navigation property named in `$expand` follows them, with the related entities' properties its nested `$select` chose (their key always)."
	}
	return obj(
		"title", title,
		"description", desc,
		"type", "object",
		"required", required,
		"additionalProperties", false,
		"properties", props,
	)
}

func (v *view) odataSchemas() object {
	o := object{}
	for _, s := range v.sets {
		if len(s.Navigations) > 0 || v.isTarget(s.Name) {
			o = append(o, member{"OData" + s.Name + "Related", odataEntitySchema(s, false, true)})
		}
		o = append(o,
			member{"OData" + s.Name + "Entity", odataEntitySchema(s, false, false)},
			member{"OData" + s.Name + "ByKey", odataEntitySchema(s, true, false)},
			member{"OData" + s.Name + "Feed", obj(
				"title", "OData "+s.Name+" feed",
				"description", "A page of "+s.Name+" in OData JSON (minimal metadata, streaming order). `@odata.nextLink`, present when a further page exists, is the absolute URL of the next page.",
				"type", "object",
				"required", []string{"@odata.context", "value"},
				"additionalProperties", false,
				"properties", obj(
					"@odata.context", obj("type", "string", "format", "uri", "description", "`<service root>/$metadata#"+s.Name+"`, with the `$select` list in parentheses when given."),
					"@odata.count", obj("type", []string{"integer", "string"}, "pattern", `^[0-9]+$`, "minimum", 0, "description", "With `$count=true` only: the number of entities matching `$filter`, ignoring `$top`, `$skip` and `$skiptoken`; a string when `IEEE754Compatible=true`."),
					"value", obj("type", "array", "items", ref("schemas", "OData"+s.Name+"Entity")),
					"@odata.nextLink", obj("type", "string", "format", "uri", "description", "The next page: the same `$filter`, `$select`, `$orderby`, `$count` and `$format`, the rest of `$top`, a `$skiptoken`, and the `access_token` only when the request carried its token in the URL."),
				),
			)},
		)
	}
	return append(o,
		member{"ODataServiceDocument", obj(
			"title", "OData service document",
			"type", "object",
			"required", []string{"@odata.context", "value"},
			"additionalProperties", false,
			"properties", obj(
				"@odata.context", obj("type", "string", "format", "uri", "description", "`<service root>/$metadata`."),
				"value", obj("type", "array", "items", obj(
					"type", "object",
					"required", []string{"name", "kind", "url"},
					"additionalProperties", false,
					"properties", obj(
						"name", obj("type", "string", "enum", v.odataSetNames()),
						"kind", obj("const", "EntitySet"),
						"url", obj("type", "string", "enum", v.odataSetNames()),
					),
				)),
			),
		)},
		member{"ODataError", odataErrorSchema("OData error", obj("type", "string", "enum", odataCodes()),
			obj("type", "string", "description", "What is wrong and what is supported, safe to show."))},
	)
}

// odataErrorSchema returns the schema of an OData error body,
// {"error":{"code","message","target"}}, with the given code and message.
func odataErrorSchema(title string, code, message object) object {
	return obj(
		"title", title,
		"type", "object",
		"required", []string{"error"},
		"additionalProperties", false,
		"properties", obj("error", obj(
			"type", "object",
			"required", []string{"code", "message"},
			"additionalProperties", false,
			"properties", obj(
				"code", code,
				"message", message,
				"target", obj("type", "string", "description", "The query option or header at fault, e.g. `$filter`."),
				"innererror", obj(
					"type", "object",
					"description", "What is wrong in a stable name, and where, as the other paths' error body gives them.",
					"required", []string{"code"},
					"additionalProperties", false,
					"properties", obj(
						"code", obj("type", "string", "description", "A stable name of what is wrong: "+reasonList+
							", or one of the other paths' (`rut_check_digit`, `unknown_parameter`, ...)."),
						"position", positionSchema,
					),
				),
			),
		)),
	)
}

// reasonList lists the reasons of the errors of OData's query options,
// for the error schemas.
const reasonList = "400: `syntax` (not OData's grammar), `empty`, `repeated`, `not_text`, `token_in_parameter`, " +
	"`unknown_option`, `feed_only` (an option of the feed, on another path), `unknown_property`, `not_column`, " +
	"`unknown_navigation`, `unknown_function`, `type_mismatch`, `argument_count`, `bad_argument`, `bad_literal`, " +
	"`not_property` ($orderby by a literal), `too_deep`, `not_integer`, `out_of_range`, `not_boolean`, `not_allowed`, " +
	"`bad_skiptoken`, `bad_key`; 501: `unsupported_option`, `unsupported_operator`, `unsupported_function`, " +
	"`unsupported_expression`, `unsupported_expand`"

// positionSchema is the schema of an error's position.
var positionSchema = obj("type", "integer", "minimum", 1,
	"description", "Where in the option's value the fault is, in characters from 1 (as decoded from the URL); absent when it is the whole value.")

// odataCodes returns the codes of OData errors.
func odataCodes() []string {
	var codes []string
	for _, e := range odataErrors {
		codes = append(codes, odataCode(e.status))
	}
	return codes
}

// isTarget reports whether a navigation of v leads to the set named name.
func (v *view) isTarget(name string) bool {
	for _, s := range v.sets {
		for _, n := range s.Navigations {
			if n.Target == name {
				return true
			}
		}
	}
	return false
}

func (v *view) odataSetNames() []string {
	names := []string{}
	for _, s := range v.sets {
		names = append(names, s.Name)
	}
	return names
}

func (v *view) odataParameters() object {
	p := obj(
		"odata.filter", v.example(obj("name", "$filter", "in", "query",
			"description", "A condition on any properties, compared by their typed values: `eq`, `ne`, `gt`, `ge`, `lt`, `le`, `in (...)`, `and`, `or`, `not`, parentheses, `eq null`/`ne null`, and the functions contains, startswith, endswith, tolower, toupper, trim, length, concat, indexof, substring, year, month, day, hour, minute and second. Literals of the property's type: integers and decimals bare, dates as `2024-03-05`, date-times with an offset as `2024-03-05T14:07:09Z`, strings in single quotes with `''` for a quote. Malformed syntax, an unknown property or a literal of the wrong type is a 400; arithmetic, other functions, lambdas and parameter aliases are a 501.",
			"schema", obj("type", "string", "minLength", 1)),
			"task_end_date ge 2024-03-01 and task_end_date lt 2024-04-01 and startswith(client_email,'a')", "task_end_date", "client_email"),
		"odata.top", obj("name", "$top", "in", "query",
			"description", "The most entities to return over all pages.",
			"schema", obj("type", "integer", "format", "int64", "minimum", 0)),
		"odata.skip", obj("name", "$skip", "in", "query",
			"description", "Entities to pass over, in order. Next links carry a `$skiptoken` instead.",
			"schema", obj("type", "integer", "format", "int64", "minimum", 0)),
		"odata.count", obj("name", "$count", "in", "query",
			"description", "`true` adds `@odata.count`.",
			"schema", obj("type", "boolean", "default", false)),
		"odata.skiptoken", obj("name", "$skiptoken", "in", "query",
			"description", "Where a page starts: only as the server wrote it in an `@odata.nextLink`; anything else is a 400.",
			"schema", obj("type", "string", "pattern", `^[A-Za-z0-9_-]+$`)),
		"odata.format", obj("name", "$format", "in", "query",
			"description", "`json`, or `application/json` with OData format parameters (`odata.metadata=minimal`, `IEEE754Compatible=true` or `false`); it wins over `Accept`. Write `;` as `%3B`. Another format, `odata.metadata=full` or `none`, is a 406.",
			"schema", obj("type", "string"),
			"example", "application/json;IEEE754Compatible=true"),
		"odata.prefer", obj("name", "Prefer", "in", "header",
			"description", fmt.Sprintf("`odata.maxpagesize=N` (1 to %d) makes pages of at most N entities and is echoed in `Preference-Applied`; pages hold at most %d entities anyway. Other preferences are ignored.", odata.MaxPageSize-1, odata.MaxPageSize),
			"schema", obj("type", "string"),
			"example", "odata.maxpagesize=1000"),
	)
	// $expand, where a set has navigations; its example where they and
	// the columns it names are there.
	var navs []string
	for _, s := range v.sets {
		for _, n := range s.Navigations {
			navs = append(navs, n.Name)
		}
	}
	if len(navs) == 0 {
		return p
	}
	expand := obj("name", "$expand", "in", "query",
		"description", "Navigation properties, comma-separated, each optionally with a nested `$select` in parentheses, one level: each entity then carries its related entity (or `null`) or its related entities (an array) under the navigation's name. Only the entity sets at their own grain have navigation properties (see `$metadata`). An unknown navigation is a 400; other nested options, nested `$expand`, `*` and paths are a 501. Write `;` as `%3B`.",
		"schema", obj("type", "string", "minLength", 1))
	if slices.Contains(navs, "Client") && slices.Contains(navs, "Processes") {
		expand = v.example(expand, "Client($select=client_rut,client_region),Processes", "client_rut", "client_region")
	}
	i := slices.IndexFunc(p, func(m member) bool { return m.key == "odata.prefer" })
	return slices.Insert(p, i, member{"odata.expand", expand})
}

func odataHeaders() object {
	return obj(
		"OData-Version", obj("required", true,
			"description", "The OData version, once, on every response under "+ODataRoot+", errors included.",
			"schema", obj("type", "string", "const", odata.Version)),
		"Preference-Applied", obj(
			"description", "`odata.maxpagesize=N` when the request's `Prefer` asked for smaller pages.",
			"schema", obj("type", "string", "pattern", `^odata\.maxpagesize=[1-9][0-9]*$`)),
		"OData-Vary", obj(
			"description", "A feed's content coding depends on `Accept-Encoding`.",
			"schema", obj("type", "string", "enum", []string{"Accept-Encoding", "Accept, Accept-Encoding"})),
	)
}

// odataCode is the OData error code of an error with HTTP status st: the
// status's name without spaces ("BadRequest", "NotImplemented"), as the
// odata package's codes are.
func odataCode(st int) string { return strings.ReplaceAll(http.StatusText(st), " ", "") }

// odataErrors are the errors of a path under the service root, which come
// in OData's shape: every error but 401, which is the same on every path
// (it tells nothing of which exist). Each has its status, what it means,
// an example message, and the headers it has besides those of every OData
// response.
var odataErrors = []struct {
	status        int
	desc, message string
	headers       []string
}{
	{http.StatusBadRequest, "A malformed OData request: the message names the query option and what is wrong.", `$top must be a non-negative integer, got "-1"`, nil},
	{http.StatusForbidden, "The token lacks the scope the entity set needs.", "this token lacks the " + reportScope + " scope", nil},
	{http.StatusNotFound, "No such path under the service root (answered only to a valid token).", "Not Found", nil},
	{http.StatusMethodNotAllowed, "The path does not allow the method.", "Method Not Allowed", []string{"Allow"}},
	{http.StatusNotAcceptable, "No format this service writes is acceptable.", "Accept allows no format this service writes: the service writes application/json;odata.metadata=minimal, with IEEE754Compatible=true or false", nil},
	{http.StatusTooManyRequests, "A page of more than 1,000 rows, or a count under a filter, asked with a token that already has as many big responses running or waiting as it may; try again after `Retry-After` seconds.", "Too Many Requests: this token has as many exports running and waiting as it may; try again when some have ended", []string{"Retry-After"}},
	{http.StatusRequestHeaderFieldsTooLarge, "The request's header fields, with its URL, are too large.", "Request Header Fields Too Large: the request's header fields may take 64 KiB at most", nil},
	{http.StatusInternalServerError, "An unexpected failure; its cause is logged with the request id, never sent.", "Internal Server Error", nil},
	{http.StatusNotImplemented, "Valid OData that informe does not support; the message says what is supported.", "$expand is not supported; supported are $select, $filter, $orderby, $top, $skip, $count, $skiptoken and $format", nil},
	{http.StatusServiceUnavailable, "The database cannot be reached, a request took longer than the server allows, or the server is at capacity; try again after `Retry-After` seconds.", "Service Unavailable: the database cannot be reached", []string{"Retry-After"}},
}

// odataResponses returns the responses of the OData paths: a 304, and
// each of odataErrors, named "OData" and its code ("ODataBadRequest").
func odataResponses() object {
	r := obj(
		"ODataNotModified", obj(
			"description", "The client holds the current `ETag` (`If-None-Match`): nothing the page reads changed. No body; decided without reading rows.",
			"headers", headerRefs("X-Request-Id", "Cache-Control", "OData-Version", "ETag"),
		),
	)
	for _, e := range odataErrors {
		r = append(r, member{"OData" + odataCode(e.status), obj(
			"description", e.desc,
			"headers", headerRefs(append([]string{"X-Request-Id", "Cache-Control", "OData-Version"}, e.headers...)...),
			"content", obj("application/json", obj(
				"schema", ref("schemas", "ODataError"),
				"example", obj("error", obj("code", odataCode(e.status), "message", e.message)),
			)),
		)})
	}
	return r
}

// odataContent is the content of a successful OData JSON response.
func odataContent(schema string) object {
	return obj("application/json", obj("schema", ref("schemas", schema)))
}

// odataOperations returns the GET and HEAD operations of an OData path.
// errs are the error statuses it answers, by name of response component
// without the OData prefix.
func odataOperations(id, summary, desc, scope string, params []any, ok object, errs ...string) object {
	responses := obj("200", ok)
	for _, e := range errs {
		st := map[string]string{
			"NotModified": "304", "BadRequest": "400", "Unauthorized": "401", "Forbidden": "403", "NotFound": "404", "NotAcceptable": "406",
			"TooManyRequests": "429", "RequestHeaderFieldsTooLarge": "431", "InternalServerError": "500", "NotImplemented": "501", "ServiceUnavailable": "503",
		}[e]
		name := "OData" + e
		if e == "Unauthorized" {
			name = e // every 401 is the same, OData's included
		}
		responses = append(responses, member{st, ref("responses", name)})
	}
	op := func(method, id, summary, desc string, responses object) object {
		o := obj("operationId", method+id, "tags", []string{"odata"}, "summary", summary, "description", desc)
		if len(params) > 0 {
			o = o.with("parameters", params)
		}
		if scope != "" {
			o = o.with("security", securityRequirements(scope))
		}
		return o.with("responses", responses)
	}
	headOK := obj("description", "The headers a GET would answer, without a body.")
	for _, m := range ok {
		if m.key == "headers" {
			headOK = append(headOK, m)
		}
	}
	return obj(
		"get", op("get", id, summary, desc, responses),
		"head", op("head", id, summary+" (headers only)", "The GET's status and headers without its body.",
			append(obj("200", headOK), responses[1:]...)),
	)
}

func (v *view) odataPaths() object {
	errs := []string{"BadRequest", "Unauthorized", "Forbidden", "NotAcceptable", "TooManyRequests", "RequestHeaderFieldsTooLarge", "InternalServerError", "ServiceUnavailable"}
	okHeaders := headerRefs("X-Request-Id", "Cache-Control", "OData-Version")
	service := func(id string) object {
		return odataOperations(id, "OData service document",
			"The entity sets of the OData service. Point Excel or Power BI (Get Data → OData feed) at this URL, with or without the trailing slash. Any valid token may read it.",
			"", []any{ref("parameters", "odata.format")},
			obj("description", "The service document.", "headers", okHeaders, "content", odataContent("ODataServiceDocument")),
			"BadRequest", "Unauthorized", "NotAcceptable", "RequestHeaderFieldsTooLarge", "InternalServerError", "ServiceUnavailable")
	}
	p := obj(
		ODataRoot, service("ODataServiceRoot"),
		ODataRoot+"/", service("ODataServiceDocument"),
		ODataRoot+"/$metadata", odataOperations("ODataMetadata", "OData metadata (CSDL)",
			"The CSDL XML document of the service: one entity type per set, its properties typed from the column kinds (integer Edm.Int64, decimal Edm.Decimal, date Edm.Date, timestamps Edm.DateTimeOffset, text Edm.String). OData 4.0 defines only the XML representation, so it is XML whatever `Accept` says. `$format=xml` (or `application/xml`) changes nothing; `$format=json` (OData 4.01's CSDL JSON, not written) or any other format is a 406, any other parameter a 400. Any valid token may read it.",
			"", []any{obj("name", "$format", "in", "query", "required", false,
				"description", "`xml` or `application/xml`: the only format of `$metadata`.",
				"schema", obj("type", "string"))},
			obj("description", "The CSDL document.", "headers", okHeaders,
				"content", obj(metadataMediaType(), obj("schema", obj("type", "string")))),
			"BadRequest", "Unauthorized", "NotAcceptable", "RequestHeaderFieldsTooLarge", "InternalServerError", "ServiceUnavailable"),
	)
	for _, s := range v.sets {
		params := []any{
			selectParameter(s),
			ref("parameters", "odata.filter"),
			obj("name", "$orderby", "in", "query",
				"description", "Properties, comma-separated, each optionally followed by `asc` or `desc`; nulls come first ascending and last descending. Without it entities come in the order "+strings.Join(s.OrderBy, ", ")+". Next links resume after the last entity's sort values and key, so paging stays exact under any order. An expression is a 501.",
				"schema", obj("type", "string", "pattern", orderByPattern(s.orderNames()))),
		}
		if len(s.Navigations) > 0 {
			params = append(params, ref("parameters", "odata.expand"))
		}
		params = append(params,
			ref("parameters", "odata.top"),
			ref("parameters", "odata.skip"),
			ref("parameters", "odata.count"),
			ref("parameters", "odata.skiptoken"),
			ref("parameters", "odata.format"),
			ref("parameters", "odata.prefer"),
			ref("parameters", "ifNoneMatch"),
		)
		ok := obj(
			"description", "A page of the feed. Content-Type: `application/json;odata.metadata=minimal;odata.streaming=true;IEEE754Compatible=<false|true>;charset=utf-8`.",
			"headers", append(okHeaders.with(),
				member{"Preference-Applied", ref("headers", "Preference-Applied")},
				member{"Vary", ref("headers", "OData-Vary")},
				member{"Content-Encoding", ref("headers", "Content-Encoding")},
				member{"ETag", ref("headers", "ETag")}),
			"content", odataContent("OData"+s.Name+"Feed"),
		)
		p = append(p, member{ODataRoot + "/" + s.Name, odataOperations("OData"+s.Name, "OData feed of "+s.Name,
			fmt.Sprintf("A page of the entity set %s, typed after the column kinds. Pages hold at most %d entities (fewer with `Prefer: odata.maxpagesize`); follow `@odata.nextLink` for the next. Needs the `%s` scope.", s.Name, odata.MaxPageSize, s.Scope),
			s.Scope, params, ok, append([]string{"NotModified"}, append(errs, "NotImplemented")...)...)})

		count := obj(
			"description", "The number of entities matching `$filter`, in base 10, as `text/plain;charset=utf-8`.",
			"headers", append(okHeaders.with(), member{"ETag", ref("headers", "ETag")}),
			"content", obj("text/plain", obj("schema", obj("type", "string", "pattern", `^[0-9]+$`), "example", "1234")),
		)
		p = append(p, member{ODataRoot + "/" + s.Name + "/$count", odataOperations("OData"+s.Name+"Count", "Number of entities of "+s.Name,
			"The number of entities of "+s.Name+" that `$filter` matches (all without it), as plain text: what Power Query's *Count Rows* folds to. `$filter` is the feed's; the feed's other options are checked (a malformed one is a 400 or 501, as on the feed) and ignored. Needs the `"+s.Scope+"` scope.",
			s.Scope, []any{ref("parameters", "odata.filter"), ref("parameters", "ifNoneMatch")}, count, append([]string{"NotModified"}, append(errs, "NotImplemented")...)...)})

		key := obj("name", s.Key, "in", "path", "required", true)
		path := ODataRoot + "/" + s.Name + "({" + s.Key + "})"
		example := "/" + s.Name + "(42)"
		if s.syntheticKey() {
			key = key.with("description", "The entity's key, as `"+s.Key+"` in its feed: "+strings.Join(s.RowKey, ", ")+" in base 10, joined by `-`, 0 standing for an absent one; in single quotes in the path.",
				"schema", obj("type", "string", "pattern", "^[0-9]+(-[0-9]+){"+fmt.Sprint(len(s.RowKey)-1)+"}$"),
				"example", "6-7-7")
			path = ODataRoot + "/" + s.Name + "('{" + s.Key + "}')"
			example = "/" + s.Name + "('6-7-7')"
		} else {
			key = key.with("description", "The entity's `"+s.Key+"`.",
				"schema", obj("type", "integer", "format", "int64", "minimum", 0),
				"example", 42)
		}
		byKey := obj(
			"description", "The entity. Content-Type: `application/json;odata.metadata=minimal;odata.streaming=true;IEEE754Compatible=<false|true>;charset=utf-8`.",
			"headers", append(okHeaders.with(),
				member{"Vary", ref("headers", "OData-Vary")},
				member{"Content-Encoding", ref("headers", "Content-Encoding")}),
			"content", odataContent("OData"+s.Name+"ByKey"),
		)
		keyParams := []any{key, selectParameter(s), ref("parameters", "odata.format")}
		only := "`$select` and `$format`"
		if len(s.Navigations) > 0 {
			keyParams = append(keyParams, ref("parameters", "odata.expand"))
			only = "`$select`, `$expand` and `$format`"
		}
		p = append(p, member{path, odataOperations("OData"+s.Name+"ByKey", "One entity of "+s.Name+" by key",
			"The entity of "+s.Name+" with that key (e.g. `"+ODataRoot+example+"`), as OData addresses one entity; `"+s.Key+"="+"` before the key is accepted too. Only "+only+" may follow; another query option is a 400, and so is a malformed key. No entity with that key is a 404. Needs the `"+s.Scope+"` scope.",
			s.Scope, keyParams, byKey,
			"BadRequest", "Unauthorized", "Forbidden", "NotFound", "NotAcceptable", "RequestHeaderFieldsTooLarge", "InternalServerError", "ServiceUnavailable")})
	}
	return p
}

// selectParameter returns the $select parameter of s's paths.
func selectParameter(s odataSet) object {
	return obj("name", "$select", "in", "query",
		"description", "The properties to return, comma-separated, in the order wanted, or `*`. The key is always returned (first when not named).",
		"style", "form", "explode", false,
		"schema", obj("type", "array", "minItems", 1, "items", obj("type", "string", "enum", append([]string{"*"}, s.propertyNames()...))))
}

// metadataMediaType is the media type of $metadata, without parameters.
func metadataMediaType() string {
	mt, _, _ := strings.Cut(odata.MetadataContentType, ";")
	return mt
}

// orderByPattern matches $orderby values: names, comma-separated, each
// optionally followed by asc or desc (in any case).
func orderByPattern(names []string) string {
	const ws = `[ \t]*`
	item := ws + "(" + strings.Join(names, "|") + `)([ \t]+([aA][sS][cC]|[dD][eE][sS][cC]))?` + ws
	return "^" + item + "(," + item + ")*$"
}
