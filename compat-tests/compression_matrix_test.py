"""Compression end to end, checked in the stored batches themselves.

- Every codec (none, gzip, snappy, lz4, zstd) produced by librdkafka
  (confluent-kafka) and by kafka-python: the batches in the log, read raw
  with Fetch, carry that codec in their attributes, and both clients read
  every record back exactly (offset, key, value, headers, timestamp).
- Every topic-level compression.type (producer, uncompressed, gzip, snappy,
  lz4, zstd): batches produced by both clients in other codecs are stored in
  the target codec (for `producer`, in the producer's own), and both clients
  read them exactly.
- Kafka 4's levels (compression.gzip.level, compression.lz4.level,
  compression.zstd.level): one hand-built uncompressed batch stored on two
  topics of the same codec at a low and a high level comes out as two
  different payloads, the high level's no larger, each decompressing here
  to exactly the records sent; both clients read them.
- A batch whose compressed payload is garbage (or cut short) under a valid
  CRC is CORRUPT_MESSAGE and nothing is stored (log end offset unchanged),
  on a topic that keeps the producer's codec and on one that recompresses.
python_clients_test.py covers more record shapes over several partitions;
this test is about the codecs.

usage: /usr/bin/python3 compression_matrix_test.py <runnel binary>
"""

import gzip
import random
import sys
import time

import kafka
import kafka.codec
import lz4.frame
import zstandard
from confluent_kafka import OFFSET_BEGINNING, Consumer, KafkaError, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

import kafka_wire as w
from runnel_harness import Runnel, run_tests

CODECS = ["none", "gzip", "snappy", "lz4", "zstd"]
TARGETS = ["producer", "uncompressed", "gzip", "snappy", "lz4", "zstd"]
LEVELS = [("gzip", "compression.gzip.level", 1, 9), ("lz4", "compression.lz4.level", 1, 17),
          ("zstd", "compression.zstd.level", 1, 19)]
RECORDS = 300  # per producer and topic
BASE_TS = int(time.time() * 1000) - 600_000
CORRUPT_MESSAGE = 2
KP = {"api_version_auto_timeout_ms": 30000, "request_timeout_ms": 30000}


def records_for(tag, n):
    """[(key, value, headers, timestamp)]: compressible values, some null keys."""
    out = []
    for i in range(n):
        key = None if i % 17 == 3 else ("%s-key-%d" % (tag, i)).encode()
        value = (("%s record %d " % (tag, i)) * (1 + i % 12)).encode()
        out.append((key, value, [("i", str(i).encode()), ("tag", tag.encode())], BASE_TS + i))
    return out


def produce_confluent(bootstrap, topic, codec, recs):
    errors = []
    p = Producer({"bootstrap.servers": bootstrap, "broker.address.family": "v4", "acks": "all",
                  "compression.type": codec, "linger.ms": 20})
    for key, value, headers, ts in recs:
        p.produce(topic, value, key, partition=0, headers=headers, timestamp=ts,
                  on_delivery=lambda err, msg: err and errors.append(err))
        p.poll(0)
    assert p.flush(60) == 0, "records undelivered"
    assert not errors, errors[:3]


def produce_kafka_python(bootstrap, topic, codec, recs):
    p = kafka.KafkaProducer(bootstrap_servers=bootstrap, acks="all", linger_ms=20,
                            compression_type=None if codec == "none" else codec, **KP)
    try:
        futures = [p.send(topic, value=v, key=k, partition=0, headers=h, timestamp_ms=ts) for k, v, h, ts in recs]
        p.flush(60)
        for f in futures:
            f.get(timeout=60)
    finally:
        p.close(10)


