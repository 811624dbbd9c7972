// mcp_client.mjs - tests/cli/mcp.sh's client: the npm package
// @modelcontextprotocol/sdk's Client starts `heapdump mcp` over stdio,
// lists its tools and asks a leak scenario what a person would ask,
// writing each answer (the tool's text, or {"isError":...}) to OUTDIR.
//
//   node mcp_client.mjs HEAPDUMP OUTDIR DUMP...
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { writeFileSync } from "node:fs";

const [heapdump, out, ...dumps] = process.argv.slice(2);
const transport = new StdioClientTransport({
  command: heapdump, args: ["mcp", ...dumps], stderr: "inherit",
});
const client = new Client({ name: "heapdump-tests", version: "1.0.0" });
await client.connect(transport);
const save = (name, v) => writeFileSync(`${out}/${name}`, typeof v === "string" ? v : JSON.stringify(v));

save("server.json", { version: client.getServerVersion(), capabilities: client.getServerCapabilities() });
const { tools } = await client.listTools();
save("tools.json", tools.map((t) => t.name));

// call NAME ARGS FILE: the answer's text, or its error
async function ask(file, name, args) {
  try {
    const r = await client.callTool({ name, arguments: args });
    const text = r.content.map((c) => c.text).join("");
    save(file, r.isError ? JSON.stringify({ isError: true, text }) : text);
    return r.isError ? null : JSON.parse(text.split("\n")[0]);
  } catch (e) {
    save(file, JSON.stringify({ rpcError: e.code ?? "?", message: String(e.message) }));
    return null;
  }
}

// What leaks? Through which path? Which site made it?
const leaks = await ask("leaks.json", "leaks", {});
const holder = leaks?.suspects?.[0]?.holder?.address;
await ask("path.json", "path", { address: holder ?? "0x0" });
await ask("object.json", "object", { address: holder ?? "0x0", limit: 5 });
await ask("diff.json", "diff", { by: "location", top: 5 });
await ask("overview.json", "overview", {});
await ask("stats.json", "stats", { by: "class", top: 10 });
await ask("top.json", "top", { top: 5 });
await ask("query.json", "query", { sql: "select count(*) as n from objects" });

// Hostile arguments: errors, and the server stays up.
await ask("bad_limit.json", "object", { address: holder ?? "0x0", limit: 1e12 });
await ask("bad_top.json", "stats", { top: 99999999999 });
await ask("bad_address.json", "object", { address: "0xnothex" });
await ask("bad_path.json", "path", { address: "--output=/tmp/x" });
await ask("bad_by.json", "stats", { by: "class;rm -rf /" });
await ask("bad_sql.json", "query", { sql: "delete from objects" });
await ask("bad_sql2.json", "query", { sql: "attach database '/tmp/x.db' as x" });
await ask("bad_tool.json", "no_such_tool", {});
await ask("bad_type.json", "object", { address: 42 });
const pong = await client.ping();
save("ping.json", pong);
await client.close();
