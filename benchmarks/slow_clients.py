"""Time an answer of `python -m recuris.mcp --http` while connections drip a byte at a time.

Standard library only, loopback only. The server runs from a checkout (this one by default)
with its defaults, on a fresh database. The attack opens `--connections` connections, each
sending the start of a request and then a byte every `--interval` seconds, and opens a new
one for each the server closes, so that as many stay open as the server allows. Meanwhile
a client sends `initialize` `--clients` times, each on a new connection with a 10 s
timeout. Printed: the answer times (median, highest) or the failures, and how many of the
attack's connections the server closed. TP8 and TP9 (docs/mcp/transports.md):

    python benchmarks/slow_clients.py
    python benchmarks/slow_clients.py --checkout /tmp/before
"""

import argparse
import json
import re
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "slow-clients", "version": "1"},
    },
}


class Attack:
    """Connections that send a request a byte at a time, replaced when the server closes one."""

    def __init__(self, port: int, connections: int, interval: float) -> None:
        self.port = port
        self.interval = interval
        self.closed = 0
        self.stopped = threading.Event()
        self.open = [self.connect() for _ in range(connections)]
        self.thread = threading.Thread(target=self.drip, daemon=True)
        self.thread.start()

    def connect(self) -> socket.socket:
        client = socket.create_connection(("127.0.0.1", self.port), timeout=10)
        client.sendall(b"P")
        return client

    def drip(self) -> None:
        while not self.stopped.wait(self.interval):
            for index, client in enumerate(self.open):
                try:
                    client.sendall(b"O")
                    continue
                except OSError:
                    pass
                # Closed by the server: open another, as an attacker would.
                self.closed += 1
                client.close()
                self.open[index] = self.connect()

    def stop(self) -> None:
        self.stopped.set()
        self.thread.join()
        for client in self.open:
            client.close()


def answer_time(url: str) -> float | None:
    """Send one initialize; return the seconds to its answer, or None if it failed."""
    sent = urllib.request.Request(url, json.dumps(INITIALIZE).encode())
    started = time.monotonic()
    try:
        with urllib.request.urlopen(sent, timeout=10) as response:
            response.read()
    except OSError as error:
        print(f"  failed after {time.monotonic() - started:.2f} s: {error!r}")
        return None
    return time.monotonic() - started


def main() -> int:
    """Run the attack and the client; print what the client saw."""
    grammar = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    grammar.add_argument("--checkout", type=Path, default=Path(__file__).resolve().parents[1])
    grammar.add_argument("--connections", type=int, default=300)
    grammar.add_argument("--interval", type=float, default=0.5)
    grammar.add_argument("--clients", type=int, default=20)
    arguments = grammar.parse_args()
    with tempfile.TemporaryDirectory() as place:
        command = [sys.executable, "-m", "recuris.mcp", "--db", str(Path(place) / "m.db")]
        command += ["--user", "ana", "--http", "127.0.0.1:0"]
        server = subprocess.Popen(
            command, cwd=arguments.checkout, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL
        )
        try:
            url = re.search(rb"http://\S+/mcp", server.stderr.readline()).group(0).decode()
            port = int(url.rsplit(":", 1)[1].split("/")[0])
            # Read the rest of standard error, so that a full pipe never stops the server.
            threading.Thread(target=server.stderr.read, daemon=True).start()
            attack = Attack(port, arguments.connections, arguments.interval)
            times = []
            for _ in range(arguments.clients):
                times.append(answer_time(url))
                time.sleep(arguments.interval / 2)
            attack.stop()
        finally:
            server.terminate()
            server.wait(timeout=30)
    answered = [seconds for seconds in times if seconds is not None]
    print(f"checkout {arguments.checkout}: {arguments.connections} connections dripping")
    print(f"  answered {len(answered)} of {len(times)}", end="")
    if answered:
        median = statistics.median(answered)
        print(f", median {median * 1000:.1f} ms, highest {max(answered) * 1000:.1f} ms", end="")
    print(f"; attack connections the server closed: {attack.closed}")
    return 0 if len(answered) == len(times) else 1


if __name__ == "__main__":
    sys.exit(main())
