#!/usr/bin/python3
"""More consumer-group behaviour against a real runnel process.

- kill -9 of a librdkafka member: its partitions move to the survivor once
  its session times out (not before, and within a bounded time);
- a static member (group.instance.id) killed and restarted within its
  session timeout gets its partitions back without a rebalance: the other
  member's partitions are never revoked;
- a cooperative-sticky group balances as members come and go;
- kafka-python (older JoinGroup/SyncGroup/OffsetCommit versions) balances
  two members, commits, and a later member resumes from the commits.

Members that must be killed run in child processes (this file with
--member) and report every assignment change as a JSON line on stdout.

usage: groups_more_test.py <path to runnel>
"""
import json
import os
import select
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from groups_test import OVERRIDES  # noqa: E402
from runnel_harness import Runnel  # noqa: E402


def member_main(bootstrap, group, topic, instance_id):
    from confluent_kafka import Consumer
    conf = {"bootstrap.servers": bootstrap, "group.id": group, "session.timeout.ms": 4000,
            "heartbeat.interval.ms": 300, "auto.offset.reset": "earliest",
            "topic.metadata.refresh.interval.ms": 1000}
    if instance_id != "-":
        conf["group.instance.id"] = instance_id
    c = Consumer(conf)

    def on_assign(consumer, partitions):
        print(json.dumps({"assigned": sorted(p.partition for p in partitions)}), flush=True)

    def on_revoke(consumer, partitions):
        print(json.dumps({"revoked": sorted(p.partition for p in partitions)}), flush=True)

    c.subscribe([topic], on_assign=on_assign, on_revoke=on_revoke)
    while True:
        c.poll(0.1)


class Member:
    def __init__(self, bootstrap, group, topic, instance_id="-"):
        self.proc = subprocess.Popen([sys.executable, os.path.abspath(__file__), "--member", bootstrap, group, topic,
                                      instance_id], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        self.events = []
        self.pending = b""

    def read(self, timeout):
        # Read the pipe itself, not a buffered file over it: a readline()
        # may buffer the next line too (a revoke and an assignment printed
        # together), and select() would then never report it.
        fd = self.proc.stdout.fileno()
        r, _, _ = select.select([fd], [], [], timeout)
        if r:
            self.pending += os.read(fd, 65536)
            *lines, self.pending = self.pending.split(b"\n")
            self.events.extend(json.loads(line) for line in lines if line)

    @property
    def assignment(self):
        for e in reversed(self.events):
            if "assigned" in e:
                return e["assigned"]
            if "revoked" in e:
                return []
        return []

    def kill(self):
        if self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGKILL)
            self.proc.wait(timeout=10)


def wait_for(members, condition, timeout, what):
    deadline = time.time() + timeout
    while time.time() < deadline:
        for m in members:
            m.read(0.05)
        if condition():
            return
    raise AssertionError("%s not reached in %ds: %r" % (what, timeout, [m.assignment for m in members]))


def covers(members, n):
    flat = [p for m in members for p in m.assignment]
    return sorted(flat) == list(range(n)) and all(m.assignment for m in members)


def create_topic(bootstrap, name, partitions):
    from confluent_kafka.admin import AdminClient, NewTopic
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(name, partitions, 1)])[name].result(30)


def test_killed_member(bootstrap):
    create_topic(bootstrap, "moves", 4)
    a = Member(bootstrap, "killed", "moves")
    b = Member(bootstrap, "killed", "moves")
    try:
        wait_for([a, b], lambda: covers([a, b], 4), 30, "two members balanced")
        b.kill()
        killed_at = time.time()
        wait_for([a], lambda: a.assignment == [0, 1, 2, 3], 30, "survivor owns every partition")
        took = time.time() - killed_at
        print("kill -9: partitions moved after %.1fs (session timeout 4s)" % took)
        assert took >= 3.0, "partitions moved before the session timeout"
    finally:
        a.kill()
        b.kill()


