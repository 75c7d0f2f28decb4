#!/usr/bin/python3
"""Consumer groups against a real runnel process, with librdkafka
(python3-confluent-kafka).

Three consumers in one group over a 6-partition topic get disjoint
assignments covering every partition; a fourth joins and one leaves; every
record produced meanwhile is consumed exactly once (a record counts as
consumed when its synchronous commit succeeded). Then the broker is killed
with SIGKILL and restarted on the same data dir: a new member of the group
resumes from the committed offsets, so it sees only records produced after
them. Every wait is bounded; runnel_harness.py stops the broker by pid.

usage: groups_test.py <path to runnel>
"""
import os
import sys
import time

from confluent_kafka import Consumer, KafkaException, Producer
from confluent_kafka.admin import AdminClient, NewTopic

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from runnel_harness import Runnel  # noqa: E402

TOPIC = "orders"
GROUP = "groups-test"
PARTITIONS = 6


# Small timeouts keep every rebalance fast and bounded.
OVERRIDES = {
    "group.initial.rebalance.delay.ms": "0",
    "group.min.session.timeout.ms": "1000",
}


def consumer(bootstrap, name):
    return Consumer({
        "bootstrap.servers": bootstrap,
        "group.id": GROUP,
        "client.id": name,
        "enable.auto.commit": False,
        "auto.offset.reset": "earliest",
        "session.timeout.ms": 3000,
        "heartbeat.interval.ms": 300,
        "max.poll.interval.ms": 10000,
        "topic.metadata.refresh.interval.ms": 1000,
    })


class Group:
    """Members polled round-robin from one thread; records what each consumed."""

    def __init__(self):
        self.members = {}
        self.consumed = []  # (partition, offset, value) whose commit succeeded
        self.failed_commits = 0

    def add(self, bootstrap, name):
        c = consumer(bootstrap, name)
        c.subscribe([TOPIC])
        self.members[name] = c

    def remove(self, name):
        self.members.pop(name).close()

    def poll_once(self):
        for c in list(self.members.values()):
            msg = c.poll(0.02)
            if msg is None or msg.error():
                continue
            try:
                c.commit(message=msg, asynchronous=False)
                self.consumed.append((msg.partition(), msg.offset(), msg.value()))
            except KafkaException:
                # Not committed: the record will be delivered again.
                self.failed_commits += 1

    def assignments(self):
        return {n: sorted(tp.partition for tp in c.assignment()) for n, c in self.members.items()}

    def wait_balanced(self, timeout=30):
        deadline = time.time() + timeout
        while time.time() < deadline:
            self.poll_once()
            a = self.assignments()
            flat = [p for ps in a.values() for p in ps]
            if sorted(flat) == list(range(PARTITIONS)) and all(a.values()) and len(flat) == len(set(flat)):
                return a
        raise AssertionError("group did not balance in %ds: %r" % (timeout, self.assignments()))

    def wait_consumed(self, expected, timeout=30):
        deadline = time.time() + timeout
        while time.time() < deadline:
            self.poll_once()
            if len({v for _, _, v in self.consumed} & expected) == len(expected):
                return
        missing = expected - {v for _, _, v in self.consumed}
        raise AssertionError("%d records never consumed, e.g. %r" % (len(missing), sorted(missing)[:5]))

    def close(self):
        for name in list(self.members):
            self.remove(name)


def produce(bootstrap, start, count):
    p = Producer({"bootstrap.servers": bootstrap, "acks": "all"})
    values = set()
    for i in range(start, start + count):
        v = ("record-%d" % i).encode()
        p.produce(TOPIC, value=v, key=str(i).encode())
        values.add(v)
    assert p.flush(30) == 0, "produce did not finish"
    return values


def main():
    with Runnel(sys.argv[1], overrides=OVERRIDES) as broker:
        admin = AdminClient({"bootstrap.servers": broker.bootstrap})
        admin.create_topics([NewTopic(TOPIC, PARTITIONS, 1)])[TOPIC].result(timeout=30)

        group = Group()
        for i in range(3):
            group.add(broker.bootstrap, "c%d" % i)
        a = group.wait_balanced()
        print("three members:", a)
        assert all(len(ps) == 2 for ps in a.values()), a

        produced = produce(broker.bootstrap, 0, 300)
        group.add(broker.bootstrap, "c3")
        produced |= produce(broker.bootstrap, 300, 300)
        a = group.wait_balanced()
        print("four members:", a)
        assert len(a) == 4

        group.remove("c0")
        produced |= produce(broker.bootstrap, 600, 300)
        a = group.wait_balanced()
        print("after c0 left:", a)
        group.wait_consumed(produced)

        values = [v for _, _, v in group.consumed]
        dupes = len(values) - len(set(values))
        print("consumed %d records, %d duplicates, %d failed commits" % (len(values), dupes, group.failed_commits))
        assert dupes == 0, "records consumed twice"
        assert set(values) == produced
        group.close()

        # The broker dies without warning (same dir and port after the
        # restart); committed offsets must survive.
        broker.restart(graceful=False)
        later = produce(broker.bootstrap, 900, 60)
        group = Group()
        group.add(broker.bootstrap, "after-restart")
        group.wait_consumed(later, timeout=60)
        for _ in range(20):
            group.poll_once()
        seen = {v for _, _, v in group.consumed}
        assert seen == later, "after restart re-consumed %d committed records" % len(seen - later)
        print("after restart: consumed exactly the %d new records" % len(seen))
        group.close()
    print("PASS")


if __name__ == "__main__":
    main()
