"""The official MCP Python SDK against `python -m recuris.mcp`, over stdio and over HTTP.

Run by examples/mcp/run (which installs requirements.txt in a fresh virtual environment):
    python examples/mcp/sdk_client.py DATABASE
For each transport it initializes, lists the tools, calls remember then search_memory, reads
the recent-memories resource and a memory's history, and forgets the memory; it prints one
line per check and exits 1 at the first that fails.
"""

import asyncio
import json
import re
import subprocess
import sys
from contextlib import asynccontextmanager

from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client

TOOLS = {"search_memory", "remember", "forget"}


def check(what: str, holds: bool, shown: object = "") -> None:
    print(f"{'ok ' if holds else 'FAIL'} {what}" + (f": {shown}" if not holds else ""))
    if not holds:
        raise SystemExit(1)


def answer(result) -> dict:
    return json.loads(result.content[0].text)


async def exercise(session: ClientSession, transport: str, user: str) -> None:
    """Run every check on one connected session."""
    started = await session.initialize()
    check(
        f"{transport}: initialize negotiates {started.protocol_version}",
        started.protocol_version in ("2025-06-18", "2025-11-25"),
    )
    await session.send_ping()
    listed = await session.list_tools()
    check(
        f"{transport}: tools/list names {sorted(TOOLS)}",
        {t.name for t in listed.tools} == TOOLS,
        listed,
    )
    fact = f"the {transport} deploy region of {user} is eu-west-3"
    stored = answer(await session.call_tool("remember", {"content": fact, "importance": 0.9}))
    check(f"{transport}: remember stores {stored.get('id')}", stored.get("stored") is True, stored)
    found = answer(
        await session.call_tool("search_memory", {"query": f"{transport} deploy region"})
    )
    contents = [result["content"] for result in found["results"]]
    check(f"{transport}: search_memory recalls it first", contents[:1] == [fact], found)
    refused = await session.call_tool("remember", {"content": fact, "user_id": "bob"})
    check(f"{transport}: an argument naming a user is a tool error", refused.is_error, refused)
    resources = await session.list_resources()
    uris = [str(resource.uri) for resource in resources.resources]
    check(
        f"{transport}: resources/list starts with memory://recent",
        uris[:1] == ["memory://recent"],
        uris,
    )
    recent = json.loads((await session.read_resource("memory://recent")).contents[0].text)
    check(
        f"{transport}: memory://recent holds it", recent["memories"][0]["content"] == fact, recent
    )
    uri = f"memory://items/{stored['id']}/history"
    history = json.loads((await session.read_resource(uri)).contents[0].text)
    operations = [entry["operation"] for entry in history["history"]]
    check(f"{transport}: its history shows the write", operations[:1] == ["write"], history)
    gone = answer(await session.call_tool("forget", {"id": stored["id"]}))
    check(f"{transport}: forget erases it", gone.get("forgotten") is True, gone)
    again = answer(
        await session.call_tool("search_memory", {"query": f"{transport} deploy region"})
    )
    check(f"{transport}: recall no longer finds it", fact not in json.dumps(again), again)


@asynccontextmanager
async def http_server(database: str, user: str):
    """Start the server on an ephemeral loopback port; yield its URL; stop it."""
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "recuris.mcp",
            "--db",
            database,
            "--user",
            user,
            "--http",
            "127.0.0.1:0",
        ],
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        line = server.stderr.readline()
        found = re.search(r"http://\S+/mcp", line)
        check("http: the server says where it listens", found is not None, line)
        yield found.group(0)
    finally:
        server.terminate()
        check("http: the server ends with status 0 on SIGTERM", server.wait(10) == 0)


async def main(database: str) -> None:
    parameters = StdioServerParameters(
        command=sys.executable, args=["-m", "recuris.mcp", "--db", database, "--user", "ana"]
    )
    async with stdio_client(parameters) as (read, write):
        async with ClientSession(read, write) as session:
            await exercise(session, "stdio", "ana")
    async with http_server(database, "bob") as url:
        async with streamable_http_client(url) as (read, write):
            async with ClientSession(read, write) as session:
                await exercise(session, "http", "bob")


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1]))
