#!/usr/bin/python3
"""Transactions in a three-broker cluster (label "cluster") with librdkafka's
transactional producer (Debian's confluent-kafka, librdkafka 2.0.2): the
transaction coordinator is the leader of the transactional id's
__transaction_state partition, the markers go to each partition's leader,
TxnOffsetCommit goes to the group's coordinator.

One cluster (3000 ms sessions, 1000 ms heartbeats; every topic rf 3 with
min.insync.replicas 2, __transaction_state and __consumer_offsets too, 4
partitions each; no automatic leader rebalance) for every scenario, each
with its own topics and transactional ids; a scenario that kills a broker
starts it again and waits until every ISR is full before the next one:

  - commit, abort, commit over 6 partitions whose leaders are on at least
    two brokers: a read_committed reader gets exactly the committed records
    in order in each partition, a read_uncommitted one every record, and
    each partition's end offset (ListOffsets, asked of its leader) counts
    one marker per transaction;
  - a second producer with the same transactional.id fences the first
    (its commit fails as fenced), aborting its open transaction;
  - consume-transform-produce in a consumer group whose coordinator is not
    the transaction coordinator: send_offsets_to_transaction commits the
    group's offsets with the records, an abort leaves them as they were,
    and a new member of the group resumes from them: every output once;
  - the coordinator (FindCoordinator, checked against the leader of
    __transaction_state partition abs(hashCode(id)) % 4) SIGKILLed
    mid-transaction: the commit either succeeds (the records then read
    exactly once) or fails abortably (then, aborted, they never show); a
    survivor becomes the coordinator and the same transactional.id goes on,
    and again once the killed broker is back;
  - a partition leader that is not the coordinator SIGKILLed between the
    produce and the commit: the commit succeeds, the new leaders get the
    markers (every record read once), and once the old leader is back every
    replica's log ends at the same offset.

Every wait is bounded (cluster_harness.wait_until or a client timeout);
brokers are killed and started by pid through the harness.

  /usr/bin/python3 compat-tests/cluster_transactions_test.py build/debug/runnel
  /usr/bin/python3 compat-tests/cluster_transactions_test.py --kafka [<kafka jar cache dir>]
      (the same against a 3-node Apache Kafka 4.1.1 KRaft cluster,
      kafka_cluster_harness; the jars' cache defaults to $RUNNEL_KAFKA_CACHE)
"""

import os
import sys
import time
import uuid

from confluent_kafka import Consumer, KafkaError, KafkaException, Producer, TopicPartition

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kafka_wire as kw  # noqa: E402
from cluster_harness import create_topic, run_tests, wait_until  # noqa: E402

SESSION_MS = 3000
HEARTBEAT_MS = 1000
TXN_PARTITIONS = 4
TXN_TOPIC = "__transaction_state"
OFFSETS_TOPIC = "__consumer_offsets"
BOUND = 60.0  # seconds for anything that waits for a failover or a catch-up: the machine is loaded
OFFSET_INVALID = -1001

SETTINGS = {
    "default.replication.factor": "3",
    "min.insync.replicas": "2",
    "offsets.topic.replication.factor": "3",
    "offsets.topic.num.partitions": "4",
    "transaction.state.log.replication.factor": "3",
    "transaction.state.log.min.isr": "2",
    "transaction.state.log.num.partitions": str(TXN_PARTITIONS),
    "group.initial.rebalance.delay.ms": "0",
    "auto.leader.rebalance.enable": "false",
}

FIND_COORDINATOR_GROUP = 0
FIND_COORDINATOR_TXN = 1
# FindCoordinator errors that mean "ask again": COORDINATOR_LOAD_IN_PROGRESS,
# COORDINATOR_NOT_AVAILABLE, NOT_COORDINATOR. Any other (such as
# TRANSACTIONAL_ID_AUTHORIZATION_FAILED) fails the scenario at once.
COORDINATOR_NOT_YET = (14, 15, 16)


class Refused(AssertionError):
    """A FindCoordinator error that asking again will not change."""


