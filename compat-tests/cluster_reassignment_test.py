"""Partition reassignment in a three-broker Runnel cluster (label
"cluster"), driven by Kafka's own kafka-reassign-partitions
(org.apache.kafka.tools.reassign.ReassignPartitionsCommand, Kafka's jars
as kafka_harness.kafka_classpath finds them), each scenario on a fresh
cluster:

  1. move under load: a partition with data on brokers [1, 2] is moved to
     [2, 3] (--execute, then --verify until completed) while an idempotent
     acks=all producer writes to it: Metadata on every broker shows
     replicas [2, 3], broker 1's partition directory is gone, broker 3's
     segment files are byte-identical to the leader's, and every
     acknowledged record reads back once, in order;
  2. errors, list and cancel: first the errors through raw requests:
     INVALID_REPLICA_ASSIGNMENT (empty, duplicate, unknown broker),
     INVALID_REPLICATION_FACTOR (v1, AllowReplicationFactorChange false),
     UNKNOWN_TOPIC_OR_PARTITION, NO_REASSIGNMENT_IN_PROGRESS; then, with
     the target broker SIGSTOPped (sessions of 60000 ms: it stays
     registered), the move stays in progress,
     ListPartitionReassignments (raw) shows replicas [2, 3, 1], adding
     [3], removing [1], --verify says it is still in progress and
     kafka-topics --describe shows the adding and removing replicas; --cancel
     puts the replicas back ([2, 1], Kafka's revert order) and the list
     is empty again;
  3. a single node (no etcd): a move to its own id changes nothing, any
     other id is INVALID_REPLICA_ASSIGNMENT, a cancel is
     NO_REASSIGNMENT_IN_PROGRESS, the list is empty.

  RUNNEL_KAFKA_CACHE=<dir with kafka-4.1.1/> /usr/bin/python3 compat-tests/cluster_reassignment_test.py build/debug/runnel [1 2 3]
"""

import json
import os
import subprocess
import sys
import tempfile
import threading
import time

import kafka_harness
import kafka_wire as kw
from cluster_harness import (Cluster, Runnel, admin, consume, describe_difference, partition_dir, produce,
                             records_for, run_tests, runnel_binary, segment_files, wait_until)
from describe_topic_partitions_test import kafka_topics

BOUND = 60.0  # seconds: CI machines are loaded
NONE = 0
UNKNOWN_TOPIC_OR_PARTITION = 3
INVALID_REPLICATION_FACTOR = 38
INVALID_REPLICA_ASSIGNMENT = 39
NO_REASSIGNMENT_IN_PROGRESS = 85
REASSIGN_COMMAND = "org.apache.kafka.tools.reassign.ReassignPartitionsCommand"

_classpath = None


def classpath():
    global _classpath
    if _classpath is None:
        _classpath = kafka_harness.kafka_classpath()
    return _classpath


def reassign_tool(bootstrap, mode, plan, *extra):
    """kafka-reassign-partitions --<mode> with `plan` ({(topic, p): [replicas]})
    as its reassignment file: -> its stdout; asserts exit code 0."""
    doc = {"version": 1, "partitions": [{"topic": t, "partition": p, "replicas": r} for (t, p), r in plan.items()]}
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump(doc, f)
        path = f.name
    try:
        cmd = ["java", "-Dlog4j2.level=ERROR", "-cp", classpath(), REASSIGN_COMMAND, "--bootstrap-server", bootstrap,
               "--reassignment-json-file", path, "--" + mode, *extra]
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=180)
    finally:
        os.unlink(path)
    assert out.returncode == 0, "kafka-reassign-partitions --%s exited %d:\n%s%s" % (
        mode, out.returncode, out.stdout, out.stderr)
    return out.stdout


# -- raw AlterPartitionReassignments (45) and ListPartitionReassignments (46), flexible ----------

def _cstr(s):
    b = s.encode()
    return kw.uvarint(len(b) + 1) + b


def _carray(items):
    return kw.uvarint(len(items) + 1) + b"".join(items)


def _cints(ints):
    return kw.uvarint(0) if ints is None else _carray([kw.i32(i) for i in ints])


TAGS = kw.uvarint(0)


def alter_reassignments(correlation_id, plan, version=0, allow_rf_change=True, timeout_ms=20000):
    """plan: {(topic, p): [replicas] or None (cancel)}."""
    topics = {}
    for (t, p), r in plan.items():
        topics.setdefault(t, []).append(kw.i32(p) + _cints(r) + TAGS)
    body = kw.i32(timeout_ms)
    if version >= 1:
        body += kw.i8(1 if allow_rf_change else 0)
    body += _carray([_cstr(t) + _carray(ps) + TAGS for t, ps in topics.items()]) + TAGS
    return kw.request(45, version, correlation_id, body, flexible=True)


