#!/usr/bin/python3
"""DescribeTopicPartitions (API 75, KIP-966) against Kafka 4.1.1's own
kafka-topics.sh --describe (org.apache.kafka.tools.TopicCommand, jars from
storage/interop/kafka_jars.sh, cached), on a single-node Runnel.

Each partition row's Leader, Replicas and Isr must be what Metadata says
(librdkafka's view). That the tool described the topics with API 75 and not
with its Metadata fallback shows in the same rows: Kafka's admin client
builds a partition from a Metadata answer without eligible leader replicas,
printed "Elr: N/A  LastKnownElr: N/A", and from a DescribeTopicPartitions
answer with the lists it carried, printed "Elr: " and "LastKnownElr: " with
nothing after them (Runnel sends empty lists, as Kafka does without ELR).
With --partition-size-limit-per-response 2 the admin client pages through
the topics with the cursor Runnel returns, and every partition comes back
exactly once.

Hand-built requests then check the paging and the errors byte for byte:
NextCursor within a topic and at the start of the next one, a cursor
starting mid-topic, unknown and illegal topic names, and a cursor topic
outside the requested list (INVALID_REQUEST).

usage: describe_topic_partitions_test.py <path to runnel> <kafka jar cache dir>
"""
import os
import re
import subprocess
import sys
import time

from confluent_kafka.admin import AdminClient, NewTopic

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import kafka_wire as w  # noqa: E402
from runnel_harness import Runnel, run_tests  # noqa: E402
from topic_checks import partition_rows  # noqa: E402

TOPICS = {"dtp-a": 5, "dtp-b": 3}
TOPIC_COMMAND = "org.apache.kafka.tools.TopicCommand"

UNKNOWN_TOPIC_OR_PARTITION = 3
INVALID_TOPIC_EXCEPTION = 17
INVALID_REQUEST = 42
ALL_TOPIC_OPERATIONS = 0x0df8  # READ WRITE CREATE DELETE ALTER DESCRIBE DESCRIBE_CONFIGS ALTER_CONFIGS

def kafka_topics(classpath, bootstrap, *args):
    cmd = ["java", "-Dlog4j2.level=ERROR", "-cp", classpath, TOPIC_COMMAND, "--bootstrap-server", bootstrap, *args]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=180)
    assert out.returncode == 0, "kafka-topics %s exited %d:\n%s%s" % (" ".join(args), out.returncode, out.stdout, out.stderr)
    return out.stdout


def metadata_view(bootstrap):
    """{(topic, partition): (leader, replicas, isr)} as kafka-topics prints them, from Metadata."""
    md = AdminClient({"bootstrap.servers": bootstrap}).list_topics(timeout=15)
    view = {}
    for name in TOPICS:
        for p in md.topics[name].partitions.values():
            view[(name, p.id)] = (str(p.leader) if p.leader >= 0 else "none",
                                  ",".join(map(str, p.replicas)), ",".join(map(str, p.isrs)))
    return view


def check_rows(rows, view, text):
    assert set(rows) == set(view), "described %s, expected %s:\n%s" % (sorted(rows), sorted(view), text)
    for key, (leader, replicas, isr, rest) in rows.items():
        assert (leader, replicas, isr) == view[key], "%s-%d: got %s, Metadata says %s" % (
            key[0], key[1], (leader, replicas, isr), view[key])
        # API 75, not the Metadata fallback: ELR lists present and empty.
        assert "\tElr: \t" in rest + "\t" and "LastKnownElr: " in rest and "N/A" not in rest, (
            "%s-%d was not described with DescribeTopicPartitions: %r" % (key[0], key[1], rest))


# -- hand-built DescribeTopicPartitions v0 (flexible) -------------------------

def cstr(s):
    b = s.encode()
    return w.uvarint(len(b) + 1) + b


def dtp_request(correlation, topics, limit=2000, cursor=None):
    body = w.uvarint(len(topics) + 1) + b"".join(cstr(t) + w.uvarint(0) for t in topics) + w.i32(limit)
    body += w.i8(-1) if cursor is None else w.i8(1) + cstr(cursor[0]) + w.i32(cursor[1]) + w.uvarint(0)
    return w.request(75, 0, correlation, body + w.uvarint(0), flexible=True)


def parse_dtp_response(body):
    """A response body after the v0 part of its header (the correlation id)."""
    r = w.Reader(body)
    tags, nstr = r.skip_tags, r.compact_string

    def ints():
        n = r.uvarint()
        return None if n == 0 else [r.i32() for _ in range(n - 1)]

    def array(item):
        n = r.uvarint()
        assert n > 0, "null array"
        return [item() for _ in range(n - 1)]

    def partition():
        p = {"error": r.i16(), "index": r.i32(), "leader": r.i32(), "epoch": r.i32(), "replicas": ints(),
             "isr": ints(), "elr": ints(), "last_known_elr": ints(), "offline": ints()}
        tags()
        return p

    def topic():
        t = {"error": r.i16(), "name": nstr(), "id": r.take(16), "internal": r.i8(), "partitions": array(partition),
             "ops": r.i32()}
        tags()
        return t

    tags()  # the rest of response header v1
    throttle = r.i32()
    topics = array(topic)
    cursor = None
    if r.i8() >= 0:
        cursor = (nstr(), r.i32())
        tags()
    tags()
    assert r.done(), "%d bytes after the response" % (len(body) - r.pos)
    return {"throttle": throttle, "topics": topics, "cursor": cursor}


