"""An idempotent librdkafka producer (confluent-kafka, enable.idempotence,
acks=all) writing numbered records to one partition, and the check made
after something was done to it on the way (idempotence_fault_test.py,
idempotence_restart_test.py): the partition, read back, holds every
acknowledged record exactly once, at the offset its acknowledgement named,
no record twice (acknowledged or not: a retried batch the broker already
had must not be appended again), all in the order produced, and the
producer saw no OUT_OF_ORDER_SEQUENCE_NUMBER and no fatal error.
"""

import os
import re
import threading
import time

from confluent_kafka import OFFSET_BEGINNING, Consumer, KafkaError, Producer, TopicPartition

_SEQ = re.compile(rb"^seq-(\d{7})$")
# Sequence errors a producer must never see from a broker that kept its state.
SEQUENCE_ERRORS = {KafkaError.OUT_OF_ORDER_SEQUENCE_NUMBER, KafkaError.DUPLICATE_SEQUENCE_NUMBER,
                   KafkaError.UNKNOWN_PRODUCER_ID, KafkaError.INVALID_PRODUCER_EPOCH}


def payload(i):
    return b"seq-%07d" % i


class Stream:
    def __init__(self, bootstrap, topic, partition=0, config=None):
        self.topic = topic
        self.partition = partition
        self.lock = threading.Lock()
        self.acked = {}          # record number -> offset its delivery report named
        self.failed = []         # (record number, error) from delivery reports
        self.client_errors = []  # errors librdkafka raised through error_cb that matter here
        self.produced = 0
        conf = {"bootstrap.servers": bootstrap, "broker.address.family": "v4",
                "enable.idempotence": True, "acks": "all",
                "linger.ms": 5, "batch.num.messages": 50,
                "message.timeout.ms": 120000, "error_cb": self._on_error}
        conf.update(config or {})
        if os.environ.get("RDKAFKA_DEBUG"):  # e.g. eos,protocol,msg when a run needs explaining
            conf["debug"] = os.environ["RDKAFKA_DEBUG"]
        self.producer = Producer(conf)

    def _on_error(self, err):
        # Disconnects and timeouts are expected here; they come as non-fatal
        # transport errors. A fatal error or a sequence error is a failure.
        if err.fatal() or err.code() in SEQUENCE_ERRORS:
            with self.lock:
                self.client_errors.append(err)

    def _on_delivery(self, n):
        def report(err, msg):
            with self.lock:
                if err is not None:
                    self.failed.append((n, err))
                else:
                    self.acked[n] = msg.offset()
        return report

    def produce(self, count, pause_every=0, pause_s=0.0):
        """Produces the next `count` records, serving delivery reports as it goes."""
        for _ in range(count):
            n = self.produced
            while True:
                try:
                    self.producer.produce(self.topic, payload(n), partition=self.partition,
                                          on_delivery=self._on_delivery(n))
                    break
                except BufferError:
                    self.producer.poll(0.05)
            self.produced += 1
            self.producer.poll(0)
            if pause_every and self.produced % pause_every == 0:
                self.producer.poll(pause_s)

    def acked_count(self):
        with self.lock:
            return len(self.acked)

    def finish(self, timeout):
        left = self.producer.flush(timeout)
        assert left == 0, "%d records still undelivered after %.0f s" % (left, timeout)

    def check(self, bootstrap, read_timeout=60, require_all_acked=True):
        """Reads the partition back and checks it (module docstring). Returns
        the number of records read."""
        assert not self.client_errors, "producer errors: %s" % self.client_errors[:5]
        bad = [(n, e) for n, e in self.failed if e.code() in SEQUENCE_ERRORS or e.fatal()]
        assert not bad, "sequence errors in delivery reports: %s" % bad[:5]
        if require_all_acked:
            assert not self.failed, "%d records failed: %s" % (len(self.failed), self.failed[:5])
            assert len(self.acked) == self.produced, "%d of %d acknowledged" % (len(self.acked), self.produced)
        records = read_partition(bootstrap, self.topic, self.partition, read_timeout)
        seen = {}
        for offset, value in records:
            m = _SEQ.match(value or b"")
            assert m, "offset %d: value %r is not one this test wrote" % (offset, value)
            n = int(m.group(1))
            assert n not in seen, "record %d is in the log twice, at offsets %d and %d" % (n, seen[n], offset)
            seen[n] = offset
        numbers = [int(_SEQ.match(v).group(1)) for _, v in records]
        for i in range(1, len(numbers)):
            assert numbers[i] > numbers[i - 1], "offset %d holds record %d after record %d: out of order" % (
                records[i][0], numbers[i], numbers[i - 1])
        for n, offset in sorted(self.acked.items()):
            assert n in seen, "acknowledged record %d (offset %d) is missing" % (n, offset)
            assert seen[n] == offset, "record %d acknowledged at offset %d is at offset %d" % (n, offset, seen[n])
        return len(records)


def read_partition(bootstrap, topic, partition, timeout):
    """[(offset, value)] from the beginning to the high watermark, checking
    that offsets are consecutive from 0."""
    c = Consumer({"bootstrap.servers": bootstrap, "broker.address.family": "v4", "group.id": "compat-unused",
                  "enable.auto.commit": False, "enable.partition.eof": True})
    out = []
    try:
        low, high = c.get_watermark_offsets(TopicPartition(topic, partition), timeout=30)
        assert low == 0, "log start offset %d" % low
        c.assign([TopicPartition(topic, partition, OFFSET_BEGINNING)])
        deadline = time.monotonic() + timeout
        while len(out) < high:
            assert time.monotonic() < deadline, "read %d of %d records in %.0f s" % (len(out), high, timeout)
            m = c.poll(0.5)
            if m is None:
                continue
            if m.error():
                if m.error().code() == KafkaError._PARTITION_EOF:
                    continue
                raise AssertionError("consumer: %s" % m.error())
            assert m.offset() == len(out), "offset %d after %d records: a gap" % (m.offset(), len(out))
            out.append((m.offset(), m.value()))
    finally:
        c.close()
    return out
