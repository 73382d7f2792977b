"""Measure pelt against peer HTTP load generators; run through bench/peers.sh.

Three tests, all against a private nginx (one worker, pinned to one CPU) on
127.0.0.1, with every tool pinned to the other CPU, 1 thread, 50 keep-alive
connections:

- max load: as many requests as the tool can send in D seconds. The fair
  client figure is CPU microseconds per request (the tool's user+sys time
  over the requests it completed), since requests/s is often bound by nginx.
- rate: a fixed request rate for D seconds with the tools that have a rate
  mode: does the tool hold the rate, and at what CPU cost per request.
- stall: 1,000 req/s while the harness freezes nginx's worker (SIGSTOP) for
  1 s: does the tool's p99 show the stall (the truth is computed from the
  schedule), or does it hide it (coordinated omission).

Each round runs every tool once per test in a shuffled (seeded) order; the
report gives medians across rounds, min-max ranges and ratios to wrk. Runs
during which other processes used the CPU are flagged and left out of the
medians when clean runs remain.

Standard library only. Load goes to 127.0.0.1 only; every run is bounded in
time (killed at D + 30 s).
"""
