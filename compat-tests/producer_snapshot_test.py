"""Producer-state snapshots on disk, with an idempotent librdkafka producer
(confluent-kafka) across broker restarts.

One producer (enable.idempotence=true, acks=all, five requests in flight)
writes a numbered stream to a one-partition topic with small segments, so
the log rolls and producer-state snapshots are written at each roll. In the
middle of the stream the broker is stopped gracefully: the stop must leave a
producer snapshot at the log end offset (the file is decoded here, CRC-32C
checked, and must hold the producer at epoch 0 with its last sequence and
offset), and after the restart the producer goes on. Then the same with
SIGKILL. No delivery may fail, no error may reach the client (an
OUT_OF_ORDER_SEQUENCE_NUMBER would), the producer keeps epoch 0 (a bumped
epoch would mean the client had to recover from an error), and the
partition ends up holding every record exactly once, in order.

usage: /usr/bin/python3 producer_snapshot_test.py <runnel binary>
"""

import glob
import os
import struct
import sys

from confluent_kafka import OFFSET_BEGINNING, Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from runnel_harness import Runnel, run_tests

TOPIC = "producer-snapshots"
VALUE_SIZE = 700
SEGMENT_BYTES = 65536


def value(i):
    return (b"%08d|" % i).ljust(VALUE_SIZE, b"x")


def crc32c(data):
    crc = 0xFFFFFFFF
    for b in data:
        crc ^= b
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 & -(crc & 1))
    return crc ^ 0xFFFFFFFF


def log_end_offset(partition_dir):
    """The next offset after the last batch in the partition's newest segment file."""
    end = 0
    for path in sorted(glob.glob(os.path.join(partition_dir, "*.log"))):
        end = max(end, int(os.path.basename(path)[:20]))
        with open(path, "rb") as f:
            data = f.read()
        at = 0
        while at + 61 <= len(data):
            base, length = struct.unpack(">qi", data[at:at + 12])
            (last_delta,) = struct.unpack(">i", data[at + 23:at + 27])
            end = max(end, base + last_delta + 1)
            at += 12 + length
    return end


def read_snapshot(path):
    """Kafka's producer snapshot v1: version, CRC-32C of the rest, then 46-byte entries."""
    with open(path, "rb") as f:
        data = f.read()
    version, crc, count = struct.unpack(">hIi", data[:10])
    assert version == 1, "snapshot version %d" % version
    assert crc == crc32c(data[6:]), "snapshot CRC mismatch"
    assert len(data) == 10 + 46 * count, "snapshot length %d for %d entries" % (len(data), count)
    entries = []
    for k in range(count):
        pid, epoch, last_seq, last_offset, delta, ts, coord, txn = struct.unpack(
            ">qhiqiqiq", data[10 + 46 * k:10 + 46 * (k + 1)])
        entries.append(dict(pid=pid, epoch=epoch, last_seq=last_seq, last_offset=last_offset, delta=delta,
                            ts=ts, coordinator_epoch=coord, txn_first_offset=txn))
    return entries


class Stream:
    """One idempotent producer that outlives the broker restarts."""

    def __init__(self, bootstrap):
        self.errors = []
        self.failed = []
        self.delivered = 0
        self.next = 0
        self.producer = Producer({
            "bootstrap.servers": bootstrap, "broker.address.family": "v4",
            "enable.idempotence": True, "acks": "all", "max.in.flight.requests.per.connection": 5,
            "linger.ms": 2, "batch.num.messages": 20, "message.timeout.ms": 120000,
            "reconnect.backoff.ms": 50, "reconnect.backoff.max.ms": 500,
            "error_cb": lambda err: self.errors.append(err),
        })

    def _on_delivery(self, err, msg):
        if err is not None:
            self.failed.append(err)
        else:
            self.delivered += 1

    def produce(self, n):
        for _ in range(n):
            self.producer.produce(TOPIC, value(self.next), partition=0, on_delivery=self._on_delivery)
            self.next += 1
            self.producer.poll(0)

    def flush(self):
        left = self.producer.flush(120)
        assert left == 0, "%d records undelivered" % left
        # librdkafka reports a lost broker connection through error_cb
        # (_TRANSPORT, _ALL_BROKERS_DOWN): expected here. Anything else is not.
        bad = [e for e in self.errors if e.code() not in (-195, -187)]
        assert not bad, bad[:3]
        assert not self.failed, self.failed[:3]
        assert self.delivered == self.next, (self.delivered, self.next)


