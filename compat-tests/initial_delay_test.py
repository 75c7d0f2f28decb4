#!/usr/bin/python3
"""The initial rebalance delay for a group that has been used before.

Kafka applies group.initial.rebalance.delay.ms whenever a rebalance starts
from Empty, and every member that arrives meanwhile extends it (up to the
rebalance timeout), so a consumer fleet restarting into an old group forms
one generation. Here a librdkafka consumer first makes the group real
(generation, committed offset, then it leaves: Empty); then three members
send JoinGroup 2 s apart with the delay at 3 s. All three must be answered
with the same generation. JoinGroup is built by hand so that the arrival
times are the test's, not a client's.

usage: initial_delay_test.py <path to runnel>
"""
import os
import sys
import time

from confluent_kafka import Consumer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kafka_wire as w  # noqa: E402
from runnel_harness import Runnel, run_tests  # noqa: E402

TOPIC = "fleet"
GROUP = "fleet-group"
OVERRIDES = {"group.initial.rebalance.delay.ms": "3000", "group.min.session.timeout.ms": "1000"}
MEMBER_ID_REQUIRED = 79


def join_group_v5(correlation_id, member_id):
    subscription = w.i16(0) + w.array([w.string(TOPIC)]) + w.bytes_(None)  # ConsumerProtocolSubscription v0
    body = (w.string(GROUP) + w.i32(30000) + w.i32(20000) + w.string(member_id) + w.string(None) +
            w.string("consumer") + w.array([w.string("range") + w.bytes_(subscription)]))
    return w.request(11, 5, correlation_id, body)


def parse_join_group_v5(body):
    r = w.Reader(body)
    r.i32()  # throttle
    error, generation = r.i16(), r.i32()
    r.string()  # protocol name
    r.string()  # leader
    return error, generation, r.string()


def use_the_group_once(bootstrap):
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": GROUP, "session.timeout.ms": 6000})
    try:
        c.subscribe([TOPIC])
        deadline = time.time() + 60
        while not c.assignment():
            assert time.time() < deadline, "the first consumer got no assignment in 60 s"
            c.poll(0.2)
        c.commit(offsets=[TopicPartition(TOPIC, 0, 5)], asynchronous=False)
    finally:
        c.close()  # LeaveGroup: the group is Empty, with a generation and an offset


def test_one_generation(broker):
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    admin.create_topics([NewTopic(TOPIC, 3, 1)])[TOPIC].result(30)
    use_the_group_once(broker.bootstrap)
    members = []
    for i in range(3):
        if i:
            time.sleep(2)
        conn = w.Connection(broker.port, timeout=60)
        error, _, member_id = parse_join_group_v5(conn.call(join_group_v5(1, ""), 1))
        assert error == MEMBER_ID_REQUIRED, "first JoinGroup: error %d" % error
        conn.send(join_group_v5(2, member_id))  # answered when the rebalance completes
        members.append(conn)
    answers = [parse_join_group_v5(conn.response(2)) for conn in members]
    for conn in members:
        conn.close()
    assert all(a[0] == 0 for a in answers), "JoinGroup errors: %r" % answers
    generations = sorted({a[1] for a in answers})
    assert len(generations) == 1, "the three members were split over generations %r" % generations
    assert generations[0] > 1, "the group's earlier generations were not counted: %r" % generations
    print("three members 2 s apart joined generation %d together" % generations[0])


def main():
    with Runnel(sys.argv[1], overrides=OVERRIDES) as broker:
        code = run_tests([("a restarted fleet forms one generation", lambda: test_one_generation(broker))], broker)
    sys.exit(code)


if __name__ == "__main__":
    main()
