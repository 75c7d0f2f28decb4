#!/usr/bin/python3
"""Bytes per fetch for a wide consumer, with and without incremental fetch
sessions (KIP-227, issue 18), Runnel beside Apache Kafka 4.1.1.

One consumer of a topic of --partitions partitions (5,000 by default)
fetches in a loop as a session-aware client (the Java consumer, franz-go)
does; between two fetches one record is produced to each of --changed
partitions picked at random. Each broker is measured twice:

  sessionless: every fetch is full (SessionId 0, SessionEpoch -1), as
               librdkafka and kafka-python send them;
  session:     SessionEpoch 0 once, then incremental fetches that list only
               the partitions whose fetch offset moved.

The request and response bytes of each fetch are the whole frames (size
prefix included), from hand-built Fetch v12 requests
(compat-tests/kafka_wire.py). Kafka is started by compat-tests/kafka_harness.py
from the Maven Central jars.

usage: bench/fetch_session_bench.py [--runnel build/release/runnel]
           [--partitions 5000] [--changed 50] [--fetches 20]
           [--kafka-cache build/kafka-jars] [--skip-kafka]
Prints a table; the raw numbers go to bench/results/fetch_session_bench-<date>.json.
"""
import argparse
import datetime
import json
import os
import random
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(REPO, "compat-tests"))
import kafka_wire as w  # noqa: E402
from runnel_harness import Runnel  # noqa: E402

TOPIC = "wide"


def create_topic(port, partitions):
    with w.Connection(port, timeout=300) as c:
        (name, err, msg), = w.parse_create_topics_v4(
            c.call(w.create_topics_v4(1, [(TOPIC, partitions, 1)], timeout_ms=240000), 1))
        assert err == 0, (err, msg)


def produce_one_each(conn, partitions, corr):
    batch = w.record_batch([(b"k", b"v" * 100, ())], int(time.time() * 1000))
    res = w.parse_produce_v8(conn.call(w.produce_v8(corr, 1, {TOPIC: [(p, batch) for p in partitions]}), corr))
    bad = {k: v for k, v in res.items() if v[0] != 0}
    assert not bad, bad


class Fetcher:
    def __init__(self, port, partitions):
        self.c = w.Connection(port, timeout=60)
        self.corr = 100
        self.offsets = {p: 0 for p in range(partitions)}

    def fetch(self, session_id, epoch, listed):
        self.corr += 1
        frame = w.fetch_flexible(12, self.corr, session_id, epoch, [(TOPIC, [(p, self.offsets[p]) for p in listed])])
        body = self.c.call(frame, self.corr)
        err, sid, parts = w.parse_fetch_flexible(12, body)
        assert err == 0, err
        moved = []
        for _, p, perr, hw, records in parts:
            assert perr == 0, (p, perr)
            if records:
                self.offsets[p] = hw  # every record up to the high watermark came back
                moved.append(p)
        return sid, len(frame), len(body) + 8, moved  # + size prefix and correlation id

    def close(self):
        self.c.close()


def wait_until_fetchable(port, partitions, limit=300):
    """Kafka elects the new partitions' leader a moment after CreateTopics."""
    deadline = time.monotonic() + limit
    f = Fetcher(port, partitions)
    try:
        while True:
            f.corr += 1
            body = f.c.call(w.fetch_flexible(12, f.corr, 0, -1, [(TOPIC, [(p, 0) for p in range(partitions)])]),
                            f.corr)
            _, _, parts = w.parse_fetch_flexible(12, body)
            if len(parts) == partitions and all(e == 0 for _, _, e, _, _ in parts):
                return
            assert time.monotonic() < deadline, "partitions not fetchable after %d s" % limit
            time.sleep(1)
    finally:
        f.close()


