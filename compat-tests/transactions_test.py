#!/usr/bin/python3
"""Transactions on one broker with librdkafka's transactional producer
(Debian's confluent-kafka, librdkafka 2.0.2), as an application uses them.

- commit, abort, commit over two partitions: a read_committed consumer gets
  exactly the committed records, a read_uncommitted one every data record,
  and each partition's end offset counts one marker per transaction;
- a second producer with the same transactional.id fences the first, whose
  next commit fails as fenced, while the second commits;
- a transaction left open by a producer that went away blocks read_committed
  readers at its first offset (the last stable offset), and the
  coordinator aborts it once transaction.timeout.ms passes;
- the coordinator's state survives a restart: after a SIGKILL the same
  transactional.id goes on (InitProducerId bumps the epoch it had), and a
  transaction committed before the kill stays committed;
- InitProducerId refuses a timeout above transaction.max.timeout.ms with
  INVALID_TRANSACTION_TIMEOUT;
- DescribeTransactions and ListTransactions (KIP-664, v1's filters) show an
  ongoing transaction with its partitions and then its completion;
- consume-transform-produce: send_offsets_to_transaction (AddOffsetsToTxn,
  TxnOffsetCommit) commits the group's offsets with the transaction's
  records and an aborted transaction leaves them where they were, also
  after a SIGKILL and the reload of __consumer_offsets.

usage: transactions_test.py <path to runnel>
"""
import os
import sys
import time
import uuid

from confluent_kafka import OFFSET_BEGINNING, Consumer, KafkaError, KafkaException, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kafka_wire as w  # noqa: E402
from runnel_harness import Runnel, run_tests  # noqa: E402

INVALID_TRANSACTION_TIMEOUT = 50
CONCURRENT_TRANSACTIONS = 51
TRANSACTIONAL_ID_NOT_FOUND = 105


def unique(prefix):
    return "%s-%s" % (prefix, uuid.uuid4().hex[:8])


def create_topic(broker, name, partitions=2):
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    for f in admin.create_topics([NewTopic(name, partitions, 1)], operation_timeout=30).values():
        f.result(timeout=30)


def producer(broker, txn_id, **extra):
    conf = {"bootstrap.servers": broker.bootstrap, "transactional.id": txn_id, "linger.ms": 5}
    conf.update(extra)
    p = Producer(conf)
    p.init_transactions(30)
    return p


def send(p, topic, values, partition=None):
    for i, v in enumerate(values):
        p.produce(topic, value=v, partition=i % 2 if partition is None else partition)
    p.flush(30)


def read_all(broker, topic, isolation, partitions=2, expect=None, timeout=20.0):
    """Every record value from the start of each partition, by partition."""
    c = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": unique("reader"),
                  "enable.auto.commit": False, "isolation.level": isolation, "enable.partition.eof": True})
    c.assign([TopicPartition(topic, p, 0) for p in range(partitions)])
    out = {p: [] for p in range(partitions)}
    eof = set()
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            m = c.poll(0.5)
            if m is None:
                continue
            if m.error():
                if m.error().code() == KafkaError._PARTITION_EOF:
                    eof.add(m.partition())
                    total = sum(len(v) for v in out.values())
                    if len(eof) == partitions and (expect is None or total >= expect):
                        break
                    continue
                raise KafkaException(m.error())
            out[m.partition()].append(m.value())
        return out
    finally:
        c.close()


def end_offsets(broker, topic, partitions=2):
    c = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": unique("offsets")})
    try:
        return [c.get_watermark_offsets(TopicPartition(topic, p), timeout=10)[1] for p in range(partitions)]
    finally:
        c.close()


def commit_abort_commit(broker):
    topic = unique("txn")
    create_topic(broker, topic)
    p = producer(broker, unique("txn-id"))
    first = [b"c1-%d" % i for i in range(10)]
    aborted = [b"a-%d" % i for i in range(6)]
    second = [b"c2-%d" % i for i in range(8)]
    p.begin_transaction()
    send(p, topic, first)
    p.commit_transaction(30)
    p.begin_transaction()
    send(p, topic, aborted)
    p.abort_transaction(30)
    p.begin_transaction()
    send(p, topic, second)
    p.commit_transaction(30)
    committed = read_all(broker, topic, "read_committed", expect=18)
    for part in range(2):
        want = [v for i, v in enumerate(first) if i % 2 == part] + [v for i, v in enumerate(second) if i % 2 == part]
        assert committed[part] == want, (part, committed[part], want)
    everything = read_all(broker, topic, "read_uncommitted", expect=24)
    assert sum(len(v) for v in everything.values()) == 24, everything
    assert all(v.startswith(b"a-") for part in everything.values() for v in part if v not in first + second)
    # 5 + 3 + 4 data records and 3 markers in each partition.
    assert end_offsets(broker, topic) == [15, 15], end_offsets(broker, topic)


