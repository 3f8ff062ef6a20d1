// Package odata is informe's OData v4.0 protocol layer: the CSDL $metadata
// and service documents, the query options a feed accepts, and a streaming
// JSON feed encoder. It knows neither HTTP nor the database: it reads
// url.Values and header strings, writes to an io.Writer, and hands the
// store a [Query]: for a plain request, equalities, $skip, the
// $skiptoken's key and a row limit; for any other $filter or $orderby, a
// typed condition ([dataset.Expr]) and order over the set's properties,
// which the store writes as PostgreSQL over the set's typed view, every
// literal a bound parameter ([Query.Compile]).
//
// Entity sets are data: an [dataset.EntitySet] names a set, its entity type and
// the dataset.Column list that already drives the SQL and every other
// encoder; [NewEntitySet] checks it once, at start-up.
//
// A request for a feed reads top to bottom:
//
//	q, err := odata.Parse(r.URL.Query(), set)          // 400 or 501 as a *failure.Error with a Target and a Reason
//	f, err := odata.Negotiate(r.URL.Query(), r.Header.Values("Accept")) // 406
//	size, applied := odata.PageSize(r.Header.Values("Prefer"))
//	// the store counts (if q.Count), then reads q.Limit(size) rows
//	// matching q.Filter, after q.After, skipping q.Skip; or, when
//	// !q.Plain(), those of the conditions q.Compile(&dq) adds
//	enc := odata.NewFeed(w, q, odata.FeedOptions{ServiceRoot: root, PageSize: size, Count: n, Format: f})
//	for rows.Next() { enc.Encode(rows.Values()) }
//	err = enc.Close() // writes @odata.nextLink when a further page exists
//
// What is supported, and what is not: see [Parse]; $metadata declares it
// with Org.OData.Capabilities.V1 annotations.
// Unsupported but valid OData is a 501 Not Implemented whose message says
// what is supported; malformed requests are 400 Bad Request.
package odata
