"""Bearer-token authorization of examples/mcp_server, checked by clients we did not write.

    mcp_auth_check.py SERVER_BIN WORKDIR [NODE TS_CHECK [TS_TASKS_CHECK]]

Makes an ES256 key with `cryptography`, writes its JWKS, starts SERVER_BIN with
`--http 127.0.0.1:PORT --auth-issuer ISSUER --auth-jwks FILE`, and signs tokens with PyJWT (a
JWT library other than ours). Then:

- raw HTTP (httpx2): no token is 401 with a `WWW-Authenticate` pointing to the protected
  resource metadata, which is served and names the resource and the issuer; an expired token, a
  token for another audience and one signed by another key are 401 `invalid_token`;
- the Python `mcp` client in both eras with a bearer token: tools listed, `echo` runs,
  `write_file` fails as a result naming the missing scope, and succeeds with `files:write`;
- the Python `mcp` client's 2026-07-28 tasks (the extension of mcp_tasks_check.py) with two
  subjects: the owner reads its task, another subject's `tasks/get` and `tasks/cancel` are
  -32602 (unknown task), the owner cancels it;
- with NODE and TS_CHECK: the TypeScript SDK client (TS_CHECK, an ES module) with the same
  tokens; with TS_TASKS_CHECK, its 2025-11-25 tasks with two subjects (mcp_tasks_ts.mjs).

Prints one line per check and a closing verdict line; exits 1 on a failed check.
"""

import json
import os
import socket
import subprocess
import sys
import time

import anyio
import httpx2
import jwt
from cryptography.hazmat.primitives.asymmetric import ec
from jwt.algorithms import ECAlgorithm
from mcp import Client, MCPError
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

ISSUER = "https://auth.ci.test"


def check(ok: bool, what) -> None:
    """A failed check (not `assert`, which `python -O` would skip)."""
    if not ok:
        raise AssertionError(what)
EXPECTED = {"legacy": "2025-11-25", "auto": "2026-07-28"}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def jwks_of(key, kid: str) -> dict:
    jwk = ECAlgorithm.to_jwk(key.public_key(), as_dict=True)
    jwk.update({"kid": kid, "alg": "ES256", "use": "sig"})
    return {"keys": [jwk]}


def token(key, audience: str, scope: str, kid: str = "ci-1", **extra) -> str:
    now = int(time.time())
    claims = {"iss": ISSUER, "aud": audience, "sub": "ci-user", "scope": scope,
              "iat": now, "exp": now + 600, **extra}
    return jwt.encode(claims, key, algorithm="ES256", headers={"kid": kid})


