// Replays the steps of scripts/check-powerquery (read from stdin) against
// a running informe and checks each answer; see that script.
//
// Exit status: 0 when every step passed, 1 otherwise.
"use strict";

const http = require("http");
const https = require("https");

const BASE = (process.env.BASE || "").replace(/\/+$/, "");
const TOKEN = process.env.TOKEN || "";
const ONLY = process.env.ONLY || "";
const TIMEOUT = 1000 * parseInt(process.env.TIMEOUT || "120", 10);
const PAGE_SIZE = process.env.PAGE_SIZE || ""; // Prefer: odata.maxpagesize, to make next links on a small report
if (!BASE || !TOKEN) {
  console.error("set BASE and TOKEN");
  process.exit(2);
}

// The headers Power Query's OData.Feed sends: Basic credentials (informe's
// user "token"), OData JSON with minimal metadata first, OData 4.0.
const PQ_HEADERS = {
  Authorization: "Basic " + Buffer.from("token:" + TOKEN).toString("base64"),
  Accept: "application/json;odata.metadata=minimal;q=1.0,application/json;odata=minimalmetadata;q=0.9,application/atomsvc+xml;q=0.8,application/atom+xml;q=0.8,application/xml;q=0.7,text/plain;q=0.7",
  "OData-MaxVersion": "4.0",
  "OData-Version": "4.0",
};
if (PAGE_SIZE) PQ_HEADERS.Prefer = `odata.maxpagesize=${PAGE_SIZE}`;

function get(url, headers) {
  const u = new URL(url);
  const mod = u.protocol === "https:" ? https : http;
  return new Promise((resolve, reject) => {
    const req = mod.get(u, { headers }, (res) => {
      const chunks = [];
      res.on("data", (c) => chunks.push(c));
      res.on("end", () => resolve({ status: res.statusCode, headers: res.headers, body: Buffer.concat(chunks).toString("utf8") }));
      res.on("error", reject);
    });
    req.setTimeout(TIMEOUT, () => req.destroy(new Error(`no complete response in ${TIMEOUT / 1000} s`)));
    req.on("error", reject);
  });
}

async function getJSON(path) {
  const r = await get(BASE + path, { Authorization: "Bearer " + TOKEN, Accept: "application/json" });
  if (r.status !== 200) throw new Error(`GET ${path}: ${r.status} ${r.body.slice(0, 300)}`);
  return JSON.parse(r.body);
}

// parseSteps reads the table: records separated by blank lines, each line
// a field name and its value.
function parseSteps(text) {
  const steps = [];
  for (const block of text.split(/\n\s*\n/)) {
    const step = {};
    for (const line of block.split("\n")) {
      const m = /^(\S+)\s+(.*)$/.exec(line.trim());
      if (m) step[m[1]] = m[2];
    }
    if (step.step && step.GET) steps.push(step);
  }
  return steps;
}

// Helpers the conditions of the table may use.
const num = (x) => Number(x);
// utc returns an instant, the export's "2024-03-01 12:00:00[.ffffff][+00]"
// or an OData literal with Z or an offset, as "YYYY-MM-DDTHH:MM:SS.fffffffff"
// in UTC: text that compares as the instants do, to the nanosecond.
function utc(x) {
  const m = /^(\d{4}-\d{2}-\d{2})[T ](\d{2}:\d{2}:\d{2})(?:\.(\d{1,9}))?(Z|[+-]\d{2}(?::?\d{2})?)?$/.exec(x);
  if (!m) throw new Error(`not a date-time: ${x}`);
  let off = m[4] && m[4] !== "Z" ? m[4] : "+00:00";
  if (off.length === 3) off += ":00";
  if (!off.includes(":")) off = off.slice(0, 3) + ":" + off.slice(3);
  const ms = Date.parse(`${m[1]}T${m[2]}${off}`);
  return new Date(ms).toISOString().slice(0, 19) + "." + (m[3] || "").padEnd(9, "0");
}
const year = (x) => Number(utc(x.length === 10 ? x + "T00:00:00Z" : x).slice(0, 4));
const month = (x) => Number(utc(x.length === 10 ? x + "T00:00:00Z" : x).slice(5, 7));
const day = (x) => Number(utc(x.length === 10 ? x + "T00:00:00Z" : x).slice(8, 10));
const hour = (x) => Number(utc(x).slice(11, 13));

