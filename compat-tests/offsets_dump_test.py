#!/usr/bin/python3
"""Kafka's own kafka.tools.DumpLogSegments --offsets-decoder reads the
__consumer_offsets segments Runnel wrote (issue 5).

A librdkafka group commits offsets and rebalances (a second member joins,
then leaves); a standalone consumer commits without joining; a third group
commits and is deleted (tombstones). After a graceful stop, Kafka 4.1.1's
DumpLogSegments (jars from storage/interop/kafka_jars.sh, cached) decodes
every __consumer_offsets partition with --deep-iteration. Every record must
decode: offset commit keys and values carry the group, topic, partition and
the offsets committed last; group metadata values carry protocol type
"consumer", each generation's members (by client id), the leader and the
assignment; the deleted group's records are tombstones.

usage: offsets_dump_test.py <path to runnel> <kafka jar cache dir>
"""
import glob
import json
import os
import re
import subprocess
import sys
import time

from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic
from kafka.admin import KafkaAdminClient

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from runnel_harness import Runnel, run_tests  # noqa: E402

TOPIC = "dumped"
PARTITIONS = 4
GROUP = "dump-group"
STANDALONE = "dump-standalone"
DELETED = "dump-deleted"
OVERRIDES = {"group.initial.rebalance.delay.ms": "0", "group.min.session.timeout.ms": "1000"}

_RECORD = re.compile(r"^\| offset: (\d+) .* key: (.*) payload: (.*)$")


def consumer(bootstrap, group, client_id):
    return Consumer({
        "bootstrap.servers": bootstrap, "group.id": group, "client.id": client_id,
        "enable.auto.commit": False, "auto.offset.reset": "earliest",
        "session.timeout.ms": 3000, "heartbeat.interval.ms": 300,
        "topic.metadata.refresh.interval.ms": 1000,
    })


def poll_until(consumers, condition, timeout, what):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for c in consumers:
            c.poll(0.05)
        if condition():
            return
    raise AssertionError("timed out waiting for " + what)


def commit(c, offsets):
    """Synchronous commit of {partition: offset}; fails on any per-partition error."""
    done = c.commit(offsets=[TopicPartition(TOPIC, p, o) for p, o in offsets.items()], asynchronous=False)
    bad = [tp for tp in done if tp.error]
    assert not bad, "commit failed: %s" % bad


def make_history(bootstrap):
    """Drives the groups; returns {group: {partition: last committed offset}}."""
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(TOPIC, PARTITIONS, 1)])[TOPIC].result(15)
    p = Producer({"bootstrap.servers": bootstrap})
    for i in range(40):
        p.produce(TOPIC, b"v%d" % i, partition=i % PARTITIONS)
    assert p.flush(15) == 0

    expected = {GROUP: {}, STANDALONE: {}, DELETED: {}}
    a = consumer(bootstrap, GROUP, "dump-a")
    b = consumer(bootstrap, GROUP, "dump-b")
    try:
        a.subscribe([TOPIC])
        poll_until([a], lambda: len(a.assignment()) == PARTITIONS, 30, "dump-a to own every partition")
        commit(a, {0: 3, 1: 4})
        expected[GROUP].update({0: 3, 1: 4})
        b.subscribe([TOPIC])
        poll_until([a, b], lambda: len(a.assignment()) + len(b.assignment()) == PARTITIONS
                   and a.assignment() and b.assignment(), 30, "the two members to share the partitions")
        owned = [tp.partition for tp in b.assignment()]
        commit(b, {owned[0]: 7})
        expected[GROUP][owned[0]] = 7
        b.close()
        b = None
        poll_until([a], lambda: len(a.assignment()) == PARTITIONS, 30, "dump-a to own every partition again")
        commit(a, {2: 9, 3: 10})
        expected[GROUP].update({2: 9, 3: 10})
    finally:
        a.close()
        if b is not None:
            b.close()

    # Standalone: generation -1, no JoinGroup; Kafka writes no group metadata for it.
    s = consumer(bootstrap, STANDALONE, "dump-standalone")
    try:
        commit(s, {1: 5})
        expected[STANDALONE][1] = 5
    finally:
        s.close()

    d = consumer(bootstrap, DELETED, "dump-deleted")
    try:
        commit(d, {0: 2})
    finally:
        d.close()
    ka = KafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=15000)
    try:
        for group, error in ka.delete_consumer_groups([DELETED]):
            assert error.errno == 0, "deleting %s: %s" % (group, error)
    finally:
        ka.close()
    return expected


