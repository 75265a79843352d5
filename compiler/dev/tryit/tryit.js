// The try-it page of `lynxc dev`: lists the server's tools over MCP, renders a form for the chosen
// one (form.js), checks it against the tool's input schema before sending, calls the tool with a
// progress token and shows what comes back. On notifications/tools/list_changed (a rebuild) it
// lists again and re-renders the chosen tool's form, keeping the values that still fit.

import { clip, el, formCanExpress, renderForm, validate } from "./form.js";
import { HttpError, McpClient, RpcError } from "./mcp.js";

const MAX_RESULT_CHARS = 200000; // a huge result is shown cut, with how much was left out
// The hints MCP clients take as true when a tool leaves them out (destructive only of a tool
// that is not read-only).
const ASSUMED_HINTS = new Set(["destructiveHint", "openWorldHint"]);
const MAX_PROGRESS_LINES = 100; // a tool may report progress without end: the latest are shown

const $ = (id) => document.getElementById(id);

const page = {
  client: null,
  tools: [],
  tool: null, // the chosen tool (as listed)
  form: null,
  mode: "form",
  calls: 0,
  listing: null,
};

function setConnection(state, detail) {
  const node = $("connection");
  const words = {
    connecting: "Connecting…",
    connected: "Connected",
    reconnecting: "Reconnecting…",
    disconnected: "Disconnected",
  };
  node.dataset.state = state;
  node.textContent = `${words[state] || state}${detail ? ` (${clip(detail, 120)})` : ""}`;
}

function errorText(err) {
  if (err instanceof RpcError) return `JSON-RPC error ${err.code}: ${clip(err.message, 2000)}`;
  if (err instanceof HttpError) return err.message;
  if (err instanceof TypeError) return `the server cannot be reached (${err.message})`;
  return clip(String(err && err.message ? err.message : err), 2000);
}

// --- tools -------------------------------------------------------------------------------------

async function listTools() {
  // One listing at a time; a second request while one runs lists again after it.
  if (page.listing) {
    page.relist = true;
    return page.listing;
  }
  page.listing = (async () => {
    do {
      page.relist = false;
      try {
        const tools = await page.client.listTools();
        showTools(tools);
      } catch (err) {
        $("tools-note").textContent = `Could not list the tools: ${errorText(err)}`;
      }
    } while (page.relist);
  })();
  try {
    await page.listing;
  } finally {
    page.listing = null;
  }
}

function showTools(tools) {
  const select = $("tool-select");
  const previous = page.tool ? page.tool.name : new URLSearchParams(location.hash.slice(1)).get("tool");
  page.tools = tools;
  select.replaceChildren();
  if (!tools.length) {
    select.append(el("option", { value: "", text: "(no tools: is the build good?)" }));
    select.disabled = true;
    $("tools-note").textContent = "The server lists no tools yet.";
    $("tool-section").hidden = true;
    page.tool = null;
    return;
  }
  for (const tool of tools) {
    const title = tool.title || (tool.annotations && tool.annotations.title);
    select.append(el("option", { value: tool.name, text: clip(title ? `${tool.name}: ${title}` : tool.name, 150) }));
  }
  select.disabled = false;
  const noun = tools.length === 1 ? "tool" : "tools";
  $("tools-note").textContent = `${tools.length} ${noun}.`;
  const chosen = tools.find((t) => t.name === previous) || tools[0];
  select.value = chosen.name;
  const changed = !page.tool || JSON.stringify(page.tool) !== JSON.stringify(chosen);
  if (changed) chooseTool(chosen, { keep: true });
}

function chooseTool(tool, { keep = false } = {}) {
  const before = page.tool;
  let values;
  if (keep && before && page.form && before.name === tool.name) values = currentArguments();
  page.tool = tool;
  history.replaceState(null, "", `#tool=${encodeURIComponent(tool.name)}`);
  $("tool-section").hidden = false;
  const title = tool.title || (tool.annotations && tool.annotations.title) || tool.name;
  $("tool-heading").textContent = clip(title, 200);
  $("tool-name").textContent = title === tool.name ? "" : clip(tool.name, 200);
  const badges = $("tool-badges");
  badges.replaceChildren();
  const hints = tool.annotations || {};
  const names = { readOnlyHint: "read-only", destructiveHint: "destructive", idempotentHint: "idempotent", openWorldHint: "open world" };
  for (const [key, label] of Object.entries(names)) {
    if (typeof hints[key] === "boolean") {
      badges.append(el("li", { className: `badge ${hints[key] ? "on" : "off"}`, text: hints[key] ? label : `not ${label}` }));
    } else if (ASSUMED_HINTS.has(key) && !(key === "destructiveHint" && hints.readOnlyHint === true)) {
      // Left out, this hint is taken as true by MCP clients: the page says so, as the docs do.
      badges.append(el("li", { className: "badge on", text: `${label} (assumed)` }));
    }
  }
  $("tool-description").replaceChildren(
    ...clip(tool.description || "", 20000)
      .split(/\n\s*\n/)
      .filter((p) => p.trim())
      .map((p) => el("p", { text: p })),
  );
  renderArguments(values);
}