def measure(name, port, partitions, changed, fetches, seed):
    rng = random.Random(seed)
    create_topic(port, partitions)
    wait_until_fetchable(port, partitions)
    producer = w.Connection(port, timeout=60)
    out = {"system": name}
    try:
        for mode in ("sessionless", "session"):
            f = Fetcher(port, partitions)
            try:
                everything = list(range(partitions))
                # Catch up first: earlier rounds left records behind.
                sid, _, _, listed = f.fetch(0, 0 if mode == "session" else -1, everything)
                epoch = 1
                sent, received, answered = [], [], []
                for i in range(fetches):
                    produce_one_each(producer, rng.sample(everything, changed), 1000 + i)
                    if mode == "session":
                        assert sid != 0, "no session was made"
                        sid2, s, r, moved = f.fetch(sid, epoch, listed)
                        assert sid2 == sid
                        epoch += 1
                        listed = moved  # their fetch offsets moved: the next request says so
                    else:
                        _, s, r, moved = f.fetch(0, -1, everything)
                    sent.append(s)
                    received.append(r)
                    answered.append(len(moved))
                out[mode] = {"request_bytes": statistics.median(sent), "response_bytes": statistics.median(received),
                             "partitions_with_records": statistics.median(answered)}
            finally:
                f.close()
    finally:
        producer.close()
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runnel", default=os.path.join(REPO, "build", "release", "runnel"))
    ap.add_argument("--partitions", type=int, default=5000)
    ap.add_argument("--changed", type=int, default=50)
    ap.add_argument("--fetches", type=int, default=20)
    ap.add_argument("--kafka-cache", default=os.path.join(REPO, "build", "kafka-jars"))
    ap.add_argument("--skip-kafka", action="store_true")
    args = ap.parse_args()

    rows = []
    # Both brokers keep a few files open per partition: `ulimit -n` of at
    # least 4 times --partitions.
    with Runnel(binary=args.runnel, ready_timeout=120) as r:
        rows.append(measure("runnel", r.port, args.partitions, args.changed, args.fetches, 1))
    if not args.skip_kafka:
        from kafka_harness import Kafka
        with Kafka(cache_dir=args.kafka_cache, ready_timeout=600) as k:
            rows.append(measure("kafka 4.1.1", k.port, args.partitions, args.changed, args.fetches, 1))

    print("%d partitions, one record to %d of them between fetches; median bytes per fetch"
          % (args.partitions, args.changed))
    print("%-12s %-12s %14s %15s %16s" % ("system", "mode", "request bytes", "response bytes", "with records"))
    for row in rows:
        for mode in ("sessionless", "session"):
            m = row[mode]
            print("%-12s %-12s %14d %15d %16d" % (row["system"], mode, m["request_bytes"], m["response_bytes"],
                                                 m["partitions_with_records"]))
    for row in rows:
        s, f = row["session"], row["sessionless"]
        print("%s: a session's fetch is %.4f of a sessionless one's request bytes, %.4f of its response bytes"
              % (row["system"], s["request_bytes"] / f["request_bytes"], s["response_bytes"] / f["response_bytes"]))
    if len(rows) == 2:
        for mode in ("sessionless", "session"):
            r, k = rows[0][mode], rows[1][mode]
            print("%s: Runnel/Kafka request bytes %.3f, response bytes %.3f"
                  % (mode, r["request_bytes"] / k["request_bytes"], r["response_bytes"] / k["response_bytes"]))

    stamp = datetime.datetime.now(datetime.timezone.utc)
    os.makedirs(os.path.join(HERE, "results"), exist_ok=True)
    path = os.path.join(HERE, "results", "fetch_session_bench-%s.json" % stamp.strftime("%Y-%m-%d"))
    with open(path, "w") as fh:
        json.dump({"when": stamp.isoformat(), "partitions": args.partitions, "changed": args.changed,
                   "fetches": args.fetches, "rows": rows}, fh, indent=1)
    print("raw numbers:", os.path.relpath(path, REPO))


if __name__ == "__main__":
    main()
