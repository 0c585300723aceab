// wfops ui: every value from the server is set with textContent or an attribute, never as
// markup, so a name, an output or an error text cannot become HTML.
"use strict";

const CSRF = document.querySelector('meta[name="csrf-token"]').content;
const READ_ONLY = document.querySelector('meta[name="wfops-read-only"]').content === "true";
const STATUSES = ["running", "completed", "failed", "interrupted", "cancelled"];
const POLL_MS = 1000;

// -- small helpers ------------------------------------------------------------------------
function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (key === "text") node.textContent = String(value);
    else if (key === "class") node.className = value;
    else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else node.setAttribute(key, value === true ? "" : String(value));
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

const SVG = "http://www.w3.org/2000/svg";
function svg(tag, attrs, text) {
  const node = document.createElementNS(SVG, tag);
  for (const [key, value] of Object.entries(attrs || {})) node.setAttribute(key, String(value));
  if (text !== undefined) node.textContent = String(text);
  return node;
}

class ApiError extends Error {
  constructor(body, status) {
    super(body.error || `HTTP ${status}`);
    this.hint = body.hint;
    this.status = status;
  }
}

async function getJSON(path) {
  const response = await fetch(path, { headers: { Accept: "application/json" }, credentials: "same-origin" });
  const body = await response.json().catch(() => ({ error: `HTTP ${response.status}` }));
  if (!response.ok) throw new ApiError(body, response.status);
  return body;
}

async function postJSON(path, data) {
  const response = await fetch(path, {
    method: "POST", credentials: "same-origin",
    headers: { "Content-Type": "application/json", "X-CSRF-Token": CSRF, Accept: "application/json" },
    body: JSON.stringify(data || {}),
  });
  const body = await response.json().catch(() => ({ error: `HTTP ${response.status}` }));
  if (!response.ok) throw new ApiError(body, response.status);
  return body;
}

function errorText(err) {
  return `error: ${err.message}` + (err.hint ? `\nhint: ${err.hint}` : "");
}

// Times: the browser's zone on the page, UTC on hover.
function timeEl(stamp) {
  if (!stamp) return el("span", { class: "muted", text: "—" });
  const when = new Date(stamp);
  return el("time", { datetime: stamp, title: `${stamp.replace("T", " ").replace(/(\.\d+)?Z$/, "")} UTC`,
                      text: when.toLocaleString() });
}

// A stamp in milliseconds, keeping the store's microseconds (Date keeps whole milliseconds).
function ms(stamp) {
  const frac = /\.(\d+)Z$/.exec(stamp);
  const whole = Date.parse(stamp.replace(/\.\d+Z$/, "Z"));
  return whole + (frac ? Number(`0.${frac[1]}`) * 1000 : 0);
}

function duration(a, b) {
  if (!a || !b) return "";
  return showMs(ms(b) - ms(a));
}

function showMs(value) {
  if (value < 1) return `${value.toFixed(2)} ms`;
  if (value < 10) return `${value.toFixed(1)} ms`;
  if (value < 10000) return `${Math.round(value)} ms`;
  return `${(value / 1000).toFixed(1)} s`;
}

// A deployment's schedule entries: the cron and time zone, then its next times (local, UTC on hover).
function scheduleCell(entries) {
  if (!entries.length) return el("span", { class: "muted", text: "—" });
  return el("ul", { class: "schedule" }, entries.map((e) => el("li", { "data-entry": e.entry },
    el("code", { text: `${e.cron} (${e.timezone})${e.enabled ? "" : " disabled"}` }), " ",
    ...e.next.map((t) => el("span", { class: "next" }, timeEl(t.utc), " ")))));
}

function badge(status) { return el("span", { class: `badge ${status}`, text: status }); }
function pretty(value) { return JSON.stringify(value, null, 2); }
function jsonBlock(value, label) {
  return el("pre", { class: "json", "aria-label": label || null, text: value === undefined ? "" : pretty(value) });
}

function main() { return document.getElementById("main"); }
function setMain(...children) { main().replaceChildren(...children); }
function fail(err) { setMain(el("p", { class: "result error", role: "alert", text: errorText(err) })); }

