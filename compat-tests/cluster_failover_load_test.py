"""Leader failover under load in a three-broker Runnel cluster (label
"cluster", issue 14): 3000 ms sessions, 1000 ms heartbeats,
min.insync.replicas=2 on every topic, __consumer_offsets rf 3.

While an idempotent librdkafka producer (acks=all) writes numbered records
to every partition of an rf 3 topic and a consumer group member reads them
and commits synchronously after each batch, a seeded schedule SIGKILLs the
leader of one partition after another (at least ROUNDS times): each round
waits until the partition has a new leader, starts the killed broker again
and waits until it is back in every ISR (of the topic and of
__consumer_offsets) before the next kill, so no kill leaves fewer than
min.insync.replicas live members. Afterwards:

  - every acknowledged record is in its partition exactly once, at the
    offset its delivery report named, in sequence order; records never
    acknowledged may be there too, at most once each (idempotence);
  - the three replicas of each partition end with byte-identical .log
    files, and each broker's .index/.timeindex valid for them (not
    byte-identical: Kafka's LogSegment.recover, like Runnel's
    Segment::recover, appends the largest timestamp so far to the time
    index, so a broker restarted after SIGKILL has an entry the others
    lack);
  - the group's committed offsets (OffsetFetch from the coordinator) are at
    least the last commit the broker acknowledged for each partition, the
    member never resumed below an acknowledged commit after a rebalance,
    and a fresh member of the group starts exactly at the committed offsets.

The seed is printed; RUNNEL_FAILOVER_SEED=<seed> (and RUNNEL_FAILOVER_ROUNDS)
replay a schedule.

  /usr/bin/python3 compat-tests/cluster_failover_load_test.py build/debug/runnel
"""

import os
import random
import sys
import threading
import time
import uuid

import kafka_wire as kw
from cluster_harness import (NONE, Cluster, consume, create_topic, describe_difference, list_offset, log_batches,
                             run_tests, runnel_binary, segment_files, wait_identical, wait_until)

TOPIC = "load"
PARTITIONS = 4
ROUNDS = int(os.environ.get("RUNNEL_FAILOVER_ROUNDS", "10"))
SESSION_MS = 3000
SEGMENT_BYTES = 32768  # small: rolls happen between and during the failovers
BOUND = 30.0  # seconds on top of any timeout the brokers are configured with: CI machines are loaded
OFFSETS_TOPIC = "__consumer_offsets"


def new_cluster(binary):
    return Cluster(3, binary, session_timeout_ms=SESSION_MS, heartbeat_interval_ms=1000, overrides={
        "min.insync.replicas": "2",
        # fewer offsets partitions to keep in sync on a 2-core machine; still rf 3
        "offsets.topic.num.partitions": "4",
    })


def value_of(partition, seq):
    return b"p%d-s%d" % (partition, seq)


def seq_of(partition, value):
    prefix = b"p%d-s" % partition
    assert value.startswith(prefix), "a record of %s-%d reads %r" % (TOPIC, partition, value)
    return int(value[len(prefix):])


class ClientThread(threading.Thread):
    """A client's loop in a thread: runs until finish(), which raises what
    the loop raised."""

    def __init__(self, name, finish_within):
        super().__init__(name=name, daemon=True)
        self.finish_within = finish_within
        self.stopping = threading.Event()
        self.failure = None

    def finish(self):
        self.stopping.set()
        self.join(self.finish_within)
        assert not self.is_alive(), "the %s did not finish in %.0f s" % (self.name, self.finish_within)
        if self.failure is not None:
            raise self.failure