def dtp(port, topics, limit=2000, cursor=None):
    with w.Connection(port) as c:
        return parse_dtp_response(c.call(dtp_request(1, topics, limit, cursor), 1))


def pages(resp):
    """[(topic, [partition indexes])] of a response."""
    return [(t["name"], [p["index"] for p in t["partitions"]]) for t in resp["topics"]]


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    jars = subprocess.run([os.path.join(HERE, "..", "storage", "interop", "kafka_jars.sh"), sys.argv[2]],
                          capture_output=True, text=True, timeout=1800)
    if jars.returncode != 0:
        sys.exit("kafka_jars.sh failed: " + jars.stderr)
    classpath = jars.stdout.strip()

    with Runnel(sys.argv[1]) as r:
        state = {}

        def create():
            admin = AdminClient({"bootstrap.servers": r.bootstrap})
            for f in admin.create_topics([NewTopic(t, n, 1) for t, n in TOPICS.items()]).values():
                f.result(15)
            deadline = time.monotonic() + 15
            while True:
                view = metadata_view(r.bootstrap)
                if all(v[0] != "none" for v in view.values()) and len(view) == sum(TOPICS.values()):
                    break
                assert time.monotonic() < deadline, "partitions without a leader: %s" % view
                time.sleep(0.2)
            state["view"] = view

        def describe_one():
            text = kafka_topics(classpath, r.bootstrap, "--describe", "--topic", "dtp-a")
            assert re.search(r"^Topic: dtp-a\tTopicId: \S+\tPartitionCount: 5\tReplicationFactor: 1\t", text, re.M), text
            view = {k: v for k, v in state["view"].items() if k[0] == "dtp-a"}
            check_rows(partition_rows(text), view, text)

        def describe_paged():
            # Two partitions a response: the admin client follows NextCursor
            # through dtp-a (5) and dtp-b (3).
            text = kafka_topics(classpath, r.bootstrap, "--describe", "--exclude-internal",
                                "--partition-size-limit-per-response", "2")
            check_rows(partition_rows(text), state["view"], text)

        def raw_paging():
            resp = dtp(r.port, ["dtp-b", "dtp-a"], limit=3)
            assert pages(resp) == [("dtp-a", [0, 1, 2])], pages(resp)
            assert resp["cursor"] == ("dtp-a", 3), resp["cursor"]
            a0 = resp["topics"][0]
            assert a0["error"] == 0 and a0["ops"] == ALL_TOPIC_OPERATIONS and a0["internal"] == 0, a0
            for p in a0["partitions"]:
                assert p["error"] == 0 and p["elr"] == [] and p["last_known_elr"] == [] and p["offline"] == [], p
                view = state["view"][("dtp-a", p["index"])]
                assert (str(p["leader"]), ",".join(map(str, p["replicas"])), ",".join(map(str, p["isr"]))) == view, p

            resp = dtp(r.port, ["dtp-b", "dtp-a"], limit=3, cursor=("dtp-a", 3))
            assert pages(resp) == [("dtp-a", [3, 4]), ("dtp-b", [0])], pages(resp)
            assert resp["cursor"] == ("dtp-b", 1), resp["cursor"]

            # The limit used up exactly at a topic's end: the next topic at 0.
            resp = dtp(r.port, ["dtp-a", "dtp-b"], limit=5)
            assert pages(resp) == [("dtp-a", [0, 1, 2, 3, 4])] and resp["cursor"] == ("dtp-b", 0), resp

            # Every topic (empty list), from a cursor: nothing before it.
            resp = dtp(r.port, [], cursor=("dtp-b", 2))
            assert pages(resp) == [("dtp-b", [2])] and resp["cursor"] is None, resp

        def raw_errors():
            resp = dtp(r.port, ["dtp-b", "no-such-topic", "bad/name"])
            got = [(t["name"], t["error"], t["ops"]) for t in resp["topics"]]
            assert got == [("bad/name", INVALID_TOPIC_EXCEPTION, ALL_TOPIC_OPERATIONS), ("dtp-b", 0, ALL_TOPIC_OPERATIONS),
                           ("no-such-topic", UNKNOWN_TOPIC_OR_PARTITION, ALL_TOPIC_OPERATIONS)], got
            assert resp["topics"][0]["partitions"] == [] and resp["topics"][0]["id"] == b"\0" * 16

            # A cursor topic outside the requested list: Kafka's
            # InvalidRequestException, each requested topic INVALID_REQUEST.
            resp = dtp(r.port, ["dtp-b", "dtp-a"], cursor=("dtp-c", 0))
            got = [(t["name"], t["error"], t["partitions"]) for t in resp["topics"]]
            assert got == [("dtp-b", INVALID_REQUEST, []), ("dtp-a", INVALID_REQUEST, [])], got
            assert resp["cursor"] is None

        rc = run_tests([("create topics", create),
                        ("kafka-topics --describe --topic: leader, replicas, isr per partition over API 75", describe_one),
                        ("kafka-topics --describe, 2 partitions a response: every partition once", describe_paged),
                        ("DescribeTopicPartitions paging: NextCursor and Cursor", raw_paging),
                        ("DescribeTopicPartitions errors: unknown, illegal, cursor outside the list", raw_errors)], r)
    sys.exit(rc)


if __name__ == "__main__":
    main()