// -- the runs list --------------------------------------------------------------------------
async function runsPage() {
  const params = new URLSearchParams(location.search);
  const form = el("form", { class: "filters panel", "aria-label": "Filter runs" });
  const field = (name, label, input) => el("label", {}, label, input);
  const deployment = el("select", { name: "deployment" }, el("option", { value: "", text: "any" }));
  const status = el("select", { name: "status" }, el("option", { value: "", text: "any" }),
                    STATUSES.map((s) => el("option", { value: s, text: s })));
  const outcome = el("input", { name: "outcome", type: "text", size: 10, placeholder: "any" });
  const since = el("input", { name: "since", type: "datetime-local" });
  const until = el("input", { name: "until", type: "datetime-local" });
  form.append(field("deployment", "Deployment", deployment), field("status", "Status", status),
              field("outcome", "Outcome", outcome), field("since", "Created from", since),
              field("until", "Created before", until),
              el("button", { type: "submit", text: "Apply" }),
              el("button", { type: "button", class: "secondary", text: "Clear", onclick: () => {
                history.replaceState(null, "", "/"); runsPage();
              } }));
  const counts = el("div", { class: "counts", role: "group", "aria-label": "Runs by status" });
  const summary = el("p", { class: "muted", "aria-live": "polite" });
  const tableWrap = el("div", { class: "table-wrap" });
  const pager = el("div", { class: "pager" });
  setMain(el("h1", { text: "Runs" }), form, counts, summary, tableWrap, pager);

  try {
    const project = await getJSON("/api/project");
    for (const d of project.deployments) deployment.append(el("option", { value: d.name, text: d.name }));
  } catch (err) { /* a store without its project still lists runs */ }
  deployment.value = params.get("deployment") || "";
  status.value = params.get("status") || "";
  outcome.value = params.get("outcome") || "";
  since.value = localInput(params.get("since"));
  until.value = localInput(params.get("until"));

  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const next = new URLSearchParams();
    for (const [key, input] of [["deployment", deployment], ["status", status], ["outcome", outcome]])
      if (input.value) next.set(key, input.value);
    if (since.value) next.set("since", new Date(since.value).toISOString());
    if (until.value) next.set("until", new Date(until.value).toISOString());
    history.replaceState(null, "", next.toString() ? `/?${next}` : "/");
    load(next, 0);
  });

  async function load(query, offset) {
    const q = new URLSearchParams(query);
    q.set("offset", String(offset));
    q.set("limit", "50");
    let page;
    try { page = await getJSON(`/api/runs?${q}`); } catch (err) { summary.textContent = errorText(err); return; }
    counts.replaceChildren(...STATUSES.map((s) => el("button", {
      type: "button", "aria-pressed": query.get("status") === s ? "true" : "false",
      "data-status": s, text: `${s}: ${page.counts[s] || 0}`,
      onclick: () => { status.value = query.get("status") === s ? "" : s; form.requestSubmit(); },
    })));
    const last = Math.min(page.offset + page.runs.length, page.total);
    summary.textContent = page.total ? `${page.offset + 1}–${last} of ${page.total} runs, newest first`
                                     : "No run matches.";
    const rows = page.runs.map((run) => el("tr", { "data-run": run.run_id },
      el("td", { class: "id" }, el("a", { href: `/runs/${encodeURIComponent(run.run_id)}`, text: run.run_id })),
      el("td", { text: run.deployment || "—" }),
      el("td", { text: run.workflow }),
      el("td", {}, badge(run.status)),
      el("td", { text: run.outcome || "" }),
      el("td", { text: run.steps ?? "" }),
      el("td", {}, timeEl(run.created_at)),
      el("td", { class: "err", title: run.error || null, text: run.error || "" })));
    tableWrap.replaceChildren(el("table", { "aria-label": "Runs" },
      el("thead", {}, el("tr", {}, ["Run", "Deployment", "Workflow", "Status", "Outcome", "Steps", "Created", "Error"]
        .map((h) => el("th", { scope: "col", text: h })))),
      el("tbody", {}, rows)));
    pager.replaceChildren(
      el("button", { type: "button", class: "secondary", text: "← Newer", disabled: page.offset === 0,
                     onclick: () => load(query, Math.max(0, page.offset - page.limit)) }),
      el("button", { type: "button", class: "secondary", text: "Older →", disabled: last >= page.total,
                     onclick: () => load(query, page.offset + page.limit) }));
  }

  const initial = new URLSearchParams();
  for (const key of ["deployment", "status", "outcome", "since", "until"])
    if (params.get(key)) initial.set(key, params.get(key));
  await load(initial, 0);
}

