// Reads a running informe's OData v4 service with Apache Olingo's odatajs
// and compares what it read with the JSON export; see scripts/check-odata.
//
// The client does the OData work: it parses $metadata (CSDL XML) into its
// model, follows @odata.nextLink (ODataCacheSource.read, which asks
// $skip/$top and walks the server's pages), and types every property of
// every entry from the model (the "prop@odata.type" annotations it adds to
// minimal-metadata payloads). This script only supplies the transport's
// credentials and Prefer header, counts the pages, and compares.
//
// Exit status: 0 when everything matched, 1 on any mismatch or failure.
"use strict";

const http = require("http");
const https = require("https");
const odatajs = require("odatajs/index.js"); // its package.json names a main file it lacks
const { ODataCacheSource } = require("odatajs/lib/cache/source.js");
const buildQuery = require("odata-query").default; // writes $filter, $orderby, $count, keys

const BASE = (process.env.BASE || "").replace(/\/+$/, "");
const TOKEN = process.env.TOKEN || "";
const PAGE = parseInt(process.env.PAGE_SIZE || "2500", 10); // Prefer: odata.maxpagesize of the full reads
const MAX_SHOWN = 20; // mismatches printed per comparison
const TIMEOUT = 1000 * parseInt(process.env.TIMEOUT || "120", 10); // per request: a response that never ends is a failure, not a hang
// How the database orders text: "C" (byte order of UTF-8, the demo's
// database: initdb --no-locale) compares string orders row for row; any
// other value compares rows of an order with a string key as sets.
const COLLATION = process.env.COLLATION || "C";
const SMALL_PAGE = parseInt(process.env.SMALL_PAGE || "97", 10); // Prefer: odata.maxpagesize of filtered and sorted reads
if (!BASE || !TOKEN) {
  console.error("set BASE and TOKEN");
  process.exit(2);
}
const ROOT = BASE + "/odata";
const basic = "Basic " + Buffer.from("token:" + TOKEN).toString("base64");

let failures = 0;
function fail(msg) {
  failures++;
  console.log("FAIL " + msg);
}
function pass(msg) {
  console.log("PASS " + msg);
}

// ---- transport -------------------------------------------------------------

// odatajs's own Node transport (lib/odata/net.js, its defaultHttpClient)
// cannot be used as it is:
//   - it ignores request.user/password (the line is commented out), and
//     ODataCacheSource passes no headers, so it cannot authenticate;
//   - it decodes every TCP chunk on its own ("body += chunk"), so a UTF-8
//     character split between two chunks arrives as two U+FFFD: over the
//     demo's 27 MB feed about ten values ("Ra\ufffd\ufffdl" for "Raúl")
//     came out wrong while the bytes informe sent were valid UTF-8;
//   - it speaks http only.
// So the script plugs in its own httpClient, odatajs's documented extension
// point (request(request, success, error) -> {abort}), which adds Basic
// credentials (user "token", the token as password) and a Prefer header,
// decodes the whole body once, and records each response. Everything OData
// (CSDL parsing, the JSON handler, next links, typing) stays odatajs's.
function makeClient(prefer) {
  const pages = [];
  const client = {
    formatQueryString: odatajs.oData.net.defaultHttpClient.formatQueryString,
    pages,
    request(req, success, error) {
      const u = new URL(req.requestUri);
      const mod = u.protocol === "https:" ? https : http;
      const headers = Object.assign({}, req.headers, { Authorization: basic });
      if (prefer) headers.Prefer = prefer;
      let done = false;
      const r = mod.request(u, { method: req.method || "GET", headers }, (res) => {
        const chunks = [];
        res.on("data", (c) => chunks.push(c));
        res.on("error", (e) => {
          if (!done) {
            done = true;
            error({ message: e.message, request: req });
          }
        });
        res.on("end", () => {
          if (done) return;
          done = true;
          const bytes = Buffer.concat(chunks);
          // odatajs reads headers by their canonical names (Content-Type).
          const h = {};
          for (const [k, v] of Object.entries(res.headers)) h[k.replace(/(^|-)([a-z])/g, (m) => m.toUpperCase())] = v;
          const response = { requestUri: req.requestUri, statusCode: res.statusCode, statusText: res.statusMessage, headers: h, body: bytes.toString("utf8") };
          pages.push({ uri: req.requestUri, status: res.statusCode, bytes: bytes.length, headers: h });
          if (res.statusCode >= 200 && res.statusCode <= 299) success(response);
          else error({ message: "HTTP request failed", request: req, response });
        });
      });
      r.setTimeout(TIMEOUT, () => r.destroy(new Error(`no complete response in ${TIMEOUT / 1000} s: ${req.requestUri}`)));
      r.on("error", (e) => {
        if (!done) {
          done = true;
          error({ message: e.message, request: req, response: { statusCode: 0, body: "" } });
        }
      });
      if (req.body) r.write(req.body);
      r.end();
      return {
        abort() {
          if (!done) {
            done = true;
            r.destroy();
            error({ message: "Request aborted" });
          }
        },
      };
    },
  };
  return client;
}

function metadataP(client) {
  return new Promise((resolve, reject) =>
    odatajs.oData.read({ requestUri: ROOT + "/$metadata" }, resolve, reject, odatajs.oData.metadataHandler, client),
  );
}

function readP(uri, client, metadata) {
  return new Promise((resolve, reject) =>
    odatajs.oData.read({ requestUri: uri }, (data) => resolve(data), reject, undefined, client, metadata),
  );
}

// readAll reads count entries from index of the feed at uri through the
// client's ODataCacheSource: it asks $skip=index&$top=count and follows
// @odata.nextLink until the server has sent them all.
function readAll(uri, index, count, client, metadata) {
  const src = new ODataCacheSource({ source: uri, httpClient: client, metadata });
  return new Promise((resolve, reject) => src.read(index, count, resolve, reject));
}

