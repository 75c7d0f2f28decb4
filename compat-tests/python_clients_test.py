"""confluent-kafka-python and kafka-python (Debian's python3-confluent-kafka
and python3-kafka) against a real Runnel: each library produces in every
codec it supports, with keys, headers and explicit timestamps, and each
library consumes everything back; every record is checked exactly (offset,
key, value, headers, timestamp), so each client reads what the other wrote.

usage: /usr/bin/python3 python_clients_test.py <runnel binary>
"""

import sys
import time

import kafka
import kafka.codec
from confluent_kafka import OFFSET_BEGINNING, Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from runnel_harness import Runnel, run_tests

PARTITIONS = 3
RECORDS = 600  # per (library, codec) topic
BASE_TS = int(time.time() * 1000) - 3600 * 1000
CONFLUENT_CODECS = ["none", "gzip", "snappy", "lz4", "zstd"]
KAFKA_PYTHON_CODECS = [None] + [c for c, ok in [("gzip", kafka.codec.has_gzip()), ("snappy", kafka.codec.has_snappy()),
                                                ("lz4", kafka.codec.has_lz4()), ("zstd", kafka.codec.has_zstd())] if ok]
# kafka-python probes the broker's version with a 2 s default: too short for
# an ASan broker on a loaded machine.
KP = {"api_version_auto_timeout_ms": 30000, "request_timeout_ms": 30000}


def expected(topic, i):
    """Record i of a topic: partition i % 3, that partition's offset i // 3."""
    key = None if i % 13 == 4 else ("%s/key/%d" % (topic, i)).encode()
    value = None if i % 29 == 11 and key is not None else bytes((i * 7 + j) & 0xFF for j in range(i % 300))
    headers = [("seq", str(i).encode()), ("topic", topic.encode())]
    if i % 4 == 0:
        headers.append(("empty", b""))
    if i % 6 == 0:
        headers.append(("seq", b"repeated"))
    return i % PARTITIONS, key, value, headers, BASE_TS + i


def want_partition(topic, partition, n):
    return [expected(topic, i) for i in range(n) if i % PARTITIONS == partition]


def produce_confluent(bootstrap, topic, codec):
    errors = []
    p = Producer({"bootstrap.servers": bootstrap, "broker.address.family": "v4", "acks": "all",
                  "compression.type": codec, "linger.ms": 5})
    for i in range(RECORDS):
        partition, key, value, headers, ts = expected(topic, i)
        p.produce(topic, value, key, partition=partition, headers=headers, timestamp=ts,
                  on_delivery=lambda err, msg: err and errors.append(err))
        p.poll(0)
    left = p.flush(60)
    assert left == 0, "%d records undelivered" % left
    assert not errors, errors[:3]


def produce_kafka_python(bootstrap, topic, codec):
    p = kafka.KafkaProducer(bootstrap_servers=bootstrap, acks="all", compression_type=codec, linger_ms=5, **KP)
    futures = []
    for i in range(RECORDS):
        partition, key, value, headers, ts = expected(topic, i)
        futures.append(p.send(topic, value=value, key=key, partition=partition, headers=headers, timestamp_ms=ts))
    p.flush(60)
    for i, f in enumerate(futures):
        md = f.get(timeout=60)
        assert md.partition == i % PARTITIONS and md.offset == i // PARTITIONS, (i, md)
    p.close(10)


def check(topic, got):
    """got: partition -> [(offset, key, value, headers, timestamp)]"""
    for partition in range(PARTITIONS):
        want = want_partition(topic, partition, RECORDS)
        have = got.get(partition, [])
        assert len(have) == len(want), "%s-%d: %d records back, %d produced" % (topic, partition, len(have), len(want))
        for offset, (h, w) in enumerate(zip(have, want)):
            where = "%s-%d offset %d" % (topic, partition, offset)
            assert h[0] == offset, "%s: got offset %d (gap, duplicate or reorder)" % (where, h[0])
            assert h[1] == w[1], "%s: key %r != %r" % (where, h[1], w[1])
            assert h[2] == w[2], "%s: value differs (%r...)" % (where, (h[2] or b"")[:20])
            assert list(h[3]) == w[3], "%s: headers %r != %r" % (where, h[3], w[3])
            assert h[4] == w[4], "%s: timestamp %r != %r" % (where, h[4], w[4])


