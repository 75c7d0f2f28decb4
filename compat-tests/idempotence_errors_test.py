"""Each answer of the idempotent-producer checks, provoked on purpose with
hand-built InitProducerId and Produce requests (RecordBatch v2 bytes with
our own producer id, epoch and base sequence), the log end offset read with
ListOffsets after each. Kafka 4.x's answers (ProducerStateManager,
ProducerAppendInfo, UnifiedLog.analyzeAndValidateProducerState):

- a batch equal to one of the last five of its producer (same epoch, same
  first and last sequence) is a success carrying the ORIGINAL base offset,
  and nothing is appended; an older one, or one that only overlaps, is
  OUT_OF_ORDER_SEQUENCE_NUMBER (45), as is a gap;
- an older epoch is INVALID_PRODUCER_EPOCH (47); a newer one must start at 0;
- sequences wrap from INT32_MAX to 0, also inside one batch;
- a producer with no state (never seen, or expired after
  producer.id.expiration.ms) is accepted at any sequence: Kafka 4.x never
  answers UNKNOWN_PRODUCER_ID (59) to Produce (KIP-360);
- InitProducerId without a transactional id always hands out a fresh id at
  epoch 0, also when v3+ names a current id and epoch (no
  INVALID_PRODUCER_ID_MAPPING, 49); naming only one of the two is
  INVALID_REQUEST (42);
- the state outlives DeleteRecords past the producer's batches;
- a producer id with a negative base sequence is INVALID_RECORD (87);
- InitProducerId with a transactional id before __transaction_state exists
  is NOT_COORDINATOR (16), as Kafka (transactions_test.py covers the rest);
  a Produce holding a transactional batch without a transactional id gets
  TRANSACTIONAL_ID_AUTHORIZATION_FAILED (53) on every partition
  (KafkaApis.handleProduceRequest), nothing appended anywhere.
What broker/producer_state_test.cc checks on the table alone is checked
here through the wire, with the responses' offsets and the log itself.

usage: /usr/bin/python3 idempotence_errors_test.py <runnel binary>
"""

import sys
import time

import kafka_wire as w
from runnel_harness import Runnel, run_tests

TOPIC = "idem-errors"
PARTITIONS = 7
NOW = int(time.time() * 1000)

NONE = 0
OUT_OF_ORDER_SEQUENCE_NUMBER = 45
INVALID_PRODUCER_EPOCH = 47
TRANSACTIONAL_ID_AUTHORIZATION_FAILED = 53
NOT_COORDINATOR = 16
INVALID_REQUEST = 42
INVALID_RECORD = 87


class Wire:
    def __init__(self, broker):
        self.broker = broker
        self.corr = 0

    def call(self, build, parse, *args, **kw):
        self.corr += 1
        with w.Connection(self.broker.port) as c:
            return parse(c.call(build(self.corr, *args, **kw), self.corr))

    def init_producer_id(self):
        err, pid, epoch = self.call(w.init_producer_id_v0, w.parse_init_producer_id)
        assert err == NONE and pid >= 0 and epoch == 0, (err, pid, epoch)
        return pid

    def log_end(self, partition):
        res = self.call(w.list_offsets_v1, w.parse_list_offsets_v1, TOPIC, [partition])
        err, offset = res[(TOPIC, partition)]
        assert err == NONE, err
        return offset

    def produce(self, partition, pid, epoch, seq, n, ts=NOW, transactional=False):
        """Sends one batch of n records; -> (error_code, base_offset, log end offset after)."""
        recs = [(b"k", ("p%d-e%d-s%d+%d" % (pid, epoch, seq, i)).encode(), []) for i in range(n)]
        batch = w.producer_batch(recs, ts, pid, epoch, seq, transactional=transactional)
        res = self.call(w.produce_v8, w.parse_produce_v8, -1, {TOPIC: [(partition, batch)]})
        err, base, _ = res[(TOPIC, partition)]
        return err, base, self.log_end(partition)

    def expect(self, partition, pid, epoch, seq, n, error, base=None, what=""):
        before = self.log_end(partition)
        err, got_base, after = self.produce(partition, pid, epoch, seq, n)
        where = "%s (pid %d epoch %d seq %d n %d)" % (what, pid, epoch, seq, n)
        assert err == error, "%s: error %d, expected %d" % (where, err, error)
        if error != NONE:
            assert after == before, "%s: refused, yet the log end moved %d -> %d" % (where, before, after)
        if base is not None:
            assert got_base == base, "%s: base offset %d, expected %d" % (where, got_base, base)
        return got_base, before, after


def create_topic(wire):
    res = wire.call(w.create_topics_v4, w.parse_create_topics_v4, [(TOPIC, PARTITIONS, 1)])
    assert res == [(TOPIC, 0, None)], res


