// CoffeeBench play page: a person plays a firm through the tools a model has.
// It polls GET /api/play/coffee for the turn, the conversation (new messages only), the tool
// schemas and the firm's panels, and posts each action to /api/play/coffee/action. Every
// text from the run is set with textContent: nothing the run holds is ever read as HTML.
"use strict";

const API = "/api/play/coffee";
const POLL_MS = Number(new URLSearchParams(location.search).get("poll")) || 1000;
const PANELS = ["books", "stock", "listings", "offers", "invoices", "messages"];

const game = { messages: [], turn: null, status: "", tools: [], toolKey: "", waitTool: null };

function $(id) { return document.getElementById(id); }

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (key === "class") node.className = value;
    else if (key === "text") node.textContent = value;
    else node.setAttribute(key, value);
  }
  for (const child of children) if (child != null) node.append(child);
  return node;
}

function pretty(text) {
  try { return JSON.stringify(JSON.parse(text), null, 2); } catch (_) { return text; }
}

function shown(value) {
  if (value === null || value === undefined) return "";
  if (typeof value === "object") return JSON.stringify(value);
  return String(value);
}

// ------------------------------------------------------------------ polling
async function poll() {
  try {
    const response = await fetch(`${API}?from=${game.messages.length}`, { cache: "no-store" });
    if (response.ok) update(await response.json());
  } catch (_) {
    setStatus("The game's process is not answering (stopped?).", "gone");
  }
  setTimeout(poll, POLL_MS);
}

function update(state) {
  if (state.messages_from < game.messages.length) game.messages.length = state.messages_from;
  game.messages.push(...state.messages);
  game.turn = state.turn;
  game.status = state.status;
  game.waitTool = state.wait_tool;
  $("who").textContent = state.actor ? `— ${state.actor}` : "";
  renderStatus(state);
  $("status").dataset.turn = state.turn === null ? "" : String(state.turn);
  if (state.tools.length) renderTools(state.tools);
  renderConversation();
  if (state.context) renderContext(state.context);
  const live = state.status === "turn";
  for (const button of document.querySelectorAll("form.tool button[type=submit]")) {
    button.disabled = !live;
  }
  $("wait-button").disabled = !live || !game.waitTool;
  const ended = state.status === "over" || state.status === "left";
  $("leave-button").textContent = ended ? "Close the game" : "Stop (resume later)";
}

function renderStatus(state) {
  const outcome = state.outcome || {};
  if (state.status === "turn") setStatus("Your turn: choose one action.", "turn");
  else if (state.status === "waiting") {
    setStatus("The world is moving… you are woken by an offer, a message or the next morning.",
      "waiting");
  } else if (state.status === "left") {
    setStatus(`Stopped: ${state.left}. \`econbench resume ${state.out} --open\` continues.`, "over");
  } else if (state.status === "over") {
    setStatus(`The game is over (${outcome.status || "done"}). ${outcome.message || ""}`, "over");
  }
}

function setStatus(text, kind) {
  const status = $("status");
  status.textContent = text;
  status.className = kind;
}

// ------------------------------------------------------------------ conversation
function renderConversation() {
  const messages = game.messages;
  const list = $("messages");
  for (let i = list.children.length; i < messages.length; i++) list.append(messageItem(messages[i]));
  $("message-count").textContent = String(messages.length);
  if (messages.length && messages[0].role === "system") {
    $("system-prompt").textContent = messages[0].content;
  }
  let lastUser = -1;
  let lastAssistant = -1;
  messages.forEach((m, i) => {
    if (m.role === "user") lastUser = i;
    if (m.role === "assistant") lastAssistant = i;
  });
  $("observation").textContent = lastUser >= 0 ? messages[lastUser].content : "";
  const results = $("results");
  results.replaceChildren();
  for (let i = lastAssistant + 1; lastAssistant >= 0 && i < messages.length; i++) {
    const m = messages[i];
    if (m.role === "tool") results.append(resultBlock(m));
  }
}

