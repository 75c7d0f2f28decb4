#!/usr/bin/python3
"""Consume throughput over TLS against plaintext on the same Runnel (issue
15's numbers), with librdkafka (confluent-kafka) as the client.

One broker with a PLAINTEXT and an SSL listener (certificates made with the
openssl CLI); a backlog of --mib MiB in --size byte records on 6
partitions; then --rounds rounds, each consuming the whole backlog once over
PLAINTEXT and once over SSL (fresh consumers, no group), alternating.
Prints MiB/s and the broker's CPU seconds per GiB sent, per round and the
medians; with --baseline, a second runnel
binary (e.g. main's) is measured on PLAINTEXT the same way, for the plain
path's cost of the transport seam.

usage: /usr/bin/python3 bench/tls_consume.py --runnel build/release/runnel [--baseline OTHER] [--mib 256]
"""

import argparse
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "compat-tests"))

from confluent_kafka import OFFSET_BEGINNING, Consumer, Producer, TopicPartition  # noqa: E402
from confluent_kafka.admin import AdminClient, NewTopic  # noqa: E402

import security_tls_test as t  # noqa: E402  (its Certs and TlsBroker)

PARTITIONS = 6


def produce(bootstrap, topic, mib, size):
    admin = AdminClient({"bootstrap.servers": bootstrap, "broker.address.family": "v4"})
    admin.create_topics([NewTopic(topic, PARTITIONS, 1)])[topic].result(60)
    p = Producer({"bootstrap.servers": bootstrap, "broker.address.family": "v4", "acks": "1", "linger.ms": 20,
                  "batch.size": 1 << 20})
    value = os.urandom(size)
    n = mib * (1 << 20) // size
    for i in range(n):
        while True:
            try:
                p.produce(topic, value, partition=i % PARTITIONS)
                break
            except BufferError:
                p.poll(0.05)
        p.poll(0)
    assert p.flush(300) == 0
    return n


def consume(config, topic, n):
    """Seconds to read all n records from the beginning."""
    c = Consumer(dict(config, **{"group.id": "bench-unused", "enable.auto.commit": False,
                                 "fetch.max.bytes": 52428800, "max.partition.fetch.bytes": 10485760}))
    c.assign([TopicPartition(topic, p, OFFSET_BEGINNING) for p in range(PARTITIONS)])
    got = 0
    start = time.monotonic()
    try:
        # Small batches with a short wait: consume() waits for a whole batch
        # or its timeout, which would otherwise pad the last batch.
        while got < n:
            for m in c.consume(num_messages=100, timeout=0.02):
                assert not m.error(), m.error()
                got += 1
            if time.monotonic() - start > 600:
                raise RuntimeError("consume took over 600 s")
        return time.monotonic() - start
    finally:
        c.close()


def cpu_seconds(pid):
    """User + system CPU the process has used (/proc/<pid>/stat)."""
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def plaintext_config(broker):
    return {"bootstrap.servers": broker.bootstrap, "broker.address.family": "v4"}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runnel", required=True)
    ap.add_argument("--baseline", help="another runnel binary, measured on PLAINTEXT only")
    ap.add_argument("--mib", type=int, default=256)
    ap.add_argument("--size", type=int, default=16384)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    sys.argv[1:] = [args.runnel]  # what runnel_harness reads
    t.CERTS = t.Certs()
    results = {}
    cpu_per_gib = {}
    try:
        ssl_props = {"ssl.keystore.type": "PEM", "ssl.keystore.location": t.CERTS.server_pem,
                     "ssl.key.password": "keypass"}
        systems = [("runnel", args.runnel)] + ([("baseline", args.baseline)] if args.baseline else [])
        brokers = {}
        for name, binary in systems:
            if name == "runnel":
                b = t.TlsBroker("SSL", ssl_props)
            else:
                b = t.Runnel(binary=binary, prefix="runnel-bench-baseline-")
            b.binary = binary
            b.start()
            brokers[name] = (b, produce(b.bootstrap, "bench", args.mib, args.size))
        try:
            for r in range(args.rounds):
                for name, (b, n) in brokers.items():
                    runs = [("%s plaintext" % name, plaintext_config(b))]
                    if name == "runnel":
                        runs.append(("runnel ssl", t.confluent_config(b)))
                    for label, config in runs:
                        cpu = cpu_seconds(b.proc.pid)
                        secs = consume(config, "bench", n)
                        cpu = cpu_seconds(b.proc.pid) - cpu
                        gib = n * args.size / (1 << 30)
                        mibs = gib * 1024 / secs
                        results.setdefault(label, []).append(mibs)
                        cpu_per_gib.setdefault(label, []).append(cpu / gib)
                        print("round %d %-20s %8.1f MiB/s (%.2f s), broker CPU %.2f s/GiB" % (
                            r + 1, label, mibs, secs, cpu / gib), flush=True)
        finally:
            for b, _ in brokers.values():
                b.close()
    finally:
        t.CERTS.close()
    print("load average after: %.2f %.2f %.2f" % os.getloadavg())
    med = {k: statistics.median(v) for k, v in results.items()}
    for k, v in med.items():
        print("median %-20s %8.1f MiB/s, broker CPU %.2f s/GiB" % (k, v, statistics.median(cpu_per_gib[k])))
    if "runnel ssl" in med:
        print("ssl / plaintext on the same broker: %.2f" % (med["runnel ssl"] / med["runnel plaintext"]))
    if "baseline plaintext" in med:
        print("plaintext / baseline plaintext: %.2f" % (med["runnel plaintext"] / med["baseline plaintext"]))


if __name__ == "__main__":
    main()
