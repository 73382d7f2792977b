"""The private Caddy the h3 test loads: HTTP/2 and HTTP/3 on one port (TCP
and UDP) with a self-signed certificate, pinned to the server's CPU, no
access log, admin API off, everything in the run's temp dir.

Caddy (Debian's `caddy`, which scripts/test and bench/peers.sh install) is
the HTTP/3 server of the h3 test because nginx 1.22 (Debian's) has no
HTTP/3. It is a Go program: GOMAXPROCS=1 keeps it to the one core it is
pinned to, as nginx's one worker is."""

from __future__ import annotations

import json
import os
import random
import re
import signal
import subprocess
import time
from pathlib import Path
from typing import Optional

from .system import find_binary, port_accepts, port_free, proc_cpu_ticks

PORT_RANGE = (20000, 32000)


class Caddy:
    """Duck-typed as `Nginx` for `run_one`: port, worker, cpu_ticks."""

    def __init__(self, workdir: Path, cpu: Optional[int]):
        self.bin = find_binary("caddy")
        if self.bin is None:
            raise RuntimeError("caddy is not installed: run bench/peers.sh without --skip-install")
        self.cpu = cpu
        self.dir = workdir / "caddy"
        self.proc: Optional[subprocess.Popen] = None
        self.port = 0
        self.worker = 0
        self.version = ""

    def start(self) -> None:
        self.dir.mkdir(parents=True, exist_ok=True)
        out = subprocess.run([self.bin, "version"], capture_output=True, text=True)
        self.version = (out.stdout or out.stderr).strip().split()[0] if (out.stdout or out.stderr) else "?"
        cert, key = self.dir / "cert.pem", self.dir / "key.pem"
        subprocess.run(
            ["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
             "-nodes", "-days", "2", "-subj", "/CN=localhost",
             "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1",
             "-keyout", str(key), "-out", str(cert)],
            check=True, capture_output=True,
        )
        rng = random.Random()
        last = ""
        for _ in range(20):
            port = rng.randrange(*PORT_RANGE)
            if not port_free(port):
                continue
            error = self.try_start(port, cert, key)
            if error is None:
                return
            last = error
            if "address already in use" not in error:
                break
        raise RuntimeError(f"caddy did not start:\n{last}")

    def try_start(self, port: int, cert: Path, key: Path) -> Optional[str]:
        config = {
            "admin": {"disabled": True, "config": {"persist": False}},
            "storage": {"module": "file_system", "root": str(self.dir / "data")},
            "logging": {"logs": {"default": {"level": "ERROR"}}},
            "apps": {
                "http": {
                    "http_port": 0,
                    "https_port": port,
                    "servers": {"bench": {
                        "listen": [f"127.0.0.1:{port}"],
                        "protocols": ["h1", "h2", "h3"],
                        "routes": [{"handle": [{"handler": "static_response", "status_code": 200, "body": "ok"}]}],
                        "tls_connection_policies": [{}],
                        "automatic_https": {"disable": True},
                    }},
                },
                "tls": {"certificates": {"load_files": [{"certificate": str(cert), "key": str(key)}]}},
            },
        }
        path = self.dir / "caddy.json"
        path.write_text(json.dumps(config))
        pin = ["taskset", "-c", str(self.cpu)] if self.cpu is not None else []
        env = dict(os.environ, HOME=str(self.dir), XDG_DATA_HOME=str(self.dir / "data"),
                   XDG_CONFIG_HOME=str(self.dir / "config"), GOMAXPROCS="1")
        log = open(self.dir / "stderr.log", "w")
        self.proc = subprocess.Popen(
            pin + [self.bin, "run", "--config", str(path)],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=log, env=env, start_new_session=True,
        )
        log.close()
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                return self.logs()
            if port_accepts(port):
                # UDP comes up with TCP (one server); a moment for quic-go.
                time.sleep(0.3)
                self.port = port
                self.worker = self.proc.pid
                return None
            time.sleep(0.02)
        self.stop()
        return "caddy did not accept connections within 15 s\n" + self.logs()

    def logs(self) -> str:
        try:
            return (self.dir / "stderr.log").read_text()
        except OSError:
            return ""

    def url(self, path: str = "/") -> str:
        return f"https://127.0.0.1:{self.port}{path}"

    def cpu_ticks(self) -> int:
        return proc_cpu_ticks(self.worker)

    def freeze(self) -> None:
        os.kill(self.worker, signal.SIGSTOP)

    def thaw(self) -> None:
        os.kill(self.worker, signal.SIGCONT)

    def stop(self) -> None:
        if self.proc is None:
            return
        try:
            os.kill(self.proc.pid, signal.SIGKILL)
        except OSError:
            pass
        self.proc.wait()
        self.proc = None


class PeltServe:
    """`pelt serve --http3 -t 1`, pinned to the server's CPU: the h3 test's
    server for oha's http3 build, which gets no answer from Caddy 2.6.2
    (quic-go) at all. Duck-typed as `Nginx` for `run_one`."""

    def __init__(self, pelt: str, cpu: Optional[int]):
        self.bin = pelt
        self.cpu = cpu
        self.proc: Optional[subprocess.Popen] = None
        self.port = 0
        self.worker = 0
        self.version = "pelt serve --http3"

    def start(self) -> None:
        pin = ["taskset", "-c", str(self.cpu)] if self.cpu is not None else []
        self.proc = subprocess.Popen(
            pin + [self.bin, "serve", "--http3", "-p", "0", "-t", "1"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
            start_new_session=True,
        )
        assert self.proc.stderr is not None
        line = self.proc.stderr.readline()
        m = re.search(r"http://127\.0\.0\.1:(\d+)/", line)
        if not m:
            self.stop()
            raise RuntimeError(f"pelt serve --http3 did not say its port: {line!r}")
        self.port = int(m.group(1))
        self.worker = self.proc.pid

    def url(self, path: str = "/") -> str:
        return f"https://127.0.0.1:{self.port}{path}"

    def cpu_ticks(self) -> int:
        return proc_cpu_ticks(self.worker)

    def stop(self) -> None:
        if self.proc is None:
            return
        try:
            os.kill(self.proc.pid, signal.SIGKILL)
        except OSError:
            pass
        self.proc.wait()
        self.proc = None
