"""A broker named leader of a new partition a moment before it has opened
it (label "cluster"): the metadata image reaches every broker at once, but
the leader opens the partition's log on its blocking pool afterwards, so a
client that learnt the leader from another broker can reach it first.
Found as matrix_cluster flakes: kafkajs's and sarama's produce_acks0
scenarios (an acks=0 producer never sees NOT_LEADER_OR_FOLLOWER, so its
records were lost; sarama's GetOffset retries ListOffsets only once).

Node 1 of three runs with compat-tests/faults/slow_mkdir.cc preloaded,
which delays its mkdir of every "opening-*" partition directory by 1.5 s,
so the moment lasts long enough to be hit every time. Topics of three
partitions, replication factor 1, are created through node 2; once node 2's
Metadata names their leaders, to node 1, for the partitions it leads and
while their directories do not exist yet:
  - Produce acks=0 of one record, then on the same connection ListOffsets
    latest: 1 (the produce waited for the partition and appended);
  - ListOffsets latest and earliest: 0, no error.
Both wait at most 5 s (Runnel's bound) for the partition to open.

  /usr/bin/python3 compat-tests/cluster_opening_leader_test.py build/debug/runnel build/debug/libslow_mkdir.so
"""

import os
import sys
import time

import kafka_wire as kw
from cluster_harness import NONE, Cluster, partition_dir, run_tests, runnel_binary, wait_until
from runnel_harness import preloaded

BOUND = 30.0  # seconds: CI machines are loaded
DELAY_MS = 1500
PREFIX = "opening-"


def led_by_node1(c, topic):
    """The partitions of `topic` node 2's Metadata names node 1 leader of, once it names every leader."""
    def leaders():
        t = c.metadata(2, [topic])["topics"].get(topic)
        if not t or t["error"] != NONE or len(t["partitions"]) != 3:
            return None
        if any(p["leader"] < 0 for p in t["partitions"].values()):
            return None
        return t["partitions"]
    parts = wait_until(leaders, BOUND, "node 2's Metadata to name the leaders of %s" % topic, poll=0.01)
    mine = sorted(i for i, p in parts.items() if p["leader"] == 1)
    assert mine, "node 1 leads no partition of %s: %s" % (topic, parts)
    return mine


def create(c, topic):
    result = c.create_topics_raw(2, [(topic, 3, 1)])
    assert result[topic][0] == NONE, "CreateTopics %s: %s" % (topic, result[topic])
    mine = led_by_node1(c, topic)
    unopened = [p for p in mine if not os.path.isdir(partition_dir(c, 1, topic, p))]
    assert unopened == mine, ("node 1 had already made %s of %s: the test did not reach it in time" %
                              (sorted(set(mine) - set(unopened)), topic))
    return mine


def list_offsets(conn, corr, topic, partitions, timestamp):
    return kw.parse_list_offsets_v1(conn.call(kw.list_offsets_v1(corr, topic, partitions, timestamp), corr))


def produce_acks0(c):
    topic = PREFIX + "acks0"
    mine = create(c, topic)
    batch = kw.record_batch([(b"k", b"sent before the leader opened it", [])], int(time.time() * 1000))
    started = time.monotonic()
    with kw.Connection(c.port(1), timeout=BOUND) as conn:
        conn.send(kw.produce_v8(1, 0, {topic: [(p, batch) for p in mine]}))  # acks=0: no response
        got = list_offsets(conn, 2, topic, mine, -1)
    took = time.monotonic() - started
    for p in mine:
        assert got[(topic, p)] == (NONE, 1), "%s-%d after the acks=0 produce: (error, offset) %s" % (
            topic, p, got[(topic, p)])
    print("     acks=0 record appended to %s partitions %s; answered %.2f s after sending" % (topic, mine, took),
          flush=True)


def offsets(c):
    topic = PREFIX + "offsets"
    mine = create(c, topic)
    started = time.monotonic()
    with kw.Connection(c.port(1), timeout=BOUND) as conn:
        latest = list_offsets(conn, 1, topic, mine, -1)
        earliest = list_offsets(conn, 2, topic, mine, -2)
    took = time.monotonic() - started
    for p in mine:
        assert latest[(topic, p)] == (NONE, 0), "%s-%d latest: %s" % (topic, p, latest[(topic, p)])
        assert earliest[(topic, p)] == (NONE, 0), "%s-%d earliest: %s" % (topic, p, earliest[(topic, p)])
    print("     ListOffsets of %s partitions %s: 0, answered %.2f s after sending" % (topic, mine, took), flush=True)


def main():
    binary = runnel_binary()
    shim = os.path.abspath(sys.argv[2])
    c = Cluster(3, binary)
    c.brokers[1].env = preloaded(shim, RUNNEL_SLOW_MKDIR_PREFIX=PREFIX, RUNNEL_SLOW_MKDIR_MS=str(DELAY_MS))
    with c:
        return run_tests([
            ("Produce acks=0 to a leader that has not opened the partition yet", lambda: produce_acks0(c)),
            ("ListOffsets to a leader that has not opened the partition yet", lambda: offsets(c)),
        ], c)


if __name__ == "__main__":
    sys.exit(main())
