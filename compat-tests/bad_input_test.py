"""Bad input through a raw socket: each gets Kafka's answer, the broker
stays up (a new connection is served) and the data already written is
intact (read back with confluent-kafka after every case).

Kafka's answers: a frame outside [0, socket.request.max.bytes], a header
that does not parse, an unknown API key or an unsupported version of a
known API close the connection; bytes after a request's last field are
ignored (librdkafka 2.x sends some); ApiVersions at an unknown version is
answered at v0 with UNSUPPORTED_VERSION (35) and the ApiVersions range
(KIP-511); an invalid topic name is INVALID_TOPIC_EXCEPTION (17) with
Kafka's message; a batch whose CRC is wrong is CORRUPT_MESSAGE (2) for
that partition only (and, with acks=0, a closed connection).

usage: /usr/bin/python3 bad_input_test.py <runnel binary>
"""

import random
import socket
import struct
import sys
import time

from confluent_kafka import OFFSET_BEGINNING, Consumer, TopicPartition

import kafka_wire as w
from runnel_harness import Runnel, run_tests

MAX_REQUEST = 65536
TOPIC = "intact"
BASE_TS = int(time.time() * 1000) - 60_000

UNSUPPORTED_VERSION = 35
INVALID_TOPIC_EXCEPTION = 17
CORRUPT_MESSAGE = 2


def batch_records(tag, n):
    return [(("%s-k%d" % (tag, i)).encode(), ("%s-value-%d" % (tag, i)).encode() * (1 + i % 3),
             [("tag", tag.encode()), ("i", str(i).encode())]) for i in range(n)]


