"use strict";
// The admin page: asks /admin/api/state every second and shows it. Everything is shown as
// text (textContent), never as HTML: tool descriptions and errors come from upstreams.

function cell(row, text, kind) {
  const td = row.insertCell();
  td.textContent = text === null || text === undefined ? "" : String(text);
  if (kind) td.className = kind;
  return td;
}

function fill(id, items, draw) {
  const body = document.querySelector(`#${id} tbody`);
  body.replaceChildren();
  for (const item of items) draw(body.insertRow(), item);
}

function when(time) {
  const date = typeof time === "number" ? new Date(time * 1000) : new Date(time);
  return Number.isNaN(date.getTime()) ? String(time) : date.toLocaleTimeString();
}

function show(state) {
  document.getElementById("gateway").textContent = state.gateway;
  fill("upstreams", state.upstreams, (row, upstream) => {
    row.dataset.name = upstream.name;
    cell(row, upstream.namespace);
    cell(row, upstream.target);
    cell(row, upstream.state === "down" ? "down (restarting)" : upstream.state, `state state-${upstream.state}`);
    cell(row, upstream.restarts, "restarts");
    cell(row, upstream.version);
    cell(row, upstream.error, "error");
    const list = document.createElement("ul");
    for (const tool of upstream.tools) {
      const item = document.createElement("li");
      item.textContent = tool.name;
      item.title = tool.description;
      list.append(item);
    }
    cell(row, "", "tools").append(list);
  });
  fill("sessions", state.sessions, (row, session) => {
    cell(row, session.subject || "(anonymous)");
    cell(row, session.client);
    cell(row, session.version);
    cell(row, when(session.since));
  });
  document.getElementById("calls-from").textContent = `The last tool calls, newest first, from ${state.calls_from}.`;
  fill("calls", state.calls, (row, call) => {
    cell(row, when(call.time));
    cell(row, call.caller || "(anonymous)");
    cell(row, call.client);
    cell(row, call.tool, "tool");
    cell(row, call.outcome, `outcome outcome-${call.outcome}`);
    cell(row, call.ms);
  });
}

async function refresh() {
  const status = document.getElementById("status");
  try {
    const response = await fetch("/admin/api/state", { credentials: "same-origin" });
    if (response.status === 401) {
      window.location.assign("/admin");
      return;
    }
    show(await response.json());
    status.textContent = `live, ${new Date().toLocaleTimeString()}`;
    status.className = "";
  } catch (error) {
    status.textContent = `cannot reach the gateway (${error.message}); trying again`;
    status.className = "lost";
  }
  setTimeout(refresh, 1000);
}

refresh();
