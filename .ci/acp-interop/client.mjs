// ACP interop: the official TypeScript SDK (@agentclientprotocol/sdk) as the client of
// examples/acp_agent. Run by .ci/acp-interop.sh, which copies this file next to its node_modules.
//
// Usage: node client.mjs PATH/TO/acp_agent
// Prints one line per check and a final `acp-interop: N passed, M failed`; exits 1 on a failure.

import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync, existsSync, rmSync, realpathSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, dirname } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { Readable, Writable } from "node:stream";
import * as acp from "@agentclientprotocol/sdk";

// The SDK's own generated zod schemas (not in its exports map, so imported by path).
const here = dirname(fileURLToPath(import.meta.url));
const zod = await import(
  pathToFileURL(join(here, "node_modules/@agentclientprotocol/sdk/dist/v1/schema/zod.gen.js")).href
);

const agentPath = process.argv[2];
let passed = 0;
let failed = 0;
function check(name, ok, detail = "") {
  if (ok) passed++;
  else failed++;
  console.log(`${ok ? "ok  " : "FAIL"} ${name}${ok || !detail ? "" : `: ${detail}`}`);
}

const dir = realpathSync(mkdtempSync(join(tmpdir(), "dsh-acp-interop-")));
const notes = join(dir, "notes.txt");
writeFileSync(notes, "alpha\nbeta\n");

const child = spawn(agentPath, [], { stdio: ["pipe", "pipe", "inherit"] });
child.on("error", (e) => {
  console.log(`FAIL launch ${agentPath}: ${e.message}`);
  process.exit(1);
});

/** Where `parsed` differs from `sent` (object keys in any order), or null when they agree. */
function difference(sent, parsed, path) {
  if (sent === null || typeof sent !== "object") {
    return Object.is(sent, parsed) ? null : `${path} became ${JSON.stringify(parsed)}`;
  }
  if (parsed === null || typeof parsed !== "object" || Array.isArray(sent) !== Array.isArray(parsed)) {
    return `${path} became ${JSON.stringify(parsed)}`;
  }
  const keys = new Set([...Object.keys(sent), ...Object.keys(parsed)]);
  for (const key of keys) {
    if (!(key in parsed)) return `${path}.${key} was dropped`;
    if (!(key in sent)) return `${path}.${key} was added (${JSON.stringify(parsed[key])})`;
    const inner = difference(sent[key], parsed[key], `${path}.${key}`);
    if (inner) return inner;
  }
  return null;
}

// Every message the agent sends is checked against the SDK's schema for its method.
const schemaFailures = [];
let validated = 0;
let buffered = "";
const tap = new TransformStream({
  transform(chunk, controller) {
    buffered += new TextDecoder().decode(chunk);
    let newline;
    while ((newline = buffered.indexOf("\n")) >= 0) {
      const line = buffered.slice(0, newline);
      buffered = buffered.slice(newline + 1);
      if (!line.trim()) continue;
      let message;
      try {
        message = JSON.parse(line);
      } catch (e) {
        schemaFailures.push(`not JSON: ${line.slice(0, 200)}`);
        continue;
      }
      const schema = {
        "session/update": zod.zSessionNotification,
        "session/request_permission": zod.zRequestPermissionRequest,
      }[message.method];
      if (schema) {
        // The SDK's schemas are lenient on purpose (an invalid field falls back to its default,
        // an invalid list item is skipped), so a message is valid when parsing keeps all of it.
        const parsed = schema.safeParse(message.params);
        validated++;
        const lost = parsed.success ? difference(message.params, parsed.data, "params") : "does not parse";
        if (lost) {
          schemaFailures.push(`${message.method}: ${lost}: ${line.slice(0, 300)}`);
        }
      }
    }
    controller.enqueue(chunk);
  },
});
const stream = acp.ndJsonStream(
  Writable.toWeb(child.stdin),
  Readable.toWeb(child.stdout).pipeThrough(tap),
);