def unique(prefix):
    return "%s-%s" % (prefix, uuid.uuid4().hex[:8])


def java_string_hash(s):
    """Java's String.hashCode over the UTF-16 code units of s, as a signed int."""
    h = 0
    data = s.encode("utf-16-be")
    for i in range(0, len(data), 2):
        h = (31 * h + ((data[i] << 8) | data[i + 1])) & 0xFFFFFFFF
    return h - (1 << 32) if h >= 1 << 31 else h


def txn_partition_for(txn_id, partitions=TXN_PARTITIONS):
    """TransactionStateManager.partitionFor: Utils.abs(hashCode) % partitions
    (Utils.abs maps Integer.MIN_VALUE to 0)."""
    h = java_string_hash(txn_id)
    return (0 if h == -(1 << 31) else abs(h)) % partitions


class Brokers:
    """What the scenarios ask of a cluster_harness.Cluster or a
    kafka_cluster_harness.KafkaCluster (the interface both have: brokers,
    live_ids, metadata, kill9, start_broker)."""

    def __init__(self, cluster):
        self.c = cluster
        self.corr = 1000
        self.down = set()  # killed by a scenario, not started again yet

    def live(self):
        return [i for i in sorted(self.c.brokers) if self.c.brokers[i].alive()]

    def bootstrap(self):
        return ",".join(self.c.brokers[i].bootstrap for i in self.live())

    def call(self, node_id, frame_fn, timeout=10.0):
        self.corr += 1
        corr = self.corr
        with kw.Connection(self.c.brokers[node_id].port, timeout=timeout) as conn:
            return conn.call(frame_fn(corr), corr)

    def metadata(self, topics, node_id=None):
        """Metadata v7 of `topics` from node_id (default: the first live broker that answers)."""
        last = None
        for i in ([node_id] if node_id is not None else self.live()):
            try:
                return self.c.metadata(i, topics)
            except Exception as e:  # a broker just killed or not listening yet
                last = e
        raise AssertionError("no broker answered Metadata: %s" % last)

    def partitions(self, topic, node_id=None):
        t = self.metadata([topic], node_id)["topics"][topic]
        assert t["error"] == 0, "Metadata of %s: error %d" % (topic, t["error"])
        return t["partitions"]

    def leaders(self, topic):
        """{partition: leader} as a live broker sees it; every leader live."""
        parts = self.partitions(topic)
        out = {p: v["leader"] for p, v in parts.items()}
        assert all(leader in self.live() for leader in out.values()), "%s leaders %s, live %s" % (
            topic, out, self.live())
        return out

    def coordinator(self, key, key_type, among=None, timeout=BOUND):
        """The node FindCoordinator (v1) names for key, asked of the brokers
        `among` (default: the live ones) until one answers without error."""
        def ask():
            answers = []
            for i in among or self.live():
                try:
                    err, message, node = kw.parse_find_coordinator_v1(
                        self.call(i, lambda corr: kw.find_coordinator_v1(corr, key, key_type)))
                except Exception as e:  # a broker just killed
                    answers.append("node %d: %s" % (i, e))
                    continue
                if err == 0 and node in self.live():
                    return node
                answer = "node %d: error %d (%s), node %d" % (i, err, message, node)
                if err not in COORDINATOR_NOT_YET:
                    return Refused("FindCoordinator(%s, key type %d) refused: %s" % (key, key_type, answer))
                answers.append(answer)
            raise AssertionError("; ".join(answers))
        node = wait_until(ask, timeout, "FindCoordinator(%s, key type %d) to name a live broker" % (key, key_type))
        if isinstance(node, Refused):
            raise node
        return node

    def txn_coordinator(self, txn_id):
        """The transaction coordinator of txn_id: FindCoordinator's answer,
        once it is the leader of txn_id's __transaction_state partition."""
        p = txn_partition_for(txn_id)

        def agreed():
            try:
                node = self.coordinator(txn_id, FIND_COORDINATOR_TXN, timeout=10.0)
            except Refused as e:
                return e  # ends the wait
            leader = self.partitions(TXN_TOPIC)[p]["leader"]
            assert node == leader, "FindCoordinator names %d, %s-%d is led by %d" % (node, TXN_TOPIC, p, leader)
            return node
        node = wait_until(agreed, BOUND, "the coordinator of %s to be the leader of %s-%d" % (txn_id, TXN_TOPIC, p))
        if isinstance(node, Refused):
            raise node
        return node

    def end_offset(self, topic, p, node_id=None, replica_id=-1):
        """ListOffsets v1 latest of topic-p, of its leader (default) or of
        node_id with the debugging replica id -2 (that replica's own log)."""
        node = self.leaders(topic)[p] if node_id is None else node_id
        err, off = kw.parse_list_offsets_v1(
            self.call(node, lambda corr: kw.list_offsets_v1(corr, topic, [p], -1, replica_id)))[(topic, p)]
        assert err == 0, "ListOffsets %s-%d on node %d: error %d" % (topic, p, node, err)
        return off

    def create(self, topic, partitions):
        create_topic(self.bootstrap(), topic, partitions, 3, {"min.insync.replicas": "2"})
        self.wait_in_sync([topic])
        return self.leaders(topic)

    def wait_in_sync(self, topics, timeout=BOUND):
        """Every live broker shows each of `topics` (the internal ones only
        once they exist) with every partition led by a live broker and its
        whole replica set in the ISR."""
        def synced():
            live = self.live()
            for i in live:
                md = self.metadata(topics, i)
                for topic in topics:
                    t = md["topics"].get(topic)
                    if topic.startswith("__") and (t is None or t["error"] == 3):
                        continue  # UNKNOWN_TOPIC_OR_PARTITION: not created yet
                    assert t is not None and t["error"] == 0, "node %d: %s %s" % (i, topic, t)
                    assert t["partitions"], "node %d: %s has no partitions" % (i, topic)
                    for p, v in t["partitions"].items():
                        assert v["leader"] in live and sorted(v["isr"]) == sorted(v["replicas"]) == live, \
                            "node %d: %s-%d leader %d, replicas %s, isr %s" % (i, topic, p, v["leader"],
                                                                               v["replicas"], v["isr"])
            return True
        wait_until(synced, timeout, "%s fully in sync on brokers %s" % (topics, self.live()), poll=0.25)

    def kill9(self, node_id):
        print("     SIGKILL node %d" % node_id, flush=True)
        self.c.kill9(node_id)
        self.down.add(node_id)

    def start(self, node_id):
        started = time.monotonic()
        self.c.start_broker(node_id)
        self.down.discard(node_id)
        print("     node %d started again (%.1f s)" % (node_id, time.monotonic() - started), flush=True)

    def start_killed(self):
        """Starts whatever a scenario killed (also after its failure), so
        that the next scenario has three brokers."""
        for i in sorted(self.down):
            if not self.c.brokers[i].alive():
                self.start(i)
        self.down.clear()

    def _dump(self):
        self.c._dump()