def check_partition(bootstrap, n):
    c = Consumer({"bootstrap.servers": bootstrap, "broker.address.family": "v4", "group.id": "idem-check",
                  "enable.auto.commit": False, "enable.partition.eof": True})
    c.assign([TopicPartition(TOPIC, 0, OFFSET_BEGINNING)])
    got = []
    try:
        while True:
            msgs = c.consume(500, 10)
            assert msgs, "no records within 10 s after %d" % len(got)
            done = False
            for m in msgs:
                if m.error():
                    assert m.error().code() == -191, m.error()  # _PARTITION_EOF
                    done = True
                    continue
                assert m.offset() == len(got), "offset %d where %d was expected" % (m.offset(), len(got))
                got.append(m.value())
            if done:
                break
    finally:
        c.close()
    want = [value(i) for i in range(n)]
    if got != want:
        dups = len(got) - len(set(got))
        first_bad = next((k for k, (a, b) in enumerate(zip(got, want)) if a != b), min(len(got), len(want)))
        raise AssertionError("partition holds %d records (%d duplicates), %d sent; first difference at offset %d"
                             % (len(got), dups, n, first_bad))


def main():
    with Runnel() as r:
        admin = AdminClient({"bootstrap.servers": r.bootstrap, "broker.address.family": "v4"})
        futures = admin.create_topics([NewTopic(TOPIC, 1, 1, config={"segment.bytes": str(SEGMENT_BYTES)})])
        futures[TOPIC].result(30)
        partition_dir = os.path.join(r.log_dir, TOPIC + "-0")
        stream = Stream(r.bootstrap)
        state = {}

        def before_any_restart():
            stream.produce(1500)
            stream.flush()
            snapshots = glob.glob(os.path.join(partition_dir, "*.snapshot"))
            assert snapshots, "no producer snapshot after %d rolls" % len(glob.glob(partition_dir + "/*.log"))

        def graceful_restart_mid_stream():
            stream.produce(1500)
            stream.producer.poll(0.2)
            assert r.stop() == 0
            leo = log_end_offset(partition_dir)
            path = os.path.join(partition_dir, "%020d.snapshot" % leo)
            assert os.path.exists(path), "no snapshot at the log end offset %d: %s" % (
                leo, sorted(os.listdir(partition_dir)))
            entries = read_snapshot(path)
            assert len(entries) == 1, entries
            e = entries[0]
            # One producer, epoch 0, sequences from 0 with no gap: its last
            # sequence and last offset are both the log end offset - 1.
            assert e["epoch"] == 0 and e["last_seq"] == leo - 1 and e["last_offset"] == leo - 1, (e, leo)
            assert e["coordinator_epoch"] == -1 and e["txn_first_offset"] == -1, e
            state["pid"] = e["pid"]
            r.start()
            stream.flush()
            stream.produce(300)
            stream.flush()

        def sigkill_mid_stream():
            stream.produce(1500)
            stream.producer.poll(0.2)
            r.kill9()
            r.start()
            stream.flush()
            stream.produce(300)
            stream.flush()

        def every_record_exactly_once():
            check_partition(r.bootstrap, stream.next)
            # A last graceful stop: the producer is still the same one, at epoch 0.
            assert r.stop() == 0
            leo = log_end_offset(partition_dir)
            assert leo == stream.next, (leo, stream.next)
            entries = read_snapshot(os.path.join(partition_dir, "%020d.snapshot" % leo))
            assert [(e["pid"], e["epoch"], e["last_seq"]) for e in entries] == [(state["pid"], 0, leo - 1)], entries
            r.start()

        rc = run_tests([
            ("idempotent stream, snapshots written at segment rolls", before_any_restart),
            ("graceful restart mid-stream: snapshot at the log end offset, producer goes on", graceful_restart_mid_stream),
            ("SIGKILL mid-stream: producer goes on", sigkill_mid_stream),
            ("every record exactly once and in order, producer still at epoch 0", every_record_exactly_once),
        ], broker=r)
        stream.producer.flush(5)
    return rc


if __name__ == "__main__":
    sys.exit(main())
