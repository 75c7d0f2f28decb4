#!/usr/bin/python3
"""A well-behaved producer beside hostile and careless clients on the same
broker (issue 18): its p99 produce latency under each load, as a ratio to
its p99 with the broker to itself, measured in the same run, on Runnel and
then on Apache Kafka (its shipped single-node config, the same overrides).

The producer: one connection, one acks=1 Produce (v8, one batch of 10
records of 100 bytes) at a time to a one-partition topic, for --seconds.
Each load runs in processes of its own (no GIL shared with the producer):

  slowloris      1,000 connections that each send a size prefix and two
                 bytes of a 1,000-byte frame, then nothing
  never_reading  10 connections that each pipeline 50 Fetches of up to
                 10 MiB of a 64 MiB partition and never read a response
  frame_flood    8 clients that send frames of socket.request.max.bytes
                 (100 MiB) of an unknown API, reconnecting after each is refused,
                 with queued.max.request.bytes=256 MiB
  churn          connect, ApiVersions, close, 1,000 times a second

The broker's resident memory (VmRSS) is sampled at the end of each load.
A Produce left unanswered for 30 s ends that load's measurement; its row
says so (stalled_30s) and counts the 30 s as a latency.
The issue's bar: the producer's p99 within 2x of its unloaded p99.

usage: bench/neighbour_bench.py [--runnel build/release/runnel] [--seconds 10]
                                [--only LOAD...] [--brokers runnel kafka] [--out FILE]
"""
import argparse
import datetime
import json
import multiprocessing
import os
import socket
import statistics
import struct
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(REPO, "compat-tests"))
import kafka_wire as w  # noqa: E402
from kafka_harness import Kafka  # noqa: E402
from runnel_harness import Runnel  # noqa: E402

VICTIM = "victim"
BIG = "big"
LOADS = ("slowloris", "never_reading", "frame_flood", "churn")


def rss_mib(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024.0
    return float("nan")


def create_topic(port, name):
    with w.Connection(port, timeout=60) as c:
        (_, err, msg), = w.parse_create_topics_v4(c.call(w.create_topics_v4(1, [(name, 1, 1)]), 1))
        assert err == 0, (name, err, msg)


VICTIM_TIMEOUT_S = 30.0


def victim_latencies(port, seconds):
    """-> (latencies, stalled): stalled when one Produce went unanswered for
    VICTIM_TIMEOUT_S, which ends the measurement (that wait is counted)."""
    batch = w.record_batch([(b"k%d" % i, b"v" * 100, ()) for i in range(10)], int(time.time() * 1000))
    out = []
    with w.Connection(port, timeout=VICTIM_TIMEOUT_S) as c:
        corr, end = 1, time.monotonic() + seconds
        while time.monotonic() < end:
            corr += 1
            t = time.perf_counter()
            try:
                res = w.parse_produce_v8(c.call(w.produce_v8(corr, 1, {VICTIM: [(0, batch)]}), corr))
            except (socket.timeout, TimeoutError):
                out.append(time.perf_counter() - t)
                return out, True
            out.append(time.perf_counter() - t)
            assert all(v[0] == 0 for v in res.values()), res
    return out, False


def summary(lat):
    lat = sorted(lat)
    return {"requests": len(lat), "p50_ms": round(statistics.median(lat) * 1000, 3),
            "p99_ms": round(lat[int(len(lat) * 0.99) - 1] * 1000, 3)}


# -- loads, each run in a process until `stop` is set ---------------------------

def slowloris(port, stop, ready, ops):
    socks = []
    for _ in range(1000):
        s = socket.create_connection(("127.0.0.1", port), timeout=30)
        s.sendall(struct.pack(">i", 1000) + b"\x00\x12")
        socks.append(s)
        with ops.get_lock():
            ops.value += 1
    ready.set()
    stop.wait()
    for s in socks:
        s.close()


def never_reading(port, stop, ready, ops):
    socks = []
    for _ in range(10):
        s = socket.create_connection(("127.0.0.1", port), timeout=30)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        s.settimeout(0.5)
        socks.append(s)
    for s in socks:
        for corr in range(50):
            frame = w.fetch_v4_many(corr, [(BIG, [(0, 0, 10 << 20)])], max_wait_ms=0, max_bytes=10 << 20)
            try:
                s.sendall(frame)
                with ops.get_lock():
                    ops.value += 1
            except (socket.timeout, OSError):
                break  # the broker stopped reading this connection: what a bound looks like
    ready.set()
    stop.wait()
    for s in socks:
        s.close()


def frame_flood(port, stop, ready, ops):
    size = 100 * 1024 * 1024 - 16
    # API key 32767: no such API, so the broker reads the frame and closes
    # the connection (zeros would be a valid acks=0 Produce v0, unanswered).
    frame = struct.pack(">i", size) + b"\x7f\xff" + bytes(size - 2)
    ready.set()
    while not stop.is_set():
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=30) as s:
                s.sendall(frame)
                s.recv(1)  # the broker closes the connection on the unknown API key
            with ops.get_lock():
                ops.value += 1
        except OSError:
            pass