// condition compiles a condition of the table over a row r.
function condition(src) {
  const f = new Function("r", "num", "utc", "year", "month", "day", "hour", `return (${src});`);
  return (r) => f(r, num, utc, year, month, day, hour) === true;
}

// nulled returns row with "" as null, as the feed shows empty values.
function nulled(row) {
  const o = {};
  for (const [k, v] of Object.entries(row)) o[k] = v === "" ? null : v;
  return o;
}

// compare orders two feed values of one property, nulls first, numbers as
// numbers, date-times as instants, text in byte order of its UTF-8 (the
// demo database's "C" collation).
function compare(a, b) {
  if (a === null || b === null) return a === b ? 0 : a === null ? -1 : 1;
  if (typeof a === "number" && typeof b === "number") return a - b;
  const s = String(a);
  const t = String(b);
  if (/^\d{4}-\d{2}-\d{2}T/.test(s) && /^\d{4}-\d{2}-\d{2}T/.test(t)) {
    const x = utc(s);
    const y = utc(t);
    return x < y ? -1 : x > y ? 1 : 0;
  }
  return Buffer.compare(Buffer.from(s, "utf8"), Buffer.from(t, "utf8"));
}

let failures = 0;

async function replay(step, exportRows, userRows) {
  const url = BASE + step.GET;
  const want = parseInt(step.status || "200", 10);
  const problems = [];
  const notes = [];
  const first = await get(url, PQ_HEADERS);
  if (first.status !== want) problems.push(`status ${first.status}, want ${want}: ${first.body.slice(0, 200)}`);
  const ct = String(first.headers["content-type"] || "");
  if (first.headers["odata-version"] !== "4.0") problems.push(`OData-Version ${first.headers["odata-version"]}`);
  if (step.has && !first.body.includes(step.has)) problems.push(`the body lacks ${step.has}`);
  notes.push(`${first.status} ${ct.split(";")[0]}`);

  if (want >= 400 && first.status === want) {
    let msg = "";
    try {
      msg = JSON.parse(first.body).error.message;
    } catch (e) {
      problems.push("the error is not OData's JSON error");
    }
    notes.push(`"${msg.slice(0, 100)}${msg.length > 100 ? "..." : ""}"`);
  }

  const reference = step.users ? userRows : exportRows;
  const cond = step.rows || step.users || step.count;
  const matching = cond ? reference.filter(condition(cond)).length : null;
  const top = step.top ? parseInt(step.top, 10) : Infinity;

  if (first.status === 200 && /\/\$count(\?|$)/.test(new URL(url).pathname + "?")) {
    // /$count: a number as text/plain.
    if (!ct.startsWith("text/plain")) problems.push(`Content-Type ${ct}`);
    if (!/^\d+$/.test(first.body)) problems.push(`body ${JSON.stringify(first.body.slice(0, 50))} is no count`);
    notes.push(`count ${first.body}`);
    if (matching !== null && first.body !== String(matching)) problems.push(`count ${first.body}, the export filtered here: ${matching}`);
  } else if (first.status === 200 && ct.startsWith("application/json") && (step.rows || step.users)) {
    // A feed: follow every next link.
    let page = JSON.parse(first.body);
    const rows = [];
    let pages = 1;
    for (;;) {
      if (typeof page["@odata.context"] !== "string" || !Array.isArray(page.value)) {
        problems.push("a page without @odata.context and value");
        break;
      }
      rows.push(...page.value);
      const next = page["@odata.nextLink"];
      if (!next) break;
      const r = await get(next, PQ_HEADERS);
      pages++;
      if (r.status !== 200) {
        problems.push(`next link ${next}: status ${r.status}`);
        break;
      }
      page = JSON.parse(r.body);
    }
    notes.push(`${rows.length} rows in ${pages} page(s)`);
    if ("@odata.count" in JSON.parse(first.body)) notes.push(`@odata.count ${JSON.parse(first.body)["@odata.count"]}`);
    if (step.rows === "false" || step.users === "false") {
      if (rows.length) problems.push(`${rows.length} rows, want none`);
      const c = JSON.parse(first.body)["@odata.count"];
      if (c !== undefined && c !== exportRows.length) problems.push(`@odata.count ${c}, the export has ${exportRows.length}`);
    } else {
      const expect = Math.min(top, matching);
      notes.push(`the export filtered here: ${matching}${top < Infinity ? `, top ${top}` : ""}`);
      if (rows.length !== expect) problems.push(`${rows.length} rows, want ${expect}`);
      if (step.GET.includes("$skip=") && rows.length && !step.users) {
        const skip = parseInt(/\$skip=(\d+)/.exec(step.GET)[1], 10);
        const want0 = exportRows[skip];
        if (want0 && String(rows[0].contract_id) !== String(want0.contract_id)) problems.push(`first row of contract ${rows[0].contract_id}, want ${want0.contract_id} (row ${skip} of the export)`);
      }
    }
    if (step.select) {
      const sel = step.select.split(",");
      const key = step.users ? [] : ["row_id"];
      const bad = rows.filter((e) => JSON.stringify(Object.keys(e).filter((k) => !k.includes("@"))) !== JSON.stringify([...key, ...sel]));
      if (bad.length) problems.push(`${bad.length} entities without exactly ${[...key, ...sel].join(",")}: ${Object.keys(bad[0]).join(",")}`);
    }
    if (step.order) {
      const keys = step.order.split(",").map((k) => k.trim().split(/\s+/));
      let out = 0;
      for (let i = 1; i < rows.length; i++) {
        for (const [name, dir] of keys) {
          const c = compare(rows[i - 1][name], rows[i][name]) * (dir === "desc" ? -1 : 1);
          if (c < 0) break;
          if (c > 0) {
            out++;
            break;
          }
        }
      }
      if (out) problems.push(`${out} rows out of order by ${step.order}`);
      else notes.push(`in order by ${step.order}`);
      if (rows.length) notes.push(`first ${keys.map(([n]) => JSON.stringify(rows[0][n])).join(",")}`);
    }
  }

  console.log(`${step.step}\n  GET ${step.GET}\n  -> ${notes.join("; ")}`);
  if (problems.length) {
    failures++;
    console.log(`FAIL ${step.step}: ${problems.join("; ")}`);
  } else console.log(`PASS ${step.step}`);
}

async function main() {
  const text = require("fs").readFileSync(0, "utf8");
  const steps = parseSteps(text).filter((s) => !ONLY || s.step.includes(ONLY));
  const exportRows = (await getJSON("/api/general-report/export?format=json")).map(nulled);
  const userRows = (await getJSON("/users")).map(nulled);
  console.log(`check-powerquery: ${steps.length} steps against ${BASE}${PAGE_SIZE ? ` (Prefer: odata.maxpagesize=${PAGE_SIZE})` : ""}; the export has ${exportRows.length} rows, /users ${userRows.length} users\n`);
  for (const step of steps) {
    try {
      await replay(step, exportRows, userRows);
    } catch (e) {
      failures++;
      console.log(`FAIL ${step.step}: ${e.message}`);
    }
  }
  console.log(failures ? `\ncheck-powerquery: ${failures} step(s) FAILED` : `\ncheck-powerquery: all ${steps.length} steps passed`);
  process.exitCode = failures ? 1 : 0;
}

main().catch((e) => {
  console.log(`FAIL ${e.message}`);
  process.exitCode = 1;
});