def test_static_member(bootstrap):
    create_topic(bootstrap, "statics", 4)
    s1 = Member(bootstrap, "static", "statics", "static-1")
    try:
        wait_for([s1], lambda: s1.assignment == [0, 1, 2, 3], 30, "first static member owns all")
        s2 = Member(bootstrap, "static", "statics", "static-2")
        wait_for([s1, s2], lambda: covers([s1, s2], 4), 30, "two static members balanced")
        before = (list(s1.assignment), list(s2.assignment))
        s1_events = len(s1.events)
        s2.kill()
        s2 = Member(bootstrap, "static", "statics", "static-2")
        wait_for([s1, s2], lambda: s2.assignment == before[1], 4, "restarted static member gets its partitions")
        for _ in range(20):
            s1.read(0.05)
        assert s1.events[s1_events:] == [], "the other member was rebalanced: %r" % s1.events[s1_events:]
        print("static member restarted without a rebalance:", before)
    finally:
        s1.kill()
        s2.kill()


def test_cooperative(bootstrap):
    from confluent_kafka import Consumer
    create_topic(bootstrap, "coop", 6)
    members = []

    def add():
        c = Consumer({"bootstrap.servers": bootstrap, "group.id": "coop", "session.timeout.ms": 4000,
                      "heartbeat.interval.ms": 300, "partition.assignment.strategy": "cooperative-sticky"})
        c.subscribe(["coop"])
        members.append(c)

    def balanced(n):
        deadline = time.time() + 30
        while time.time() < deadline:
            for c in members:
                c.poll(0.02)
            a = [sorted(tp.partition for tp in c.assignment()) for c in members]
            flat = [p for ps in a for p in ps]
            if len(members) == n and sorted(flat) == list(range(6)) and all(a):
                return a
        raise AssertionError("cooperative group not balanced: %r" % a)

    try:
        add()
        add()
        print("cooperative, two:", balanced(2))
        add()
        print("cooperative, three:", balanced(3))
        members.pop(0).close()
        print("cooperative, after a leave:", balanced(2))
    finally:
        for c in members:
            c.close()


def test_kafka_python(bootstrap):
    import threading
    from kafka import KafkaConsumer, KafkaProducer
    from kafka.errors import KafkaError
    create_topic(bootstrap, "kp", 2)
    producer = KafkaProducer(bootstrap_servers=bootstrap, acks="all")
    for i in range(100):
        producer.send("kp", value=b"v%d" % i, partition=i % 2)
    producer.flush(30)
    producer.close()

    def consumer():
        return KafkaConsumer("kp", bootstrap_servers=bootstrap, group_id="kp-group", enable_auto_commit=False,
                             auto_offset_reset="earliest", session_timeout_ms=6000, heartbeat_interval_ms=500,
                             max_poll_interval_ms=10000)

    # kafka-python's poll() blocks through a whole rebalance, so each member
    # needs its own thread.
    stop = threading.Event()
    seen = []
    lock = threading.Lock()

    def run(c):
        while not stop.is_set():
            batch = [r.value for rs in c.poll(timeout_ms=100).values() for r in rs]
            if not batch:
                continue
            try:
                c.commit()
            except KafkaError:
                continue  # not committed: delivered again
            with lock:
                seen.extend(batch)

    c1, c2 = consumer(), consumer()
    threads = [threading.Thread(target=run, args=(c,)) for c in (c1, c2)]
    for t in threads:
        t.start()
    deadline = time.time() + 60
    try:
        while time.time() < deadline:
            with lock:
                done = len(seen) >= 100
            if done and c1.assignment() and c2.assignment():
                break
            time.sleep(0.1)
    finally:
        stop.set()
        for t in threads:
            t.join(30)
    a1 = sorted(tp.partition for tp in c1.assignment())
    a2 = sorted(tp.partition for tp in c2.assignment())
    print("kafka-python members:", a1, a2, "consumed", len(seen))
    assert sorted(seen) == sorted(b"v%d" % i for i in range(100)), "kafka-python group lost or repeated records"
    assert sorted(a1 + a2) == [0, 1] and a1 and a2
    c1.close()
    c2.close()
    c3 = consumer()
    leftover = []
    end = time.time() + 8
    while time.time() < end:
        for tp, records in c3.poll(timeout_ms=200).items():
            leftover.extend(records)
    c3.close()
    assert leftover == [], "a new member re-read committed records"
    print("kafka-python: a new member resumed from the committed offsets")


def main():
    with Runnel(sys.argv[1], overrides=OVERRIDES) as broker:
        test_killed_member(broker.bootstrap)
        test_static_member(broker.bootstrap)
        test_cooperative(broker.bootstrap)
        test_kafka_python(broker.bootstrap)
    print("PASS")


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--member":
        member_main(*sys.argv[2:6])
    else:
        main()