function localInput(stamp) {
  if (!stamp) return "";
  const d = new Date(stamp);
  if (isNaN(d)) return "";
  const pad = (n) => String(n).padStart(2, "0");
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}`;
}

// -- one run ------------------------------------------------------------------------------------
async function runPage() {
  const runId = decodeURIComponent(location.pathname.replace(/^\/runs\//, ""));
  const head = el("section", { "aria-label": "Run" });
  const actions = el("section", { "aria-label": "Actions" });
  const values = el("section", { "aria-label": "Input and output", class: "grid" });
  const timeline = el("div", { class: "timeline", id: "timeline", tabindex: "0", "aria-label": "Timeline" });
  const graph = el("div", { class: "graph", id: "graph", tabindex: "0", "aria-label": "Workflow graph" });
  const trace = el("div", { class: "trace", id: "trace" });
  const logs = el("div", { class: "logs", id: "logs" });
  const live = el("span", { class: "live", "aria-live": "polite", id: "live" });
  setMain(el("h1", {}, "Run ", el("span", { id: "run-id", text: runId }), " ", live), head, actions, values,
          el("h2", { text: "Timeline" }), timeline, el("h2", { text: "Graph" }), graph,
          el("h2", { text: "Trace" }), trace, el("h2", { text: "Logs" }), logs);

  const state = { entries: [], run: null, timer: null, actionsFor: null, logsFor: null, logNodes: new Map() };

  async function refresh() {
    clearTimeout(state.timer);
    try {
      await update();
    } catch (err) {
      if (err instanceof ApiError && err.status === 404) { fail(err); return; }
      // The server restarted or the network dropped: say so, and try again a little later.
      live.textContent = `⚠ ${err.message}; retrying`;
      state.timer = setTimeout(refresh, POLL_MS * 3);
    }
  }

  async function update() {
    const run = await getJSON(`/api/runs/${encodeURIComponent(runId)}`);
    state.run = run;
    renderHead(head, run);
    renderValues(values, run);
    const key = `${run.status}|${run.interrupt ? run.interrupt.id : ""}|${run.orphaned}`;
    if (state.actionsFor !== key) {  // keep a half-filled form while nothing changed
      state.actionsFor = key;
      renderActions(actions, run, refresh);
    }
    await loadTrace();
    renderTimeline(timeline, state.entries, run);  // drawn with the trace, not after the logs' request
    await loadLogs(run);
    try { renderGraph(graph, await getJSON(`/api/runs/${encodeURIComponent(runId)}/graph`)); } catch (err) {
      graph.replaceChildren(el("p", { class: "result error", text: errorText(err) }));
    }
    const moving = run.status === "running" && !run.orphaned;
    live.textContent = moving ? "● live" : "";
    if (moving) state.timer = setTimeout(refresh, POLL_MS);
  }

  async function loadTrace() {
    for (;;) {
      const from = state.entries.length ? state.entries[state.entries.length - 1].seq + 1 : 0;
      const got = await getJSON(`/api/runs/${encodeURIComponent(runId)}/trace?from=${from}&limit=2000`);
      for (const entry of got) { state.entries.push(entry); trace.append(traceEntry(runId, entry)); }
      if (got.length < 2000) break;
    }
  }

  // A log is stored with its step's trace entry, so they change only when the trace grows (or
  // the run ends, which stores the run's own last lines): ask again then, not on every poll.
  async function loadLogs(run) {
    const key = `${state.entries.length}|${run.status}`;
    if (state.logsFor === key) return;
    const got = await getJSON(`/api/runs/${encodeURIComponent(runId)}/logs`);
    state.logsFor = key;
    // Keep the node of a log shown already, so one a reader opened stays open.
    const nodes = got.map((log) => {
      const id = `${log.seq}|${log.step}|${log.attempt}`;
      if (!state.logNodes.has(id)) state.logNodes.set(id, stepLog(log));
      return state.logNodes.get(id);
    });
    logs.replaceChildren(...(nodes.length ? nodes
      : [el("p", { class: "muted", text: "No logs: no python node printed or logged, no MCP tool sent a log line." })]));
  }

  window.wfopsRefresh = refresh;  // an action's result refreshes the page in place
  await refresh();
}

function renderHead(head, run) {
  const facts = el("dl", { class: "facts" });
  const add = (term, ...value) => facts.append(el("dt", { text: term }), el("dd", {}, ...value));
  add("Status", badge(run.status), run.orphaned ? " (no process drives it: resume it)" : "");
  if (run.outcome) add("Outcome", run.outcome);
  add("Deployment", run.deployment || "—");
  add("Workflow", run.workflow, " ", el("span", { class: "muted", text: run.artifact.slice(0, 12) }));
  add("Steps", String(run.steps ?? ""));
  add("Created", timeEl(run.created_at));
  add("Updated", timeEl(run.updated_at));
  if (run.forked_from)
    add("Forked from", el("a", { href: `/runs/${encodeURIComponent(run.forked_from.run_id)}`, text: run.forked_from.run_id }),
        ` at ${run.forked_from.step}`);
  head.replaceChildren(el("div", { class: "panel" }, facts));
}

function renderValues(values, run) {
  const box = (title, value, id) => el("div", { class: "panel", id }, el("h3", { text: title }), valueView(run.run_id, value));
  const parts = [box("Input", run.input, "run-input"), box("Output", run.output, "run-output")];
  if (run.error) parts.push(box("Error", run.error, "run-error"));
  if (run.interrupt) parts.push(box(`Waiting at ${run.interrupt.step}`, run.interrupt.request, "run-request"));
  values.replaceChildren(...parts);
}

// -- actions -----------------------------------------------------------------------------------
// The result line of the last action on this run: kept across the re-render the action causes,
// so what the action did stays on screen.
let actionResult = null;

function renderActions(section, run, refresh) {
  section.replaceChildren();
  if (READ_ONLY) return;
  const runId = run.run_id;
  if (!actionResult || actionResult.runId !== runId)
    actionResult = { runId, node: el("div", { class: "result", role: "status", "aria-live": "polite", id: "action-result" }) };
  const result = actionResult.node;
  const act = async (button, path, body) => {
    for (const b of section.querySelectorAll("button")) b.disabled = true;
    result.className = "result";
    result.textContent = "working…";
    try {
      const done = await postJSON(`/api/runs/${encodeURIComponent(runId)}/${path}`, body);
      result.className = "result ok";
      result.replaceChildren(`Run ${done.run_id}: ${done.status}${done.outcome ? ` (${done.outcome})` : ""}`);
      if (done.run_id !== runId)
        result.append(" — ", el("a", { href: `/runs/${encodeURIComponent(done.run_id)}`, id: "new-run", text: "open it" }));
      setTimeout(refresh, 0);
      return true;
    } catch (err) {
      result.className = "result error";
      result.textContent = errorText(err);
      for (const b of section.querySelectorAll("button")) b.disabled = false;
      return false;
    }
  };
  const panel = el("div", { class: "panel" }, el("h2", { text: "Actions" }));
  if (run.status === "interrupted" && run.interrupt) panel.append(answerForm(run.interrupt, act));
  const row = el("div", { class: "buttons" });
  if (run.status === "running" || run.status === "interrupted")
    row.append(el("button", { type: "button", class: "danger", id: "cancel", text: "Cancel run",
                              onclick: (e) => act(e.target, "cancel", {}) }));
  if (run.status === "failed" || run.status === "cancelled" || run.orphaned)
    row.append(el("button", { type: "button", id: "redrive",
                              text: run.status === "failed" ? "Redrive from the failed step" : "Resume",
                              onclick: (e) => act(e.target, "redrive", {}) }));
  panel.append(row, forkForm(run, act), result);
  section.append(panel);
}

// The answer form, from the interrupt's resume_schema: one field per property of a flat
// object schema (strings, numbers, booleans, enums), else one JSON text box; one button per outcome.
function answerForm(interrupt, act) {
  const form = el("form", { class: "answer-form", id: "answer-form", "aria-label": "Answer the interrupt" });
  form.append(el("h3", { text: `Answer ${interrupt.step}` }));
  const schema = interrupt.resume_schema;
  const props = schema && schema.type === "object" && schema.properties ? schema.properties : null;
  const flat = props && Object.values(props).every((p) => ["string", "number", "integer", "boolean"].includes(p.type) || p.enum);
  const read = [];
  if (flat) {
    const required = new Set(schema.required || []);
    for (const [name, prop] of Object.entries(props)) {
      const id = `answer-${name}`;
      let input;
      if (prop.enum) input = el("select", { id, name }, el("option", { value: "", text: "—" }),
                                prop.enum.map((v) => el("option", { value: JSON.stringify(v), text: String(v) })));
      else if (prop.type === "boolean") input = el("input", { id, name, type: "checkbox" });
      else input = el("input", { id, name, type: prop.type === "string" ? "text" : "number",
                                 step: prop.type === "integer" ? "1" : "any" });
      form.append(el("div", { class: "field" },
        el("label", { for: id, text: `${name}${required.has(name) ? " (required)" : ""}` }),
        prop.description ? el("span", { class: "muted", text: prop.description }) : null, input));
      read.push([name, prop, input]);
    }
  } else {
    const area = el("textarea", { id: "answer-json", name: "payload", "aria-label": "Answer (JSON)",
                                  text: schema ? "{}" : "null" });
    form.append(el("label", { for: "answer-json", text: "Answer (JSON)" }), area);
    if (schema) form.append(el("details", {}, el("summary", { text: "Schema" }), jsonBlock(schema)));
    read.push([null, null, area]);
  }
  const payload = () => {
    if (read.length === 1 && read[0][0] === null) return JSON.parse(read[0][2].value || "null");
    const found = {};
    for (const [name, prop, input] of read) {
      if (prop.type === "boolean") { if (input.checked) found[name] = true; continue; }
      if (input.value === "") continue;  // left empty: absent, and the schema says if it may be
      if (prop.enum) found[name] = JSON.parse(input.value);
      else if (prop.type === "number" || prop.type === "integer") found[name] = Number(input.value);
      else found[name] = input.value;
    }
    return found;
  };
  const buttons = el("div", { class: "buttons" });
  for (const outcome of interrupt.outcomes) {
    buttons.append(el("button", { type: "submit", value: outcome, "data-outcome": outcome, text: outcome }));
  }
  form.append(buttons);
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const outcome = event.submitter ? event.submitter.value : interrupt.outcomes[0];
    let body;
    try { body = payload(); } catch (err) {
      const result = document.getElementById("action-result");
      result.className = "result error";
      result.textContent = `error: the answer is not JSON: ${err.message}`;
      return;
    }
    act(event.submitter, "answer", { outcome, payload: body });
  });
  return form;
}

function forkForm(run, act) {
  const details = el("details", { id: "fork" }, el("summary", { text: "Fork from a step…" }));
  const form = el("form", { "aria-label": "Fork the run" });
  const step = el("select", { id: "fork-step", name: "from_step" });
  const seen = new Set();
  getJSON(`/api/runs/${encodeURIComponent(run.run_id)}/graph`).then((g) => {
    for (const node of g.nodes) {
      if (node.group || node.kind === "terminal" || node.kind === "join" || seen.has(node.step)) continue;
      seen.add(node.step);
      step.append(el("option", { value: node.step, text: node.step }));
    }
  }).catch(() => {});
  const folded = run.input && typeof run.input.$folded === "string";
  const input = el("textarea", { id: "fork-input", name: "input", text: folded ? "{}" : pretty(run.input ?? {}) });
  form.append(el("label", { for: "fork-step", text: "From step " }), step,
              el("label", { for: "fork-input", text: "Input (JSON, laid over the run's input)" }), input,
              el("div", { class: "buttons" }, el("button", { type: "submit", id: "fork-submit", text: "Fork" })));
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    let given;
    try { given = JSON.parse(input.value || "{}"); } catch (err) {
      const result = document.getElementById("action-result");
      result.className = "result error";
      result.textContent = `error: the input is not JSON: ${err.message}`;
      return;
    }
    act(event.submitter, "fork", { from_step: step.value, input: given });
  });
  details.append(form);
  return details;
}

// -- the timeline -------------------------------------------------------------------------------
// One lane per step path (foreach items and parallel branches have their own paths) and per
// attempt; bars on one time axis from the run's first start to its last end.
function renderTimeline(box, entries, run) {
  if (!entries.length) { box.replaceChildren(el("p", { class: "muted", text: "No step yet." })); return; }
  const t = ms;
  let start = Infinity, end = -Infinity;
  for (const e of entries) { start = Math.min(start, t(e.started_at)); end = Math.max(end, t(e.ended_at)); }
  const total = Math.max(end - start, 0.001);
  const lanes = new Map();
  for (const e of entries) {
    const key = e.attempt > 1 || e.kind === "retry" ? `${e.step} · attempt ${e.attempt}` : e.step;
    if (!lanes.has(key)) lanes.set(key, []);
    lanes.get(key).push(e);
  }
  const rows = [el("div", { class: "axis", "aria-hidden": "true" },
    el("span", { text: "0" }), el("span", { text: showMs(total / 2) }), el("span", { text: showMs(total) }))];
  for (const [key, items] of lanes) {
    const track = el("div", { class: "track" });
    for (const e of items) {
      const kind = e.kind === "retry" ? "retry" : e.error ? "failed" : e.kind === "interrupt" ? "interrupt" : "";
      const left = Math.min(((t(e.started_at) - start) / total) * 100, 99.5);  // a bar at the very end stays seen
      const width = Math.max(((t(e.ended_at) - t(e.started_at)) / total) * 100, 0);
      const bar = el("div", { class: `bar ${kind}`, "data-seq": e.seq,
        title: `#${e.seq} ${e.step} [${e.kind}] ${e.error ? "error: " + e.error.message : e.outcome || ""} (${duration(e.started_at, e.ended_at)})` });
      bar.style.left = `${left}%`;
      bar.style.width = `${width}%`;
      track.append(bar);
    }
    rows.push(el("div", { class: "lane" }, el("span", { class: "name", title: key, text: key }), track));
  }
  box.replaceChildren(...rows);
}

