// The TypeScript MCP SDK client (@modelcontextprotocol/sdk, pinned in .ci/mcp-interop.sh) with a
// bearer token against examples/mcp_server --auth-*. Run by .ci/mcp_auth_check.py, which starts
// the server and passes MCP_URL, TOKEN_READ (scope files:read) and TOKEN_WRITE (files:write too).
// Copied next to target/mcp-node/node_modules before it runs, so the SDK resolves from there.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const url = new URL(process.env.MCP_URL);

async function connect(token) {
  const transport = new StreamableHTTPClientTransport(url, {
    requestInit: { headers: { Authorization: `Bearer ${token}` } },
  });
  const client = new Client({ name: "dsh-tools-ci", version: "1" });
  await client.connect(transport);
  return { client, transport };
}

function check(ok, what) {
  if (!ok) throw new Error(what);
}

const reader = await connect(process.env.TOKEN_READ);
const names = (await reader.client.listTools()).tools.map((t) => t.name);
check(names.includes("echo") && names.includes("write_file"), `tools: ${names}`);
const echo = await reader.client.callTool({ name: "echo", arguments: { text: "hi" } });
check(!echo.isError && echo.structuredContent?.text === "hi", `echo: ${JSON.stringify(echo)}`);
const denied = await reader.client.callTool({
  name: "write_file",
  arguments: { path: "ts.txt", content: "x" },
});
check(
  denied.isError && denied.content?.[0]?.text?.includes('needs the scope "files:write"'),
  `write_file without files:write: ${JSON.stringify(denied)}`,
);
await reader.transport.terminateSession();
await reader.client.close();

const writer = await connect(process.env.TOKEN_WRITE);
const written = await writer.client.callTool({
  name: "write_file",
  arguments: { path: "ts.txt", content: "x" },
});
check(!written.isError, `write_file with files:write: ${JSON.stringify(written)}`);
await writer.client.close();

let unauthorized = false;
try {
  await connect("not-a-token");
} catch (e) {
  // StreamableHTTPError carries the HTTP status.
  unauthorized = e?.code === 401 && /invalid token/.test(String(e));
}
check(unauthorized, "a bad token was not refused");
console.log(
  `protocol ${reader.transport.protocolVersion ?? "?"}, echo ok, write_file denied without files:write, ok with it, bad token refused`,
);