def check_all(topics, got):
    """got: (topic, partition) -> records, as check() takes them."""
    for topic in topics:
        check(topic, {p: got.get((topic, p), []) for p in range(PARTITIONS)})


def consume_confluent(bootstrap, topics):
    # assign() with explicit offsets needs no group coordinator; group.id is
    # only there because the high-level consumer requires one.
    c = Consumer({"bootstrap.servers": bootstrap, "broker.address.family": "v4", "group.id": "compat-unused",
                  "enable.auto.commit": False, "enable.partition.eof": True})
    c.assign([TopicPartition(t, p, OFFSET_BEGINNING) for t in topics for p in range(PARTITIONS)])
    got, eof = {}, set()
    deadline = time.monotonic() + 90
    try:
        while len(eof) < len(topics) * PARTITIONS and time.monotonic() < deadline:
            m = c.poll(0.5)
            if m is None:
                continue
            tp = (m.topic(), m.partition())
            if m.error():
                if m.error().code() == -191:  # _PARTITION_EOF
                    if len(got.get(tp, [])) == len(want_partition(tp[0], tp[1], RECORDS)):
                        eof.add(tp)
                    continue
                raise AssertionError("confluent consumer: %s" % m.error())
            tstype, ts = m.timestamp()
            assert tstype == 1, "timestamp type %d is not CreateTime" % tstype
            got.setdefault(tp, []).append((m.offset(), m.key(), m.value(), m.headers() or [], ts))
    finally:
        c.close()
    check_all(topics, got)


def consume_kafka_python(bootstrap, topics):
    c = kafka.KafkaConsumer(bootstrap_servers=bootstrap, group_id=None, enable_auto_commit=False, **KP)
    try:
        tps = [kafka.TopicPartition(t, p) for t in topics for p in range(PARTITIONS)]
        c.assign(tps)
        c.seek_to_beginning()
        ends = c.end_offsets(tps)
        got = {}
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline and any(c.position(tp) < ends[tp] for tp in tps):
            for batch in c.poll(timeout_ms=500).values():
                for m in batch:
                    assert m.timestamp_type == 0, "timestamp type %d is not CreateTime" % m.timestamp_type
                    got.setdefault((m.topic, m.partition), []).append(
                        (m.offset, m.key, m.value, m.headers, m.timestamp))
    finally:
        c.close()
    check_all(topics, got)


def main():
    broker = Runnel()
    topics = [("confluent", c) for c in CONFLUENT_CODECS] + [("kafka-python", c or "none") for c in KAFKA_PYTHON_CODECS]
    names = ["%s-%s" % t for t in topics]
    with broker:
        def create_topics():
            admin = AdminClient({"bootstrap.servers": broker.bootstrap, "broker.address.family": "v4"})
            futures = admin.create_topics([NewTopic(n, PARTITIONS, 1) for n in names], operation_timeout=10)
            for name, f in futures.items():
                f.result(30)

        def confluent_produces():
            for codec in CONFLUENT_CODECS:
                produce_confluent(broker.bootstrap, "confluent-" + codec, codec)

        def kafka_python_produces():
            print("kafka-python codecs: %s" % [c or "none" for c in KAFKA_PYTHON_CODECS], flush=True)
            for codec in KAFKA_PYTHON_CODECS:
                produce_kafka_python(broker.bootstrap, "kafka-python-" + (codec or "none"), codec)

        def confluent_consumes_all():
            consume_confluent(broker.bootstrap, names)

        def kafka_python_consumes_all():
            consume_kafka_python(broker.bootstrap, names)

        rc = run_tests([
            ("create topics (confluent AdminClient)", create_topics),
            ("confluent-kafka produces in %s" % ", ".join(CONFLUENT_CODECS), confluent_produces),
            ("kafka-python %s produces in each codec it has" % kafka.__version__, kafka_python_produces),
            ("confluent-kafka consumes every topic exactly", confluent_consumes_all),
            ("kafka-python consumes every topic exactly", kafka_python_consumes_all),
        ], broker)
    sys.exit(rc)


if __name__ == "__main__":
    main()