// -- the graph ----------------------------------------------------------------------------------
// Nodes top to bottom in step order (a parallel branch's steps indented), each route an edge:
// to the next node a straight line, to any other a curve on the right.
function renderGraph(box, g) {
  const nodeH = 38, gap = 22, width = 230, indent = 28, left = 20;
  const index = new Map();
  g.nodes.forEach((n, i) => { if (!index.has(n.step)) index.set(n.step, i); });
  const taken = new Set(g.taken || []);
  const pairs = new Set();
  for (let i = 1; i < (g.taken || []).length; i++) pairs.add(`${g.taken[i - 1]}>${g.taken[i]}`);
  const y = (i) => 20 + i * (nodeH + gap);
  const x = (n) => left + (n.group ? indent : 0);
  const far = g.edges.filter((e) => index.get(e.target) !== index.get(e.source) + 1).length;
  const total = { w: left + width + indent + 60 + far * 14 + 80, h: y(g.nodes.length) };
  const root = svg("svg", { width: total.w, height: total.h, viewBox: `0 0 ${total.w} ${total.h}`, role: "img",
                            "aria-label": `Graph of ${g.workflow}` });
  root.append(svg("defs", {}));
  const marker = svg("marker", { id: "arrow", viewBox: "0 0 10 10", refX: 9, refY: 5, markerWidth: 6, markerHeight: 6, orient: "auto-start-reverse" });
  marker.append(svg("path", { d: "M 0 0 L 10 5 L 0 10 z", fill: "#9aa3b2" }));
  root.firstChild.append(marker);
  let lane = 0;
  for (const e of g.edges) {
    const si = index.get(e.source), ti = index.get(e.target);
    if (si === undefined || ti === undefined) continue;
    const s = g.nodes[si], tn = g.nodes[ti];
    const onPath = pairs.has(`${e.source}>${e.target}`);
    const cls = `edge${e.dashed ? " dashed" : ""}${onPath ? " taken" : ""}`;
    let d, lx, ly;
    if (ti === si + 1) {
      const cx = x(s) + width / 2;
      d = `M ${cx} ${y(si) + nodeH} L ${x(tn) + width / 2} ${y(ti)}`;
      lx = cx + 6; ly = y(si) + nodeH + gap / 2 + 4;
    } else {
      lane += 1;
      const out = x(s) + width, into = x(tn) + width, bend = left + width + indent + 20 + lane * 14;
      d = `M ${out} ${y(si) + nodeH / 2} C ${bend} ${y(si) + nodeH / 2}, ${bend} ${y(ti) + nodeH / 2}, ${into} ${y(ti) + nodeH / 2}`;
      lx = bend - 4; ly = (y(si) + y(ti)) / 2 + nodeH / 2;
    }
    root.append(svg("path", { d, class: cls, "marker-end": "url(#arrow)" }));
    if (e.label) root.append(svg("text", { x: lx, y: ly, class: "elabel" }, e.label));
  }
  g.nodes.forEach((n, i) => {
    const cls = `node${taken.has(n.step) ? " taken" : ""}${g.current === n.step ? " current" : ""}`;
    const group = svg("g", { class: cls, "data-step": n.step });
    group.append(svg("rect", { x: x(n), y: y(i), width, height: nodeH, rx: n.kind === "terminal" || n.kind === "end" ? 18 : 4 }));
    group.append(svg("text", { x: x(n) + 10, y: y(i) + 16 }, n.label[0] || n.step));
    group.append(svg("text", { x: x(n) + 10, y: y(i) + 30, class: "kind" },
                     [n.kind, ...n.label.slice(1)].join(" · ").slice(0, 40)));
    group.append(svg("title", {}, [n.step, n.kind, ...n.label.slice(1)].join("\n")));
    root.append(group);
  });
  box.replaceChildren(root);
}