def churn(port, stop, ready, ops):
    ready.set()
    frame = w.api_versions_v0(1)
    next_at = time.monotonic()
    while not stop.is_set():
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
                s.sendall(frame)
                size = struct.unpack(">i", s.recv(4))[0]
                got = 0
                while got < size:
                    got += len(s.recv(size - got))
            with ops.get_lock():
                ops.value += 1
        except OSError:
            pass
        next_at += 0.001
        delay = next_at - time.monotonic()
        if delay > 0:
            time.sleep(delay)


PROCESSES = {"slowloris": (slowloris, 1), "never_reading": (never_reading, 1), "frame_flood": (frame_flood, 8),
             "churn": (churn, 1)}


def under_load(broker, load, seconds):
    fn, count = PROCESSES[load]
    stop = multiprocessing.Event()
    readies = [multiprocessing.Event() for _ in range(count)]
    ops = multiprocessing.Value("q", 0)
    procs = [multiprocessing.Process(target=fn, args=(broker.port, stop, r, ops), daemon=True) for r in readies]
    for p in procs:
        p.start()
    for r in readies:
        assert r.wait(120), "%s did not get going" % load
    time.sleep(1.0)  # the load takes hold
    try:
        before = ops.value
        lat, stalled = victim_latencies(broker.port, seconds)
        rss = rss_mib(broker.proc.pid)
        done = ops.value - before
    finally:
        stop.set()
        for p in procs:
            p.join(30)
            if p.is_alive():
                p.kill()
    time.sleep(1.0)
    return lat, rss, done, stalled


def run_on(b, loads, seconds):
    """Every load on the started broker `b`; -> its rows."""
    rows = {}
    create_topic(b.port, VICTIM)
    create_topic(b.port, BIG)
    with w.Connection(b.port, timeout=60) as c:
        batch = w.record_batch([(None, b"x" * 1000, ())] * 1000, int(time.time() * 1000))
        for corr in range(64):
            w.parse_produce_v8(c.call(w.produce_v8(corr + 10, 1, {BIG: [(0, batch)]}), corr + 10))
    victim_latencies(b.port, 2.0)  # warm-up
    lat, stalled = victim_latencies(b.port, seconds)
    assert not stalled, "the producer stalled with the broker to itself"
    base = summary(lat)
    base["rss_mib"] = round(rss_mib(b.proc.pid), 1)
    rows["unloaded"] = base
    print("%-14s %8s %9s %9s %10s %9s %12s" % ("load", "requests", "p50 ms", "p99 ms", "p99 ratio", "RSS MiB",
                                           "load ops"))
    print("%-14s %8d %9.3f %9.3f %10s %9.1f" % ("unloaded", base["requests"], base["p50_ms"], base["p99_ms"],
                                                "1.00", base["rss_mib"]), flush=True)
    for load in loads:
        lat, rss, done, stalled = under_load(b, load, seconds)
        row = summary(lat)
        row["stalled_%ds" % VICTIM_TIMEOUT_S] = stalled
        row["rss_mib"] = round(rss, 1)
        row["load_ops_during"] = done
        row["p99_ratio"] = round(row["p99_ms"] / base["p99_ms"], 2)
        rows[load] = row
        print("%-14s %8d %9.3f %9.3f %10.2f %9.1f %12d" % (load, row["requests"], row["p50_ms"], row["p99_ms"],
                                                           row["p99_ratio"], row["rss_mib"], done) +
              ("   (a Produce unanswered for %.0f s)" % VICTIM_TIMEOUT_S if stalled else ""), flush=True)
    assert b.alive(), "the broker died under the loads"
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runnel", default=os.path.join(REPO, "build", "release", "runnel"))
    ap.add_argument("--seconds", type=float, default=10.0)
    ap.add_argument("--only", nargs="*", choices=LOADS)
    ap.add_argument("--brokers", nargs="*", choices=("runnel", "kafka"), default=["runnel", "kafka"])
    ap.add_argument("--out")
    args = ap.parse_args()
    loads = args.only or list(LOADS)

    overrides = {"queued.max.request.bytes": str(256 << 20)}
    result = {}
    for name in args.brokers:
        print("on %s" % name, flush=True)
        broker = (Runnel(binary=args.runnel, overrides=overrides, ready_timeout=120) if name == "runnel"
                  else Kafka(overrides=overrides))
        with broker as b:
            result[name] = run_on(b, loads, args.seconds)

    stamp = datetime.datetime.now(datetime.timezone.utc)
    path = args.out or os.path.join(HERE, "results", "neighbour_bench-%s.json" % stamp.strftime("%Y-%m-%d"))
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, "w") as fh:
        json.dump({"when": stamp.isoformat(), "seconds": args.seconds, "binary": os.path.basename(args.runnel),
                   "nproc": os.cpu_count(), "brokers": result}, fh, indent=1)
    print("raw numbers:", os.path.relpath(path, REPO))


if __name__ == "__main__":
    main()