// A plain GET of informe's own JSON (the export, /users) with a Bearer token.
function getJSON(path) {
  const u = new URL(BASE + path);
  const mod = u.protocol === "https:" ? https : http;
  return new Promise((resolve, reject) => {
    mod
      .get(u, { headers: { Authorization: "Bearer " + TOKEN, Accept: "application/json" } }, (res) => {
        const chunks = [];
        res.on("data", (c) => chunks.push(c));
        res.on("end", () => {
          const buf = Buffer.concat(chunks);
          if (res.statusCode !== 200) return reject(new Error(`GET ${path}: ${res.statusCode} ${buf.toString().slice(0, 300)}`));
          try {
            resolve({ body: JSON.parse(buf.toString("utf8")), bytes: buf.length });
          } catch (e) {
            reject(new Error(`GET ${path}: ${e.message}`));
          }
        });
        res.on("error", reject);
      })
      .setTimeout(TIMEOUT, function () {
        this.destroy(new Error(`GET ${path}: no complete response in ${TIMEOUT / 1000} s`));
      })
      .on("error", reject);
  });
}

// ---- typed comparison ------------------------------------------------------

// canonDecimal writes a decimal string without a plus sign, leading zeros or
// trailing fractional zeros, so that "12500.50" and 12500.5 compare equal.
function canonDecimal(s) {
  const m = /^([+-]?)(\d*)(?:\.(\d*))?$/.exec(s);
  if (!m) return null;
  let int = m[2].replace(/^0+(?=\d)/, "") || "0";
  let frac = (m[3] || "").replace(/0+$/, "");
  const neg = m[1] === "-" && (int !== "0" || frac !== "");
  return (neg ? "-" : "") + int + (frac ? "." + frac : "");
}

// instant reads a timestamp, OData's (2022-01-12T12:53:36.471554Z) or the
// export's (2022-01-12 12:53:36 in UTC, or 2022-01-12 12:53:36.471554+00),
// as [UTC seconds, fraction to nanoseconds] so that nothing is rounded.
function instant(s) {
  const m = /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(Z|[+-]\d{2}(?::?\d{2})?)?$/.exec(s);
  if (!m) return null;
  let secs = Date.UTC(+m[1], +m[2] - 1, +m[3], +m[4], +m[5], +m[6]) / 1000;
  const off = m[8];
  if (off && off !== "Z") {
    const sign = off[0] === "-" ? -1 : 1;
    const hh = +off.slice(1, 3);
    const mm = off.length > 3 ? +off.slice(-2) : 0;
    secs -= sign * (hh * 3600 + mm * 60);
  }
  return [secs, (m[7] || "").padEnd(9, "0")];
}

// same reports whether OData value v, typed t by the client ("#Int64"),
// equals the export's string e ("" or null when absent). It returns "" when
// equal, else why not.
function same(t, v, e) {
  const absent = e === "" || e === null || e === undefined;
  if (v === null || v === undefined) return absent ? "" : "null in OData, a value in the export";
  if (v === "" && absent && t === "#String") return ""; // a non-nullable empty string
  if (absent) return "a value in OData, absent in the export";
  const es = String(e);
  switch (t) {
    case "#String":
      if (typeof v !== "string") return "not a JSON string";
      return v === es ? "" : "differs";
    case "#Int64":
    case "#Int32":
      if (typeof v === "number") {
        if (!Number.isSafeInteger(v)) return "not a safe integer";
        return String(v) === es ? "" : "differs";
      }
      if (typeof v === "string" && /^-?\d+$/.test(v)) return v === es ? "" : "differs"; // IEEE754Compatible=true
      return "not an integer";
    case "#Decimal":
    case "#Double": {
      if (typeof v !== "number" && typeof v !== "string") return "not a number";
      const a = canonDecimal(typeof v === "number" ? String(v) : v);
      const b = canonDecimal(es);
      if (a === null) return "OData value is no plain decimal";
      if (b === null) return "export value is no decimal";
      return a === b ? "" : "differs";
    }
    case "#Date":
      if (typeof v !== "string" || !/^\d{4}-\d{2}-\d{2}$/.test(v)) return "not YYYY-MM-DD";
      return v === es ? "" : "differs";
    case "#DateTimeOffset": {
      if (typeof v !== "string") return "not a string";
      const a = instant(v);
      const b = instant(es);
      if (!a || !/[T]/.test(v) || !/(Z|[+-]\d{2}:\d{2})$/.test(v)) return "not an OData DateTimeOffset";
      if (!b) return "export value is no timestamp";
      return a[0] === b[0] && a[1] === b[1] ? "" : "differs";
    }
    default:
      return "unknown type " + t;
  }
}

// compareRows compares OData entries with export rows, in order, property by
// property, using the type the client gave each property. props are the
// entity type's properties (from the client's model); skip names those not
// in the export (the key row_id).
function compareRows(label, entries, rows, props, skip, mapExport) {
  let shown = 0;
  let bad = 0;
  const note = (msg) => {
    bad++;
    if (shown++ < MAX_SHOWN) console.log(`  ${label}: ${msg}`);
  };
  if (entries.length !== rows.length) note(`OData has ${entries.length} rows, the export ${rows.length}`);
  const n = Math.min(entries.length, rows.length);
  const typed = {};
  let values = 0;
  for (let i = 0; i < n; i++) {
    const en = entries[i];
    const row = mapExport ? mapExport(rows[i]) : rows[i];
    for (const p of props) {
      if (skip.includes(p.name)) continue;
      if (!(p.name in en)) {
        note(`row ${i}: ${p.name} missing from the OData entry`);
        continue;
      }
      const t = en[p.name + "@odata.type"];
      if (t !== "#" + p.type.replace(/^Edm\./, "")) {
        note(`row ${i}: ${p.name} typed ${t} by the client, ${p.type} in $metadata`);
        continue;
      }
      const v = en[p.name];
      if (v === null && p.nullable === "false") note(`row ${i}: ${p.name} is null but Nullable="false"`);
      const why = same(t, v, row[p.name]);
      values++;
      typed[t] = (typed[t] || 0) + (v === null ? 0 : 1);
      if (why) note(`row ${i}: ${p.name} (${t}): ${why}: OData ${JSON.stringify(v)}, export ${JSON.stringify(row[p.name])}`);
    }
  }
  if (bad > shown) console.log(`  ${label}: ... ${bad - shown} more`);
  return { bad, values, typed };
}