def _read_cstr(r):
    n = r.uvarint() - 1
    return None if n < 0 else r.take(n).decode()


def _read_carray(r, item):
    n = r.uvarint() - 1
    return None if n < 0 else [item(r) for _ in range(n)]


def parse_alter_reassignments(body, version=0):
    """-> (top-level error, {(topic, p): (error, message)})"""
    r = kw.Reader(body)
    assert r.i8() == 0, "tagged fields in the response header"
    r.i32()  # throttle
    if version >= 1:
        r.i8()  # AllowReplicationFactorChange
    top = r.i16()
    _read_cstr(r)
    out = {}

    def topic(r):
        name = _read_cstr(r)

        def partition(r):
            p, err, msg = r.i32(), r.i16(), _read_cstr(r)
            assert r.i8() == 0
            out[(name, p)] = (err, msg)
        _read_carray(r, partition)
        assert r.i8() == 0
    _read_carray(r, topic)
    assert r.i8() == 0 and r.done(), "trailing bytes in AlterPartitionReassignments response"
    return top, out


def list_reassignments(correlation_id, topics=None):
    """topics: None (all) or {topic: [partitions]}."""
    body = kw.i32(20000)
    if topics is None:
        body += kw.uvarint(0)
    else:
        body += _carray([_cstr(t) + _cints(ps) + TAGS for t, ps in topics.items()])
    return kw.request(46, 0, correlation_id, body + TAGS, flexible=True)


def parse_list_reassignments(body):
    """-> (error, {(topic, p): (replicas, adding, removing)})"""
    r = kw.Reader(body)
    assert r.i8() == 0, "tagged fields in the response header"
    r.i32()
    err = r.i16()
    _read_cstr(r)
    out = {}

    def ints(r):
        return _read_carray(r, lambda r: r.i32())

    def topic(r):
        name = _read_cstr(r)

        def partition(r):
            p = r.i32()
            out[(name, p)] = (ints(r), ints(r), ints(r))
            assert r.i8() == 0
        _read_carray(r, partition)
        assert r.i8() == 0
    _read_carray(r, topic)
    assert r.i8() == 0 and r.done(), "trailing bytes in ListPartitionReassignments response"
    return err, out


def call(port, frame_fn, corr=[1000]):
    corr[0] += 1
    with kw.Connection(port, timeout=30) as c:
        return c.call(frame_fn(corr[0]), corr[0])


def alter(port, plan, **kwargs):
    version = kwargs.get("version", 0)
    return parse_alter_reassignments(call(port, lambda corr: alter_reassignments(corr, plan, **kwargs)), version)


def listed(port, topics=None):
    err, out = parse_list_reassignments(call(port, lambda corr: list_reassignments(corr, topics)))
    assert err == NONE, "ListPartitionReassignments error %d" % err
    return out


# -- helpers ----------------------------------------------------------------------------------

def create_assigned(c, topic, assignment, config=None):
    """A topic whose partition p is on assignment[p] (first replica leads)."""
    from confluent_kafka.admin import NewTopic
    client = admin(c.bootstrap())
    f = client.create_topics([NewTopic(topic, len(assignment), replica_assignment=assignment, config=config or {})],
                             operation_timeout=20, request_timeout=30)
    f[topic].result(40)
    want = [list(a) for a in assignment]

    def ready():
        for i in c.live_ids():
            parts = c.partitions(i, topic)
            for p, a in enumerate(want):
                assert parts[p]["replicas"] == a and sorted(parts[p]["isr"]) == sorted(a), \
                    "node %d: %s-%d %s" % (i, topic, p, parts[p])
        return True
    wait_until(ready, BOUND, "%s created in sync on %s" % (topic, want))


# -- 1 ----------------------------------------------------------------------------------------

