#!/usr/bin/python3
"""Consumer-group numbers, Runnel beside Apache Kafka 4.1.1 (issue 5).

Two measurements, each against a fresh broker with
group.initial.rebalance.delay.ms=0, driven by librdkafka 2.0.2
(python3-confluent-kafka):

  join: time from a consumer's subscribe() to its first assignment callback,
        i.e. JoinGroup (twice: KIP-394's MEMBER_ID_REQUIRED round trip),
        SyncGroup and the group becoming Stable, for a single member of a
        fresh group. The consumer is created, has fetched metadata and found
        its coordinator before the clock starts. Repeated --joins times,
        each with a new group id; one unmeasured group first (Kafka creates
        __consumer_offsets on the first FindCoordinator).
  commit: synchronous offset commits from one consumer of a Stable group,
        one partition per commit, --commits times; commits/s and the
        latency of each.

Runnel runs twice: as configured by default (runnel.acks.all.fsync=true: a
commit's response waits for the fsync of its __consumer_offsets partition)
and with runnel.acks.all.fsync=false (no fsync, like a Kafka broker, which
leaves flushing to the OS and relies on replication). Kafka is started by
compat-tests/kafka_harness.py from the Maven Central jars.

usage: bench/group_bench.py [--runnel build/release/runnel] [--joins 30]
                            [--commits 2000] [--kafka-cache build/kafka-jars]
                            [--skip-kafka] [--skip-runnel]
Prints a table; the raw numbers go to bench/results/group_bench-<date>.jsonl.
"""
import argparse
import datetime
import json
import os
import statistics
import sys
import time

from confluent_kafka import Consumer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(REPO, "compat-tests"))
from runnel_harness import Runnel  # noqa: E402

TOPIC = "bench-groups"
PARTITIONS = 6
COMMON = {"group.initial.rebalance.delay.ms": "0"}


def new_consumer(bootstrap, group):
    return Consumer({
        "bootstrap.servers": bootstrap, "group.id": group, "enable.auto.commit": False,
        "auto.offset.reset": "earliest", "session.timeout.ms": 10000, "heartbeat.interval.ms": 1000,
    })


def create_topic(bootstrap):
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(TOPIC, PARTITIONS, 1)])[TOPIC].result(60)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        md = admin.list_topics(TOPIC, timeout=10).topics.get(TOPIC)
        if md and not md.error and len(md.partitions) == PARTITIONS:
            return
        time.sleep(0.1)
    raise RuntimeError("topic %s not ready" % TOPIC)


def join_once(bootstrap, group):
    """Seconds from subscribe() to the first assignment callback."""
    c = new_consumer(bootstrap, group)
    try:
        c.list_topics(TOPIC, timeout=30)
        # librdkafka looks up the group's coordinator as soon as the consumer
        # exists; give it the time so the measurement starts at the join.
        time.sleep(0.3)
        assigned = []
        c.subscribe([TOPIC], on_assign=lambda consumer, parts: assigned.append(time.perf_counter()))
        start = time.perf_counter()
        deadline = time.monotonic() + 60
        while not assigned:
            if time.monotonic() > deadline:
                raise RuntimeError("no assignment within 60 s for " + group)
            c.poll(0.5)
        return assigned[0] - start
    finally:
        c.close()


def commits(bootstrap, count):
    """(commits/s, [latency s]) of `count` synchronous single-partition commits."""
    c = new_consumer(bootstrap, "bench-commit")
    try:
        assigned = []
        c.subscribe([TOPIC], on_assign=lambda consumer, parts: assigned.append(1))
        deadline = time.monotonic() + 60
        while not assigned:
            if time.monotonic() > deadline:
                raise RuntimeError("bench-commit got no assignment")
            c.poll(0.5)
        c.poll(0.1)
        latencies = []
        start = time.perf_counter()
        for i in range(count):
            t = time.perf_counter()
            done = c.commit(offsets=[TopicPartition(TOPIC, i % PARTITIONS, i + 1)], asynchronous=False)
            latencies.append(time.perf_counter() - t)
            if any(tp.error for tp in done):
                raise RuntimeError("commit failed: %s" % done)
        elapsed = time.perf_counter() - start
        return count / elapsed, latencies
    finally:
        c.close()


def pct(values, p):
    s = sorted(values)
    return s[min(len(s) - 1, int(round(p / 100.0 * (len(s) - 1))))]


def measure(name, broker, joins, n_commits):
    print("measuring %s ..." % name, file=sys.stderr, flush=True)
    create_topic(broker.bootstrap)
    join_once(broker.bootstrap, "bench-warmup")
    times = [join_once(broker.bootstrap, "bench-join-%d" % i) for i in range(joins)]
    rate, lat = commits(broker.bootstrap, n_commits)
    return {
        "broker": name, "joins": joins,
        "join_ms_median": statistics.median(times) * 1e3, "join_ms_p90": pct(times, 90) * 1e3,
        "join_ms_min": min(times) * 1e3, "join_ms_max": max(times) * 1e3,
        "commits": n_commits, "commits_per_s": rate,
        "commit_ms_p50": pct(lat, 50) * 1e3, "commit_ms_p99": pct(lat, 99) * 1e3,
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runnel", default=os.path.join(REPO, "build", "release", "runnel"))
    ap.add_argument("--joins", type=int, default=30)
    ap.add_argument("--commits", type=int, default=2000)
    ap.add_argument("--kafka-cache", default=os.path.join(REPO, "build", "kafka-jars"))
    ap.add_argument("--skip-kafka", action="store_true")
    ap.add_argument("--skip-runnel", action="store_true")
    args = ap.parse_args()

    rows = []
    if not args.skip_runnel:
        with Runnel(args.runnel, COMMON) as r:
            rows.append(measure("runnel", r, args.joins, args.commits))
        with Runnel(args.runnel, dict(COMMON, **{"runnel.acks.all.fsync": "false"})) as r:
            rows.append(measure("runnel (acks.all.fsync=false)", r, args.joins, args.commits))
    if not args.skip_kafka:
        from kafka_harness import Kafka
        # A JVM on a busy machine can take minutes to come up.
        with Kafka(cache_dir=args.kafka_cache, overrides=COMMON, ready_timeout=600) as k:
            rows.append(measure("kafka 4.1.1", k, args.joins, args.commits))

    stamp = datetime.datetime.now(datetime.timezone.utc)
    os.makedirs(os.path.join(HERE, "results"), exist_ok=True)
    with open(os.path.join(HERE, "results", "group_bench-%s.jsonl" % stamp.date()), "a") as f:
        for row in rows:
            f.write(json.dumps(dict(row, time=stamp.isoformat(timespec="seconds"))) + "\n")

    print("| broker | join→Stable median ms | p90 ms | commits/s | commit p50 ms | p99 ms |")
    print("|---|---:|---:|---:|---:|---:|")
    for row in rows:
        print("| %s | %.1f | %.1f | %.0f | %.2f | %.2f |" % (
            row["broker"], row["join_ms_median"], row["join_ms_p90"], row["commits_per_s"],
            row["commit_ms_p50"], row["commit_ms_p99"]))


if __name__ == "__main__":
    main()