def duplicates_and_gaps(wire):
    p, pid = 0, wire.init_producer_id()
    wire.expect(p, pid, 0, 0, 3, NONE, base=0, what="first batch")
    wire.expect(p, pid, 0, 3, 2, NONE, base=3, what="second batch")
    for seq, n, base in ((0, 3, 0), (3, 2, 3), (0, 3, 0)):
        _, before, after = wire.expect(p, pid, 0, seq, n, NONE, base=base, what="duplicate")
        assert after == before == 5, "a duplicate was appended: log end %d -> %d" % (before, after)
    wire.expect(p, pid, 0, 7, 1, OUT_OF_ORDER_SEQUENCE_NUMBER, what="gap after 4")
    wire.expect(p, pid, 0, 1, 3, OUT_OF_ORDER_SEQUENCE_NUMBER, what="overlap of the first batch")
    wire.expect(p, pid, 0, 3, 3, OUT_OF_ORDER_SEQUENCE_NUMBER, what="same first sequence, longer batch")
    wire.expect(p, pid, 0, 5, 1, NONE, base=5, what="next in sequence")
    # Five more batches push the first two out of the retained five.
    for i in range(5):
        wire.expect(p, pid, 0, 6 + i, 1, NONE, base=6 + i, what="batch %d" % (6 + i))
    wire.expect(p, pid, 0, 0, 3, OUT_OF_ORDER_SEQUENCE_NUMBER, what="a duplicate no longer retained")
    wire.expect(p, pid, 0, 6, 1, NONE, base=6, what="the oldest retained duplicate")
    assert wire.log_end(p) == 11


def epochs(wire):
    p, pid = 1, wire.init_producer_id()
    wire.expect(p, pid, 0, 0, 2, NONE, base=0, what="epoch 0")
    wire.expect(p, pid, 1, 2, 1, OUT_OF_ORDER_SEQUENCE_NUMBER, what="a new epoch not at 0")
    wire.expect(p, pid, 1, 0, 1, NONE, base=2, what="a new epoch at 0")
    wire.expect(p, pid, 0, 2, 1, INVALID_PRODUCER_EPOCH, what="the old epoch, next sequence")
    wire.expect(p, pid, 0, 0, 2, INVALID_PRODUCER_EPOCH, what="the old epoch's batch again")
    wire.expect(p, pid, 1, 0, 1, NONE, base=2, what="duplicate in the new epoch")
    wire.expect(p, pid, 1, 1, 1, NONE, base=3, what="the new epoch continues")
    # Another producer id on the same partition keeps its own state.
    other = wire.init_producer_id()
    assert other != pid
    wire.expect(p, other, 0, 0, 1, NONE, base=4, what="a second producer")
    assert wire.log_end(p) == 5


def sequence_wrap(wire):
    p, pid = 2, wire.init_producer_id()
    top = w.INT32_MAX
    wire.expect(p, pid, 0, top - 1, 2, NONE, base=0, what="ends at INT32_MAX")
    wire.expect(p, pid, 0, 0, 2, NONE, base=2, what="wraps to 0")
    wire.expect(p, pid, 0, 2, 1, NONE, base=4, what="continues after the wrap")
    # A batch whose own sequences wrap: INT32_MAX-1 .. 1.
    pid2 = wire.init_producer_id()
    wire.expect(p, pid2, 0, top - 1, 4, NONE, base=5, what="wraps inside the batch")
    wire.expect(p, pid2, 0, top - 1, 4, NONE, base=5, what="duplicate of the wrapping batch")
    wire.expect(p, pid2, 0, 1, 1, OUT_OF_ORDER_SEQUENCE_NUMBER, what="repeats the batch's last sequence")
    wire.expect(p, pid2, 0, 2, 1, NONE, base=9, what="continues at 2")
    assert wire.log_end(p) == 10


def no_state_any_sequence(wire):
    p = 3
    fresh = wire.init_producer_id()
    wire.expect(p, fresh, 0, 1000, 2, NONE, base=0, what="a fresh id's first batch at 1000")
    wire.expect(p, fresh, 0, 1002, 1, NONE, base=2, what="and it continues")
    wire.expect(p, fresh, 0, 1004, 1, OUT_OF_ORDER_SEQUENCE_NUMBER, what="then a gap")
    # An id the broker never handed out, at a nonzero epoch too.
    wire.expect(p, 987654321, 7, 55, 1, NONE, base=3, what="an id never handed out")
    # Its state is per partition: another partition has none.
    wire.expect(4, fresh, 0, 77, 1, NONE, base=0, what="the same id on another partition")


def expired_state(wire):
    """State older than producer.id.expiration.ms (broker default: one day)
    is dropped, and the producer is then accepted at any sequence (where
    Kafka before KIP-360 answered UNKNOWN_PRODUCER_ID). Expiry measures the
    batch's own timestamp; it runs on a partition's first produce after a
    start."""
    p, pid = 5, wire.init_producer_id()
    two_days_ago = NOW - 2 * 86_400_000
    err, base, _ = wire.produce(p, pid, 0, 0, 2, ts=two_days_ago)
    assert (err, base) == (NONE, 0), (err, base)
    err, _, _ = wire.produce(p, pid, 0, 9, 1, ts=two_days_ago)
    assert err == OUT_OF_ORDER_SEQUENCE_NUMBER, "before expiry: error %d" % err
    wire.broker.restart(graceful=True)
    wire.expect(p, pid, 0, 9, 1, NONE, base=2, what="after expiry, any sequence")
    wire.expect(p, pid, 0, 11, 1, OUT_OF_ORDER_SEQUENCE_NUMBER, what="then the new state holds")