function renderArguments(values) {
  const schema = page.tool.inputSchema || { type: "object" };
  const expressible = formCanExpress(schema);
  page.form = renderForm(schema, $("form-fields"), { idPrefix: "arg" });
  page.form.onChange = () => {
    if (page.shown) check({ quiet: true });
  };
  page.shown = false;
  $("problems").hidden = true;
  $("problems").replaceChildren();
  const formRadio = document.querySelector('input[name="mode"][value="form"]');
  formRadio.disabled = !expressible;
  if (values !== undefined) {
    // After a rebuild: the values that still fit the tool's new schema, defaults for the rest.
    if (expressible) page.form.set(values, { strict: true });
    $("json-arguments").value = JSON.stringify(expressible ? page.form.read() || {} : values, null, 2);
  } else {
    $("json-arguments").value = JSON.stringify(page.form.read() || {}, null, 2);
  }
  setMode(expressible ? page.mode : "json", { sync: false });
}

function currentArguments() {
  if (page.mode === "json") {
    try {
      return JSON.parse($("json-arguments").value);
    } catch {
      return undefined;
    }
  }
  return page.form ? page.form.read() : undefined;
}

function setMode(mode, { sync = true } = {}) {
  if (sync && mode !== page.mode) {
    if (mode === "json") {
      $("json-arguments").value = JSON.stringify(page.form.read() || {}, null, 2);
    } else {
      const values = currentArguments();
      if (values !== undefined) page.form.set(values);
    }
  }
  page.mode = mode;
  document.querySelector(`input[name="mode"][value="${mode}"]`).checked = true;
  $("form-fields").hidden = mode !== "form";
  $("json-fields").hidden = mode !== "json";
  if (page.shown) check({ quiet: true });
}

// --- checking and calling ----------------------------------------------------------------------

function check({ quiet = false } = {}) {
  const schema = page.tool.inputSchema || { type: "object" };
  let outcome;
  const jsonBox = $("json-arguments");
  if (page.mode === "json") {
    let value;
    try {
      value = JSON.parse(jsonBox.value);
      outcome = validate(schema, value);
    } catch (err) {
      outcome = { value: undefined, problems: [{ location: "", message: `Not valid JSON: ${err.message}` }] };
    }
    page.form.showProblems([]);
  } else {
    outcome = page.form.check();
  }
  page.shown = true;
  showProblems(outcome.problems, quiet);
  if (page.mode === "json") {
    if (outcome.problems.length) jsonBox.setAttribute("aria-invalid", "true");
    else jsonBox.removeAttribute("aria-invalid");
  }
  return outcome;
}

// "/travellers/1/age" -> "travellers › item 2 › age": where a field is, for the summary.
function trail(path) {
  return path
    .split("/")
    .slice(1)
    .map((part) => part.replace(/~1/g, "/").replace(/~0/g, "~"))
    .map((part) => (/^\d+$/.test(part) ? `item ${Number(part) + 1}` : part))
    .join(" › ");
}

function showProblems(problems, quiet) {
  const box = $("problems");
  const placed = page.mode === "form" ? page.form.showProblems(problems) : { byField: new Map(), unplaced: problems };
  box.replaceChildren();
  if (!problems.length) {
    box.hidden = true;
    return;
  }
  box.hidden = false;
  const count = problems.length === 1 ? "1 problem" : `${problems.length} problems`;
  box.append(el("h3", { id: "problems-heading", text: `Not sent: ${count} with the arguments` }));
  const list = el("ul");
  for (const [field, messages] of placed.byField) {
    const link = el("a", { href: `#${field.id}`, text: trail(field.path) });
    link.addEventListener("click", (event) => {
      event.preventDefault();
      const target = field.focusTarget();
      if (target) target.focus();
    });
    list.append(el("li", {}, link, document.createTextNode(`: ${messages.join(" ")}`)));
  }
  for (const problem of placed.unplaced) {
    const where = problem.location ? `${problem.location.slice(1).replace(/\//g, ".")}: ` : "";
    list.append(el("li", { text: `${where}${problem.message}` }));
  }
  box.append(list);
  if (!quiet) box.focus();
}

