"""Progressive discovery through the Python `mcp` 2.3.0 client, in both protocol eras.

    mcp_discovery_check.py BIN [ARGS...]    # launch BIN ARGS (examples/mcp_server --defer) over stdio

The server defers `write_file` and `list_files`. "legacy" (2025-11-25, a stateful session):
the list holds `tool_search` and not the deferred tools; a search for them loads them, the
session is sent `notifications/tools/list_changed`, and the list then holds them. "auto"
(2026-07-28, stateless): the list carries `cacheScope: public` and the server's `ttlMs`, stays
the same after a search, and the search result carries the found tools' input schemas; the
deferred tool is called by name. Prints one line per mode and a closing verdict line; exits 1
on a failed check.
"""

import sys

import anyio
from mcp import Client, StdioServerParameters, types

EXPECTED = {"legacy": "2025-11-25", "auto": "2026-07-28"}
DEFERRED = {"write_file", "list_files"}


async def check(server, mode: str) -> str:
    changed = anyio.Event()

    async def on_message(message) -> None:
        if isinstance(message, types.ToolListChangedNotification):
            changed.set()

    async with Client(server, mode=mode, read_timeout_seconds=20, message_handler=on_message) as c:
        version = c.protocol_version
        assert version == EXPECTED[mode], f"{mode}: negotiated {version}, want {EXPECTED[mode]}"
        listed = await c.list_tools(cache_mode="refresh")
        names = {t.name for t in listed.tools}
        assert "tool_search" in names, f"{mode}: tool_search not listed: {sorted(names)}"
        assert not (DEFERRED & names), f"{mode}: deferred tools listed: {sorted(names)}"

        found = await c.call_tool("tool_search", {"query": "write text to a file", "limit": 3})
        assert not found.is_error, f"{mode}: tool_search failed: {found}"
        hits = [t["name"] for t in (found.structured_content or {}).get("tools", [])]
        assert "write_file" in hits, f"{mode}: write_file not found: {found}"

        if mode == "legacy":
            with anyio.fail_after(10):
                await changed.wait()
            after = {t.name for t in (await c.list_tools(cache_mode="refresh")).tools}
            assert "write_file" in after, f"{mode}: write_file not listed after the search: {sorted(after)}"
            detail = f"list_changed received, then {len(after)} tools listed (write_file among them)"
        else:
            assert listed.cache_scope == "public", f"{mode}: cacheScope {listed.cache_scope!r}"
            assert listed.ttl_ms == 30000, f"{mode}: ttlMs {listed.ttl_ms!r}"
            entry = next(t for t in found.structured_content["tools"] if t["name"] == "write_file")
            schema = entry.get("inputSchema") or {}
            assert "path" in schema.get("properties", {}), f"{mode}: no input schema: {entry}"
            after = {t.name for t in (await c.list_tools(cache_mode="refresh")).tools}
            assert after == names, f"{mode}: the list changed: {sorted(after)}"
            wrote = await c.call_tool("write_file", {"path": "found.txt", "content": "found by search"})
            assert not wrote.is_error, f"{mode}: write_file failed: {wrote}"
            detail = (f"cacheScope {listed.cache_scope}, ttlMs {listed.ttl_ms}, the search result "
                      "carried write_file's input schema and the call by name ran")
        return f"{mode}: protocol {version}, {len(names)} tools listed before, {detail}"


def leaves(e: BaseException) -> list[BaseException]:
    if isinstance(e, BaseExceptionGroup):
        return [leaf for sub in e.exceptions for leaf in leaves(sub)]
    return [e]


def main() -> int:
    if not sys.argv[1:]:
        sys.exit("usage: mcp_discovery_check.py BIN [ARGS...]")
    server = StdioServerParameters(command=sys.argv[1], args=sys.argv[2:])
    passed, failed = 0, 0
    for mode in ("legacy", "auto"):
        try:
            print(anyio.run(check, server, mode), flush=True)
            passed += 1
        except Exception as e:
            why = "; ".join(f"{type(x).__name__}: {x}" for x in leaves(e))
            print(f"{mode}: FAILED: {why}", flush=True)
            failed += 1
    print(f"python mcp client (progressive discovery): {passed} passed, {failed} failed", flush=True)
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
