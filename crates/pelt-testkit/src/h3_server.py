"""An HTTP/3 server on aioquic, for pelt's tests (crates/pelt/tests/http3.rs).

aioquic is an implementation independent of pelt's (quinn and h3), so a
test against it checks pelt against HTTP/3 as someone else reads it.

Listens on UDP 127.0.0.1 at a port the system picks, and prints it as the
first line of standard output (`port N`). Answers every request `200`
with the body `ok` and a newline, or N bytes for `/bytes/N`, and logs it
as one line `METHOD PATH STATUS h3` in the access log, written and flushed
before the response is sent: once pelt has its last response, the log is
complete. Exits when its standard input closes, so a test that dies
leaves no server behind.
"""

import argparse
import asyncio
import os
import sys
import threading

from aioquic.asyncio import QuicConnectionProtocol, serve
from aioquic.h3.connection import H3_ALPN, H3Connection
from aioquic.h3.events import DataReceived, HeadersReceived
from aioquic.quic.configuration import QuicConfiguration
from aioquic.quic.events import ProtocolNegotiated

LOG = None


class Http3(QuicConnectionProtocol):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._h3 = None
        self._heads = {}

    def quic_event_received(self, event):
        if isinstance(event, ProtocolNegotiated) and event.alpn_protocol in H3_ALPN:
            self._h3 = H3Connection(self._quic)
        if self._h3 is None:
            return
        for e in self._h3.handle_event(event):
            if isinstance(e, HeadersReceived):
                self._heads[e.stream_id] = dict(e.headers)
                if e.stream_ended:
                    self._respond(e.stream_id)
            elif isinstance(e, DataReceived) and e.stream_ended:
                self._respond(e.stream_id)

    def _respond(self, stream_id):
        head = self._heads.pop(stream_id, {})
        method = head.get(b":method", b"?").decode()
        path = head.get(b":path", b"?").decode()
        body = b"ok\n"
        if path.startswith("/bytes/"):
            body = b"x" * int(path[len("/bytes/"):])
        LOG.write(f"{method} {path} 200 h3\n")
        LOG.flush()
        self._h3.send_headers(
            stream_id,
            [
                (b":status", b"200"),
                (b"server", b"aioquic-test"),
                (b"content-length", str(len(body)).encode()),
            ],
        )
        self._h3.send_data(stream_id, body, end_stream=True)


def exit_when_stdin_closes():
    sys.stdin.buffer.read()
    os._exit(0)


async def main():
    global LOG
    p = argparse.ArgumentParser()
    p.add_argument("--cert", required=True)
    p.add_argument("--key", required=True)
    p.add_argument("--log", required=True)
    args = p.parse_args()
    config = QuicConfiguration(is_client=False, alpn_protocols=H3_ALPN)
    config.load_cert_chain(args.cert, args.key)
    LOG = open(args.log, "a")
    server = await serve("127.0.0.1", 0, configuration=config, create_protocol=Http3)
    # aioquic keeps its socket's transport private; it is the one place
    # that knows the port the system picked.
    port = server._transport.get_extra_info("sockname")[1]
    print(f"port {port}", flush=True)
    threading.Thread(target=exit_when_stdin_closes, daemon=True).start()
    await asyncio.Future()


asyncio.run(main())
