#!/usr/bin/python3
"""kcat -G (librdkafka's balanced KafkaConsumer) against a real Runnel.

Two `kcat -G` processes in one group share a 4-partition topic: once both
report their assignment (kcat's "% Group ... rebalanced" lines on stderr),
the assignments are disjoint and cover every partition. Records produced
then are each consumed exactly once, each by the member that owns its
partition. kcat commits automatically; the group's committed offsets, read
back with OffsetFetch, reach the end of every partition. The members stop
with SIGTERM (kcat leaves the group) and the group ends up Empty.

usage: kcat_group_test.py <path to runnel>
"""
import os
import re
import select
import signal
import subprocess
import sys
import time

from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic
from kafka.admin import KafkaAdminClient

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from runnel_harness import Runnel, run_tests  # noqa: E402

TOPIC = "kcat-group"
GROUP = "kcat-group-test"
PARTITIONS = 4
RECORDS = 400
OVERRIDES = {"group.initial.rebalance.delay.ms": "0", "group.min.session.timeout.ms": "1000"}

_ASSIGNED = re.compile(r"^% Group \S+ rebalanced \(memberid [^)]*\): assigned: (.*)$")
_REVOKED = re.compile(r"^% Group \S+ rebalanced \(memberid [^)]*\): revoked: ")
_PARTITION = re.compile(r"\[(\d+)\]")


