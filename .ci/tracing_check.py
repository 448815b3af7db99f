"""Traces in a real backend: Arize Phoenix (from PyPI) receives OTLP from examples/agent and
examples/mcp_server, and its REST API is asked for the spans they exported.

    tracing_check.py --phoenix URL --agent BIN --server BIN --out DIR

1. agent --code-mode against a scripted chat-completions server: one `run_code` program that
   reads two files in parallel, then an answer. Expected tree: `invoke_agent agent` (root) >
   two `chat scripted` spans and `execute_tool run_code` > two `execute_tool read_file`.
2. The Python `mcp` client (pinned by .ci/tracing-check.sh) against mcp_server over stdio, in
   both protocol eras, one `echo` and one bad `add` call, each with a W3C `traceparent` of its
   own in `_meta`. Expected: a server span `tools/call {tool}` whose parent is the span named
   in the traceparent, in that trace, and its child `execute_tool {tool}`.

Each span's required attributes (the GenAI and MCP conventions) are checked by name. Prints
one line per check and a closing verdict; exits 1 on a failed check.
"""

import argparse
import json
import os
import secrets
import subprocess
import sys
import threading
import time
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import anyio
from mcp import Client, StdioServerParameters

# Required or conditionally required by the conventions (and present for these calls).
TOOL_SPAN = ["gen_ai.operation.name", "gen_ai.tool.name", "gen_ai.tool.call.id", "gen_ai.tool.type"]
MCP_SERVER_SPAN = [
    "mcp.method.name",
    "gen_ai.tool.name",
    "gen_ai.operation.name",
    "jsonrpc.request.id",
    "mcp.protocol.version",
    "network.transport",
]
CHAT_SPAN = ["gen_ai.operation.name", "gen_ai.provider.name", "gen_ai.request.model"]

PROGRAM = (
    "const [notes, lib] = await Promise.all(["
    "tools.read_file({path: 'notes.txt'}), tools.read_file({path: 'src/lib.rs'})]);"
    " return {notes: String(notes).length, lib: String(lib).length}"
)


def flatten(value, prefix=""):
    """Phoenix may nest dotted attribute names; both shapes read the same."""
    out = {}
    if isinstance(value, dict):
        for k, v in value.items():
            out.update(flatten(v, f"{prefix}{k}."))
    else:
        out[prefix[:-1]] = value
    return out


def spans_of(phoenix: str, project: str) -> list[dict]:
    spans, cursor = [], None
    while True:
        url = f"{phoenix}/v1/projects/{project}/spans?limit=1000"
        if cursor:
            url += f"&cursor={cursor}"
        try:
            with urllib.request.urlopen(url, timeout=10) as r:
                page = json.load(r)
        except urllib.error.HTTPError as e:
            if e.code == 404:  # the project does not exist until its first span arrives
                return []
            raise
        spans += page.get("data", [])
        cursor = page.get("next_cursor")
        if not cursor:
            return spans


def wait_for(phoenix: str, project: str, count: int, what: str) -> list[dict]:
    deadline = time.monotonic() + 60
    spans = []
    while time.monotonic() < deadline:
        spans = spans_of(phoenix, project)
        if len(spans) >= count:
            return spans
        time.sleep(0.5)
    names = sorted(s["name"] for s in spans)
    raise AssertionError(f"{what}: {len(spans)} spans in Phoenix, want {count}: {names}")


def attrs(span: dict) -> dict:
    return flatten(span.get("attributes") or {})


def span_id(span: dict) -> str:
    return span["context"]["span_id"]


def trace_id(span: dict) -> str:
    return span["context"]["trace_id"]


def require(span: dict, keys: list[str], **values):
    a = attrs(span)
    missing = [k for k in keys if a.get(k) in (None, "")]
    assert not missing, f"{span['name']}: missing {missing} in {sorted(a)}"
    for k, v in values.items():
        key = k.replace("__", ".")
        assert str(a.get(key)) == str(v), f"{span['name']}: {key} = {a.get(key)!r}, want {v!r}"