function typedSummary(typed) {
  return Object.keys(typed)
    .sort()
    .map((t) => `${t.slice(1)} ${typed[t]}`)
    .join(", ");
}

// ---- the checks ------------------------------------------------------------

async function main() {
  console.log(`odatajs ${odatajs.version.major}.${odatajs.version.minor}.${odatajs.version.build} (Apache Olingo OData Client for JavaScript) against ${ROOT}`);

  // 1. $metadata through the client's CSDL parser.
  const mdClient = makeClient();
  const md = await metadataP(mdClient);
  const schema = md.dataServices.schema[0];
  const types = {};
  console.log(`$metadata: CSDL ${md.version}, schema ${schema.namespace}, ${mdClient.pages[0].bytes} bytes`);
  for (const et of schema.entityType) {
    types[schema.namespace + "." + et.name] = et;
    const key = et.key[0].propertyRef.map((r) => r.name).join(",");
    const byType = {};
    for (const p of et.property) byType[p.type] = (byType[p.type] || 0) + 1;
    console.log(`  EntityType ${et.name} (key ${key}), ${et.property.length} properties: ${Object.entries(byType).map(([t, n]) => `${n} ${t}`).join(", ")}`);
    for (let i = 0; i < et.property.length; i += 4) {
      console.log(
        "    " +
          et.property
            .slice(i, i + 4)
            .map((p) => `${p.name}: ${p.type}${p.nullable === "false" ? "!" : ""}${p.scale ? ` scale=${p.scale}` : ""}${p.precision ? ` precision=${p.precision}` : ""}`)
            .join("; "),
      );
    }
  }
  const sets = {};
  for (const es of schema.entityContainer.entitySet) sets[es.name] = types[es.entityType];
  console.log(`  EntityContainer ${schema.entityContainer.name}: ${Object.entries(sets).map(([s, t]) => `${s} -> ${t.name}`).join(", ")}`);
  for (const s of ["GeneralReport", "Users"]) if (!sets[s]) fail(`$metadata has no entity set ${s}`);
  if (!sets.GeneralReport || !sets.Users) return;

  // 2. The export and /users, as the reference.
  const exp = await getJSON("/api/general-report/export?format=json");
  const users = await getJSON("/users");
  console.log(`export: ${exp.body.length} rows, ${exp.bytes} bytes; /users: ${users.body.length} users, ${users.bytes} bytes`);

  const rp = sets.GeneralReport.property;
  const up = sets.Users.property;
  const rkey = sets.GeneralReport.key[0].propertyRef[0].name; // row_id, not in the export
  {
    const names = rp.map((p) => p.name).filter((n) => n !== rkey);
    const cols = Object.keys(exp.body[0] || {});
    if (JSON.stringify(names) === JSON.stringify(cols)) pass(`GeneralReportRow's properties other than its key ${rkey} are the export's ${cols.length} fields, in order`);
    else fail(`GeneralReportRow's properties differ from the export's fields: ${names.filter((n) => !cols.includes(n)).join(",")} / ${cols.filter((n) => !names.includes(n)).join(",")}`);
    const un = up.map((p) => p.name);
    const uc = Object.keys(users.body[0] || {});
    if (JSON.stringify(un) === JSON.stringify(uc)) pass(`User's properties are /users' ${uc.length} fields, in order`);
    else fail(`User's properties differ from /users' fields: ${un.join(",")} vs ${uc.join(",")}`);
  }

  // 3. The whole GeneralReport feed, following next links.
  {
    const client = makeClient(`odata.maxpagesize=${PAGE}`);
    const t0 = Date.now();
    const data = await readAll(ROOT + "/GeneralReport", 0, exp.body.length + 1000, client, md);
    const ms = Date.now() - t0;
    const rows = data.value;
    const next = client.pages.filter((p) => /\$skiptoken=/.test(p.uri)).length;
    console.log(`GeneralReport: ${rows.length} rows in ${client.pages.length} pages (${next} by @odata.nextLink), ${client.pages.reduce((a, p) => a + p.bytes, 0)} bytes, ${ms} ms, Prefer odata.maxpagesize=${PAGE}`);
    for (const p of client.pages) console.log(`  GET ${p.uri.replace(BASE, "")} -> ${p.status}, ${p.bytes} bytes`);
    const r = compareRows("GeneralReport", rows, exp.body, rp, [rkey]);
    console.log(`  typed values compared: ${r.values} (non-null: ${typedSummary(r.typed)})`);
    const ids = new Set(rows.map((e) => e[rkey]));
    if (ids.size !== rows.length) fail(`GeneralReport: ${rows.length - ids.size} repeated ${rkey} values`);
    const badKeys = rows.filter((e) => !String(e[rkey]).startsWith(`${e.contract_id}-${e.process_id === null ? 0 : e.process_id}-`)).length;
    if (badKeys) fail(`GeneralReport: ${badKeys} ${rkey} values do not start with contract_id-process_id-`);
    const pagesOK = client.pages.length === Math.max(1, Math.ceil(exp.body.length / PAGE)) && next === client.pages.length - 1;
    if (!pagesOK) fail(`GeneralReport: expected ${Math.ceil(exp.body.length / PAGE)} pages of ${PAGE}, the client made ${client.pages.length} requests`);
    if (r.bad === 0 && ids.size === rows.length) pass(`GeneralReport feed = export: ${rows.length} rows, same order, ${r.values} values equal after typing`);
    else fail(`GeneralReport feed differs from the export in ${r.bad} places`);
  }

  // 4. Users, following next links (small pages, so that there are some).
  {
    const size = Math.max(1, Math.ceil(users.body.length / 4));
    const client = makeClient(`odata.maxpagesize=${size}`);
    const data = await readAll(ROOT + "/Users", 0, users.body.length + 100, client, md);
    const rows = data.value;
    console.log(`Users: ${rows.length} rows in ${client.pages.length} pages, Prefer odata.maxpagesize=${size}`);
    const r = compareRows("Users", rows, users.body, up, []);
    console.log(`  typed values compared: ${r.values} (non-null: ${typedSummary(r.typed)})`);
    if (client.pages.length !== Math.ceil(users.body.length / size)) fail(`Users: expected ${Math.ceil(users.body.length / size)} pages, the client made ${client.pages.length} requests`);
    if (r.bad === 0) pass(`Users feed = /users: ${rows.length} users, same order, ${r.values} values equal after typing`);
    else fail(`Users feed differs from /users in ${r.bad} places`);
  }

  // 5. $filter (client_id eq N and client_rut eq '...'), read through next links.
  {
    const byClient = new Map();
    for (const row of exp.body) if (row.client_id !== "") byClient.set(row.client_id, (byClient.get(row.client_id) || 0) + 1);
    const [cid, crows] = [...byClient.entries()].sort((a, b) => b[1] - a[1] || a[0] - b[0])[0];
    const rut = exp.body.find((r) => r.client_id === cid).client_rut;
    const want = exp.body.filter((r) => r.client_id === cid && r.client_rut === rut);
    const viaExport = (await getJSON(`/api/general-report/export?format=json&client_id=${cid}&rut=${encodeURIComponent(rut)}`)).body;
    // A RUT as people type it, with dots: informe matches it however stored.
    const dotted = rut.replace(/^(\d+)(?=-)/, (d) => d.replace(/\B(?=(\d{3})+$)/g, "."));
    for (const [label, r] of [["as stored", rut], ["with dots", dotted]]) {
      const filter = `client_id eq ${cid} and client_rut eq '${r.replace(/'/g, "''")}'`;
      const uri = `${ROOT}/GeneralReport?$filter=${encodeURIComponent(filter)}`;
      const size = Math.max(1, Math.ceil(crows / 3));
      const client = makeClient(`odata.maxpagesize=${size}`);
      const data = await readAll(uri, 0, crows + 10, client, md);
      console.log(`$filter=${filter} (${label}): ${data.value.length} rows in ${client.pages.length} pages; the export filtered by client_id=${cid}&rut=${rut}: ${viaExport.length} rows; the full export filtered here: ${want.length}`);
      const a = compareRows(`$filter ${label}`, data.value, want, rp, [rkey]);
      const b = compareRows(`$filter ${label} vs filtered export`, data.value, viaExport, rp, [rkey]);
      if (a.bad === 0 && b.bad === 0 && data.value.length > 0) pass(`$filter ${label}: ${data.value.length} rows = the export's rows of client ${cid} (${a.values} values)`);
      else fail(`$filter ${label}: ${a.bad + b.bad} differences`);
    }

    // 6. $select, $top and $count on the filtered set.
    const sel = ["row_id", "contract_id", "code_contract", "client_rut", "costo_servicio", "process_date", "execution_date"];
    const top = Math.min(3, want.length);
    const filter = `client_id eq ${cid} and client_rut eq '${rut}'`;
    const uri = `${ROOT}/GeneralReport?$filter=${encodeURIComponent(filter)}&$select=${sel.join(",")}&$top=${top}&$count=true`;
    const client = makeClient();
    const data = await readP(uri, client, md);
    const keys = data.value.length ? Object.keys(data.value[0]).filter((k) => !k.includes("@")) : [];
    const selProps = rp.filter((p) => sel.includes(p.name));
    const r = compareRows("$select/$top/$count", data.value, want.slice(0, top), selProps, [rkey]);
    console.log(`$select=${sel.join(",")}&$top=${top}&$count=true: @odata.count ${data["@odata.count"]}, ${data.value.length} rows, properties ${keys.join(",")}, next link ${data["@odata.nextLink"] ? "present" : "absent"}`);
    const ok =
      data["@odata.count"] === want.length &&
      data.value.length === top &&
      JSON.stringify(keys) === JSON.stringify(sel) &&
      !data["@odata.nextLink"] &&
      r.bad === 0;
    if (ok) pass(`$select/$top/$count: count ${want.length}, ${top} rows of exactly the ${sel.length} selected properties, equal to the export`);
    else fail(`$select/$top/$count: count ${data["@odata.count"]} (want ${want.length}), ${data.value.length} rows (want ${top}), properties ${keys.join(",")}, next link ${data["@odata.nextLink"] || "none"}, ${r.bad} value differences`);
  }

  // 7. $skip/$top through the client's paging API (a window in the middle,
  //    across a server page boundary), and $count on both sets.
  {
    const client = makeClient(`odata.maxpagesize=${PAGE}`);
    const index = Math.max(0, PAGE - 5);
    const count = 10;
    const data = await readAll(ROOT + "/GeneralReport", index, count, client, md);
    const r = compareRows("$skip/$top window", data.value, exp.body.slice(index, index + count), rp, [rkey]);
    console.log(`ODataCacheSource.read(${index}, ${count}): ${data.value.length} rows in ${client.pages.length} request(s): ${client.pages.map((p) => p.uri.replace(BASE, "")).join(" ")}`);
    if (r.bad === 0 && data.value.length === Math.min(count, Math.max(0, exp.body.length - index))) pass(`$skip=${index}&$top=${count}: rows ${index}..${index + count - 1} of the export`);
    else fail(`$skip=${index}&$top=${count}: ${r.bad} differences`);

    for (const [set, n] of [["GeneralReport", exp.body.length], ["Users", users.body.length]]) {
      const d = await readP(`${ROOT}/${set}?$count=true&$top=0`, makeClient(), md);
      if (d["@odata.count"] === n && d.value.length === 0) pass(`${set}?$count=true&$top=0: @odata.count ${n}, no rows`);
      else fail(`${set}?$count=true&$top=0: @odata.count ${d["@odata.count"]} (want ${n}), ${d.value.length} rows`);
    }
  }

  // 8. Filters over every property type, orders, $count and keys.
  await filtersAndOrders(md, sets, exp, users);
}

