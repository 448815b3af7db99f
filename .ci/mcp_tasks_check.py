"""MCP tasks (2026-07-28, io.modelcontextprotocol/tasks) from the Python `mcp` 2.3.0 client
against examples/mcp_server's `count_files` (issue 36).

    mcp_tasks_check.py BIN [ARGS...]

The pinned SDK ships no tasks extension of its own, only the hooks for one: this script
declares it with a `ClientExtension` whose `ResultClaim` takes a `resultType: "task"` answer
and polls `tasks/get` (at the server's `pollIntervalMs`) to the result, as SEP-2663 says.
Checks: a task is created and polled to a completed result with the tool's structured value;
progress shows in the status message while it works; `tasks/cancel` ends it cancelled; an
unknown id is -32602; the legacy era (2025-11-25) is not told of the extension, and a call
without that revision's `task` param runs in place (the pinned client sends none; the
TypeScript SDK checks that revision's tasks: mcp_tasks_ts.mjs). Prints one line per check and a
closing verdict; exits 1 on a failed check.
"""

import sys
import time
from typing import Any, Literal

import anyio
import mcp_types as types
from mcp import Client, MCPError, StdioServerParameters
from mcp.client.extension import ClaimContext, ClientExtension, ResultClaim
from mcp_types import CallToolResult, RequestParams, Result

TASKS = "io.modelcontextprotocol/tasks"


class TaskIdParams(RequestParams):
    task_id: str


class GetTask(types.Request[TaskIdParams, Literal["tasks/get"]]):
    method: Literal["tasks/get"] = "tasks/get"
    params: TaskIdParams
    name_param = "taskId"


class CancelTask(types.Request[TaskIdParams, Literal["tasks/cancel"]]):
    method: Literal["tasks/cancel"] = "tasks/cancel"
    params: TaskIdParams
    name_param = "taskId"


class CreatedTask(Result):
    result_type: Literal["task"] = "task"
    task_id: str
    status: str
    created_at: str
    last_updated_at: str
    ttl_ms: int | None
    poll_interval_ms: int | None = None


class TaskState(Result):
    model_config = {"extra": "allow"}
    task_id: str
    status: str
    status_message: str | None = None


class Ack(Result):
    model_config = {"extra": "allow"}


SEEN: dict[str, Any] = {"created": [], "messages": []}


async def poll(session, task_id: str, interval_ms: int | None) -> TaskState:
    deadline = time.monotonic() + 60
    while True:
        state = await session.send_request(GetTask(params=TaskIdParams(task_id=task_id)), TaskState)
        if state.status_message:
            SEEN["messages"].append(state.status_message)
        if state.status in ("completed", "failed", "cancelled"):
            return state
        assert time.monotonic() < deadline, f"task {task_id} still {state.status} after 60 s"
        await anyio.sleep((interval_ms or 1000) / 1000)


async def resolve(created: CreatedTask, ctx: ClaimContext) -> CallToolResult:
    SEEN["created"].append(created)
    state = await poll(ctx.session, created.task_id, created.poll_interval_ms)
    assert state.status == "completed", f"task ended {state.status}: {state}"
    return CallToolResult.model_validate(state.model_extra["result"])


class Tasks(ClientExtension):
    identifier = TASKS

    def claims(self):
        return [ResultClaim(result_type="task", model=CreatedTask, resolve=resolve)]


async def modern(server) -> list[str]:
    lines = []
    # "auto" discovers (server/discover) and agrees on 2026-07-28.
    async with Client(server, mode="auto", extensions=[Tasks()], read_timeout_seconds=60) as c:
        assert c.protocol_version == "2026-07-28", c.protocol_version
        caps = c.server_capabilities.model_dump(by_alias=True, exclude_none=True)
        assert TASKS in (caps.get("extensions") or {}), f"extension not declared: {caps}"
        tools = {t.name: t for t in (await c.list_tools()).tools}
        assert "count_files" in tools, f"count_files not listed: {list(tools)}"

        r = await c.call_tool("count_files", {"seconds": 2})
        assert len(SEEN["created"]) == 1, "the call was not answered with a task"
        created = SEEN["created"][0]
        assert created.status == "working", created
        assert created.created_at.endswith("Z"), created
        assert not r.is_error, r
        value = r.structured_content
        assert isinstance(value, dict) and {"files", "directories"} <= set(value), value
        assert any("files" in m for m in SEEN["messages"]), f"no progress seen: {SEEN['messages']}"
        lines.append(
            f"task created ({created.task_id[:8]}…, poll {created.poll_interval_ms} ms), "
            f"polled to completed: {value}; progress {SEEN['messages'][-1]!r}"
        )

        raw = await c.session.call_tool("count_files", {"seconds": 30}, allow_claimed=True)
        assert getattr(raw, "result_type", None) == "task", f"not a task: {raw}"
        await c.session.send_request(CancelTask(params=TaskIdParams(task_id=raw.task_id)), Ack)
        state = await poll(c.session, raw.task_id, raw.poll_interval_ms)
        assert state.status == "cancelled", state
        lines.append("tasks/cancel: cancelled")

        try:
            await c.session.send_request(GetTask(params=TaskIdParams(task_id="no-such-task")), TaskState)
            raise AssertionError("tasks/get of an unknown id answered")
        except MCPError as e:
            assert e.code == -32602 and "unknown task" in e.message, e
        lines.append("unknown id: -32602")
    return lines


async def legacy(server) -> str:
    async with Client(server, mode="legacy", read_timeout_seconds=60) as c:
        assert c.protocol_version == "2025-11-25", c.protocol_version
        caps = c.server_capabilities.model_dump(by_alias=True, exclude_none=True)
        assert TASKS not in (caps.get("extensions") or {}), caps
        r = await c.call_tool("count_files", {"seconds": 1})
        assert not r.is_error and "files" in (r.structured_content or {}), r
    return "legacy: run in place, no extension declared"


async def main(argv: list[str]) -> int:
    if not argv:
        sys.exit("usage: mcp_tasks_check.py BIN [ARGS...]")
    server = StdioServerParameters(command=argv[0], args=argv[1:])
    try:
        for line in await modern(server):
            print(f"2026-07-28: {line}")
        print(await legacy(server))
    except Exception as e:  # noqa: BLE001: the verdict names any failure
        print(f"tasks: FAILED: {type(e).__name__}: {e}")
        return 1
    print("tasks: ok")
    return 0


if __name__ == "__main__":
    sys.exit(anyio.run(main, sys.argv[1:]))
