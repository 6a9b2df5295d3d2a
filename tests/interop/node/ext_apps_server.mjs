// An MCP Apps server written with the official packages, for tests/server/test_proxy_extensions.py:
// the TypeScript SDK's McpServer declaring the extension, a tool and its view registered with
// @modelcontextprotocol/ext-apps's registerAppTool and registerAppResource. Usage: node
// ext_apps_server.mjs (serves over stdio).
import { McpServer } from "@modelcontextprotocol/server";
import { StdioServerTransport } from "@modelcontextprotocol/server/stdio";
import {
  EXTENSION_ID,
  RESOURCE_MIME_TYPE,
  registerAppResource,
  registerAppTool,
} from "@modelcontextprotocol/ext-apps/server";

const capabilities = { extensions: { [EXTENSION_ID]: { mimeTypes: [RESOURCE_MIME_TYPE] } } };
const server = new McpServer({ name: "sdk-apps", version: "1.0.0" }, { capabilities });
const VIEW = "ui://clock/view.html";

registerAppTool(
  server,
  "show-clock",
  { description: "Show the clock", _meta: { ui: { resourceUri: VIEW } } },
  async () => ({ content: [{ type: "text", text: "twelve o'clock" }] }),
);
registerAppResource(server, "Clock", VIEW, { description: "The clock's view" }, async () => ({
  contents: [
    {
      uri: VIEW,
      mimeType: RESOURCE_MIME_TYPE,
      text: "<!doctype html><p>the clock</p>",
      _meta: { ui: { prefersBorder: true } },
    },
  ],
}));

await server.connect(new StdioServerTransport());