def read_confluent(bootstrap, topic, n):
    c = Consumer({"bootstrap.servers": bootstrap, "broker.address.family": "v4", "group.id": "compat-unused",
                  "enable.auto.commit": False, "enable.partition.eof": True})
    out = []
    try:
        c.assign([TopicPartition(topic, 0, OFFSET_BEGINNING)])
        deadline = time.monotonic() + 60
        while len(out) < n:
            assert time.monotonic() < deadline, "%s: confluent read %d of %d records" % (topic, len(out), n)
            m = c.poll(0.5)
            if m is None:
                continue
            if m.error():
                if m.error().code() == KafkaError._PARTITION_EOF:
                    continue
                raise AssertionError("%s: confluent consumer: %s" % (topic, m.error()))
            out.append((m.offset(), m.key(), m.value(), list(m.headers() or []), m.timestamp()[1]))
    finally:
        c.close()
    return out


def read_kafka_python(bootstrap, topic, n):
    c = kafka.KafkaConsumer(bootstrap_servers=bootstrap, group_id=None, enable_auto_commit=False, **KP)
    out = []
    try:
        tp = kafka.TopicPartition(topic, 0)
        c.assign([tp])
        c.seek_to_beginning()
        deadline = time.monotonic() + 60
        while len(out) < n:
            assert time.monotonic() < deadline, "%s: kafka-python read %d of %d records" % (topic, len(out), n)
            for batch in c.poll(timeout_ms=500).values():
                for m in batch:
                    out.append((m.offset, m.key, m.value, list(m.headers), m.timestamp))
    finally:
        c.close()
    return out


def check_records(topic, reader, got, want):
    assert len(got) == len(want), "%s (%s): %d records read, %d written" % (topic, reader, len(got), len(want))
    for offset, (g, (key, value, headers, ts)) in enumerate(zip(got, want)):
        assert g == (offset, key, value, headers, ts), "%s (%s) offset %d: %r != %r" % (
            topic, reader, offset, g[:3], (offset, key, value))


def stored_batches(port, topic):
    """Every batch of partition 0, read raw with Fetch v4 -> [batch header dict]."""
    out, offset, corr = [], 0, 0
    with w.Connection(port) as c:
        while True:
            corr += 1
            err, hw, records = w.parse_fetch_v4(c.call(w.fetch_v4(corr, topic, 0, offset, max_wait_ms=0), corr))[(topic, 0)]
            assert err == 0, "%s: fetch error %d" % (topic, err)
            batches = [w.batch_header(b) for b in w.split_batches(records)]
            out += [b for b in batches if b["base_offset"] + b["last_offset_delta"] >= offset]
            if out:
                offset = out[-1]["base_offset"] + out[-1]["last_offset_delta"] + 1
            if offset >= hw or not batches:
                assert offset == hw, "%s: batches end at %d, high watermark %d" % (topic, offset, hw)
                return out


def log_end(port, topic):
    with w.Connection(port) as c:
        err, offset = w.parse_list_offsets_v1(c.call(w.list_offsets_v1(1, topic, [0]), 1))[(topic, 0)]
    assert err == 0, err
    return offset


def decompress(codec, payload):
    if codec == "gzip":
        return gzip.decompress(payload)
    if codec == "lz4":
        return lz4.frame.decompress(payload)
    if codec == "zstd":
        return zstandard.ZstdDecompressor().decompressobj().decompress(payload)
    raise ValueError(codec)