class SequenceProducer(ClientThread):
    """An idempotent acks=all producer writing value_of(p, 0), value_of(p,
    1), ... to each partition p in turn until stopped; acked[p] is
    [(seq, offset)] in delivery order, errors the failed deliveries."""

    def __init__(self, bootstrap):
        super().__init__("producer", BOUND * 4)
        from confluent_kafka import Producer
        self.fatal = []
        # batch.size below the topic's segment.bytes: the backlog of a
        # failover would otherwise go out in batches the leader refuses
        # (RECORD_LIST_TOO_LARGE), and librdkafka's epoch bump for that gap
        # resends other partitions' possibly persisted batches under the new
        # epoch, which no broker can tell from new records.
        self.producer = Producer({
            "bootstrap.servers": bootstrap, "enable.idempotence": True, "acks": "all", "linger.ms": 5,
            "batch.size": SEGMENT_BYTES // 2, "message.timeout.ms": 120000, "error_cb": self._error})
        self.acked = {p: [] for p in range(PARTITIONS)}
        self.errors = []
        self.sent = [0] * PARTITIONS
        self.left = None

    def _error(self, err):
        if err.fatal():
            self.fatal.append(str(err))

    def _delivered(self, err, msg):
        p = msg.partition()
        seq = seq_of(p, msg.value())
        if err is not None:
            self.errors.append((p, seq, str(err)))
        else:
            self.acked[p].append((seq, msg.offset()))

    def run(self):
        try:
            while not self.stopping.is_set():
                for p in range(PARTITIONS):
                    try:
                        self.producer.produce(TOPIC, value=value_of(p, self.sent[p]), partition=p,
                                              on_delivery=self._delivered)
                        self.sent[p] += 1
                    except BufferError:
                        pass
                self.producer.poll(0.01)  # about 100 records a second per partition
            self.left = self.producer.flush(BOUND * 3)
        except Exception as e:  # reported by the test
            self.failure = e

    def acked_count(self):
        return sum(len(a) for a in self.acked.values())


class GroupReader(ClientThread):
    """A consumer group member (no auto commit) reading TOPIC and committing
    synchronously after each batch. Records acknowledged commits, and any
    resumption after a (re)assignment below an acknowledged commit."""

    def __init__(self, bootstrap, group):
        super().__init__("group reader", BOUND * 2)
        self.bootstrap, self.group = bootstrap, group
        self.committed = {}  # partition -> highest offset whose commit the broker acknowledged
        self.commits = 0
        self.commit_errors = []
        self.assignments = 0
        self.resumed_below = []
        self.read = 0
        self.final = None  # committed() from the coordinator once stopped
        self._fresh = set()

    def _assigned(self, consumer, partitions):
        self.assignments += 1
        self._fresh = {tp.partition for tp in partitions}

    def run(self):
        from confluent_kafka import Consumer, KafkaException, TopicPartition
        c = Consumer({"bootstrap.servers": self.bootstrap, "group.id": self.group, "enable.auto.commit": False,
                      "auto.offset.reset": "earliest", "enable.partition.eof": False})
        try:
            c.subscribe([TOPIC], on_assign=self._assigned)
            while not self.stopping.is_set():
                batch = c.consume(500, timeout=0.2)
                ends = {}
                for m in batch:
                    if m.error() is not None:
                        continue  # transient (a leader moving): librdkafka retries
                    p = m.partition()
                    if p in self._fresh:
                        self._fresh.discard(p)
                        if m.offset() < self.committed.get(p, 0):
                            self.resumed_below.append((p, m.offset(), self.committed[p]))
                    ends[p] = m.offset() + 1
                    self.read += 1
                if not ends:
                    continue
                try:
                    done = c.commit(offsets=[TopicPartition(TOPIC, p, o) for p, o in ends.items()],
                                    asynchronous=False)
                except KafkaException as e:  # not acknowledged: may or may not have been written
                    self.commit_errors.append(str(e))
                    continue
                for tp in done:
                    if tp.error is None:
                        self.committed[tp.partition] = max(self.committed.get(tp.partition, 0), tp.offset)
                    else:
                        self.commit_errors.append(str(tp.error))
                self.commits += 1
            parts = [TopicPartition(TOPIC, p) for p in range(PARTITIONS)]
            self.final = {tp.partition: tp.offset for tp in c.committed(parts, timeout=BOUND)}
        except Exception as e:
            self.failure = e
        finally:
            c.close()


def coordinator(c, group):
    node = c.live_ids()[0]
    err, _, coord = kw.parse_find_coordinator_v1(c.call(node, lambda corr: kw.find_coordinator_v1(corr, group, 0)))
    return coord if err == NONE else None


def assert_no_crash(c, killed=None):
    for i, b in c.brokers.items():
        if i != killed:
            assert b.alive(), "node %d exited by itself (code %s)" % (i, b.proc.poll() if b.proc else None)


def kill_leader(c, p, group, rng, rnd):
    """One round: SIGKILL the leader of TOPIC-p, wait for a new leader,
    start the broker again, wait until it is back in every ISR."""
    parts = c.wait_in_sync(TOPIC, BOUND)
    c.wait_in_sync(OFFSETS_TOPIC, BOUND)
    victim, epoch = parts[p]["leader"], parts[p]["leader_epoch"]
    assert len(parts[p]["isr"]) - 1 >= 2, "killing node %d would leave %s-%d's ISR %s below 2" % (
        victim, TOPIC, p, parts[p]["isr"])
    was_coordinator = coordinator(c, group) == victim
    started = time.monotonic()
    c.kill9(victim)
    survivors = [i for i in sorted(c.brokers) if i != victim]

    def new_leader():
        views = set()
        for i in survivors:
            v = c.partitions(i, TOPIC)[p]
            assert v["leader"] in survivors and v["leader_epoch"] > epoch, "node %d: leader %d epoch %d" % (
                i, v["leader"], v["leader_epoch"])
            views.add(v["leader"])
        assert len(views) == 1, "leaders named: %s" % views
        return views.pop()
    leader = wait_until(new_leader, SESSION_MS / 1000 + BOUND, "a new leader of %s-%d after node %d was killed" % (
        TOPIC, p, victim))
    elected = time.monotonic() - started
    assert_no_crash(c, victim)
    time.sleep(rng.uniform(0.0, 1.0))  # seeded: the dead broker stays out a little longer in some rounds
    c.start_broker(victim)
    c.wait_in_sync(TOPIC, BOUND)
    c.wait_in_sync(OFFSETS_TOPIC, BOUND)
    assert_no_crash(c)
    print("     round %2d: %s-%d leader %d killed%s, node %d leads after %.1f s, back in every ISR after %.1f s" % (
        rnd, TOPIC, p, victim, " (the group coordinator)" if was_coordinator else "", leader, elected,
        time.monotonic() - started), flush=True)
    return was_coordinator


def batches_holding(c, p, offsets):
    """The producer fields of the batches of TOPIC-p holding `offsets`, from
    node 1's files (a failure's detail)."""
    out = []
    for name, data in sorted(segment_files(c, 1, TOPIC, p).items()):
        if not name.endswith(".log"):
            continue
        for pos, first, last, _ in log_batches(data):
            if any(first <= o <= last for o in offsets):
                h = kw.batch_header(data[pos:pos + 61])
                out.append("[%d..%d] producer %d epoch %d base sequence %d leader epoch %d" % (
                    first, last, h["producer_id"], h["producer_epoch"], h["base_sequence"], h["leader_epoch"]))
    return out


def check_partition(c, p, acked, sent, errors):
    """Reads TOPIC-p from offset 0 to its high watermark and checks it
    against what the producer was told."""
    leader = c.partitions(c.live_ids()[0], TOPIC)[p]["leader"]
    end = list_offset(c, leader, TOPIC, p)
    got = consume(c.bootstrap(), TOPIC, p, end, timeout=BOUND * 2)
    seqs = [seq_of(p, v) for _, _, v in got]
    assert [o for o, _, _ in got] == list(range(end)), "%s-%d: offsets read back are not 0..%d" % (TOPIC, p, end)
    where = {}
    acked_at = dict(acked)
    for offset, seq in enumerate(seqs):
        assert seq not in where, "%s-%d: record %d at offsets %d and %d (duplicate; acknowledged at %s, " \
            "delivery errors %s); batches there: %s" % (TOPIC, p, seq, where[seq], offset, acked_at.get(seq),
                                                        [e for q, n, e in errors if (q, n) == (p, seq)],
                                                        batches_holding(c, p, [where[seq], offset]))
        where[seq] = offset
    disorder = [(seqs[i], seqs[i + 1]) for i in range(len(seqs) - 1) if seqs[i + 1] < seqs[i]]
    assert not disorder, "%s-%d: out of order (record, next record): %s" % (TOPIC, p, disorder[:5])
    missing = [(seq, off) for seq, off in acked if seq not in where]
    assert not missing, "%s-%d: %d acknowledged records missing (record, acked offset): %s" % (
        TOPIC, p, len(missing), missing[:5])
    moved = [(seq, off, where[seq]) for seq, off in acked if where[seq] != off]
    assert not moved, "%s-%d: acknowledged records at other offsets (record, acked, found): %s" % (
        TOPIC, p, moved[:5])
    assert max(seqs, default=-1) < sent, "%s-%d: record %d read, only %d sent" % (TOPIC, p, max(seqs), sent)
    return end, len(seqs) - len(acked)


def failover_under_load(binary):
    seed = int(os.environ.get("RUNNEL_FAILOVER_SEED", random.randrange(1 << 32)))
    print("     seed %d (RUNNEL_FAILOVER_SEED=%d replays it), %d rounds" % (seed, seed, ROUNDS), flush=True)
    rng = random.Random(seed)
    with new_cluster(binary) as c:
        create_topic(c.bootstrap(), TOPIC, PARTITIONS, 3, {"min.insync.replicas": "2",
                                                         "segment.bytes": str(SEGMENT_BYTES)})
        c.wait_in_sync(TOPIC, BOUND)
        group = "failover-%s" % uuid.uuid4().hex[:8]
        producer = SequenceProducer(c.bootstrap())
        reader = GroupReader(c.bootstrap(), group)
        producer.start()
        reader.start()
        try:
            wait_until(lambda: producer.acked_count() >= 200 and reader.commits > 0, BOUND,
                       "records acknowledged and a group commit before the first kill")
            c.wait_in_sync(OFFSETS_TOPIC, BOUND)  # created on the group's first FindCoordinator
            order = []
            coordinator_kills = 0
            for rnd in range(ROUNDS):
                if not order:
                    order = list(range(PARTITIONS))
                    rng.shuffle(order)
                time.sleep(rng.uniform(0.2, 1.5))  # seeded: how much is in flight at the kill
                assert producer.is_alive() and reader.is_alive(), "a client thread died: %s %s" % (
                    producer.failure, reader.failure)
                coordinator_kills += kill_leader(c, order.pop(), group, rng, rnd)

            # The group stops first; the producer goes on, so the committed
            # offsets lie below the log ends and a fresh member has records
            # to start at.
            reader.finish()
            acked_then = [len(producer.acked[p]) for p in range(PARTITIONS)]
            wait_until(lambda: all(len(producer.acked[p]) >= acked_then[p] + 20 for p in range(PARTITIONS)), BOUND,
                       "records acknowledged after the group stopped")
        finally:
            producer.finish()
            reader.finish()
        assert producer.left == 0, "%d records not delivered at the end" % producer.left
        assert not producer.fatal, "fatal producer errors: %s" % producer.fatal[:5]
        print("     %d records sent, %d acknowledged, %d delivery errors %s" % (
            sum(producer.sent), producer.acked_count(), len(producer.errors), producer.errors[:3]), flush=True)
        print("     group: %d records read, %d commits acknowledged, %d commit errors, %d assignments, "
              "coordinator killed in %d rounds" % (reader.read, reader.commits, len(reader.commit_errors),
                                                   reader.assignments, coordinator_kills), flush=True)
        assert_no_crash(c)

        # Exactly once and in order, on every replica.
        for p in range(PARTITIONS):
            acked = producer.acked[p]
            offsets = [off for _, off in acked]
            assert offsets == sorted(set(offsets)), "%s-%d: delivery reports' offsets not increasing" % (TOPIC, p)
            end, unacked = check_partition(c, p, acked, producer.sent[p], producer.errors)
            # The .log files byte for byte; the indexes checked against them
            # (a restarted broker's time index has its recovery's entry).
            sizes = wait_identical(c, TOPIC, p, BOUND * 2, indexes="valid")
            differ = describe_difference({i: segment_files(c, i, TOPIC, p) for i in sorted(c.brokers)})
            print("     %s-%d: %d records, %d acknowledged, %d never acknowledged; %d .log files identical on the "
                  "3 brokers, indexes valid%s" % (TOPIC, p, end, len(acked), unacked,
                                                  sum(n.endswith(".log") for n in sizes),
                                                  " (not identical: %s)" % differ if differ else " and identical"),
                  flush=True)

        # No acknowledged commit lost across the coordinator moves.
        assert not reader.resumed_below, "the member resumed below an acknowledged commit (partition, resumed, " \
            "committed): %s" % reader.resumed_below[:5]
        final = reader.final
        lost = {p: (final.get(p), o) for p, o in reader.committed.items() if final.get(p, -1) < o}
        assert not lost, "committed offsets below acknowledged commits {partition: (fetched, acked)}: %s" % lost
        assert set(reader.committed) == set(range(PARTITIONS)), "commits for partitions %s only" % sorted(
            reader.committed)
        resumed = first_offsets(c.bootstrap(), group)
        assert resumed == final, "a fresh member of the group starts at %s, committed %s" % (resumed, final)


def first_offsets(bootstrap, group):
    """The offset of the first record a fresh member of `group` reads in each partition."""
    from confluent_kafka import Consumer
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": group, "enable.auto.commit": False,
                         "auto.offset.reset": "earliest", "enable.partition.eof": False})
    first = {}
    try:
        consumer.subscribe([TOPIC])
        deadline = time.monotonic() + BOUND * 2
        while len(first) < PARTITIONS and time.monotonic() < deadline:
            m = consumer.poll(0.5)
            if m is not None and m.error() is None:
                first.setdefault(m.partition(), m.offset())
    finally:
        consumer.close()
    return first


def main():
    binary = runnel_binary()
    return run_tests([
        ("leaders SIGKILLed in turn under an idempotent acks=all producer and a committing group",
         lambda: failover_under_load(binary)),
    ])


if __name__ == "__main__":
    sys.exit(main())
