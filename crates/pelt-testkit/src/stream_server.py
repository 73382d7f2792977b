"""Streamed responses at known times, for pelt's stream tests (issue 38).

Two endpoints on uvicorn (PyPI), both pacing their events from the
moment the request arrived, by absolute deadlines (no drift), with the
pacing set per request in the query string:

- `GET /sse`: server-sent events by sse-starlette's EventSourceResponse;
  `GET /ndjson`: the same events as NDJSON lines (FastAPI's
  StreamingResponse, application/x-ndjson). Query: `first_ms` (delay of
  the first event), `gap_ms` (between events), `events` (how many),
  `stall_ms` and `stall_after` (one longer gap after that many events),
  `cut=1` (drop the connection after `events` events instead of ending),
  `ts=1` (each event's data carries `ts`, the server's Unix time in
  seconds as it sent it, and its id that time in milliseconds: for
  `--event-time`), `hold_from=K` (the K-th request to the endpoint and
  later ones, counted from 0, stay open and silent after their events
  until the client leaves: `--hold`'s subscriptions; earlier ones end).
- `POST /v1/chat/completions`: an OpenAI-compatible streaming endpoint
  (FastAPI): the body's `max_tokens` token chunks (`delta.content`), the
  first after `first_ms`, then every `gap_ms`; a final chunk with `usage`
  when the body asks (`stream_options.include_usage`), then
  `data: [DONE]`. Query: `first_ms`, `gap_ms`, `done=0` (no [DONE]).

Every response that ends (or is cut) is logged as a JSON line: path,
events sent, whether it ended, the request's arrival (server clock,
Unix seconds): the tests' witness. The first line on stdout is `port N`;
the server stops when stdin closes.
"""

import asyncio
import json
import socket
import sys
import threading
import time

import uvicorn
from fastapi import FastAPI, Request
from fastapi.responses import StreamingResponse
from sse_starlette.sse import EventSourceResponse

LOG = open(sys.argv[1], "a", buffering=1)
app = FastAPI()


def log(path, sent, ended, arrived):
    LOG.write(json.dumps({"path": path, "events": sent, "ended": ended, "t": arrived}) + "\n")


def pacing(q):
    first = float(q.get("first_ms", 0)) / 1000
    gap = float(q.get("gap_ms", 0)) / 1000
    stall = float(q.get("stall_ms", 0)) / 1000
    stall_after = int(q.get("stall_after", -1))

    def due(i):
        # The time of event i (from 0), from the request's arrival.
        t = first + i * gap
        if 0 <= stall_after < i:
            t += stall
        return t

    return due


async def until(start, t):
    delay = start + t - time.monotonic()
    if delay > 0:
        await asyncio.sleep(delay)


class Cut(Exception):
    """Raised to drop the connection mid-stream."""


REQUESTS = {}


async def paced(request, path, make):
    q = request.query_params
    n = int(q.get("events", 5))
    cut = q.get("cut") == "1"
    number = REQUESTS.get(path, 0)
    REQUESTS[path] = number + 1
    hold = "hold_from" in q and number >= int(q["hold_from"])
    due = pacing(q)
    start, arrived = time.monotonic(), time.time()
    sent = 0
    ended = False
    try:
        for i in range(n):
            await until(start, due(i))
            yield make(i)
            sent += 1
        if cut:
            # Give the last event a moment to leave, then fail the
            # response: uvicorn drops the connection without its end.
            await asyncio.sleep(0.05)
            raise Cut()
        if hold:
            # Held: silent until the client leaves (the task is cancelled).
            await asyncio.sleep(3600)
        ended = True
    finally:
        log(path, sent, ended, arrived)


def tick(i, stamped):
    if not stamped:
        return {"event": "tick", "id": str(i), "data": json.dumps({"i": i})}
    now = time.time()
    return {"event": "tick", "id": str(int(now * 1000)), "data": json.dumps({"i": i, "ts": now})}


@app.get("/sse")
async def sse(request: Request):
    stamped = request.query_params.get("ts") == "1"
    return EventSourceResponse(
        paced(request, "/sse", lambda i: tick(i, stamped)),
        ping=3600,
    )


@app.get("/ndjson")
async def ndjson(request: Request):
    return StreamingResponse(
        paced(request, "/ndjson", lambda i: json.dumps({"i": i}) + "\n"),
        media_type="application/x-ndjson",
    )


@app.post("/v1/chat/completions")
async def chat(request: Request):
    body = await request.json()
    q = request.query_params
    tokens = int(body.get("max_tokens", 16))
    usage = bool((body.get("stream_options") or {}).get("include_usage"))
    done = q.get("done") != "0"
    due = pacing(q)
    start, arrived = time.monotonic(), time.time()
    model = body.get("model", "test")

    def chunk(delta, finish=None, extra=None):
        c = {
            "id": "chatcmpl-test",
            "object": "chat.completion.chunk",
            "created": int(arrived),
            "model": model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        }
        if extra:
            c.update(extra)
        return "data: " + json.dumps(c) + "\n\n"

    async def gen():
        sent = 0
        try:
            # The role first, with no text: not a token.
            yield chunk({"role": "assistant", "content": ""})
            for i in range(tokens):
                await until(start, due(i))
                yield chunk({"content": f"tok{i} "})
                sent += 1
            yield chunk({}, finish="length")
            if usage:
                u = {"prompt_tokens": 7, "completion_tokens": tokens, "total_tokens": tokens + 7}
                yield "data: " + json.dumps({"id": "chatcmpl-test", "choices": [], "usage": u}) + "\n\n"
            if done:
                yield "data: [DONE]\n\n"
        finally:
            log("/v1/chat/completions", sent, done and sent == tokens, arrived)

    return StreamingResponse(gen(), media_type="text/event-stream")


def main():
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(1024)
    print(f"port {sock.getsockname()[1]}", flush=True)
    config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="off")
    server = uvicorn.Server(config)

    def watch_stdin():
        sys.stdin.read()
        server.should_exit = True

    threading.Thread(target=watch_stdin, daemon=True).start()
    asyncio.run(server.serve(sockets=[sock]))


if __name__ == "__main__":
    main()