class KcatMember:
    """One `kcat -G` process; its stdout lines are "partition offset value"."""

    def __init__(self, bootstrap, name):
        self.name = name
        self.proc = subprocess.Popen(
            ["kcat", "-b", bootstrap, "-X", "broker.address.family=v4", "-X", "client.id=" + name,
             "-X", "session.timeout.ms=6000", "-X", "heartbeat.interval.ms=300",
             "-X", "auto.commit.interval.ms=200", "-X", "topic.metadata.refresh.interval.ms=1000",
             "-G", GROUP, "-o", "beginning", "-u", "-f", "%p %o %s\\n", TOPIC],
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.assignment = None  # partitions; None while unassigned
        self.records = []       # (partition, offset, value)
        self.log = []
        self.partial = {"out": "", "err": ""}

    def pump(self, timeout):
        """Reads whatever either stream has within `timeout` seconds (raw reads:
        a buffered readline would hide lines from select)."""
        streams = {self.proc.stdout.fileno(): "out", self.proc.stderr.fileno(): "err"}
        ready, _, _ = select.select(list(streams), [], [], timeout)
        for fd in ready:
            chunk = os.read(fd, 65536).decode("utf-8", "replace")
            which = streams[fd]
            self.partial[which] += chunk
            *lines, self.partial[which] = self.partial[which].split("\n")
            for line in lines:
                self.take(which, line)

    def take(self, which, line):
        if which == "err":
            self.log.append(line)
            m = _ASSIGNED.match(line)
            if m:
                self.assignment = sorted(int(p) for p in _PARTITION.findall(m.group(1)))
            elif _REVOKED.match(line):
                self.assignment = None
        else:
            p, o, value = line.split(" ", 2)
            self.records.append((int(p), int(o), value))

    def stop(self):
        if self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                os.kill(self.proc.pid, signal.SIGKILL)
                self.proc.wait(10)
                raise AssertionError("kcat %s did not stop within 20 s of SIGTERM" % self.name)
        return self.proc.returncode


def pump_until(members, condition, timeout, what):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for m in members:
            m.pump(0.02)
            if m.proc.poll() is not None:
                raise AssertionError("kcat %s exited with %d:\n%s" % (m.name, m.proc.returncode, "\n".join(m.log)))
        if condition():
            return
    logs = "\n".join("%s: %s" % (m.name, line) for m in members for line in m.log)
    raise AssertionError("timed out after %d s waiting for %s\n%s" % (timeout, what, logs))


def committed(bootstrap):
    """The group's committed offsets per partition, through OffsetFetch."""
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": GROUP, "enable.auto.commit": False})
    try:
        got = c.committed([TopicPartition(TOPIC, p) for p in range(PARTITIONS)], timeout=10)
        for tp in got:
            assert not tp.error, "OffsetFetch: %s" % tp.error
        return {tp.partition: tp.offset for tp in got}
    finally:
        c.close()


def main():
    with Runnel(overrides=OVERRIDES) as r:
        members = []

        def balanced():
            admin = AdminClient({"bootstrap.servers": r.bootstrap})  # must outlive its futures
            admin.create_topics([NewTopic(TOPIC, PARTITIONS, 1)])[TOPIC].result(15)
            members.append(KcatMember(r.bootstrap, "kcat-a"))
            pump_until(members, lambda: members[0].assignment == list(range(PARTITIONS)), 30,
                       "kcat-a to own every partition")
            members.append(KcatMember(r.bootstrap, "kcat-b"))

            def shared():
                a, b = members[0].assignment, members[1].assignment
                return a and b and sorted(a + b) == list(range(PARTITIONS))
            pump_until(members, shared, 30, "the two kcat members to share the partitions")

        def each_record_once():
            p = Producer({"bootstrap.servers": r.bootstrap, "acks": "all"})
            for i in range(RECORDS):
                p.produce(TOPIC, b"r%d" % i, partition=i % PARTITIONS)
            assert p.flush(15) == 0, "records left unsent"
            pump_until(members, lambda: sum(len(m.records) for m in members) >= RECORDS, 60,
                       "%d records across the two members" % RECORDS)
            for m in members:
                m.pump(0.2)  # anything beyond RECORDS would be a duplicate
            seen = {}
            for m in members:
                for partition, offset, value in m.records:
                    assert partition in m.assignment, "%s read partition %d, owns %s" % (
                        m.name, partition, m.assignment)
                    assert (partition, offset) not in seen, "%d@%d consumed twice" % (partition, offset)
                    seen[(partition, offset)] = value
            want = {(i % PARTITIONS, i // PARTITIONS): "r%d" % i for i in range(RECORDS)}
            assert seen == want, "consumed %d records, %d differ from those produced" % (
                len(seen), len(set(seen.items()) ^ set(want.items())))
            assert all(m.records for m in members), "a member consumed nothing"

        def offsets_committed():
            end = RECORDS // PARTITIONS
            deadline = time.monotonic() + 30
            got = None
            while time.monotonic() < deadline:
                for m in members:
                    m.pump(0.02)
                got = committed(r.bootstrap)
                if all(got[p] == end for p in range(PARTITIONS)):
                    break
                time.sleep(0.2)
            assert all(got[p] == end for p in range(PARTITIONS)), "committed %s, want %d each" % (got, end)

        def members_leave():
            for m in members:
                rc = m.stop()
                assert rc == 0, "kcat %s exited %d" % (m.name, rc)
            members.clear()
            assert committed(r.bootstrap) == {p: RECORDS // PARTITIONS for p in range(PARTITIONS)}
            admin = KafkaAdminClient(bootstrap_servers=r.bootstrap, request_timeout_ms=15000)
            try:
                (desc,) = admin.describe_consumer_groups([GROUP])
            finally:
                admin.close()
            assert desc.state == "Empty" and not desc.members, "after both left: %s" % (desc,)

        try:
            rc = run_tests([
                ("two kcat -G members share the partitions", balanced),
                ("every record consumed exactly once", each_record_once),
                ("kcat's commits are visible through OffsetFetch", offsets_committed),
                ("members leave on SIGTERM, the commits stay", members_leave),
            ], r)
        finally:
            for m in members:
                if m.proc.poll() is None:
                    os.kill(m.proc.pid, signal.SIGKILL)
                    m.proc.wait(10)
    sys.exit(rc)


if __name__ == "__main__":
    main()