// -- the trace ----------------------------------------------------------------------------------
function traceEntry(runId, e) {
  const result = e.error ? el("span", { class: "bad", text: `error ${e.error.type || ""}: ${e.error.message || ""}` })
                         : (e.outcome || (e.kind === "interrupt" ? "waiting" : "-"));
  const attempt = e.attempt > 1 || e.kind === "retry" ? ` attempt ${e.attempt}` : "";
  const summary = el("summary", {}, `#${e.seq} ${e.step} [${e.kind}]${attempt} `, result,
                     e.next ? ` → ${e.next}` : "", ` (${duration(e.started_at, e.ended_at)})`);
  const body = el("div", { class: "body" });
  const part = (title, value) => el("div", {}, el("h3", { text: title }), valueView(runId, value));
  body.append(part("Input", e.input), part("Output", e.output));
  if (e.state_changes && e.state_changes.length)
    body.append(el("h3", { text: "State writes" }),
                ...e.state_changes.map((c) => el("div", {}, el("code", { text: c.path }), valueView(runId, c.value))));
  if (e.error) body.append(part("Error", e.error));
  const extras = {};
  for (const [k, v] of Object.entries(e))
    if (!["seq", "step", "kind", "attempt", "input", "outcome", "output", "state_changes", "next", "error",
          "started_at", "ended_at"].includes(k)) extras[k] = v;
  if (Object.keys(extras).length) body.append(part("Extras", extras));
  body.append(el("p", { class: "muted" }, "Started ", timeEl(e.started_at), ", ended ", timeEl(e.ended_at)));
  return el("details", { "data-seq": e.seq }, summary, body);
}

