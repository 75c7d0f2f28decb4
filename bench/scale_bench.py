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
together     both at once on one broker: the 10 x 1,000 partitions
             created, one record produced to each, then the connections
             load beside them, its active connections producing to and
             fetching from partitions of those topics. Figures: resident
             memory and descriptors with everything open.
segments     1,000 partitions of --rounds segments each (log.roll.ms=1000,
             one record to every partition a round, a round a second), a
             graceful restart, then every record read. Figures: the
             descriptors and memory maps after the restart, after the
             reading, and two retention checks later
             (log.retention.check.interval.ms=2000), when Runnel has closed
             the files of the segments that went idle.

Each figure is reported beside Kafka's and as a ratio to it. The bench
raises its own `ulimit -n` to --max-open-files (the brokers inherit it):
Kafka keeps a descriptor per segment, so 10,000 partitions and 10,000
connections together need more than Debian's 1,024 or this shell's 20,000.

usage: bench/scale_bench.py [--runnel build/release/runnel]
                            [--only partitions|connections|together|segments]
                            [--connections 10000] [--active 500] [--seconds 10] [--rounds 20]
                            [--max-open-files 65536] [--out FILE]
"""
import argparse
import datetime
import json
import os
import resource
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
LOADS = ("partitions", "connections", "together", "segments")
# Rolls a segment a second, and checks retention (where Runnel closes idle
# segments' files) every 2 s, on both brokers.
SEGMENTS_OVERRIDES = {"log.roll.ms": "1000", "log.retention.check.interval.ms": "2000"}


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


def connections_load(broker, pid, n, active, seconds, topics=None):
    """With `topics` (names of 1,000-partition topics that exist), the
    active connections produce to and fetch from partition i % 1000 of
    topic i % len(topics); otherwise one single-partition topic is made."""
    if topics is None:
        with w.Connection(broker.port, timeout=60) as c:
            (_, err, msg), = w.parse_create_topics_v4(c.call(w.create_topics_v4(1, [(TOPIC, 1, 1)]), 1))
            assert err == 0, (err, msg)
        scale.metadata_all_led(broker.port, [TOPIC], 1)
        topics, per_topic = [TOPIC], 1
    else:
        per_topic = 1000

    def target(i):
        return topics[i % len(topics)], i % per_topic
    figures = {"connections": n, "active": active, "before": scale.proc_stats(pid)}
    socks = []
    t0 = time.monotonic()
    for start in range(0, n, 500):
        batch = [socket.create_connection(("127.0.0.1", broker.port), timeout=60) for _ in range(min(500, n - start))]
        ask_all(batch, lambda i: w.api_versions_v0(i), "ApiVersions")
        ask_all(batch, lambda i: w.metadata_v1(i, [topics[0]]), "Metadata")
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
            ask_all(busy, lambda i: w.produce_v8(corr, 1, {target(i)[0]: [(target(i)[1], record)]}), "Produce")
        else:
            ask_all(busy, lambda i: w.fetch_v4(corr, *target(i), 0, max_wait_ms=0), "Fetch")
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


def together_load(broker, pid, n, active, seconds):
    names = scale.topic_names(10)
    figures = {"partitions": 10000}
    figures["create_s"] = round(scale.create_topics(broker.port, names, 1000), 2)
    scale.metadata_all_led(broker.port, names, 1000)
    figures["produce_s"] = round(scale.produce_one_each(broker.bootstrap, names, 1000), 2)
    figures["partitions_only"] = scale.proc_stats(pid)
    print("  10,000 partitions: %s" % figures, flush=True)
    figures.update(connections_load(broker, pid, n, active, seconds, topics=names))
    return figures


def produce_rounds(bootstrap, topic, partitions, rounds, gap_s):
    """One record to every partition a round, rounds `gap_s` apart (acks=all)."""
    from confluent_kafka import Producer
    failed = []
    producer = Producer({"bootstrap.servers": bootstrap, "broker.address.family": "v4", "acks": "all",
                         "linger.ms": 20, "queue.buffering.max.messages": 200000})
    for r in range(rounds):
        t0 = time.monotonic()
        for p in range(partitions):
            producer.produce(topic, b"%d/%d" % (r, p), partition=p,
                             on_delivery=lambda err, msg: err is not None and failed.append(str(err)))
        assert producer.flush(120) == 0 and not failed, "round %d: %s" % (r, failed[:3])
        time.sleep(max(0.0, gap_s - (time.monotonic() - t0)))


def read_everything(bootstrap, topic, partitions, expected, timeout=300.0):
    from confluent_kafka import Consumer, TopicPartition
    consumer = Consumer({"bootstrap.servers": bootstrap, "broker.address.family": "v4", "group.id": "segments-reader",
                         "enable.auto.commit": False})
    consumer.assign([TopicPartition(topic, p, 0) for p in range(partitions)])
    seen = 0
    deadline = time.monotonic() + timeout
    try:
        while seen < expected and time.monotonic() < deadline:
            seen += sum(1 for m in consumer.consume(1000, 1.0) if not m.error())
    finally:
        consumer.close()
    assert seen == expected, "read %d of %d records" % (seen, expected)


def segments_load(broker, pid_of, rounds, partitions=1000):
    topic = "segments"
    figures = {"partitions": partitions, "rounds": rounds}
    scale.create_topics(broker.port, [topic], partitions)
    scale.metadata_all_led(broker.port, [topic], partitions)
    produce_rounds(broker.bootstrap, topic, partitions, rounds, 1.1)
    figures["written"] = scale.proc_stats(pid_of())
    broker.stop_timeout = 600.0
    broker.stop()
    broker.start()
    scale.metadata_all_led(broker.port, [topic], partitions)
    files = [f for d in os.listdir(broker.log_dir) if d.startswith(topic + "-")
             for f in os.listdir(os.path.join(broker.log_dir, d)) if f.endswith(".log")]
    figures["segments"] = len(files)
    time.sleep(2.0)
    figures["restarted"] = scale.proc_stats(pid_of())
    read_everything(broker.bootstrap, topic, partitions, partitions * rounds)
    figures["after_reading"] = scale.proc_stats(pid_of())
    time.sleep(6.0)  # two retention checks and then some
    figures["idle_again"] = scale.proc_stats(pid_of())
    print("  %s" % figures, flush=True)
    return figures


def raise_open_files(n):
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft >= n:
        return soft
    try:
        resource.setrlimit(resource.RLIMIT_NOFILE, (n, max(n, hard)))
    except (ValueError, PermissionError):
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    return resource.getrlimit(resource.RLIMIT_NOFILE)[0]


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
    ap.add_argument("--only", choices=LOADS)
    ap.add_argument("--connections", type=int, default=10000)
    ap.add_argument("--active", type=int, default=500)
    ap.add_argument("--seconds", type=float, default=10.0)
    ap.add_argument("--rounds", type=int, default=20)
    ap.add_argument("--max-open-files", type=int, default=65536)
    ap.add_argument("--out")
    args = ap.parse_args()
    commit = subprocess.run(["git", "-C", REPO, "rev-parse", "--short", "HEAD"], stdout=subprocess.PIPE,
                            text=True).stdout.strip()
    result = {"date": datetime.date.today().isoformat(), "commit": commit, "nproc": os.cpu_count(),
              "ulimit_n": raise_open_files(args.max_open_files)}
    loads = [args.only] if args.only else list(LOADS)
    for load in loads:
        result[load] = {}
        for name in ("runnel", "kafka"):
            print("%s on %s" % (load, name), flush=True)
            overrides = SEGMENTS_OVERRIDES if load == "segments" else {}
            broker = (Runnel(args.runnel, ready_timeout=120, overrides=overrides) if name == "runnel"
                      else Kafka(overrides=overrides))
            with broker:
                if load == "partitions":
                    result[load][name] = partitions_load(broker, lambda: broker.proc.pid)
                elif load == "segments":
                    result[load][name] = segments_load(broker, lambda: broker.proc.pid, args.rounds)
                elif load == "together":
                    result[load][name] = together_load(broker, broker.proc.pid, args.connections, args.active,
                                                       args.seconds)
                else:
                    result[load][name] = connections_load(broker, broker.proc.pid, args.connections, args.active,
                                                          args.seconds)
        keys = {"partitions": ["create_s", "metadata_s", "produce_s", "consume_s", "restart_led_s",
                               "serving.rss_mib", "serving.fds", "restarted_serving.rss_mib", "delete_topic_s"],
                "connections": ["all_open.rss_mib", "after_active.rss_mib", "active_requests_per_s"],
                "together": ["partitions_only.rss_mib", "all_open.rss_mib", "all_open.fds", "after_active.rss_mib",
                             "active_requests_per_s"],
                "segments": ["restarted.fds", "restarted.maps", "after_reading.fds", "idle_again.fds",
                             "idle_again.maps", "idle_again.rss_mib"]}[load]
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
