// The official TypeScript SDK's client signing in with OAuth (dynamic registration, PKCE),
// for tests/auth/server/test_browser_signin.py. Usage: node sdk_oauth_client.mjs URL REDIRECT_URI
// Prints {"authorize": URL} when a person must sign in, then reads the address the browser was
// sent back to from stdin, finishes, calls the tool whoami and prints {"whoami": TEXT, "refresh": BOOL}.
import { createInterface } from "node:readline";
import { UnauthorizedError } from "@modelcontextprotocol/sdk/client/auth.js";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [url, redirect] = process.argv.slice(2);
const kept = {};
const provider = {
  get redirectUrl() { return redirect; },
  get clientMetadata() {
    return {
      client_name: "TypeScript SDK App",
      redirect_uris: [redirect],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: "none",
      scope: "tools",
    };
  },
  clientInformation: () => kept.client,
  saveClientInformation: (client) => { kept.client = client; },
  tokens: () => kept.tokens,
  saveTokens: (tokens) => { kept.tokens = tokens; },
  redirectToAuthorization: (address) => { console.log(JSON.stringify({ authorize: address.href })); },
  saveCodeVerifier: (verifier) => { kept.verifier = verifier; },
  codeVerifier: () => kept.verifier,
};
const lines = createInterface({ input: process.stdin })[Symbol.asyncIterator]();

let client = new Client({ name: "sdk-oauth-client", version: "1.0.0" });
let transport = new StreamableHTTPClientTransport(new URL(url), { authProvider: provider });
try {
  await client.connect(transport);
} catch (error) {
  if (!(error instanceof UnauthorizedError)) throw error;
  const back = new URL((await lines.next()).value);
  await transport.finishAuth(back.searchParams.get("code"));
  client = new Client({ name: "sdk-oauth-client", version: "1.0.0" });
  transport = new StreamableHTTPClientTransport(new URL(url), { authProvider: provider });
  await client.connect(transport);
}
const result = await client.callTool({ name: "whoami", arguments: {} });
console.log(JSON.stringify({ whoami: result.content[0].text, refresh: Boolean(kept.tokens?.refresh_token) }));
await client.close();
process.exit(0);
