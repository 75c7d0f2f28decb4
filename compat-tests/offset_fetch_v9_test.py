#!/usr/bin/python3
"""OffsetFetch v9's KIP-848 member id and epoch, against a classic group.

Kafka checks them only for consumer-protocol (KIP-848) groups; a classic
group's OffsetFetch ignores them (ClassicGroup.validateOffsetFetch fails only
a Dead group), and a group that does not exist answers offset -1 with no
error. So with a live librdkafka member in a Stable classic group that has
committed offsets, OffsetFetch v9 gets those offsets back whether it names
no member (null, -1), a member id the group never had with a made-up epoch,
or an empty member id; and an unknown group answers -1 for each partition. Requests are built by hand (no client here sends v9).

usage: offset_fetch_v9_test.py <path to runnel>
"""
import os
import sys
import time

from confluent_kafka import Consumer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kafka_wire as w  # noqa: E402
from runnel_harness import Runnel, run_tests  # noqa: E402

TOPIC = "fetch-v9"
GROUP = "fetch-v9-group"
COMMITTED = {0: 11, 1: 22}


def offset_fetch_v9(correlation_id, groups):
    """groups: [(group_id, member_id or None, member_epoch, {topic: [partitions]})]."""
    items = []
    for group_id, member_id, epoch, topics in groups:
        ts = [w.compact_string(t) + w.compact_array([w.i32(p) for p in ps]) + w.TAGS for t, ps in topics.items()]
        items.append(w.compact_string(group_id) + w.compact_string(member_id) + w.i32(epoch)
                     + w.compact_array(ts) + w.TAGS)
    body = w.compact_array(items) + w.i8(0) + w.TAGS  # RequireStable false
    return w.request(9, 9, correlation_id, body, flexible=True)


def parse_offset_fetch_v9(frame_after_correlation_id):
    """-> {group: (error, {(topic, partition): (offset, error)})}"""
    r = w.Reader(frame_after_correlation_id)
    r.skip_tags()  # response header v1
    r.i32()  # throttle time

    def partition(r):
        p, off, _epoch, _meta, err = r.i32(), r.i64(), r.i32(), r.compact_string(), r.i16()
        r.skip_tags()
        return p, off, err

    def topic(r):
        name = r.compact_string()
        parts = r.compact_array(partition)
        r.skip_tags()
        return name, parts

    def group(r):
        gid = r.compact_string()
        topics = r.compact_array(topic)
        err = r.i16()
        r.skip_tags()
        return gid, err, topics

    groups = r.compact_array(group)
    r.skip_tags()
    assert r.done(), "trailing bytes in OffsetFetch v9 response"
    out = {}
    for gid, err, topics in groups:
        out[gid] = (err, {(t, p): (off, e) for t, parts in topics for p, off, e in parts})
    return out


def main():
    with Runnel(overrides={"group.initial.rebalance.delay.ms": "0"}) as r:
        member = {}

        def committed_by_a_live_member():
            admin = AdminClient({"bootstrap.servers": r.bootstrap})
            admin.create_topics([NewTopic(TOPIC, 2, 1)])[TOPIC].result(15)
            c = Consumer({"bootstrap.servers": r.bootstrap, "group.id": GROUP, "enable.auto.commit": False,
                          "session.timeout.ms": 30000})
            member["consumer"] = c
            assigned = []
            c.subscribe([TOPIC], on_assign=lambda consumer, parts: assigned.append(parts))
            deadline = time.monotonic() + 30
            while not assigned and time.monotonic() < deadline:
                c.poll(0.2)
            assert assigned, "no assignment within 30 s"
            done = c.commit(offsets=[TopicPartition(TOPIC, p, o) for p, o in COMMITTED.items()], asynchronous=False)
            assert not [tp for tp in done if tp.error], done

        def member_fields_ignored_for_classic_groups():
            want = {(TOPIC, p): (o, 0) for p, o in COMMITTED.items()}
            with w.Connection(r.port) as conn:
                for n, (mid, epoch) in enumerate([(None, -1), ("never-a-member", 42), ("", 0)]):
                    got = parse_offset_fetch_v9(conn.call(offset_fetch_v9(10 + n, [(GROUP, mid, epoch, {TOPIC: [0, 1]})]),
                                                          10 + n))
                    assert got == {GROUP: (0, want)}, "member %r epoch %d: %s" % (mid, epoch, got)

        def unknown_group_answers_minus_one():
            with w.Connection(r.port) as conn:
                got = parse_offset_fetch_v9(conn.call(offset_fetch_v9(
                    20, [("no-such-group", "someone", 3, {TOPIC: [0, 1]}), (GROUP, "x", 7, {TOPIC: [1]})]), 20))
            assert got == {"no-such-group": (0, {(TOPIC, 0): (-1, 0), (TOPIC, 1): (-1, 0)}),
                           GROUP: (0, {(TOPIC, 1): (COMMITTED[1], 0)})}, got

        try:
            rc = run_tests([
                ("a live member commits offsets", committed_by_a_live_member),
                ("OffsetFetch v9 ignores member id and epoch for a classic group", member_fields_ignored_for_classic_groups),
                ("OffsetFetch v9 for an unknown group: offset -1, no error", unknown_group_answers_minus_one),
            ], r)
        finally:
            if "consumer" in member:
                member["consumer"].close()
    sys.exit(rc)


if __name__ == "__main__":
    main()
