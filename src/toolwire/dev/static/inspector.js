// The toolwire inspector page. Everything a server sends is put on the page as text
// (textContent, attribute values), never parsed as HTML.
"use strict";

const TOKEN = new URLSearchParams(location.search).get("token") || "";
const $ = (id) => document.getElementById(id);
let calls = 0;

function el(tag, attributes, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attributes || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key === "class") node.className = value;
    else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else node.setAttribute(key, value === true ? "" : String(value));
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

// "1 tool", "2 tools", "0 tools": a count and its noun, plural unless one.
function counted(count, noun) { return `${count} ${noun}${count === 1 ? "" : "s"}`; }

async function api(action, body) {
  const response = await fetch("/api/" + action, {
    method: "POST",
    headers: { "Content-Type": "application/json", "X-Toolwire-Token": TOKEN },
    body: JSON.stringify(body || {}),
  });
  const answer = await response.json();
  if (answer.error) throw answer.error;
  return answer.ok;
}

function status(text) { $("status").textContent = text; }

// -- state and eras -------------------------------------------------------------------------

async function refreshState() {
  const state = await api("state");
  $("server").textContent = `${state.server.name || "?"} ${state.server.version || ""} — ${state.target}`;
  const era = $("era");
  if (!era.options.length) {
    era.append(el("option", { value: "" }, "newest"));
    for (const version of state.versions) era.append(el("option", { value: version }, version));
    era.addEventListener("change", async () => {
      status("switching protocol…");
      await api("era", { version: era.value || null });
      await loadAll();
    });
  }
  era.value = state.chosen || "";
  status(`connected (protocol ${state.version})`);
  showFailure(state.error);
  return state;
}

function showFailure(error) {
  $("failure").hidden = !error;
  $("failure-text").textContent = error || "";
}

async function loadAll() {
  await refreshState();
  await loadTools();
  await loadResources();
  await loadPrompts();
}

// -- tools ----------------------------------------------------------------------------------

let selectedTool = null;

async function loadTools() {
  const tools = await api("tools");
  const list = $("tools");
  list.replaceChildren();
  for (const tool of tools) {
    const item = el("li", { "data-name": tool.name, onclick: () => showTool(tool, item) },
      el("span", { class: "name" }, tool.name),
      tool.title || tool.annotations?.title ? el("span", { class: "title" }, tool.title || tool.annotations.title) : null);
    list.append(item);
    if (selectedTool && selectedTool === tool.name) showTool(tool, item);
  }
  if (!selectedTool) $("tool").replaceChildren(el("p", {}, `${counted(tools.length, "tool")}: pick one.`));
}

function hints(tool) {
  const given = tool.annotations || {};
  const badges = [];
  const hint = (key, fallback) => (key in given ? [given[key], true] : [fallback, false]);
  const [readOnly, readOnlyGiven] = hint("readOnlyHint", false);
  if (readOnly) badges.push(el("span", { class: "badge read-only" + (readOnlyGiven ? "" : " default") }, "read-only"));
  const [destructive, destructiveGiven] = hint("destructiveHint", true);
  if (!readOnly && destructive) badges.push(el("span", { class: "badge destructive" + (destructiveGiven ? "" : " default") }, "destructive"));
  const [idempotent] = hint("idempotentHint", false);
  if (!readOnly && idempotent) badges.push(el("span", { class: "badge" }, "idempotent"));
  const [openWorld, openGiven] = hint("openWorldHint", true);
  if (openWorld) badges.push(el("span", { class: "badge" + (openGiven ? "" : " default") }, "open-world"));
  const task = tool.execution?.taskSupport;
  if (task === "optional" || task === "required") badges.push(el("span", { class: "badge task" }, task === "required" ? "task only" : "task"));
  const visibility = tool._meta?.ui?.visibility;
  if (Array.isArray(visibility) && !visibility.includes("model")) {
    badges.push(el("span", { class: "badge app-only", title: "MCP Apps: only its view calls it; hosts keep it from the model" }, "app only"));
  }
  return badges;
}

