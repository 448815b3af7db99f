"""A third-party MCP server for the import check: Python `mcp` 2.3.0's `MCPServer` over stdio.

    target/mcp-venv/bin/python .ci/py_server.py

The tools cover what examples/mcp_import must handle from a Pydantic-built peer: an
`Optional[int]` parameter (Pydantic emits `anyOf [{"type": "integer"}, {"type": "null"}]`,
outside our schema subset until converted), a structured object result with an output schema,
a wrapped scalar result, a tool that raises (an `isError` result), and a tool that asks the
client's user before it acts (`delete`: a `Resolve(...)` parameter whose resolver returns
`Elicit`, which the SDK sends as `elicitation/create` in 2025-11-25 and as an
`input_required` result in 2026-07-28).

With PY_SERVER_CALL_LOG=FILE, every `tools/call` that reaches this server is appended to
FILE as one JSON line (`{"name", "arguments"}`), before any validation: the check uses it to
show that arguments our side rejects never leave the client.
"""

import json
import os
from typing import Annotated, Any, Optional

from pydantic import BaseModel

from mcp.server.mcpserver import AcceptedElicitation, Elicit, ElicitationResult, MCPServer, Resolve
from mcp.server.mcpserver.exceptions import ToolError

CALL_LOG = os.environ.get("PY_SERVER_CALL_LOG")


async def record_calls(ctx: Any, call_next: Any) -> Any:
    """Middleware: runs before params validation, tool lookup and the tool itself."""
    if CALL_LOG and ctx.method == "tools/call" and ctx.request_id is not None:
        params = dict(ctx.params or {})
        with open(CALL_LOG, "a", encoding="utf-8") as log:
            log.write(json.dumps({"name": params.get("name"), "arguments": params.get("arguments")}) + "\n")
    return await call_next(ctx)


server = MCPServer("dsh-tools-ci-py-server", version="1.0.0", middleware=[record_calls])


@server.tool()
def greet(name: str, times: Optional[int] = None) -> str:
    """Greet someone, optionally several times."""
    return " ".join([f"hello {name}"] * (times or 1))


@server.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


class Stats(BaseModel):
    count: int
    total: float
    mean: float


@server.tool()
def stats(values: list[float]) -> Stats:
    """Count, total and mean of some numbers."""
    if not values:
        raise ToolError("stats needs at least one value")
    return Stats(count=len(values), total=sum(values), mean=sum(values) / len(values))


@server.tool()
def explode(reason: str) -> str:
    """Always fails, with the given reason."""
    raise ToolError(f"exploded: {reason}")


class Confirm(BaseModel):
    confirm: bool


def ask_delete(path: str) -> Elicit[Confirm]:
    return Elicit(f"Delete {path}?", Confirm)


@server.tool()
def delete(path: str, answer: Annotated[ElicitationResult[Confirm], Resolve(ask_delete)]) -> str:
    """Delete a file, once the user confirms (nothing is really deleted)."""
    if isinstance(answer, AcceptedElicitation) and answer.data.confirm:
        return f"deleted {path}"
    return f"kept {path} ({answer.action})"


if __name__ == "__main__":
    server.run("stdio")
