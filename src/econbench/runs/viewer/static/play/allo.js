// AlloBench, played by a person: the page shows exactly what the model is sent (the
// conversation and the tools) and posts the person's reply as the model's. The game lives in
// the server's process; this page only polls its state (so a reload shows the same turn).
"use strict";

const API = "/api/play/allo";
const POLL_MS = Number(new URLSearchParams(location.search).get("poll")) || 600;
const CODE_NAMES = new Set(["code", "source", "script", "program"]);

const $ = (id) => document.getElementById(id);
let shownKey = null;
let current = null; // the turn on screen
let sending = false;
let following = true; // polling stops once the game is over or left (its process ends)
let lastState = null;

function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (key === "class") node.className = value;
    else if (key === "text") node.textContent = value;
    else node.setAttribute(key, value);
  }
  for (const child of children) if (child != null) node.append(child);
  return node;
}

async function poll() {
  try {
    const response = await fetch(API, { cache: "no-store" });
    if (!response.ok) throw new Error(String(response.status));
    $("conn").hidden = true;
    const state = await response.json();
    following = following && state.status === "playing";
    lastState = state;
    render(state);
  } catch (err) {
    $("conn").hidden = false;
  }
  if (following) setTimeout(poll, POLL_MS);
}

function render(state) {
  $("cell").textContent = `${state.framing.toUpperCase()} · ${state.cell}`;
  $("who").textContent = `${state.player} · condition ${state.condition}`;
  const number = state.turn ? state.turn.number : null;
  const key = `${state.status}|${number}|${state.done.length}`;
  const playing = state.status === "playing";
  const episode = Math.min(state.done.length + 1, state.episodes);
  $("progress").textContent = playing
    ? `episode ${episode} of ${state.episodes}`
    : `${state.done.length} of ${state.episodes} episode(s) played`;
  $("leave").hidden = !playing;
  $("working").hidden = !(playing && !state.turn);
  if (key === shownKey) return;
  shownKey = key;
  renderEpisodes(state.done);
  if (!playing) return renderFinished(state);
  if (!state.turn) {
    $("reply").hidden = true;
    return;
  }
  current = state.turn;
  renderConversation(state.turn.messages);
  renderReply(state.turn);
}

function renderConversation(messages) {
  const box = $("conversation");
  box.replaceChildren();
  const lastUser = messages.map((m) => m.role).lastIndexOf("user");
  messages.forEach((message, i) => {
    if (message.role === "system") {
      const details = el("details", { class: "msg system" },
        el("summary", { text: "system prompt (what the model is told first)" }),
        el("pre", { text: message.content }));
      details.open = messages.length <= 2;
      box.append(details);
      return;
    }
    const role = message.role === "tool" ? `tool result: ${message.name || ""}`
      : message.role === "assistant" ? "you" : message.role;
    let text = message.content || "";
    for (const call of message.tool_calls || []) {
      text += `${text ? "\n" : ""}→ ${callText(call)}`;
    }
    const item = el("div", { class: `msg ${message.role}${i === lastUser ? " latest" : ""}` },
      el("div", { class: "role", text: role }), el("pre", { text }));
    box.append(item);
  });
  const latest = box.querySelector(".latest");
  if (latest) latest.scrollIntoView({ block: "nearest" });
}

// A call as the person wrote it: a multi-line argument (a script) as its lines.
function callText(call) {
  const args = call.arguments || {};
  const blocks = Object.entries(args).filter(([, v]) => typeof v === "string" && v.includes("\n"));
  const inline = Object.fromEntries(Object.entries(args).filter(([k]) =>
    !blocks.some(([name]) => name === k)));
  let text = `${call.name}(${JSON.stringify(inline)})`;
  for (const [name, value] of blocks) text += `\n  ${name}:\n${value}`;
  return text;
}

function renderReply(turn) {
  $("reply").hidden = false;
  $("turn-no").textContent = `(turn ${turn.number})`;
  showError("");
  const quick = $("quick");
  quick.replaceChildren();
  for (const text of turn.quick_replies) {
    const button = el("button", { type: "button", class: "quick", text });
    button.addEventListener("click", () => send(text, null));
    quick.append(button);
  }
  const tools = $("tools");
  tools.replaceChildren();
  for (const tool of turn.tools) tools.append(toolForm(tool));
  $("text").value = "";
  // A framing without tools is answered in text: the box is open.
  $("text-box").open = turn.tools.length === 0 && turn.quick_replies.length === 0;
}

