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

const BASE = (process.env.BASE || "").replace(/\/+$/, "");
const TOKEN = process.env.TOKEN || "";
const PAGE = parseInt(process.env.PAGE_SIZE || "2500", 10); // Prefer: odata.maxpagesize of the full reads
const MAX_SHOWN = 20; // mismatches printed per comparison
const TIMEOUT = 1000 * parseInt(process.env.TIMEOUT || "120", 10); // per request: a response that never ends is a failure, not a hang
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
}

main()
  .catch((e) => {
    fail(`${e.message || e}${e.response ? ` (HTTP ${e.response.statusCode}: ${String(e.response.body).slice(0, 300)})` : ""}`);
  })
  .finally(() => {
    console.log(failures ? `check-odata: ${failures} check(s) FAILED` : "check-odata: all checks passed");
    process.exitCode = failures ? 1 : 0;
  });
