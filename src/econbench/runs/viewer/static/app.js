// econbench viewer: browse CoffeeBench runs and AlloBench cells, also while they are written.
// Every piece of run data (model text above all) enters the page as text (textContent or
// text nodes), never as HTML, so nothing a model writes can run here.
"use strict";

(() => {
  const params = new URLSearchParams(location.search);
  // A static bundle (econbench view --bundle): answers are files, nothing changes, no search.
  const BUNDLE = document.documentElement.dataset.bundle === "1";
  const POLL_MS = Math.max(100, Number(params.get("poll")) || 2000);
  const RUNS_POLL_MS = Math.max(100, Number(params.get("runs_poll")) || Math.max(POLL_MS, 5000));
  const FIRM_COLORS = {
    farmer_A: "#1b9e77",
    farmer_B: "#66a61e",
    roaster_A: "#d95f02",
    roaster_B: "#c9a100",
    retailer_A: "#7570b3",
    retailer_B: "#e7298a",
  };
  const SPARE_COLORS = ["#1f78b4", "#6a3d9a", "#b15928", "#33a02c", "#fb9a99", "#a6cee3"];
  const KINDS = {
    env: "environment",
    tool: "tool calls",
    model: "model calls",
    message: "messages",
  };
  // [daily.jsonl field, title, whether the y axis must show zero]
  const CHARTS = [
    ["cash", "Cash", false],
    ["revenue_cum", "Cumulative revenue", true],
    ["net_income_cum", "Net income (cumulative)", true],
  ];
  const PARTY_KEYS = ["firm", "seller", "buyer", "sender", "recipient", "issuer", "payer"];

  // ------------------------------------------------------------------ small helpers
  const $ = (id) => document.getElementById(id);

  function el(tag, props, ...kids) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(props || {})) {
      if (value === undefined || value === null || value === false) continue;
      if (key === "class") node.className = value;
      else if (key === "text") node.textContent = String(value);
      else if (key === "on") for (const [ev, fn] of Object.entries(value)) node.addEventListener(ev, fn);
      else if (key === "data") Object.assign(node.dataset, value);
      else if (key === "color") node.style.backgroundColor = value;
      else node.setAttribute(key, value === true ? "" : String(value));
    }
    for (const kid of kids.flat()) {
      if (kid === undefined || kid === null || kid === false) continue;
      node.append(kid instanceof Node ? kid : String(kid));
    }
    return node;
  }

  const SVG_NS = "http://www.w3.org/2000/svg";
  function svg(tag, attrs, text) {
    const node = document.createElementNS(SVG_NS, tag);
    for (const [key, value] of Object.entries(attrs || {})) node.setAttribute(key, String(value));
    if (text !== undefined) node.textContent = String(text);
    return node;
  }

  function clear(node) {
    node.replaceChildren();
    return node;
  }

  // A model's cost as every table shows it (econbench.runs.cost_display): "unpriced" for calls
  // of a model with no price, after the priced part when there is one; never $0.00 or n/a.
  function costText(value, unpriced) {
    const known = typeof value === "number" && Number.isFinite(value);
    if (!known) return unpriced ? "unpriced" : "–";
    return unpriced ? `${money(value)} + unpriced` : money(value);
  }

  function money(value) {
    if (typeof value !== "number" || !Number.isFinite(value)) return value == null ? "–" : String(value);
    const text = Math.abs(value).toLocaleString("en-US", {
      minimumFractionDigits: 2,
      maximumFractionDigits: 2,
    });
    return (value < 0 ? "−$" : "$") + text;
  }

  function num(value, digits = 3) {
    if (typeof value !== "number" || !Number.isFinite(value)) return value == null ? "–" : String(value);
    return Number.isInteger(value) ? String(value) : value.toFixed(digits);
  }

  function compact(value) {
    const abs = Math.abs(value);
    const trim = (text) => text.replace(/\.0$/, "");
    if (abs >= 1e6) return trim((value / 1e6).toFixed(abs >= 1e7 ? 0 : 1)) + "M";
    if (abs >= 1e3) return trim((value / 1e3).toFixed(abs >= 1e4 ? 0 : 1)) + "k";
    return String(Math.round(value * 100) / 100);
  }

  function json(value, indent) {
    try {
      return JSON.stringify(value, null, indent);
    } catch (err) {
      return String(value);
    }
  }

  function shortJson(value, max = 140) {
    const text = json(value);
    return text && text.length > max ? text.slice(0, max - 1) + "…" : text;
  }

  function firmColor(firm) {
    if (FIRM_COLORS[firm]) return FIRM_COLORS[firm];
    let h = 0;
    for (const ch of String(firm)) h = (h * 31 + ch.charCodeAt(0)) >>> 0;
    return SPARE_COLORS[h % SPARE_COLORS.length];
  }

  function swatch(firm) {
    return el("span", { class: "swatch", color: firmColor(firm) });
  }

  function firmTag(firm) {
    return el("span", { class: "firm-tag", color: firmColor(firm), text: firm });
  }

  function parties(ev) {
    const out = [];
    for (const key of PARTY_KEYS) if (typeof ev[key] === "string" && !out.includes(ev[key])) out.push(ev[key]);
    return out;
  }

  // A `paper` run logs the reference's `agent_step` (one applied turn): shown as a tool call.
  function asToolCall(ev) {
    if (ev.type !== "agent_step") return ev;
    return { ...ev, type: "tool_call", tool: ev.action, arguments: ev.action_input, result: ev.observation };
  }

  function kindOf(ev) {
    ev = asToolCall(ev);
    if (ev.type === "tool_call") return "tool";
    if (ev.type === "model_call" || ev.type === "model_retry" || ev.type === "compaction") return "model";
    if (ev.type === "message") return "message";
    return "env";
  }

  function tokens(usage) {
    return `${usage.input_tokens ?? 0} in / ${usage.output_tokens ?? 0} out tokens`;
  }

  function otherFields(ev) {
    const shown = ["seq", "day", "time", "type", "firm"];
    return Object.fromEntries(Object.entries(ev).filter(([key]) => !shown.includes(key)));
  }

  function details(label, body, open) {
    const box = el("details", { open: !!open }, el("summary", { text: label }));
    box.append(typeof body === "string" ? el("pre", { text: body }) : body);
    return box;
  }

  // -- JSON as DOM (text nodes only, never markup): a flat object as a key/value table,
  // anything nested indented under its key, each object or array foldable, folded from the
  // start when it is deep in the value or holds many entries.
  const FOLD_ENTRIES = 12;
  const INLINE_CHARS = 80; // a list of plain values shorter than this stays on one line

  function isPlain(value) {
    return value === null || typeof value !== "object";
  }

  function jsonScalar(value) {
    const kind = value === null ? "null" : typeof value;
    const text = typeof value === "string" ? value : json(value);
    return el("span", { class: `j-${kind}${typeof value === "string" && value.includes("\n") ? " j-multiline" : ""}`, text });
  }

  function jsonView(value) {
    return el("div", { class: "json" }, jsonNode(value, 0));
  }

  function jsonNode(value, depth) {
    if (isPlain(value)) return jsonScalar(value);
    const entries = Array.isArray(value) ? value.map((v, i) => [String(i), v]) : Object.entries(value);
    if (!entries.length) return el("span", { class: "j-null", text: Array.isArray(value) ? "[]" : "{}" });
    if (entries.every(([, v]) => isPlain(v))) {
      if (Array.isArray(value) && json(value).length <= INLINE_CHARS) {
        return el("span", { class: "j-inline", text: value.map((v) => (typeof v === "string" ? v : json(v))).join(", ") });
      }
      if (!Array.isArray(value) && entries.length <= FOLD_ENTRIES * 2) return jsonTable(entries);
    }
    const rows = el(
      "div",
      { class: "j-entries" },
      entries.map(([key, v]) => el("div", { class: "j-row" }, el("span", { class: "j-key", text: key }), jsonNode(v, depth + 1))),
    );
    const count = Array.isArray(value) ? `${entries.length} items` : `${entries.length} keys`;
    if (depth === 0) return rows;
    const open = depth < 2 && entries.length <= FOLD_ENTRIES;
    return el("details", { class: "j-node", open }, el("summary", { text: count }), rows);
  }

  function jsonTable(entries) {
    return el(
      "table",
      { class: "j-kv" },
      entries.map(([key, v]) => el("tr", {}, el("th", { text: key }), el("td", {}, jsonScalar(v)))),
    );
  }

  // A value that may be JSON text (a tool result as the model saw it): shown as JSON if so.
  function textOrJson(text) {
    const trimmed = String(text).trim();
    if (/^[[{]/.test(trimmed)) {
      try {
        return jsonView(JSON.parse(trimmed));
      } catch (err) {
        // not JSON after all: shown as the text it is
      }
    }
    return el("pre", { class: "msg-text", text });
  }

  // The file of an API answer in a bundle (bundle.py's bundle_name, computed the same way).
  function bundlePath(path) {
    const url = new URL(path, location.origin);
    const query = [...url.searchParams].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    const parts = url.pathname.replace(/^\/api\//, "").split("/").concat(query.map(([k, v]) => `${k}-${v}`));
    return "data/" + parts.map(encodeURIComponent).join("/") + ".json";
  }

  async function api(path) {
    const response = await fetch(BUNDLE ? bundlePath(path) : path, { cache: BUNDLE ? "default" : "no-store" });
    let body = null;
    try {
      body = await response.json();
    } catch (err) {
      body = null;
    }
    if (!response.ok) throw new Error((body && body.error) || `HTTP ${response.status}`);
    $("conn").hidden = true;
    return body;
  }

  function badge(status) {
    return el("span", { class: `badge status-${status}`, text: status, data: { status } });
  }

  // ------------------------------------------------------------------ state
  const state = {
    runs: [],
    runId: null,
    run: null,
    token: 0,
    timer: null,
    coffee: null,
    allo: null,
    view: "run", // or "table": the runs table
    routed: false,
    routedHash: null, // the hash last shown (see writeHash)
    opening: null, // the token of the run being opened, while it opens
    pending: null, // a hash routed while the run opened, shown once it is open
    collapsed: new Map(), // run-list group -> folded (true) or unfolded (false) by hand
    filter: "",
    sweep: null,
    table: { sort: null, desc: false, text: "", policy: "", status: "" },
  };

  // ------------------------------------------------------------------ deep links
  // The hash names what is shown: #run=ID[&tab=T&day=N&firm=F | &episode=N], or #view=table.
  // Every number in it is the number the page shows: day=N opens "Day N" (days count from 0,
  // as the economy's logs do) and episode=N opens "Episode N" (episodes count from 1; the API
  // and episodes.jsonl count them from 0). Choosing a run, a tab, an episode or the table adds
  // a history entry, so back and forward step through them; moving within a view (a day, a
  // firm) rewrites the current entry, so a link always opens where one was. The page follows
  // the hash whoever changes it (back, forward, a link pasted into the open tab).
  function hashParams() {
    return new URLSearchParams(location.hash.slice(1));
  }

  function go(params) {
    const text = "#" + new URLSearchParams(params).toString();
    if (location.hash === text) route();
    else location.hash = text; // fires hashchange, which routes
  }

  // The current view with `changes` applied, as a new history entry (a tab, an episode).
  function navigate(changes) {
    const p = shownParams();
    for (const [key, value] of Object.entries(changes)) p.set(key, value);
    go(p);
  }

  // The hash of an episode (0-based, as the API counts) and back.
  const episodeHash = (index) => String(index + 1);

  function episodeOfHash(p) {
    const text = p.get("episode");
    if (text === null || !/^[0-9]+$/.test(text)) return null;
    const n = Number(text);
    return n >= 1 && Number.isSafeInteger(n) ? n - 1 : null;
  }

  function shownParams() {
    const p = new URLSearchParams();
    if (state.view === "table") p.set("view", "table");
    else if (state.runId) {
      p.set("run", state.runId);
      const c = state.coffee;
      if (state.run && state.run.benchmark === "coffee" && c && c.index) {
        p.set("tab", c.tab);
        if (c.day !== null && c.day !== undefined) p.set("day", c.day);
        if (c.tab === "transcript" && c.transcriptFirm) p.set("firm", c.transcriptFirm);
      }
      const a = state.allo;
      if (state.run && state.run.benchmark === "allo" && a && a.selected !== null) {
        p.set("episode", episodeHash(a.selected));
      }
    }
    return p;
  }

  function writeHash() {
    // Refine the current entry only while it is the one last routed: after back, forward or
    // a pasted link the entry names the next view, whose hashchange has not been handled yet.
    if (state.routedHash !== null && location.hash !== state.routedHash) return;
    if (state.opening === state.token) return; // a run is opening: its hash says what it wants
    const text = "#" + shownParams().toString();
    if (location.hash !== text) history.replaceState(null, "", text);
    state.routedHash = location.hash;
  }

  function route() {
    state.routedHash = location.hash;
    const p = hashParams();
    if (p.get("view") === "table") {
      if (state.view !== "table") showTable();
      return;
    }
    const wanted = p.get("run");
    const run = state.runs.find((r) => r.id === wanted);
    if (!run) {
      if (!state.runId && state.runs.length) {
        history.replaceState(null, "", `#run=${encodeURIComponent(state.runs[0].id)}`); // unknown id
        state.routedHash = location.hash;
        selectRun(state.runs[0].id, new URLSearchParams());
      }
      return;
    }
    if (run.id !== state.runId || state.view !== "run" || !state.run) selectRun(run.id, p);
    else if (state.opening === state.token) state.pending = p; // applied once the run is open
    else showWithin(p);
  }

  // Show what the hash names inside the run already open: its tab, day and firm, or episode.
  function showWithin(p) {
    const run = state.run;
    const c = state.coffee;
    if (run.benchmark === "coffee" && c && c.index) {
      const firm = p.get("firm");
      if (firm && firm !== c.transcriptFirm && c.index.firms.includes(firm)) chooseFirm(firm);
      const day = p.has("day") ? Number(p.get("day")) : NaN;
      if (Number.isInteger(day) && day !== c.day && dayInfo(day)) pickDay(day);
      const tab = p.get("tab");
      if (TABS.includes(tab) && tab !== c.tab) showTab(tab);
    }
    const a = state.allo;
    if (run.benchmark === "allo" && a) {
      const n = episodeOfHash(p);
      if (n !== null && n !== a.selected && n < a.episodes.length) openEpisode(state.token, n);
    }
    writeHash();
  }

  function freshCoffee(tab) {
    return {
      index: null,
      day: null,
      follow: true,
      tab: tab || "timeline",
      dayEvents: [],
      hiddenFirms: new Set(),
      hiddenKinds: new Set(),
      transcriptFirm: null,
      daily: [],
      ledger: { deals: [], invoices: [] },
      ledgerVersion: -1,
      ledgerFirm: "",
    };
  }

  function freshAllo() {
    return { episodes: [], selected: null, record: null, decisionsOnly: false };
  }

  // ------------------------------------------------------------------ run list
  async function loadRuns() {
    let body;
    try {
      body = await api("/api/runs");
    } catch (err) {
      $("conn").hidden = false;
      return;
    }
    state.runs = body.runs;
    const mine = state.runs.find((r) => r.id === state.runId);
    if (mine && state.run && mine.status === "running" && state.run.status !== "running") {
      state.run.status = "running"; // the run was started again: follow it
      schedule(state.token);
    }
    state.sweep = body.sweep;
    $("root").textContent = body.root;
    $("run-count").textContent = `(${body.runs.length})`;
    renderRunList();
    if (state.view === "table") renderRunsTable();
    if (!state.routed && (state.runs.length || hashParams().get("view") === "table")) {
      state.routed = true;
      route();
    } else if (!state.runs.length && state.view === "run") {
      $("placeholder").textContent = "No runs yet: waiting for the first one to appear.";
    }
  }

  // -- the run list: runs grouped by the folder that holds them (a sweep's cell, an
  // experiment), so that its many `seed_0`s are told apart by where they lie; groups fold,
  // and a filter keeps the runs whose path, benchmark, label, actors or condition match.
  const OPEN_GROUPS = 8; // with more groups than this, only the selected run's starts open

  // The seed, unless the brief already names it (runs of a sweep differ by it alone).
  function seedText(run) {
    if (run.seed === null || run.seed === undefined || /\bseed\b/.test(run.brief || "")) return "";
    return ` · seed ${run.seed}`;
  }

  function runWords(run) {
    const words = [run.rel, run.label, run.benchmark, run.brief, run.condition, run.status, ...(run.actors || [])];
    return words.filter(Boolean).join(" ").toLowerCase();
  }

  // Every whitespace-separated term of the filter must occur in the run's words.
  function runMatches(run, terms) {
    const words = runWords(run);
    return terms.every((term) => words.includes(term));
  }

  function runGroups(runs) {
    const groups = new Map();
    for (const run of runs) {
      const key = run.group ?? "";
      if (!groups.has(key)) groups.set(key, []);
      groups.get(key).push(run);
    }
    return groups;
  }

  function groupOpen(key, runs, count, filtering) {
    if (filtering || count === 1) return true;
    if (state.collapsed.has(key)) return !state.collapsed.get(key);
    return count <= OPEN_GROUPS || runs.some((r) => r.id === state.runId);
  }

  function renderRunList() {
    const list = $("run-list");
    const terms = state.filter.toLowerCase().split(/\s+/).filter(Boolean);
    const shown = terms.length ? state.runs.filter((r) => runMatches(r, terms)) : state.runs;
    $("run-filter-count").textContent = terms.length ? `${shown.length} of ${state.runs.length} runs match` : "";
    const groups = runGroups(shown);
    const nodes = [];
    for (const [key, runs] of groups) {
      const open = groupOpen(key, runs, groups.size, terms.length > 0);
      const items = el("ul", { class: "group-runs", hidden: !open }, runs.map(runItem));
      const box = el("section", { class: "run-group", data: { group: key } });
      if (groups.size > 1) box.append(groupHead(key, runs, open));
      box.append(items);
      nodes.push(box);
    }
    if (!nodes.length && terms.length) nodes.push(el("p", { class: "muted", text: "No run matches the filter." }));
    list.replaceChildren(...nodes);
  }

  function groupHead(key, runs, open) {
    const running = runs.filter((r) => r.status === "running").length;
    const live = running ? ` · ${running} running` : "";
    const head = el(
      "button",
      { type: "button", class: "group-head", "aria-expanded": String(open), title: key || "(top level)" },
      el("span", { class: "fold", text: open ? "▾" : "▸" }),
      el("span", { class: "group-path", text: key ? `${key}/` : "(top level)" }),
      el("span", { class: "muted", text: ` ${runs.length}${live}` }),
    );
    head.addEventListener("click", () => {
      state.collapsed.set(key, open);
      renderRunList();
    });
    return head;
  }

  function runItem(run) {
    const label = run.label && run.label !== run.name ? ` · ${run.label}` : "";
    return el(
      "li",
      {
        class: run.id === state.runId ? "selected" : "",
        data: { id: run.id },
        title: run.rel,
        on: { click: () => go({ run: run.id }) },
      },
      el("div", {}, el("span", { class: "run-label", text: run.name || run.label }), badge(run.status)),
      el(
        "div",
        { class: "run-brief" },
        el("span", { class: "bench", text: run.benchmark }),
        label,
        ` · ${run.brief || ""}`,
        seedText(run),
      ),
    );
  }

  function setStatus(status) {
    if (!state.run) return;
    state.run.status = status;
    const row = state.runs.find((r) => r.id === state.runId);
    if (row && row.status !== status) {
      row.status = status;
      renderRunList();
    }
    const head = document.querySelector("#run-head .badge");
    if (head) head.replaceWith(badge(status));
  }

  // ------------------------------------------------------------------ selecting a run
  function stopPolling() {
    if (state.timer) clearTimeout(state.timer);
    state.timer = null;
  }

  function schedule(token) {
    stopPolling();
    if (BUNDLE) return;
    if (state.run && state.run.status === "running") {
      state.timer = setTimeout(() => poll(token), POLL_MS);
    }
  }

  async function poll(token) {
    if (token !== state.token) return;
    try {
      if (state.run.benchmark === "coffee") await pollCoffee(token);
      else await pollAllo(token);
    } catch (err) {
      $("conn").hidden = false;
    }
    if (token !== state.token) return;
    if (state.run.status !== "running") {
      await refreshHead(token);
    }
    schedule(token);
  }

  async function refreshHead(token) {
    try {
      const run = await api(`/api/run/${state.runId}`);
      if (token !== state.token) return;
      state.run = run;
      renderHead();
      setStatus(run.status);
    } catch (err) {
      $("conn").hidden = false;
    }
  }

  async function selectRun(id, want) {
    stopPolling();
    const token = ++state.token;
    state.runId = id;
    state.view = "run";
    state.opening = token;
    state.pending = null;
    $("runs-table").hidden = true;
    $("show-table").classList.remove("active");
    renderRunList();
    let run;
    try {
      run = await api(`/api/run/${id}`);
    } catch (err) {
      if (token !== state.token) return;
      state.opening = null;
      $("placeholder").textContent = `Cannot open this run: ${err.message}`;
      $("placeholder").hidden = false;
      $("run").hidden = true;
      return;
    }
    if (token !== state.token) return;
    state.run = run;
    $("placeholder").hidden = true;
    $("run").hidden = false;
    $("coffee").hidden = run.benchmark !== "coffee";
    $("allo").hidden = run.benchmark !== "allo";
    renderHead();
    try {
      if (run.benchmark === "coffee") await openCoffee(token, want);
      else await openAllo(token, want);
    } catch (err) {
      $("conn").hidden = false; // the server went away mid-way: the next poll tries again
    } finally {
      if (state.opening === token) state.opening = null;
    }
    if (token !== state.token) return;
    const pending = state.pending;
    state.pending = null;
    if (pending) showWithin(pending);
    else writeHash();
    schedule(token);
  }

  function progressText(progress) {
    if (!progress || typeof progress.done !== "number") return "";
    const cost = typeof progress.cost_usd === "number" && progress.cost_usd > 0 ? ` · ${money(progress.cost_usd)} spent` : "";
    return `· ${progress.done} of ${progress.total} ${progress.unit}s${cost}`;
  }

  function updateProgress(progress) {
    if (!state.run || progress === undefined) return;
    state.run.progress = progress;
    const node = $("progress");
    if (node) node.textContent = progressText(progress);
  }

  function fact(label, value) {
    return el("span", { class: "fact" }, `${label} `, el("b", { text: value }));
  }

  function renderHead() {
    const run = state.run;
    const head = clear($("run-head"));
    head.append(
      el(
        "div",
        { class: "title" },
        el("h2", { text: run.label }),
        badge(run.status),
        el("span", { class: "muted", text: `${run.benchmark === "coffee" ? "CoffeeBench" : "AlloBench"} · ${run.brief || ""}` }),
        el("span", { id: "progress", class: "muted", text: progressText(run.progress) }),
      ),
      el("div", { class: "muted", text: run.path }),
    );
    if (run.benchmark === "coffee") renderCoffeeHead(head);
    else renderAlloHead(head);
    const stopped = run.summary && run.summary.stopped;
    if (stopped) {
      head.append(el("p", { class: "error-box", text: `Stopped on ${stopped.at}: ${stopped.error_type}: ${stopped.error}` }));
    }
  }

  // ------------------------------------------------------------------ CoffeeBench
  function policyOf(firm) {
    const agents = (state.run.config && state.run.config.agents) || {};
    const summaryFirm = state.run.summary && state.run.summary.firms && state.run.summary.firms[firm];
    return (summaryFirm && summaryFirm.policy) || agents[firm] || agents.default || "scripted";
  }

  function latestRows() {
    const latest = {};
    for (const row of state.coffee ? state.coffee.daily : []) latest[row.firm] = row;
    return latest;
  }

  function renderCoffeeHead(head) {
    const run = state.run;
    const c = state.coffee;
    const config = run.config || {};
    const summary = run.summary;
    const lastDay = c && c.index && c.index.last_day;
    head.append(
      el(
        "div",
        { class: "facts" },
        fact("seed", config.seed ?? run.meta.seed ?? "–"),
        fact("days", summary ? `${summary.days_run} of ${summary.days}` : `${lastDay ?? "–"} of ${config.days ?? "?"}`),
        summary ? fact("deals", summary.deals) : null,
        summary ? fact("consumer sales", `${summary.consumer_sales_kg} kg`) : null,
        c && c.index ? fact("events", c.index.events.toLocaleString("en-US")) : null,
      ),
    );
    const firms = (c && c.index && c.index.firms) || Object.keys((summary && summary.firms) || {});
    if (!firms.length) return;
    const latest = latestRows();
    const usage = (c && c.index && c.index.usage) || {};
    const table = el("table", { id: "firm-table" });
    table.append(
      el(
        "tr",
        {},
        ["firm", "policy", "cash", "revenue", "net income", "model calls", "model cost"].map((h, i) =>
          el("th", { class: i > 1 ? "num" : "", text: h }),
        ),
      ),
    );
    for (const firm of firms) {
      const row = latest[firm] || {};
      const u = usage[firm];
      table.append(
        el(
          "tr",
          {},
          el("td", {}, firmTag(firm)),
          el("td", { text: policyOf(firm) }),
          el("td", { class: "num", text: money(row.cash) }),
          el("td", { class: "num", text: money(row.revenue_cum) }),
          el("td", { class: "num", text: money(row.net_income_cum) }),
          el("td", { class: "num", text: u ? u.calls : "–" }),
          el("td", { class: "num", text: u ? costText(u.cost_usd, u.unpriced_calls > 0) : "–" }),
        ),
      );
    }
    head.append(el("div", { class: "table-wrap" }, table));
  }

  const TABS = ["timeline", "transcript", "ledger", "charts"];

  async function openCoffee(token, want) {
    want = want || new URLSearchParams();
    const tab = TABS.includes(want.get("tab")) ? want.get("tab") : state.coffee && state.coffee.tab;
    const c = (state.coffee = freshCoffee(tab));
    clear($("day-list"));
    clear($("timeline"));
    clear($("transcript"));
    clear($("transcript-nav"));
    clear($("coffee-hits"));
    const index = await api(`/api/run/${state.runId}/index`);
    if (token !== state.token) return;
    c.index = index;
    // A live run follows its latest day; a finished one opens at its start, day 0.
    const wantDay = want.has("day") ? Number(want.get("day")) : NaN;
    const live = state.run.status === "running";
    if (index.days.some((d) => d.day === wantDay)) {
      c.day = wantDay;
      c.follow = live && wantDay === index.last_day;
    } else {
      c.day = live || !index.days.length ? index.last_day : index.days[0].day;
      c.follow = live;
    }
    const wantFirm = want.get("firm");
    c.transcriptFirm = index.firms.includes(wantFirm) ? wantFirm : index.model_firms[0] || index.firms[0] || null;
    $("follow").checked = c.follow;
    renderFilters();
    renderDayList();
    showTab(c.tab);
    await Promise.all([loadDay(token), loadDaily(token), loadLedger(token)]);
    if (token !== state.token) return;
    renderHead();
  }

  async function pollCoffee(token) {
    const c = state.coffee;
    const before = c.index;
    const index = await api(`/api/run/${state.runId}/index`);
    if (token !== state.token) return;
    if (index.events < before.events || index.daily_rows < c.daily.length) {
      selectRun(state.runId); // the run was started again from scratch: read it afresh
      return;
    }
    c.index = index;
    setStatus(index.status);
    updateProgress(index.progress);
    const grewDays = index.last_day !== before.last_day;
    if (grewDays && c.follow) {
      c.day = index.last_day;
      writeHash();
    }
    renderDayList();
    const count = (idx) => (idx.days.find((d) => d.day === c.day) || { count: 0 }).count;
    const jobs = [];
    if (grewDays && c.follow) jobs.push(loadDay(token));
    else if (count(index) !== count(before)) jobs.push(loadDay(token, true));
    if (index.daily_rows > c.daily.length) jobs.push(loadDaily(token));
    if (index.ledger_version !== c.ledgerVersion) jobs.push(loadLedger(token));
    await Promise.all(jobs);
    if (token !== state.token) return;
    if (index.events !== before.events) renderHead();
  }

  function dayInfo(day) {
    return state.coffee.index.days.find((d) => d.day === day);
  }

  function renderDayList() {
    const c = state.coffee;
    const list = $("day-list");
    const chips = new Map([...list.children].map((chip) => [Number(chip.dataset.day), chip]));
    for (const info of c.index.days) {
      let chip = chips.get(info.day);
      if (!chip) {
        const day = info.day;
        chip = el("button", { type: "button", class: "day-chip", data: { day }, text: day });
        chip.addEventListener("click", () => pickDay(day));
        list.append(chip);
      }
      chip.title = `day ${info.day}: ${info.count} events${info.complete ? "" : " (in progress)"}`;
      chip.classList.toggle("partial", !info.complete);
      chip.classList.toggle("selected", info.day === c.day);
    }
    for (const [day, chip] of chips) if (!dayInfo(day)) chip.remove();
    renderDayLabel();
  }

  function renderDayLabel() {
    const c = state.coffee;
    const days = c.index.days.map((d) => d.day);
    const info = dayInfo(c.day);
    $("day-label").textContent =
      c.day === null || c.day === undefined
        ? "no events yet"
        : `Day ${c.day} · ${info ? info.count : 0} events${info && !info.complete ? " · in progress" : ""}`;
    $("day-prev").disabled = !days.length || c.day <= days[0];
    $("day-next").disabled = !days.length || c.day >= days[days.length - 1];
  }

  function pickDay(day) {
    const c = state.coffee;
    if (!dayInfo(day)) return;
    c.day = day;
    c.follow = day === c.index.last_day && c.follow;
    $("follow").checked = c.follow;
    for (const chip of $("day-list").children) chip.classList.toggle("selected", Number(chip.dataset.day) === day);
    renderDayLabel();
    writeHash();
    loadDay(state.token);
    if (c.tab === "charts") renderCharts();
  }

  function stepDay(delta) {
    const c = state.coffee;
    const days = c.index.days.map((d) => d.day);
    const at = days.indexOf(c.day);
    const next = days[Math.min(days.length - 1, Math.max(0, at + delta))];
    if (next !== undefined) pickDay(next);
  }

  function showTab(tab) {
    const c = state.coffee;
    c.tab = tab;
    for (const button of document.querySelectorAll(".tabs button")) {
      button.classList.toggle("active", button.dataset.tab === tab);
    }
    for (const name of ["timeline", "transcript", "ledger", "charts"]) $(`tab-${name}`).hidden = name !== tab;
    $("day-bar").hidden = tab === "ledger";
    writeHash();
    if (tab === "transcript") loadTranscript(state.token);
    if (tab === "charts") renderCharts();
    if (tab === "ledger") renderLedger();
  }

  function renderFilters() {
    const c = state.coffee;
    const firms = clear($("firm-filter"));
    for (const firm of c.index.firms) {
      const chip = el("button", { type: "button", class: "chip", data: { firm } }, swatch(firm), firm);
      chip.classList.toggle("off", c.hiddenFirms.has(firm));
      chip.addEventListener("click", () => {
        if (c.hiddenFirms.has(firm)) c.hiddenFirms.delete(firm);
        else c.hiddenFirms.add(firm);
        chip.classList.toggle("off", c.hiddenFirms.has(firm));
        renderTimeline();
      });
      firms.append(chip);
    }
    const kinds = clear($("kind-filter"));
    for (const [kind, label] of Object.entries(KINDS)) {
      const chip = el("button", { type: "button", class: "chip", data: { kind }, text: label });
      chip.classList.toggle("off", c.hiddenKinds.has(kind));
      chip.addEventListener("click", () => {
        if (c.hiddenKinds.has(kind)) c.hiddenKinds.delete(kind);
        else c.hiddenKinds.add(kind);
        chip.classList.toggle("off", c.hiddenKinds.has(kind));
        renderTimeline();
      });
      kinds.append(chip);
    }
    const select = $("ledger-firm");
    const options = c.index.firms.map((f) => el("option", { value: f, text: f }));
    select.replaceChildren(el("option", { value: "", text: "all firms" }), ...options);
    select.value = c.ledgerFirm;
    const tfirms = clear($("transcript-firms"));
    for (const firm of c.index.firms) {
      const isModel = c.index.model_firms.includes(firm);
      const label = isModel ? " · model" : "";
      const chip = el("button", { type: "button", class: "chip", data: { firm } }, swatch(firm), firm, label);
      chip.classList.toggle("active", firm === c.transcriptFirm);
      chip.addEventListener("click", () => chooseFirm(firm));
      tfirms.append(chip);
    }
  }

  function chooseFirm(firm) {
    state.coffee.transcriptFirm = firm;
    for (const chip of $("transcript-firms").children) chip.classList.toggle("active", chip.dataset.firm === firm);
    writeHash();
    loadTranscript(state.token);
  }

  // -- timeline
  async function loadDay(token, appendOnly) {
    const c = state.coffee;
    const day = c.day;
    if (day === null || day === undefined) {
      c.dayEvents = [];
      renderTimeline();
      return;
    }
    const body = await api(`/api/run/${state.runId}/day/${day}`);
    if (token !== state.token || day !== c.day) return;
    const known = appendOnly && c.dayEvents.length ? c.dayEvents[c.dayEvents.length - 1].seq : null;
    const fresh = known === null ? null : body.events.filter((ev) => ev.seq > known);
    c.dayEvents = body.events;
    if (fresh) appendTimeline(fresh);
    else renderTimeline();
    if (c.tab === "transcript") loadTranscript(token);
  }

  function visible(ev) {
    const c = state.coffee;
    if (c.hiddenKinds.has(kindOf(ev))) return false;
    const who = parties(ev);
    return !who.length || who.some((f) => !c.hiddenFirms.has(f));
  }

  function renderTimeline() {
    const box = clear($("timeline"));
    appendTimeline(state.coffee.dayEvents);
    if (!box.children.length) box.append(el("p", { class: "muted", text: "No events to show for this day and filter." }));
  }

  function appendTimeline(events) {
    const box = $("timeline");
    const empty = box.querySelector("p.muted");
    if (empty && events.some(visible)) empty.remove();
    let group = box.lastElementChild && box.lastElementChild.classList.contains("group") ? box.lastElementChild : null;
    for (const ev of events) {
      if (!visible(ev)) continue;
      if (!group || group.dataset.time !== ev.time) {
        group = el("div", { class: "group", data: { time: ev.time } }, el("div", { class: "group-time", text: ev.time }));
        box.append(group);
      }
      group.append(eventRow(ev));
    }
  }

  function eventRow(ev) {
    ev = asToolCall(ev);
    const who = parties(ev);
    const failed = ev.type === "tool_call" && ev.result && ev.result.status === "error";
    const row = el(
      "div",
      { class: `ev ev-${ev.type}${failed ? " error" : ""}`, data: { seq: ev.seq, type: ev.type } },
      who.length ? firmTag(who[0]) : el("span", { class: "firm-tag", color: "#8a94a6", text: "market" }),
      el("span", { class: "type", text: ev.type }),
      el("span", { class: "desc", text: describe(ev) }),
    );
    row.addEventListener("click", (e) => {
      if (e.target.closest(".json")) return;
      const open = row.querySelector(".json");
      if (open) open.remove();
      else row.append(jsonView(ev));
    });
    return row;
  }

  function item(name) {
    return String(name || "").replace(/_kg$/, "").replace(/_/g, " ");
  }

  function describe(ev) {
    switch (ev.type) {
      case "tool_call": {
        const result = ev.result || {};
        const outcome = result.status === "error" ? `error: ${result.error || result.message || ""}` : result.status || "";
        return `${ev.tool ?? "(no call)"}(${shortJson(ev.arguments || {}, 100)}) → ${outcome}`;
      }
      case "model_call": {
        const calls = (ev.tool_calls || []).map((t) => `${t.name}(${shortJson(t.arguments || {}, 60)})`).join(", ");
        const text = (ev.text || "").replace(/\s+/g, " ").trim();
        const said = text ? `“${text.length > 120 ? text.slice(0, 119) + "…" : text}” ` : "";
        return `${ev.model || ""}: ${said}${calls ? "→ " + calls : ""}`;
      }
      case "message":
        return `${ev.sender} → ${ev.recipient}: ${ev.title || ""}`;
      case "listing":
        return `${ev.qty} kg ${item(ev.item)} at ${money(ev.price)}/kg, ${ev.terms}-day terms${ev.updated ? " (updated)" : ""}`;
      case "offer":
        return `${ev.buyer} offers ${ev.seller} ${money(ev.price)}/kg for ${ev.qty} kg ${item(ev.item)} (${ev.offer_id})`;
      case "deal":
        return `${ev.seller} sells ${ev.buyer} ${ev.qty} kg ${item(ev.item)} at ${money(ev.price)}/kg (${ev.deal_id})`;
      case "delivery":
        return `${ev.qty} kg ${item(ev.item)} delivered ${ev.seller} → ${ev.buyer} (${ev.deal_id})`;
      case "invoice":
        return `${ev.invoice_id}: ${ev.payer} owes ${ev.issuer} ${money(ev.amount)}, due day ${ev.due_day}`;
      case "payment":
        return `${ev.payer} paid ${ev.issuer} ${money(ev.amount)} (${ev.invoice_id})`;
      case "consumer_sale":
        return `${ev.qty} kg ${item(ev.item)} at ${money(ev.price)} = ${money(ev.revenue)}`;
      case "opex":
        return `fixed costs ${money(ev.amount)}`;
      case "production":
      case "roast":
        return `${ev.qty} kg ${item(ev.item)} ready day ${ev.ready_day} (${ev.batch_id})`;
      case "day_end":
        return `day closed · roaster_A net income ${money(ev.focal_net_income)}`;
      default: {
        const rest = Object.entries(otherFields(ev));
        return rest.map(([k, v]) => `${k}=${typeof v === "object" ? shortJson(v, 60) : v}`).join(" ");
      }
    }
  }

  // -- transcript
  async function loadTranscript(token) {
    const c = state.coffee;
    const box = $("transcript");
    if (!c.transcriptFirm || c.day === null || c.day === undefined) {
      leaveTranscript(box).append(el("p", { class: "muted", text: "No transcript yet." }));
      return;
    }
    const firm = c.transcriptFirm;
    const day = c.day;
    let body;
    try {
      body = await api(`/api/run/${state.runId}/transcript?firm=${encodeURIComponent(firm)}&day=${day}`);
    } catch (err) {
      leaveTranscript(box).append(el("p", { class: "error-box", text: err.message }));
      return;
    }
    if (token !== state.token || firm !== c.transcriptFirm || day !== c.day) return;
    const nav = clear($("transcript-nav"));
    nav.append(
      dayButton(body.prev_day, `◀ day ${body.prev_day ?? "–"}`),
      el("span", {}, firmTag(firm), ` on day ${day}: ${body.entries.length} entries`),
      dayButton(body.next_day, `day ${body.next_day ?? "–"} ▶`),
    );
    keepBoxes(box);
    clear(box);
    if (!body.entries.length) box.append(el("p", { class: "muted", text: `${firm} did nothing on day ${day}.` }));
    for (const entry of modelActions(body.entries)) {
      box.append(entry.model ? actionCard(entry, firm) : transcriptEntry(entry.event, firm));
    }
    box.dataset.shown = `${state.runId}|${firm}|${day}`;
    reopenBoxes(box);
  }

  // The transcript is drawn again whenever it may have changed: a poll of a live run, a
  // second route, a tab or day shown again. The boxes a reader opened or closed stay as
  // they were: each one's state is kept under the transcript it was in (run, firm, day)
  // and its place in it, which a redraw of the same entries gives back (new entries come
  // after the old ones).
  const keptBoxes = new Map();

  function boxPath(root, node) {
    const steps = [];
    for (; node !== root; node = node.parentElement) {
      steps.push(Array.prototype.indexOf.call(node.parentElement.children, node));
    }
    return steps.reverse().join(".");
  }

  function leaveTranscript(root) {
    keepBoxes(root);
    delete root.dataset.shown;
    return clear(root);
  }

  function keepBoxes(root) {
    const shown = root.dataset.shown;
    if (!shown) return;
    const states = new Map();
    for (const box of root.querySelectorAll("details")) states.set(boxPath(root, box), box.open);
    keptBoxes.set(shown, states);
  }

  function reopenBoxes(root) {
    const states = keptBoxes.get(root.dataset.shown);
    if (!states) return;
    for (const box of root.querySelectorAll("details")) {
      const open = states.get(boxPath(root, box));
      if (open !== undefined && open !== box.open) box.open = open; // a prompt box loads on "toggle"
    }
  }

  // One card per model action, as Inspect's sample view shows one: a model_call with the
  // tool_call events that applied the calls it made (the next ones of the firm, in the
  // order of its calls; a reply without a call applies a tool_call with no tool). Anything
  // else — messages, compactions, a scripted turn — is an entry of its own.
  function modelActions(entries) {
    const out = [];
    let open = null;
    for (const raw of entries) {
      const ev = asToolCall(raw);
      if (ev.type === "model_call") {
        open = { model: ev, calls: ev.tool_calls || [], applied: [] };
        out.push(open);
        continue;
      }
      if (ev.type === "tool_call" && open && appliesNext(open, ev)) {
        open.applied.push(ev);
        continue;
      }
      if (ev.type === "compaction" || ev.type === "tool_call") open = null;
      out.push({ event: ev });
    }
    return out;
  }

  function appliesNext(action, ev) {
    const at = action.applied.length;
    if (!action.calls.length) return at === 0 && !ev.tool;
    return at < action.calls.length && action.calls[at].name === ev.tool;
  }

  function actionCard(action, firm) {
    const ev = action.model;
    const card = el("div", { class: "entry model_call action", data: { seq: ev.seq, type: ev.type } });
    const u = ev.usage || {};
    const cost = typeof ev.cost_usd === "number" ? ` · $${ev.cost_usd.toFixed(4)}` : "";
    const stop = ev.stop_reason ? ` · ${ev.stop_reason}` : "";
    card.append(
      el(
        "div",
        { class: "entry-head" },
        `${ev.time} · `,
        el("b", { text: "model action" }),
        ` · ${ev.model || ""} · ${usageText(u, ev.cache_hit)}${cost}${stop}`,
      ),
    );
    if (ev.reasoning) card.append(details("reasoning", ev.reasoning, true));
    if (ev.text) card.append(el("pre", { class: "model-text", text: ev.text }));
    action.calls.forEach((call, i) => card.append(toolUse(call, action.applied[i])));
    if (!action.calls.length) {
      const applied = action.applied[0];
      const what = applied ? "no tool call: counted as waiting" : "no tool call";
      card.append(el("div", { class: "tool-use muted", data: { seq: applied && applied.seq }, text: what }));
    }
    if (ev.ignored_calls) {
      const text = `${ev.ignored_calls} further call(s) ignored: one tool call per turn`;
      card.append(el("div", { class: "muted", text }));
    }
    if (ev.record_call !== undefined && hasRecord()) card.append(promptBox(firm, ev.record_call));
    return card;
  }

  // One tool call of a model action: the call with its arguments, then what it returned.
  function toolUse(call, applied) {
    const box = el("div", { class: "tool-use", data: { seq: applied && applied.seq, tool: call.name } }, callLine(call));
    if (!applied) {
      box.append(el("div", { class: "muted", text: "not applied" }));
      return box;
    }
    box.append(resultBox(applied.result || {}));
    return box;
  }

  // A tool's result: its status, the error if it failed, and the result as JSON, open
  // when it is short.
  function resultBox(result) {
    const failed = result.status === "error";
    const box = el("div", { class: "tool-result" });
    if (failed) box.append(el("div", { class: "result-error", text: `error: ${result.error || result.message || ""}` }));
    const size = json(result).length;
    const label = `result${result.status ? `: ${result.status}` : ""} · ${Object.keys(result).length} fields`;
    box.append(el("details", { class: "result", open: !failed && size <= 600 }, el("summary", { text: label }), jsonView(result)));
    return box;
  }

  function dayButton(day, text) {
    const button = el("button", { type: "button", disabled: day === null, text });
    button.addEventListener("click", () => pickDay(day));
    return button;
  }

  // Long text arguments (R3's write_script code, a message body) shown as blocks, not JSON.
  const CODE_KEYS = ["code", "script", "source"];

  function callLine(call, suffix) {
    const args = call.arguments && typeof call.arguments === "object" ? call.arguments : {};
    const blocks = Object.entries(args).filter(([k, v]) => typeof v === "string" && (CODE_KEYS.includes(k) || v.includes("\n")));
    const inline = Object.fromEntries(Object.entries(args).filter(([k]) => !blocks.some(([b]) => b === k)));
    const short = json(inline).length <= INLINE_CHARS;
    const shown = short ? `(${json(inline)})` : "";
    const line = el("div", { class: "call", text: `→ ${call.name}${shown}${suffix || ""}` });
    if (!blocks.length && short) return line;
    const box = el("div", { class: "call-box" }, line);
    if (!short) box.append(jsonView(inline)); // long arguments: one per line, as key and value
    for (const [key, value] of blocks) {
      const isCode = CODE_KEYS.includes(key);
      box.append(el("div", { class: "muted arg-name", text: `${key}:` }), codeBlock(value, isCode));
    }
    return box;
  }

  function codeBlock(text, isCode) {
    const pre = el("pre", { class: isCode ? "code" : "" });
    pre.append(isCode ? el("code", { text }) : String(text));
    return pre;
  }

  function usageText(u, cacheHit) {
    const parts = [`${u.input_tokens ?? 0} in`];
    if (u.cached_input_tokens) parts.push(`${u.cached_input_tokens} cached`);
    if (u.cache_write_tokens) parts.push(`${u.cache_write_tokens} cache-written`);
    parts.push(`${u.output_tokens ?? 0} out`);
    if (u.reasoning_tokens) parts.push(`${u.reasoning_tokens} reasoning`);
    return `${parts.join(" / ")} tokens${cacheHit ? " · response cache hit" : ""}`;
  }

  // -- what the model saw: one recorded request, message by message (record.sqlite)
  function promptBox(agent, n) {
    const label = `what the model saw (request ${n + 1})`;
    const box = el("details", { class: "prompt", data: { call: n } }, el("summary", { text: label }));
    let loaded = false;
    box.addEventListener("toggle", () => {
      if (box.open && !loaded) {
        loaded = true;
        loadCall(box, agent, n, 0);
      }
    });
    return box;
  }

  async function loadCall(box, agent, n, from) {
    const token = state.token;
    let body;
    try {
      body = await api(`/api/run/${state.runId}/call?agent=${encodeURIComponent(agent)}&n=${n}&from=${from}`);
    } catch (err) {
      box.append(el("p", { class: "error-box", text: `Cannot read the request: ${err.message}` }));
      return;
    }
    // The view moved on (another run, or this one drawn again): a box still on the page is
    // filled all the same, since it stays open with nothing in it otherwise.
    if (token !== state.token && !box.isConnected) return;
    const newCount = body.total_messages - body.new_from;
    if (from === 0) {
      const out = body.output || {};
      box.querySelector("summary").textContent =
        `what the model saw: ${body.total_messages} messages, ${newCount} new since the previous request`;
      box.append(
        el(
          "div",
          { class: "call-facts muted" },
          `${body.model} · request ${n + 1} of ${body.calls} · ${usageText(out.usage || {}, out.cache_hit)}`,
          typeof out.cost_usd === "number" ? ` · $${out.cost_usd.toFixed(4)}` : "",
          body.failures.length ? ` · ${body.failures.length} failed attempt(s) before it` : "",
        ),
      );
      for (const f of body.failures) {
        box.append(el("div", { class: "result-error", text: `attempt ${f.seq + 1}: ${f.error_type}: ${f.message}` }));
      }
      if (body.tools.length) box.append(details(`tools offered (${body.tools.length})`, body.tools.join(", "), false));
      if (body.new_from > 0) {
        const where = body.bundle_delta ? " (a bundle keeps each message once: see the earlier requests)" : "";
        const seen = el("details", { class: "seen" }, el("summary", { text: `${body.new_from} messages seen in the previous request${where}` }));
        box.append(seen);
      }
    }
    box.querySelector("button.more")?.remove();
    const seen = box.querySelector("details.seen");
    for (const m of body.messages) (m.i < body.new_from && seen ? seen : box).append(messageCard(m));
    if (body.next !== null && body.next !== undefined) {
      const more = el("button", { type: "button", class: "more", text: `more messages (from ${body.next + 1} of ${body.total_messages})` });
      more.addEventListener("click", () => loadCall(box, agent, n, body.next));
      box.append(more);
    }
  }

  function messageCard(m) {
    const role = String(m.role || "?");
    const card = el("div", { class: `msg role-${role.replace(/[^a-z]/g, "")}`, data: { i: m.i, role } });
    const who = m.name ? ` · ${m.name}` : "";
    const reply = m.tool_call_id ? ` · result of ${m.tool_call_id}` : "";
    card.append(el("div", { class: "msg-head" }, el("b", { text: role }), ` #${m.i + 1}${who}${reply} · ${m.chars ?? 0} chars`));
    if (m.missing) card.append(el("div", { class: "result-error", text: "this message is missing from the record" }));
    if (m.reasoning) card.append(details("reasoning", m.reasoning, false));
    if (m.content) card.append(role === "tool" ? textOrJson(m.content) : el("pre", { class: "msg-text", text: m.content }));
    for (const call of m.tool_calls || []) card.append(callLine(call));
    if (m.truncated) card.append(el("div", { class: "muted", text: "(cut: the message is longer than the viewer shows)" }));
    return card;
  }

  function hasRecord() {
    return !!(state.coffee && state.coffee.index && state.coffee.index.record);
  }

  function transcriptEntry(ev, firm) {
    ev = asToolCall(ev);
    const card = el("div", { class: `entry ${ev.type}`, data: { seq: ev.seq, type: ev.type } });
    const head = el("div", { class: "entry-head" }, `${ev.time} · `, el("b", { text: ev.type.replace("_", " ") }));
    card.append(head);
    if (ev.type === "model_call") {
      const u = ev.usage || {};
      const cost = typeof ev.cost_usd === "number" ? ` · $${ev.cost_usd.toFixed(4)}` : "";
      const stop = ev.stop_reason ? ` · ${ev.stop_reason}` : "";
      head.append(` · ${ev.model || ""} · ${usageText(u, ev.cache_hit)}${cost}${stop}`);
      if (ev.reasoning) card.append(details("reasoning", ev.reasoning, true));
      if (ev.text) card.append(el("pre", { class: "model-text", text: ev.text }));
      for (const call of ev.tool_calls || []) card.append(callLine(call));
      if (ev.ignored_calls) {
        const text = `${ev.ignored_calls} further call(s) ignored: one tool call per turn`;
        card.append(el("div", { class: "muted", text }));
      }
      if (ev.record_call !== undefined && hasRecord()) card.append(promptBox(firm, ev.record_call));
    } else if (ev.type === "compaction") {
      const forced = ev.forced ? " after a context overflow" : "";
      head.append(` · ${ev.model || ""} · ${usageText(ev.usage || {}, ev.cache_hit)}${forced}`);
      const what = `${ev.summarised_messages} messages summarised: ${ev.messages_before} → ${ev.messages_after} messages`;
      card.append(el("div", { class: "muted", text: what }));
      card.append(details("summary that replaced the history", ev.summary || "", true));
      if (ev.record_call !== undefined && hasRecord()) card.append(promptBox(firm, ev.record_call));
    } else if (ev.type === "tool_call") {
      card.append(ev.tool ? callLine({ name: ev.tool, arguments: ev.arguments }) : el("div", { class: "call", text: "(no tool call)" }));
      card.append(resultBox(ev.result || {}));
    } else if (ev.type === "message") {
      head.append(" · ", ev.sender === firm ? "sent to " : "from ", ev.sender === firm ? ev.recipient : ev.sender);
      card.append(el("div", {}, el("b", { text: ev.title || "(no title)" })), el("pre", { text: ev.body || "" }));
    } else {
      card.append(jsonView(otherFields(ev)));
    }
    return card;
  }

  // -- deals and invoices
  async function loadLedger(token) {
    const c = state.coffee;
    const body = await api(`/api/run/${state.runId}/ledger`);
    if (token !== state.token) return;
    c.ledger = body;
    c.ledgerVersion = c.index.ledger_version;
    if (c.tab === "ledger") renderLedger();
  }

  function table(node, columns, rows, empty) {
    clear(node);
    node.append(el("tr", {}, columns.map(([label, , cls]) => el("th", { class: cls || "", text: label }))));
    for (const row of rows) {
      node.append(
        el("tr", {}, columns.map(([, value, cls]) => {
          const v = value(row);
          return el("td", { class: cls || "" }, v instanceof Node ? v : String(v ?? "–"));
        })),
      );
    }
    if (!rows.length) node.append(el("tr", {}, el("td", { colspan: columns.length, class: "muted", text: empty })));
  }

  function statusCell(status) {
    return el("span", { class: `st-${status}`, text: String(status).replace(/_/g, " ") });
  }

  function renderLedger() {
    const c = state.coffee;
    const firm = c.ledgerFirm;
    const deals = c.ledger.deals.filter((d) => !firm || d.seller === firm || d.buyer === firm);
    const invoices = c.ledger.invoices.filter((i) => !firm || i.issuer === firm || i.payer === firm);
    $("deal-count").textContent = `(${deals.length})`;
    $("invoice-count").textContent = `(${invoices.length})`;
    table(
      $("deals"),
      [
        ["deal", (d) => d.deal_id],
        ["day", (d) => `${d.day} ${d.time || ""}`],
        ["seller", (d) => firmTag(d.seller)],
        ["buyer", (d) => firmTag(d.buyer)],
        ["item", (d) => item(d.item)],
        ["kg", (d) => d.qty, "num"],
        ["price/kg", (d) => money(d.price), "num"],
        ["value", (d) => money(d.value), "num"],
        ["terms", (d) => (d.terms == null ? "–" : `${d.terms} d`), "num"],
        ["status", (d) => statusCell(d.status)],
        ["delivered", (d) => d.delivered_day ?? "–", "num"],
        ["returned kg", (d) => d.returned_kg || "", "num"],
        ["invoice", (d) => d.invoice_id || ""],
        ["note", (d) => d.note || ""],
      ],
      deals,
      "No deals yet.",
    );
    table(
      $("invoices"),
      [
        ["invoice", (i) => i.invoice_id],
        ["kind", (i) => i.kind],
        ["issued", (i) => i.day, "num"],
        ["issuer", (i) => firmTag(i.issuer)],
        ["payer", (i) => firmTag(i.payer)],
        ["amount", (i) => money(i.amount), "num"],
        ["due day", (i) => i.due_day, "num"],
        ["fees", (i) => (i.fees ? money(i.fees) : ""), "num"],
        ["credits", (i) => (i.credits ? money(i.credits) : ""), "num"],
        ["paid", (i) => (i.paid ? money(i.paid) : ""), "num"],
        ["status", (i) => statusCell(i.status)],
        ["settled", (i) => i.settled_day ?? "", "num"],
        ["deal", (i) => i.deal_id || ""],
      ],
      invoices,
      "No invoices yet.",
    );
  }

  // -- charts
  async function loadDaily(token) {
    const c = state.coffee;
    const body = await api(`/api/run/${state.runId}/daily?from=${c.daily.length}`);
    if (token !== state.token) return;
    if (body.next - body.rows.length !== c.daily.length) return; // another load got there first
    c.daily.push(...body.rows);
    if (c.tab === "charts") renderCharts();
  }

  function niceTicks(lo, hi, count) {
    if (lo === hi) {
      lo -= 1;
      hi += 1;
    }
    const raw = (hi - lo) / count;
    const mag = 10 ** Math.floor(Math.log10(raw));
    const step = [1, 2, 2.5, 5, 10].map((m) => m * mag).find((s) => s >= raw) || 10 * mag;
    const start = Math.floor(lo / step) * step;
    const ticks = [];
    for (let v = start; v <= hi + step * 1e-9; v += step) ticks.push(Math.round(v / step) * step);
    if (ticks[ticks.length - 1] < hi) ticks.push(ticks[ticks.length - 1] + step);
    return ticks;
  }

  function renderCharts() {
    const c = state.coffee;
    const box = clear($("charts"));
    if (!c.daily.length) {
      box.append(el("p", { class: "muted", text: "No daily rows yet." }));
      return;
    }
    const firms = c.index.firms;
    for (const [metric, title, zero] of CHARTS) {
      const series = firms.map((firm) => ({
        firm,
        points: c.daily.filter((r) => r.firm === firm && typeof r[metric] === "number").map((r) => [r.day, r[metric]]),
      }));
      box.append(lineChart(metric, title, series, c.day, zero, c.index.festivals || []));
    }
  }

  // The festival days (demand multiplied: docs/coffeebench.md §7) shaded behind the lines,
  // each day as the band from half a day before to half a day after it, cut to the axes.
  function festivalBands(festivals, x0, x1, sx, top, bottom) {
    const bands = [];
    for (const f of festivals) {
      const span = festivalSpan(f, x0, x1);
      if (!span) continue;
      const [from, to] = span;
      const band = svg("rect", {
        class: "festival",
        x: sx(from),
        y: top,
        width: sx(to) - sx(from),
        height: bottom - top,
        "data-first": f.first,
        "data-last": f.last,
      });
      band.append(svg("title", {}, festivalText(f)));
      bands.push(band);
    }
    return bands;
  }

  function festivalSpan(f, x0, x1) {
    const from = Math.max(f.first - 0.5, x0);
    const to = Math.min(f.last + 0.5, x1);
    return from < to ? [from, to] : null;
  }

  function festivalText(f) {
    const factor = typeof f.factor === "number" ? ` (consumer demand ×${num(f.factor, 1)})` : "";
    return `${f.name === "festival" ? "festival" : `festival ${f.name}`}: days ${f.first}–${f.last}${factor}`;
  }

  function lineChart(metric, title, series, marker, zero, festivals) {
    const W = 560;
    const H = 250;
    const M = { l: 62, r: 14, t: 10, b: 30 };
    const all = series.flatMap((s) => s.points);
    const xs = all.map((p) => p[0]);
    const ys = all.map((p) => p[1]);
    const x0 = Math.min(...xs);
    const x1 = Math.max(Math.max(...xs), x0 + 1);
    const base = zero ? [0] : [];
    const yTicks = niceTicks(Math.min(...base, ...ys), Math.max(...base, ...ys), 5);
    const y0 = yTicks[0];
    const y1 = yTicks[yTicks.length - 1];
    const sx = (x) => M.l + ((x - x0) / (x1 - x0)) * (W - M.l - M.r);
    const sy = (y) => H - M.b - ((y - y0) / (y1 - y0)) * (H - M.t - M.b);
    const root = svg("svg", { viewBox: `0 0 ${W} ${H}`, role: "img", "aria-label": title, "data-metric": metric });
    const grid = svg("g", { class: "grid" });
    const axis = svg("g", { class: "axis" });
    for (const t of yTicks) {
      grid.append(svg("line", { x1: M.l, x2: W - M.r, y1: sy(t), y2: sy(t) }));
      axis.append(svg("text", { x: M.l - 6, y: sy(t) + 4, "text-anchor": "end" }, compact(t)));
    }
    const xTicks = niceTicks(x0, x1, Math.min(10, x1 - x0)).filter((t) => t >= x0 && t <= x1 && Number.isInteger(t));
    for (const t of xTicks) {
      axis.append(svg("line", { x1: sx(t), x2: sx(t), y1: H - M.b, y2: H - M.b + 4 }));
      axis.append(svg("text", { x: sx(t), y: H - M.b + 16, "text-anchor": "middle" }, t));
    }
    const baseline = y0 <= 0 && y1 >= 0 ? 0 : y0;
    axis.append(svg("line", { x1: M.l, x2: W - M.r, y1: sy(baseline), y2: sy(baseline) }));
    axis.append(svg("line", { x1: M.l, x2: M.l, y1: M.t, y2: H - M.b }));
    axis.append(svg("text", { x: (M.l + W - M.r) / 2, y: H - 2, "text-anchor": "middle" }, "day"));
    const bands = festivalBands(festivals, x0, x1, sx, M.t, H - M.b);
    root.append(...bands, grid, axis);
    if (marker !== null && marker !== undefined && marker >= x0 && marker <= x1) {
      root.append(svg("line", { class: "marker", x1: sx(marker), x2: sx(marker), y1: M.t, y2: H - M.b }));
    }
    for (const s of series) {
      if (!s.points.length) continue;
      const d = s.points.map(([x, y], i) => `${i ? "L" : "M"}${sx(x).toFixed(1)},${sy(y).toFixed(1)}`).join(" ");
      const path = svg("path", { class: "series", d, stroke: firmColor(s.firm), "data-firm": s.firm });
      path.append(svg("title", {}, s.firm));
      root.append(path);
    }
    const legend = el("div", { class: "legend" }, series.map((s) => el("span", {}, swatch(s.firm), s.firm)));
    for (const f of festivals.filter((f) => festivalSpan(f, x0, x1))) {
      legend.append(el("span", { class: "legend-festival", title: festivalText(f) }, el("span", { class: "swatch festival-swatch" }), `festival days ${f.first}–${f.last}`));
    }
    return el("div", { class: "chart", data: { metric } }, el("h4", { text: title }), root, legend);
  }

  // ------------------------------------------------------------------ AlloBench
  function renderAlloHead(head) {
    const run = state.run;
    const config = run.config || {};
    const s = run.summary;
    head.append(
      el(
        "div",
        { class: "facts" },
        fact("framing", config.framing ?? "–"),
        fact("policy", config.actor || config.policy || "–"),
        fact("budget", config.budget ?? "–"),
        fact("build charge K", config.cost ?? "–"),
        s ? fact("score", num(s.score)) : null,
        s && s.score_ci ? fact("95% CI", `${num(s.score_ci[0])}–${num(s.score_ci[1])}`) : null,
        s ? fact("first-sight rate", num(s.first_sight_rate)) : null,
        s ? fact("unresolved turns", s.unresolved_turns) : null,
        s && (s.cost_usd || s.llm_calls) ? fact("model cost", costText(s.cost_usd, s.cost_usd == null)) : null,
      ),
    );
    if (config.system_prompt) head.append(details("system prompt", config.system_prompt, false));
  }

  async function openAllo(token, want) {
    const a = (state.allo = freshAllo());
    a.wanted = (want && episodeOfHash(want)) ?? 0;
    a.decisionsOnly = $("decisions-only").checked;
    clear($("episodes"));
    clear($("turns"));
    clear($("episode-head"));
    clear($("episode-strip"));
    clear($("allo-hits"));
    await pollAllo(token);
  }

  async function pollAllo(token) {
    const a = state.allo;
    const body = await api(`/api/run/${state.runId}/episodes?from=${a.episodes.length}`);
    if (token !== state.token) return;
    if (body.total < a.episodes.length) {
      // the cell was started again from scratch: forget what was shown
      Object.assign(a, freshAllo(), { decisionsOnly: a.decisionsOnly });
      for (const id of ["episodes", "turns", "episode-head", "episode-strip"]) clear($(id));
      return;
    }
    if (body.next - body.episodes.length === a.episodes.length) {
      a.episodes.push(...body.episodes);
      appendEpisodes(body.episodes);
    }
    setStatus(body.status);
    updateProgress(body.progress);
    if (a.selected === null && a.episodes.length) {
      await openEpisode(token, a.wanted < a.episodes.length ? a.wanted : 0);
    }
  }

  const EPISODE_COLUMNS = [
    ["#", (e) => e.episode + 1, "num"],
    ["seed", (e) => e.seed, "num"],
    ["score", (e) => num(e.score), "num"],
    ["utility / opt", (e) => `${num(e.utility, 1)} / ${num(e.opt, 1)}`, "num"],
    ["commits", (e) => e.commits, "num"],
    ["first-sight commits", (e) => e.first_sight_commits, "num"],
    ["decision turns", (e) => e.decision_turns, "num"],
    ["unresolved", (e) => e.unresolved_turns, "num"],
    ["output tokens", (e) => e.output_tokens, "num"],
  ];

  function appendEpisodes(rows) {
    const node = $("episodes");
    if (!node.children.length) {
      node.append(el("tr", {}, EPISODE_COLUMNS.map(([label, , cls]) => el("th", { class: cls, text: label }))));
    }
    for (const e of rows) {
      const cells = EPISODE_COLUMNS.map(([, value, cls]) => el("td", { class: cls, text: value(e) ?? "–" }));
      const tr = el("tr", { class: "clickable", data: { episode: e.episode } }, cells);
      tr.addEventListener("click", () => navigate({ episode: episodeHash(e.episode) }));
      tr.classList.toggle("selected", e.episode === state.allo.selected);
      node.append(tr);
    }
    $("episode-count").textContent = `(${state.allo.episodes.length})`;
  }

  async function openEpisode(token, number) {
    const a = state.allo;
    a.selected = number;
    writeHash();
    for (const tr of $("episodes").querySelectorAll("tr[data-episode]")) {
      tr.classList.toggle("selected", Number(tr.dataset.episode) === number);
    }
    const record = await api(`/api/run/${state.runId}/episode/${number}`);
    if (token !== state.token || a.selected !== number) return;
    a.record = record;
    renderEpisode();
  }

  function renderEpisode() {
    const a = state.allo;
    const r = a.record;
    const head = clear($("episode-head"));
    if (!r) return;
    const labels = (r.stream && r.stream.labels) || [];
    const hot = ((r.stream && r.stream.hot) || []).map((c) => labels[c] ?? c);
    head.append(
      el("h3", { text: `Episode ${r.episode + 1} · seed ${r.seed}` }),
      el(
        "div",
        { class: "facts" },
        fact("score", num(r.score)),
        fact("utility", `${num(r.utility, 1)} of ${num(r.opt, 1)}`),
        fact("collected", r.collected),
        fact("first-sight commits", r.first_sight_commits),
        fact("unresolved turns", r.unresolved_turns),
        hot.length ? fact("hot", hot.join(", ")) : null,
      ),
    );
    if (Array.isArray(r.commits) && r.commits.length) {
      head.append(details(`commits (${r.commits.length})`, jsonView(r.commits), false));
    }
    const strip = clear($("episode-strip"));
    if (r.strip && r.strip.tasks.length) strip.append(streamStrip(r.strip));
    renderTurns();
  }

  // -- the episode's whole task stream as one strip: a cell per task in order, coloured by
  // its class (hot classes underlined), with a mark above each task where the actor
  // committed (built a tool); a commit at a class's first sight is marked apart.
  const CLASS_COLORS = ["#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#b07aa1", "#76b7b2", "#edc948", "#9c755f", "#ff9da7", "#bab0ac"];

  // The urn's classes are colours: drawn in them (a skin's other names get the palette).
  const NAMED_CLASS_COLORS = {
    blue: "#3b6fd8", purple: "#8e44ad", white: "#f4f4f4", orange: "#f28e2b", green: "#3a9d4a",
    black: "#222222", red: "#d93a3a", yellow: "#f1cf3b", pink: "#f08bb4", brown: "#8b5a2b",
    grey: "#9aa0a6", gray: "#9aa0a6", cyan: "#35b7c9",
  };

  function classColor(cls, label) {
    const named = NAMED_CLASS_COLORS[String(label || "").toLowerCase()];
    if (named) return named;
    return Number.isInteger(cls) ? CLASS_COLORS[cls % CLASS_COLORS.length] : "#8a94a6";
  }

  function streamStrip(strip) {
    const n = strip.tasks.length;
    const columns = `repeat(${n}, minmax(0, 1fr))`;
    const marks = el("div", { class: "strip-marks" });
    const tasks = el("div", { class: "strip-tasks" });
    marks.style.gridTemplateColumns = columns;
    tasks.style.gridTemplateColumns = columns;
    for (const c of strip.commits) {
      const kind = c.first_sight ? "first-sight commit" : "commit";
      const trap = c.trap ? " (a trap class)" : "";
      const mark = el("span", {
        class: `commit-mark${c.first_sight ? " first-sight" : ""}${c.trap ? " trap" : ""}`,
        data: { t: c.t },
        title: `task ${c.t + 1}: ${kind} to ${c.label}${trap}`,
        text: "▼",
      });
      mark.style.gridColumn = String(c.t + 1);
      marks.append(mark);
    }
    for (const task of strip.tasks) {
      const where = `task ${task.t + 1}: ${task.label} · sighting ${task.sighting}`;
      const cell = el("span", {
        class: `task${task.hot ? " hot" : ""}${task.collected ? " collected" : ""}`,
        data: { t: task.t, cls: task.cls },
        title: `${where}${task.hot ? " · hot" : ""}${task.collected ? " · collected" : ""}`,
        color: classColor(task.cls, task.label),
      });
      cell.addEventListener("click", () => flash(`#turns .turn[data-t="${task.t}"]`));
      tasks.append(cell);
    }
    const firstSight = strip.commits.filter((c) => c.first_sight).length;
    const seen = [...new Set(strip.tasks.map((t) => t.cls))].sort((a, b) => a - b);
    const legend = el(
      "div",
      { class: "legend strip-legend" },
      seen.map((cls) => {
        const label = (strip.tasks.find((t) => t.cls === cls) || {}).label;
        const hot = strip.hot.includes(cls) ? " (hot)" : "";
        return el("span", { data: { cls } }, el("span", { class: "swatch class-swatch", color: classColor(cls, label) }), `${label}${hot}`);
      }),
      el("span", {}, el("span", { class: "commit-key", text: "▼" }), " commit"),
      el("span", {}, el("span", { class: "commit-key first-sight", text: "▼" }), " commit at first sight"),
    );
    return el(
      "div",
      { class: "strip", data: { tasks: n } },
      el("div", { class: "strip-title muted", text: `Task stream: ${n} tasks · ${strip.commits.length} commits, ${firstSight} at first sight` }),
      marks,
      tasks,
      legend,
    );
  }

  function renderTurns() {
    const a = state.allo;
    const box = clear($("turns"));
    if (!a.record) return;
    for (const turn of a.record.turns || []) {
      if (a.decisionsOnly && turn.kind !== "decision") continue;
      box.append(turnCard(turn));
    }
  }

  const TURN_SHOWN = new Set([
    "t", "cls", "label", "sighting", "first_sight", "kind", "notice", "observation", "replies",
    "decision", "resolved", "collected", "parsed", "reason", "sandbox", "submitted", "commit",
  ]);

  function turnCard(turn) {
    const unresolved = turn.resolved === false;
    const cls = `turn ${turn.kind}${unresolved ? " unresolved" : ""}`;
    const card = el("div", { class: cls, data: { t: turn.t, kind: turn.kind } });
    const head = el(
      "div",
      { class: "turn-head" },
      el("span", { class: "t", text: `turn ${turn.t + 1}` }),
      el("b", { text: turn.label ?? `class ${turn.cls}` }),
      el("span", { class: "muted", text: `sighting ${turn.sighting}${turn.first_sight ? " (first)" : ""}` }),
      el("span", { class: "pill", text: turn.kind.replace("_", " ") }),
      turn.decision ? el("span", { class: `pill ${turn.decision}`, text: turn.decision }) : null,
      turn.resolved === undefined
        ? null
        : el("span", { class: `pill ${unresolved ? "bad" : ""}`, text: unresolved ? "unresolved" : "resolved" }),
      el("span", { class: "pill", text: turn.collected ? "collected" : "not collected" }),
    );
    card.append(head);
    if (turn.notice) card.append(el("div", { class: "muted", text: turn.notice }));
    if (turn.observation) card.append(details("prompt", turn.observation, true));
    for (const [i, reply] of (turn.replies || []).entries()) card.append(replyBox(reply, i));
    if (turn.parsed !== undefined && turn.parsed !== null) {
      card.append(el("div", {}, "parsed decision: ", el("b", { text: String(turn.parsed) })));
    }
    if (turn.reason) card.append(el("div", { class: "muted", text: `reason: ${turn.reason}` }));
    if (Array.isArray(turn.sandbox) && turn.sandbox.length) card.append(sandboxTable(turn.sandbox));
    if (turn.submitted) card.append(el("div", { class: "call", text: `submitted: ${json(turn.submitted)}` }));
    const extra = Object.fromEntries(Object.entries(turn).filter(([k]) => !TURN_SHOWN.has(k)));
    if (Object.keys(extra).length) card.append(details("more", json(extra, 2), false));
    return card;
  }

  function replyBox(reply, i) {
    const box = el("div", { class: "reply" });
    const u = reply.usage || {};
    const used = Object.keys(u).length ? ` · ${tokens(u)}` : "";
    box.append(el("div", { class: "entry-head", text: `reply ${i + 1}${used}` }));
    if (reply.text) box.append(el("pre", { class: "model-text", text: reply.text }));
    for (const call of reply.tool_calls || []) {
      const skipped = call.executed ? "" : " (not executed)";
      box.append(callLine(call, skipped));
      const failed = call.result && call.result.status === "error";
      box.append(details(failed ? `error: ${call.result.error || ""}` : "result", resultBody(call.result), false));
    }
    if (reply.events && reply.events.length) {
      box.append(details(`events (${reply.events.length})`, json(reply.events, 2), false));
    }
    return box;
  }

  // A result carrying a script (R3's read_script) shows it as code under the other fields.
  function resultBody(result) {
    if (!result || typeof result !== "object" || typeof result.code !== "string") return jsonView(result ?? null);
    const { code, ...rest } = result;
    return el("div", {}, jsonView(rest), codeBlock(code, true));
  }

  function sandboxTable(runs) {
    const node = el("table", { class: "sandbox" });
    table(
      node,
      [
        ["sandbox", (s) => s.kind],
        ["script", (s) => s.script],
        ["ok", (s) => (s.ok ? "yes" : "no")],
        ["value", (s) => shortJson(s.value, 60)],
        ["reason", (s) => s.reason || ""],
        ["stderr", (s) => (s.stderr || "").slice(0, 200)],
        ["wall s", (s) => s.wall_s, "num"],
      ],
      runs,
      "",
    );
    return el("div", { class: "table-wrap" }, node);
  }

  // ------------------------------------------------------------------ runs table
  // Every run with its headline figures, sortable and filterable; a sweep's summary above.
  const COFFEE_FIRMS = ["farmer_A", "farmer_B", "roaster_A", "roaster_B", "retailer_A", "retailer_B"];

  function policyText(run) {
    const h = run.headline || {};
    if (run.benchmark === "allo") return String(h.policy ?? "–");
    const models = [...new Set(Object.values(h.policies || {}).filter((p) => p && p !== "scripted"))];
    return models.length ? models.join(", ") : String(h.default_policy || "scripted");
  }

  // The figure a sweep's summary averages: the model firms' net income, or the cell's score.
  function mainFigure(run) {
    const h = run.headline || {};
    if (run.benchmark === "allo") return typeof h.score === "number" ? h.score : null;
    const income = h.net_income || {};
    const firms = Object.entries(h.policies || {}).filter(([, p]) => p && p !== "scripted").map(([f]) => f);
    const values = (firms.length ? firms : Object.keys(income)).map((f) => income[f]).filter((v) => typeof v === "number");
    return values.length ? values.reduce((x, y) => x + y, 0) / values.length : null;
  }

  // The run's label and, when it says more, the folder it lies in (a sweep's cells share
  // labels across seeds).
  function runCell(run) {
    const folder = run.rel !== run.label ? el("div", { class: "muted run-rel", text: run.rel }) : null;
    return el("div", {}, el("div", { text: run.label }), folder);
  }

  function tableColumns(benchmark, runs) {
    const common = [
      ["label", (r) => `${r.label} ${r.rel}`, runCell],
      ["status", (r) => r.status, (r) => badge(r.status)],
      ["seed", (r) => r.seed ?? null, (r) => r.seed ?? "–", "num"],
      ["policy", (r) => policyText(r), (r) => policyText(r)],
    ];
    if (benchmark === "allo") {
      const h = (r) => r.headline || {};
      return common.concat([
        ["framing", (r) => h(r).framing ?? null, (r) => h(r).framing ?? "–"],
        ["episodes", (r) => h(r).episodes ?? null, (r) => h(r).episodes ?? "–", "num"],
        ["score", (r) => h(r).score ?? null, (r) => num(h(r).score), "num"],
        ["first-sight rate", (r) => h(r).first_sight_rate ?? null, (r) => num(h(r).first_sight_rate), "num"],
        ["model cost", (r) => h(r).cost_usd ?? null, (r) => (h(r).llm_calls ? costText(h(r).cost_usd, h(r).cost_usd == null) : "–"), "num"],
      ]);
    }
    const seen = new Set(runs.flatMap((r) => Object.keys((r.headline || {}).net_income || {})));
    const firms = COFFEE_FIRMS.filter((f) => seen.has(f) || !seen.size).concat([...seen].filter((f) => !COFFEE_FIRMS.includes(f)).sort());
    const income = (r, f) => ((r.headline || {}).net_income || {})[f] ?? null;
    return common.concat(
      firms.map((f) => [f, (r) => income(r, f), (r) => money(income(r, f)), "num", f]),
    );
  }

  function filteredRuns() {
    const t = state.table;
    const text = t.text.trim().toLowerCase();
    return state.runs.filter(
      (r) =>
        (!t.policy || policyText(r) === t.policy) &&
        (!t.status || r.status === t.status) &&
        (!text || [r.label, r.rel, r.brief, String(r.seed ?? "")].some((v) => String(v || "").toLowerCase().includes(text))),
    );
  }

  function fillSelect(node, values, current) {
    const options = [...new Set(values)].sort().map((v) => el("option", { value: v, text: v }));
    node.replaceChildren(el("option", { value: "", text: "any" }), ...options);
    node.value = values.includes(current) ? current : "";
  }

  function showTable() {
    stopPolling();
    state.token++;
    state.view = "table";
    $("placeholder").hidden = true;
    $("run").hidden = true;
    $("runs-table").hidden = false;
    $("show-table").classList.add("active");
    writeHash();
    renderRunList();
    renderRunsTable();
  }

  function renderRunsTable() {
    const t = state.table;
    fillSelect($("rt-policy"), state.runs.map(policyText), t.policy);
    fillSelect($("rt-status"), state.runs.map((r) => r.status), t.status);
    t.policy = $("rt-policy").value;
    t.status = $("rt-status").value;
    renderSweepSummary();
    const runs = filteredRuns();
    $("rt-count").textContent = `${runs.length} of ${state.runs.length} runs`;
    const box = clear($("rt-tables"));
    for (const benchmark of ["coffee", "allo"]) {
      const rows = runs.filter((r) => r.benchmark === benchmark);
      if (!rows.length) continue;
      const columns = tableColumns(benchmark, rows);
      const sortBy = columns.find(([label]) => label === t.sort);
      if (sortBy) {
        const key = sortBy[1];
        rows.sort((x, y) => {
          const a = key(x);
          const b = key(y);
          if (a === null || b === null) return a === null ? (b === null ? 0 : 1) : -1; // blanks last
          const order = typeof a === "number" && typeof b === "number" ? a - b : String(a).localeCompare(String(b));
          return t.desc ? -order : order;
        });
      }
      const node = el("table", { class: "runs-table", data: { benchmark } });
      node.append(
        el(
          "tr",
          {},
          columns.map(([label, , , cls, firm]) => {
            const arrow = label === t.sort ? (t.desc ? " ▼" : " ▲") : "";
            const th = el("th", { class: `sortable ${cls || ""}`, data: { col: label } }, firm ? swatch(firm) : null, label + arrow);
            th.addEventListener("click", () => {
              t.desc = t.sort === label ? !t.desc : false;
              t.sort = label;
              renderRunsTable();
            });
            return th;
          }),
        ),
      );
      for (const run of rows) {
        const tr = el("tr", { class: "clickable", data: { id: run.id }, title: run.rel });
        for (const [, , shown, cls] of columns) {
          const v = shown(run);
          tr.append(el("td", { class: cls || "" }, v instanceof Node ? v : String(v ?? "–")));
        }
        tr.addEventListener("click", () => go({ run: run.id }));
        node.append(tr);
      }
      box.append(el("h3", { text: benchmark === "coffee" ? "CoffeeBench runs · net income per firm" : "AlloBench cells" }), el("div", { class: "table-wrap" }, node));
    }
    if (!box.children.length) box.append(el("p", { class: "muted", text: state.runs.length ? "No run matches the filter." : "No runs yet." }));
  }

  function renderSweepSummary() {
    const box = clear($("sweep-summary"));
    const sweep = state.sweep;
    if (!sweep) return;
    const counts = {};
    for (const r of state.runs) counts[r.status] = (counts[r.status] || 0) + 1;
    const planned = sweep.entries === null || sweep.entries === undefined ? "" : ` of ${sweep.entries} planned`;
    box.append(
      el("h3", { text: `Sweep ${sweep.name}` }),
      sweep.description ? el("p", { class: "muted", text: sweep.description }) : null,
      el(
        "div",
        { class: "facts" },
        fact("runs", `${state.runs.length}${planned}`),
        Object.entries(counts).map(([status, n]) => fact(status, n)),
      ),
    );
    const groups = new Map();
    for (const r of state.runs) {
      const g = groups.get(r.label) || { label: r.label, benchmark: r.benchmark, runs: 0, done: 0, values: [] };
      g.runs += 1;
      if (r.status === "completed") g.done += 1;
      const v = mainFigure(r);
      if (v !== null) g.values.push(v);
      groups.set(r.label, g);
    }
    const node = el("table", { id: "sweep-groups" });
    const mean = (xs) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : null);
    table(
      node,
      [
        ["configuration", (g) => g.label],
        ["runs", (g) => g.runs, "num"],
        ["completed", (g) => g.done, "num"],
        ["mean", (g) => (g.benchmark === "allo" ? num(mean(g.values)) : money(mean(g.values))), "num"],
        ["min", (g) => (g.values.length ? (g.benchmark === "allo" ? num(Math.min(...g.values)) : money(Math.min(...g.values))) : "–"), "num"],
        ["max", (g) => (g.values.length ? (g.benchmark === "allo" ? num(Math.max(...g.values)) : money(Math.max(...g.values))) : "–"), "num"],
      ],
      [...groups.values()],
      "No runs yet.",
    );
    box.append(
      el("div", { class: "muted", text: "mean over seeds: the model firms' net income (CoffeeBench) or the score (AlloBench)" }),
      el("div", { class: "table-wrap" }, node),
    );
  }

  // ------------------------------------------------------------------ transcript search
  async function runSearch(query, box, describeHit, pick) {
    const token = state.token;
    clear(box);
    if (!query.trim()) return;
    let body;
    try {
      body = await api(`/api/run/${state.runId}/search?q=${encodeURIComponent(query)}`);
    } catch (err) {
      box.append(el("p", { class: "error-box", text: err.message }));
      return;
    }
    if (token !== state.token) return;
    const more = body.truncated ? " (the first ones only)" : "";
    box.append(el("div", { class: "muted", text: `${body.hits.length} match(es) for “${query}”${more}` }));
    for (const hit of body.hits) {
      const row = el("div", { class: "hit clickable" }, el("span", { class: "hit-where", text: describeHit(hit) }), el("span", { class: "hit-text", text: hit.excerpt }));
      row.addEventListener("click", () => pick(hit));
      box.append(row);
    }
  }

  function flash(selector) {
    const wait = (tries) => {
      const found = document.querySelector(selector);
      const node = found && (found.closest(".entry, .turn") || found); // a merged card: the card
      if (node) {
        node.scrollIntoView({ block: "center" });
        node.classList.add("flash");
        setTimeout(() => node.classList.remove("flash"), 1500);
      } else if (tries > 0) setTimeout(() => wait(tries - 1), 100);
    };
    wait(30);
  }

  function searchCoffee() {
    runSearch(
      $("coffee-q").value,
      $("coffee-hits"),
      (h) => `day ${h.day} ${h.time} · ${h.firms.join(" → ")} · ${h.type.replace("_", " ")} · ${h.field}`,
      (h) => {
        const c = state.coffee;
        const firm = h.firms.includes(c.transcriptFirm) ? c.transcriptFirm : h.firms[0];
        c.transcriptFirm = firm;
        for (const chip of $("transcript-firms").children) chip.classList.toggle("active", chip.dataset.firm === firm);
        if (c.day !== h.day) pickDay(h.day);
        else loadTranscript(state.token);
        writeHash();
        flash(`#transcript [data-seq="${h.seq}"]`);
      },
    );
  }

  function searchAllo() {
    runSearch(
      $("allo-q").value,
      $("allo-hits"),
      (h) => `episode ${h.episode + 1} · turn ${h.t + 1} · ${h.field}`,
      async (h) => {
        await openEpisode(state.token, h.episode);
        flash(`#turns .turn[data-t="${h.t}"]`);
      },
    );
  }

  // ------------------------------------------------------------------ wiring
  function wire() {
    for (const button of document.querySelectorAll(".tabs button")) {
      button.addEventListener("click", () => navigate({ tab: button.dataset.tab }));
    }
    $("day-prev").addEventListener("click", () => stepDay(-1));
    $("day-next").addEventListener("click", () => stepDay(1));
    $("follow").addEventListener("change", () => {
      const c = state.coffee;
      c.follow = $("follow").checked;
      if (c.follow && c.index.last_day !== c.day) pickDay(c.index.last_day);
    });
    $("ledger-firm").addEventListener("change", () => {
      state.coffee.ledgerFirm = $("ledger-firm").value;
      renderLedger();
    });
    $("decisions-only").addEventListener("change", () => {
      state.allo.decisionsOnly = $("decisions-only").checked;
      renderTurns();
    });
    document.addEventListener("keydown", (e) => {
      if (!state.coffee || !state.run || state.run.benchmark !== "coffee") return;
      if (e.target.closest("input, select, textarea")) return;
      if (e.key === "ArrowLeft") stepDay(-1);
      if (e.key === "ArrowRight") stepDay(1);
    });
    $("show-table").addEventListener("click", () => go({ view: "table" }));
    $("rt-text").addEventListener("input", () => {
      state.table.text = $("rt-text").value;
      renderRunsTable();
    });
    for (const [id, key] of [["rt-policy", "policy"], ["rt-status", "status"]]) {
      $(id).addEventListener("change", () => {
        state.table[key] = $(id).value;
        renderRunsTable();
      });
    }
    window.addEventListener("hashchange", route);
    window.addEventListener("popstate", () => {
      if (location.hash !== state.routedHash) route(); // hashchange may follow: routed once
    });
    $("run-filter").addEventListener("input", () => {
      state.filter = $("run-filter").value;
      renderRunList();
    });
    $("coffee-search").addEventListener("submit", (e) => {
      e.preventDefault();
      searchCoffee();
    });
    $("allo-search").addEventListener("submit", (e) => {
      e.preventDefault();
      searchAllo();
    });
    if (BUNDLE) {
      $("coffee-search").hidden = true;
      $("allo-search").hidden = true;
      $("follow").parentElement.hidden = true;
    }
    loadRuns();
    if (!BUNDLE) setInterval(loadRuns, RUNS_POLL_MS);
  }

  wire();
})();
