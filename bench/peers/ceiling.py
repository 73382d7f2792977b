"""The ceiling test: the highest rate each tool holds on one core.

A rate is *held* when the run completes at least 99.5 % of the requests
it offered, none fail, and the send lag's p99 stays under 1 ms: the lag
on the wire (wirelag: tcpdump times every request's departure, for every
tool alike) when captured, else pelt's own figure (the only tool that
reports how late it sent; the others are then held to completions alone). The search doubles from a
start rate until a rate is not held (twice: one retry, for every tool),
then bisects the bracket to within 5 %; every step is a short run of its
own, recorded like any other.
"""

from __future__ import annotations

from typing import Callable, Optional

HELD_SHARE = 0.995
MAX_SEND_LAG_S = 1e-3
START = 5000.0
LIMIT = 400_000.0
TOLERANCE = 0.05


def why_not(rec: dict, offered: float) -> Optional[str]:
    """Why one run did not hold `offered` req/s, or None if it did (see the
    module's rules)."""
    if "error" in rec:
        return "the run failed"
    if rec.get("errors", 0):
        return f"{rec['errors']} errors"
    share = rec.get("achieved_rate", 0.0) / offered
    if share < HELD_SHARE:
        return f"completed {share:.1%} of the offered requests"
    if "wire_error" in rec:
        return f"no wire figures ({rec['wire_error']})"
    wire = rec.get("wire_lag_p99_s")
    lag = wire if wire is not None else rec.get("send_lag_p99_s")
    if lag is not None and lag >= MAX_SEND_LAG_S:
        return f"{'wire ' if wire is not None else ''}send lag p99 {lag * 1e3:.2f} ms"
    return None


def held(rec: dict, offered: float) -> bool:
    """Whether one run held `offered` req/s."""
    return why_not(rec, offered) is None


def search(run: Callable[[float], dict], tolerance: float = TOLERANCE) -> tuple[Optional[float], Optional[float]]:
    """The highest rate held and the lowest not held, by doubling then
    bisecting to `tolerance`; `run(rate)` makes one run and returns its
    record. A rate not held is tried once more before it counts as not
    held, for every tool alike: this VM pauses for a millisecond or two
    now and then (kdamond, the hypervisor), and one such pause in a short
    step would otherwise end a tool's search."""

    def holds(rate: float) -> bool:
        return held(run(rate), rate) or held(run(rate), rate)

    best: Optional[float] = None
    fail: Optional[float] = None
    rate = START
    while rate <= LIMIT:
        if holds(rate):
            best = rate
            rate *= 2
        else:
            fail = rate
            break
    if best is None or fail is None:
        return best, fail
    while (fail - best) / best > tolerance:
        mid = round((best + fail) / 2, -2)
        if mid <= best or mid >= fail:
            break
        if holds(mid):
            best = mid
        else:
            fail = mid
    return best, fail
