"""Idle long-poll Fetches leave nothing behind (issue 12, defect 16).

Each Fetch of an idle partition waits its MaxWaitMs and is answered empty.
The broker used to keep one entry per such wait on the partition until the
next append, so an idle topic with polling consumers grew without bound
(~170 B a wait). Here many connections each pipeline short long-polls
against an idle topic; once every wait is answered the broker's resident
memory (VmRSS) must be back near where it was after a warm-up of the same
traffic.

The broker under test is the ASan build: its quarantine keeps freed memory
out of reuse (up to 256 MiB), which would hide a leak behind churn, so this
broker runs with the quarantine off.
"""

import os
import sys
import threading
import time

import kafka_wire as w
from runnel_harness import Runnel, run_tests

TOPIC = "idle"
CONNECTIONS = 32
WINDOW = 50          # Fetches in flight per connection
MAX_WAIT_MS = 5      # each one waits, then is answered empty
WARMUP = 20_000
MEASURED = 120_000   # the unfixed broker grew by 20 MiB or more over these
GROWTH_BOUND = 8 << 20


def vm_rss(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS for pid %d" % pid)


def long_polls(port, total):
    """`total` idle long-polls spread over CONNECTIONS pipelining ones; each
    response must be an empty answer without error."""
    frame = w.fetch_v4(5, TOPIC, 0, 0, max_wait_ms=MAX_WAIT_MS, min_bytes=1)
    failures = []

    def one_connection(count):
        try:
            with w.Connection(port, timeout=60) as c:
                while count > 0:
                    n = min(WINDOW, count)
                    c.send(frame * n)
                    for _ in range(n):
                        (err, hw, records), = w.parse_fetch_v4(c.response(5)).values()
                        assert (err, hw, records) == (0, 0, b""), (err, hw, len(records))
                    count -= n
        except Exception as e:  # reported by the caller
            failures.append(e)

    share = total // CONNECTIONS
    threads = [threading.Thread(target=one_connection, args=(share,)) for _ in range(CONNECTIONS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(600)
    assert not any(t.is_alive() for t in threads), "long polls still unanswered after 600 s"
    assert not failures, failures[0]


def idle_long_polls_do_not_grow_memory(broker):
    with w.Connection(broker.port) as c:
        (_, err, msg), = w.parse_create_topics_v4(c.call(w.create_topics_v4(1, [(TOPIC, 1, 1)]), 1))
        assert err == 0, (err, msg)
    long_polls(broker.port, WARMUP)
    before = vm_rss(broker.proc.pid)
    start = time.monotonic()
    long_polls(broker.port, MEASURED)
    after = vm_rss(broker.proc.pid)
    print("  %d long polls in %.1f s; VmRSS %.1f -> %.1f MiB" % (
        MEASURED, time.monotonic() - start, before / 2**20, after / 2**20), flush=True)
    assert after - before < GROWTH_BOUND, "VmRSS grew by %.1f MiB over %d idle long polls" % (
        (after - before) / 2**20, MEASURED)


def main():
    os.environ["ASAN_OPTIONS"] = ":".join(filter(None, [os.environ.get("ASAN_OPTIONS"), "quarantine_size_mb=0"]))
    with Runnel() as broker:
        rc = run_tests([("idle long-poll Fetches leave nothing behind",
                         lambda: idle_long_polls_do_not_grow_memory(broker))], broker)
    sys.exit(rc)


if __name__ == "__main__":
    main()