function showTool(tool, item) {
  forgetApps();
  selectedTool = tool.name;
  for (const other of document.querySelectorAll("#tools li")) other.classList.toggle("selected", other === item);
  const schema = tool.inputSchema || { type: "object" };
  const form = buildForm(schema, schema);
  const raw = el("textarea", { class: "raw", "aria-label": "arguments as JSON" });
  const sync = () => { raw.value = JSON.stringify(form.value(), null, 2); };
  form.node.addEventListener("input", sync);
  form.node.addEventListener("change", sync);
  sync();
  const progress = el("progress", { hidden: true, max: 1 });
  const progressText = el("span", { class: "progress-text" });
  const logs = el("div", { class: "logs" });
  const result = el("div", { class: "result" });
  const asTask = el("input", { type: "checkbox", id: "as-task" });
  const call = el("button", { class: "primary", type: "button", id: "call", onclick: async () => {
    let args;
    try { args = JSON.parse(raw.value || "{}"); } catch (error) { result.replaceChildren(el("p", { class: "error-label" }, "The arguments are not JSON: " + error.message)); return; }
    const id = "c" + (++calls);
    progress.hidden = true; progress.removeAttribute("value"); progressText.textContent = ""; logs.replaceChildren();
    result.replaceChildren(el("p", {}, "calling…"));
    activeCalls[id] = { progress, progressText, logs };
    try {
      const answer = await api("call", { name: tool.name, arguments: args, call: id, task: asTask.checked });
      delete activeCalls[id];
      progress.hidden = true;  // the result is here: later notifications change nothing
      progressText.textContent = progressSummary(answer.progress);
      result.replaceChildren(renderResult(answer.result, tool), serverOutput(answer.stderr), el("p", { class: "duration" }, `${answer.ms} ms`));
      result.classList.toggle("error", !!answer.result.isError);
      const ui = appResource(tool);
      if (ui) result.append(await mountApp(tool, ui, args, answer.result));
    } catch (error) {
      progress.hidden = true;
      result.classList.add("error");
      result.replaceChildren(el("p", { class: "error-label" }, `Error ${error.code ?? ""}: ${error.message}`), serverOutput(error.stderr));
    } finally {
      delete activeCalls[id];
    }
  } }, "Call");
  $("tool").replaceChildren(
    el("h2", {}, tool.title || tool.name), el("p", {}, ...hints(tool)),
    el("p", { class: "description" }, tool.description || ""),
    form.node,
    el("details", {}, el("summary", {}, "arguments as JSON"), raw),
    el("p", {}, call, " ", el("label", {}, asTask, " run as a task")),
    progress, progressText, logs, result,
  );
}

const activeCalls = {};

// What a finished call's progress notifications came to (none: nothing is said).
function progressSummary(progress) {
  if (!progress || !progress.count) return "";
  const last = progress.last || {};
  const amount = last.total ? `${last.progress} / ${last.total} (${Math.round(100 * last.progress / last.total)}%)` : `${last.progress}`;
  return `${counted(progress.count, "progress notification")}; the last: ${amount}${last.message ? " — " + last.message : ""}`;
}

// What the server wrote on stderr during a failed call: its print() output, its traceback.
function serverOutput(text) {
  if (!text) return "";  // an empty text: replaceChildren() would write out a null
  return el("details", { class: "server-output", open: true }, el("summary", {}, "the server's stderr during the call"), el("pre", {}, text));
}

// -- forms from JSON Schema -----------------------------------------------------------------