class Test:
    def __init__(self, broker):
        self.broker = broker
        self.corr = 100
        # (partition) -> [(key, value, headers, timestamp)] in offset order
        self.written = {0: [], 1: []}

    def next_corr(self):
        self.corr += 1
        return self.corr

    def conn(self):
        return w.Connection(self.broker.port)

    # -- the invariant checked after every case ------------------------------

    def still_up_and_intact(self):
        assert self.broker.alive(), "the broker process died"
        with self.conn() as c:
            corr = self.next_corr()
            err, keys = w.parse_api_versions_v0(c.call(w.api_versions_v0(corr), corr))
            assert err == 0 and keys, (err, keys)
            corr = self.next_corr()
            topics = w.parse_metadata_v1_topics(c.call(w.metadata_v1(corr, [TOPIC]), corr))
            assert topics[TOPIC] == (0, [0, 1]), topics
        consumer = Consumer({"bootstrap.servers": self.broker.bootstrap, "broker.address.family": "v4",
                             "group.id": "compat-unused", "enable.auto.commit": False,
                             "enable.partition.eof": True})
        consumer.assign([TopicPartition(TOPIC, p, OFFSET_BEGINNING) for p in (0, 1)])
        got, eof = {0: [], 1: []}, set()
        deadline = time.monotonic() + 30
        try:
            while len(eof) < 2 and time.monotonic() < deadline:
                m = consumer.poll(0.5)
                if m is None:
                    continue
                if m.error():
                    if m.error().code() == -191 and len(got[m.partition()]) == len(self.written[m.partition()]):
                        eof.add(m.partition())
                    elif m.error().code() != -191:
                        raise AssertionError("consumer: %s" % m.error())
                    continue
                assert m.offset() == len(got[m.partition()]), "offset %d after %d records" % (m.offset(), len(got[m.partition()]))
                got[m.partition()].append((m.key(), m.value(), m.headers(), m.timestamp()[1]))
        finally:
            consumer.close()
        for p in (0, 1):
            assert got[p] == self.written[p], "partition %d: %d records read, %d written; first difference at %s" % (
                p, len(got[p]), len(self.written[p]),
                next((i for i, (a, b) in enumerate(zip(got[p], self.written[p])) if a != b), "the end"))

    def produce_ok(self, c, batches, acks=-1):
        """batches: {partition: (tag, n)}; every partition must succeed."""
        parts, expected = [], {}
        for p, (tag, n) in batches.items():
            recs = batch_records(tag, n)
            parts.append((p, w.record_batch(recs, BASE_TS)))
            expected[p] = [(k, v, h, BASE_TS + i) for i, (k, v, h) in enumerate(recs)]
        corr = self.next_corr()
        res = w.parse_produce_v8(c.call(w.produce_v8(corr, acks, {TOPIC: parts}), corr))
        for p in batches:
            err, base, msg = res[(TOPIC, p)]
            assert err == 0, "produce to %d: error %d %s" % (p, err, msg)
            assert base == len(self.written[p]), "base offset %d, expected %d" % (base, len(self.written[p]))
            self.written[p] += expected[p]

    # -- cases -----------------------------------------------------------------

    def setup_topic_and_data(self):
        with self.conn() as c:
            corr = self.next_corr()
            res = w.parse_create_topics_v4(c.call(w.create_topics_v4(corr, [(TOPIC, 2, 1)]), corr))
            assert res == [(TOPIC, 0, None)], res
            self.produce_ok(c, {0: ("first", 10), 1: ("first", 7)})
            self.produce_ok(c, {0: ("second", 3)})
        self.still_up_and_intact()

    def garbage_frames(self):
        rng = random.Random(20261129)
        cases = [
            ("empty frame", w.i32(0)),
            ("frame shorter than a header", w.i32(3) + b"\x00\x03\x00"),
            ("client id longer than the frame", w.i32(10) + w.i16(3) + w.i16(1) + w.i32(1) + w.i16(500)),
            ("Metadata v1 with a garbage body",
             w.request(3, 1, 5, bytes(rng.randrange(256) for _ in range(40)))),
            ("CreateTopics v4 with a truncated body", w.request(19, 4, 6, w.i32(1) + w.string("abc"))),
            ("Produce v8 with an array count past the frame",
             w.request(0, 8, 7, w.string(None) + w.i16(1) + w.i32(1000) + w.i32(1_000_000))),
        ]
        for n in range(8):
            body = bytes(rng.randrange(256) for _ in range(rng.randrange(4, 200)))
            body = w.i16(rng.randrange(100, 30000)) + body  # an API key no one serves
            cases.append(("random frame %d" % n, w.i32(len(body)) + body))
        for what, frame in cases:
            with self.conn() as c:
                c.send(frame)
                c.expect_closed(what)
        self.still_up_and_intact()

    def oversize_frames(self):
        for size in (MAX_REQUEST + 1, 1 << 30, 0x7FFFFFFF):
            with self.conn() as c:
                c.send(w.i32(size) + b"\x00\x12\x00\x00")  # refused on the size alone, unread
                c.expect_closed("size %d over socket.request.max.bytes=%d" % (size, MAX_REQUEST))
        # A request of exactly the limit is read and answered: Kafka ignores
        # the bytes after a request's last field (here zero padding).
        with self.conn() as c:
            frame = w.request(3, 1, 9, w.i32(-1))
            frame = w.i32(MAX_REQUEST) + frame[4:] + b"\x00" * (MAX_REQUEST - len(frame) + 4)
            topics = w.parse_metadata_v1_topics(c.call(frame, 9))
            assert TOPIC in topics, "all-topics Metadata v1 with padding: %s" % topics
        self.still_up_and_intact()

    def librdkafka_padded_metadata(self):
        # librdkafka 2.x (e.g. 2.16) asks for all topics at Metadata v9+ with
        # its 4-byte array-count placeholder left in: null topics (0x00), then
        # 00 00 00 read as AllowAutoTopicCreation, IncludeTopicAuthorizedOperations
        # and no tags, then 3 more bytes. Kafka answers it; so must we.
        with self.conn() as c:
            corr = self.next_corr()
            body = b"\x00\x00\x00\x00" + b"\x01" + b"\x00" + b"\x00"
            c.send(w.request(3, 13, corr, body, client_id="rdkafka", flexible=True))
            resp = c.response(corr)
            assert resp[0] == 0, "response header v1: tagged fields %r" % resp[:1]
            r = w.Reader(resp[1:])
            r.i32()  # throttle
            brokers = r.i8() - 1  # compact array length, one varint byte
            assert brokers == 1, "%d brokers in the answer" % brokers
        self.still_up_and_intact()

    def negative_sizes(self):
        for size in (-1, -2, -0x80000000):
            with self.conn() as c:
                c.send(w.i32(size) + b"\x00" * 16)
                c.expect_closed("negative size %d" % size)
        self.still_up_and_intact()

    def unknown_api_keys(self):
        for key in (68, 999, 32767, -1, -32768):
            with self.conn() as c:
                c.send(w.request(key, 0, 11, b""))
                c.expect_closed("API key %d" % key)
        self.still_up_and_intact()

    def unsupported_versions(self):
        # Metadata v99, v14 (one past Kafka 4's max), v-1; Fetch v3 (below
        # Kafka 4's floor of 4); CreateTopics v1 (below 2); DeleteTopics v0.
        for key, version in ((3, 99), (3, 14), (3, -1), (1, 3), (19, 1), (20, 0)):
            with self.conn() as c:
                c.send(w.request(key, version, 12, w.i32(-1)))
                c.expect_closed("API key %d version %d" % (key, version))
        self.still_up_and_intact()

    def api_versions_unknown_version(self):
        with self.conn() as c:
            for version, flexible in ((99, True), (5, True), (32767, True)):
                corr = self.next_corr()
                body = w.uvarint(5) + b"kcat" + w.uvarint(4) + b"1.0" + w.uvarint(0) if flexible else b""
                err, keys = w.parse_api_versions_v0(c.call(w.request(18, version, corr, body, flexible=flexible), corr))
                assert err == UNSUPPORTED_VERSION, "ApiVersions v%d: error %d" % (version, err)
                assert keys == [(18, 0, 4)], "ApiVersions v%d: api keys %r" % (version, keys)
            # The connection stays open and serves the version the client retries with.
            corr = self.next_corr()
            err, keys = w.parse_api_versions_v0(c.call(w.api_versions_v0(corr), corr))
            assert err == 0, err
            served = {k: (lo, hi) for k, lo, hi in keys}
            assert served[18] == (0, 4) and served[0][1] >= 9 and served[3] == (0, 13), served
        self.still_up_and_intact()

    def invalid_topic_names(self):
        long_name = "x" * 250
        cases = [
            ("bad name!", "Topic name \"bad name!\" is illegal, it contains a character other than "
                          "ASCII alphanumerics, '.', '_' and '-'"),
            ("", "Topic name is illegal, it can't be empty"),
            (".", "Topic name cannot be \".\" or \"..\""),
            ("..", "Topic name cannot be \".\" or \"..\""),
            (long_name, "Topic name is illegal, it can't be longer than 249 characters, topic name: " + long_name),
            ("tab\there", None),
            ("ünïcode", None),
        ]
        with self.conn() as c:
            corr = self.next_corr()
            topics = [(name, 1, 1) for name, _ in cases] + [("valid.name_ok-1", 1, 1)]
            res = w.parse_create_topics_v4(c.call(w.create_topics_v4(corr, topics), corr))
            by_name = {name: (err, msg) for name, err, msg in res}
            assert len(res) == len(topics), res
            for name, message in cases:
                err, msg = by_name[name]
                assert err == INVALID_TOPIC_EXCEPTION, "%r: error %d (%s)" % (name, err, msg)
                if message is not None:
                    assert msg == message, "%r: message %r" % (name, msg)
            assert by_name["valid.name_ok-1"] == (0, None), by_name["valid.name_ok-1"]
            # Metadata never auto-creates an invalid name: it answers 17 for it.
            corr = self.next_corr()
            md = w.parse_metadata_v1_topics(c.call(w.metadata_v1(corr, ["bad name!"]), corr))
            assert md["bad name!"][0] == INVALID_TOPIC_EXCEPTION, md
            corr = self.next_corr()
            md = w.parse_metadata_v1_topics(c.call(w.metadata_v1(corr), corr))
            # Only the valid topic was created (__consumer_offsets appears once a
            # consumer group has been used, as in Kafka).
            user_topics = {name for name in md if not name.startswith("__")}
            assert user_topics == {TOPIC, "valid.name_ok-1"}, sorted(md)
        self.still_up_and_intact()

    def produce_wrong_crc(self):
        with self.conn() as c:
            # One partition's batch has a wrong CRC, the other's is good: only
            # the bad one is refused, and the connection stays usable.
            bad = w.record_batch(batch_records("bad-crc", 5), BASE_TS, crc_xor=0x1)
            good_recs = batch_records("beside-bad", 4)
            good = w.record_batch(good_recs, BASE_TS)
            corr = self.next_corr()
            res = w.parse_produce_v8(c.call(w.produce_v8(corr, -1, {TOPIC: [(0, bad), (1, good)]}), corr))
            err, base, msg = res[(TOPIC, 0)]
            assert err == CORRUPT_MESSAGE, "wrong CRC: error %d (%s)" % (err, msg)
            assert base == -1, base
            err, base, msg = res[(TOPIC, 1)]
            assert err == 0 and base == len(self.written[1]), (err, base, msg)
            self.written[1] += [(k, v, h, BASE_TS + i) for i, (k, v, h) in enumerate(good_recs)]

            # A flipped byte inside a record (the stored CRC is then wrong too).
            flipped = bytearray(w.record_batch(batch_records("flipped", 3), BASE_TS))
            flipped[-3] ^= 0x40
            # A batch whose length runs past the bytes sent.
            truncated = w.record_batch(batch_records("truncated", 3), BASE_TS)[:-5]
            for what, batch in (("a flipped record byte", bytes(flipped)), ("a truncated batch", truncated)):
                corr = self.next_corr()
                res = w.parse_produce_v8(c.call(w.produce_v8(corr, 1, {TOPIC: [(0, batch)]}), corr))
                err, base, msg = res[(TOPIC, 0)]
                assert err == CORRUPT_MESSAGE, "%s: error %d (%s)" % (what, err, msg)

            self.produce_ok(c, {0: ("after-bad-crc", 2)})
        # acks=0 gets no response: Kafka closes the connection instead.
        with self.conn() as c:
            bad = w.record_batch(batch_records("bad-crc-acks0", 2), BASE_TS, crc_xor=0xFFFF)
            c.send(w.produce_v8(self.next_corr(), 0, {TOPIC: [(0, bad)]}))
            c.expect_closed("acks=0 produce with a wrong CRC")
        self.still_up_and_intact()

    def consumer_gone_during_long_poll(self):
        # A Fetch waits (min_bytes beyond what there is) and its client goes
        # away; at max_wait_ms the broker sends ~750 KB with sendfile into
        # the closed socket, which fails with EPIPE. That costs the
        # connection, never the broker (SIGPIPE is ignored).
        with self.conn() as c:
            for n in range(20):
                self.produce_ok(c, {1: ("bulk-%d" % n, 600)})
        for _ in range(2):
            c = self.conn()
            c.send(w.fetch_v4(self.next_corr(), TOPIC, 1, 0, max_wait_ms=500, min_bytes=100 << 20))
            time.sleep(0.2)  # the Fetch is parked
            c.close()
            time.sleep(1.0)  # it times out and writes into the closed socket
            assert self.broker.alive(), "the broker died writing a Fetch response to a closed socket"
        self.still_up_and_intact()

    def good_request_then_garbage(self):
        # A pipelined good request is still answered before the close.
        with self.conn() as c:
            corr = self.next_corr()
            c.send(w.api_versions_v0(corr) + w.request(999, 0, corr + 1, b""))
            err, keys = w.parse_api_versions_v0(c.response(corr))
            assert err == 0, err
            c.expect_closed("unknown API key after a good request")
        self.still_up_and_intact()

    def survives_restart(self):
        self.broker.restart(graceful=True)
        self.still_up_and_intact()