function messageItem(message) {
  const item = el("li", { class: `msg ${message.role}` });
  item.append(el("span", { class: "role", text: message.role + (message.name ? ` · ${message.name}` : "") }));
  if (message.content) item.append(el("pre", { text: message.role === "tool" ? pretty(message.content) : message.content }));
  for (const call of message.tool_calls || []) {
    item.append(el("code", { class: "call", text: `${call.name}(${JSON.stringify(call.arguments)})` }));
  }
  return item;
}

function resultBlock(message) {
  const block = el("div", { class: "result" });
  block.append(el("div", { class: "result-name", text: message.name || "result" }));
  block.append(el("pre", { text: pretty(message.content) }));
  return block;
}

// ------------------------------------------------------------------ tools
function renderTools(tools) {
  const key = tools.map((t) => t.name).join(",");
  if (key === game.toolKey) return;
  game.toolKey = key;
  game.tools = tools;
  const box = $("tools");
  box.replaceChildren(...tools.map(toolForm));
}

function toolForm(tool) {
  const details = el("details", { class: "tool", "data-tool": tool.name });
  details.append(el("summary", { text: tool.name }));
  details.append(el("p", { class: "description", text: tool.description }));
  const form = el("form", { class: "tool", "data-tool": tool.name, novalidate: "" });
  const params = tool.parameters || {};
  const required = new Set(params.required || []);
  for (const [name, schema] of Object.entries(params.properties || {})) {
    form.append(field(name, schema, required.has(name)));
  }
  form.append(el("button", { type: "submit", text: tool.name }));
  form.append(el("pre", { class: "tool-error", role: "alert" }));
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    act(tool.name, readForm(form, params), form);
  });
  details.append(form);
  return details;
}

function kinds(schema) {
  const options = schema.anyOf || [schema];
  return options.map((o) => o.type).filter(Boolean);
}

function field(name, schema, isRequired) {
  const label = el("label", { class: "field" });
  label.append(el("span", { class: "name", text: name + (isRequired ? " *" : "") }));
  const types = kinds(schema);
  let input;
  if (schema.enum) {
    input = el("select", { name });
    if (!isRequired) input.append(el("option", { value: "", text: `(default: ${shown(schema.default)})` }));
    for (const value of schema.enum) input.append(el("option", { value: String(value), text: String(value) }));
  } else if (types.includes("boolean")) {
    input = el("select", { name });
    input.append(el("option", { value: "", text: `(default: ${shown(schema.default)})` }));
    input.append(el("option", { value: "true", text: "true" }));
    input.append(el("option", { value: "false", text: "false" }));
  } else if (types.includes("integer") || types.includes("number")) {
    input = el("input", { name, type: "text", inputmode: types.includes("integer") ? "numeric" : "decimal" });
  } else if (/body|message|reason/.test(name)) {
    input = el("textarea", { name, rows: "3" });
  } else {
    input = el("input", { name, type: "text" });
  }
  if (!isRequired && schema.default !== undefined && schema.default !== null && !schema.enum && !types.includes("boolean")) {
    input.setAttribute("placeholder", `default ${shown(schema.default)}`);
  }
  label.append(input);
  if (schema.description) label.append(el("small", { text: schema.description }));
  return label;
}

function readForm(form, params) {
  const args = {};
  for (const [name, schema] of Object.entries(params.properties || {})) {
    const input = form.elements.namedItem(name);
    const text = input.value;
    if (text === "") continue; // not given: the tool's default (or its error, if required)
    const types = kinds(schema);
    if (types.includes("boolean") && (text === "true" || text === "false")) args[name] = text === "true";
    else if (types.includes("integer") && /^-?\d+$/.test(text.trim())) args[name] = parseInt(text, 10);
    else if (types.includes("number") && text.trim() !== "" && Number.isFinite(Number(text))) args[name] = Number(text);
    else args[name] = text; // the tool's validator says what it expected
  }
  return args;
}

