// informe's export page: sign in with a token, choose rows and columns, see
// the count, the size and the first rows, download, and copy a connection.
// Values from the database are only ever set as textContent, never as HTML.
// The choice lives in the URL's fragment (never the token), so that a
// reload or a shared link reopens it.
"use strict";

(function () {
  // The words of the page's language, and of the other once the reader
  // switches to it (words.es.js, words.en.js).
  const T = window.informeWords;
  const FILTERS = ["contract_id", "code_contract", "client_id", "rut"];
  const FORMATS = ["csv", "xlsx", "json", "ndjson", "parquet", "arrow"];
  const FORMAT_NAMES = { csv: "CSV", xlsx: "Excel", json: "JSON", ndjson: "NDJSON", parquet: "Parquet", arrow: "Arrow" };
  const BIG = 50 * 1024 * 1024; // warn above this estimated size
  const PQ_MAX = 2048; // the longest URL Power Query's connectors take by default
  const $ = (id) => document.getElementById(id);
  const el = (tag, props, ...kids) => {
    const e = document.createElement(tag);
    Object.assign(e, props || {});
    for (const k of kids) e.append(k);
    return e;
  };

  let lang = document.documentElement.lang === "en" ? "en" : "es";
  let full = null; // the catalogue of every dataset, as served
  let catalog = null; // what the signed-in token sees of it (seen)
  let principal = null;
  let token = ""; // only when signed in on this page load, never stored
  let revealed = false;
  const fresh = () => ({ ds: null, chosen: [], filters: {}, where: [], format: "csv", delimiter: "comma", decimal: false, header: "labels", bom: false });
  let state = fresh();
  let pending = null; // AbortController of the count and preview in flight
  let timer = 0;
  let checking = false; // a change not yet checked by informe
  let total = null; // rows matching, once checked; null while unknown or refused

  const t = (key, vars) => {
    let s = T[lang][key] || key;
    for (const [k, v] of Object.entries(vars || {})) s = s.replace("{" + k + "}", v);
    return s;
  };
  const words = (text) => text[lang] || text.es;
  const fold = (s) => s.normalize("NFD").replace(/[\u0300-\u036f]/g, "").toLowerCase();
  const number = (n) => Number(n).toLocaleString(lang === "es" ? "es-CL" : "en-US");

  // shownPath is a path and query as a person reads them: decoded where
  // it decodes.
  const shownPath = (p) => { try { return decodeURIComponent(p); } catch (e) { return p; } };

  // loadWords loads the words of language l, once: the page comes with
  // its own language's only.
  function loadWords(l) {
    if (T[l]) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const s = el("script", { src: $("app").dataset["words" + l] });
      s.onload = resolve;
      s.onerror = reject;
      document.head.append(s);
    });
  }

  function translate() {
    document.documentElement.lang = lang;
    for (const e of document.querySelectorAll("[data-t]")) e.textContent = t(e.dataset.t);
    $("lang").textContent = t("switchTo");
    $("lang").lang = t("switchLang");
    if (principal) $("who").textContent = t("signedInAs", { name: principal.name });
    if (catalog && principal) renderBuilder();
    if (returnTo) $("return-note").textContent = t("returnNote", { path: shownPath(returnTo) });
  }

  // --- the choice in the URL's fragment ---

  // readHash takes the choice from the fragment: ds, cols, the filters,
  // format, delimiter, header, bom. What it cannot take (an unknown name,
  // an unknown value) is kept in link, for showBuilder to tell.
  let link = null; // what the last link asked for that the page could not read, until told
  const HASH_KEYS = ["ds", "cols", "w", "format", "delimiter", "header", "bom", "decimal"].concat(FILTERS);
  function readHash() {
    const h = new URLSearchParams(location.hash.slice(1));
    if (!h.has("ds")) return false;
    const s = fresh();
    link = { ds: h.get("ds"), unknown: [], values: [] };
    s.ds = h.get("ds");
    s.chosen = (h.get("cols") || "").split(",").filter(Boolean);
    for (const f of FILTERS) if (h.get(f)) s.filters[f] = h.get(f);
    // A text condition that ignores accents and capitals is written with
    // its comparison prefixed by "i" (w=client_commune~icontains~mar); a
    // link without it compares exactly, as links always did.
    s.where = h.getAll("w").map((w) => {
      const [col, op, ...v] = w.split("~");
      const fold = /^i(eq|ne|contains|startswith)$/.test(op);
      return { col: col, op: fold ? op.slice(1) : op, v: v.join("~"), fold: fold };
    });
    const pick = (name, allowed, def) => {
      const v = h.get(name);
      if (v === null) return def;
      if (allowed.includes(v)) return v;
      link.values.push(name + "=" + v);
      return def;
    };
    s.format = pick("format", FORMATS, s.format);
    s.delimiter = pick("delimiter", ["comma", "semicolon", "tab"], s.delimiter);
    s.header = pick("header", ["labels", "true", "false"], s.header);
    s.bom = pick("bom", ["true", "false"], "false") === "true";
    s.decimal = pick("decimal", ["comma"], "") === "comma";
    for (const k of new Set(h.keys())) if (!HASH_KEYS.includes(k)) link.unknown.push(k);
    state = s;
    return true;
  }

  function writeHash() {
    const h = new URLSearchParams();
    h.set("ds", state.ds);
    if (state.chosen.length) h.set("cols", state.chosen.join(","));
    if (dataset().filters) for (const f of FILTERS) if (state.filters[f]) h.set(f, state.filters[f]);
    for (const w of state.where) {
      const c = condColumn(w.col);
      h.append("w", w.col + "~" + (w.fold && c && foldable(c) ? "i" : "") + w.op + "~" + w.v);
    }
    h.set("format", state.format);
    if (state.delimiter !== "comma") h.set("delimiter", state.delimiter);
    if (state.header !== "labels") h.set("header", state.header);
    if (state.bom) h.set("bom", "true");
    if (state.decimal) h.set("decimal", "comma");
    history.replaceState(null, "", "#" + h.toString().replace(/%2C/g, ","));
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

  // sessionEnded shows the sign-in form with why the session ended (from
  // /web/session: expired, revoked), keeping the choice for afterwards.
  async function sessionEnded() {
    let msg = t("sessionEnded");
    try {
      const s = await (await fetch("/web/session")).json();
      if (s.message) msg = s.message + " " + t("sessionEnded");
    } catch (e) { /* the generic message will do */ }
    if (pending) pending.abort();
    showSignIn(msg);
    $("token").focus();
  }

  // seen returns the catalogue as the token of session p sees it
  // (p.datasets): only its datasets and their columns, the masked ones
  // with their mask, the filters it may give and the related rows its
  // conditions may reach. What it may not see is absent, as if it did not
  // exist.
  function seen(p) {
    const out = [];
    for (const d of full.datasets) {
      const v = (p.datasets || []).find((x) => x.source === d.source);
      if (!v) continue;
      const masked = v.masked || {};
      const groups = d.groups.map((g) => Object.assign({}, g, {
        columns: g.columns.filter((c) => v.columns.includes(c.name)).map((c) => Object.assign({}, c, { mask: masked[c.name] })),
      })).filter((g) => g.columns.length);
      out.push(Object.assign({}, d, { groups: groups, filterNames: v.filters || [], related: (d.related || []).filter((r) => (v.related || []).includes(r.nav)) }));
    }
    for (const d of out) d.related = d.related.filter((r) => out.some((x) => x.name === r.dataset));
    return { datasets: out };
  }

  // unpack reads sets, datasets of catalogue cat as internal/web packs
  // them: their columns come as arrays (packedColumn), their types by
  // kind, a description that is the label left out, and leave out the
  // words of a column the general report (cat's first) has too: they are
  // the report's.
  function unpack(cat, sets) {
    const text = (a) => a && { es: a[0], en: a[1] };
    for (const d of sets) for (const g of d.groups) {
      g.columns = g.columns.map((a) => ({ name: a[0], kind: a[1], type: cat.types[a[1]], width: a[2], label: text(a[3]), about: text(a[4] || a[3]), values: a[5] || undefined }));
    }
    const known = {};
    for (const g of cat.datasets[0].groups) for (const c of g.columns) known[c.name] = c;
    for (const d of sets) for (const g of d.groups) for (const c of g.columns) {
      if (!c.label) { c.label = known[c.name].label; c.about = known[c.name].about; }
    }
  }

  // addMore adds to the catalogue the datasets session p carries beside
  // it (p.more: those read under a scope no token gets by default).
  function addMore(p) {
    const more = (p.more || []).filter((d) => !full.datasets.some((x) => x.source === d.source));
    unpack(full, more);
    full.datasets.push(...more);
  }

  function showBuilder(p) {
    principal = p;
    addMore(p);
    catalog = seen(p);
    const allowed = catalog.datasets;
    const issues = [];
    if (!state.ds || !allowed.some((d) => d.name === state.ds)) {
      const keep = state.ds;
      state = fresh();
      state.ds = allowed[0].name;
      if (keep) {
        issues.push(t("linkDataset", { name: keep, shown: words(dataset().title) }));
        writeHash();
      }
    }
    const names = new Set(allColumns());
    const ds = words(dataset().title);
    const lost = state.chosen.filter((n) => !names.has(n));
    if (lost.length) issues.push(t("linkColumns", { ds: ds, list: lost.join(", ") }));
    state.chosen = state.chosen.filter((n, i, a) => names.has(n) && a.indexOf(n) === i);
    const badConds = state.where.filter((w) => !condColumn(w.col) || !opsFor(condColumn(w.col)).includes(w.op));
    if (badConds.length) issues.push(t("linkConds", { list: badConds.map((w) => [w.col, w.op, w.v].join(" ")).join("; ") }));
    state.where = state.where.filter((w) => !badConds.includes(w));
    const badFilters = Object.keys(state.filters).filter((f) => !dataset().filterNames.includes(f));
    if (badFilters.length) issues.push(t("linkFilters", { ds: ds, list: badFilters.map((f) => f + "=" + state.filters[f]).join(", ") }));
    for (const f of badFilters) delete state.filters[f];
    if (link && link.values.length) issues.push(t("linkValue", { list: link.values.join(", ") }));
    if (link && link.unknown.length) issues.push(t("linkUnknown", { list: link.unknown.join(", ") }));
    link = null;
    showLinkIssues(issues);
    $("sign-in").hidden = true;
    $("builder").hidden = false;
    $("sign-out").hidden = false;
    $("who").textContent = t("signedInAs", { name: p.name });
    $("format").value = state.format;
    $("delimiter").value = state.delimiter;
    $("header").value = state.header;
    $("bom").checked = state.bom;
    $("decimal").checked = state.decimal;
    renderBuilder();
  }

  // showLinkIssues tells, above the builder, what a link asked for that
  // the page could not apply; nothing of it is applied in silence.
  function showLinkIssues(issues) {
    const box = $("link-issues");
    if (!issues.length) { box.hidden = true; box.replaceChildren(); return; }
    const ok = el("button", { type: "button", id: "link-issues-ok", className: "link", textContent: t("dismiss") });
    ok.addEventListener("click", () => { box.hidden = true; box.replaceChildren(); $("builder-title").focus(); });
    box.replaceChildren(el("h2", { id: "link-issues-title", textContent: t("linkTitle") }),
      el("ul", {}, ...issues.map((i) => el("li", { textContent: i }))), ok);
    box.hidden = false;
  }

  async function signIn(ev) {
    ev.preventDefault();
    const value = $("token").value.trim();
    let res, body;
    try {
      res = await fetch("/web/sign-in", {
        method: "POST", headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ token: value, lang: lang }),
      });
      body = await res.json().catch(() => ({}));
    } catch (e) {
      showSignIn(t("err").network);
      return;
    }
    if (!res.ok) {
      showSignIn(body.message || res.statusText);
      $("token").focus();
      return;
    }
    token = value;
    $("token").value = "";
    showBuilder(body);
    $("builder-title").focus();
    if (returnTo) goBack();
  }

  // returnTo is the API path a browser opened without a session, which
  // informe sent here to sign in first (?return=), "" for none: only a
  // path of this origin.
  const returnTo = (() => {
    const r = new URLSearchParams(location.search).get("return") || "";
    if (!r.startsWith("/") || r.startsWith("//") || r.startsWith("/\\")) return "";
    try {
      const u = new URL(r, location.origin);
      return u.origin === location.origin ? u.pathname + u.search : "";
    } catch (e) {
      return "";
    }
  })();

  // goBack opens returnTo, now that the page is signed in: an export
  // downloads, and the page stays.
  function goBack() {
    history.replaceState(null, "", location.pathname + location.hash);
    $("download-status").textContent = t("returning", { path: returnTo });
    location.assign(returnTo);
  }

  async function signOut() {
    await fetch("/web/sign-out", { method: "POST" });
    revealed = false;
    state = fresh();
    $("search").value = "";
    history.replaceState(null, "", location.pathname);
    showSignIn("");
    $("token").focus();
  }

  // --- the builder ---

  const dataset = () => catalog.datasets.find((d) => d.name === state.ds);
  const columnsOf = (d) => d.groups.flatMap((g) => g.columns);
  const allColumns = () => columnsOf(dataset()).map((c) => c.name);
  const column = (name) => columnsOf(dataset()).find((c) => c.name === name);
  // chosenColumns are the chosen columns in the order chosen, or [] for all.
  const chosenColumns = () => state.chosen.slice();
  const shownColumns = () => (state.chosen.length ? state.chosen : allColumns()).map(column);

  function renderBuilder() {
    const allowed = catalog.datasets;
    const box = $("datasets");
    // Arrow keys move among the radios, each move a change that renders
    // them again: the focus stays on the one chosen.
    const hadFocus = box.contains(document.activeElement);
    box.replaceChildren(...allowed.map((d) => {
      const id = "ds-" + d.name;
      const input = el("input", { type: "radio", name: "dataset", id: id, value: d.name, checked: d.name === state.ds });
      input.addEventListener("change", () => switchGrain(d.name));
      return el("span", { className: "choice" }, input, el("label", { htmlFor: id, textContent: words(d.title) }));
    }));
    if (hadFocus && $("ds-" + state.ds)) $("ds-" + state.ds).focus();
    $("ds-row").textContent = words(dataset().row);
    renderGroups();
    renderOrder();
    renderFilters();
    renderConds();
    $("filters").hidden = !dataset().filterNames.length;
    changed(true);
  }

  // switchGrain changes the dataset, keeping the chosen columns and the
  // conditions that the new one has (by name), and the report's filters as
  // conditions where it has their column; it says what it dropped.
  function switchGrain(name) {
    const from = dataset();
    if (name === from.name) return;
    const label = (n) => { const c = columnsOf(from).find((k) => k.name === n) || condColumn(n, from) || { label: { es: n, en: n } }; return condLabel(c); };
    if (from.filters) {
      for (const f of FILTERS) {
        const v = state.filters[f];
        if (!v) continue;
        const col = f === "rut" ? "client_rut" : f;
        state.where.push({ col: col, op: "eq", v: v, fold: false, filter: f });
      }
      state.filters = {};
    }
    state.ds = name;
    const d = dataset();
    const dropped = [];
    const names = new Set(allColumns());
    state.chosen = state.chosen.filter((n) => names.has(n) || (dropped.push(label(n)), false));
    state.where = state.where.filter((w) => {
      const c = condColumn(w.col);
      // A RUT compares in any typed form only where informe normalizes it
      // (the report, clients): elsewhere the filter is not a condition.
      const keep = c && opsFor(c).includes(w.op) && !(w.filter === "rut" && d.name !== "clients");
      if (keep && w.filter && d.filterNames.includes(w.filter)) { state.filters[w.filter] = w.v; return false; }
      if (!keep) dropped.push(w.filter ? t(w.filter) : label(w.col));
      delete w.filter;
      return keep;
    });
    renderBuilder();
    $("grain-note").textContent = dropped.length
      ? t("grainDropped", { list: [...new Set(dropped)].join(", "), ds: words(d.title) }) : "";
  }

  // renderGrainWarn warns when an amount (a cost) is chosen on a dataset
  // that repeats it on several rows (the report repeats a contract's cost
  // on each task row), offering the first dataset that has it once.
  function renderGrainWarn() {
    const d = dataset();
    const amounts = d.name === "report" ? state.chosen.map(column).filter((c) => c && c.type === "amount") : [];
    const better = amounts.length && catalog.datasets.find((x) => x.name !== d.name && x.name !== "report" &&
      amounts.every((c) => columnsOf(x).some((k) => k.name === c.name)));
    $("grain-warn").hidden = !better;
    if (!better) return;
    $("grain-warn-text").textContent = t("grainWarn", { cols: amounts.map((c) => words(c.label)).join(", "), ds: words(better.title) });
    $("grain-switch").textContent = t("grainSwitch", { ds: words(better.title) });
    $("grain-switch").onclick = () => { switchGrain(better.name); $("ds-" + better.name).focus(); };
  }

  function renderGroups() {
    const raw = $("search").value.trim();
    const q = fold(raw);
    let shown = 0;
    const groups = dataset().groups.map((g) => {
      const rows = g.columns.filter((c) => !q || [c.name, c.label.es, c.label.en, words(c.about), words(g.title)].some((s) => fold(s).includes(q)))
        .map((c) => {
          const id = "col-" + c.name;
          const box = el("input", { type: "checkbox", id: id, value: c.name, checked: state.chosen.includes(c.name) });
          box.setAttribute("aria-describedby", id + "-about");
          box.addEventListener("change", () => {
            if (box.checked) { if (!state.chosen.includes(c.name)) state.chosen.push(c.name); } else state.chosen = state.chosen.filter((n) => n !== c.name);
            renderOrder();
            changed(true);
          });
          const label = el("label", { htmlFor: id },
            el("span", { className: "label", textContent: words(c.label) }), " ",
            el("span", { className: "kind", textContent: t("kinds")[c.type] || c.type }));
          const about = el("span", { id: id + "-about", className: "about" }, words(c.about), " ", el("code", { textContent: c.name }));
          // A masked column says so in its name (what a screen reader
          // reads for the box) and how in its description and tooltip.
          if (c.mask) {
            label.append(" ", el("span", { className: "masked", title: maskHow(c), textContent: t("masked") }));
            about.append(" ", el("span", { className: "mask-how", textContent: maskHow(c) }));
          }
          return el("li", {}, box, el("span", { className: "col" }, label, about));
        });
      shown += rows.length;
      if (!rows.length) return null;
      return el("fieldset", {}, el("legend", { textContent: words(g.title) }), el("ul", {}, ...rows));
    }).filter(Boolean);
    $("groups").replaceChildren(...groups);
    $("groups").hidden = !shown;
    $("search-empty").textContent = shown ? "" : t("noMatch", { q: raw });
  }

  // maskHow says how the token sees masked column c («12.***.***-5»).
  const maskHow = (c) => t("maskHow", { how: t("masks")[c.mask] || "***" });

  // renderOrder lists the chosen columns in their order, each with buttons
  // to move it up or down and to remove it.
  function renderOrder(focus) {
    const list = state.chosen;
    $("order-hint").textContent = list.length ? t("orderHint") : t("orderAll");
    $("order").replaceChildren(...list.map((name, i) => {
      const c = column(name);
      const lbl = words(c.label);
      const btn = (what, text, disabled, fn) => {
        const b = el("button", { type: "button", className: "icon", id: "order-" + what + "-" + name, textContent: text, disabled: disabled });
        b.setAttribute("aria-label", t(what, { c: lbl }));
        b.title = t(what, { c: lbl });
        b.addEventListener("click", fn);
        return b;
      };
      const num = el("span", { className: "num", textContent: (i + 1) + "." });
      num.setAttribute("aria-hidden", "true"); // the list says the position
      return el("li", {}, num, el("span", { className: "name", textContent: lbl }),
        el("span", { className: "moves" },
          btn("up", "↑", i === 0, () => move(i, -1, "up")),
          btn("down", "↓", i === list.length - 1, () => move(i, 1, "down")),
          btn("remove", "×", false, () => {
            state.chosen.splice(i, 1);
            const box = $("col-" + name);
            if (box) box.checked = false;
            renderOrder();
            changed(true);
            const next = state.chosen[Math.min(i, state.chosen.length - 1)];
            (next ? $("order-remove-" + next) : $("search")).focus();
          })));
    }));
    if (focus) {
      const b = $(focus);
      (b && !b.disabled ? b : $(focus.replace(/-(up|down)-/, (m, w) => w === "up" ? "-down-" : "-up-"))).focus();
    }
  }

  function move(i, by, what) {
    const name = state.chosen[i];
    state.chosen.splice(i, 1);
    state.chosen.splice(i + by, 0, name);
    renderOrder("order-" + what + "-" + name);
    changed(true);
  }

  function renderFilters() {
    $("filters").replaceChildren(...dataset().filterNames.filter((f) => FILTERS.includes(f)).map((name) => {
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

  // --- conditions: OData's $filter, which every path takes ---

  // condColumn returns the column a condition names: one of the dataset's
  // ("costo_servicio"), or of a related dataset's through its navigation
  // ("Tasks/task_status"), with nav and rel then set; undefined when the
  // dataset has no such column.
  function condColumn(name, d) {
    d = d || dataset();
    const i = name.indexOf("/");
    if (i < 0) return condColumns(d).find((c) => c.name === name);
    const rel = (d.related || []).find((r) => r.nav === name.slice(0, i));
    const target = rel && catalog.datasets.find((x) => x.name === rel.dataset);
    const c = target && condColumns(target).find((k) => k.name === name.slice(i + 1));
    return c && Object.assign({}, c, { nav: rel.nav, rel: rel });
  }
  // condColumns are the columns of d a condition may name: a masked one
  // may not (its condition would tell its values), as if it did not exist.
  const condColumns = (d) => columnsOf(d).filter((c) => !c.mask);
  const condLabel = (c) => c.rel ? words(c.rel.title) + ": " + words(c.label) : words(c.label);
  const isDate = (c) => c.type === "date" || c.type === "datetime";
  // foldable: a text typed freely, compared ignoring accents and capitals
  // unless the condition asks for an exact match.
  const foldable = (c) => c.type === "text" && !c.values;

  const opsFor = (c) => c.values ? ["eq", "ne"] : c.type === "text" ? ["eq", "ne", "contains", "startswith"]
    : isDate(c) ? ["ge", "lt", "eq", "year"] : ["eq", "ne", "gt", "ge", "lt", "le"];
  const opName = (c, op) => (isDate(c) ? t("dateOps") : t("ops"))[op];

  // readNumber reads a number as the page's language writes it: in
  // Spanish points group thousands and the comma is the decimal mark
  // (100.000, 1.000.000, 12.500,5, $ 100.000); in English commas group
  // and the point is the decimal mark (100,000, 12,500.5). A number the
  // other language would read otherwise is refused: three digits after
  // the decimal mark of a number below a thousand (1,500 in Spanish,
  // 100.000 in English, where Chile writes a hundred thousand so), or the
  // other decimal mark (100.00 or 1.5 in Spanish). It returns
  // { value } (as OData writes it: 100000, 12500.5) or { error }.
  function readNumber(raw, integer) {
    let s = raw.replace(/[\s\u00a0]/g, "");
    let sign = "";
    if (s.startsWith("-")) { sign = "-"; s = s.slice(1); }
    s = s.replace(/^\$/, "");
    const [th, dec] = lang === "es" ? [".", ","] : [",", "."];
    const q = (c) => "\\" + c;
    let int, frac;
    if (new RegExp("^\\d{1,3}(" + q(th) + "\\d{3})+(" + q(dec) + "\\d+)?$").test(s)) {
      [int, frac] = s.split(dec);
      int = int.split(th).join("");
    } else if (new RegExp("^\\d+(" + q(dec) + "\\d+)?$").test(s)) {
      [int, frac] = s.split(dec);
      if (frac !== undefined && frac.length === 3 && /^[1-9]\d{0,2}$/.test(int)) return { error: "numAmbiguous" };
    } else if (new RegExp("^[\\d" + q(th) + q(dec) + "]+$").test(s) && /\d/.test(s)) {
      return { error: "numMarks" };
    } else {
      return { error: "numBad" };
    }
    if (integer && frac !== undefined) return { error: "numInteger" };
    int = int.replace(/^0+(?=\d)/, "");
    return { value: sign + int + (frac !== undefined ? "." + frac : "") };
  }

  // check returns what condition w asks for: { lit, read } when it is
  // complete and valid (lit the OData literal, read the number understood,
  // if any), else { error, incomplete }.
  function check(w) {
    const c = condColumn(w.col);
    if (!c) return { error: "condColumn" };
    if (w.bad) return { error: "dateBad" };
    if (!w.v) return { error: "condEmpty", incomplete: true };
    if (c.type === "text") return { lit: "'" + w.v.replace(/'/g, "''") + "'" };
    if (isDate(c) && w.op === "year") return /^(19|2\d)\d\d$/.test(w.v) ? { lit: w.v } : { error: "yearBad" };
    // A year before 1900 is one half typed (202 for 2024).
    if (isDate(c)) return /^(19|2\d)\d\d-\d\d-\d\d$/.test(w.v) && !isNaN(new Date(w.v + "T00:00:00")) ? { lit: w.v } : { error: "dateBad" };
    const n = readNumber(w.v, c.kind === "integer");
    return n.error ? { error: n.error } : { lit: n.value, read: n.value };
  }

  // condExpr writes w, checked as k, over the property path ref (the
  // column, or the lambda variable's "r/column").
  function condExpr(w, k, ref) {
    const c = condColumn(w.col);
    let lit = k.lit;
    const iso = (d) => d.toISOString().replace(/\.000Z$/, "Z");
    // A day, or a year, of a date-time column starts at midnight where
    // the analyst is.
    if (isDate(c) && (w.op === "year" || (c.type === "datetime" && w.op !== "year"))) {
      const from = w.op === "year" ? new Date(Number(w.v), 0, 1) : new Date(w.v + "T00:00:00");
      const to = new Date(from.getTime());
      if (w.op === "year") to.setFullYear(to.getFullYear() + 1); else to.setDate(to.getDate() + 1);
      const at = (d) => c.type === "datetime" ? iso(d) : d.getFullYear().toString().padStart(4, "0") + "-" +
        String(d.getMonth() + 1).padStart(2, "0") + "-" + String(d.getDate()).padStart(2, "0");
      if (w.op === "year" || w.op === "eq") return "(" + ref + " ge " + at(from) + " and " + ref + " lt " + at(to) + ")";
      lit = at(from);
    }
    if (foldable(c) && w.fold) {
      const f = (x) => "Informe.fold(text=" + x + ")";
      if (w.op === "contains" || w.op === "startswith") return w.op + "(" + f(ref) + "," + f(lit) + ")";
      return f(ref) + " " + w.op + " " + f(lit);
    }
    if (w.op === "contains" || w.op === "startswith") return w.op + "(" + ref + "," + lit + ")";
    return ref + " " + w.op + " " + lit;
  }

  // condsValid says every condition is complete and valid: until then
  // nothing is counted, downloaded or offered to connect.
  const condsValid = () => state.where.every((w) => !check(w).error);

  // filterParts writes the conditions' $filter, joined by and; the
  // conditions on one related dataset speak of one same related row:
  // Tasks/any(r:r/task_status eq 'Pendiente' and r/task_end_date ge ...).
  // It also says where each condition's expression lies in it: its index
  // in state.where, and its first and last character, counted from 1 as
  // informe counts a position (in characters, not UTF-16 units).
  function filterParts() {
    const groups = [], byNav = new Map();
    state.where.forEach((w, i) => {
      const k = check(w);
      if (k.error) return;
      const c = condColumn(w.col);
      if (!c.nav) { groups.push({ head: "", parts: [{ i: i, x: condExpr(w, k, w.col) }] }); return; }
      if (!byNav.has(c.nav)) byNav.set(c.nav, { head: c.nav + "/any(r:", parts: [] });
      byNav.get(c.nav).parts.push({ i: i, x: condExpr(w, k, "r/" + c.name) });
    });
    for (const g of byNav.values()) groups.push(g);
    let expr = "";
    const spans = [];
    const add = (x) => { expr += x; };
    const at = () => [...expr].length + 1;
    groups.forEach((g, gi) => {
      if (gi) add(" and ");
      add(g.head);
      g.parts.forEach((p, pi) => {
        if (pi) add(" and ");
        const from = at();
        add(p.x);
        spans.push({ i: p.i, from: from, to: at() });
      });
      if (g.head) add(")");
    });
    return { expr: expr, spans: spans };
  }

  const filterExpr = () => filterParts().expr;

  // markCond shows condition i's fault, or the number it understood,
  // beside its value.
  function markCond(i) {
    const w = state.where[i];
    const v = $("w" + i + "-v");
    if (!v) return;
    const k = check(w);
    const shown = k.error && !(k.incomplete && !w.touched);
    $("w" + i + "-error").textContent = shown ? t("err")[k.error] : "";
    $("w" + i + "-read").textContent = k.read !== undefined ? "= " + k.read : "";
    if (shown) v.setAttribute("aria-invalid", "true"); else v.removeAttribute("aria-invalid");
  }

  function renderConds(focus) {
    const d = dataset();
    const own = condColumns(d).map((k) => el("option", { value: k.name, textContent: words(k.label) }));
    const rel = (d.related || []).map((r) => el("optgroup", { label: words(r.title) },
      ...condColumns(catalog.datasets.find((x) => x.name === r.dataset)).map((k) =>
        el("option", { value: r.nav + "/" + k.name, textContent: words(r.title) + ": " + words(k.label) }))));
    $("conds").replaceChildren(...state.where.map((w, i) => {
      const n = i + 1;
      const c = condColumn(w.col);
      const id = "w" + i;
      const labelled = (e, key) => { e.setAttribute("aria-label", t(key, { n: n })); return e; };
      const col = labelled(el("select", { id: id + "-col" }, ...own.map((o) => o.cloneNode(true)), ...rel.map((o) => o.cloneNode(true))), "condCol");
      col.value = w.col;
      const op = labelled(el("select", { id: id + "-op" }, ...opsFor(c).map((o) => el("option", { value: o, textContent: opName(c, o), selected: o === w.op }))), "condOp");
      // A status is chosen among its values; a date on a calendar; a year
      // and anything else is typed.
      const dateInput = isDate(c) && w.op !== "year";
      const value = labelled(c.values
        ? el("select", { id: id + "-v" }, el("option", { value: "", textContent: "—" }),
          ...c.values.map((v) => el("option", { value: v, textContent: v, selected: v === w.v })))
        : el("input", { id: id + "-v", value: w.v, autocomplete: "off", type: dateInput ? "date" : "text" }), "condValue");
      if (c.type === "number" || c.type === "amount" || w.op === "year") value.inputMode = w.op === "year" || c.kind === "integer" ? "numeric" : "decimal";
      if (w.op === "year") value.placeholder = String(new Date().getFullYear());
      value.setAttribute("aria-describedby", id + "-read " + id + "-error");
      const read = el("span", { id: id + "-read", className: "read" });
      read.setAttribute("aria-live", "polite");
      const err = el("p", { id: id + "-error", className: "error" });
      const remove = labelled(el("button", { type: "button", id: id + "-remove", className: "icon", textContent: "×" }), "condRemove");
      const kids = [col, op, value, read];
      if (foldable(c)) {
        const box = el("input", { type: "checkbox", id: id + "-exact", checked: !w.fold });
        box.addEventListener("change", () => { w.fold = !box.checked; changed(true); });
        kids.push(el("span", { className: "exact" }, box, el("label", { htmlFor: box.id, textContent: t("exact") })));
      }
      kids.push(remove, err);
      col.addEventListener("change", () => {
        w.col = col.value;
        const k = condColumn(w.col);
        if (!opsFor(k).includes(w.op)) w.op = opsFor(k)[0];
        w.v = "";
        w.bad = false;
        w.touched = false;
        w.fold = foldable(k);
        renderConds(id + "-col");
        changed(true);
      });
      op.addEventListener("change", () => {
        const wasYear = w.op === "year";
        w.op = op.value;
        if (wasYear !== (w.op === "year") && isDate(c)) { w.v = ""; w.bad = false; renderConds(id + "-op"); }
        changed(true);
      });
      // A half-typed date (01/01/aaaa) has no value but is not empty:
      // the browser says so by validity.badInput, heard on every key.
      const take = () => {
        w.v = value.value.trim();
        w.bad = !!(value.validity && value.validity.badInput);
        w.touched = true;
        markCond(i);
      };
      value.addEventListener(c.values ? "change" : "input", () => { take(); changed(value.type === "date" || !!c.values); });
      if (value.type === "date") {
        for (const ev of ["keyup", "blur", "change"]) value.addEventListener(ev, () => {
          const before = w.bad + "|" + w.v;
          take();
          if (before !== w.bad + "|" + w.v) changed(true);
        });
      }
      value.addEventListener("blur", () => { w.touched = true; markCond(i); });
      remove.addEventListener("click", () => {
        state.where.splice(i, 1);
        renderConds();
        changed(true);
        $("add-cond").focus();
      });
      return el("li", { className: "cond" }, ...kids);
    }));
    state.where.forEach((w, i) => markCond(i));
    if (focus && $(focus)) $(focus).focus();
  }

  // --- URLs ---

  // enc percent-encodes a query value, spaces as %20 (never "+"), keeping
  // commas and OData's $ readable.
  const enc = (s) => encodeURIComponent(s).replace(/%2C/g, ",").replace(/%24/g, "$");
  const query = (pairs) => pairs.map(([k, v]) => enc(k) + "=" + enc(v)).join("&");

  // params returns the query parameters of the current choice, as
  // [name, value] pairs, in format (default the chosen one). plain leaves
  // out the CSV options (for the count and for IMPORTDATA, which reads
  // commas).
  function params(opts) {
    opts = opts || {};
    const format = opts.format || state.format;
    const p = [["format", format]];
    const cols = chosenColumns();
    // For Power Query (opts.pq), every column in the dataset's order is
    // left out, which means the same, so that its URL stays short.
    if (cols.length && !(opts.pq && cols.join(",") === allColumns().join(","))) p.push(["columns", cols.join(",")]);
    if (dataset().filters) for (const f of FILTERS) if (state.filters[f]) p.push([f, state.filters[f]]);
    if (filterExpr()) p.push(["$filter", filterExpr()]);
    if (format === "csv" && !opts.plain) {
      if (state.delimiter !== "comma") p.push(["delimiter", state.delimiter]);
      if (state.bom) p.push(["bom", "true"]);
      if (decimalComma()) p.push(["decimal", "comma"]);
    }
    if ((format === "csv" && (!opts.plain || opts.headers)) || format === "xlsx") {
      if (state.header === "labels") p.push(["header", "labels"], ["lang", lang]);
      else if (state.header === "false" && format === "csv") p.push(["header", "false"]);
    }
    return p;
  }
  // decimalComma says the CSV is asked with decimal=comma: chosen, and with
  // a delimiter other than the comma, which informe requires.
  const decimalComma = () => state.decimal && state.delimiter !== "comma";
  const exportPath = (opts) => dataset().export + "?" + query(params(opts));

  // --- the count, the size, the preview ---

  let changedAt = 0; // when the choice last changed, for the preview's timing

  // changed follows a change of the choice: the texts and the fragment at
  // once, the count and preview at once (now) or after a pause in typing.
  // Until informe has checked the change, Download waits.
  function changed(now) {
    changedAt = performance.now();
    const cols = chosenColumns();
    const n = allColumns().length;
    $("chosen").textContent = cols.length ? t("chosen", { k: cols.length, n: n }) : t("chosenAll", { n: n });
    for (const e of document.querySelectorAll(".csv-only")) e.hidden = state.format !== "csv";
    for (const e of document.querySelectorAll(".sheet-only")) e.hidden = state.format !== "csv" && state.format !== "xlsx";
    $("decimal").disabled = state.delimiter === "comma";
    renderGrainWarn();
    const valid = condsValid();
    if (valid) $("download").href = exportPath(); else $("download").removeAttribute("href");
    $("download-error").textContent = "";
    $("download-status").textContent = "";
    $("download-retry").hidden = true;
    writeHash();
    renderConnect();
    total = null;
    clearTimeout(timer);
    if (!valid) {
      // Nothing is counted, downloaded or connected while a condition is
      // incomplete or invalid: its rows would not be those it asks for.
      if (pending) pending.abort();
      pending = null;
      checking = false;
      setDownload();
      const incomplete = state.where.every((w) => { const k = check(w); return !k.error || k.incomplete; });
      $("count").textContent = t(incomplete ? "condsIncomplete" : "condsInvalid");
      delete $("count").dataset.total;
      document.body.dataset.loading = "false";
      renderPreview([]);
      renderSize();
      return;
    }
    checking = true;
    setDownload();
    $("count").textContent = now ? t("counting") : t("checking");
    timer = setTimeout(refresh, now ? 0 : 150);
  }

  // setDownload enables Download only when informe has checked the choice
  // and rows match.
  function setDownload() {
    const ok = !checking && total !== null && total > 0;
    const a = $("download");
    a.setAttribute("aria-disabled", String(!ok));
    a.classList.toggle("disabled", !ok);
  }

  // errorText words a failed request in the page's language, from its
  // status and code; field says which filter field it belongs to.
  function errorText(e) {
    const E = t("err");
    if (e.status === 400) {
      if (e.code && E[e.code]) return { text: E[e.code], field: FILTERS.includes(e.target) ? e.target : "" };
      return { text: E.other400.replace("{target}", e.target || e.message || "?"), field: "" };
    }
    if (e.status === 403) return { text: E[403] };
    if (e.status === 503 || e.status === 429) return { text: E[503] };
    if (e.status) return { text: E[500] };
    return { text: E.network };
  }

  async function failure(res) {
    const body = res.status === 401 || res.bodyUsed ? {} : await res.json().catch(() => ({}));
    return { status: res.status, code: body.code, target: body.target, position: body.position, message: body.message };
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
    $("conds-error").textContent = "";
    for (const e of document.querySelectorAll("#conds .cond-error")) e.remove();
    for (const e of document.querySelectorAll("#conds [aria-invalid]")) { e.removeAttribute("aria-invalid"); e.removeAttribute("aria-describedby"); }
    try {
      const pp = params({ format: "ndjson" });
      if (d.filters) pp.push(["result_per_page", "20"]);
      const [head, rows] = await Promise.all([
        fetch(d.export + "?" + query(params({ format: "csv", plain: true })), { method: "HEAD", signal: ctl.signal }),
        firstRows(d.path + "?" + query(pp), 20, ctl.signal),
      ]);
      if (!head.ok) throw await failure(head);
      total = Number(head.headers.get("X-Total-Count"));
      $("count").textContent = total === 1 ? t("count1") : total === 0 ? t("count0") : t("count", { n: number(total) });
      $("count").dataset.total = String(total);
      renderPreview(rows);
      renderSize();
      performance.measure("informe-preview", { start: changedAt });
    } catch (e) {
      if (e.name === "AbortError") return;
      if (e.status === 401) { sessionEnded(); return; }
      total = null;
      $("count").textContent = "";
      delete $("count").dataset.total;
      renderPreview([]);
      renderSize();
      const { text, field } = errorText(e);
      if ((e.status === 400 || e.status === 501) && e.target === "$filter") {
        showCondError(e);
      } else if (field && $("f-" + field)) {
        $("f-" + field + "-error").textContent = text;
        $("f-" + field).setAttribute("aria-invalid", "true");
      } else {
        $("query-error").textContent = text;
      }
    } finally {
      if (pending === ctl) {
        pending = null;
        checking = false;
        setDownload();
        document.body.dataset.loading = "false";
      }
    }
  }

  const condSpans = () => filterParts().spans;

  // showCondError words informe's refusal of the $filter (its code) in the
  // page's language, beside the condition that wrote the part of the
  // $filter at the refusal's position, or under the conditions when no
  // one condition is at fault.
  function showCondError(e) {
    const CE = t("ce");
    const text = CE[e.code] || CE.other.replace("{code}", e.code || e.status);
    const span = e.position ? condSpans().find((sp) => e.position >= sp.from && e.position <= sp.to) : null;
    const li = span ? $("conds").children[span.i] : null;
    if (!li) {
      $("conds-error").textContent = text;
      return;
    }
    const id = "w" + span.i + "-error";
    let p = $(id);
    if (!p) {
      p = el("p", { id: id, className: "error cond-error" });
      li.append(p);
    }
    p.textContent = text;
    const v = $("w" + span.i + "-v");
    if (v) {
      v.setAttribute("aria-invalid", "true");
      v.setAttribute("aria-describedby", id);
    }
    $("conds-error").textContent = t("condAt", { n: span.i + 1 }) + " " + text;
  }

  async function firstRows(url, n, signal) {
    const res = await fetch(url, { signal: signal });
    if (!res.ok) throw await failure(res);
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
    return rows;
  }

  function renderPreview(rows) {
    const cols = shownColumns();
    const table = $("preview");
    table.tHead.replaceChildren(el("tr", {}, ...cols.map((c) => el("th", { scope: "col", textContent: words(c.label), title: c.mask ? maskHow(c) : c.name },
      ...(c.mask ? [" ", el("span", { className: "masked", textContent: t("masked") })] : [])))));
    // Values are shown as the file holds them, but a trailing line break
    // (task_detail's) would show as an empty line.
    table.tBodies[0].replaceChildren(...rows.map((r) =>
      el("tr", {}, ...cols.map((c) => el("td", { textContent: r[c.name] === null || r[c.name] === undefined ? "" : String(r[c.name]).replace(/\s+$/, "") })))));
  }

  // estimate returns the estimated bytes of the export in format: the rows
  // times the columns' typical widths from the catalogue, with each
  // format's own overhead per value.
  function estimate(format) {
    const cols = shownColumns();
    const csv = cols.reduce((n, c) => n + c.width + 1, 1); // delimiters and CRLF
    const json = cols.reduce((n, c) => n + c.width + c.name.length + 6, 2); // "name":"value",
    // Parquet is compressed (about a tenth of CSV on the demo's report);
    // Arrow holds the values with their offsets, uncompressed.
    const per = { csv: csv, json: json, ndjson: json, xlsx: Math.round(csv * 0.45), parquet: Math.round(csv * 0.1), arrow: Math.round(csv * 1.1) }[format];
    return total * per + (format === "xlsx" ? 6000 : 0);
  }

  function bytes(n) {
    const units = ["B", "KB", "MB", "GB"];
    let i = 0;
    while (n >= 1000 && i < units.length - 1) { n /= 1000; i++; }
    const digits = n >= 100 || i === 0 ? 0 : 1;
    return "≈ " + n.toLocaleString(lang === "es" ? "es-CL" : "en-US", { maximumFractionDigits: digits }) + " " + units[i];
  }

  function renderSize() {
    if (!total) {
      $("size").textContent = "";
      $("size-warn").hidden = true;
      return;
    }
    const list = FORMATS.map((f) => FORMAT_NAMES[f] + " " + bytes(estimate(f))).join(" · ");
    $("size").textContent = t("size", { list: list });
    const mine = estimate(state.format);
    $("size-warn").hidden = mine < BIG;
    $("size-warn").textContent = mine < BIG ? "" : t("sizeWarn", { f: FORMAT_NAMES[state.format], s: bytes(mine) });
  }

  // --- downloading ---

  // download fetches the export and saves it as a file: the download line
  // tells the bytes received against the page's estimate, then that the
  // file is complete, or why it failed, with a retry. The response is read
  // chunk by chunk into one Blob (the chunks are let go as the Blob takes
  // them), which a link with download saves under the name informe gives
  // it. A refusal before the first byte (a wrong filter, the session
  // ended) is told in the page, which stays as it is.
  let downloading = null; // AbortController of the download in flight
  async function download(ev) {
    if (ev) ev.preventDefault();
    const a = $("download");
    if (a.getAttribute("aria-disabled") === "true") return;
    if (downloading) downloading.abort();
    const url = a.getAttribute("href");
    const est = total ? estimate(state.format) : 0;
    const ctl = new AbortController();
    downloading = ctl;
    $("download-error").textContent = "";
    delete $("download-status").dataset.done;
    $("download-retry").hidden = true;
    $("download-cancel").hidden = false;
    let file = "", got = 0;
    const status = (key, vars) => { $("download-status").textContent = t(key, Object.assign({ file: file, got: bytes(got).replace("≈ ", "") }, vars || {})); };
    const failed = (why) => {
      $("download-status").textContent = "";
      $("download-error").textContent = t("dlFailed", { file: file || words(dataset().file), got: bytes(got).replace("≈ ", "") }).replace("{why}", why);
      $("download-retry").hidden = false;
    };
    try {
      let res;
      try {
        res = await fetch(url, { signal: ctl.signal });
      } catch (e) {
        if (e.name === "AbortError") return;
        failed(t("err").network);
        return;
      }
      if (res.status === 401) { sessionEnded(); return; }
      if (res.status === 400) { refresh(); return; } // its GET tells which filter is wrong, and why
      if (!res.ok) {
        failed(errorText(await failure(res)).text);
        return;
      }
      file = fileName(res.headers.get("Content-Disposition")) || dataset().source;
      status(est ? "dlProgress" : "dlProgressNoEst", { est: bytes(est) });
      const reader = res.body.getReader();
      const chunks = [];
      for (;;) {
        let r;
        try {
          r = await reader.read();
        } catch (e) {
          if (e.name === "AbortError") return;
          failed(t("dlCut"));
          return;
        }
        if (r.done) break;
        chunks.push(r.value);
        got += r.value.length;
        status(est ? "dlProgress" : "dlProgressNoEst", { est: bytes(Math.max(est, got)) });
      }
      const blob = new Blob(chunks, { type: res.headers.get("Content-Type") || "application/octet-stream" });
      chunks.length = 0;
      const href = URL.createObjectURL(blob);
      const go = el("a", { href: href, download: file, hidden: true });
      document.body.append(go);
      go.click();
      go.remove();
      // The browser has taken the file once the click's task has run.
      setTimeout(() => URL.revokeObjectURL(href), 60000);
      status("dlDone");
      $("download-status").dataset.done = "true";
    } finally {
      if (downloading === ctl) {
        downloading = null;
        $("download-cancel").hidden = true;
      }
    }
  }

  // fileName returns the file name of a Content-Disposition: filename*
  // (UTF-8) when present, else filename.
  function fileName(cd) {
    if (!cd) return "";
    const star = /filename\*=UTF-8''([^;]+)/i.exec(cd);
    if (star) { try { return decodeURIComponent(star[1]); } catch (e) { /* below */ } }
    const plain = /filename="([^"]*)"/i.exec(cd);
    return plain ? plain[1] : "";
  }

  // --- connect ---

  // publicHTTPS reports why Google's servers cannot fetch from this page's
  // address ("" when they can): not HTTPS, or a loopback, private,
  // link-local or single-label host.
  function publicHTTPS() {
    if (location.protocol !== "https:") return "whyHttp";
    const h = location.hostname.replace(/^\[|\]$/g, "").toLowerCase();
    const v4 = h.split(".").map(Number);
    const isV4 = /^\d+\.\d+\.\d+\.\d+$/.test(h);
    if (h === "localhost" || h.endsWith(".localhost") || h.endsWith(".local") || h.endsWith(".internal") || h.endsWith(".lan") ||
      (!isV4 && !h.includes(":") && !h.includes(".")) ||
      (isV4 && (v4[0] === 127 || v4[0] === 10 || v4[0] === 0 || (v4[0] === 192 && v4[1] === 168) ||
        (v4[0] === 172 && v4[1] >= 16 && v4[1] <= 31) || (v4[0] === 169 && v4[1] === 254) || (v4[0] === 100 && v4[1] >= 64 && v4[1] <= 127))) ||
      (h.includes(":") && (h === "::1" || /^f[cd]/.test(h) || /^fe[89ab]/.test(h)))) return "whyPrivate";
    return "";
  }

  // sh writes s as one word of a POSIX shell: in single quotes, each '
  // closing them, escaped, and opening them again.
  const sh = (s) => "'" + String(s).replace(/'/g, "'\\''") + "'";

  // mString writes s as an M text literal: quotes doubled.
  const mString = (s) => '"' + String(s).replace(/"/g, '""') + '"';

  // mType is the M type of a column's values in CSV.
  const mType = (c) => ({ integer: "Int64.Type", decimal: "type number", date: "type date", timestamp: "type datetime", timestamptz: "type datetimezone" })[c.kind] || "type text";

  function mCode(fmt) {
    const d = dataset();
    const base = location.origin;
    const rel = d.export.slice(1);
    const field = (k) => /^[A-Za-z_][A-Za-z0-9_]*$/.test(k) ? k : "#" + mString(k);
    const qrec = params({ format: fmt, pq: true }).map(([k, v]) => field(k) + " = " + mString(v)).join(", ");
    const web = "Web.Contents(" + mString(base) + ", [\n        RelativePath = " + mString(rel) + ",\n        Query = [" + qrec + "]\n    ])";
    if (fmt === "xlsx") {
      // The workbook's first sheet is named for the dataset.
      return "let\n    Source = Excel.Workbook(" + web + ", true),\n    Data = Source{[Item = " + mString(d.source) + ', Kind = "Sheet"]}[Data]\nin\n    Data';
    }
    const delim = { comma: mString(","), semicolon: mString(";"), tab: '"#(tab)"' }[state.delimiter];
    const cols = shownColumns();
    const named = (c, i) => state.header === "false" ? "Column" + (i + 1) : state.header === "labels" ? words(c.label) : c.name;
    const types = cols.map((c, i) => "{" + mString(named(c, i)) + ", " + mType(c) + "}").join(", ");
    const promoted = state.header === "false" ? "Csv" : "Table.PromoteHeaders(Csv, [PromoteAllScalars = true])";
    return "let\n    Source = " + web + ",\n" +
      "    Csv = Csv.Document(Source, [Delimiter = " + delim + ", Columns = " + cols.length + ", Encoding = 65001, QuoteStyle = QuoteStyle.Csv]),\n" +
      "    Promoted = " + promoted + ",\n" +
      "    Typed = Table.TransformColumnTypes(Promoted, {" + types + "}, " + (decimalComma() ? '"es-CL"' : '"en-US"') + ")\nin\n    Typed";
  }

  // appsScript is a Google Apps Script that fetches the choice as CSV with
  // the token in an Authorization header (kept in the script's
  // properties, never in the URL or the sheet), writes it to a sheet named
  // for the dataset, numbers as numbers, and installs an hourly trigger.
  // Every value is written as a JSON string, which JavaScript reads as
  // the same string whatever quotes, apostrophes, accents or & it holds.
  function appsScript() {
    const d = dataset();
    const url = location.origin + d.export + "?" + query(params({ format: "csv", plain: true, headers: true }));
    const numbers = [];
    shownColumns().forEach((c, i) => { if (c.type === "number" || c.type === "amount") numbers.push(i); });
    const sheet = state.header === "labels" ? words(d.title).slice(0, 90) : d.source;
    const j = (v) => JSON.stringify(v);
    return [
      "// informe: " + words(d.title),
      "const INFORME_URL = " + j(url) + ";",
      "const HOJA = " + j(sheet) + ";",
      "const NUMEROS = " + j(numbers) + "; // " + (lang === "es" ? "columnas con números" : "columns of numbers"),
      "",
      "function actualizar() {",
      "  const token = PropertiesService.getScriptProperties().getProperty('INFORME_TOKEN');",
      "  const res = UrlFetchApp.fetch(INFORME_URL, {headers: {Authorization: 'Bearer ' + token}, muteHttpExceptions: true});",
      "  if (res.getResponseCode() !== 200) {",
      "    throw new Error('informe: ' + res.getResponseCode() + ' ' + res.getContentText().slice(0, 300));",
      "  }",
      "  const filas = Utilities.parseCsv(res.getContentText('UTF-8'));",
      "  for (let i = " + (state.header === "false" ? 0 : 1) + "; i < filas.length; i++) {",
      "    for (const k of NUMEROS) if (filas[i][k] !== '') filas[i][k] = Number(filas[i][k]);",
      "  }",
      "  const libro = SpreadsheetApp.getActive();",
      "  const hoja = libro.getSheetByName(HOJA) || libro.insertSheet(HOJA);",
      "  hoja.clearContents();",
      "  if (filas.length) hoja.getRange(1, 1, filas.length, filas[0].length).setValues(filas);",
      "}",
      "",
      "function instalar() {",
      "  for (const t of ScriptApp.getProjectTriggers()) {",
      "    if (t.getHandlerFunction() === 'actualizar') ScriptApp.deleteTrigger(t);",
      "  }",
      "  ScriptApp.newTrigger('actualizar').timeBased().everyHours(1).create();",
      "  actualizar();",
      "}",
    ].join("\n");
  }

  function renderConnect() {
    const d = dataset();
    if (!condsValid()) {
      $("connect").replaceChildren(el("p", { id: "connect-invalid", className: "warn", textContent: t("connectInvalid") }));
      $("reveal").hidden = true;
      return;
    }
    const base = location.origin;
    const tok = revealed && token ? token : token ? "informe_" + "•".repeat(12) : t("noToken");
    const real = token || t("noToken");
    const fmt = state.format === "xlsx" ? "xlsx" : "csv";
    const tokenURL = (tk) => base + dataset().export + "?" + query(params({ format: "csv", plain: true, headers: true })) + "&access_token=" + tk;
    const od = [];
    const cols = chosenColumns();
    // Every column ticked is no choice at all: Power Query's URLs leave
    // it out, so that they stay within the 2,048 characters it takes.
    const every = cols.length === allColumns().length;
    if (cols.length && !every) od.push(["$select", cols.join(",")]);
    const conds = [];
    if (d.filters) {
      for (const f of FILTERS) {
        const v = state.filters[f];
        if (!v) continue;
        const prop = f === "rut" ? "client_rut" : f;
        conds.push(prop + " eq " + (f.endsWith("_id") ? v : "'" + v.replace(/'/g, "''") + "'"));
      }
    }
    if (filterExpr()) conds.push(filterExpr());
    if (conds.length) od.push(["$filter", conds.join(" and ")]);
    let odURL = base + "/odata/" + d.odata + (od.length ? "?" + query(od) : "");
    const pqNotes = {};
    if (every) pqNotes.odata = t("pqAll");
    if (odURL.length > PQ_MAX && od[0] && od[0][0] === "$select") {
      pqNotes.odata = t("pqLong", { n: number(odURL.length) });
      od.shift();
      odURL = base + "/odata/" + d.odata + (od.length ? "?" + query(od) : "");
    }
    if (odURL.length > PQ_MAX) pqNotes.odata = t("pqTooLong", { n: number(odURL.length) });
    const webURL = base + exportPath({ format: fmt, pq: true });
    if (webURL.length > PQ_MAX) pqNotes.web = t("pqTooLong", { n: number(webURL.length) });
    const file = d.source + "." + (state.format === "csv" && state.delimiter === "tab" ? "tsv" : state.format);
    const curl = "curl --fail --compressed -sS -u \"token:$INFORME_TOKEN\" -o " + file + ".tmp \\\n  " + sh(base + exportPath()) + " \\\n  && mv " + file + ".tmp " + file;
    const why = publicHTTPS();
    const items = [
      why
        ? { id: "importdata", unavailable: t("importdataNo", { origin: base, why: t(why) }) }
        : { id: "importdata", text: '=IMPORTDATA("' + tokenURL(tok) + '")', copy: '=IMPORTDATA("' + tokenURL(real) + '")', secret: true },
      { id: "web", text: webURL, note: pqNotes.web },
      { id: "m", text: mCode(fmt) },
      { id: "odata", text: odURL, note: pqNotes.odata },
      { id: "curl", text: curl },
    ];
    const flags = [];
    if (d.name !== "report") flags.push("--dataset " + d.source);
    if (cols.length) flags.push("--columns " + cols.join(","));
    if (d.filters) for (const f of FILTERS) if (state.filters[f]) flags.push("--" + f.replace(/_/g, "-") + " " + sh(state.filters[f]));
    if (filterExpr()) flags.push("--filter " + sh(filterExpr()));
    if (state.format === "csv") {
      if (state.delimiter !== "comma") flags.push("--delimiter " + state.delimiter);
      if (state.bom) flags.push("--bom");
      if (decimalComma()) flags.push("--decimal-comma");
      if (state.header === "false") flags.push("--no-header");
    }
    if ((state.format === "csv" || state.format === "xlsx") && state.header === "labels") flags.push("--labels " + lang);
    // A schedule of the same choice (docs/schedules.md).
    const schedule = "informe schedule add --name " + d.source + "-nightly " + flags.concat("--format " + state.format).join(" ") +
      " --cron \"0 6 * * *\" \\\n  --to \"file://$PWD/" + file.replace(".", "-{date}.") + "\" --token-name \"$INFORME_TOKEN_NAME\"";
    flags.push("--output " + file);
    items.push({ id: "cli", text: "informe export " + flags.join(" ") });
    items.push({ id: "schedule", text: schedule });
    items.push({ id: "libre", text: tokenURL(tok), copy: tokenURL(real), secret: true });
    items.push(why ? { id: "apps", unavailable: t("appsNo", { origin: base, why: t(why) }) } : { id: "apps", text: appsScript() });
    const wasFocused = document.activeElement && document.activeElement.closest("#connect") ? document.activeElement.id : "";
    $("connect").replaceChildren(...items.map((it) => {
      const kids = [el("h3", { id: "h-" + it.id, textContent: t(it.id) })];
      if (it.unavailable) {
        kids.push(el("p", { id: "c-" + it.id + "-unavailable", className: "warn", textContent: it.unavailable }));
        return el("div", { className: "connect-item" }, ...kids);
      }
      const area = el("textarea", { id: "c-" + it.id, readOnly: true, spellcheck: false, value: it.text, rows: textRows(it.text) });
      area.dataset.copy = it.copy || it.text;
      const btn = el("button", { type: "button", id: "copy-" + it.id, className: "copy", textContent: t("copy") });
      btn.setAttribute("aria-describedby", "h-" + it.id);
      btn.addEventListener("click", () => copy(area, btn));
      kids.push(el("p", { className: "hint", textContent: t(it.id + "How") }));
      if (it.secret) kids.push(el("p", { className: "warn", textContent: token ? t("secret") : t("noTokenNote") }));
      if (it.note) kids.push(el("p", { id: "c-" + it.id + "-note", className: "warn", textContent: it.note }));
      kids.push(el("label", { htmlFor: area.id, className: "visually-hidden", textContent: t(it.id) }), area, btn);
      return el("div", { className: "connect-item" }, ...kids);
    }));
    if (wasFocused && $(wasFocused)) $(wasFocused).focus();
    $("reveal").hidden = !token;
    $("reveal").textContent = revealed ? t("hide") : t("reveal");
    $("reveal").setAttribute("aria-pressed", String(revealed));
  }

  // textRows is the rows a text area needs to show text at the window's
  // width (about 8.5 px a character), at most 12.
  function textRows(text) {
    const perLine = Math.max(30, Math.floor(Math.min(window.innerWidth - 80, 1100) / 8.5));
    return Math.min(12, text.split("\n").reduce((n, line) => n + Math.max(1, Math.ceil(line.length / perLine)), 0));
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
      const next = lang === "es" ? "en" : "es";
      document.body.dataset.loading = "true";
      loadWords(next).then(() => {
        lang = next;
        document.cookie = "informe_lang=" + lang + "; path=/; SameSite=Strict";
        translate();
      }, () => {}).finally(() => { document.body.dataset.loading = "false"; });
    });
    $("search").addEventListener("input", renderGroups);
    $("all").addEventListener("click", () => {
      for (const n of allColumns()) if (!state.chosen.includes(n)) state.chosen.push(n);
      renderGroups(); renderOrder(); changed(true);
    });
    $("none").addEventListener("click", () => { state.chosen = []; renderGroups(); renderOrder(); changed(true); });
    $("reveal").addEventListener("click", () => { revealed = !revealed; renderConnect(); });
    $("format").addEventListener("change", (e) => { state.format = e.target.value; changed(true); });
    $("delimiter").addEventListener("change", (e) => { state.delimiter = e.target.value; changed(true); });
    $("header").addEventListener("change", (e) => { state.header = e.target.value; changed(true); });
    $("bom").addEventListener("change", (e) => { state.bom = e.target.checked; changed(true); });
    $("decimal").addEventListener("change", (e) => { state.decimal = e.target.checked; changed(true); });
    $("download").addEventListener("click", download);
    $("download-retry").addEventListener("click", () => download());
    $("download-cancel").addEventListener("click", () => {
      if (downloading) downloading.abort();
      $("download-status").textContent = t("dlCancelled");
    });
    $("add-cond").addEventListener("click", () => {
      const c = condColumns(dataset())[0];
      state.where.push({ col: c.name, op: opsFor(c)[0], v: "", fold: foldable(c) });
      renderConds("w" + (state.where.length - 1) + "-col");
      changed(true);
    });
    // A session that ended while the tab was in the background (the token
    // expired or was revoked) is told when the analyst comes back, not at
    // the next change.
    document.addEventListener("visibilitychange", async () => {
      if (document.visibilityState !== "visible" || !principal) return;
      const s = await fetch("/web/session").then((r) => r.json()).catch(() => ({ signed_in: true }));
      if (!s.signed_in && principal) sessionEnded();
    });
    readHash();
    translate();
    const [cat, who] = await Promise.all([
      fetch($("app").dataset.catalog).then((r) => r.json()),
      fetch("/web/session").then((r) => r.json()).catch(() => ({})),
    ]);
    unpack(cat, cat.datasets);
    full = cat;
    if (who.signed_in) {
      showBuilder(who);
      if (returnTo) goBack();
    } else {
      showSignIn(who.message && location.hash ? who.message + " " + t("sessionEnded") : who.message || "");
    }
    $("return-note").textContent = returnTo ? t("returnNote", { path: shownPath(returnTo) }) : "";
    $("return-note").hidden = !returnTo;
    // A link pasted into this open tab is applied, and told like any
    // other (the page's own changes replace the fragment, which fires no
    // hashchange).
    window.addEventListener("hashchange", () => {
      if (!readHash() || !principal) return;
      $("search").value = "";
      showBuilder(principal);
    });
    document.body.dataset.ready = "true";
    performance.mark("informe-ready");
  }

  start();
})();