# -- clients --------------------------------------------------------------------

def transactional_producer(b, txn_id, **extra):
    conf = {"bootstrap.servers": b.bootstrap(), "transactional.id": txn_id, "linger.ms": 5,
            "acks": "all", "enable.idempotence": True}
    conf.update(extra)
    p = Producer(conf)
    deadline = time.monotonic() + BOUND
    while True:
        try:
            p.init_transactions(max(1.0, deadline - time.monotonic()))
            return p
        except KafkaException as e:
            err = e.args[0]
            if not err.retriable() or time.monotonic() >= deadline:
                raise


def send(p, topic, records):
    """records: [(partition, value)]; waits until every one is acknowledged."""
    errors = []

    def delivered(err, msg):
        if err is not None:
            errors.append((msg.partition(), err))
    for partition, value in records:
        p.produce(topic, value=value, partition=partition, on_delivery=delivered)
    left = p.flush(30)
    assert left == 0 and not errors, "%d records not delivered to %s; errors %s" % (left, topic, errors[:5])


def finish(p, how, timeout=BOUND):
    """commit_transaction (how="commit") or abort_transaction, retried while
    librdkafka says the error is retriable. Returns None, or the abortable
    error a commit failed with (the transaction is then still to be aborted)."""
    deadline = time.monotonic() + timeout
    call = p.commit_transaction if how == "commit" else p.abort_transaction
    while True:
        try:
            call(max(1.0, deadline - time.monotonic()))
            return None
        except KafkaException as e:
            err = e.args[0]
            if how == "commit" and err.txn_requires_abort():
                return err
            if not err.retriable() or time.monotonic() >= deadline:
                raise
            print("     %s_transaction: retriable %s, again" % (how, err), flush=True)
            time.sleep(0.2)


