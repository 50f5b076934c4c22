// client.mjs drives `exocortex mcp` with the official TypeScript MCP SDK, as a
// desktop client would. Usage:
//
//   node client.mjs NODE_DIR stdio EXOCORTEX_BIN     (EXOCORTEX_HOME in the environment)
//   node client.mjs NODE_DIR http URL
//
// It prints "PASS <check>" per check, "SUBSCRIBED" once it is subscribed to
// the memory snapshot (the Go test then saves a memory from another process),
// and exits 1 with "FAIL <check>: why" at the first failure.
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const [nodeDir, mode, target] = process.argv.slice(2);
const sdk = (p) => import(pathToFileURL(join(nodeDir, "node_modules/@modelcontextprotocol/sdk/dist/esm", p)).href);
const { Client } = await sdk("client/index.js");
const { ResourceUpdatedNotificationSchema, ResourceListChangedNotificationSchema } = await sdk("types.js");

function fail(check, why) {
  console.log(`FAIL ${check}: ${why}`);
  process.exit(1);
}
function pass(check) {
  console.log(`PASS ${check}`);
}
function textOf(res) {
  return (res.content || []).filter((c) => c.type === "text").map((c) => c.text).join("");
}
function timeout(ms, what) {
  return new Promise((_, reject) => setTimeout(() => reject(new Error(`no ${what} within ${ms / 1000}s`)), ms));
}

async function connect() {
  let transport;
  if (mode === "stdio") {
    const { StdioClientTransport } = await sdk("client/stdio.js");
    transport = new StdioClientTransport({ command: target, args: ["mcp"], env: { ...process.env }, stderr: "inherit" });
  } else {
    const { StreamableHTTPClientTransport } = await sdk("client/streamableHttp.js");
    transport = new StreamableHTTPClientTransport(new URL(target));
  }
  const client = new Client({ name: "exocortex-test", version: "1.0.0" });
  await client.connect(transport);
  return client;
}

const client = await connect();
pass(`connect ${mode}`);

const tools = (await client.listTools()).tools;
const want = ["compile_memory", "memory_delete", "memory_retrieve", "memory_save", "search_memory", "why", "wiring"];
for (const name of want) {
  const t = tools.find((t) => t.name === name);
  if (!t) fail("tools/list", `no ${name} in ${tools.map((t) => t.name)}`);
  if (!t.inputSchema || !t.outputSchema) fail("tools/list", `${name} has no input or output schema`);
}
pass("tools/list");

const resources = (await client.listResources()).resources.map((r) => r.uri);
for (const uri of ["exocortex://memory-snapshot", "exocortex://wiring/WIRING.md", "exocortex://sessions"]) {
  if (!resources.includes(uri)) fail("resources/list", `no ${uri} in ${resources}`);
}
const templates = (await client.listResourceTemplates()).resourceTemplates.map((t) => t.uriTemplate);
if (!templates.includes("exocortex://memory/{id}")) fail("resources/templates/list", `${templates}`);
pass("resources/list");

// Every tool, with the answers the contract gives.
let r = await client.callTool({ name: "memory_save", arguments: { key: "ide_note", value: "the IDE saved this through MCP", tags: ["ide"] } });
if (textOf(r) !== "Memory item 'ide_note' saved successfully.") fail("memory_save", textOf(r));
pass("memory_save");
r = await client.callTool({ name: "memory_retrieve", arguments: { key: "ide_note" } });
if (textOf(r) !== "the IDE saved this through MCP") fail("memory_retrieve", textOf(r));
pass("memory_retrieve");
r = await client.callTool({ name: "search_memory", arguments: { query: "IDE saved MCP", k: 5 } });
const hit = (r.structuredContent?.hits || []).find((h) => h.key === "ide_note");
if (r.isError || !hit || !hit.why) fail("search_memory", JSON.stringify(r));
pass("search_memory");
r = await client.callTool({ name: "compile_memory", arguments: { query: "what did the IDE save", token_budget: 300 } });
if (r.isError || !r.structuredContent.block.includes("the IDE saved this")) fail("compile_memory", JSON.stringify(r));
pass("compile_memory");
r = await client.callTool({ name: "why", arguments: { id: hit.id } });
if (r.isError || r.structuredContent.provenance?.source !== "mcp" || r.structuredContent.history.length < 1) fail("why", JSON.stringify(r));
pass("why");
r = await client.callTool({ name: "wiring", arguments: {} });
if (mode === "stdio" && (r.isError || r.structuredContent.plugins.length < 1 || r.structuredContent.extensions.length < 1)) fail("wiring", textOf(r));
pass("wiring");
const rec = await client.readResource({ uri: hit.uri });
if (!rec.contents[0].text.includes("the IDE saved this")) fail("resources/read", JSON.stringify(rec));
pass("resources/read");
r = await client.callTool({ name: "memory_delete", arguments: { key: "ide_note" } });
if (textOf(r) !== "Memory item 'ide_note' deleted successfully.") fail("memory_delete", textOf(r));
pass("memory_delete");

// Protocol errors.
try {
  const res = await client.callTool({ name: "no_such_tool", arguments: {} });
  if (!res.isError || !textOf(res).includes("no_such_tool")) fail("unknown tool", JSON.stringify(res));
} catch (e) {
  if (!String(e.message).includes("no_such_tool")) fail("unknown tool", e.message);
}
pass("unknown tool");
r = await client.callTool({ name: "search_memory", arguments: { k: 3 } });
if (!r.isError || !textOf(r).includes("query")) fail("missing argument", textOf(r));
r = await client.callTool({ name: "search_memory", arguments: { query: "x", k: "three" } });
if (!r.isError || !textOf(r).includes("k")) fail("wrong type", textOf(r));
pass("bad arguments");
try {
  await client.subscribeResource({ uri: "exocortex://elsewhere" });
  fail("subscribe unknown", "accepted");
} catch (e) {
  if (!String(e.message).includes("exocortex://elsewhere")) fail("subscribe unknown", e.message);
}
pass("subscribe unknown");

// A memory saved by another process reaches a subscribed client.
const updated = new Promise((resolve) => {
  client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => {
    if (n.params.uri === "exocortex://memory-snapshot") resolve(n.params.uri);
  });
});
const listChanged = new Promise((resolve) => {
  client.setNotificationHandler(ResourceListChangedNotificationSchema, () => resolve(true));
});
await client.subscribeResource({ uri: "exocortex://memory-snapshot" });
console.log("SUBSCRIBED");
try {
  await Promise.race([updated, timeout(60000, "resources/updated")]);
  pass("resources/updated");
  await Promise.race([listChanged, timeout(60000, "resources/list_changed")]);
  pass("resources/list_changed");
} catch (e) {
  fail("notifications", e.message);
}
const after = (await client.listResources()).resources.find((x) => x.description?.includes("saved from another process"));
if (!after) fail("resources/list after", "the record saved from another process is not listed");
pass("resources/list after");

// A client that goes away in the middle of a call.
const pending = client.callTool({ name: "compile_memory", arguments: { query: "another process", token_budget: 5000 } }).catch(() => "closed");
await client.close();
await pending;
pass("disconnect mid-call");
process.exit(0);