def main():
    broker = Runnel(overrides={"socket.request.max.bytes": str(MAX_REQUEST)})
    with broker:
        t = Test(broker)
        rc = run_tests([
            ("create a topic and produce by hand (CreateTopics v4, Produce v8)", t.setup_topic_and_data),
            ("garbage frames close the connection", t.garbage_frames),
            ("frames over socket.request.max.bytes close the connection", t.oversize_frames),
            ("librdkafka's padded all-topics Metadata v13 is answered", t.librdkafka_padded_metadata),
            ("negative frame sizes close the connection", t.negative_sizes),
            ("unknown API keys close the connection", t.unknown_api_keys),
            ("unsupported versions of known APIs close the connection", t.unsupported_versions),
            ("ApiVersions at unknown versions: v0 answer, error 35, ApiVersions range", t.api_versions_unknown_version),
            ("invalid topic names: INVALID_TOPIC_EXCEPTION (17) with Kafka's messages", t.invalid_topic_names),
            ("a batch with a wrong CRC: CORRUPT_MESSAGE (2)", t.produce_wrong_crc),
            ("a consumer gone during a long-poll Fetch costs only its connection", t.consumer_gone_during_long_poll),
            ("a good request pipelined before garbage is answered", t.good_request_then_garbage),
            ("the data after a graceful restart", t.survives_restart),
        ], broker)
    sys.exit(rc)


if __name__ == "__main__":
    main()