// ---- filters and orders ----------------------------------------------------

// typedRow returns an export row (or /users row) as typed values by the
// entity type's properties: null for "" or absent (the report's empty
// values are null in the feed), BigInt for Int64, canonical decimal
// strings, [seconds, nanoseconds] for DateTimeOffset, strings else.
function typedRow(row, props) {
  const t = {};
  for (const p of props) {
    const e = row[p.name];
    if (e === undefined || e === null || e === "") {
      t[p.name] = null;
      continue;
    }
    switch (p.type) {
      case "Edm.Int64":
      case "Edm.Int32":
        t[p.name] = BigInt(e);
        break;
      case "Edm.Decimal":
      case "Edm.Double":
        t[p.name] = canonDecimal(String(e));
        break;
      case "Edm.DateTimeOffset":
        t[p.name] = instant(String(e));
        break;
      default:
        t[p.name] = String(e);
    }
  }
  return t;
}

// cmpDecimal compares two canonical decimal strings exactly.
function cmpDecimal(a, b) {
  const split = (s) => {
    const neg = s.startsWith("-");
    const [i, f = ""] = s.replace("-", "").split(".");
    return { neg, i: BigInt(i), f };
  };
  const x = split(a);
  const y = split(b);
  const n = Math.max(x.f.length, y.f.length);
  const scaled = (v) => (v.i * 10n ** BigInt(n) + BigInt(v.f.padEnd(n, "0") || "0")) * (v.neg ? -1n : 1n);
  const d = scaled(x) - scaled(y);
  return d < 0n ? -1 : d > 0n ? 1 : 0;
}