def state_outlives_delete_records(wire):
    """Kafka 4.x keeps a producer's state when DeleteRecords (or retention)
    moves the log start past its batches (ProducerStateManager.
    onLogStartOffsetIncremented drops only transactions): until it expires,
    a retried batch is still a duplicate and a gap still out of order."""
    p, pid = 6, wire.init_producer_id()
    wire.expect(p, pid, 0, 0, 3, NONE, base=0, what="first batch")
    wire.expect(p, pid, 0, 3, 2, NONE, base=3, what="second batch")
    res = wire.call(w.delete_records_v1, w.parse_delete_records_v1, TOPIC, [(p, 5)])
    assert res[(TOPIC, p)] == (NONE, 5), "DeleteRecords: %s" % res
    wire.expect(p, pid, 0, 3, 2, NONE, base=3, what="duplicate of a deleted batch")
    wire.expect(p, pid, 0, 9, 1, OUT_OF_ORDER_SEQUENCE_NUMBER, what="gap after deleted batches")
    wire.expect(p, pid, 0, 5, 1, NONE, base=5, what="next in sequence")


def init_producer_id_answers(wire):
    ids = set()
    for _ in range(3):
        ids.add(wire.init_producer_id())
    assert len(ids) == 3, "InitProducerId handed out %s" % ids
    pid = max(ids)
    # KIP-360: an idempotent producer names its id and epoch; Kafka ignores
    # them without a transactional id and hands out a fresh id at epoch 0.
    for named in ((pid, 0), (pid, 5), (123456789, 3)):
        err, new, epoch = wire.call(w.init_producer_id_v4, lambda b: w.parse_init_producer_id(b, flexible=True), *named)
        assert err == NONE and epoch == 0 and new >= 0 and new not in ids, (named, err, new, epoch)
        ids.add(new)
    for named in ((-1, 3), (pid, -1)):
        err, new, epoch = wire.call(w.init_producer_id_v4, lambda b: w.parse_init_producer_id(b, flexible=True), *named)
        assert err == INVALID_REQUEST, "id/epoch %s: error %d, expected INVALID_REQUEST" % (named, err)
    # A transactional id before any FindCoordinator created __transaction_state:
    # no partition of it is coordinated here yet, Kafka's NOT_COORDINATOR.
    err, new, epoch = wire.call(w.init_producer_id_v0, w.parse_init_producer_id, "txn-1")
    assert (err, new, epoch) == (NOT_COORDINATOR, -1, -1), (err, new, epoch)


def refused_batches(wire):
    p, pid = 0, wire.init_producer_id()
    before = wire.log_end(p)
    err, _, after = wire.produce(p, pid, 0, -1, 1)
    assert err == INVALID_RECORD and after == before, "negative base sequence: error %d, log end %d -> %d" % (
        err, before, after)
    # A transactional batch for partition 0 and a plain one for partition 4
    # in the same request: both refused.
    before4 = wire.log_end(4)
    txn = w.producer_batch([(b"k", b"txn", [])] * 2, NOW, pid, 0, 0, transactional=True)
    plain = w.producer_batch([(b"k", b"plain", [])], NOW, -1, -1, -1)
    res = wire.call(w.produce_v8, w.parse_produce_v8, -1, {TOPIC: [(p, txn), (4, plain)]})
    for part in (p, 4):
        err, base, _ = res[(TOPIC, part)]
        assert (err, base) == (TRANSACTIONAL_ID_AUTHORIZATION_FAILED, -1), "transactional request, partition %d: %s" % (
            part, res[(TOPIC, part)])
    assert (wire.log_end(p), wire.log_end(4)) == (before, before4), "a refused transactional request appended"
    # Neither left state behind: the producer is still new.
    wire.expect(p, pid, 0, 500, 1, NONE, base=before, what="after the refused batches")


def main():
    broker = Runnel(overrides={"num.partitions": "1"})
    with broker:
        wire = Wire(broker)
        rc = run_tests([
            ("create the topic", lambda: create_topic(wire)),
            ("duplicates answer the original offset; gaps and overlaps are out of order", lambda: duplicates_and_gaps(wire)),
            ("an old epoch is INVALID_PRODUCER_EPOCH; a new one starts at 0", lambda: epochs(wire)),
            ("sequences wrap at INT32_MAX", lambda: sequence_wrap(wire)),
            ("a producer with no state is accepted at any sequence", lambda: no_state_any_sequence(wire)),
            ("expired state: any sequence again, no UNKNOWN_PRODUCER_ID", lambda: expired_state(wire)),
            ("producer state outlives DeleteRecords", lambda: state_outlives_delete_records(wire)),
            ("InitProducerId: fresh ids, KIP-360 fields, transactional ids", lambda: init_producer_id_answers(wire)),
            ("negative sequence and transactional batches are refused", lambda: refused_batches(wire)),
        ], broker)
    sys.exit(rc)


if __name__ == "__main__":
    main()