def dump_offsets(classpath, data_dir):
    """Every decoded record of every non-empty __consumer_offsets segment, in log order."""
    records = []
    for seg in sorted(glob.glob(os.path.join(data_dir, "__consumer_offsets-*", "*.log"))):
        if os.path.getsize(seg) == 0:
            continue
        out = subprocess.run(["java", "-Dlog4j2.level=ERROR", "-cp", classpath, "kafka.tools.DumpLogSegments",
                              "--files", seg, "--offsets-decoder", "--deep-iteration"],
                             capture_output=True, text=True, timeout=120)
        assert out.returncode == 0, "DumpLogSegments exited %d: %s" % (out.returncode, out.stderr)
        text = out.stdout
        bad = [line for line in (text + out.stderr).splitlines()
               if re.search(r"exception|error|corrupt|invalid|unknown", line, re.I) and not line.startswith("| offset")]
        assert not bad, "DumpLogSegments complained about %s:\n%s" % (seg, "\n".join(bad))
        batches = [line for line in text.splitlines() if line.startswith("baseOffset:")]
        assert batches and all("isvalid: true" in line for line in batches), "invalid batch in %s" % seg
        n = 0
        for line in text.splitlines():
            if not line.startswith("| offset:"):
                continue
            m = _RECORD.match(line)
            assert m, "a record without a decoded key and payload in %s: %s" % (seg, line)
            key = json.loads(m.group(2))
            payload = None if m.group(3) == "<DELETE>" else json.loads(m.group(3))
            records.append((seg, key, payload))
            n += 1
        assert n > 0, "no records decoded from %s" % seg
    return records


def check(records, expected):
    # Offsets: the last commit of each (group, topic, partition) wins, as on load.
    last = {}
    for _, key, payload in records:
        if key["type"] in ("0", "1"):
            d = key["data"]
            last[(d["group"], d["topic"], d["partition"])] = payload
    for group, offsets in expected.items():
        for partition, offset in offsets.items():
            value = last.get((group, TOPIC, partition))
            assert value is not None, "no offset commit for %s %s-%d" % (group, TOPIC, partition)
            assert value["data"]["offset"] == offset, "%s %s-%d: %s, want %d" % (
                group, TOPIC, partition, value, offset)
            assert value["data"]["commitTimestamp"] > 0, value
    for partition in range(PARTITIONS):
        if (DELETED, TOPIC, partition) in last:
            assert last[(DELETED, TOPIC, partition)] is None, "deleted group's offset is not a tombstone"
    assert (DELETED, TOPIC, 0) in last, "the deleted group's offset commit was not written"

    metadata = [(seg, payload) for seg, key, payload in records
                if key["type"] == "2" and key["data"]["group"] == GROUP]
    assert metadata, "no group metadata record for " + GROUP
    assert len({seg for seg, _ in metadata}) == 1, "one group's records span partitions"
    generations = {}
    for _, payload in metadata:
        assert payload is not None, "group metadata tombstone for a live group"
        v = payload["data"]
        assert v["protocolType"] == "consumer", v
        generations[v["generation"]] = v
    with_two = [v for v in generations.values() if len(v["members"]) == 2]
    assert with_two, "no generation with both members: %s" % sorted(generations)
    v = with_two[-1]
    clients = sorted(m["clientId"] for m in v["members"])
    assert clients == ["dump-a", "dump-b"], clients
    assert v["protocol"] in ("range", "roundrobin"), v["protocol"]
    assert v["leader"] in [m["memberId"] for m in v["members"]], v
    for m in v["members"]:
        assert m["memberId"].startswith(m["clientId"] + "-"), m
        assert m["sessionTimeout"] == 3000, m
        assert m["subscription"]["topics"] == [TOPIC], m
    assigned = sorted(p for m in v["members"] for t in m["assignment"]["assignedPartitions"] for p in t["partitions"])
    assert assigned == list(range(PARTITIONS)), "assignment %s" % assigned
    assert max(generations) >= 3, "rebalances not recorded: generations %s" % sorted(generations)
    final = generations[max(generations)]
    assert [m["clientId"] for m in final["members"]] in (["dump-a"], []), final

    deleted = [payload for _, key, payload in records if key["type"] == "2" and key["data"]["group"] == DELETED]
    assert deleted and deleted[-1] is None, "the deleted group has no metadata tombstone: %s" % deleted
    standalone = [1 for _, key, _ in records if key["type"] == "2" and key["data"]["group"] == STANDALONE]
    assert not standalone, "a standalone consumer's commit wrote group metadata"
    print("DumpLogSegments decoded %d records: %d generations of %s, offsets of %d groups" % (
        len(records), len(generations), GROUP, len(expected)))


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    cache = sys.argv[2]
    jars = subprocess.run([os.path.join(HERE, "..", "storage", "interop", "kafka_jars.sh"), cache],
                          capture_output=True, text=True, timeout=1800)
    if jars.returncode != 0:
        sys.exit("kafka_jars.sh failed: " + jars.stderr)
    classpath = jars.stdout.strip()

    with Runnel(sys.argv[1], OVERRIDES) as r:
        state = {}

        def history():
            state["expected"] = make_history(r.bootstrap)

        def decoded():
            rc = r.stop()
            assert rc == 0, "graceful stop exited with %s" % rc
            check(dump_offsets(classpath, r.log_dir), state["expected"])

        rc = run_tests([("groups commit, rebalance, delete", history),
                        ("DumpLogSegments --offsets-decoder reads __consumer_offsets", decoded)], r)
    sys.exit(rc)


if __name__ == "__main__":
    main()
