"""The Python `mcp` 2.3.0 client answers examples/mcp_server's approvals, in both eras.

    mcp_approval_check.py BIN --root DIR [ARGS...]   # launch BIN over stdio

`write_file` asks before it runs. The client declares form elicitation (an elicitation
callback) and its "person" answers each form:

- "legacy" (2025-11-25): the server sends `elicitation/create` while the call waits;
- "auto" (2026-07-28): the server answers `input_required` with the form and a sealed
  `requestState`; the SDK asks the callback and retries the call with the answer.

Per era: accept (the file is written), accept with edited arguments (the edited path is
written, the asked one is not), decline with a reason (nothing written; the model reads the
reason), cancel (nothing written). Prints one line per era and a closing verdict line; exits 1
on a failed check.
"""

import json
import os
import sys

import anyio
from mcp import Client, StdioServerParameters, types

EXPECTED = {"legacy": "2025-11-25", "auto": "2026-07-28"}


class Person:
    """Answers each form with the next planned answer, and keeps what it was asked."""

    def __init__(self) -> None:
        self.answer: types.ElicitResult | None = None
        self.asked: list[types.ElicitRequestFormParams] = []

    async def __call__(self, context, params):
        assert isinstance(params, types.ElicitRequestFormParams), f"not a form: {params!r}"
        self.asked.append(params)
        assert self.answer is not None, "asked without a planned answer"
        answer, self.answer = self.answer, None
        return answer


def text_of(result) -> str:
    return "\n".join(b.text for b in result.content if getattr(b, "type", None) == "text")


async def check(server, root: str, mode: str) -> str:
    person = Person()
    async with Client(server, mode=mode, read_timeout_seconds=20, elicitation_callback=person) as c:
        version = c.protocol_version
        assert version == EXPECTED[mode], f"{mode}: negotiated {version}, want {EXPECTED[mode]}"

        def written(name: str) -> str | None:
            path = os.path.join(root, name)
            return open(path).read() if os.path.exists(path) else None

        # Accept: asked once, with a message naming the server and the tool; the file written.
        person.answer = types.ElicitResult(action="accept", content={"approve": True})
        r = await c.call_tool("write_file", {"path": f"{mode}-a.txt", "content": "yes"})
        assert not r.is_error, f"{mode}: accepted write failed: {r}"
        assert written(f"{mode}-a.txt") == "yes", f"{mode}: accepted write not on disk"
        assert len(person.asked) == 1, f"{mode}: asked {len(person.asked)} times"
        form = person.asked[0]
        assert '"write_file"' in form.message and "MCP server" in form.message, form.message
        schema = form.requested_schema
        props = schema["properties"] if isinstance(schema, dict) else schema.properties
        assert {"approve", "reason", "arguments"} <= set(props), f"{mode}: form {props}"

        # Accept with edited arguments: the edit is what runs.
        edit = json.dumps({"path": f"{mode}-edited.txt", "content": "edited"})
        person.answer = types.ElicitResult(
            action="accept", content={"approve": True, "arguments": edit}
        )
        r = await c.call_tool("write_file", {"path": f"{mode}-b.txt", "content": "asked"})
        assert not r.is_error, f"{mode}: edited write failed: {r}"
        assert written(f"{mode}-edited.txt") == "edited", f"{mode}: the edit did not run"
        assert written(f"{mode}-b.txt") is None, f"{mode}: the asked arguments ran"

        # Decline with a reason: nothing written, the reason reaches the model.
        person.answer = types.ElicitResult(
            action="accept", content={"approve": False, "reason": "not that file"}
        )
        r = await c.call_tool("write_file", {"path": f"{mode}-c.txt", "content": "no"})
        assert r.is_error, f"{mode}: a refused write succeeded: {r}"
        want = 'Error: the user rejected tool "write_file": not that file'
        assert text_of(r) == want, f"{mode}: refusal text {text_of(r)!r}"
        person.answer = types.ElicitResult(action="decline")
        r = await c.call_tool("write_file", {"path": f"{mode}-c.txt", "content": "no"})
        assert text_of(r) == 'Error: the user rejected tool "write_file"', f"{mode}: {r}"

        # Cancel: nothing written.
        person.answer = types.ElicitResult(action="cancel")
        r = await c.call_tool("write_file", {"path": f"{mode}-c.txt", "content": "no"})
        assert text_of(r) == 'Error: approval for tool "write_file" was cancelled', f"{mode}: {r}"
        assert written(f"{mode}-c.txt") is None, f"{mode}: a refused write reached the disk"
        assert len(person.asked) == 5, f"{mode}: asked {len(person.asked)} times, want 5"

        # A tool that does not ask is not put to the person.
        r = await c.call_tool("echo", {"text": "hi"})
        assert not r.is_error and len(person.asked) == 5, f"{mode}: echo {r}"

        return f"{mode}: protocol {version}, accept / edit / decline with reason / decline / cancel ok"


def leaves(e: BaseException) -> list[BaseException]:
    """The real failures inside (nested) exception groups from anyio task groups."""
    if isinstance(e, BaseExceptionGroup):
        return [leaf for sub in e.exceptions for leaf in leaves(sub)]
    return [e]


def main() -> int:
    argv = sys.argv[1:]
    if len(argv) < 3 or argv[1] != "--root":
        sys.exit("usage: mcp_approval_check.py BIN --root DIR [ARGS...]")
    root = argv[2]
    os.makedirs(root, exist_ok=True)
    server = StdioServerParameters(command=argv[0], args=argv[1:])
    passed, failed = 0, 0
    for mode in ("legacy", "auto"):
        try:
            print(anyio.run(check, server, root, mode), flush=True)
            passed += 1
        except Exception as e:  # an assertion, a timeout or a transport failure
            why = "; ".join(f"{type(x).__name__}: {x}" for x in leaves(e))
            print(f"{mode}: FAILED: {why}", flush=True)
            failed += 1
    print(f"python mcp approvals (stdio {argv[0]}): {passed} passed, {failed} failed", flush=True)
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
