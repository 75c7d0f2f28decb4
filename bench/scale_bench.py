#!/usr/bin/python3
"""10,000 partitions and 10,000 connections on one broker, Runnel beside
Apache Kafka on the same machine in the same run (issue 18).

partitions   compat-tests/partitions_scale_test.py's steps on each broker:
             10 topics of 1,000 partitions created, Metadata until every
             partition is led, one record produced to each (acks=all) and
             read back by one consumer assigned all 10,000, a graceful
             restart, everything read again, one topic deleted. Figures:
             the time of each step, and the broker's descriptors, memory
             maps and resident memory while serving, after the restart and
             after the deletion.
connections  a fresh broker with one topic; --connections connections each
             send ApiVersions and Metadata and are answered, then stay
             open; --active of them then send Produce (acks=1) and Fetch
             in turn for --seconds while the rest stay idle; at the end
             every connection is asked ApiVersions once more and must
             answer. Figures: resident memory before, with every
             connection open, and after the active phase; requests
             answered a second on the active connections.

Each figure is reported beside Kafka's and as a ratio to it. Both run with
the `ulimit -n` of this shell (20,000 here), which is why the two loads are
separate: Kafka keeps a descriptor open per segment as Runnel does, so
10,000 partitions and 10,000 connections together need more than that.

usage: bench/scale_bench.py [--runnel build/release/runnel] [--only partitions|connections]
                            [--connections 10000] [--active 500] [--seconds 10] [--out FILE]
"""
import argparse
import datetime
import json
import os
import selectors
import socket
import struct
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(REPO, "compat-tests"))
import kafka_wire as w  # noqa: E402
import partitions_scale_test as scale  # noqa: E402
from kafka_harness import Kafka  # noqa: E402
from runnel_harness import Runnel  # noqa: E402

TOPIC = "conns"


def partitions_load(broker, pid_of):
    names = scale.topic_names(10)
    # Kafka took more than its harness's 60 s to stop with 10,000 partitions.
    broker.stop_timeout = 600.0

    def restart():
        t0 = time.monotonic()
        broker.stop()
        stopped = time.monotonic()
        broker.start()
        print("  stopped in %.1f s, started in %.1f s" % (stopped - t0, time.monotonic() - stopped), flush=True)
        return time.monotonic() - t0
    return scale.run(broker, pid_of, names, 1000, restart, log=lambda line: print(line, flush=True))


def ask_all(socks, make, what, timeout=120.0):
    """Sends make(i) on every socket at once and reads one answer from each
    (selectors, bounded); raises if any is not answered."""
    for i, s in enumerate(socks):
        s.sendall(make(i))
    sel = selectors.DefaultSelector()
    pending = {}
    for i, s in enumerate(socks):
        s.setblocking(False)
        sel.register(s, selectors.EVENT_READ, i)
        pending[i] = b""
    deadline = time.monotonic() + timeout
    done = 0
    while done < len(socks):
        if time.monotonic() > deadline:
            raise AssertionError("%s: %d of %d connections answered in %.0f s" % (what, done, len(socks), timeout))
        for key, _ in sel.select(1.0):
            i = key.data
            chunk = key.fileobj.recv(1 << 16)
            if not chunk:
                raise AssertionError("%s: connection %d closed" % (what, i))
            pending[i] += chunk
            buf = pending[i]
            if len(buf) >= 4 and len(buf) >= 4 + struct.unpack(">i", buf[:4])[0]:
                sel.unregister(key.fileobj)
                done += 1
    sel.close()
    for s in socks:
        s.setblocking(True)


