// The official TypeScript SDK's client driving a server's tasks (2025-11-25), for
// tests/tasks/test_tasks_interop.py. Usage: node sdk_task_client.mjs URL
// Prints one JSON object: what each step saw.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { CallToolResultSchema, ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";

const url = new URL(process.argv[2]);
const client = new Client({ name: "sdk-task-client", version: "1.0.0" }, { capabilities: { elicitation: {} } });
client.setRequestHandler(ElicitRequestSchema, async (request) => ({
  action: "accept",
  content: { name: `Ada (asked: ${request.params.message})` },
}));
await client.connect(new StreamableHTTPClientTransport(url));
const seen = {};

async function stream(name, args) {
  const kinds = [];
  let result = null;
  let error = null;
  for await (const message of client.experimental.tasks.callToolStream({ name, arguments: args }, CallToolResultSchema)) {
    kinds.push(message.type);
    if (message.type === "result") result = message.result;
    if (message.type === "error") error = message.error.message;
  }
  return { kinds: [...new Set(kinds)], result, error };
}

await client.listTools();
seen.sleep = await stream("sleep", { seconds: 0.2 });
seen.build = await stream("build", { target: "docs" });
seen.askName = await stream("ask_name", {});
seen.broken = await stream("broken", {});
const long = await client.request(
  { method: "tools/call", params: { name: "sleep", arguments: { seconds: 30 }, task: { ttl: 60000 } } },
  (await import("@modelcontextprotocol/sdk/types.js")).CreateTaskResultSchema,
);
seen.created = long.task;
seen.got = await client.experimental.tasks.getTask(long.task.taskId);
seen.listed = (await client.experimental.tasks.listTasks()).tasks.map((task) => task.taskId);
seen.cancelled = await client.experimental.tasks.cancelTask(long.task.taskId);
try {
  await client.callTool({ name: "build", arguments: { target: "x" } });
  seen.requiredRefused = null;
} catch (error) {
  seen.requiredRefused = error.message;
}
console.log(JSON.stringify(seen));
await client.close();
