// The sandbox proxy of MCP Apps views: served on another origin than the inspector page
// (localhost rather than 127.0.0.1), it loads a view's HTML into an inner iframe without
// same-origin rights and passes JSON-RPC messages between the view and the page.
"use strict";

const HOST = new URLSearchParams(location.search).get("host") || "";
let inner = null;

function toHost(message) { parent.postMessage(message, HOST); }

window.addEventListener("message", (event) => {
  const message = event.data;
  if (!message || message.jsonrpc !== "2.0") return;
  if (event.source === parent && event.origin === HOST) {
    if (message.method === "ui/notifications/sandbox-resource-ready") {
      load(message.params || {});
    } else if (inner && inner.contentWindow) {
      inner.contentWindow.postMessage(message, "*");  // the view's origin is opaque
    }
  } else if (inner && event.source === inner.contentWindow) {
    if (typeof message.method === "string" && message.method.startsWith("ui/notifications/sandbox-")) return;
    toHost(message);
  }
});

function load(params) {
  const policy = [
    "default-src 'none'", "script-src 'unsafe-inline'", "style-src 'unsafe-inline'",
    "img-src data:", "media-src data:", "font-src data:", "connect-src 'none'",
    "frame-src 'none'", "object-src 'none'", "base-uri 'none'", "form-action 'none'",
  ].join("; ");
  const meta = `<meta http-equiv="Content-Security-Policy" content="${policy}">`;
  const html = String(params.html || "");
  const withPolicy = /<head[^>]*>/i.test(html) ? html.replace(/<head[^>]*>/i, (head) => head + meta) : meta + html;
  inner = document.createElement("iframe");
  inner.setAttribute("sandbox", "allow-scripts");
  inner.srcdoc = withPolicy;
  document.body.replaceChildren(inner);
}

toHost({ jsonrpc: "2.0", method: "ui/notifications/sandbox-proxy-ready", params: {} });