// -- the logs -----------------------------------------------------------------------------------
const LOG_OPEN_LINES = 20;  // a longer log starts collapsed

// One attempt's log (or the run's own, step ""), as text; open when short.
function stepLog(log) {
  const lines = log.text.replace(/\n$/, "").split("\n").length;
  const own = log.step === "";
  const title = own ? `run log, up to #${-log.seq}`
                    : `#${log.seq} ${log.step}` + (log.attempt > 1 ? ` attempt ${log.attempt}` : "");
  const summary = el("summary", {}, title, ` (${lines} line${lines === 1 ? "" : "s"})`,
                     log.cut ? el("span", { class: "badge cut", text: `truncated: ${log.cut} characters cut` }) : null);
  return el("details", { class: own ? "log run-log" : "log", "data-seq": log.seq, "data-step": log.step,
                         "data-attempt": log.attempt, "data-cut": log.cut || null, open: lines <= LOG_OPEN_LINES },
            summary, el("pre", { class: "log-text", text: log.text }));
}

// A folded value shows its preview and fetches the whole value when asked.
function valueView(runId, value) {
  if (value && typeof value === "object" && !Array.isArray(value) && typeof value.$folded === "string") {
    const box = el("div", { class: "folded" });
    const button = el("button", { type: "button", class: "secondary", text: `Show the whole value (${value.bytes} bytes)` });
    button.addEventListener("click", async () => {
      button.disabled = true;
      try {
        const got = await getJSON(`/api/runs/${encodeURIComponent(runId)}/value?pointer=${encodeURIComponent(value.$folded)}`);
        box.replaceChildren(jsonBlock(got.value));
      } catch (err) { box.append(el("p", { class: "result error", text: errorText(err) })); button.disabled = false; }
    });
    box.append(el("div", { class: "preview", text: `${value.preview}…` }), button);
    return box;
  }
  return jsonBlock(value);
}

