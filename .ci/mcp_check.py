"""The Python `mcp` 2.3.0 client against examples/mcp_server, in both protocol eras.

    mcp_check.py BIN [ARGS...]    # launch BIN ARGS over stdio
    mcp_check.py --url URL        # a running server's streamable HTTP endpoint

"legacy" must negotiate 2025-11-25 (the initialize handshake), "auto" 2026-07-28
(server/discover). Prints one line per mode and a closing verdict line; exits 1 on a
failed check.
"""

import sys

import anyio
from mcp import Client, MCPError, StdioServerParameters

EXPECTED = {"legacy": "2025-11-25", "auto": "2026-07-28"}
ERROR_KEY = "dev.dsh-tools/error"


def server_from_args(argv: list[str]):
    if len(argv) >= 2 and argv[0] == "--url":
        return argv[1], f"http {argv[1]}"
    if not argv:
        sys.exit("usage: mcp_check.py BIN [ARGS...] | --url URL")
    return StdioServerParameters(command=argv[0], args=argv[1:]), f"stdio {argv[0]}"


async def check(server, mode: str) -> str:
    async with Client(server, mode=mode, read_timeout_seconds=20) as c:
        version = c.protocol_version
        assert version == EXPECTED[mode], f"{mode}: negotiated {version}, want {EXPECTED[mode]}"

        names = [t.name for t in (await c.list_tools()).tools]
        assert {"echo", "add"} <= set(names), f"{mode}: echo/add not listed: {names}"

        # An object value: structuredContent in both eras.
        r = await c.call_tool("echo", {"text": "hi"})
        assert not r.is_error, f"{mode}: echo failed: {r}"
        assert r.structured_content == {"text": "hi"}, f"{mode}: echo structured: {r}"

        # A non-object value: structuredContent only from 2026-07-28 on.
        added = await c.call_tool("add", {"a": 2, "b": 3})
        assert not added.is_error, f"{mode}: add failed: {added}"
        if mode == "legacy":
            assert added.structured_content is None, f"{mode}: add has structured content: {added}"
        else:
            assert added.structured_content == 5, f"{mode}: add structured: {added}"
        texts = [b.text for b in added.content if getattr(b, "type", None) == "text"]
        assert "5" in texts, f"{mode}: add content does not carry 5: {added}"

        # Bad arguments: a tool execution error (isError) with our code in _meta.
        bad = await c.call_tool("add", {"a": "2"})
        assert bad.is_error, f"{mode}: bad args not an error: {bad}"
        assert bad.content and bad.content[0].text.startswith("Error: invalid arguments"), (
            f"{mode}: bad args content: {bad}"
        )
        info = (bad.meta or {}).get(ERROR_KEY)
        assert isinstance(info, dict) and info.get("code") == "INVALID_ARGS", (
            f"{mode}: bad args _meta: {bad.meta!r}"
        )

        # An unknown tool: a JSON-RPC error -32602, raised as MCPError.
        try:
            r = await c.call_tool("no_such_tool", {})
        except MCPError as e:
            assert e.code == -32602, f"{mode}: unknown tool code {e.code}: {e.message}"
            unknown = f"{e.code} {e.message!r}"
        else:
            raise AssertionError(f"{mode}: unknown tool did not raise: {r}")

        return (
            f"{mode}: protocol {version}, {len(names)} tools, echo -> {{'text': 'hi'}}, "
            f"add structured -> {'absent' if added.structured_content is None else added.structured_content}, "
            f"bad args -> {info['code']}, unknown -> {unknown}"
        )


def leaves(e: BaseException) -> list[BaseException]:
    """The real failures inside (nested) exception groups from anyio task groups."""
    if isinstance(e, BaseExceptionGroup):
        return [leaf for sub in e.exceptions for leaf in leaves(sub)]
    return [e]


def main() -> int:
    server, label = server_from_args(sys.argv[1:])
    passed, failed = 0, 0
    for mode in ("legacy", "auto"):
        try:
            print(anyio.run(check, server, mode), flush=True)
            passed += 1
        except Exception as e:  # an assertion, a timeout or a transport failure
            why = "; ".join(f"{type(x).__name__}: {x}" for x in leaves(e))
            print(f"{mode}: FAILED: {why}", flush=True)
            failed += 1
    print(f"python mcp client ({label}): {passed} passed, {failed} failed", flush=True)
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
