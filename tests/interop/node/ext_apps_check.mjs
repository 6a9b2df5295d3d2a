// An MCP Apps server read by the official packages, for tests/apps/test_apps_interop.py:
// the TypeScript SDK's client (declaring the extension as a host that renders views does)
// lists the tools and reads each view; @modelcontextprotocol/ext-apps checks what it got
// with its own schemas and helpers. Usage: node ext_apps_check.mjs URL
// Prints one JSON object: what each check saw.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { McpUiResourceMetaSchema, McpUiToolMetaSchema } from "@modelcontextprotocol/ext-apps";
import {
  EXTENSION_ID,
  RESOURCE_MIME_TYPE,
  RESOURCE_URI_META_KEY,
  getUiCapability,
  registerAppTool,
} from "@modelcontextprotocol/ext-apps/server";

const capabilities = { extensions: { [EXTENSION_ID]: { mimeTypes: [RESOURCE_MIME_TYPE] } } };
const client = new Client({ name: "ext-apps-check", version: "1.0.0" }, { capabilities });
await client.connect(new StreamableHTTPClientTransport(new URL(process.argv[2])));

function issues(schema, value) {
  const parsed = schema.safeParse(value);
  return parsed.success ? [] : parsed.error.issues.map((issue) => `${issue.path.join(".")}: ${issue.message}`);
}

// What registerAppTool (the SDK's way to declare an app tool) makes of a tool's _meta.ui.
function asTheSdkDeclares(ui) {
  let declared = null;
  registerAppTool({ registerTool: (name, config) => { declared = config._meta; } }, "probe", { _meta: { ui } }, () => {});
  return declared;
}

const seen = { serverCapability: getUiCapability(client.getServerCapabilities()) ?? null, tools: {}, views: {} };
const { tools } = await client.listTools();
for (const tool of tools) {
  const ui = tool._meta?.ui;
  if (ui === undefined) continue;
  seen.tools[tool.name] = { meta: tool._meta, issues: issues(McpUiToolMetaSchema, ui), sdk: asTheSdkDeclares(ui) };
  const uri = ui.resourceUri;
  if (uri && !(uri in seen.views)) {
    const { contents } = await client.readResource({ uri });
    seen.views[uri] = contents.map((entry) => ({
      mimeType: entry.mimeType,
      isHtml: typeof entry.text === "string" && entry.text.trimStart().toLowerCase().startsWith("<!doctype html"),
      issues: issues(McpUiResourceMetaSchema, entry._meta?.ui ?? {}),
      ui: entry._meta?.ui ?? null,
    }));
  }
}
seen.constants = { EXTENSION_ID, RESOURCE_MIME_TYPE, RESOURCE_URI_META_KEY };
await client.close();
console.log(JSON.stringify(seen));