def read_all(b, topic, partitions, isolation, expect=None, timeout=20.0):
    """Every record value of each partition from its start, by partition: a
    consumer that only assigns (its group.id is a fresh name it never joins
    or commits to), read until every partition reported its end and at least
    `expect` records came, or `timeout`."""
    c = Consumer({"bootstrap.servers": b.bootstrap(), "group.id": unique("reader"), "enable.auto.commit": False,
                  "isolation.level": isolation, "enable.partition.eof": True})
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
            eof.discard(m.partition())
            out[m.partition()].append(m.value())
        return out
    finally:
        c.close()


def wait_read(b, topic, partitions, isolation, want, what):
    """Waits (bounded) until read_all gives exactly `want` ({partition: [values]})."""
    expect = sum(len(v) for v in want.values())

    def same():
        got = read_all(b, topic, partitions, isolation, expect=expect)
        assert got == want, "%s read %s, want %s" % (isolation, summary(got), summary(want))
        return got
    return wait_until(same, BOUND, what, poll=0.5)


def summary(by_partition):
    return {p: (len(v), v[:2] + (["..."] if len(v) > 3 else []) + v[-1:] if len(v) > 2 else v)
            for p, v in by_partition.items()}


def committed(b, group, topic, partitions):
    """The group's committed offsets (OffsetFetch with require_stable, as
    librdkafka asks for read_committed consumers) of topic's partitions."""
    c = Consumer({"bootstrap.servers": b.bootstrap(), "group.id": group, "enable.auto.commit": False,
                  "isolation.level": "read_committed"})
    try:
        return [tp.offset for tp in c.committed([TopicPartition(topic, p) for p in range(partitions)], timeout=20)]
    finally:
        c.close()


def assert_fenced(old, topic, value, begin=True):
    """A producer whose transactional.id a newer one initialized: its next
    produce and commit fail as fenced (a fatal error)."""
    try:
        if begin:
            old.begin_transaction()
        old.produce(topic, value=value, partition=0)
        old.flush(20)
        old.commit_transaction(20)
    except KafkaException as e:
        err = e.args[0]
        assert err.fatal() or err.code() in (KafkaError._FENCED, KafkaError.PRODUCER_FENCED,
                                             KafkaError.INVALID_PRODUCER_EPOCH), err
        print("     the fenced producer's commit: %s" % err, flush=True)
    else:
        raise AssertionError("the fenced producer committed")


def values(tag, partition, count):
    return [b"%s-p%d-%d" % (tag.encode(), partition, i) for i in range(count)]


# -- scenarios ------------------------------------------------------------------

