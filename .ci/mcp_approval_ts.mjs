// The TypeScript MCP SDK's v2 client (@modelcontextprotocol/client, pinned in .ci/mcp-interop.sh)
// answers examples/mcp_server's approvals, in both eras:
//
//     node mcp_approval_ts.mjs BIN ROOT [SERVER ARGS...]
//
// `write_file` asks before it runs. The client declares form elicitation and registers an
// `elicitation/create` handler (its "person"). Legacy (2025-11-25): the server sends the request
// while the call waits. Pinned 2026-07-28: the server answers `input_required`, and the SDK
// fulfils it through the same handler and retries. Per era: accept (written), accept with edited
// arguments (the edit written, not the asked path), decline with a reason (the model reads it),
// cancel (nothing written). Prints one line per era and a closing verdict; exits 1 on a failure.
// Copied next to target/mcp-node/node_modules before it runs, so the SDK resolves from there.
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { existsSync, readFileSync, mkdirSync } from "node:fs";
import { join } from "node:path";

const [bin, root, ...extra] = process.argv.slice(2);
if (!bin || !root) {
  console.error("usage: node mcp_approval_ts.mjs BIN ROOT");
  process.exit(2);
}
mkdirSync(root, { recursive: true });

function check(ok, what) {
  if (!ok) throw new Error(what);
}

const written = (name) => {
  const path = join(root, name);
  return existsSync(path) ? readFileSync(path, "utf8") : null;
};
const textOf = (r) => (r.content ?? []).filter((b) => b.type === "text").map((b) => b.text).join("\n");

async function run(label, mode, want) {
  const transport = new StdioClientTransport({ command: bin, args: ["--root", root, ...extra], stderr: "ignore" });
  const client = new Client(
    { name: "dsh-tools-ci", version: "1" },
    { capabilities: { elicitation: { form: {} } }, versionNegotiation: { mode } },
  );
  const asked = [];
  let answer = null;
  client.setRequestHandler("elicitation/create", async (request) => {
    asked.push(request.params);
    check(answer !== null, `${label}: asked without a planned answer`);
    const a = answer;
    answer = null;
    return a;
  });
  await client.connect(transport);
  try {
    const version = client.getNegotiatedProtocolVersion();
    check(version === want, `${label}: negotiated ${version}, want ${want}`);
    const call = (path, content) =>
      client.callTool({ name: "write_file", arguments: { path, content } });

    answer = { action: "accept", content: { approve: true } };
    let r = await call(`${label}-a.txt`, "yes");
    check(!r.isError, `${label}: accepted write failed: ${JSON.stringify(r)}`);
    check(written(`${label}-a.txt`) === "yes", `${label}: accepted write not on disk`);
    check(asked.length === 1, `${label}: asked ${asked.length} times`);
    check(
      asked[0].message.includes('"write_file"') && asked[0].message.includes("MCP server"),
      `${label}: message ${asked[0].message}`,
    );
    const props = Object.keys(asked[0].requestedSchema?.properties ?? {});
    check(["approve", "reason", "arguments"].every((p) => props.includes(p)), `${label}: form ${props}`);

    answer = {
      action: "accept",
      content: { approve: true, arguments: JSON.stringify({ path: `${label}-edited.txt`, content: "edited" }) },
    };
    r = await call(`${label}-b.txt`, "asked");
    check(!r.isError, `${label}: edited write failed: ${JSON.stringify(r)}`);
    check(written(`${label}-edited.txt`) === "edited", `${label}: the edit did not run`);
    check(written(`${label}-b.txt`) === null, `${label}: the asked arguments ran`);

    answer = { action: "accept", content: { approve: false, reason: "not that file" } };
    r = await call(`${label}-c.txt`, "no");
    check(
      r.isError && textOf(r) === 'Error: the user rejected tool "write_file": not that file',
      `${label}: refusal ${JSON.stringify(r)}`,
    );
    answer = { action: "decline" };
    r = await call(`${label}-c.txt`, "no");
    check(textOf(r) === 'Error: the user rejected tool "write_file"', `${label}: decline ${JSON.stringify(r)}`);
    answer = { action: "cancel" };
    r = await call(`${label}-c.txt`, "no");
    check(
      textOf(r) === 'Error: approval for tool "write_file" was cancelled',
      `${label}: cancel ${JSON.stringify(r)}`,
    );
    check(written(`${label}-c.txt`) === null, `${label}: a refused write reached the disk`);
    check(asked.length === 5, `${label}: asked ${asked.length} times, want 5`);
    return `${label}: protocol ${version}, accept / edit / decline with reason / decline / cancel ok`;
  } finally {
    await client.close();
  }
}

let passed = 0;
let failed = 0;
for (const [label, mode, want] of [
  ["legacy", "legacy", "2025-11-25"],
  ["modern", { pin: "2026-07-28" }, "2026-07-28"],
]) {
  try {
    console.log(await run(label, mode, want));
    passed += 1;
  } catch (e) {
    console.log(`${label}: FAILED: ${e?.stack ?? e}`);
    failed += 1;
  }
}
console.log(`typescript mcp approvals (stdio ${bin}): ${passed} passed, ${failed} failed`);
process.exit(failed === 0 ? 0 : 1);