class Matrix:
    def __init__(self, broker):
        self.broker = broker
        self.expected = {}  # topic -> [(key, value, headers, timestamp)] in offset order

    def create(self, topics):
        """topics: {name: {config}}"""
        admin = AdminClient({"bootstrap.servers": self.broker.bootstrap, "broker.address.family": "v4"})
        futures = admin.create_topics([NewTopic(t, 1, 1, config=cfg) for t, cfg in topics.items()],
                                      operation_timeout=10)
        for f in futures.values():
            f.result(30)

    # -- every codec from each client ------------------------------------------

    def clients_produce_every_codec(self):
        assert all([kafka.codec.has_gzip(), kafka.codec.has_snappy(), kafka.codec.has_lz4(), kafka.codec.has_zstd()]), (
            "kafka-python lacks a codec: python3-snappy, python3-lz4 and python3-zstandard are in scripts/setup")
        self.create({"mx-%s-%s" % (client, codec): {} for client in ("rdkafka", "kpy") for codec in CODECS})
        for codec in CODECS:
            for client, produce in (("rdkafka", produce_confluent), ("kpy", produce_kafka_python)):
                topic = "mx-%s-%s" % (client, codec)
                recs = records_for(topic, RECORDS)
                produce(self.broker.bootstrap, topic, codec, recs)
                self.expected[topic] = recs
                batches = stored_batches(self.broker.port, topic)
                codecs = {b["codec"] for b in batches}
                allowed = {w.CODECS[codec]}
                if client == "rdkafka":
                    # librdkafka sends a batch uncompressed when compressing
                    # it would not make it smaller (its msgset writer keeps
                    # the original), e.g. a short last batch.
                    allowed.add(0)
                assert w.CODECS[codec] in codecs and codecs <= allowed, (
                    "%s: stored codecs %s, produced in %s" % (topic, codecs, codec))
                assert len(batches) < RECORDS, "%s: %d batches for %d records: nothing was batched" % (
                    topic, len(batches), RECORDS)

    # -- topic-level compression.type --------------------------------------------

    def recompression_targets(self):
        self.create({"tg-%s" % t: {"compression.type": t} for t in TARGETS})
        for i, target in enumerate(TARGETS):
            topic = "tg-%s" % target
            # Two producer codecs that differ from the target (and from each other).
            want = "none" if target == "uncompressed" else target
            others = [c for c in CODECS if c != want]
            first, second = others[i % len(others)], others[(i + 2) % len(others)]
            a, b = records_for(topic + "-a", RECORDS), records_for(topic + "-b", RECORDS)
            produce_confluent(self.broker.bootstrap, topic, first, a)
            produce_kafka_python(self.broker.bootstrap, topic, second, b)
            self.expected[topic] = a + b
            for h in stored_batches(self.broker.port, topic):
                if target == "producer":
                    expect = first if h["base_offset"] < RECORDS else second
                else:
                    expect = want
                assert h["codec"] == w.CODECS[expect], "%s: batch at %d stored in codec %d, expected %s (%s then %s produced)" % (
                    topic, h["base_offset"], h["codec"], expect, first, second)

    def levels(self):
        topics = {}
        for codec, key, low, high in LEVELS:
            for level in (low, high):
                topics["lv-%s-%d" % (codec, level)] = {"compression.type": codec, key: str(level)}
        self.create(topics)
        rng = random.Random(7)
        words = [b"kafka", b"runnel", b"batch", b"offset", b"segment", b"producer", b"zstd", b"level"]
        recs = [(b"lk%d" % i, b" ".join(rng.choice(words) for _ in range(400)), [], BASE_TS + i) for i in range(40)]
        raw = b"".join(w.record(i, i, k, v, h) for i, (k, v, h, _) in enumerate(recs))
        batch = w.producer_batch([(k, v, h) for k, v, h, _ in recs], BASE_TS, -1, -1, -1)
        for codec, key, low, high in LEVELS:
            payloads = {}
            for level in (low, high):
                topic = "lv-%s-%d" % (codec, level)
                with w.Connection(self.broker.port) as c:
                    res = w.parse_produce_v8(c.call(w.produce_v8(1, -1, {topic: [(0, batch)]}), 1))
                assert res[(topic, 0)][:2] == (0, 0), "%s: %s" % (topic, res)
                self.expected[topic] = [(k, v, h, ts) for k, v, h, ts in recs]
                (h,) = stored_batches(self.broker.port, topic)
                assert h["codec"] == w.CODECS[codec], "%s: stored in codec %d" % (topic, h["codec"])
                assert decompress(codec, h["payload"]) == raw, "%s: the payload does not decompress to the records sent" % topic
                payloads[level] = h["payload"]
            print("  %s: %d bytes at %s=%d, %d at %d (uncompressed %d)" % (
                codec, len(payloads[low]), key, low, len(payloads[high]), high, len(raw)), flush=True)
            assert payloads[low] != payloads[high], "%s: the same payload at levels %d and %d" % (codec, low, high)
            assert len(payloads[high]) <= len(payloads[low]), "%s: level %d larger than level %d" % (codec, high, low)

    # -- both clients read everything -----------------------------------------------

    def read_all(self, reader_name, reader):
        for topic, want in sorted(self.expected.items()):
            check_records(topic, reader_name, reader(self.broker.bootstrap, topic, len(want)), want)

    # -- corrupt payloads ---------------------------------------------------------------

    def corrupt_payloads(self):
        self.create({"corrupt-producer": {}, "corrupt-gzip": {"compression.type": "gzip"}})
        rng = random.Random(11)
        recs = [(b"k%d" % i, b"corrupt test value %d" % i * 5, []) for i in range(10)]
        raw = b"".join(w.record(i, i, k, v, h) for i, (k, v, h) in enumerate(recs))
        good = {"gzip": gzip.compress(raw), "lz4": lz4.frame.compress(raw),
                "zstd": zstandard.ZstdCompressor().compress(raw)}
        cases = []
        for codec in ("gzip", "snappy", "lz4", "zstd"):
            cases.append((codec, "garbage", bytes(rng.randrange(256) for _ in range(200))))
            if codec in good:
                cases.append((codec, "cut short", good[codec][:len(good[codec]) // 2]))
        # The same damage in a valid frame's body: a gzip stream whose deflate data is flipped.
        flipped = bytearray(good["gzip"])
        for i in range(12, len(flipped) - 8):
            flipped[i] ^= 0x5A
        cases.append(("gzip", "deflate data flipped", bytes(flipped)))
        for topic in ("corrupt-producer", "corrupt-gzip"):
            # One good batch first, so "nothing stored" is measured against a non-empty log.
            with w.Connection(self.broker.port) as c:
                res = w.parse_produce_v8(c.call(w.produce_v8(1, -1, {topic: [(0, w.record_batch(recs, BASE_TS))]}), 1))
            assert res[(topic, 0)][0] == 0, res
            for codec, what, payload in cases:
                before = log_end(self.broker.port, topic)
                batch = w.producer_batch(recs, BASE_TS, -1, -1, -1, codec=w.CODECS[codec], payload=payload)
                with w.Connection(self.broker.port) as c:
                    err, base, msg = w.parse_produce_v8(c.call(w.produce_v8(2, -1, {topic: [(0, batch)]}), 2))[(topic, 0)]
                after = log_end(self.broker.port, topic)
                assert err == CORRUPT_MESSAGE, "%s, %s %s payload: error %d (%s), expected CORRUPT_MESSAGE" % (
                    topic, codec, what, err, msg)
                assert after == before, "%s, %s %s payload: log end %d -> %d" % (topic, codec, what, before, after)
            assert log_end(self.broker.port, topic) == len(recs)


def main():
    broker = Runnel(overrides={"num.partitions": "1"})
    with broker:
        m = Matrix(broker)

        def graceful_stop():
            assert broker.stop() == 0, "exit status after SIGTERM (a sanitizer report makes it non-zero)"

        rc = run_tests([
            ("each codec from librdkafka and kafka-python is stored in that codec", m.clients_produce_every_codec),
            ("compression.type %s: stored in the target codec" % ", ".join(TARGETS), m.recompression_targets),
            ("compression levels change the stored payload", m.levels),
            ("confluent-kafka reads every topic exactly", lambda: m.read_all("confluent", read_confluent)),
            ("kafka-python reads every topic exactly", lambda: m.read_all("kafka-python", read_kafka_python)),
            ("a corrupt compressed payload is CORRUPT_MESSAGE, nothing stored", m.corrupt_payloads),
            ("graceful stop", graceful_stop),
        ], broker)
    sys.exit(rc)


if __name__ == "__main__":
    main()