def fencing(broker):
    topic = unique("fence")
    create_topic(broker, topic)
    txn_id = unique("fence-id")
    old = producer(broker, txn_id)
    old.begin_transaction()
    send(old, topic, [b"old-1"], partition=0)
    new = producer(broker, txn_id)  # aborts old's open transaction and fences it
    try:
        old.produce(topic, value=b"old-2", partition=0)
        old.flush(10)
        old.commit_transaction(10)
    except KafkaException as e:
        err = e.args[0]
        assert err.fatal() or err.code() in (KafkaError._FENCED, KafkaError.PRODUCER_FENCED,
                                             KafkaError.INVALID_PRODUCER_EPOCH), err
    else:
        raise AssertionError("the fenced producer committed")
    new.begin_transaction()
    send(new, topic, [b"new-1"], partition=0)
    new.commit_transaction(30)
    got = read_all(broker, topic, "read_committed", expect=1)
    assert got[0] == [b"new-1"], got


def timed_out_transaction(broker):
    topic = unique("timeout")
    create_topic(broker, topic)
    committed = producer(broker, unique("before"))
    committed.begin_transaction()
    send(committed, topic, [b"before"], partition=0)
    committed.commit_transaction(30)
    # A producer that opens a transaction and is never heard of again.
    stuck = producer(broker, unique("stuck"), **{"transaction.timeout.ms": 3000})
    stuck.begin_transaction()
    send(stuck, topic, [b"stuck"], partition=0)
    after = producer(broker, unique("after"))
    after.begin_transaction()
    send(after, topic, [b"after"], partition=0)
    after.commit_transaction(30)
    # Until the coordinator aborts it, read_committed stops at its first record.
    early = read_all(broker, topic, "read_committed", partitions=1, timeout=5)
    assert early[0] == [b"before"], early
    deadline = time.monotonic() + 30
    while True:
        got = read_all(broker, topic, "read_committed", partitions=1, timeout=5)
        if got[0] == [b"before", b"after"]:
            break
        assert time.monotonic() < deadline, "the timed-out transaction was not aborted: %s" % got
        time.sleep(0.5)


def survives_restart(broker):
    topic = unique("restart")
    create_topic(broker, topic)
    txn_id = unique("restart-id")
    p = producer(broker, txn_id)
    p.begin_transaction()
    send(p, topic, [b"kept-%d" % i for i in range(4)])
    p.commit_transaction(30)
    with w.Connection(broker.port) as c:
        # FindCoordinator, then InitProducerId (v0): CONCURRENT_TRANSACTIONS
        # while the commit's markers are still being written, as Kafka.
        c.call(w.find_coordinator_v1(1, txn_id, 1), 1)
        deadline = time.monotonic() + 10
        while True:
            err, pid, epoch = w.parse_init_producer_id(c.call(w.init_producer_id_v0(2, txn_id), 2))
            if err == 0:
                break
            assert err == CONCURRENT_TRANSACTIONS and time.monotonic() < deadline, "InitProducerId: error %d" % err
            time.sleep(0.05)
    broker.kill9()
    broker.start()
    deadline = time.monotonic() + 30
    with w.Connection(broker.port) as c:
        while True:
            c.call(w.find_coordinator_v1(3, txn_id, 1), 3)
            err, pid2, epoch2 = w.parse_init_producer_id(c.call(w.init_producer_id_v0(4, txn_id), 4))
            if err == 0:
                break
            assert time.monotonic() < deadline, "InitProducerId after the restart: error %d" % err
            time.sleep(0.2)
    assert (pid2, epoch2) == (pid, epoch + 1), ((pid, epoch), (pid2, epoch2))
    got = read_all(broker, topic, "read_committed", expect=4)
    assert sorted(got[0] + got[1]) == [b"kept-%d" % i for i in range(4)], got
    p2 = producer(broker, txn_id)
    p2.begin_transaction()
    send(p2, topic, [b"again"], partition=0)
    p2.commit_transaction(30)