async function act(tool, args, form) {
  const error = form ? form.querySelector(".tool-error") : null;
  if (error) error.textContent = "";
  const response = await fetch(`${API}/action`, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ turn: game.turn, tool, arguments: args }),
  });
  const body = await response.json().catch(() => ({}));
  if (response.ok && body.ok === false && error) {
    error.textContent = JSON.stringify(body.result, null, 2);
  } else if (!response.ok && error) {
    error.textContent = body.error || `HTTP ${response.status}`;
  } else if (response.ok) {
    game.turn = null;
    for (const button of document.querySelectorAll("form.tool button[type=submit]")) button.disabled = true;
    $("wait-button").disabled = true;
  }
}

// ------------------------------------------------------------------ panels
function renderContext(context) {
  const clock = context.clock || {};
  if (clock.day !== undefined) {
    $("clock").textContent = `Day ${clock.day} of ${clock.days} · ${clock.time} · ` +
      `${clock.actions_left} of ${clock.actions_per_day} actions left today` +
      (clock.bankrupt ? " · BANKRUPT" : "");
  }
  const panels = context.panels || {};
  const box = $("panels");
  const open = new Set([...box.querySelectorAll("details[open]")].map((d) => d.dataset.panel));
  const fresh = !box.children.length;
  box.replaceChildren(...PANELS.filter((name) => name in panels).map((name) => {
    const details = el("details", { class: "panel", "data-panel": name });
    if (fresh || open.has(name)) details.open = true;
    details.append(el("summary", { text: name }));
    details.append(panelBody(name, panels[name]));
    return details;
  }));
}

function panelBody(name, data) {
  const body = el("div", { class: "panel-body" });
  if (name === "books") {
    body.append(keyValues(data.balances || {}, "balances"));
    body.append(keyValues(flatten(data.income || {}), "income"));
  } else if (name === "stock") {
    body.append(table(Object.entries(data.items || {}).map(([item, row]) => ({ item, ...row }))));
  } else if (name === "listings") {
    body.append(table(data.listings || []));
  } else if (name === "offers") {
    body.append(table(data.offers || []));
  } else if (name === "invoices") {
    for (const side of ["payables", "receivables"]) {
      const part = data[side] || {};
      body.append(el("h4", { text: `${side}: ${part.summary || ""}` }));
      body.append(table(part.invoices || []));
    }
  } else if (name === "messages") {
    body.append(table(data.messages || []));
  }
  return body;
}

function flatten(object, prefix = "") {
  const out = {};
  for (const [key, value] of Object.entries(object)) {
    if (value && typeof value === "object" && !Array.isArray(value)) Object.assign(out, flatten(value, `${prefix}${key}.`));
    else out[prefix + key] = value;
  }
  return out;
}

function keyValues(object, caption) {
  const t = el("table", { class: "kv" });
  t.append(el("caption", { text: caption }));
  for (const [key, value] of Object.entries(object)) {
    t.append(el("tr", {}, el("th", { text: key }), el("td", { text: shown(value) })));
  }
  return t;
}

function table(rows) {
  if (!rows.length) return el("p", { class: "empty", text: "none" });
  const columns = [...new Set(rows.flatMap((row) => Object.keys(row)))];
  const t = el("table", { class: "rows" });
  t.append(el("tr", {}, ...columns.map((c) => el("th", { text: c }))));
  for (const row of rows) t.append(el("tr", {}, ...columns.map((c) => el("td", { text: shown(row[c]) }))));
  return t;
}

// ------------------------------------------------------------------ buttons
$("wait-button").addEventListener("click", () => {
  if (game.waitTool) act(game.waitTool, {}, null);
});
$("leave-button").addEventListener("click", async () => {
  await fetch(`${API}/leave`, { method: "POST", headers: { "Content-Type": "application/json" }, body: "{}" });
});

poll();
