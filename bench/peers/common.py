"""Constants every part of the harness shares, and its log line."""

from __future__ import annotations

import os
import sys
from pathlib import Path


REPO = Path(__file__).resolve().parent.parent.parent
CONNECTIONS = 50
PORT_RANGE = (20000, 32000)
ALL_TOOLS = ["wrk", "ab", "hey", "vegeta", "bombardier", "oha", "pelt", "h2load", "oha-h3", "siege"]
# The close test's connections (a new TCP connection per request): ab's and
# siege's usual -c.
CLOSE_CONNECTIONS = [1, 2, 4, 10, 50]
# oha built with its `http3` feature (bench/peers.sh installs it here: the
# plain `oha` stays the HTTP/1.1 one).
OHA_H3 = Path.home() / ".cache/pelt/oha-h3/bin/oha"
# How long a run may overrun its duration before it is killed.
RUN_SLACK_S = 30.0
# A run is "noisy" when processes other than the tool and nginx used more
# than this share of one core during it.
NOISY_OTHER_CPU = 0.10
# nginx's worker (or the client) at or above this share of its core is the
# bottleneck.
SATURATED = 0.90
CLK_TCK = os.sysconf("SC_CLK_TCK")
# GNU time (Debian package `time`); without it the harness reads the tool's
# rusage from wait4, which gives the same figures.
HAVE_TIME = os.access("/usr/bin/time", os.X_OK)


def log(message: str) -> None:
    print(f"peers: {message}", file=sys.stderr, flush=True)
