"""A small web app for pelt's scenario tests (Flask, Debian's python3-flask),
served by gunicorn (Debian's) when it is installed, else by Werkzeug.

Users u0..u{N-1} (password "pw-<name>") log in through a form with a CSRF
token; the session is a random `sid` cookie kept on the server. A JSON API
lists the ids of the items the user owns; a page shows an item (404 unless
the user owns it); a form POST adds a note to it (CSRF checked again).

Every request is logged as one JSON line: the time, the session's user (or
null), the `X-VU` header the scenario sends, method, path, status, and the
CSRF token the request carried (if any). The first line on stdout is
`port N`; the server stops when stdin closes.
"""

import json
import os
import secrets
import sys
import threading
import time

from flask import Flask, Response, g, jsonify, make_response, redirect, request
from werkzeug.serving import make_server

USERS = {f"u{i}": f"pw-u{i}" for i in range(200)}
ITEMS = {f"u{i}": [i * 1000 + k for k in (1, 2, 3)] for i in range(200)}
SESSIONS = {}  # sid -> {"user": name or None, "csrf": token}
LOCK = threading.Lock()
LOG = None

app = Flask(__name__)


def session():
    sid = request.cookies.get("sid")
    with LOCK:
        s = SESSIONS.get(sid) if sid else None
    return sid, s


@app.before_request
def start():
    g.csrf_sent = request.form.get("csrf") if request.method == "POST" else None
    # `?delay_ms=N` on any page: a slower app, for comparisons that must
    # see a known change.
    delay = request.args.get("delay_ms")
    if delay:
        time.sleep(int(delay) / 1000)


@app.after_request
def log(resp):
    sid, s = session()
    entry = {
        "t": time.time(),
        "user": s["user"] if s else None,
        "sid": sid,
        "vu": request.headers.get("X-VU"),
        "method": request.method,
        "path": request.full_path.rstrip("?"),
        "status": resp.status_code,
        "csrf": g.get("csrf_sent"),
        "login_user": request.form.get("user") if request.path == "/login" and request.method == "POST" else None,
        # The CSRF token this response handed out, and the session it
        # belongs to (set now for a first visit).
        "issued": g.get("issued"),
        "issued_sid": g.get("issued_sid"),
    }
    with LOCK:
        LOG.write(json.dumps(entry) + "\n")
        LOG.flush()
    return resp


@app.get("/login")
def login_page():
    sid, s = session()
    token = secrets.token_urlsafe(16) + "+/="
    resp = make_response(
        '<html><form method="post" action="/login">'
        f'<input type="hidden" name="csrf" value="{token}">'
        '<input name="user"><input name="password" type="password"></form></html>'
    )
    if not s:
        sid = secrets.token_hex(16)
        resp.set_cookie("sid", sid, httponly=True)
    with LOCK:
        prev = SESSIONS.get(sid, {})
        SESSIONS[sid] = {"user": prev.get("user"), "csrf": token}
    g.issued, g.issued_sid = token, sid
    return resp


@app.post("/login")
def login():
    sid, s = session()
    if not s or request.form.get("csrf") != s["csrf"]:
        return Response("bad or missing CSRF token", status=400)
    user = request.form.get("user")
    if USERS.get(user) != request.form.get("password"):
        return Response("wrong user or password", status=403)
    with LOCK:
        s["user"] = user
    return redirect("/home", code=302)


def logged_in():
    _, s = session()
    return s["user"] if s and s["user"] else None


@app.get("/api/items")
def items():
    user = logged_in()
    if not user:
        return jsonify({"error": "log in first"}), 401
    return jsonify(
        {"user": user, "ok": True, "count": len(ITEMS[user]), "items": [{"id": i} for i in ITEMS[user]]}
    )


@app.get("/item/<int:item>")
def item(item):
    user = logged_in()
    if not user:
        return Response("log in first", status=401)
    if item not in ITEMS[user]:
        return Response("no such item", status=404)
    sid, s = session()
    g.issued, g.issued_sid = s["csrf"], sid
    return Response(
        f'<h1>Item {item}</h1><form method="post" action="/item/{item}/note">'
        f'<input type="hidden" name="csrf" value="{s["csrf"]}"><textarea name="text"></textarea></form>'
    )


@app.post("/item/<int:item>/note")
def note(item):
    user = logged_in()
    _, s = session()
    if not user:
        return Response("log in first", status=401)
    if request.form.get("csrf") != s["csrf"]:
        return Response("bad or missing CSRF token", status=400)
    if item not in ITEMS[user]:
        return Response("no such item", status=404)
    return jsonify({"ok": True, "item": item, "user": user})


@app.get("/home")
def home():
    user = logged_in()
    return Response(f"hello {user}" if user else "log in first", status=200 if user else 401)


def serve_gunicorn():
    """Behind gunicorn (Debian's, one gthread worker: the sessions live in
    its memory), on a listener bound here to port 0 and handed over, so
    the port is never released and bound again. Stops when stdin closes;
    the worker also dies with the master (a test that kills it)."""
    import ctypes
    import signal
    import socket

    from gunicorn.app.base import BaseApplication

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(1024)
    sock.set_inheritable(True)

    def die_with_parent(server, worker):
        # PR_SET_PDEATHSIG: a SIGKILLed master takes its worker along.
        ctypes.CDLL(None).prctl(1, signal.SIGTERM)

    class Server(BaseApplication):
        def load_config(self):
            for k, v in {
                "bind": [f"fd://{sock.fileno()}"],
                "workers": 1,
                "worker_class": "gthread",
                "threads": 32,
                "keepalive": 75,
                "timeout": 120,
                "post_fork": die_with_parent,
            }.items():
                self.cfg.set(k, v)

        def load(self):
            return app

    print(f"port {sock.getsockname()[1]}", flush=True)

    def stop_on_eof():
        sys.stdin.read()
        os.kill(os.getpid(), signal.SIGTERM)

    threading.Thread(target=stop_on_eof, daemon=True).start()
    Server().run()


def main():
    global LOG
    log_path = sys.argv[1]
    LOG = open(log_path, "a", encoding="utf-8")
    try:
        import gunicorn  # noqa: F401
    except ImportError:
        gunicorn = None
    if gunicorn is not None:
        serve_gunicorn()
        return
    # No gunicorn: Werkzeug's threaded server.
    server = make_server("127.0.0.1", 0, app, threaded=True)
    print(f"port {server.server_port}", flush=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    # Stop when the test closes stdin (or dies).
    sys.stdin.read()
    server.shutdown()


if __name__ == "__main__":
    main()
