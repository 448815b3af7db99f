"""Python `mcp` 2.3.0's MCPServer (FastMCP) with the echo tool of benches/mcp_http.rs, over
streamable HTTP (uvicorn), for the one-off comparison in BENCHMARKS.md. Prints `HOST:PORT`.

    target/mcp-venv/bin/python dsh-tools/benches/external/py_server.py PORT
"""

import sys

from pydantic import BaseModel

from mcp.server.mcpserver import MCPServer


class Echo(BaseModel):
    text: str
    count: int
    flag: bool


server = MCPServer("py-echo", version="1.0.0", log_level="WARNING")


@server.tool()
def echo(text: str, count: int, flag: bool) -> Echo:
    """Echo the arguments back."""
    return Echo(text=text, count=count, flag=flag)


if __name__ == "__main__":
    port = int(sys.argv[1])
    print(f"127.0.0.1:{port}", flush=True)
    server.run(transport="streamable-http", host="127.0.0.1", port=port)
