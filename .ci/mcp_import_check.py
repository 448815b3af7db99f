"""examples/mcp_import against a third-party server: .ci/py_server.py (Python `mcp` 2.3.0).

    mcp_import_check.py MCP_IMPORT_BIN

Run it with the venv's python (target/mcp-venv/bin/python): the server is launched with the
same interpreter, and the schema precondition below uses the `mcp` client. Prints one line
per check group and a closing verdict line; exits 1 on a failed check. The last group runs
the import again in both eras (`--modern` for 2026-07-28 over the child's pipes) with and
without `--approve yes|no`: py_server.py's `delete` asks the user (the SDK's `Elicit`), and
our host's approval service is the one that answers.
"""

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import anyio
from mcp import Client, StdioServerParameters

SERVER = [sys.executable, str(Path(__file__).with_name("py_server.py"))]

# (name, arguments) in order; `call NAME -> JSON` lines come back in the same order.
CALLS = [
    ("greet", {"name": "ada", "times": 2}),  # ok: the Optional[int] given
    ("greet", {"name": "bob", "times": None}),  # ok: the Optional[int] as null
    ("add", {"a": 2, "b": 3}),  # ok: a wrapped scalar ({"result": 5})
    ("stats", {"values": [1, 2, 3]}),  # ok: a structured object
    ("add", {"a": "2", "b": 3}),  # bad args: rejected locally
    ("greet", {"name": "eve", "times": "2"}),  # bad args inside the converted anyOf
    ("greet", {"times": 1}),  # bad args: missing required property
    ("explode", {"reason": "on purpose"}),  # the tool raises -> isError
]
BAD = {4, 5, 6}


async def remote_schema_has_anyof_null() -> None:
    """Precondition: the peer really emits `anyOf [T, null]` for Optional[int]."""
    async with Client(StdioServerParameters(command=SERVER[0], args=SERVER[1:]), mode="legacy") as c:
        tools = {t.name: t for t in (await c.list_tools()).tools}
    times = tools["greet"].input_schema["properties"]["times"]
    variants = times.get("anyOf")
    assert variants and {"type": "null"} in variants and {"type": "integer"} in variants, (
        f"greet.times is not anyOf [integer, null]: {times}"
    )


def run_import(call_log: str) -> tuple[list[str], dict[str, str], list[dict]]:
    argv = [sys.argv[1]]
    for name, args in CALLS:
        argv += ["--call", name, json.dumps(args)]
    argv += ["--", *SERVER]
    env = dict(os.environ, PY_SERVER_CALL_LOG=call_log)
    out = subprocess.run(argv, capture_output=True, text=True, timeout=60, env=env)
    if out.returncode != 0:
        raise AssertionError(f"mcp_import exited {out.returncode}: {out.stderr.strip()[-2000:]}")
    lines = out.stdout.splitlines()
    tools: dict[str, str] = {}
    results: list[dict] = []
    for line in lines:
        if line.startswith("tool "):
            name, how = line[len("tool ") :].split(":", 1)[0].split(" ")
            tools[name] = how
        elif line.startswith("call "):
            head, _, body = line.partition(" -> ")
            results.append({"name": head[len("call ") :], "result": json.loads(body)})
    return lines, tools, results


