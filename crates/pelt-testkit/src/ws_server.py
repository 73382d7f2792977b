"""A WebSocket echo server on Python's websockets (PyPI), for pelt's
WebSocket tests (issue 40): the witness that counts what it received.

Paths (the upgrade request's):
- `/echo`: answers every message with itself (text as text, binary as
  binary).
- `/close?after=N&code=C`: echoes N messages, then closes with code C
  (default 1011) instead of answering the next.
- `/silent`: reads messages and never answers.

Subprotocols offered are matched against `chat.v2` and `json`; the
server picks the first of those the client offered, or none.

Each connection that ends is logged as a JSON line: path, messages and
bytes received, the subprotocol chosen, the `Cookie` and `X-Test`
request headers, the close code the client sent (null without one).
The first line on stdout is `port N`; the server stops when stdin
closes.
"""

import asyncio
import json
import socket
import sys
import threading
from urllib.parse import parse_qs, urlsplit

from websockets.asyncio.server import serve
from websockets.exceptions import ConnectionClosed

LOG = open(sys.argv[1], "a", buffering=1)


async def handler(ws):
    url = urlsplit(ws.request.path)
    query = parse_qs(url.query)
    after = int(query.get("after", ["-1"])[0])
    code = int(query.get("code", ["1011"])[0])
    received = 0
    nbytes = 0
    try:
        async for message in ws:
            received += 1
            nbytes += len(message)
            if url.path == "/silent":
                continue
            if url.path == "/close" and received > after:
                await ws.close(code, "closing as asked")
                break
            await ws.send(message)
    except ConnectionClosed:
        pass
    finally:
        rcvd = ws.protocol.close_rcvd
        LOG.write(
            json.dumps(
                {
                    "path": url.path,
                    "received": received,
                    "bytes": nbytes,
                    "subprotocol": ws.subprotocol,
                    "cookie": ws.request.headers.get("Cookie"),
                    "x_test": ws.request.headers.get("X-Test"),
                    "close_code": rcvd.code if rcvd is not None else None,
                }
            )
            + "\n"
        )


def select_subprotocol(connection, offered):
    # The first of ours the client offered, or none (websockets' default
    # refuses a client that offers none).
    for p in offered:
        if p in ("chat.v2", "json"):
            return p
    return None


async def main():
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(1024)
    print(f"port {sock.getsockname()[1]}", flush=True)
    stop = asyncio.get_running_loop().create_future()
    loop = asyncio.get_running_loop()

    def watch_stdin():
        sys.stdin.read()
        loop.call_soon_threadsafe(stop.set_result, None)

    threading.Thread(target=watch_stdin, daemon=True).start()
    async with serve(
        handler,
        sock=sock,
        select_subprotocol=select_subprotocol,
        compression=None,
        max_size=16 * 1024 * 1024,
        ping_interval=None,
    ):
        await stop


asyncio.run(main())