function resolve(schema, root) {
  let depth = 0;
  while (schema && typeof schema.$ref === "string" && depth++ < 8) {
    const path = schema.$ref.replace(/^#\//, "").split("/");
    let node = root;
    for (const part of path) node = node?.[part.replace(/~1/g, "/").replace(/~0/g, "~")];
    schema = node || {};
  }
  return schema || {};
}

function optionalOf(schema) {
  const branches = schema.anyOf || schema.oneOf;
  if (Array.isArray(branches) && branches.length === 2) {
    const other = branches.find((branch) => branch.type !== "null");
    if (branches.some((branch) => branch.type === "null") && other) return other;
  }
  return null;
}

function buildForm(schema, root, name, required) {
  schema = resolve(schema, root);
  const inner = optionalOf(schema);
  if (inner) return buildForm(resolve(inner, root), root, name, false);
  const help = schema.description ? el("span", { class: "help" }, schema.description) : null;
  const label = name !== undefined ? el("label", {}, name + (required ? " *" : "")) : null;
  const type = Array.isArray(schema.type) ? schema.type.find((t) => t !== "null") : schema.type;
  if (schema.enum || schema.const !== undefined) {
    const values = schema.enum || [schema.const];
    const select = el("select", { name }, required ? null : el("option", { value: "" }, "—"),
      values.map((value, index) => el("option", { value: String(index) }, JSON.stringify(value))));
    if (schema.default !== undefined) select.value = String(values.findIndex((v) => JSON.stringify(v) === JSON.stringify(schema.default)));
    return { node: el("div", { class: "field" }, label, select, help), value: () => (select.value === "" ? undefined : values[Number(select.value)]) };
  }
  if (type === "object" || schema.properties) {
    const fields = [];
    const needed = new Set(schema.required || []);
    const box = name !== undefined ? el("fieldset", {}, el("legend", {}, name + (required ? " *" : "")), help) : el("div", { class: "form" });
    for (const [key, sub] of Object.entries(schema.properties || {})) {
      const field = buildForm(sub, root, key, needed.has(key));
      fields.push([key, field]);
      box.append(field.node);
    }
    return { node: box, value: () => {
      const result = {};
      for (const [key, field] of fields) { const value = field.value(); if (value !== undefined) result[key] = value; }
      return result;
    } };
  }
  if (type === "array") {
    const rows = [];
    const list = el("div", { class: "rows" });
    const add = el("button", { type: "button", onclick: () => {
      const row = buildForm(schema.items || {}, root, `#${rows.length + 1}`, true);
      rows.push(row);
      list.append(row.node);
    } }, "+ item");
    return { node: el("div", { class: "field" }, label, help, list, add), value: () => (rows.length || required ? rows.map((row) => row.value()) : undefined) };
  }
  if (type === "boolean") {
    const box = el("input", { type: "checkbox", name });
    if (schema.default === true) box.checked = true;
    return { node: el("div", { class: "field" }, label, box, help), value: () => box.checked };
  }
  if (type === "number" || type === "integer") {
    const input = el("input", { type: "number", name, step: type === "integer" ? "1" : "any", min: schema.minimum, max: schema.maximum, placeholder: schema.default });
    return { node: el("div", { class: "field" }, label, input, help), value: () => (input.value === "" ? undefined : Number(input.value)) };
  }
  const input = el("input", { type: "text", name, placeholder: schema.default ?? "" });
  return { node: el("div", { class: "field" }, label, input, help), value: () => {
    if (input.value === "") return undefined;
    if (type === "string") return input.value;
    try { return JSON.parse(input.value); } catch { return input.value; }
  } };
}

// -- results ----------------------------------------------------------------------------------

function renderResult(result, tool) {
  const box = el("div", {});
  if (result.isError) box.append(el("p", { class: "error-label" }, "isError: the tool reported an error"));
  for (const block of result.content || []) box.append(renderBlock(block));
  if ("structuredContent" in result) box.append(el("details", { open: true }, el("summary", {}, "structuredContent"), tree(result.structuredContent)));
  return box;
}

function renderBlock(block) {
  switch (block.type) {
    case "text": return el("pre", {}, block.text);
    case "image": return el("img", { src: `data:${block.mimeType};base64,${block.data}`, alt: "image result" });
    case "audio": return el("audio", { controls: true, src: `data:${block.mimeType};base64,${block.data}` });
    case "resource_link": return el("p", {}, "resource link: ", el("code", {}, block.uri), block.name ? ` (${block.name})` : "");
    case "resource": {
      const resource = block.resource || {};
      return el("div", {}, el("p", {}, "embedded resource ", el("code", {}, resource.uri || "")),
        "text" in resource ? el("pre", {}, resource.text) : el("p", {}, `${resource.mimeType || "binary"}, ${counted(Math.floor(String(resource.blob || "").replace(/=+$/, "").length * 3 / 4), "byte")}`));
    }
    default: return el("pre", {}, JSON.stringify(block, null, 2));
  }
}

function tree(value) {
  if (value === null || typeof value !== "object") return el("span", { class: "tree" }, JSON.stringify(value));
  const list = el("ul", {});
  for (const [key, item] of Object.entries(value)) list.append(el("li", {}, el("strong", {}, key), ": ", tree(item)));
  return el("div", { class: "tree" }, Array.isArray(value) ? "[" : "{", list, Array.isArray(value) ? "]" : "}");
}

// -- MCP Apps: a tool's interactive view (ui:// resource) in a sandbox ---------------------------

function appResource(tool) {
  const meta = tool._meta || {};
  const uri = (meta.ui && meta.ui.resourceUri) || meta["ui/resourceUri"];
  return typeof uri === "string" && uri.startsWith("ui://") ? uri : null;
}

const SANDBOX_ORIGIN = location.origin.replace("//127.0.0.1", "//localhost");

async function mountApp(tool, uri, args, result) {
  const box = el("div", { class: "app" }, el("p", { class: "help" }, `interactive view ${uri} (MCP Apps)`));
  let html;
  try {
    const { contents } = await api("read", { uri });
    const entry = contents[0] || {};
    html = entry.text !== undefined ? entry.text : new TextDecoder().decode(Uint8Array.from(atob(entry.blob || ""), (c) => c.charCodeAt(0)));
  } catch (error) {
    box.append(el("p", { class: "error-label" }, `The view ${uri} could not be read: ${error.message}`));
    return box;
  }
  const frame = el("iframe", { class: "app-frame", sandbox: "allow-scripts allow-same-origin", title: "interactive view",
    src: `${SANDBOX_ORIGIN}/sandbox?host=${encodeURIComponent(location.origin)}` });
  const messages = el("div", { class: "app-messages" });
  box.append(frame, messages);
  const post = (message) => frame.contentWindow && frame.contentWindow.postMessage(message, SANDBOX_ORIGIN);
  const reply = (id, result) => post({ jsonrpc: "2.0", id, result });
  const fail = (id, code, message) => post({ jsonrpc: "2.0", id, error: { code, message } });
  const visibleToApp = (name) => {
    return api("tools").then((tools) => {
      const target = tools.find((item) => item.name === name);
      const visibility = target?._meta?.ui?.visibility;
      return !!target && (!Array.isArray(visibility) || visibility.includes("app"));
    });
  };
  const listener = async (event) => {
    if (event.source !== frame.contentWindow || event.origin !== SANDBOX_ORIGIN) return;
    const message = event.data || {};
    if (message.jsonrpc !== "2.0") return;
    const { id, method, params } = message;
    if (method === "ui/notifications/sandbox-proxy-ready") {
      post({ jsonrpc: "2.0", method: "ui/notifications/sandbox-resource-ready", params: { html } });
    } else if (method === "ui/initialize") {
      reply(id, {
        protocolVersion: (params && params.protocolVersion) || "2025-06-18",
        hostInfo: { name: "toolwire dev", version: "1" },
        hostCapabilities: { serverTools: {}, serverResources: {}, logging: {}, message: { text: {} } },
        hostContext: { toolInfo: { tool }, theme: "light", displayMode: "inline", availableDisplayModes: ["inline"], platform: "web", containerDimensions: { maxHeight: 600 } },
      });
    } else if (method === "ui/notifications/initialized") {
      post({ jsonrpc: "2.0", method: "ui/notifications/tool-input", params: { arguments: args } });
      post({ jsonrpc: "2.0", method: "ui/notifications/tool-result", params: result });
    } else if (method === "tools/call") {
      if (!(await visibleToApp(params?.name))) { fail(id, -32602, `tool ${params?.name} is not callable by apps`); return; }
      try { reply(id, (await api("call", { name: params.name, arguments: params.arguments || {}, call: "app" })).result); }
      catch (error) { fail(id, error.code ?? -32603, error.message); }
    } else if (method === "resources/read") {
      try { reply(id, { contents: (await api("read", { uri: params?.uri })).contents }); }
      catch (error) { fail(id, error.code ?? -32603, error.message); }
    } else if (method === "notifications/message") {
      messages.append(el("div", { class: "log" }, `[app ${params?.level || "info"}] ${typeof params?.data === "string" ? params.data : JSON.stringify(params?.data)}`));
    } else if (method === "ui/message") {
      messages.append(el("div", { class: "log" }, `[app says] ${params?.content?.text ?? JSON.stringify(params?.content)}`));
      reply(id, {});
    } else if (method === "ui/notifications/size-changed") {
      if (typeof params?.height === "number") frame.style.height = Math.min(600, Math.max(40, params.height)) + "px";
    } else if (method === "ping") {
      reply(id, {});
    } else if (id !== undefined) {
      fail(id, -32601, `Method not found: the inspector does not handle ${method}`);
    }
  };
  window.addEventListener("message", listener);
  appListeners.push(listener);
  return box;
}

const appListeners = [];

function forgetApps() {
  for (const listener of appListeners.splice(0)) window.removeEventListener("message", listener);
}

// -- resources and prompts ------------------------------------------------------------------

async function loadResources() {
  const { resources, templates } = await api("resources");
  const list = $("resources");
  list.replaceChildren();
  for (const resource of resources) {
    list.append(el("li", { "data-uri": resource.uri, onclick: () => readInto(resource.uri) }, el("span", { class: "name" }, resource.uri), el("span", { class: "title" }, resource.name)));
  }
  for (const template of templates) {
    list.append(el("li", { "data-uri": template.uriTemplate, onclick: () => showTemplate(template) }, el("span", { class: "name" }, template.uriTemplate), el("span", { class: "title" }, template.name)));
  }
}

async function readInto(uri, template, variables) {
  const box = $("resource");
  box.replaceChildren(el("p", {}, "reading " + (uri || template) + "…"));
  try {
    const { uri: read, contents } = await api("read", { uri, template, variables });
    box.replaceChildren(el("h2", {}, read), ...contents.map((entry) => renderBlock(entry.text !== undefined ? { type: "text", text: entry.text } : { type: "resource", resource: entry })));
  } catch (error) {
    box.replaceChildren(el("p", { class: "error-label" }, `Error ${error.code ?? ""}: ${error.message}`));
  }
}

// Suggestions from the server's completion/complete while a field is typed in.
function completing(input, ref, inputs) {
  const list = el("datalist", { id: "complete-" + Math.random().toString(36).slice(2) });
  input.setAttribute("list", list.id);
  input.setAttribute("autocomplete", "off");
  const refresh = async () => {
    const context = {};
    for (const [name, other] of inputs) if (other !== input && other.value !== "") context[name] = other.value;
    try {
      const values = await api("complete", { ...ref, argument: input.name, value: input.value, context });
      list.replaceChildren(...values.map((value) => el("option", { value })));
    } catch { list.replaceChildren(); }
  };
  input.addEventListener("input", refresh);
  input.addEventListener("focus", refresh);
  return list;
}

function showTemplate(template) {
  const names = [...template.uriTemplate.matchAll(/\{[+#./;?&]?([^}]+)\}/g)].flatMap((match) => match[1].split(",").map((name) => name.replace(/[*]|:\d+/g, "")));
  const inputs = names.map((name) => [name, el("input", { type: "text", name })]);
  $("resource").replaceChildren(el("h2", {}, template.uriTemplate), ...inputs.map(([name, input]) => el("div", { class: "field" }, el("label", {}, name), input, completing(input, { template: template.uriTemplate }, inputs))),
    el("button", { class: "primary", type: "button", id: "read", onclick: () => {
      const variables = {};
      for (const [name, input] of inputs) variables[name] = input.value;
      readInto(null, template.uriTemplate, variables);
    } }, "Read"));
}

async function loadPrompts() {
  const prompts = await api("prompts");
  const list = $("prompts");
  list.replaceChildren();
  for (const prompt of prompts) {
    list.append(el("li", { "data-name": prompt.name, onclick: () => showPrompt(prompt) }, el("span", { class: "name" }, prompt.name), prompt.title ? el("span", { class: "title" }, prompt.title) : null));
  }
}

function showPrompt(prompt) {
  const inputs = (prompt.arguments || []).map((argument) => [argument.name, el("input", { type: "text", name: argument.name }), argument]);
  const output = el("div", {});
  $("prompt").replaceChildren(el("h2", {}, prompt.title || prompt.name), el("p", {}, prompt.description || ""),
    ...inputs.map(([name, input, argument]) => el("div", { class: "field" }, el("label", {}, name + (argument.required ? " *" : "")), input, completing(input, { prompt: prompt.name }, inputs), argument.description ? el("span", { class: "help" }, argument.description) : null)),
    el("button", { class: "primary", type: "button", id: "get", onclick: async () => {
      const args = {};
      for (const [name, input] of inputs) if (input.value !== "") args[name] = input.value;
      try {
        const result = await api("prompt", { name: prompt.name, arguments: args });
        output.replaceChildren(...(result.messages || []).map((message) => el("div", {}, el("strong", {}, message.role + ":"), renderBlock(message.content || {}))));
      } catch (error) {
        output.replaceChildren(el("p", { class: "error-label" }, `Error ${error.code ?? ""}: ${error.message}`));
      }
    } }, "Get"), output);
}

// -- questions from the server ----------------------------------------------------------------

function ask(event) {
  const dialog = $("question");
  const form = $("question-form");
  const answer = async (value) => { dialog.close(); await api("answer", { id: event.id, answer: value }); };
  if (event.method === "elicitation/create") {
    const schema = event.params.requestedSchema || { type: "object", properties: {} };
    const fields = buildForm(schema, schema);
    form.replaceChildren(el("h3", {}, "The server asks"), el("p", { class: "message" }, event.params.message || ""), fields.node,
      el("p", {},
        el("button", { class: "primary", type: "button", id: "accept", onclick: () => answer({ action: "accept", content: fields.value() }) }, "Accept"), " ",
        el("button", { type: "button", onclick: () => answer({ action: "decline" }) }, "Decline"), " ",
        el("button", { type: "button", onclick: () => answer({ action: "cancel" }) }, "Cancel")));
  } else {
    const reply = el("textarea", { "aria-label": "the model's reply" });
    form.replaceChildren(el("h3", {}, "The server asks the model (you answer as the model)"),
      el("pre", {}, JSON.stringify(event.params.messages, null, 2)), reply,
      el("p", {}, el("button", { class: "primary", type: "button", id: "reply", onclick: () => answer({ role: "assistant", content: { type: "text", text: reply.value }, model: "toolwire-dev (a person)", stopReason: "endTurn" }) }, "Reply")));
  }
  dialog.showModal();
}

// -- events -------------------------------------------------------------------------------------

function listen() {
  const events = new EventSource("/api/events?token=" + encodeURIComponent(TOKEN));
  events.onmessage = (message) => {
    const event = JSON.parse(message.data);
    switch (event.kind) {
      case "progress": {
        const call = activeCalls[event.call];
        if (!call) break;
        call.progress.hidden = false;
        if (event.total) { call.progress.max = event.total; call.progress.value = event.progress; } else call.progress.removeAttribute("value");
        call.progressText.textContent = event.message || `${event.progress}${event.total ? " / " + event.total : ""}`;
        break;
      }
      case "log": {
        for (const call of Object.values(activeCalls)) call.logs.append(el("div", { class: "log" }, `[${event.params.level}] ${typeof event.params.data === "string" ? event.params.data : JSON.stringify(event.params.data)}`));
        break;
      }
      case "question": ask(event); break;
      case "traffic": traffic(event); break;
      case "output": output(event.text); break;
      case "reloading": status("reloading…"); break;
      case "reloaded": showFailure(null); output(`--- reloaded (protocol ${event.version}) ---\n`); loadAll().then(() => status(`reloaded (protocol ${event.version})`)); break;
      case "failed": showFailure(event.error); status("the new version failed to load"); break;
      case "changed": if (event.what === "tools") loadTools(); else if (event.what === "resources") loadResources(); else loadPrompts(); break;
    }
  };
}

// -- traffic: one collapsed entry per message ---------------------------------------------------

const requests = {};  // id -> { method, at } of the requests seen, both ways
let firstAt = null;

function describe(message, direction, at) {
  if (typeof message !== "object" || message === null) return { kind: "text", method: "(not JSON)" };
  const key = `${direction === "out" ? "in" : "out"}:${JSON.stringify(message.id)}`;
  if (message.method !== undefined) {
    if (message.id !== undefined) requests[`${direction}:${JSON.stringify(message.id)}`] = { method: message.method, at };
    return { kind: message.id !== undefined ? "request" : "notification", method: message.method, id: message.id };
  }
  const request = requests[key];
  delete requests[key];
  return {
    kind: message.error ? "error" : "response", method: request ? request.method : "", id: message.id,
    ms: request ? Math.round((at - request.at) * 1000) : null,
  };
}

function traffic(event) {
  const text = JSON.stringify(event.message);
  if (firstAt === null) firstAt = event.at;
  const about = describe(event.message, event.direction, event.at);
  const body = el("div", { class: "body" });
  const details = el("details", {},
    el("summary", {},
      el("span", { class: "arrow" }, event.direction === "out" ? "→" : "←"), " ",
      el("span", { class: "at" }, `+${((event.at - firstAt)).toFixed(3)} s`), " ",
      el("span", { class: "kind " + about.kind }, about.kind), " ",
      el("span", { class: "method" }, about.method || ""),
      about.id !== undefined ? el("span", { class: "id" }, ` #${JSON.stringify(about.id)}`) : null,
      about.ms !== null && about.ms !== undefined ? el("span", { class: "ms" }, ` ${about.ms} ms`) : null,
      el("span", { class: "size" }, ` ${text.length} B`)),
    body);
  details.addEventListener("toggle", () => {  // the tree is built when first opened
    if (details.open && !body.firstChild) body.append(jsonTree(event.message, 0));
  });
  const item = el("li", { class: event.direction }, details);
  item.dataset.text = text;
  const filter = $("traffic-filter").value;
  item.hidden = !!filter && !text.includes(filter);
  $("traffic").append(item);
}

// A collapsible JSON tree: objects and arrays as <details>, the top level open.
function jsonTree(value, depth) {
  if (value === null || typeof value !== "object") return el("span", { class: "leaf" }, JSON.stringify(value));
  const entries = Object.entries(value);
  const summary = Array.isArray(value) ? `[${entries.length}]` : `{${entries.length}}`;
  const list = el("ul", {});
  for (const [key, item] of entries) list.append(el("li", {}, el("span", { class: "key" }, key), ": ", jsonTree(item, depth + 1)));
  return el("details", { class: "json", open: depth === 0 }, el("summary", {}, summary), list);
}

$("traffic-filter").addEventListener("input", () => {
  const filter = $("traffic-filter").value;
  for (const item of $("traffic").children) item.hidden = !!filter && !item.dataset.text.includes(filter);
});

// -- the server's output ------------------------------------------------------------------------

const OUTPUT_KEPT = 200000;  // characters
let outputLength = 0;

function output(text) {
  const pane = $("output");
  const following = pane.scrollTop + pane.clientHeight >= pane.scrollHeight - 4;
  pane.append(document.createTextNode(text));
  outputLength += text.length;
  if (outputLength > OUTPUT_KEPT) {
    pane.textContent = pane.textContent.slice(-OUTPUT_KEPT / 2);
    outputLength = pane.textContent.length;
  }
  if (following) pane.scrollTop = pane.scrollHeight;
}

$("output-clear").addEventListener("click", () => { $("output").textContent = ""; outputLength = 0; });

for (const button of document.querySelectorAll("nav button")) {
  button.addEventListener("click", () => {
    for (const other of document.querySelectorAll("nav button")) other.classList.toggle("active", other === button);
    for (const tab of document.querySelectorAll(".tab")) tab.hidden = tab.id !== "tab-" + button.dataset.tab;
  });
}

listen();
loadAll().catch((error) => { status("error: " + (error.message || error)); });