def commit_abort_commit(b):
    topic, partitions = unique("txn-spread"), 6
    leaders = b.create(topic, partitions)
    assert len(set(leaders.values())) >= 2, "%s's leaders are all on one broker: %s" % (topic, leaders)
    txn_id = unique("spread-id")
    print("     %s leaders %s; coordinator of %s: node %d" % (topic, leaders, txn_id, b.txn_coordinator(txn_id)),
          flush=True)
    counts = {"t1": 4, "t2": 3, "t3": 5}
    batches = {tag: {p: values(tag, p, n) for p in range(partitions)} for tag, n in counts.items()}
    p = transactional_producer(b, txn_id)
    for tag, how in (("t1", "commit"), ("t2", "abort"), ("t3", "commit")):
        p.begin_transaction()
        send(p, topic, [(q, v) for i in range(counts[tag]) for q in range(partitions)
                        for v in [batches[tag][q][i]]])
        err = finish(p, how)
        assert err is None, "%s's %s failed: %s" % (tag, how, err)
    want = {q: batches["t1"][q] + batches["t3"][q] for q in range(partitions)}
    wait_read(b, topic, partitions, "read_committed", want, "read_committed to get t1 and t3")
    every = {q: batches["t1"][q] + batches["t2"][q] + batches["t3"][q] for q in range(partitions)}
    wait_read(b, topic, partitions, "read_uncommitted", every, "read_uncommitted to get t1, t2 and t3")
    end = sum(counts.values()) + 3  # the data records and one marker per transaction
    wait_until(lambda: (lambda got: got == {q: end for q in range(partitions)} or got)(
        {q: b.end_offset(topic, q) for q in range(partitions)}), BOUND,
        "every partition's end offset to be %d (12 records, 3 markers)" % end)


def fencing(b):
    topic = unique("txn-fence")
    b.create(topic, 3)
    txn_id = unique("fence-id")
    print("     coordinator of %s: node %d" % (txn_id, b.txn_coordinator(txn_id)), flush=True)
    old = transactional_producer(b, txn_id)
    old.begin_transaction()
    send(old, topic, [(q, b"old-1") for q in range(3)])
    new = transactional_producer(b, txn_id)  # aborts old's open transaction and fences old
    assert_fenced(old, topic, b"old-2", begin=False)
    new.begin_transaction()
    send(new, topic, [(q, b"new-1") for q in range(3)])
    assert finish(new, "commit") is None
    wait_read(b, topic, 3, "read_committed", {q: [b"new-1"] for q in range(3)},
              "read_committed to get only the new producer's records")
    # old-1 was written and then aborted; old-2 never got in.
    wait_read(b, topic, 3, "read_uncommitted", {q: [b"old-1", b"new-1"] for q in range(3)},
              "read_uncommitted to get old-1 (aborted) and new-1")


def consume_transform_produce(b):
    source, sink, partitions = unique("ctp-in"), unique("ctp-out"), 3
    b.create(source, partitions)
    b.create(sink, partitions)
    txn_id = unique("ctp-id")
    txn_node = b.txn_coordinator(txn_id)
    # A group whose coordinator is another broker than the transaction's.
    for _ in range(30):
        group = unique("ctp-group")
        group_node = b.coordinator(group, FIND_COORDINATOR_GROUP)
        if group_node != txn_node:
            break
    assert group_node != txn_node, "every group tried is coordinated by node %d" % txn_node
    print("     transaction coordinator node %d, group coordinator node %d, %s leaders %s, %s leaders %s" % (
        txn_node, group_node, source, b.leaders(source), sink, b.leaders(sink)), flush=True)
    per_partition = 10
    plain = Producer({"bootstrap.servers": b.bootstrap(), "acks": "all", "enable.idempotence": True})
    for i in range(per_partition):
        for q in range(partitions):
            plain.produce(source, value=b"in-%d-%d" % (q, i), partition=q)
    assert plain.flush(30) == 0, "the source records were not all delivered"
    p = transactional_producer(b, txn_id)

    def member():
        c = Consumer({"bootstrap.servers": b.bootstrap(), "group.id": group, "enable.auto.commit": False,
                      "isolation.level": "read_committed", "auto.offset.reset": "earliest",
                      "session.timeout.ms": 10000})
        c.subscribe([source])
        return c

    def transform(consumer, count, how):
        """Reads `count` records, writes each transformed to the sink and the
        group's positions, in one transaction; -> the positions sent."""
        p.begin_transaction()
        got = 0
        deadline = time.monotonic() + BOUND
        while got < count:
            assert time.monotonic() < deadline, "read %d of %d records of %s" % (got, count, source)
            m = consumer.poll(0.5)
            if m is None or m.error():
                continue
            p.produce(sink, value=b"out-" + m.value(), partition=m.partition())
            got += 1
        positions = consumer.position([TopicPartition(source, q) for q in range(partitions)])
        p.send_offsets_to_transaction(positions, consumer.consumer_group_metadata(), BOUND)
        err = finish(p, how)
        assert err is None, "the %s failed: %s" % (how, err)
        return [tp.offset for tp in positions]

    def committed_now():
        return committed(b, group, source, partitions)

    first_member = member()
    try:
        first = transform(first_member, 12, "commit")
        assert sum(o for o in first if o >= 0) == 12, first
        wait_until(lambda: (lambda got: got == first or got)(committed_now()), BOUND,
                   "the group's committed offsets to be %s after the commit" % first)
        transform(first_member, 9, "abort")
        # The aborted transaction's offsets were never the group's.
        after_abort = committed_now()
        assert after_abort == first, "committed %s after the abort, %s before" % (after_abort, first)
    finally:
        first_member.close()  # no commit of its own: enable.auto.commit is off
    # A new member resumes from the committed offsets and transforms the rest.
    second_member = member()
    try:
        transform(second_member, partitions * per_partition - 12, "commit")
    finally:
        second_member.close()
    wait_until(lambda: (lambda got: got == [per_partition] * partitions or got)(committed_now()), BOUND,
               "the group's committed offsets to be the end of %s" % source)
    want = {q: [b"out-in-%d-%d" % (q, i) for i in range(per_partition)] for q in range(partitions)}
    # The records of the aborted transaction were read again by the second
    # member: each output once, in the order of its input.
    wait_read(b, sink, partitions, "read_committed", want, "read_committed to get every output once")