def move_under_load(binary):
    with Cluster(3, binary, overrides={"replica.lag.time.max.ms": "10000"}) as c:
        topic, p = "move", 0
        create_assigned(c, topic, [[1, 2]], {"segment.bytes": "262144", "min.insync.replicas": "1"})
        from confluent_kafka import Producer
        # Bootstrapped from the brokers that stay; broker 1 closes its replica, not its listener.
        prod = Producer({"bootstrap.servers": c.bootstrap([2, 3]), "acks": "all", "enable.idempotence": True,
                         "linger.ms": 2, "batch.size": 16384, "message.timeout.ms": 90000})
        acked, errors = [], []

        def delivered(err, msg):
            (errors if err else acked).append(err if err else (msg.offset(), msg.value()))

        done = threading.Event()
        sent = [0]

        def write():
            while not done.is_set():
                try:
                    prod.produce(topic, value=b"rec-%06d-" % sent[0] + b"x" * 200, partition=p, on_delivery=delivered)
                    sent[0] += 1
                except BufferError:
                    pass
                prod.poll(0.001)
                time.sleep(0.001)

        writer = threading.Thread(target=write)
        writer.start()
        try:
            wait_until(lambda: len(acked) >= 3000, BOUND, "3000 records acknowledged before the move", poll=0.2)
            start = time.monotonic()
            out = reassign_tool(c.bootstrap([2]), "execute", {(topic, p): [2, 3]})
            assert "Successfully started partition reassignment" in out, out

            def verified():
                text = reassign_tool(c.bootstrap([2]), "verify", {(topic, p): [2, 3]})
                assert "Reassignment of partition %s-%d is completed" % (topic, p) in text, text
                return text
            wait_until(verified, BOUND, "--verify to report the move completed", poll=1.0)
            took = time.monotonic() - start
            time.sleep(1.0)  # a little more load on the new replicas
        finally:
            done.set()
            writer.join(30)
        assert prod.flush(90) == 0, "records left undelivered"
        assert not errors, "the producer saw errors: %s" % errors[:5]
        assert len(acked) == sent[0], "acked %d of %d" % (len(acked), sent[0])

        def moved():
            for i in c.live_ids():
                part = c.partitions(i, topic)[p]
                assert part["replicas"] == [2, 3], "node %d: replicas %s" % (i, part["replicas"])
                assert sorted(part["isr"]) == [2, 3], "node %d: isr %s" % (i, part["isr"])
                assert part["leader"] == 2, "node %d: leader %d" % (i, part["leader"])
            return True
        wait_until(moved, BOUND, "every broker's Metadata to show replicas [2, 3]")
        assert listed(c.port(1)) == {}, "a reassignment is still listed"
        wait_until(lambda: not os.path.isdir(partition_dir(c, 1, topic, p)), BOUND, "broker 1's replica removed")

        def identical():
            files = {i: segment_files(c, i, topic, p) for i in (2, 3)}
            diff = describe_difference(files)
            assert diff is None, diff
            logs = [v for n, v in files[2].items() if n.endswith(".log")]
            return len(logs), sum(len(v) for v in logs)
        logs, size = wait_until(identical, BOUND, "broker 3's segments byte-identical to leader 2's", poll=0.5)

        values = [v for _, v in sorted(acked)]
        assert len(set(values)) == len(values), "a record was acknowledged twice"
        got = [v for _, _, v in consume(c.bootstrap([2, 3]), topic, p, len(values), timeout=BOUND)]
        assert got == values, "read back differs from what was acknowledged (%d / %d records)" % (len(got), len(values))
        log = c.brokers[1].log_text()
        assert "reassignment completed" in log, "broker 1 (the old leader) did not complete the move"
        print("     %d records acknowledged across the move (completed in %.1f s); %d segments (%d log bytes) identical"
              % (len(values), took, logs, size), flush=True)


# -- 2 ----------------------------------------------------------------------------------------