def only(spans: list[dict], name: str) -> dict:
    found = [s for s in spans if s["name"] == name]
    assert len(found) == 1, f"{len(found)} spans named {name!r} in {sorted(s['name'] for s in spans)}"
    return found[0]


# ---- 1. the agent ------------------------------------------------------------------------


class Scripted(BaseHTTPRequestHandler):
    """A chat-completions server: the first request gets a run_code call, the next an answer."""

    requests = 0

    def do_POST(self):
        length = int(self.headers.get("content-length", 0))
        body = json.loads(self.rfile.read(length) or b"{}")
        Scripted.requests += 1
        if Scripted.requests == 1:
            names = [t.get("function", {}).get("name") for t in body.get("tools", [])]
            assert names == ["run_code"], f"Code Mode sends only run_code, got {names}"
            message = {
                "role": "assistant",
                "content": None,
                "tool_calls": [{
                    "id": "call_ci_1",
                    "type": "function",
                    "function": {
                        "name": "run_code",
                        "arguments": json.dumps({"code": PROGRAM, "description": "Read two files"}),
                    },
                }],
            }
            finish = "tool_calls"
        else:
            message = {"role": "assistant", "content": "Both files read."}
            finish = "stop"
        reply = {
            "id": f"chatcmpl-{Scripted.requests}",
            "object": "chat.completion",
            "model": "scripted",
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
        }
        data = json.dumps(reply).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        pass


def otel_env(phoenix: str, project: str) -> dict:
    env = dict(os.environ)
    env.update({
        "OTEL_EXPORTER_OTLP_ENDPOINT": phoenix,
        # Phoenix takes traces only: no metrics endpoint to send to.
        "OTEL_METRICS_EXPORTER": "none",
        # Phoenix files spans under the project this resource attribute names.
        "OTEL_RESOURCE_ATTRIBUTES": f"openinference.project.name={project}",
    })
    return env


def check_agent(args) -> str:
    server = ThreadingHTTPServer(("127.0.0.1", 0), Scripted)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    project = f"ci-agent-{secrets.token_hex(4)}"
    env = otel_env(args.phoenix, project)
    env.update({
        "OPENAI_BASE_URL": f"http://127.0.0.1:{server.server_address[1]}",
        "OPENAI_API_KEY": "ci",
        "OPENAI_MODEL": "scripted",
    })
    env.pop("DEEPSEEK_API_KEY", None)
    log = os.path.join(args.out, "agent.log")
    with open(log, "w") as out:
        rc = subprocess.run([args.agent, "--code-mode", "Read the two files."], env=env,
                            stdout=out, stderr=subprocess.STDOUT, timeout=120).returncode
    server.shutdown()
    assert rc == 0, f"agent exited {rc} (log {log})"
    assert Scripted.requests == 2, f"{Scripted.requests} chat requests, want 2 (log {log})"
    spans = wait_for(args.phoenix, project, 6, "agent")
    root = only(spans, "invoke_agent agent")
    assert root.get("parent_id") in (None, ""), f"invoke_agent has a parent: {root.get('parent_id')}"
    require(root, ["gen_ai.operation.name"], gen_ai__operation__name="invoke_agent")
    chats = [s for s in spans if s["name"] == "chat scripted"]
    assert len(chats) == 2, f"{len(chats)} chat spans"
    for chat in chats:
        assert chat.get("parent_id") == span_id(root), "a chat span is not the agent's child"
        require(chat, CHAT_SPAN, gen_ai__operation__name="chat", gen_ai__provider__name="openai",
                gen_ai__request__model="scripted")
    program = only(spans, "execute_tool run_code")
    assert program.get("parent_id") == span_id(root), "run_code is not the agent's child"
    require(program, TOOL_SPAN, gen_ai__operation__name="execute_tool",
            gen_ai__tool__name="run_code", gen_ai__tool__call__id="call_ci_1")
    reads = [s for s in spans if s["name"] == "execute_tool read_file"]
    assert len(reads) == 2, f"{len(reads)} read_file spans"
    for read in reads:
        assert read.get("parent_id") == span_id(program), "a sub-call is not run_code's child"
        require(read, TOOL_SPAN, gen_ai__tool__name="read_file")
        assert str(attrs(read)["gen_ai.tool.call.id"]).startswith("call_ci_1:code:")
    assert len({trace_id(s) for s in spans}) == 1, "the agent's spans are not one trace"
    return (f"agent --code-mode: {len(spans)} spans, one trace: invoke_agent > 2 chat + "
            f"execute_tool run_code > 2 execute_tool read_file")