def raw_checks(url: str, key, other_key) -> str:
    metadata_url = url.replace("/mcp", "/.well-known/oauth-protected-resource/mcp")
    init = {"jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                       "clientInfo": {"name": "ci", "version": "1"}}}
    head = {"Accept": "application/json, text/event-stream"}
    with httpx2.Client(timeout=20) as http:
        r = http.post(url, json=init, headers=head)
        check(r.status_code == 401, f"no token: {r.status_code} {r.text}")
        challenge = r.headers.get("www-authenticate", "")
        check(challenge == f'Bearer resource_metadata="{metadata_url}"', f"challenge: {challenge!r}")
        doc = http.get(metadata_url).json()
        check(doc["resource"] == url and doc["authorization_servers"] == [ISSUER], doc)
        now = int(time.time())
        bad = {
            "expired": token(key, url, "", iat=now - 7200, exp=now - 3600),
            "another audience": token(key, "https://elsewhere.test/mcp", ""),
            "another key": token(other_key, url, ""),
        }
        for what, t in bad.items():
            r = http.post(url, json=init, headers={**head, "Authorization": f"Bearer {t}"})
            challenge = r.headers.get("www-authenticate", "")
            check(r.status_code == 401 and 'error="invalid_token"' in challenge, f"{what}: {r.status_code} {challenge!r}")
    return "no token 401 + metadata; expired, other audience, other key 401 invalid_token"


async def client_checks(url: str, key, mode: str) -> str:
    def connect(scope: str):
        headers = {"Authorization": f"Bearer {token(key, url, scope)}"}
        transport = streamable_http_client(url, http_client=create_mcp_http_client(headers=headers))
        return Client(transport, mode=mode, read_timeout_seconds=20)

    async with connect("files:read") as c:
        check(c.protocol_version == EXPECTED[mode], f"{mode}: negotiated {c.protocol_version}")
        names = {t.name for t in (await c.list_tools()).tools}
        check({"echo", "write_file"} <= names, f"{mode}: {names}")
        r = await c.call_tool("echo", {"text": "hi"})
        check(not r.is_error and r.structured_content == {"text": "hi"}, f"{mode}: echo {r}")
        denied = await c.call_tool("write_file", {"path": f"{mode}.txt", "content": "x"})
        text = denied.content[0].text if denied.content else ""
        check(denied.is_error and 'needs the scope "files:write"' in text, f"{mode}: {denied}")
    async with connect("files:read files:write") as c:
        written = await c.call_tool("write_file", {"path": f"{mode}.txt", "content": "x"})
        check(not written.is_error, f"{mode}: write_file with files:write: {written}")
    return f"{mode}: protocol {EXPECTED[mode]}, echo ok, write_file denied without files:write, ok with it"


async def tasks_checks(url: str, key) -> str:
    from mcp_tasks_check import Ack, CancelTask, GetTask, TaskIdParams, Tasks, TaskState

    def connect(sub: str):
        bearer = token(key, url, "files:read files:write", sub=sub)
        headers = {"Authorization": f"Bearer {bearer}"}
        transport = streamable_http_client(url, http_client=create_mcp_http_client(headers=headers))
        return Client(transport, mode="auto", extensions=[Tasks()], read_timeout_seconds=20)

    async with connect("ci-user") as me, connect("ci-other") as other:
        check(me.protocol_version == "2026-07-28", f"negotiated {me.protocol_version}")
        raw = await me.session.call_tool("count_files", {"seconds": 30}, allow_claimed=True)
        check(getattr(raw, "result_type", None) == "task", f"not a task: {raw}")
        ids = TaskIdParams(task_id=raw.task_id)
        state = await me.session.send_request(GetTask(params=ids), TaskState)
        check(state.status == "working", f"the owner's get: {state}")
        for request, model in ((GetTask(params=ids), TaskState), (CancelTask(params=ids), Ack)):
            try:
                await other.session.send_request(request, model)
                raise AssertionError(f"another subject's {request.method} answered")
            except MCPError as e:
                check(e.code == -32602 and "unknown task" in e.message, f"{request.method}: {e}")
        await me.session.send_request(CancelTask(params=ids), Ack)
        state = await me.session.send_request(GetTask(params=ids), TaskState)
        check(state.status == "cancelled", f"after the owner's cancel: {state}")
    return "2026-07-28 tasks: the owner reads its task; another subject's get and cancel -32602; the owner's cancel ends it"


def main() -> int:
    if len(sys.argv) not in (3, 5, 6):
        sys.exit("usage: mcp_auth_check.py SERVER_BIN WORKDIR [NODE TS_CHECK [TS_TASKS_CHECK]]")
    server_bin, workdir = sys.argv[1], sys.argv[2]
    os.makedirs(workdir, exist_ok=True)
    key = ec.generate_private_key(ec.SECP256R1())
    other_key = ec.generate_private_key(ec.SECP256R1())
    jwks_file = os.path.join(workdir, "jwks.json")
    with open(jwks_file, "w") as f:
        json.dump(jwks_of(key, "ci-1"), f)
    addr = f"127.0.0.1:{free_port()}"
    root = os.path.join(workdir, "root")
    os.makedirs(root, exist_ok=True)
    with open(os.path.join(workdir, "server.err"), "w") as err:
        server = subprocess.Popen(
            [server_bin, "--root", root, "--http", addr, "--auth-issuer", ISSUER,
             "--auth-jwks", jwks_file, "--no-ask"],
            stdout=subprocess.PIPE, stderr=err, text=True)
    passed, failed = 0, 0
    try:
        line = server.stdout.readline().strip()
        url = f"http://{addr}/mcp"
        if line != f"listening on {url}":
            print(f"server did not start: first line {line!r}", flush=True)
            return 1
        checks = [("raw HTTP", lambda: raw_checks(url, key, other_key))]
        for mode in ("legacy", "auto"):
            checks.append((f"python {mode}", lambda m=mode: anyio.run(client_checks, url, key, m)))
        checks.append(("python tasks", lambda: anyio.run(tasks_checks, url, key)))
        if len(sys.argv) >= 5:
            node = sys.argv[3]

            def ts(script: str) -> str:
                env = {**os.environ, "MCP_URL": url,
                       "TOKEN_READ": token(key, url, "files:read"),
                       "TOKEN_WRITE": token(key, url, "files:read files:write"),
                       "TOKEN_OTHER": token(key, url, "files:read files:write", sub="ci-other")}
                out = subprocess.run([node, script], env=env, capture_output=True, text=True,
                                     timeout=90)
                check(out.returncode == 0, f"exit {out.returncode}: {out.stdout}{out.stderr}")
                return out.stdout.strip().splitlines()[-1]

            checks.append(("typescript", lambda: ts(sys.argv[4])))
            if len(sys.argv) == 6:
                checks.append(("typescript tasks", lambda: ts(sys.argv[5])))
        for name, step in checks:
            try:
                print(f"{name}: {step()}", flush=True)
                passed += 1
            except Exception as e:  # an assertion, a timeout or a transport failure
                print(f"{name}: FAILED: {type(e).__name__}: {e}", flush=True)
                failed += 1
    finally:
        server.terminate()
        server.wait(timeout=10)
    print(f"bearer-token clients vs mcp_server: {passed} passed, {failed} failed", flush=True)
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