def coordinator_killed(b):
    topic, partitions = unique("txn-coord"), 3
    leaders = b.create(topic, partitions)
    txn_id = unique("coord-id")
    p = transactional_producer(b, txn_id)
    coordinator = b.txn_coordinator(txn_id)
    print("     coordinator of %s: node %d; %s leaders %s" % (txn_id, coordinator, topic, leaders), flush=True)
    p.begin_transaction()
    records = {q: values("mid", q, 5) for q in range(partitions)}
    send(p, topic, [(q, v) for q in range(partitions) for v in records[q]])
    b.kill9(coordinator)
    survivors = b.live()
    started = time.monotonic()
    err = finish(p, "commit")
    print("     commit with the coordinator dead: %s (%.1f s)" % (
        "committed" if err is None else "abortable error %s" % err, time.monotonic() - started), flush=True)
    if err is not None:
        assert finish(p, "abort") is None
    # Another broker took over.
    new = b.txn_coordinator(txn_id)
    assert new in survivors and new != coordinator, (new, coordinator, survivors)
    print("     node %d coordinates %s now" % (new, txn_id), flush=True)
    want = {q: list(records[q]) if err is None else [] for q in range(partitions)}
    wait_read(b, topic, partitions, "read_committed", want,
              "read_committed to get the records %s" % ("once" if err is None else "of none (aborted)"))
    # The same transactional.id goes on: InitProducerId on the new
    # coordinator bumps the epoch it loaded (p is fenced), a new transaction commits.
    again = transactional_producer(b, txn_id)
    assert_fenced(p, topic, b"fenced")
    again.begin_transaction()
    send(again, topic, [(q, b"after-kill") for q in range(partitions)])
    assert finish(again, "commit") is None
    for q in range(partitions):
        want[q].append(b"after-kill")
    wait_read(b, topic, partitions, "read_committed", want, "read_committed to get the next transaction")
    # The old coordinator back in the ISRs: the same transactional.id once more.
    b.start(coordinator)
    b.wait_in_sync([topic, TXN_TOPIC, OFFSETS_TOPIC])
    print("     coordinator of %s after node %d's return: node %d" % (txn_id, coordinator, b.txn_coordinator(txn_id)),
          flush=True)
    third = transactional_producer(b, txn_id)
    third.begin_transaction()
    send(third, topic, [(q, b"after-return") for q in range(partitions)])
    assert finish(third, "commit") is None
    for q in range(partitions):
        want[q].append(b"after-return")
    wait_read(b, topic, partitions, "read_committed", want, "read_committed to get the transaction after the return")


