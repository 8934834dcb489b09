"""Drives a Windlass session over MCP streamable HTTP with the official
MCP Python SDK, one command per stdin line, one JSON answer per stdout line.

    http_client.py URL [--token TOKEN] [--cafile PEM] [--root DIR]... [--no-roots]

Commands (JSON objects, one per line):
    {"call": TOOL, "args": {...}}   -> {"text": ..., "error": bool}
    {"roots": [DIR, ...]}           -> {"ok": true}   (then roots/list_changed)
The first line printed is {"session": ID, "protocol": VERSION}.
"""

import argparse
import asyncio
import json
import pathlib
import ssl
import sys

import httpx2
import mcp.types as types
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client


def uri(directory: str) -> str:
    return pathlib.Path(directory).resolve().as_uri()


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("url")
    parser.add_argument("--token")
    parser.add_argument("--root", action="append", default=[])
    parser.add_argument("--no-roots", action="store_true")
    parser.add_argument("--cafile")
    options = parser.parse_args()
    roots = [uri(root) for root in options.root]

    async def list_roots(_context) -> types.ListRootsResult:
        return types.ListRootsResult(roots=[types.Root(uri=root) for root in roots])

    headers = {"Authorization": f"Bearer {options.token}"} if options.token else {}
    verify = ssl.create_default_context(cafile=options.cafile) if options.cafile else True
    http = httpx2.AsyncClient(
        headers=headers, verify=verify, timeout=httpx2.Timeout(120.0, read=300.0)
    )
    callback = None if options.no_roots else list_roots
    loop = asyncio.get_running_loop()
    async with http, streamable_http_client(options.url, http_client=http) as streams:
        read, write = streams[0], streams[1]
        async with ClientSession(read, write, list_roots_callback=callback) as session:
            initialized = await session.initialize()
            say({"protocol": initialized.protocol_version})
            while True:
                line = await loop.run_in_executor(None, sys.stdin.readline)
                if not line.strip():
                    break
                command = json.loads(line)
                if "roots" in command:
                    roots[:] = [uri(root) for root in command["roots"]]
                    await session.send_roots_list_changed()
                    say({"ok": True})
                else:
                    result = await session.call_tool(command["call"], command.get("args", {}))
                    text = "".join(part.text for part in result.content if part.type == "text")
                    say({"text": text, "error": bool(result.is_error)})


def say(answer: dict) -> None:
    print(json.dumps(answer), flush=True)


asyncio.run(main())