def list_cancel_and_errors(binary):
    with Cluster(3, binary, session_timeout_ms=60000, heartbeat_interval_ms=2000) as c:
        topic, p = "stay", 0
        create_assigned(c, topic, [[1, 2]], {"min.insync.replicas": "2"})
        # Errors, through raw requests to a broker that is not the controller too.
        port = c.port(2)
        top, res = alter(port, {(topic, p): None})
        assert (top, res[(topic, p)][0]) == (NONE, NO_REASSIGNMENT_IN_PROGRESS), res
        for target, what in (([], "empty"), ([1, 1], "more than once"), ([1, 9], "broker 9")):
            top, res = alter(port, {(topic, p): target})
            err, msg = res[(topic, p)]
            assert (top, err) == (NONE, INVALID_REPLICA_ASSIGNMENT), "%s: %d %d" % (target, top, err)
            assert msg and what in msg, "%s: message %r" % (target, msg)
        _, res = alter(port, {(topic, p): [1]}, version=1, allow_rf_change=False)
        assert res[(topic, p)][0] == INVALID_REPLICATION_FACTOR, res
        _, res = alter(port, {(topic, 5): [1, 2], ("nope", 0): [1, 2]})
        assert res[(topic, 5)][0] == UNKNOWN_TOPIC_OR_PARTITION and \
            res[("nope", 0)][0] == UNKNOWN_TOPIC_OR_PARTITION, res
        # v1 with the factor unchanged, and the current replicas as target: nothing moves.
        _, res = alter(port, {(topic, p): [1, 2]}, version=1, allow_rf_change=False)
        assert res[(topic, p)][0] == NONE, res
        assert listed(port) == {}

        c.sigstop(3)  # registered for 60 s more, but cannot fetch
        try:
            out = reassign_tool(c.bootstrap([1, 2]), "execute", {(topic, p): [2, 3]})
            assert "Successfully started partition reassignment" in out, out
            want = {(topic, p): ([2, 3, 1], [3], [1])}
            for node in (1, 2):
                assert listed(c.port(node)) == want, "node %d lists %s" % (node, listed(c.port(node)))
            assert listed(c.port(1), {topic: [p, 7], "nope": [0]}) == want
            parts = c.partitions(1, topic)
            epoch_before = parts[p]["leader_epoch"]
            assert parts[p]["replicas"] == [2, 3, 1], "Metadata replicas during the move: %s" % parts[p]
            assert parts[p]["leader"] == 1 and sorted(parts[p]["isr"]) == [1, 2], parts[p]
            text = reassign_tool(c.bootstrap([1, 2]), "verify", {(topic, p): [2, 3]})
            assert "Reassignment of partition %s-%d is still in progress" % (topic, p) in text, text
            # kafka-topics --describe asks ListPartitionReassignments too.
            text = kafka_topics(classpath(), c.bootstrap([1, 2]), "--describe", "--topic", topic)
            assert "Replicas: 2,3,1" in text and "Adding Replicas: 3" in text and "Removing Replicas: 1" in text, text

            # The tool clears throttles on every broker after a cancel: paused
            # broker 3 cannot answer (nor could a paused Kafka broker).
            text = reassign_tool(c.bootstrap([1, 2]), "cancel", {(topic, p): [2, 3]}, "--preserve-throttles")
            assert "Successfully cancelled partition reassignment for: %s-%d" % (topic, p) in text, text
            assert listed(c.port(1)) == {} and listed(c.port(2)) == {}, "still listed after --cancel"
            part = c.partitions(2, topic)[p]
            assert part["replicas"] == [2, 1] and sorted(part["isr"]) == [1, 2] and part["leader"] == 1, part
            # Replica 3 dropped: a new leader epoch (Kafka's), under which
            # follower 2 goes on following, as acks=all needs it to.
            assert part["leader_epoch"] > epoch_before, (epoch_before, part)
            produce(c.bootstrap([1, 2]), topic, records_for(p, 50, b"after-cancel"), acks="all", timeout=BOUND)
        finally:
            c.sigcont(3)
        # Broker 3 hosts nothing of it now.
        # Broker 3 may have begun opening the replica from the move's image
        # before the cancel's arrived; as Kafka's async log deletion, the
        # removal follows the metadata, bounded.
        wait_until(lambda: c.partitions(3, topic)[p]["replicas"] == [2, 1], BOUND, "broker 3 to see the cancel")
        wait_until(lambda: not os.path.isdir(partition_dir(c, 3, topic, p)), BOUND,
                   "broker 3 to remove the replica of a cancelled move")


# -- 3 ----------------------------------------------------------------------------------------

def single_node(binary):
    with Runnel(binary) as r:
        topic = "solo"
        from confluent_kafka.admin import NewTopic
        client = admin(r.bootstrap)
        client.create_topics([NewTopic(topic, num_partitions=1, replication_factor=1)])[topic].result(30)
        md = kw.parse_metadata_v7(call(r.port, lambda corr: kw.metadata_v7(corr, [topic])))
        (self_id,) = md["brokers"].keys()
        top, res = alter(r.port, {(topic, 0): [self_id]})
        assert (top, res[(topic, 0)][0]) == (NONE, NONE), res
        _, res = alter(r.port, {(topic, 0): [self_id + 1]})
        assert res[(topic, 0)][0] == INVALID_REPLICA_ASSIGNMENT, res
        _, res = alter(r.port, {(topic, 0): None})
        assert res[(topic, 0)][0] == NO_REASSIGNMENT_IN_PROGRESS, res
        assert listed(r.port) == {}
        text = reassign_tool(r.bootstrap, "execute", {(topic, 0): [self_id]})
        assert "Successfully started partition reassignment" in text, text
        text = reassign_tool(r.bootstrap, "verify", {(topic, 0): [self_id]})
        assert "Reassignment of partition %s-0 is completed" % topic in text, text
        md = kw.parse_metadata_v7(call(r.port, lambda corr: kw.metadata_v7(corr, [topic])))
        assert md["topics"][topic]["partitions"][0]["replicas"] == [self_id]


def main():
    binary = runnel_binary()
    wanted = set(sys.argv[2:])
    tests = [
        ("1 kafka-reassign-partitions moves [1,2] to [2,3] under acks=all load", lambda: move_under_load(binary)),
        ("2 ListPartitionReassignments, --cancel and the errors", lambda: list_cancel_and_errors(binary)),
        ("3 a single node answers as a one-broker Kafka", lambda: single_node(binary)),
    ]
    return run_tests([t for t in tests if not wanted or t[0].split()[0] in wanted])


if __name__ == "__main__":
    sys.exit(main())