def leader_killed(b):
    topic, partitions = unique("txn-leader"), 3
    leaders = b.create(topic, partitions)
    txn_id = unique("leader-id")
    p = transactional_producer(b, txn_id)
    coordinator = b.txn_coordinator(txn_id)
    victims = sorted({leader for leader in leaders.values() if leader != coordinator})
    assert victims, "every partition of %s is led by the coordinator %d: %s" % (topic, coordinator, leaders)
    victim = victims[0]
    print("     coordinator of %s: node %d; %s leaders %s; killing node %d" % (
        txn_id, coordinator, topic, leaders, victim), flush=True)
    p.begin_transaction()
    records = {q: values("led", q, 5) for q in range(partitions)}
    send(p, topic, [(q, v) for q in range(partitions) for v in records[q]])
    b.kill9(victim)
    started = time.monotonic()
    err = finish(p, "commit")
    assert err is None, "the commit failed with the coordinator alive: %s" % err
    print("     committed with node %d dead (%.1f s)" % (victim, time.monotonic() - started), flush=True)
    moved = wait_until(lambda: (lambda now: now if all(now[q] != victim for q in now) else None)(b.leaders(topic)),
                       BOUND, "%s's partitions led by survivors" % topic)
    print("     %s leaders now %s" % (topic, moved), flush=True)
    wait_read(b, topic, partitions, "read_committed", records,
              "read_committed to get every record once (the new leaders got the markers)")
    wait_until(lambda: (lambda got: got == {q: 6 for q in range(partitions)} or got)(
        {q: b.end_offset(topic, q) for q in range(partitions)}), BOUND,
        "every partition's end offset to be 6 (5 records and the marker)")
    # The old leader back: every replica's log ends after the marker.
    b.start(victim)
    b.wait_in_sync([topic, TXN_TOPIC, OFFSETS_TOPIC])
    wait_until(lambda: (lambda got: all(v == 6 for v in got.values()) or got)(
        {(q, i): b.end_offset(topic, q, node_id=i, replica_id=-2) for q in range(partitions) for i in b.live()}),
        BOUND, "every replica of %s to end at offset 6" % topic)
    wait_read(b, topic, partitions, "read_committed", records, "read_committed to get every record once, again")


def scenario(b, fn):
    def run():
        try:
            fn(b)
        finally:
            b.start_killed()
    return run


def new_cluster():
    if len(sys.argv) >= 2 and sys.argv[1] == "--kafka":
        import kafka_cluster_harness
        cache = sys.argv[2] if len(sys.argv) > 2 else None
        return kafka_cluster_harness.KafkaCluster(cache, dict(SETTINGS, **{
            "broker.session.timeout.ms": str(SESSION_MS), "broker.heartbeat.interval.ms": str(HEARTBEAT_MS)}))
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    from cluster_harness import Cluster
    return Cluster(3, sys.argv[1], SETTINGS, session_timeout_ms=SESSION_MS, heartbeat_interval_ms=HEARTBEAT_MS)


def main():
    started = time.monotonic()
    cluster = new_cluster()
    try:
        cluster.start()
    except BaseException:
        cluster._dump()
        cluster.close()
        raise
    print("     cluster of 3 formed in %.1f s" % (time.monotonic() - started), flush=True)
    b = Brokers(cluster)
    try:
        rc = run_tests([
            ("commit, abort, commit over 6 partitions led by different brokers", scenario(b, commit_abort_commit)),
            ("a second producer with the same transactional.id fences the first", scenario(b, fencing)),
            ("consume-transform-produce: the group's offsets commit and abort with the transaction",
             scenario(b, consume_transform_produce)),
            ("the coordinator SIGKILLed mid-transaction: committed once or aborted; the id goes on",
             scenario(b, coordinator_killed)),
            ("a partition leader SIGKILLed between produce and commit: the new leader gets the marker",
             scenario(b, leader_killed)),
        ], b)
    finally:
        cluster.close()
    print("     %.1f s in all" % (time.monotonic() - started), flush=True)
    return rc


if __name__ == "__main__":
    sys.exit(main())