// cmpValue compares two non-null typed values of EDM type t as informe's
// database does; text in byte order of its UTF-8, as PostgreSQL's "C"
// collation does.
function cmpValue(t, a, b) {
  switch (t) {
    case "Edm.Int64":
    case "Edm.Int32":
      return a < b ? -1 : a > b ? 1 : 0;
    case "Edm.Decimal":
    case "Edm.Double":
      return cmpDecimal(a, b);
    case "Edm.DateTimeOffset":
      return a[0] !== b[0] ? (a[0] < b[0] ? -1 : 1) : a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0;
    case "Edm.String":
      return Buffer.compare(Buffer.from(a, "utf8"), Buffer.from(b, "utf8"));
    default: // Edm.Date: YYYY-MM-DD
      return a < b ? -1 : a > b ? 1 : 0;
  }
}

// Three-valued logic of $filter over typed rows, as OData defines it:
// eq and ne treat null as a value (null eq null, and 'x' ne null, are
// true); gt, ge, lt, le with a null are false; a function of a null is
// null, and not of null is null; a row is kept when its condition is true.
const L = {
  eq: (t, a, b) => (a === null || b === null ? a === b : cmpValue(t, a, b) === 0),
  ne: (t, a, b) => !L.eq(t, a, b),
  gt: (t, a, b) => a !== null && b !== null && cmpValue(t, a, b) > 0,
  ge: (t, a, b) => a !== null && b !== null && cmpValue(t, a, b) >= 0,
  lt: (t, a, b) => a !== null && b !== null && cmpValue(t, a, b) < 0,
  le: (t, a, b) => a !== null && b !== null && cmpValue(t, a, b) <= 0,
  and: (...xs) => (xs.includes(false) ? false : xs.includes(null) ? null : true),
  or: (...xs) => (xs.includes(true) ? true : xs.includes(null) ? null : false),
  not: (x) => (x === null ? null : !x),
  fn: (f, ...args) => (args.includes(null) ? null : f(...args)),
};

