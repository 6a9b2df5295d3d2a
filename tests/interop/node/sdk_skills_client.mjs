// The official TypeScript SDK's skills client (SEP-2640) against a server over stdio, for
// tests/skills/test_skills_interop.py. Usage: node sdk_skills_client.mjs ERA COMMAND [ARG...]
// (ERA: legacy or 2026-07-28; the server's environment is this one's). Lists the skills,
// reads and verifies every file of each, and lists every skill's folder; prints one JSON
// object: what each step saw, or {"error": MESSAGE} for the first step that threw.
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { SkillsClient } from "@modelcontextprotocol/client/ext/skills";

const [era, command, ...args] = process.argv.slice(2);
const versionNegotiation = era === "legacy" ? { mode: "legacy" } : { mode: { pin: era } };
const client = new Client({ name: "sdk-skills-client", version: "1.0.0" }, { versionNegotiation });
const seen = { era: null, directoryRead: null, skills: [] };
try {
  await client.connect(new StdioClientTransport({ command, args, env: process.env, stderr: "ignore" }));
  seen.era = client.getProtocolEra();
  const skills = new SkillsClient(client);
  seen.directoryRead = skills.directoryRead;
  const listing = await skills.list();
  seen.ttlMs = listing.ttlMs ?? null;
  for (const skill of listing.skills) {
    const files = [];
    for (const resource of skill.resources) {
      const file = await skills.read(skill, resource.uri);
      files.push({ uri: file.uri, verified: file.verified, bytes: file.bytes.byteLength });
    }
    const root = skill.uri.slice(0, -"/SKILL.md".length);
    const folder = await skills.readDirectory(root);
    seen.skills.push({
      uri: skill.uri,
      name: skill.frontmatter.name,
      files,
      children: folder.resources.map((child) => [child.name, child.mimeType]),
      cached: folder.ttlMs !== undefined && folder.cacheScope !== undefined,
    });
  }
  const got = await skills.get(listing.skills[0].uri);
  seen.got = got.skill.uri;
} catch (error) {
  seen.error = String(error?.message ?? error);
} finally {
  await client.close();
}
console.log(JSON.stringify(seen));