def connections_load(broker, pid, n, active, seconds):
    with w.Connection(broker.port, timeout=60) as c:
        (_, err, msg), = w.parse_create_topics_v4(c.call(w.create_topics_v4(1, [(TOPIC, 1, 1)]), 1))
        assert err == 0, (err, msg)
    scale.metadata_all_led(broker.port, [TOPIC], 1)
    figures = {"connections": n, "active": active, "before": scale.proc_stats(pid)}
    socks = []
    t0 = time.monotonic()
    for start in range(0, n, 500):
        batch = [socket.create_connection(("127.0.0.1", broker.port), timeout=60) for _ in range(min(500, n - start))]
        ask_all(batch, lambda i: w.api_versions_v0(i), "ApiVersions")
        ask_all(batch, lambda i: w.metadata_v1(i, [TOPIC]), "Metadata")
        socks += batch
    figures["open_s"] = round(time.monotonic() - t0, 2)
    time.sleep(2.0)
    figures["all_open"] = scale.proc_stats(pid)
    print("  %d connections open: %s" % (n, figures["all_open"]), flush=True)

    # The active ones: one request at a time each, Produce and Fetch in turn.
    busy = socks[:active]
    record = w.record_batch([(None, b"x" * 100, ())], int(time.time() * 1000))
    answered = 0
    t0 = time.monotonic()
    corr = 1000
    while time.monotonic() - t0 < seconds:
        corr += 1
        if corr % 2:
            ask_all(busy, lambda i: w.produce_v8(corr, 1, {TOPIC: [(0, record)]}), "Produce")
        else:
            ask_all(busy, lambda i: w.fetch_v4(corr, TOPIC, 0, 0, max_wait_ms=0), "Fetch")
        answered += len(busy)
    elapsed = time.monotonic() - t0
    figures["active_requests_per_s"] = round(answered / elapsed, 1)
    figures["after_active"] = scale.proc_stats(pid)
    ask_all(socks, lambda i: w.api_versions_v0(i), "ApiVersions at the end")
    figures["all_answered_at_end"] = True
    for s in socks:
        s.close()
    print("  after the active phase: %s" % figures, flush=True)
    return figures


def ratios(runnel, kafka, keys):
    out = {}
    for path in keys:
        a, b = runnel, kafka
        for k in path.split("."):
            a, b = a[k], b[k]
        out[path] = round(a / b, 3) if b else None
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runnel", default=os.path.join(REPO, "build", "release", "runnel"))
    ap.add_argument("--only", choices=("partitions", "connections"))
    ap.add_argument("--connections", type=int, default=10000)
    ap.add_argument("--active", type=int, default=500)
    ap.add_argument("--seconds", type=float, default=10.0)
    ap.add_argument("--out")
    args = ap.parse_args()
    commit = subprocess.run(["git", "-C", REPO, "rev-parse", "--short", "HEAD"], stdout=subprocess.PIPE,
                            text=True).stdout.strip()
    result = {"date": datetime.date.today().isoformat(), "commit": commit, "nproc": os.cpu_count(),
              "ulimit_n": __import__("resource").getrlimit(__import__("resource").RLIMIT_NOFILE)[0]}
    loads = [args.only] if args.only else ["partitions", "connections"]
    for load in loads:
        result[load] = {}
        for name in ("runnel", "kafka"):
            print("%s on %s" % (load, name), flush=True)
            broker = (Runnel(args.runnel, ready_timeout=120) if name == "runnel"
                      else Kafka())
            with broker:
                if load == "partitions":
                    result[load][name] = partitions_load(broker, lambda: broker.proc.pid)
                else:
                    result[load][name] = connections_load(broker, broker.proc.pid, args.connections, args.active,
                                                          args.seconds)
        keys = (["create_s", "metadata_s", "produce_s", "consume_s", "restart_led_s", "serving.rss_mib",
                 "serving.fds", "restarted_serving.rss_mib", "delete_topic_s"] if load == "partitions" else
                ["all_open.rss_mib", "after_active.rss_mib", "active_requests_per_s"])
        result[load]["runnel_over_kafka"] = ratios(result[load]["runnel"], result[load]["kafka"], keys)
        print(json.dumps(result[load]["runnel_over_kafka"], sort_keys=True), flush=True)
    text = json.dumps(result, indent=1, sort_keys=True)
    print(text)
    if args.out:
        os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
        with open(args.out, "w") as f:
            f.write(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