// filterChecks are the $filter expressions the script asks, written by
// odata-query from its object syntax, each with the same predicate in JS
// over the typed export rows. Dates are Edm.Date literals (raw), a JS
// Date is written by odata-query as a UTC DateTimeOffset, and the upper
// bound of the execution_date window has an offset as Power BI sends in
// Chile (-03:00).
function filterChecks(byClient) {
  const S = "Edm.String";
  const dtStart = new Date("2023-01-01T00:00:00Z");
  const dtEnd = "2023-04-01T00:00:00-03:00";
  const d = (s) => ({ type: "raw", value: s });
  return [
    { name: "string eq", filter: { task_status: "Pendiente" }, pred: (r) => L.eq(S, r.task_status, "Pendiente") },
    { name: "string ne (nulls included)", filter: { task_status: { ne: "Pendiente" } }, pred: (r) => L.ne(S, r.task_status, "Pendiente") },
    {
      name: "string eq with a quote and accents",
      filter: { client_region: "Región del Libertador General Bernardo O'Higgins" },
      pred: (r) => L.eq(S, r.client_region, "Región del Libertador General Bernardo O'Higgins"),
    },
    { name: "contains", filter: { client_region: { contains: "Lagos" } }, pred: (r) => L.fn((x) => x.includes("Lagos"), r.client_region) },
    { name: "startswith", filter: { client_email: { startswith: "a" } }, pred: (r) => L.fn((x) => x.startsWith("a"), r.client_email) },
    { name: "tolower eq", filter: { "tolower(task_status)": "pendiente" }, pred: (r) => L.fn((x) => x.toLowerCase() === "pendiente", r.task_status) },
    {
      name: "Date range on task_end_date",
      filter: { task_end_date: { ge: d("2024-01-01"), lt: d("2024-07-01") } },
      pred: (r) => L.and(L.ge("Edm.Date", r.task_end_date, "2024-01-01"), L.lt("Edm.Date", r.task_end_date, "2024-07-01")),
    },
    { name: "year() of a Date", filter: { "year(task_end_date)": 2024 }, pred: (r) => L.fn((x) => x.startsWith("2024-"), r.task_end_date) },
    {
      name: "DateTimeOffset range on execution_date (Z and -03:00)",
      filter: { execution_date: { ge: dtStart, lt: d(dtEnd) } },
      pred: (r) =>
        L.and(L.ge("Edm.DateTimeOffset", r.execution_date, instant(dtStart.toISOString())), L.lt("Edm.DateTimeOffset", r.execution_date, instant(dtEnd))),
    },
    { name: "Decimal gt", filter: { costo_servicio: { gt: 300000 } }, pred: (r) => L.gt("Edm.Decimal", r.costo_servicio, "300000") },
    { name: "Decimal le a fraction", filter: { costo_servicio: { le: 12500.5 } }, pred: (r) => L.le("Edm.Decimal", r.costo_servicio, "12500.5") },
    {
      name: "Int64 range",
      filter: { contract_id: { ge: 100, lt: 150 } },
      pred: (r) => L.and(L.ge("Edm.Int64", r.contract_id, 100n), L.lt("Edm.Int64", r.contract_id, 150n)),
    },
    {
      name: "in",
      filter: { task_status: { in: ["Pendiente", "Terminada"] } },
      pred: (r) => L.or(L.eq(S, r.task_status, "Pendiente"), L.eq(S, r.task_status, "Terminada")),
    },
    { name: "eq null", filter: { task_end_date: null }, pred: (r) => r.task_end_date === null },
    { name: "ne null", filter: { client_email: { ne: null } }, pred: (r) => r.client_email !== null },
    {
      name: "and, or, not",
      filter: {
        or: [{ task_status: "Cancelado" }, { task_progress: { ge: 50 } }],
        not: { client_region: { startswith: "Región Metropolitana" } },
      },
      pred: (r) =>
        L.and(
          L.or(L.eq(S, r.task_status, "Cancelado"), L.ge("Edm.Int64", r.task_progress, 50n)),
          L.not(L.fn((x) => x.startsWith("Región Metropolitana"), r.client_region)),
        ),
    },
    {
      name: "client_id eq and a RUT with dots",
      filter: { client_id: byClient.id, client_rut: byClient.dotted },
      pred: (r) => L.and(L.eq("Edm.Int64", r.client_id, BigInt(byClient.id)), L.eq(S, r.client_rut, byClient.rut)),
    },
  ];
}

// orderChecks are the orders the script asks, each with a $filter (or
// none) and its predicate, and the page size it reads them in.
function orderChecks() {
  return [
    { orderBy: ["costo_servicio desc"], page: 500 },
    { filter: { task_status: "Pendiente" }, pred: (r) => L.eq("Edm.String", r.task_status, "Pendiente"), orderBy: ["client_region"], page: SMALL_PAGE },
    { orderBy: ["task_status", "task_end_date desc"], page: 250 },
    {
      filter: { costo_servicio: { gt: 200000 } },
      pred: (r) => L.gt("Edm.Decimal", r.costo_servicio, "200000"),
      orderBy: ["execution_date desc", "client_email"],
      page: SMALL_PAGE,
    },
  ];
}

// sortRows sorts typed rows (with their export rows) stably by keys, each
// [property, EDM type, desc], nulls first ascending and last descending,
// as OData orders null below any value. The export is in key order, and
// informe breaks ties by the key: a stable sort gives its order.
function sortRows(rows, keys) {
  const cmp = (a, b) => {
    for (const [name, t, desc] of keys) {
      const x = a.t[name];
      const y = b.t[name];
      let c;
      if (x === null || y === null) c = x === y ? 0 : x === null ? -1 : 1;
      else c = cmpValue(t, x, y);
      if (c !== 0) return desc ? -c : c;
    }
    return 0;
  };
  return rows.slice().sort(cmp);
}

// signature is a row's typed values as one string, for comparing rows as
// sets where the order cannot be computed here.
function signature(t, props) {
  return props.map((p) => (t[p.name] === null ? "\u0000" : JSON.stringify(String(t[p.name])))).join("|");
}

