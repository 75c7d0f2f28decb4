#!/usr/bin/python3
"""KIP-848 consumer groups (group.protocol=consumer) with a current
librdkafka (confluent-kafka from PyPI) against a real runnel process.

- three members join and split six partitions 2/2/2; 600 records produced
  then are each consumed exactly once, with a synchronous commit after each;
- a member leaves (close): its partitions move to the other two, who never
  lose one of theirs (no stop-the-world revocation), and go on consuming;
- a member killed with SIGKILL: its partitions move after the session
  timeout, not before;
- a new member of the group resumes from the commits, reading only what
  was produced after;
- the Admin API lists the group as a consumer group and describes it.

Members run in child processes (this file with --member) and report each
assignment change and each record as a JSON line on stdout.

usage: consumer_protocol_test.py <path to runnel> --cache <matrix cache dir>
"""
import json
import os
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import groups_more_test  # noqa: E402
from groups_more_test import covers, wait_for  # noqa: E402

# The broker's consumer group timeouts, short for the test (Kafka's
# defaults are 45 s and 5 s; the minimums are lowered to allow them).
OVERRIDES = {
    "group.consumer.session.timeout.ms": "10000",
    "group.consumer.min.session.timeout.ms": "10000",
    "group.consumer.heartbeat.interval.ms": "500",
    "group.consumer.min.heartbeat.interval.ms": "500",
}
SESSION_TIMEOUT_S = 10.0


def member_main(bootstrap, group, topic):
    from confluent_kafka import Consumer
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": group, "group.protocol": "consumer",
                  "auto.offset.reset": "earliest", "enable.auto.commit": False,
                  "topic.metadata.refresh.interval.ms": 1000})
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(True))

    def on_assign(consumer, partitions):
        print(json.dumps({"assigned": sorted(p.partition for p in partitions)}), flush=True)

    def on_revoke(consumer, partitions):
        print(json.dumps({"revoked": sorted(p.partition for p in partitions)}), flush=True)

    c.subscribe([topic], on_assign=on_assign, on_revoke=on_revoke)
    while not stop:
        m = c.poll(0.1)
        if m is None or m.error():
            continue
        c.commit(message=m, asynchronous=False)
        print(json.dumps({"record": [m.partition(), m.offset(), m.value().decode()]}), flush=True)
    c.close()  # leaves the group: ConsumerGroupHeartbeat with epoch -1
    print(json.dumps({"closed": True}), flush=True)