def describe_transactions_v0(correlation_id, ids):
    body = w.compact_array([w.compact_string(i) for i in ids]) + w.TAGS
    return w.request(65, 0, correlation_id, body, flexible=True)


def parse_describe_transactions_v0(body):
    """-> {id: (error, state, timeout_ms, producer_id, epoch, {topic: [partitions]})}"""
    r = w.Reader(body)
    r.skip_tags()  # response header v1
    r.i32()  # throttle

    def state(r):
        error, tid, name, timeout, _start, pid, epoch = (r.i16(), r.compact_string(), r.compact_string(), r.i32(),
                                                         r.i64(), r.i64(), r.i16())

        def topic(r):
            t, ps = r.compact_string(), r.compact_array(lambda r: r.i32())
            r.skip_tags()
            return t, ps
        topics = dict(r.compact_array(topic))
        r.skip_tags()
        return tid, (error, name, timeout, pid, epoch, topics)
    return dict(r.compact_array(state))


def list_transactions_v1(correlation_id, states=(), producer_ids=(), duration_ms=-1):
    body = (w.compact_array([w.compact_string(s) for s in states]) + w.compact_array([w.i64(p) for p in producer_ids])
            + w.i64(duration_ms) + w.TAGS)
    return w.request(66, 1, correlation_id, body, flexible=True)


def parse_list_transactions_v1(body):
    """-> (error, unknown state filters, {id: (producer_id, state)})"""
    r = w.Reader(body)
    r.skip_tags()
    r.i32()
    error = r.i16()
    unknown = r.compact_array(lambda r: r.compact_string())

    def state(r):
        tid, pid, name = r.compact_string(), r.i64(), r.compact_string()
        r.skip_tags()
        return tid, (pid, name)
    return error, unknown, dict(r.compact_array(state))


def describe_and_list(broker):
    topic = unique("describe")
    create_topic(broker, topic)
    txn_id = unique("described")
    p = producer(broker, txn_id, **{"transaction.timeout.ms": 20000})
    p.begin_transaction()
    send(p, topic, [b"open"], partition=1)
    with w.Connection(broker.port) as c:
        got = parse_describe_transactions_v0(c.call(describe_transactions_v0(1, [txn_id, "no-such-id"]), 1))
        error, state, timeout, pid, epoch, topics = got[txn_id]
        assert (error, state, timeout, topics) == (0, "Ongoing", 20000, {topic: [1]}), got[txn_id]
        assert pid >= 0 and epoch >= 0, got[txn_id]
        assert got["no-such-id"][0] == TRANSACTIONAL_ID_NOT_FOUND, got["no-such-id"]
        error, unknown, listed = parse_list_transactions_v1(c.call(list_transactions_v1(2, ["Ongoing", "Bogus"]), 2))
        assert (error, unknown, listed.get(txn_id)) == (0, ["Bogus"], (pid, "Ongoing")), (error, unknown, listed)
        _, _, other = parse_list_transactions_v1(c.call(list_transactions_v1(3, producer_ids=[pid + 100000]), 3))
        assert txn_id not in other, other
        p.commit_transaction(30)
        # The commit is answered once PrepareCommit is written; CompleteCommit
        # follows the markers.
        deadline = time.monotonic() + 10
        while True:
            got = parse_describe_transactions_v0(c.call(describe_transactions_v0(4, [txn_id]), 4))
            if got[txn_id][1] == "CompleteCommit":
                break
            assert time.monotonic() < deadline and got[txn_id][1] == "PrepareCommit", got[txn_id]
            time.sleep(0.05)
        assert got[txn_id][5] == {}, got[txn_id]
        _, _, listed = parse_list_transactions_v1(c.call(list_transactions_v1(5, ["Ongoing"]), 5))
        assert txn_id not in listed, listed


def committed(broker, group, topic, partitions=2):
    c = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": group,
                  "isolation.level": "read_committed"})
    try:
        tps = c.committed([TopicPartition(topic, p) for p in range(partitions)], timeout=20)
        return [tp.offset for tp in tps]
    finally:
        c.close()