// -- the project --------------------------------------------------------------------------------
async function projectPage() {
  let project;
  try { project = await getJSON("/api/project"); } catch (err) { fail(err); return; }
  const check = el("div", { class: "panel", id: "check", "aria-live": "polite", text: "Checking the lock…" });
  const caps = el("div", { id: "capabilities", text: "Loading the catalog…" });
  const workflows = project.workflows.map((w) => {
    const graph = el("div", { class: "graph" });
    renderGraph(graph, w.graph);
    return el("section", { class: "panel", "data-workflow": w.name },
      el("h3", { text: w.name }), el("p", { class: "muted", text: `${w.file}${w.description ? " — " + w.description : ""}` }),
      el("details", {}, el("summary", { text: "Input schema" }), jsonBlock(w.input_schema)),
      el("details", {}, el("summary", { text: "Graph" }), graph));
  });
  const deployments = el("div", { class: "table-wrap" }, el("table", { "aria-label": "Deployments" },
    el("thead", {}, el("tr", {}, ["Deployment", "Workflow", "Bindings", "Input", "Secrets", "Executor", "Drift", "Next runs"]
      .map((h) => el("th", { scope: "col", text: h })))),
    el("tbody", {}, project.deployments.map((d) => el("tr", { "data-deployment": d.name },
      el("td", {}, el("a", { href: `/?deployment=${encodeURIComponent(d.name)}`, text: d.name })),
      el("td", { text: d.workflow }),
      el("td", {}, jsonBlock(d.bindings)), el("td", {}, jsonBlock(d.input)),
      el("td", { text: d.secrets.join(", ") }), el("td", { text: d.executor }), el("td", { text: d.drift }),
      el("td", {}, scheduleCell(d.schedule || [])))))));
  setMain(el("h1", { text: "Project" }), el("p", { class: "muted", text: `Store: ${project.store}` }),
          el("h2", { text: "Lock status (check)" }), check,
          el("h2", { text: "Deployments" }), deployments,
          el("h2", { text: "Workflows" }), ...workflows,
          el("h2", { text: "Capabilities" }), caps);
  getJSON("/api/project/check").then((r) => {
    check.replaceChildren(el("p", { class: r.ok ? "result ok" : "result error",
                                    text: r.ok ? "wfops.lock is up to date." : "wfops check found problems:" }),
      ...r.diagnostics.map((d) => el("div", { text: `${d.file}:${d.line}:${d.column}: ${d.severity}[${d.code}] ${d.message}` })));
  }).catch((err) => { check.textContent = errorText(err); });
  getJSON("/api/project/capabilities").then((r) => {
    caps.replaceChildren(...r.notes.map((n) => el("p", { class: "muted", text: n })),
      ...r.capabilities.map((c) => el("details", { class: "panel", "data-capability": c.ref },
        el("summary", {}, el("code", { text: c.ref }), ` — ${c.description || ""}`),
        el("p", { text: `outcomes: ${c.outcomes.join(", ")} · contract ${c.contract_hash.slice(0, 12)} (${c.origin})` }),
        el("h3", { text: "Input schema" }), jsonBlock(c.input_schema),
        el("h3", { text: "Output schema" }), jsonBlock(c.output_schema))));
  }).catch((err) => { caps.textContent = errorText(err); });
}

// -- start --------------------------------------------------------------------------------------
document.addEventListener("DOMContentLoaded", () => {
  const page = document.body.dataset.page;
  for (const a of document.querySelectorAll("nav a"))
    if (a.dataset.nav === (page === "run" ? "runs" : page)) a.setAttribute("aria-current", "page");
  const pages = { runs: runsPage, run: runPage, project: projectPage };
  (pages[page] || runsPage)().catch(fail);
});