class Member(groups_more_test.Member):
    """A member in a child process (this file with --member); reads its
    JSON lines as groups_more_test's members do."""

    def __init__(self, bootstrap, group, topic):
        self.proc = subprocess.Popen([sys.executable, os.path.abspath(__file__), "--member", bootstrap, group, topic],
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        self.events = []
        self.pending = b""

    @property
    def assignment(self):
        """The partitions it owns now: assignments add, revocations remove
        (the consumer protocol's rebalance callbacks are incremental)."""
        owned = set()
        for e in self.events:
            owned |= set(e.get("assigned", []))
            owned -= set(e.get("revoked", []))
        return sorted(owned)

    def revoked(self):
        return [p for e in self.events for p in e.get("revoked", [])]

    def records(self):
        return [e["record"] for e in self.events if "record" in e]

    def close(self, timeout=30):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        deadline = time.time() + timeout
        while self.proc.poll() is None and time.time() < deadline:
            self.read(0.1)
        self.read(0)
        assert self.proc.poll() is not None, "member did not close in %ds" % timeout


def values(members):
    return [r[2] for m in members for r in m.records()]


def produce(bootstrap, topic, vals, partitions):
    from confluent_kafka import Producer
    p = Producer({"bootstrap.servers": bootstrap, "acks": "all"})
    for i, v in enumerate(vals):
        p.produce(topic, v.encode(), partition=i % partitions)
    assert p.flush(30) == 0, "records left unsent"


def create_topic(admin, name, partitions):
    from confluent_kafka.admin import NewTopic
    admin.create_topics([NewTopic(name, partitions, 1)])[name].result(30)


def test_group(bootstrap, admin):
    from confluent_kafka import ConsumerGroupState, ConsumerGroupType
    topic, group = "cgp-orders", "cgp-group"
    create_topic(admin, topic, 6)
    members = [Member(bootstrap, group, topic) for _ in range(3)]
    try:
        wait_for(members, lambda: covers(members, 6), 60, "three members own the six partitions")
        assert sorted(len(m.assignment) for m in members) == [2, 2, 2], [m.assignment for m in members]
        print("three members: %s" % [m.assignment for m in members])

        first = ["first-%d" % i for i in range(600)]
        produce(bootstrap, topic, first, 6)
        wait_for(members, lambda: len(values(members)) >= 600, 60, "600 records consumed")
        for m in members:
            m.read(0.3)
        got = values(members)
        assert sorted(got) == sorted(first), "lost or duplicated: %d records, %d distinct" % (len(got), len(set(got)))

        # The group as the Admin API sees it (ListGroups v5, ConsumerGroupDescribe).
        listed = admin.list_consumer_groups(types={ConsumerGroupType.CONSUMER}).result(30)
        assert group in [g.group_id for g in listed.valid], listed.valid
        described = admin.describe_consumer_groups([group])[group].result(30)
        assert described.type == ConsumerGroupType.CONSUMER, described.type
        assert described.state == ConsumerGroupState.STABLE, described.state
        assert len(described.members) == 3, described.members
        assigned = sorted(tp.partition for mem in described.members for tp in mem.assignment.topic_partitions)
        assert assigned == list(range(6)), assigned

        # One leaves: the others take its partitions and keep their own.
        kept = [list(m.assignment) for m in members[:2]]
        revoked_before = [len(m.revoked()) for m in members[:2]]
        members[2].close()
        left_at = time.time()
        wait_for(members[:2], lambda: covers(members[:2], 6), 30, "two members own the six partitions")
        print("a member left: the other two own %s after %.1fs" % ([m.assignment for m in members[:2]],
                                                                     time.time() - left_at))
        for m, before, had in zip(members[:2], revoked_before, kept):
            assert len(m.revoked()) == before, "a staying member lost partitions: %r" % m.events
            assert set(had) <= set(m.assignment), (had, m.assignment)
        second = ["second-%d" % i for i in range(60)]
        produce(bootstrap, topic, second, 6)
        wait_for(members[:2], lambda: len([v for v in values(members) if v.startswith("second-")]) >= 60, 60,
                 "60 more records consumed")
        got = [v for v in values(members) if v.startswith("second-")]
        assert sorted(got) == sorted(second), "lost or duplicated after the leave"

        # One is killed: its partitions move once its session has expired.
        survivor, victim = members[:2]
        victim.kill()
        killed_at = time.time()
        wait_for([survivor], lambda: survivor.assignment == list(range(6)), 60, "the survivor owns all six")
        took = time.time() - killed_at
        print("kill -9: partitions moved after %.1fs (session timeout %.0fs)" % (took, SESSION_TIMEOUT_S))
        # Counted from its last heartbeat, up to an interval (more on a
        # loaded machine) before the kill: bounded loosely below.
        assert took >= SESSION_TIMEOUT_S / 2, "partitions moved before the session timeout"
        survivor.close()

        # A new member resumes from the commits.
        third = ["third-%d" % i for i in range(12)]
        produce(bootstrap, topic, third, 6)
        late = Member(bootstrap, group, topic)
        members.append(late)
        wait_for([late], lambda: len(late.records()) >= 12, 60, "the new member reads what came after")
        late.read(1.0)
        assert sorted(v for v in values([late])) == sorted(third), values([late])
    finally:
        for m in members:
            m.kill()


def main():
    if len(sys.argv) >= 2 and sys.argv[1] == "--member":
        return member_main(*sys.argv[2:5])
    runnel, cache = sys.argv[1], sys.argv[sys.argv.index("--cache") + 1]
    # The pinned PyPI client: re-run under its venv.
    venv_python = subprocess.run([os.path.join(HERE, "matrix/clients/confluent-kafka-pypi/venv"), cache],
                                 check=True, stdout=subprocess.PIPE, text=True).stdout.strip()
    # (its python links to this one: the venv is told by sys.prefix)
    venv_dir = os.path.dirname(os.path.dirname(venv_python))
    if os.path.realpath(sys.prefix) != os.path.realpath(venv_dir):
        os.execv(venv_python, [venv_python, os.path.abspath(__file__)] + sys.argv[1:])
    from confluent_kafka.admin import AdminClient
    from runnel_harness import Runnel, run_tests
    with Runnel(runnel, overrides=OVERRIDES) as broker:
        admin = AdminClient({"bootstrap.servers": broker.bootstrap})
        code = run_tests([("consumer protocol group", lambda: test_group(broker.bootstrap, admin))], broker)
    sys.exit(code)


if __name__ == "__main__":
    main()