async function call(event) {
  event.preventDefault();
  if (!page.tool) return;
  const outcome = check();
  if (outcome.problems.length) return; // an invalid form is never sent
  const tool = page.tool;
  const args = outcome.value || {};
  const token = `try-it-${++page.calls}`;
  const result = $("result");
  const button = $("call-button");
  const status = el("p", { className: "status", text: `Calling ${tool.name}…` });
  const progress = el("div", { className: "progress" });
  result.replaceChildren(status, progress);
  result.setAttribute("aria-busy", "true");
  button.disabled = true;
  const started = performance.now();
  let bar = null;
  let log = null;
  let dropped = 0;
  const onMessage = (message) => {
    if (message.method !== "notifications/progress") return;
    const p = message.params || {};
    if (p.progressToken !== token) return;
    if (!bar) {
      bar = el("progress", { id: "progress-bar", "aria-label": "Progress" });
      log = el("ul", { className: "progress-log", "aria-label": "Progress messages" });
      progress.append(bar, log);
    }
    if (typeof p.total === "number" && p.total > 0) {
      bar.max = p.total;
      bar.value = Math.min(p.progress, p.total);
    }
    const total = typeof p.total === "number" ? ` of ${p.total}` : "";
    log.append(el("li", { text: `${p.progress}${total}${p.message ? `: ${clip(p.message, 500)}` : ""}` }));
    dropped += trimLog(log, dropped);
  };
  try {
    const answer = await page.client.request(
      "tools/call",
      { name: tool.name, arguments: args, _meta: { progressToken: token } },
      onMessage,
    );
    showResult(answer, status, performance.now() - started);
  } catch (err) {
    const took = performance.now() - started;
    status.className = "status error";
    status.textContent = `Failed: ${errorText(err)} (${formatTime(took)})`;
    if (err instanceof RpcError && err.data !== undefined) {
      result.append(details("Error data", err.data, true));
    }
  } finally {
    result.removeAttribute("aria-busy");
    button.disabled = false;
  }
}

// Keeps the log at its last MAX_PROGRESS_LINES messages under one line counting those dropped;
// returns how many it dropped now.
function trimLog(log, droppedBefore) {
  const note = droppedBefore ? log.firstChild : null;
  let dropped = 0;
  while (log.childElementCount - (note ? 1 : 0) > MAX_PROGRESS_LINES) {
    (note ? note.nextSibling : log.firstChild).remove();
    dropped += 1;
  }
  if (!dropped) return 0;
  const total = droppedBefore + dropped;
  const line = note || el("li", { className: "dropped" });
  line.textContent = `(${total} earlier message${total === 1 ? "" : "s"} not shown)`;
  if (!note) log.prepend(line);
  return dropped;
}

function formatTime(ms) {
  return ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(2)} s`;
}

function pretty(value) {
  const text = JSON.stringify(value, null, 2);
  return text.length > MAX_RESULT_CHARS
    ? `${text.slice(0, MAX_RESULT_CHARS)}\n… (${text.length - MAX_RESULT_CHARS} more characters not shown)`
    : text;
}

function details(title, value, open) {
  return el("details", { open, className: "structured" }, el("summary", { text: title }), el("pre", { tabindex: "0", text: pretty(value) }));
}

function showResult(answer, status, took) {
  const result = $("result");
  const isError = answer.isError === true;
  status.className = isError ? "status error" : "status ok";
  status.textContent = `${isError ? "The tool answered with an error" : "Done"} in ${formatTime(took)}`;
  if (answer.structuredContent !== undefined) {
    result.append(details("Structured content", answer.structuredContent, true));
  }
  const content = Array.isArray(answer.content) ? answer.content : [];
  if (content.length) {
    const heading = el("h3", { text: isError ? "Error text" : "Text content" });
    result.append(heading);
    for (const item of content.slice(0, 100)) {
      if (item && item.type === "text") {
        result.append(el("pre", { className: isError ? "text error" : "text", tabindex: "0", text: clip(item.text || "", MAX_RESULT_CHARS) }));
      } else {
        result.append(details(`${clip((item && item.type) || "content", 40)} content`, item, false));
      }
    }
  }
}

// --- start -------------------------------------------------------------------------------------

async function start() {
  const main = $("main");
  page.client = new McpClient(main.dataset.endpoint, {
    onState: setConnection,
    onNotification: (message) => {
      if (message.method === "notifications/tools/list_changed") listTools();
    },
    onReconnect: () => listTools(),
  });
  $("tool-select").addEventListener("change", (event) => {
    const tool = page.tools.find((t) => t.name === event.target.value);
    if (tool) chooseTool(tool);
  });
  for (const radio of document.querySelectorAll('input[name="mode"]')) {
    radio.addEventListener("change", () => {
      if (radio.checked) setMode(radio.value);
    });
  }
  $("json-arguments").addEventListener("input", () => {
    if (page.shown) check({ quiet: true });
  });
  $("call-form").addEventListener("submit", call);
  window.addEventListener("pagehide", () => page.client.close());
  try {
    const info = await page.client.connect();
    const server = info.serverInfo || {};
    const bits = [server.title || server.name, server.version ? `version ${server.version}` : ""].filter(Boolean);
    if (bits.length) $("server-info").append(document.createTextNode(` · ${clip(bits.join(", "), 200)}`));
    await listTools();
  } catch (err) {
    setConnection("disconnected", errorText(err));
    $("tools-note").textContent = `Could not connect: ${errorText(err)}`;
  }
}

// For tests and curious authors: the page's own form renderer and validator.
window.lynxcTryIt = { renderForm, validate, formCanExpress, page };

start();
