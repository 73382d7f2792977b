"""bench/websocket.sh's Locust side (issue 40): each user holds one
WebSocket connection (websocket-client, which Locust's gevent makes
cooperative; locust-plugins' WebSocket users are built the same way) and
sends the message, waits for its echo, and reports the round trip, with
no wait between (a closed loop at full speed, as pelt's -c). The host is
BENCH_WS (ws://127.0.0.1:PORT/), the message BENCH_MESSAGE."""

import os
import time

import websocket
from locust import User, constant, task

URL = os.environ["BENCH_WS"]
MESSAGE = os.environ.get("BENCH_MESSAGE", "hello")


class Echo(User):
    wait_time = constant(0)

    def on_start(self):
        self.ws = websocket.create_connection(URL)

    def on_stop(self):
        self.ws.close()

    @task
    def echo(self):
        start = time.perf_counter()
        try:
            self.ws.send(MESSAGE)
            reply = self.ws.recv()
            exc = None if reply == MESSAGE else Exception("not the echo")
        except Exception as e:  # a failed exchange is counted, not raised
            exc = e
        self.environment.events.request.fire(
            request_type="WS",
            name="echo",
            response_time=(time.perf_counter() - start) * 1000,
            response_length=len(MESSAGE),
            exception=exc,
            context={},
        )