const updates = [];
const permissions = [];
// How the "user" answers each permission request, by the call's title.
let answer = (params) => ({ outcome: { outcome: "selected", optionId: "allow_once" } });

const app = acp
  .client({ name: "dsh-tools-acp-interop" })
  .onNotification(acp.methods.client.session.update, ({ params }) => {
    updates.push(params.update);
  })
  .onRequest(acp.methods.client.session.requestPermission, async (context) => {
    permissions.push(context.params);
    return await answer(context.params, context);
  });

const callsOf = (prefix) => {
  const byId = new Map();
  for (const u of updates) {
    if (u.sessionUpdate !== "tool_call" && u.sessionUpdate !== "tool_call_update") continue;
    if (!byId.has(u.toolCallId)) byId.set(u.toolCallId, []);
    byId.get(u.toolCallId).push(u);
  }
  return [...byId.values()];
};

try {
  await app.connectWith(stream, async (cx) => {
    const init = await cx.request(acp.methods.agent.initialize, {
      protocolVersion: acp.PROTOCOL_VERSION,
      clientCapabilities: {},
    });
    check("initialize", init.protocolVersion === acp.PROTOCOL_VERSION, JSON.stringify(init));

    // Bad input first: the agent answers with errors and stays up.
    const missing = await cx
      .request(acp.methods.agent.session.new, { cwd: join(dir, "does-not-exist"), mcpServers: [] })
      .then(() => null, (e) => e);
    check("session/new with a missing cwd is an invalid-params error", missing?.code === -32602, String(missing));
    const orphan = await cx
      .request(acp.methods.agent.session.prompt, { sessionId: "sess_nope", prompt: [{ type: "text", text: "read x" }] })
      .then(() => null, (e) => e);
    check("a prompt for an unknown session is an error", orphan?.code === -32602, String(orphan));

    const { sessionId } = await cx.request(acp.methods.agent.session.new, { cwd: dir, mcpServers: [] });
    check("session/new", typeof sessionId === "string" && sessionId.length > 0);

    // The scripted model: read, edit (asks), run a command (asks).
    const turn = await cx.request(acp.methods.agent.session.prompt, {
      sessionId,
      prompt: [{ type: "text", text: "read notes.txt\nedit notes.txt: beta => gamma\nrun cat notes.txt" }],
    });
    check("the turn ends", turn.stopReason === "end_turn", JSON.stringify(turn));
    const calls = callsOf();
    check("three tool calls", calls.length === 3, `${calls.length}`);
    const [read, edit, run] = calls;
    const last = (call) => call?.[call.length - 1] ?? {};
    const kinds = calls.map((c) => c[0].kind).join(",");
    check("kinds read, edit, execute", kinds === "read,edit,execute", kinds);
    const statuses = calls.map((c) => c.map((u) => u.status ?? "pending").join(">"));
    check(
      "each call goes pending > in_progress > completed",
      statuses.every((s) => s === "pending>in_progress>completed"),
      JSON.stringify(statuses),
    );
    check("the read reports the file as its location", last(read).locations?.[0]?.path === notes, JSON.stringify(last(read).locations));
    check("the read shows the lines", last(read).content?.[0]?.content?.text === "```\nalpha\nbeta\n```", JSON.stringify(last(read).content));
    const diff = last(edit).content?.[0];
    check(
      "the edit's diff has the file's full old and new text",
      diff?.type === "diff" && diff.path === notes && diff.oldText === "alpha\nbeta\n" && diff.newText === "alpha\ngamma\n",
      JSON.stringify(diff),
    );
    const console_ = last(run).content?.[0]?.content?.text ?? "";
    check(
      "the command's output as a fenced console block with its exit status",
      console_ === "```console\nalpha\ngamma\n```\n\nexit code 0",
      JSON.stringify(console_),
    );
    check("the exit status in the terminal _meta convention", last(run)._meta?.terminal_exit?.exit_code === 0, JSON.stringify(last(run)._meta));
    check(
      "permission asked for the edit and the command, with the four options",
      permissions.length === 2 &&
        permissions[0].toolCall.toolCallId === edit[0].toolCallId &&
        permissions[1].toolCall.toolCallId === run[0].toolCallId &&
        permissions.every((p) => p.options.map((o) => o.kind).join() === "allow_once,allow_always,reject_once,reject_always"),
      JSON.stringify(permissions.map((p) => p.toolCall.toolCallId)),
    );
    check("the file on disk", readFileSync(notes, "utf8") === "alpha\ngamma\n", readFileSync(notes, "utf8"));

    // A rejection: the write does not happen and the call fails.
    updates.length = 0;
    answer = () => ({ outcome: { outcome: "selected", optionId: "reject_once" } });
    await cx.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "write nope.txt: no" }] });
    const rejected = last(callsOf()[0]);
    check(
      "a rejected write fails and writes nothing",
      rejected.status === "failed" && !existsSync(join(dir, "nope.txt")) &&
        rejected.content?.[0]?.content?.text === 'Error: the user rejected tool "write_file"',
      JSON.stringify(rejected),
    );

    // Allow always: kept as the session's grant, so the next write of the session is not asked.
    updates.length = 0;
    const askedBefore = permissions.length;
    answer = () => ({ outcome: { outcome: "selected", optionId: "allow_always" } });
    await cx.request(acp.methods.agent.session.prompt, {
      sessionId,
      prompt: [{ type: "text", text: "write always.txt: one\nwrite always.txt: two" }],
    });
    const writes = callsOf();
    check(
      "allow always is remembered for the session: two writes, one permission request",
      permissions.length === askedBefore + 1 && writes.length === 2 &&
        writes.every((c) => last(c).status === "completed") &&
        readFileSync(join(dir, "always.txt"), "utf8") === "two",
      JSON.stringify({ asked: permissions.length - askedBefore, statuses: writes.map((c) => last(c).status) }),
    );

    // A cancel while the permission request is open: the client cancels the turn and answers
    // the pending request `cancelled`, as ACP asks of clients.
    updates.length = 0;
    answer = async (params) => {
      await cx.notify(acp.methods.agent.session.cancel, { sessionId });
      return { outcome: { outcome: "cancelled" } };
    };
    const cancelled = await cx.request(acp.methods.agent.session.prompt, {
      sessionId,
      prompt: [{ type: "text", text: "run touch ran.txt" }],
    });
    const aborted = last(callsOf()[0]);
    check(
      "a cancelled turn stops, and the command never runs",
      cancelled.stopReason === "cancelled" && aborted.status === "failed" && !existsSync(join(dir, "ran.txt")),
      JSON.stringify({ cancelled, aborted }),
    );

    // Paths that climb out are refused by the tool, as a failed call.
    updates.length = 0;
    await cx.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "read ../../etc/passwd" }] });
    const escaped = last(callsOf()[0]);
    check(
      "a path with .. is a failed call",
      escaped.status === "failed" && /is outside the workspace/.test(escaped.content?.[0]?.content?.text ?? ""),
      JSON.stringify(escaped),
    );
  });
} catch (e) {
  check("the conversation", false, e?.stack ?? String(e));
} finally {
  child.stdin.end();
}

const exit = await new Promise((resolve) => {
  const timer = setTimeout(() => {
    child.kill("SIGKILL");
    resolve("killed");
  }, 10000);
  child.on("exit", (code) => {
    clearTimeout(timer);
    resolve(code);
  });
  if (child.exitCode !== null) resolve(child.exitCode);
});
check("the agent exits cleanly when stdin closes", exit === 0, String(exit));
check(`every message validates against the SDK's schemas (${validated} checked)`, validated > 0 && schemaFailures.length === 0, schemaFailures.join("\n"));
rmSync(dir, { recursive: true, force: true });
console.log(`acp-interop: ${passed} passed, ${failed} failed`);
process.exit(failed === 0 ? 0 : 1);