def consume_transform_produce(broker):
    source, sink, group = unique("ctp-in"), unique("ctp-out"), unique("ctp-group")
    create_topic(broker, source)
    create_topic(broker, sink)
    plain = Producer({"bootstrap.servers": broker.bootstrap})
    for i in range(20):
        plain.produce(source, value=b"in-%d" % i, partition=i % 2)
    plain.flush(30)
    consumer = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": group,
                         "enable.auto.commit": False, "isolation.level": "read_committed",
                         "auto.offset.reset": "earliest"})
    consumer.assign([TopicPartition(source, p, 0) for p in range(2)])
    p = producer(broker, unique("ctp-id"))

    def transform(count, finish):
        """Reads `count` records, writes them transformed and their
        positions as the group's offsets, in one transaction."""
        p.begin_transaction()
        got = 0
        deadline = time.monotonic() + 20
        while got < count:
            assert time.monotonic() < deadline, "read %d of %d" % (got, count)
            m = consumer.poll(0.5)
            if m is None or m.error():
                continue
            p.produce(sink, value=b"out-" + m.value(), partition=m.partition())
            got += 1
        positions = consumer.position([TopicPartition(source, q) for q in range(2)])
        p.send_offsets_to_transaction(positions, consumer.consumer_group_metadata(), 30)
        finish(30)
        return [tp.offset for tp in positions]

    # A partition the transaction read nothing from has no position
    # (OFFSET_INVALID, -1001), and the group no committed offset there.
    first = transform(10, p.commit_transaction)
    assert sum(o for o in first if o >= 0) == 10, first
    assert committed(broker, group, source) == first, (committed(broker, group, source), first)
    transform(6, p.abort_transaction)
    # The aborted transaction's offsets were never the group's.
    assert committed(broker, group, source) == first, (committed(broker, group, source), first)
    # The application rewinds to the committed offsets, as after an abort.
    consumer.assign([TopicPartition(source, q, o if o >= 0 else OFFSET_BEGINNING) for q, o in enumerate(first)])
    transform(10, p.commit_transaction)
    assert committed(broker, group, source) == [10, 10], committed(broker, group, source)
    consumer.close()
    outputs = read_all(broker, sink, "read_committed", expect=20)
    assert sorted(outputs[0] + outputs[1]) == sorted(b"out-in-%d" % i for i in range(20)), outputs
    # __consumer_offsets is replayed with its markers after a SIGKILL.
    broker.kill9()
    broker.start()
    deadline = time.monotonic() + 30
    while True:
        try:
            after = committed(broker, group, source)
            break
        except KafkaException:
            assert time.monotonic() < deadline, "OffsetFetch after the restart"
            time.sleep(0.2)
    assert after == [10, 10], after


def timeout_above_max(broker):
    with w.Connection(broker.port) as c:
        c.call(w.find_coordinator_v1(1, "too-long", 1), 1)
        err, pid, epoch = w.parse_init_producer_id(c.call(w.init_producer_id_v0(2, "too-long", timeout_ms=900001), 2))
    assert (err, pid, epoch) == (INVALID_TRANSACTION_TIMEOUT, -1, -1), (err, pid, epoch)


def main():
    overrides = {"transaction.abort.timed.out.transaction.cleanup.interval.ms": "500",
                 "transaction.state.log.num.partitions": "4", "group.initial.rebalance.delay.ms": "0"}
    with Runnel(binary=sys.argv[1], overrides=overrides) as broker:
        rc = run_tests([
            ("commit, abort, commit: read_committed gets the committed records", lambda: commit_abort_commit(broker)),
            ("the same transactional.id fences the older producer", lambda: fencing(broker)),
            ("an abandoned transaction is aborted after its timeout", lambda: timed_out_transaction(broker)),
            ("the coordinator's state survives a SIGKILL", lambda: survives_restart(broker)),
            ("a timeout above transaction.max.timeout.ms is refused", lambda: timeout_above_max(broker)),
            ("DescribeTransactions and ListTransactions show the coordinator's state",
             lambda: describe_and_list(broker)),
            ("consume-transform-produce commits the group's offsets with the transaction",
             lambda: consume_transform_produce(broker)),
        ], broker)
    sys.exit(rc)


if __name__ == "__main__":
    main()