async function filtersAndOrders(md, sets, exp, users) {
  const rp = sets.GeneralReport.property;
  const rkey = sets.GeneralReport.key[0].propertyRef[0].name;
  const byType = Object.fromEntries(rp.map((p) => [p.name, p.type]));
  const rows = exp.body.map((row) => ({ row, t: typedRow(row, rp) }));

  // The client with most rows, and its RUT typed with dots.
  const counts = new Map();
  for (const r of exp.body) if (r.client_id !== "") counts.set(r.client_id, (counts.get(r.client_id) || 0) + 1);
  const cid = [...counts.entries()].sort((a, b) => b[1] - a[1] || a[0] - b[0])[0][0];
  const rut = exp.body.find((r) => r.client_id === cid).client_rut;
  const byClient = { id: Number(cid), rut, dotted: rut.replace(/^(\d+)(?=-)/, (d) => d.replace(/\B(?=(\d{3})+$)/g, ".")) };

  // read reads every entry of uri through the client's paging, pages of
  // size, and reports the requests it made.
  const read = async (uri, size, max) => {
    const client = makeClient(`odata.maxpagesize=${size}`);
    const data = await readAll(uri, 0, max + 10, client, md);
    return { rows: data.value, pages: client.pages };
  };
  const show = (uri) => decodeURIComponent(uri.replace(BASE, ""));

  console.log(`filters (pages of ${SMALL_PAGE}, Prefer odata.maxpagesize, every @odata.nextLink followed), each against the same predicate over the export's ${rows.length} rows:`);
  for (const fc of filterChecks(byClient)) {
    const want = rows.filter((r) => fc.pred(r.t) === true).map((r) => r.row);
    const q = buildQuery({ filter: fc.filter });
    const uri = `${ROOT}/GeneralReport${q}`;
    const got = await read(uri, SMALL_PAGE, rows.length);
    const next = got.pages.filter((p) => /\$skiptoken=/.test(p.uri)).length;
    const cmp = compareRows(fc.name, got.rows, want, rp, [rkey]);
    // $count both ways: /$count as text, and $count=true with $top=0.
    const countText = await readP(`${ROOT}/GeneralReport/$count${q}`, makeClient(), md);
    const countJSON = (await readP(`${ROOT}/GeneralReport${buildQuery({ filter: fc.filter, count: true, top: 0 })}`, makeClient(), md))["@odata.count"];
    const pagesWant = Math.max(1, Math.ceil(want.length / SMALL_PAGE));
    console.log(`  ${show(uri)}`);
    console.log(`    read ${got.rows.length} rows in ${got.pages.length} pages (${next} by next link), ${got.pages.reduce((a, p) => a + p.bytes, 0)} bytes; /$count ${JSON.stringify(countText)}, @odata.count ${countJSON}; the export filtered here: ${want.length}`);
    const problems = [];
    if (cmp.bad) problems.push(`${cmp.bad} differences`);
    if (String(countText) !== String(want.length)) problems.push(`/$count ${countText}`);
    if (countJSON !== want.length) problems.push(`@odata.count ${countJSON}`);
    if (got.pages.length !== pagesWant || next !== got.pages.length - 1) problems.push(`${got.pages.length} requests, want ${pagesWant} pages`);
    if (want.length === 0) problems.push("no row matches: the check proves nothing on this data");
    if (problems.length === 0) pass(`$filter ${fc.name}: ${want.length} rows, same order, ${cmp.values} values equal; /$count and $count=true ${want.length}`);
    else fail(`$filter ${fc.name}: ${problems.join("; ")}`);
  }

  console.log(`orders, ties broken by ${rkey}; text compared ${COLLATION === "C" ? "in byte order of UTF-8 (COLLATION=C, the demo database's)" : `as sets (COLLATION=${COLLATION}: its order is not computed here)`}:`);
  let sample = null;
  for (const oc of orderChecks()) {
    const keys = oc.orderBy.map((o) => {
      const [name, dir] = o.split(" ");
      return [name, byType[name], dir === "desc"];
    });
    const want = sortRows(oc.pred ? rows.filter((r) => oc.pred(r.t) === true) : rows, keys);
    const uri = `${ROOT}/GeneralReport${buildQuery({ filter: oc.filter, orderBy: oc.orderBy })}`;
    const got = await read(uri, oc.page, rows.length);
    const byText = keys.some((k) => k[1] === "Edm.String");
    let cmp;
    if (COLLATION === "C" || !byText) {
      cmp = compareRows(`$orderby ${oc.orderBy.join(",")}`, got.rows, want.map((r) => r.row), rp, [rkey]);
    } else {
      const sig = (list) => list.map((t) => signature(t, rp.filter((p) => p.name !== rkey))).sort();
      const a = sig(got.rows.map((e) => typedRow(Object.fromEntries(rp.map((p) => [p.name, e[p.name] === null ? "" : String(e[p.name])])), rp)));
      const b = sig(want.map((r) => r.t));
      cmp = { bad: a.length !== b.length || a.some((x, i) => x !== b[i]) ? 1 : 0, values: a.length };
    }
    // Ties are broken by the key: contract, process, task ascending.
    const parts = (id) => id.split("-").map(BigInt);
    let tieBad = 0;
    const typedGot = got.rows.map((e) => {
      const t = {};
      for (const [name, type] of keys) {
        const v = e[name];
        t[name] = v === null ? null : type === "Edm.Int64" ? BigInt(v) : type === "Edm.Decimal" ? canonDecimal(String(v)) : type === "Edm.DateTimeOffset" ? instant(v) : String(v);
      }
      return { t, id: parts(e[rkey]) };
    });
    for (let i = 1; i < typedGot.length; i++) {
      const same = sortRows([typedGot[i - 1], typedGot[i]], keys)[0] === typedGot[i - 1] && sortRows([typedGot[i], typedGot[i - 1]], keys)[0] === typedGot[i];
      if (!same) continue; // not tied
      const [a, b] = [typedGot[i - 1].id, typedGot[i].id];
      const c = a[0] !== b[0] ? a[0] < b[0] : a[1] !== b[1] ? a[1] < b[1] : a[2] < b[2];
      if (!c) tieBad++;
    }
    // Where text order is not computed here, the keys before the first
    // string key must still be in order.
    let prefixBad = 0;
    const prefix = keys.slice(0, keys.findIndex((k) => k[1] === "Edm.String") + 1 || keys.length).filter((k) => k[1] !== "Edm.String");
    if (prefix.length && COLLATION !== "C") {
      for (let i = 1; i < typedGot.length; i++) if (sortRows([typedGot[i], typedGot[i - 1]], prefix)[0] === typedGot[i] && sortRows([typedGot[i - 1], typedGot[i]], prefix)[0] === typedGot[i]) prefixBad++;
    }
    const next = got.pages.filter((p) => /\$skiptoken=/.test(p.uri)).length;
    console.log(`  ${show(uri)}`);
    console.log(`    read ${got.rows.length} rows in ${got.pages.length} pages of ${oc.page} (${next} by next link); first ${keys.map((k) => k[0]).join(",")}: ${keys.map((k) => JSON.stringify(got.rows[0] && got.rows[0][k[0]])).join(",")}, last: ${keys.map((k) => JSON.stringify(got.rows.length && got.rows[got.rows.length - 1][k[0]])).join(",")}`);
    const ids = new Set(got.rows.map((e) => e[rkey]));
    const problems = [];
    if (cmp.bad) problems.push(`${cmp.bad} differences`);
    if (ids.size !== got.rows.length) problems.push(`${got.rows.length - ids.size} rows read twice`);
    if (tieBad) problems.push(`${tieBad} ties not in ${rkey} order`);
    if (prefixBad) problems.push(`${prefixBad} rows out of order by ${prefix.map((k) => k[0]).join(",")}`);
    if (got.pages.length !== Math.max(1, Math.ceil(want.length / oc.page))) problems.push(`${got.pages.length} requests for ${want.length} rows`);
    if (problems.length === 0)
      pass(`$orderby ${oc.orderBy.join(",")}${oc.filter ? " (filtered)" : ""}: ${got.rows.length} rows, each once, ${COLLATION === "C" || !byText ? "in the order computed over the export" : "the export's rows (as a set)"}, ties by ${rkey}`);
    else fail(`$orderby ${oc.orderBy.join(",")}: ${problems.join("; ")}`);
    if (!sample) sample = got.rows;
  }

  // Users, sorted by a DateTimeOffset descending, in pages of 7, against /users.
  {
    const up = sets.Users.property;
    const urows = users.body.map((row) => ({ row, t: typedRow(row, up) }));
    const keys = [["last_entry", "Edm.DateTimeOffset", true]];
    const want = sortRows(urows, keys).map((r) => r.row);
    const uri = `${ROOT}/Users${buildQuery({ orderBy: ["last_entry desc"] })}`;
    const got = await read(uri, 7, urows.length);
    const cmp = compareRows("Users by last_entry desc", got.rows, want, up, []);
    console.log(`  ${show(uri)}: ${got.rows.length} users in ${got.pages.length} pages of 7`);
    if (cmp.bad === 0 && got.rows.length === want.length) pass(`Users $orderby=last_entry desc: ${got.rows.length} users in the order computed over /users`);
    else fail(`Users $orderby=last_entry desc: ${cmp.bad} differences`);
    // $count on Users too.
    const n = await readP(`${ROOT}/Users/$count${buildQuery({ filter: { status: { ne: null } } })}`, makeClient(), md);
    const wantN = urows.filter((r) => r.t.status !== null).length;
    if (String(n) === String(wantN)) pass(`Users/$count?$filter=status ne null: ${n}`);
    else fail(`Users/$count?$filter=status ne null: ${n}, want ${wantN}`);
  }

  // By key: three entries of a sorted read, read again one by one.
  console.log("by key:");
  const picks = [sample[0], sample[Math.floor(sample.length / 2)], sample[sample.length - 1]];
  for (const e of picks) {
    const uri = `${ROOT}/GeneralReport${buildQuery({ key: e[rkey] })}`;
    const one = await readP(uri, makeClient(), md);
    const cmp = compareRows(`by key ${e[rkey]}`, [one], [Object.fromEntries(rp.map((p) => [p.name, e[p.name] === null ? "" : String(e[p.name])]))], rp, []);
    const ctx = String(one["@odata.context"] || "");
    console.log(`  ${show(uri)}: ${Object.keys(one).filter((k) => !k.includes("@")).length} properties, @odata.context ...${ctx.slice(ctx.indexOf("#"))}`);
    if (cmp.bad === 0 && one[rkey] === e[rkey] && ctx.endsWith("#GeneralReport/$entity")) pass(`GeneralReport('${e[rkey]}'): the entity the feed holds, ${cmp.values} values equal`);
    else fail(`GeneralReport('${e[rkey]}'): ${cmp.bad} differences, context ${ctx}`);
  }
  {
    const u = users.body[users.body.length - 1];
    const one = await readP(`${ROOT}/Users${buildQuery({ key: Number(u.id) })}`, makeClient(), md);
    const cmp = compareRows(`Users(${u.id})`, [one], [u], sets.Users.property, []);
    if (cmp.bad === 0) pass(`Users(${u.id}): the user /users lists, ${cmp.values} values equal`);
    else fail(`Users(${u.id}): ${cmp.bad} differences`);
  }
  for (const uri of [`${ROOT}/GeneralReport('999999999-0-0')`, `${ROOT}/Users(999999999)`]) {
    try {
      await readP(uri, makeClient(), md);
      fail(`${show(uri)}: found, want 404`);
    } catch (e) {
      const st = e.response && e.response.statusCode;
      if (st === 404) pass(`${show(uri)}: 404`);
      else fail(`${show(uri)}: ${st || e.message}, want 404`);
    }
  }
}

main()
  .catch((e) => {
    fail(`${e.message || e}${e.response ? ` (HTTP ${e.response.statusCode}: ${String(e.response.body).slice(0, 300)})` : ""}`);
  })
  .finally(() => {
    console.log(failures ? `check-odata: ${failures} check(s) FAILED` : "check-odata: all checks passed");
    process.exitCode = failures ? 1 : 0;
  });