# ---- 2. the MCP server -------------------------------------------------------------------


def traceparent() -> tuple[str, str, str]:
    trace, parent = secrets.token_hex(16), secrets.token_hex(8)
    return f"00-{trace}-{parent}-01", trace, parent


async def mcp_calls(server, mode: str) -> list[tuple[str, str, str, bool]]:
    """(tool, trace id, parent span id, failed) of each call made."""
    made = []
    async with Client(server, mode=mode, read_timeout_seconds=20) as c:
        for tool, arguments in (("echo", {"text": "hi"}), ("add", {"a": "2"})):
            header, trace, parent = traceparent()
            r = await c.call_tool(tool, arguments, meta={"traceparent": header})
            made.append((tool, trace, parent, bool(r.is_error)))
    return made


def check_mcp(args) -> list[str]:
    project = f"ci-mcp-{secrets.token_hex(4)}"
    env = otel_env(args.phoenix, project)
    made = {}
    for mode in ("legacy", "auto"):
        params = StdioServerParameters(command=args.server, args=[], env=env)
        made[mode] = anyio.run(mcp_calls, params, mode)
    # Two sessions, two calls each: a server span and a tool span per call.
    spans = wait_for(args.phoenix, project, 8, "mcp")
    lines = []
    for mode, calls in made.items():
        for tool, trace, parent, failed in calls:
            mine = [s for s in spans if trace_id(s) == trace]
            server_span = only(mine, f"tools/call {tool}")
            assert server_span.get("parent_id") == parent, (
                f"{mode} {tool}: server span's parent {server_span.get('parent_id')}, want the "
                f"traceparent's {parent}")
            require(server_span, MCP_SERVER_SPAN, mcp__method__name="tools/call",
                    gen_ai__tool__name=tool, network__transport="pipe")
            call = only(mine, f"execute_tool {tool}")
            assert call.get("parent_id") == span_id(server_span), f"{mode} {tool}: not the server span's child"
            require(call, TOOL_SPAN, gen_ai__tool__name=tool)
            if failed:
                require(server_span, ["error.type"], error__type="tool_error")
                require(call, ["error.type"], error__type="INVALID_ARGS")
            version = attrs(server_span)["mcp.protocol.version"]
            lines.append(f"mcp {mode} {tool}: server span under the traceparent, protocol {version}"
                         + (", error.type tool_error > INVALID_ARGS" if failed else ""))
    return lines


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--phoenix", required=True)
    p.add_argument("--agent", required=True)
    p.add_argument("--server", required=True)
    p.add_argument("--out", required=True)
    args = p.parse_args()
    os.makedirs(args.out, exist_ok=True)
    passed = failed = 0
    for name, check in (("agent", check_agent), ("mcp", check_mcp)):
        try:
            result = check(args)
            for line in result if isinstance(result, list) else [result]:
                print(line, flush=True)
            passed += 1
        except Exception as e:  # an assertion, a timeout, a transport failure
            print(f"{name}: FAILED: {type(e).__name__}: {e}", flush=True)
            failed += 1
    print(f"tracing-check: {passed} passed, {failed} failed", flush=True)
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