function toolForm(tool) {
  const props = (tool.parameters && tool.parameters.properties) || {};
  const required = new Set((tool.parameters && tool.parameters.required) || []);
  const form = el("form", { class: "tool", "data-tool": tool.name },
    el("div", { class: "desc", text: tool.description }));
  const fields = [];
  for (const [name, schema] of Object.entries(props)) {
    const type = schema.type || "";
    const codeLike = type === "string" &&
      (CODE_NAMES.has(name) || /python/i.test(schema.description || ""));
    let input;
    if (type === "boolean") input = el("input", { type: "checkbox" });
    else if (codeLike || type === "object" || type === "array") {
      input = el("textarea", { class: codeLike ? "code" : "", rows: codeLike ? "14" : "3",
        spellcheck: "false" });
      if (codeLike) input.addEventListener("keydown", indentOnTab);
      if (type === "object") input.placeholder = '{"NAME": 1}';
    } else input = el("input", { type: "text", autocomplete: "off" });
    input.name = name;
    input.setAttribute("aria-label", `${tool.name} ${name}`);
    const label = `${name}${required.has(name) ? "" : " (optional)"} · ${type || "any"}` +
      (schema.description ? ` — ${schema.description}` : "");
    form.append(el("label", {}, el("span", { text: label }), input));
    fields.push({ name, type, input, required: required.has(name) });
  }
  const button = el("button", { type: "submit", text: tool.name });
  form.append(button);
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    let args;
    try {
      args = readArguments(fields);
    } catch (err) {
      return showError(err.message);
    }
    send("", { name: tool.name, arguments: args });
  });
  return form;
}

function readArguments(fields) {
  const args = {};
  for (const field of fields) {
    const { name, type, input } = field;
    if (type === "boolean") {
      args[name] = input.checked;
      continue;
    }
    const raw = input.value;
    if (raw.trim() === "" && type !== "string") {
      if (field.required) throw new Error(`${name} is required`);
      continue;
    }
    if (type === "string") {
      if (raw === "" && !field.required) continue;
      args[name] = raw;
    } else if (type === "number" || type === "integer") {
      const value = Number(raw.trim());
      if (!Number.isFinite(value)) throw new Error(`${name} must be a number`);
      args[name] = value;
    } else {
      try {
        args[name] = JSON.parse(raw);
      } catch (err) {
        if (type === "object" || type === "array") throw new Error(`${name} is not valid JSON`);
        args[name] = raw;
      }
    }
  }
  return args;
}

function indentOnTab(event) {
  if (event.key !== "Tab" || event.shiftKey) return;
  event.preventDefault();
  const area = event.target;
  const start = area.selectionStart;
  area.setRangeText("    ", start, area.selectionEnd, "end");
}

async function send(text, call) {
  if (!current || sending) return;
  sending = true;
  showError("");
  try {
    const response = await fetch(`${API}/reply`, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ turn: current.number, text, call }),
    });
    const body = await response.json().catch(() => ({}));
    if (!response.ok) return showError(body.error || `the move was refused (${response.status})`);
    $("reply").hidden = true;
    $("working").hidden = false;
  } catch (err) {
    showError("the game's process is unreachable; your move was not sent");
  } finally {
    sending = false;
  }
}

function showError(message) {
  $("reply-error").textContent = message;
  $("reply-error").hidden = !message;
}

function renderEpisodes(done) {
  $("episodes-over").hidden = done.length === 0;
  const body = $("episodes").tBodies[0];
  body.replaceChildren();
  for (const row of done) {
    body.append(el("tr", {}, ...[row.seed, row.utility, row.opt, row.score.toFixed(3),
      row.commits, row.first_sight_commits].map((v) => el("td", { text: String(v) }))));
  }
}

const SUMMARY_LABELS = {
  episodes: "episodes",
  score: "score (pooled utility / OPT)",
  score_mean: "score, episode mean",
  first_sight_rate: "first-sight commit rate",
  utility_mean: "utility, mean",
  opt_mean: "OPT, mean",
  trap_commits_mean: "trap commits, mean",
  unused_budget_mean: "unused budget, mean",
  realised_utility_mean: "R3 realised utility, mean",
};

function renderFinished(state) {
  $("reply").hidden = true;
  $("working").hidden = true;
  $("finished").hidden = false;
  const titles = { over: "Game over", left: "You left the game", stopped: "The game stopped" };
  $("finished-title").textContent = titles[state.status] || state.status;
  const texts = {
    over: `Recorded as ${state.player} in ${state.out}; "view the run" shows it as the viewer ` +
      "shows a model's cell, and econbench report puts it in its own row.",
    left: `Every move is kept in ${state.out}. Run the same command again, or econbench ` +
      `resume ${state.out}, to go on from the next move.`,
    stopped: state.message,
  };
  $("finished-text").textContent = texts[state.status] || "";
  const body = $("summary").tBodies[0];
  body.replaceChildren();
  for (const [key, label] of Object.entries(SUMMARY_LABELS)) {
    if (!state.summary || !(key in state.summary) || state.summary[key] == null) continue;
    const value = state.summary[key];
    const shown = typeof value === "number" && !Number.isInteger(value) ? value.toFixed(3)
      : String(value);
    body.append(el("tr", {}, el("td", { text: label }), el("td", { text: shown })));
  }
  $("close").hidden = state.status !== "over";
}

async function leave() {
  // The game's process ends once the person leaves: the page says so without asking it.
  following = false;
  await fetch(`${API}/leave`, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: "{}",
  }).catch(() => null);
  $("conn").hidden = true;
}

async function stop() {
  await leave();
  if (lastState && lastState.status === "playing") {
    render({ ...lastState, status: "left", turn: null });
  }
}

$("send-text").addEventListener("click", () => send($("text").value, null));
$("leave").addEventListener("click", stop);
$("close").addEventListener("click", async () => {
  await leave();
  $("close").hidden = true;
  $("finished-text").textContent += " The game is closed; this page can be closed too.";
});
poll();
