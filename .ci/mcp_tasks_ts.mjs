// The TypeScript MCP SDK's task API (@modelcontextprotocol/sdk, pinned in .ci/mcp-interop.sh;
// it implements the 2025-11-25 experimental tasks, client.experimental.tasks) against
// examples/mcp_server --auth-* and its `count_files` (task = "optional"). Run by
// .ci/mcp_auth_check.py, which starts the server and passes MCP_URL, TOKEN_WRITE (subject
// ci-user) and TOKEN_OTHER (subject ci-other). Checks: the capability and execution.taskSupport;
// create, progress under the request's token, poll, result; list; another subject's get, result,
// cancel and list find nothing; cancel, and a second cancel refused; a plain call in place; a
// task-augmented call of a tool that never runs as one refused (-32601). Prints one line per
// check and a closing verdict; exits 1 on a failure.
// Copied next to target/mcp-node/node_modules before it runs, so the SDK resolves from there.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const url = new URL(process.env.MCP_URL);

async function connect(token) {
  const transport = new StreamableHTTPClientTransport(url, {
    requestInit: { headers: { Authorization: `Bearer ${token}` } },
  });
  const client = new Client({ name: "dsh-tools-ci-tasks", version: "1" });
  await client.connect(transport);
  return client;
}

function check(ok, what) {
  if (!ok) throw new Error(what);
}

async function refused(promise, code, what) {
  try {
    const r = await promise;
    throw new Error(`${what}: not refused: ${JSON.stringify(r)}`);
  } catch (e) {
    check(e.code === code, `${what}: ${e.code} ${e.message}, want ${code}`);
  }
}

const text = (r) => (r.content ?? []).filter((b) => b.type === "text").map((b) => b.text).join("\n");
let passed = 0;
const done = (line) => {
  passed += 1;
  console.log(line);
};

const me = await connect(process.env.TOKEN_WRITE);
const other = await connect(process.env.TOKEN_OTHER);
try {
  check(me.getServerVersion() && me.getServerCapabilities()?.tasks?.requests?.tools?.call,
    `tasks capability: ${JSON.stringify(me.getServerCapabilities())}`);
  const tools = (await me.listTools()).tools;
  const count = tools.find((t) => t.name === "count_files");
  check(count?.execution?.taskSupport === "optional", `count_files: ${JSON.stringify(count)}`);
  check(tools.find((t) => t.name === "echo")?.execution === undefined, "echo has execution");
  done("capability tasks.requests.tools.call; count_files taskSupport optional");

  // Create, progress, poll, result.
  const progress = [];
  const seen = [];
  let result = null;
  let taskId = null;
  for await (const m of me.experimental.tasks.callToolStream(
    { name: "count_files", arguments: { seconds: 2 } },
    undefined,
    { task: { ttl: 60000 }, onprogress: (p) => progress.push(p) },
  )) {
    seen.push(m.type);
    if (m.type === "taskCreated") taskId = m.task.taskId;
    if (m.type === "result") result = m.result;
    if (m.type === "error") throw m.error;
  }
  check(seen[0] === "taskCreated" && seen.includes("taskStatus") && result, `stream: ${seen}`);
  check(!result.isError && /files/.test(text(result)), `result: ${JSON.stringify(result)}`);
  check(result._meta?.["io.modelcontextprotocol/related-task"]?.taskId === taskId,
    `related-task: ${JSON.stringify(result._meta)}`);
  check(progress.length >= 1, "no progress under the request's token");
  const finished = await me.experimental.tasks.getTask(taskId);
  check(finished.status === "completed" && finished.ttl === 60000, `get: ${JSON.stringify(finished)}`);
  done(`task ${taskId.slice(0, 8)}..: ${seen.length} messages, ${progress.length} progress, completed with related-task`);

  // A long one: seen by its owner only, then cancelled.
  let long = null;
  for await (const m of me.experimental.tasks.callToolStream(
    { name: "count_files", arguments: { seconds: 30 } }, undefined, { task: {} })) {
    if (m.type === "taskCreated") {
      long = m.task;
      break;
    }
    if (m.type === "error") throw m.error;
  }
  check(long?.status === "working" && long.pollInterval > 0, `created: ${JSON.stringify(long)}`);
  const mine = (await me.experimental.tasks.listTasks()).tasks.map((t) => t.taskId);
  check(mine.includes(long.taskId) && mine.includes(taskId), `own list: ${mine}`);
  await refused(other.experimental.tasks.getTask(long.taskId), -32602, "another subject's get");
  await refused(other.experimental.tasks.cancelTask(long.taskId), -32602, "another subject's cancel");
  await refused(other.experimental.tasks.getTaskResult(long.taskId), -32602, "another subject's result");
  const theirs = (await other.experimental.tasks.listTasks()).tasks.map((t) => t.taskId);
  check(!theirs.includes(long.taskId), `another subject lists ${theirs}`);
  done("another subject: get, cancel, result -32602; its list is its own");

  const cancelled = await me.experimental.tasks.cancelTask(long.taskId);
  check(cancelled.status === "cancelled", `cancel: ${JSON.stringify(cancelled)}`);
  check((await me.experimental.tasks.getTask(long.taskId)).status === "cancelled", "get after cancel");
  await refused(me.experimental.tasks.cancelTask(long.taskId), -32602, "a second cancel");
  done("cancel: cancelled at once; a second cancel -32602");

  // In place without a task; a tool that never runs as one refuses a task.
  const plain = await me.callTool({ name: "count_files", arguments: { seconds: 1 } });
  check(!plain.isError && /files/.test(text(plain)), `plain: ${JSON.stringify(plain)}`);
  let echoed = null;
  for await (const m of me.experimental.tasks.callToolStream(
    { name: "echo", arguments: { text: "x" } }, undefined, { task: {} })) {
    if (m.type === "error") echoed = m.error;
  }
  check(echoed?.code === -32601, `echo as a task: ${echoed?.code} ${echoed?.message}`);
  done("plain call in place; echo as a task -32601");
} finally {
  await me.close();
  await other.close();
}
console.log(`typescript tasks (2025-11-25): ${passed}/5`);