def check() -> list[str]:
    report = []
    anyio.run(remote_schema_has_anyof_null)
    report.append("remote greet.times is anyOf [integer, null]")

    with tempfile.NamedTemporaryFile(mode="r", suffix=".jsonl") as log:
        lines, tools, results = run_import(log.name)
        reached = [json.loads(l) for l in log.read().splitlines() if l.strip()]

    want = {"greet", "add", "stats", "explode", "delete"}
    assert set(tools) == want, f"imported tools {tools}, want {sorted(want)}; output: {lines}"
    not_converted = {n: h for n, h in tools.items() if h != "converted"}
    assert not not_converted, f"tools not converted: {not_converted}"
    report.append(f"{len(tools)} tools converted (greet with the anyOf parameter included)")

    assert [r["name"] for r in results] == [n for n, _ in CALLS], f"calls: {results}"
    r = [x["result"] for x in results]

    def ok(i: int) -> dict:
        assert r[i]["isError"] is False and "value" in r[i], f"call {i} {CALLS[i]}: {r[i]}"
        return r[i]["value"].get("structuredContent")

    assert ok(0) == {"result": "hello ada hello ada"}, r[0]
    assert ok(1) == {"result": "hello bob"}, r[1]
    assert ok(2) == {"result": 5}, r[2]
    assert ok(3) == {"count": 3, "total": 6.0, "mean": 2.0}, r[3]
    report.append("4 calls ok (greet x2, add -> 5, stats -> {count 3, total 6, mean 2})")

    for i in sorted(BAD):
        res = r[i]
        assert res["isError"] is True and "error" in res, f"call {i} {CALLS[i]}: {res}"
        assert res["error"]["info"] == {"name": "ToolArgsError", "code": "INVALID_ARGS"}, res
        assert res["error"]["message"].startswith("invalid arguments: "), res
        assert res["content"][0]["text"].startswith("Error: invalid arguments: "), res
    # Validated locally: the server never saw them.
    assert len(reached) == len(CALLS) - len(BAD), f"calls that reached the server: {reached}"
    for i, (name, args) in enumerate(CALLS):
        if i in BAD:
            assert {"name": name, "arguments": args} not in reached, f"bad call {i} reached the server"
    report.append(f"{len(BAD)} bad-args calls -> local INVALID_ARGS, none reached the server")

    res = r[7]
    assert res["isError"] is True, res
    assert res["error"]["info"]["code"] == "MCP_TOOL_ERROR", res
    assert "exploded: on purpose" in res["error"]["message"], res
    report.append(f"explode -> isError, {res['error']['info']['name']}/MCP_TOOL_ERROR")
    report.append(approvals())
    return report


def approvals() -> str:
    """`delete` asks (Elicit, in either era): our host's approval service answers it."""
    seen = []
    for era, flags, protocol in (("legacy", [], "2025-11-25"), ("2026", ["--modern"], "2026-07-28")):
        for answer, want in (("yes", "deleted x"), ("no", "kept x (decline)"), (None, "kept x (cancel)")):
            argv = [sys.argv[1], *flags]
            if answer:
                argv += ["--approve", answer]
            argv += ["--call", "delete", json.dumps({"path": "x"}), "--", *SERVER]
            out = subprocess.run(argv, capture_output=True, text=True, timeout=60)
            what = f"{era} --approve {answer}"
            assert out.returncode == 0, f"{what}: exited {out.returncode}: {out.stderr[-2000:]}"
            assert f"protocol {protocol}" in out.stdout.splitlines(), f"{what}: {out.stdout}"
            calls = [l for l in out.stdout.splitlines() if l.startswith("call delete -> ")]
            assert len(calls) == 1, f"{what}: {out.stdout}"
            result = json.loads(calls[0][len("call delete -> "):])
            assert result["isError"] is False, f"{what}: {result}"
            assert result["value"]["structuredContent"] == {"result": want}, f"{what}: {result}"
            asked = [l for l in out.stderr.splitlines() if l.startswith("asked: ")]
            expected = ['asked: the MCP server "dsh-tools-ci-py-server" asks: Delete x?'] if answer else []
            assert asked == expected, f"{what}: asked {asked}"
        seen.append(protocol)
    return (f"delete asks ({' and '.join(seen)}): our approval service's yes -> deleted, "
            "no -> declined, no service -> cancelled")


def leaves(e: BaseException) -> list[BaseException]:
    """The real failures inside (nested) exception groups from anyio task groups."""
    if isinstance(e, BaseExceptionGroup):
        return [leaf for sub in e.exceptions for leaf in leaves(sub)]
    return [e]


def main() -> int:
    if len(sys.argv) != 2:
        sys.exit("usage: mcp_import_check.py MCP_IMPORT_BIN")
    try:
        for line in check():
            print(line, flush=True)
    except Exception as e:  # an assertion, a timeout or a failed launch
        why = "; ".join(f"{type(x).__name__}: {x}" for x in leaves(e))
        print(f"FAILED: {why}", flush=True)
        print("mcp_import vs python MCPServer: 0 passed, 1 failed", flush=True)
        return 1
    print("mcp_import vs python MCPServer: 1 passed, 0 failed", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
