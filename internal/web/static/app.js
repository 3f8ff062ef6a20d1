// informe's export page: sign in with a token, choose rows and columns, see
// the count and the first rows, download, and copy a connection. Values from
// the database are only ever set as textContent, never as HTML.
"use strict";

(function () {
  const T = {
    es: {
      skip: "Ir al contenido", signOut: "Salir", switchTo: "English", switchLang: "en",
      signInTitle: "Ingresar con un token",
      signInLead: "Pegue el token que le entregó quien administra informe. Se guarda solo mientras el navegador esté abierto y ningún script de la página puede leerlo.",
      tokenLabel: "Token", tokenHelp: "Empieza con informe_.", signIn: "Ingresar",
      builderTitle: "Exportar", datasetTitle: "Datos", columnsTitle: "Columnas", search: "Buscar",
      all: "Todas", none: "Ninguna", filtersTitle: "Filtros", formatTitle: "Formato", format: "Formato",
      delimiter: "Separador", comma: "coma", semicolon: "punto y coma", tab: "tabulador",
      header: "Fila de encabezado", bom: "BOM UTF-8 (para Excel en Windows)",
      resultTitle: "Resultado", download: "Descargar", previewCaption: "Primeras 20 filas, tal como quedarán en el archivo",
      connectTitle: "Conectar",
      connectLead: "Textos listos para pegar, con la elección de arriba. Se actualizan al cambiarla.",
      reveal: "Mostrar token", hide: "Ocultar token", copy: "Copiar", copied: "Copiado",
      chosenAll: "Ninguna elegida: se exportan las {n} columnas.", chosen: "{k} de {n} columnas elegidas.",
      count: "{n} filas coinciden.", count1: "1 fila coincide.", counting: "Contando…",
      signedInAs: "Token: {name}", sessionEnded: "La sesión terminó. Ingrese de nuevo.",
      contract_id: "Número de contrato", code_contract: "Código de contrato", client_id: "Número de cliente", rut: "RUT del cliente",
      rutHint: "12.345.678-5, 12345678-5 o 123456785",
      secret: "Esta URL lleva su token: es un secreto. No la comparta ni la publique; si se filtra, pida que revoquen el token.",
      noToken: "SU_TOKEN",
      noTokenNote: "Para incluir el token en estos textos, ingrese de nuevo en esta página (el token no se guarda donde un script pueda leerlo).",
      importdata: "Google Sheets (IMPORTDATA)",
      importdataHow: "Péguelo en una celda. Google lo lee desde sus servidores: informe debe tener una dirección HTTPS pública.",
      web: "Excel: Desde la Web",
      webHow: "Datos → Obtener datos → Desde otras fuentes → Desde la Web; pegue la URL; en Acceso a contenido web elija Básica, usuario token y como contraseña su token, nivel la dirección base.",
      m: "Excel / Power BI: código M de Power Query",
      mHow: "Datos → Obtener datos → Consulta en blanco → Editor avanzado; pegue el código; credencial Básica (usuario token, contraseña su token).",
      odata: "Excel / Power BI: fuente OData",
      odataHow: "Obtener datos → Desde fuente OData; pegue la URL; credencial Básica (usuario token, contraseña su token).",
      curl: "curl, para una tarea nocturna",
      curlHow: "Con el token en la variable de entorno INFORME_TOKEN; el archivo se reemplaza solo si llegó completo.",
      cli: "informe export (con acceso a la base de datos)",
      cliHow: "En el servidor, con DATABASE_URL definida; escribe el archivo de una sola vez.",
      libre: "LibreOffice Calc",
      libreHow: "Hoja → Vincular a datos externos; pegue la URL y elija UTF-8, separado por coma.",
    },
    en: {
      skip: "Skip to content", signOut: "Sign out", switchTo: "Español", switchLang: "es",
      signInTitle: "Sign in with a token",
      signInLead: "Paste the token you were given by whoever runs informe. It is kept only while the browser is open, and no script of the page can read it.",
      tokenLabel: "Token", tokenHelp: "It starts with informe_.", signIn: "Sign in",
      builderTitle: "Export", datasetTitle: "Data", columnsTitle: "Columns", search: "Search",
      all: "All", none: "None", filtersTitle: "Filters", formatTitle: "Format", format: "Format",
      delimiter: "Delimiter", comma: "comma", semicolon: "semicolon", tab: "tab",
      header: "Header row", bom: "UTF-8 BOM (for Excel on Windows)",
      resultTitle: "Result", download: "Download", previewCaption: "First 20 rows, as the file will hold them",
      connectTitle: "Connect",
      connectLead: "Ready-to-paste texts for the choice above. They follow it as it changes.",
      reveal: "Show token", hide: "Hide token", copy: "Copy", copied: "Copied",
      chosenAll: "None chosen: all {n} columns are exported.", chosen: "{k} of {n} columns chosen.",
      count: "{n} rows match.", count1: "1 row matches.", counting: "Counting…",
      signedInAs: "Token: {name}", sessionEnded: "The session has ended. Sign in again.",
      contract_id: "Contract id", code_contract: "Contract code", client_id: "Client id", rut: "Client's RUT",
      rutHint: "12.345.678-5, 12345678-5 or 123456785",
      secret: "This URL carries your token: it is a secret. Do not share or publish it; if it leaks, have the token revoked.",
      noToken: "YOUR_TOKEN",
      noTokenNote: "To put the token in these texts, sign in again on this page (the token is not kept where a script can read it).",
      importdata: "Google Sheets (IMPORTDATA)",
      importdataHow: "Paste it into a cell. Google fetches it from its own servers: informe needs a public HTTPS address.",
      web: "Excel: From Web",
      webHow: "Data → Get Data → From Other Sources → From Web; paste the URL; in Access Web content pick Basic, user name token and your token as the password, level the base address.",
      m: "Excel / Power BI: Power Query M code",
      mHow: "Data → Get Data → Blank Query → Advanced Editor; paste the code; Basic credential (user name token, password your token).",
      odata: "Excel / Power BI: OData feed",
      odataHow: "Get Data → OData feed; paste the URL; Basic credential (user name token, password your token).",
      curl: "curl, for a nightly job",
      curlHow: "With the token in the INFORME_TOKEN environment variable; the file is replaced only when it arrived whole.",
      cli: "informe export (with database access)",
      cliHow: "On the server, with DATABASE_URL set; writes the file in one go.",
      libre: "LibreOffice Calc",
      libreHow: "Sheet → Link to External Data; paste the URL and pick UTF-8, separated by comma.",
    },
  };
  const FILTERS = ["contract_id", "code_contract", "client_id", "rut"];
  const $ = (id) => document.getElementById(id);
  const el = (tag, props, ...kids) => {
    const e = document.createElement(tag);
    Object.assign(e, props || {});
    for (const k of kids) e.append(k);
    return e;
  };

  let lang = document.documentElement.lang === "en" ? "en" : "es";
  let catalog = null;
  let principal = null;
  let token = ""; // only when signed in on this page load, never stored
  let revealed = false;
  const state = { ds: null, chosen: new Set(), filters: {}, format: "csv", delimiter: "comma", header: true, bom: false };
  let pending = null; // AbortController of the count and preview in flight
  let timer = 0;

  const t = (key, vars) => {
    let s = T[lang][key] || key;
    for (const [k, v] of Object.entries(vars || {})) s = s.replace("{" + k + "}", v);
    return s;
  };
  const words = (text) => text[lang] || text.es;

  function translate() {
    document.documentElement.lang = lang;
    for (const e of document.querySelectorAll("[data-t]")) e.textContent = t(e.dataset.t);
    $("lang").textContent = t("switchTo");
    $("lang").lang = t("switchLang");
    if (principal) $("who").textContent = t("signedInAs", { name: principal.name });
    if (catalog && principal) renderBuilder();
  }

  // --- signing in and out ---

  function showSignIn(message) {
    principal = null;
    token = "";
    $("builder").hidden = true;
    $("sign-out").hidden = true;
    $("who").textContent = "";
    $("sign-in").hidden = false;
    $("sign-in-error").textContent = message || "";
    $("token").setAttribute("aria-invalid", message ? "true" : "false");
  }

  function showBuilder(p) {
    principal = p;
    const allowed = catalog.datasets.filter((d) => p.scopes.includes(d.scope));
    if (!state.ds || !allowed.some((d) => d.name === state.ds)) {
      state.ds = allowed[0].name;
      state.chosen.clear();
    }
    $("sign-in").hidden = true;
    $("builder").hidden = false;
    $("sign-out").hidden = false;
    $("who").textContent = t("signedInAs", { name: p.name });
    renderBuilder();
  }

  async function signIn(ev) {
    ev.preventDefault();
    const value = $("token").value.trim();
    const res = await fetch("/web/sign-in", {
      method: "POST", headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ token: value, lang: lang }),
    });
    const body = await res.json().catch(() => ({}));
    if (!res.ok) {
      showSignIn(body.message || res.statusText);
      $("token").focus();
      return;
    }
    token = value;
    $("token").value = "";
    showBuilder(body);
    $("builder-title").focus();
  }

  async function signOut() {
    await fetch("/web/sign-out", { method: "POST" });
    revealed = false;
    showSignIn("");
    $("token").focus();
  }

  // --- the builder ---

  const dataset = () => catalog.datasets.find((d) => d.name === state.ds);
  const allColumns = () => dataset().groups.flatMap((g) => g.columns.map((c) => c.name));
  // chosenColumns are the chosen columns in the column list's order (the
  // export's), or [] for all.
  const chosenColumns = () => allColumns().filter((n) => state.chosen.has(n));

  function renderBuilder() {
    const allowed = catalog.datasets.filter((d) => principal.scopes.includes(d.scope));
    const box = $("datasets");
    box.replaceChildren(...allowed.map((d) => {
      const id = "ds-" + d.name;
      const input = el("input", { type: "radio", name: "dataset", id: id, value: d.name, checked: d.name === state.ds });
      input.addEventListener("change", () => { state.ds = d.name; state.chosen.clear(); renderBuilder(); });
      return el("span", { className: "choice" }, input, el("label", { htmlFor: id, textContent: words(d.title) }));
    }));
    renderGroups();
    renderFilters();
    $("filters-card").hidden = !dataset().filters;
    changed(true);
  }

  function renderGroups() {
    const q = $("search").value.trim().toLowerCase();
    const groups = dataset().groups.map((g) => {
      const rows = g.columns.filter((c) => !q || c.name.includes(q) || words(c.about).toLowerCase().includes(q))
        .map((c) => {
          const id = "col-" + c.name;
          const box = el("input", { type: "checkbox", id: id, value: c.name, checked: state.chosen.has(c.name) });
          box.addEventListener("change", () => {
            if (box.checked) state.chosen.add(c.name); else state.chosen.delete(c.name);
            changed(true);
          });
          const label = el("label", { htmlFor: id },
            el("code", { textContent: c.name }), " ",
            el("span", { className: "kind", textContent: c.kind }), " ",
            el("span", { className: "about", textContent: words(c.about) }));
          return el("li", {}, box, label);
        });
      if (!rows.length) return null;
      return el("fieldset", {}, el("legend", { textContent: words(g.title) }), el("ul", {}, ...rows));
    }).filter(Boolean);
    $("groups").replaceChildren(...groups);
  }

  function renderFilters() {
    $("filters").replaceChildren(...FILTERS.map((name) => {
      const id = "f-" + name;
      const input = el("input", { id: id, name: name, value: state.filters[name] || "", autocomplete: "off" });
      if (name.endsWith("_id")) input.inputMode = "numeric";
      const err = el("p", { id: id + "-error", className: "error" });
      const kids = [el("label", { htmlFor: id, textContent: t(name) }), input];
      let described = err.id;
      if (name === "rut") {
        const hint = el("p", { id: id + "-hint", className: "hint", textContent: t("rutHint") });
        kids.push(hint);
        described = hint.id + " " + err.id;
      }
      input.setAttribute("aria-describedby", described);
      input.addEventListener("input", () => {
        const v = input.value.trim();
        if (v) state.filters[name] = v; else delete state.filters[name];
        changed();
      });
      kids.push(err);
      return el("div", { className: "field" }, ...kids);
    }));
  }

  // params returns the query parameters of the current choice, for the
  // paged path (page) or the export.
  function params(opts) {
    const p = new URLSearchParams();
    p.set("format", opts.format || state.format);
    const cols = chosenColumns();
    if (cols.length) p.set("columns", cols.join(","));
    if (dataset().filters) for (const f of FILTERS) if (state.filters[f]) p.set(f, state.filters[f]);
    if ((opts.format || state.format) === "csv" && !opts.plainCSV) {
      if (state.delimiter !== "comma") p.set("delimiter", state.delimiter);
      if (!state.header) p.set("header", "false");
      if (state.bom) p.set("bom", "true");
    }
    return p;
  }

  const query = (p) => p.toString().replace(/%2C/g, ",");
  const exportPath = (opts) => dataset().export + "?" + query(params(opts || {}));

  let changedAt = 0; // when the choice last changed, for the preview's timing

  // changed follows a change of the choice: the texts at once, the count and
  // preview at once (now) or after a pause in typing.
  function changed(now) {
    changedAt = performance.now();
    const cols = chosenColumns();
    const n = allColumns().length;
    $("chosen").textContent = cols.length ? t("chosen", { k: cols.length, n: n }) : t("chosenAll", { n: n });
    for (const e of document.querySelectorAll(".csv-only")) e.hidden = state.format !== "csv";
    $("download").href = exportPath();
    renderConnect();
    clearTimeout(timer);
    timer = setTimeout(refresh, now ? 0 : 150);
  }

  // refresh asks informe for the count (HEAD, X-Total-Count) and the first
  // 20 rows (NDJSON, read line by line), as the export would give them.
  async function refresh() {
    if (pending) pending.abort();
    const ctl = new AbortController();
    pending = ctl;
    const d = dataset();
    $("count").textContent = t("counting");
    document.body.dataset.loading = "true";
    for (const f of FILTERS) {
      const e = $("f-" + f + "-error");
      if (e) { e.textContent = ""; $("f-" + f).removeAttribute("aria-invalid"); }
    }
    $("query-error").textContent = "";
    try {
      const pp = params({ format: "ndjson" });
      if (d.filters) pp.set("result_per_page", "20");
      const [head, rows] = await Promise.all([
        fetch(d.export + "?" + query(params({ format: "csv", plainCSV: true })), { method: "HEAD", signal: ctl.signal }),
        firstRows(d.path + "?" + query(pp), 20, ctl.signal),
      ]);
      if (!head.ok && rows.ok) throw { status: head.status, message: head.statusText };
      const total = head.headers.get("X-Total-Count");
      $("count").textContent = total === "1" ? t("count1") : t("count", { n: Number(total).toLocaleString(lang === "es" ? "es-CL" : "en-US") });
      $("count").dataset.total = total;
      renderPreview(rows.rows);
      performance.measure("informe-preview", { start: changedAt });
    } catch (e) {
      if (e.name === "AbortError") return;
      if (e.status === 401) { showSignIn(t("sessionEnded")); return; }
      $("count").textContent = "";
      delete $("count").dataset.total;
      renderPreview([]);
      const msg = e.message || String(e);
      const f = FILTERS.find((f) => msg.startsWith(f + " ") || msg.toLowerCase().startsWith(f + ":"));
      if (f && $("f-" + f)) {
        $("f-" + f + "-error").textContent = msg;
        $("f-" + f).setAttribute("aria-invalid", "true");
      } else {
        $("query-error").textContent = msg;
      }
    } finally {
      if (pending === ctl) { pending = null; document.body.dataset.loading = "false"; }
    }
  }

  async function firstRows(url, n, signal) {
    const res = await fetch(url, { signal: signal });
    if (!res.ok) {
      const body = await res.json().catch(() => ({}));
      throw { status: res.status, message: body.message || res.statusText };
    }
    const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
    const rows = [];
    let buf = "";
    while (rows.length < n) {
      const { value, done } = await reader.read();
      if (value) buf += value;
      let i;
      while (rows.length < n && (i = buf.indexOf("\n")) >= 0) {
        rows.push(JSON.parse(buf.slice(0, i)));
        buf = buf.slice(i + 1);
      }
      if (done) break;
    }
    reader.cancel().catch(() => {});
    return { ok: true, rows: rows };
  }

  function renderPreview(rows) {
    const cols = chosenColumns().length ? chosenColumns() : allColumns();
    const table = $("preview");
    table.tHead.replaceChildren(el("tr", {}, ...cols.map((c) => el("th", { scope: "col", textContent: c }))));
    table.tBodies[0].replaceChildren(...rows.map((r) =>
      el("tr", {}, ...cols.map((c) => el("td", { textContent: r[c] === null || r[c] === undefined ? "" : String(r[c]) })))));
  }

  // --- connect ---

  function renderConnect() {
    const d = dataset();
    const base = location.origin;
    const tok = revealed && token ? token : token ? "informe_" + "•".repeat(12) : t("noToken");
    const real = token || t("noToken");
    const fmt = state.format === "xlsx" ? "xlsx" : "csv";
    const url = (f, tk) => base + exportPath({ format: f, plainCSV: f === "csv" && tk !== undefined }) + (tk !== undefined ? "&access_token=" + tk : "");
    const delim = { comma: ",", semicolon: ";", tab: "#(tab)" }[state.delimiter];
    const qrec = [...params({ format: fmt })].map(([k, v]) => k + ' = "' + v + '"').join(", ");
    const rel = d.export.slice(1);
    const m = fmt === "xlsx"
      ? 'let\n    Source = Excel.Workbook(Web.Contents("' + base + '", [\n        RelativePath = "' + rel + '",\n        Query = [' + qrec + ']\n    ]), true),\n    Data = Source{[Item = "' + (d.name === "report" ? "general-report" : "users") + '", Kind = "Sheet"]}[Data]\nin\n    Data'
      : 'let\n    Source = Web.Contents("' + base + '", [\n        RelativePath = "' + rel + '",\n        Query = [' + qrec + ']\n    ]),\n    Csv = Csv.Document(Source, [Delimiter = "' + delim + '", Encoding = 65001, QuoteStyle = QuoteStyle.Csv]),\n    Data = ' + (state.header ? "Table.PromoteHeaders(Csv, [PromoteAllScalars = true])" : "Csv") + '\nin\n    Data';
    const od = new URLSearchParams();
    const cols = chosenColumns();
    if (cols.length) od.set("$select", cols.join(","));
    if (d.filters) {
      const conds = [];
      for (const f of FILTERS) {
        const v = state.filters[f];
        if (!v) continue;
        const prop = f === "rut" ? "client_rut" : f;
        conds.push(prop + " eq " + (f.endsWith("_id") ? v : "'" + v.replace(/'/g, "''") + "'"));
      }
      if (conds.length) od.set("$filter", conds.join(" and "));
    }
    const odq = od.toString().replace(/%24/g, "$").replace(/%2C/g, ",");
    const file = (d.name === "report" ? "general-report" : "users") + "." + (state.format === "csv" && state.delimiter === "tab" ? "tsv" : state.format);
    const curl = "curl --fail --compressed -sS -u \"token:$INFORME_TOKEN\" -o " + file + ".tmp \\\n  '" + base + exportPath() + "' \\\n  && mv " + file + ".tmp " + file;
    const items = [
      { id: "importdata", text: '=IMPORTDATA("' + url("csv", tok) + '")', copy: '=IMPORTDATA("' + url("csv", real) + '")', secret: true },
      { id: "web", text: base + exportPath({ format: fmt }) },
      { id: "m", text: m },
      { id: "odata", text: base + "/odata/" + d.odata + (odq ? "?" + odq : "") },
      { id: "curl", text: curl },
    ];
    if (d.name === "report") {
      const flags = [];
      if (cols.length) flags.push("--columns " + cols.join(","));
      for (const f of FILTERS) if (state.filters[f]) flags.push("--" + f.replace(/_/g, "-") + " '" + state.filters[f].replace(/'/g, "'\\''") + "'");
      if (state.format === "csv") {
        if (state.delimiter !== "comma") flags.push("--delimiter " + state.delimiter);
        if (state.bom) flags.push("--bom");
        if (!state.header) flags.push("--no-header");
      }
      flags.push("--output " + file);
      items.push({ id: "cli", text: "informe export " + flags.join(" ") });
    }
    items.push({ id: "libre", text: url("csv", tok), copy: url("csv", real), secret: true });
    const wasFocused = document.activeElement && document.activeElement.closest("#connect") ? document.activeElement.id : "";
    $("connect").replaceChildren(...items.map((it) => {
      const area = el("textarea", { id: "c-" + it.id, readOnly: true, spellcheck: false, value: it.text, rows: Math.min(10, it.text.split("\n").length + Math.floor(it.text.length / 90)) });
      area.dataset.copy = it.copy || it.text;
      const btn = el("button", { type: "button", id: "copy-" + it.id, className: "copy", textContent: t("copy") });
      btn.setAttribute("aria-describedby", "h-" + it.id);
      btn.addEventListener("click", () => copy(area, btn));
      const kids = [el("h3", { id: "h-" + it.id, textContent: t(it.id) }), el("p", { className: "hint", textContent: t(it.id + "How") })];
      if (it.secret) kids.push(el("p", { className: "warn", textContent: token ? t("secret") : t("noTokenNote") }));
      kids.push(el("label", { htmlFor: area.id, className: "visually-hidden", textContent: t(it.id) }), area, btn);
      return el("div", { className: "connect-item" }, ...kids);
    }));
    if (wasFocused && $(wasFocused)) $(wasFocused).focus();
    $("reveal").hidden = !token;
    $("reveal").textContent = revealed ? t("hide") : t("reveal");
    $("reveal").setAttribute("aria-pressed", String(revealed));
  }

  async function copy(area, btn) {
    const text = area.dataset.copy;
    try {
      await navigator.clipboard.writeText(text);
    } catch (e) {
      // Plain HTTP off loopback has no clipboard API: select the text, so
      // that Ctrl+C copies what is shown.
      area.focus();
      area.select();
    }
    btn.textContent = t("copied");
    setTimeout(() => { btn.textContent = t("copy"); }, 1500);
  }

  // --- start ---

  async function start() {
    $("sign-in-form").addEventListener("submit", signIn);
    $("sign-out").addEventListener("click", signOut);
    $("lang").addEventListener("click", () => {
      lang = lang === "es" ? "en" : "es";
      document.cookie = "informe_lang=" + lang + "; path=/; SameSite=Strict";
      translate();
    });
    $("search").addEventListener("input", renderGroups);
    $("all").addEventListener("click", () => { for (const n of allColumns()) state.chosen.add(n); renderGroups(); changed(true); });
    $("none").addEventListener("click", () => { state.chosen.clear(); renderGroups(); changed(true); });
    $("reveal").addEventListener("click", () => { revealed = !revealed; renderConnect(); });
    $("format").addEventListener("change", (e) => { state.format = e.target.value; changed(true); });
    $("delimiter").addEventListener("change", (e) => { state.delimiter = e.target.value; changed(true); });
    $("header").addEventListener("change", (e) => { state.header = e.target.checked; changed(true); });
    $("bom").addEventListener("change", (e) => { state.bom = e.target.checked; changed(true); });
    translate();
    const [cat, who] = await Promise.all([
      fetch($("app").dataset.catalog).then((r) => r.json()),
      fetch("/web/session"),
    ]);
    catalog = cat;
    if (who.ok) showBuilder(await who.json()); else showSignIn("");
    document.body.dataset.ready = "true";
    performance.mark("informe-ready");
  }

  start();
})();
