// Reads a running informe's OData model with @odata/client, an OData v4
// client that is not informe's, and checks that the related entity sets
// agree with each other and with the Contracts export; see
// scripts/check-odata-model.
//
// The client builds every request ($select, $expand with a nested
// $select, $top, $skip, $count, keys), sends it with Basic credentials and
// parses the response; this script only pages with $top/$skip (the client
// follows no next links) and compares.
//
// Exit status: 0 when everything matched, 1 on any mismatch or failure.
"use strict";

const { OData } = require("@odata/client");

const BASE = (process.env.BASE || "").replace(/\/+$/, "");
const TOKEN = process.env.TOKEN || "";
const PAGE = parseInt(process.env.PAGE_SIZE || "500", 10);
if (!BASE || !TOKEN) {
  console.error("set BASE and TOKEN");
  process.exit(2);
}

let failures = 0;
function check(ok, msg) {
  if (ok) {
    console.log("PASS " + msg);
  } else {
    failures++;
    console.log("FAIL " + msg);
  }
}

const client = OData.New4({
  serviceEndpoint: BASE + "/odata/",
  credential: { username: "token", password: TOKEN },
  processCsrfToken: false,
});

// readAll reads every entity of set with the options opts sets, PAGE at a
// time through $top and $skip, and checks the count against $count.
async function readAll(set, opts) {
  const es = client.getEntitySet(set);
  const total = await es.count();
  const all = [];
  for (let skip = 0; skip < total; skip += PAGE) {
    const p = opts(client.newParam()).top(PAGE);
    if (skip > 0) p.skip(skip);
    const page = await es.query(p);
    if (!Array.isArray(page)) throw new Error(set + ": no value array at $skip=" + skip + ": " + JSON.stringify(page).slice(0, 300));
    all.push(...page);
  }
  check(all.length === total, `${set}: read ${all.length} entities with $expand, $count says ${total}`);
  return all;
}

// cents turns a decimal as the feed writes it (a JSON number with at most
// two decimals, the column's scale) into integer cents, so that sums are
// exact.
function cents(v) {
  if (v === null || v === undefined) return 0n;
  const [i, f = ""] = String(v).split(".");
  return BigInt(i) * 100n + BigInt((f + "00").slice(0, 2)) * (i.startsWith("-") ? -1n : 1n);
}
function money(c) {
  const s = (c < 0n ? -c : c).toString().padStart(3, "0");
  return (c < 0n ? "-" : "") + s.slice(0, -2) + "." + s.slice(-2);
}

// exportCSV reads the Contracts export (cost by service there).
async function exportRows(path) {
  const res = await fetch(BASE + path, { headers: { Authorization: "Bearer " + TOKEN } });
  if (!res.ok) throw new Error(path + ": " + res.status + " " + (await res.text()).slice(0, 300));
  return (await res.text()).split("\n").filter((l) => l !== "").map((l) => JSON.parse(l));
}

async function main() {
  // 1. Contract -> Client and Service (to-one), read by the client with
  // $expand and a nested $select.
  const contracts = await readAll("Contracts", (p) =>
    p.select(["contract_id", "client_id", "service_id", "costo_servicio", "tasks", "processes"])
      .expand(["Client($select=client_rut,client_region)", "Service($select=service,costo_servicio)"]));
  let bad = 0;
  const byService = new Map(); // service name -> cents, from the expanded Service
  for (const c of contracts) {
    if (!c.Client || c.Client.client_id !== c.client_id || typeof c.Client.client_rut !== "string") bad++;
    if (c.service_id === null ? c.Service !== null : !c.Service || c.Service.service_id !== c.service_id ||
      cents(c.Service.costo_servicio) !== cents(c.costo_servicio)) bad++;
    if (c.Service) byService.set(c.Service.service, (byService.get(c.Service.service) || 0n) + cents(c.Service.costo_servicio));
  }
  check(bad === 0, `Contracts?$expand=Client,Service: every contract's Client and Service are its own (${bad} wrong)`);

  // 2. Service -> Contracts (to-many), the other way.
  const services = await readAll("Services", (p) =>
    p.select(["service_id", "service", "costo_servicio", "contracts"]).expand("Contracts($select=client_id)"));
  const contractsOf = new Map();
  for (const c of contracts) contractsOf.set(c.service_id, (contractsOf.get(c.service_id) || 0) + 1);
  bad = 0;
  const byService2 = new Map();
  for (const s of services) {
    const n = contractsOf.get(s.service_id) || 0;
    if (!Array.isArray(s.Contracts) || s.Contracts.length !== n || s.contracts !== n) bad++;
    const seen = new Set(s.Contracts.map((c) => c.contract_id));
    for (const c of contracts) if (c.service_id === s.service_id && !seen.has(c.contract_id)) bad++;
    if (n > 0) byService2.set(s.service, cents(s.costo_servicio) * BigInt(n));
  }
  check(bad === 0, `Services?$expand=Contracts: each service lists exactly the contracts that point to it (${bad} wrong)`);
  const same = (a, b) => a.size === b.size && [...a].every(([k, v]) => b.get(k) === v);
  check(same(byService, byService2), "cost by service: the same from Contracts->Service as from Services->Contracts");

  // 3. The Contracts export (another door, another format) sums the same.
  const rows = await exportRows("/api/contracts/export?format=ndjson&columns=service,costo_servicio");
  const byService3 = new Map();
  for (const r of rows) if (r.costo_servicio !== null) byService3.set(r.service, (byService3.get(r.service) || 0n) + cents(r.costo_servicio));
  check(same(byService, byService3), "cost by service: the same from the OData model as from /api/contracts/export");
  let total = 0n;
  for (const v of byService.values()) total += v;
  console.log(`cost of all ${contracts.length} contracts: ${money(total)}; by service:`);
  for (const [k, v] of [...byService].sort((a, b) => (b[1] > a[1] ? 1 : b[1] < a[1] ? -1 : 0))) console.log(`  ${money(v).padStart(15)}  ${k}`);

  // 4. One contract by key, with its processes, and a process with its
  // contract and tasks: task counts agree both ways.
  const withTasks = contracts.find((c) => c.processes > 1 && c.tasks > 2);
  const one = await client.getEntitySet("Contracts").retrieve(withTasks.contract_id,
    client.newParam().select(["contract_id", "tasks"]).expand(["Processes($select=tasks)", "Tasks($select=process_id)"]));
  const sum = (one.Processes || []).reduce((a, p) => a + p.tasks, 0);
  check(sum === one.tasks && one.Tasks.length === one.tasks,
    `Contracts(${one.contract_id})?$expand=Processes,Tasks: ${one.Processes.length} processes with ${sum} tasks, ${one.Tasks.length} tasks, tasks=${one.tasks}`);
  const proc = one.Processes[0];
  const p = await client.getEntitySet("Processes").retrieve(proc.process_id,
    client.newParam().expand(["Contract($select=code_contract)", "Tasks($select=task_status)"]));
  check(p.Contract && p.Contract.contract_id === one.contract_id && p.Tasks.length === p.tasks &&
    p.tasks_pending === p.Tasks.filter((t) => t.task_status === "Pendiente").length,
    `Processes(${p.process_id})?$expand=Contract,Tasks: its contract ${p.Contract && p.Contract.code_contract}, ${p.Tasks.length} tasks, ${p.tasks_pending} pending`);

  console.log(failures === 0 ? "all checks passed" : failures + " check(s) failed");
  process.exit(failures === 0 ? 0 : 1);
}

main().catch((e) => {
  console.log("FAIL " + (e && e.stack ? e.stack : e));
  process.exit(1);
});
