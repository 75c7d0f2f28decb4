"""REST Proxy v2 consumer instances on the admin listener (issue 17).

Driven with Python `requests` as users drive Confluent REST Proxy's v2
consumer API, on a real runnel; the records are produced with
confluent-kafka (librdkafka) and every record read over REST is compared
with what was produced: partition, offset, key and value.

  - subscribe, poll until every record of three partitions is read (binary
    format, nulls kept), commit everything handed out, the committed
    offsets seen by GET offsets and by librdkafka, delete: the group is empty;
  - the json format embeds JSON keys and values; Accept picks the format
    (40601 for the other one); a record that is no JSON stops its
    partition there (50002) until a seek moves past it;
  - a pattern subscription (RE2, the whole name) takes topics created
    after it;
  - a REST instance and a librdkafka consumer in one group share the
    partitions (the range assignor both speak), each record read once;
    then a second REST instance joins and the three split them;
  - assignment by hand: seek to an offset, to the beginning, to the end and
    to a time; commit explicit offsets (REST Proxy commits offset + 1),
    which a librdkafka member of the group then starts from;
  - auto commit (enable.auto.commit's default): deleting the instance
    commits what it handed out;
  - max_bytes leaves the rest for the next poll; an instance unused for
    runnel.rest.consumer.instance.timeout.ms is closed (40403) and leaves
    its group;
  - errors: 40403, 40902, 42204, 422, 40903 (subscribe after assign, seek
    outside the assignment), 40402 (GET offsets without a body), 405.
"""

import base64
import json
import sys
import time

import requests
from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic
from kafka import KafkaAdminClient

from runnel_harness import Runnel, run_tests

V2 = "application/vnd.kafka.v2+json"
V2_BINARY = "application/vnd.kafka.binary.v2+json"
V2_JSON = "application/vnd.kafka.json.v2+json"
TIMEOUT = 30


def b64(data):
    return None if data is None else base64.b64encode(data).decode()


def create_topic(broker, name, partitions=1):
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    admin.create_topics([NewTopic(name, partitions, 1)])[name].result(timeout=TIMEOUT)


def produce(broker, topic, records):
    """Produces (partition, key, value) tuples; returns {(partition, offset): (key, value)}."""
    producer = Producer({"bootstrap.servers": broker.bootstrap, "linger.ms": 5})
    placed = {}

    def report(err, msg):
        assert err is None, err
        placed[(msg.partition(), msg.offset())] = (msg.key(), msg.value())

    for partition, key, value in records:
        producer.produce(topic, key=key, value=value, partition=partition, on_delivery=report)
    assert producer.flush(TIMEOUT) == 0
    assert len(placed) == len(records)
    return placed


def committed(broker, group, topic, partitions):
    consumer = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": group})
    try:
        return {tp.partition: tp.offset
                for tp in consumer.committed([TopicPartition(topic, p) for p in range(partitions)], timeout=TIMEOUT)}
    finally:
        consumer.close()


def group_state(broker, group):
    """(state, member count) as DescribeGroups answers (kafka-python: Debian's
    confluent-kafka has no describe_consumer_groups)."""
    admin = KafkaAdminClient(bootstrap_servers=broker.bootstrap, request_timeout_ms=TIMEOUT * 1000)
    try:
        [described] = admin.describe_consumer_groups([group])
        return described.state, len(described.members)
    finally:
        admin.close()


class Rest:
    def __init__(self, broker):
        self.base = "http://127.0.0.1:%d" % broker.admin_port()
        self.session = requests.Session()

    def call(self, method, path, body=None, accept=None, params=None):
        headers = {"Content-Type": V2}
        if accept:
            headers["Accept"] = accept
        data = None if body is None else json.dumps(body)
        return self.session.request(method, self.base + path, data=data, headers=headers, params=params,
                                    timeout=TIMEOUT)

    def create(self, group, **config):
        r = self.call("POST", "/consumers/" + group, config)
        assert r.status_code == 200, (r.status_code, r.text)
        assert r.headers["Content-Type"] == V2, r.headers
        answer = r.json()
        assert answer["base_uri"].endswith("/consumers/%s/instances/%s" % (group, answer["instance_id"])), answer
        return Instance(self, group, answer["instance_id"])


class Instance:
    def __init__(self, rest, group, name):
        self.rest, self.group, self.name = rest, group, name
        self.path = "/consumers/%s/instances/%s" % (group, name)

    def call(self, method, action, body=None, **kw):
        return self.rest.call(method, self.path + ("/" + action if action else ""), body, **kw)

    def ok(self, method, action, body=None, status=204, **kw):
        r = self.call(method, action, body, **kw)
        assert r.status_code == status, (method, action, r.status_code, r.text)
        return r

    def subscribe(self, topics):
        self.ok("POST", "subscription", {"topics": topics})

    def poll(self, accept=V2_BINARY, timeout_ms=None, max_bytes=None):
        params = {}
        if timeout_ms is not None:
            params["timeout"] = timeout_ms
        if max_bytes is not None:
            params["max_bytes"] = max_bytes
        r = self.call("GET", "records", accept=accept, params=params)
        assert r.status_code == 200, (r.status_code, r.text)
        assert r.headers["Content-Type"] == accept, r.headers
        return r.json()

    def assignment(self):
        return sorted((p["topic"], p["partition"]) for p in self.ok("GET", "assignments", status=200).json()["partitions"])

    def delete(self):
        r = self.rest.call("DELETE", self.path)
        assert r.status_code == 204, (r.status_code, r.text)


def as_produced(record):
    """A binary-format record as {(partition, offset): (key, value)}."""
    key = None if record["key"] is None else base64.b64decode(record["key"])
    value = None if record["value"] is None else base64.b64decode(record["value"])
    return (record["partition"], record["offset"]), (key, value)


def read_all(instances, expected, deadline_s=60):
    """Polls the instances in turn until `expected` ({(p, o): (k, v)}) is read; each record once."""
    got, deadline = {}, time.monotonic() + deadline_s
    while len(got) < len(expected) and time.monotonic() < deadline:
        for inst in instances:
            for rec in inst.poll(timeout_ms=500):
                at, kv = as_produced(rec)
                assert at not in got, "record %r handed out twice" % (at,)
                got[at] = kv
    assert got == expected, "read %d of %d records; first difference %r" % (
        len(got), len(expected), next((k for k in expected if got.get(k) != expected[k]), None))
    return got


def expect_error(r, status, code, words=None):
    assert r.status_code == status, (r.status_code, r.text)
    body = r.json()
    assert body["error_code"] == code, body
    if words:
        assert words in body["message"], body


# -- scenarios ----------------------------------------------------------------

def subscribe_consume_commit(broker):
    rest = Rest(broker)
    create_topic(broker, "rc-orders", 3)
    records = [(i % 3, b"k%d" % i if i % 5 else None, b"v%d" % i if i % 7 else None) for i in range(60)]
    expected = produce(broker, "rc-orders", records)
    inst = rest.create("rc-g1", name="c1", format="binary", **{"auto.offset.reset": "earliest",
                                                              "auto.commit.enable": "false"})
    inst.subscribe(["rc-orders"])
    assert inst.ok("GET", "subscription", status=200).json() == {"topics": ["rc-orders"]}
    read_all([inst], expected)
    assert inst.assignment() == [("rc-orders", p) for p in range(3)]
    r = inst.ok("POST", "offsets", status=200)
    assert r.json() == [] and r.headers["Content-Type"] == V2, r.text
    ends = {p: 1 + max(o for (pp, o) in expected if pp == p) for p in range(3)}
    got = inst.ok("GET", "offsets", {"partitions": [{"topic": "rc-orders", "partition": p} for p in range(3)]},
                  status=200).json()
    assert sorted((o["partition"], o["offset"]) for o in got["offsets"]) == sorted(ends.items()), got
    assert all(o["topic"] == "rc-orders" and o["metadata"] == "" for o in got["offsets"]), got
    assert committed(broker, "rc-g1", "rc-orders", 3) == ends
    state, members = group_state(broker, "rc-g1")
    assert members == 1 and state == "Stable", (state, members)
    inst.delete()
    state, members = group_state(broker, "rc-g1")
    assert members == 0 and state == "Empty", (state, members)
    expect_error(inst.call("GET", "records", accept=V2_BINARY), 404, 40403)


def json_format(broker):
    rest = Rest(broker)
    create_topic(broker, "rc-json")
    docs = [{"n": i, "tags": ["a", None]} for i in range(10)]
    produce(broker, "rc-json", [(0, json.dumps({"id": i}).encode(), json.dumps(d).encode()) for i, d in enumerate(docs)])
    inst = rest.create("rc-gjson", format="json", **{"auto.offset.reset": "earliest"})
    inst.subscribe(["rc-json"])
    # Accept of the binary format (or none) is the binary reader: 40601.
    expect_error(inst.call("GET", "records", accept=V2_BINARY), 406, 40601)
    expect_error(inst.call("GET", "records"), 406, 40601)
    got, deadline = [], time.monotonic() + 60
    while len(got) < len(docs) and time.monotonic() < deadline:
        got += inst.poll(accept=V2_JSON, timeout_ms=500)
    assert [r["value"] for r in got] == docs, got
    assert [r["key"] for r in got] == [{"id": i} for i in range(10)], got
    assert [r["offset"] for r in got] == list(range(10)), got
    binary = rest.create("rc-gjson-b")
    binary.subscribe(["rc-json"])
    expect_error(binary.call("GET", "records", accept=V2_JSON), 406, 40601)
    inst.delete()
    binary.delete()


def not_json(broker):
    rest = Rest(broker)
    create_topic(broker, "rc-notjson")
    produce(broker, "rc-notjson", [(0, None, b'{"a":1}'), (0, None, b"[2]"), (0, None, b"not json"), (0, None, b"4")])
    inst = rest.create("rc-gnotjson", format="json", **{"auto.offset.reset": "earliest", "auto.commit.enable": "false"})
    inst.ok("POST", "assignments", {"partitions": [{"topic": "rc-notjson", "partition": 0}]})
    got, deadline = [], time.monotonic() + 30
    while len(got) < 2 and time.monotonic() < deadline:
        got += inst.poll(accept=V2_JSON, timeout_ms=300)
    assert [(r["offset"], r["value"]) for r in got] == [(0, {"a": 1}), (1, [2])], got
    # The record that is no JSON stops the partition there, every time.
    for _ in range(2):
        expect_error(inst.call("GET", "records", accept=V2_JSON), 500, 50002, "not JSON")
    inst.ok("POST", "positions", {"offsets": [{"topic": "rc-notjson", "partition": 0, "offset": 3}]})
    assert [(r["offset"], r["value"]) for r in inst.poll(accept=V2_JSON, timeout_ms=300)] == [(3, 4)]
    inst.delete()


def pattern_subscription(broker):
    rest = Rest(broker)
    create_topic(broker, "rc-pat-a")
    first = produce(broker, "rc-pat-a", [(0, None, b"a%d" % i) for i in range(3)])
    inst = rest.create("rc-gpat", **{"auto.offset.reset": "earliest", "auto.commit.enable": "false"})
    expect_error(inst.call("POST", "subscription", {"topic_pattern": "rc-pat-("}), 422, 42204)
    inst.ok("POST", "subscription", {"topic_pattern": "rc-pat-.*"})
    got, deadline = {}, time.monotonic() + 60
    while len(got) < 3 and time.monotonic() < deadline:
        for rec in inst.poll(timeout_ms=300):
            got[(rec["topic"],) + as_produced(rec)[0]] = as_produced(rec)[1]
    assert got == {("rc-pat-a",) + k: v for k, v in first.items()}, got
    assert inst.ok("GET", "subscription", status=200).json() == {"topics": ["rc-pat-a"]}
    inst.ok("POST", "offsets", status=200)  # the rejoin to come starts from the commits
    # A topic created later that the pattern matches joins the subscription
    # (looked for every 5 s on poll), and the whole name must match.
    create_topic(broker, "rc-pat-b", 2)
    create_topic(broker, "xrc-pat-c")
    later = produce(broker, "rc-pat-b", [(i % 2, None, b"b%d" % i) for i in range(4)])
    produce(broker, "xrc-pat-c", [(0, None, b"never")])
    got, deadline = {}, time.monotonic() + 60
    while len(got) < 4 and time.monotonic() < deadline:
        for rec in inst.poll(timeout_ms=300):
            assert rec["topic"] == "rc-pat-b", rec
            got[as_produced(rec)[0]] = as_produced(rec)[1]
    assert got == later, got
    assert inst.ok("GET", "subscription", status=200).json() == {"topics": ["rc-pat-a", "rc-pat-b"]}
    inst.delete()


def shared_group(broker):
    rest = Rest(broker)
    create_topic(broker, "rc-shared", 4)
    first = produce(broker, "rc-shared", [(i % 4, b"a%d" % i, b"first-%d" % i) for i in range(80)])
    inst = rest.create("rc-gshared", **{"auto.offset.reset": "earliest", "auto.commit.enable": "false"})
    inst.subscribe(["rc-shared"])
    deadline = time.monotonic() + 60
    while not inst.assignment() and time.monotonic() < deadline:
        inst.poll(timeout_ms=200)
    assert inst.assignment() == [("rc-shared", p) for p in range(4)]
    # A librdkafka member joins: the REST member rejoins on its next polls
    # and the two split the four partitions.
    kafka = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": "rc-gshared",
                      "auto.offset.reset": "earliest", "enable.auto.commit": False,
                      "partition.assignment.strategy": "range"})
    kafka.subscribe(["rc-shared"])
    got, deadline = {}, time.monotonic() + 90
    while time.monotonic() < deadline:
        for rec in inst.poll(timeout_ms=200):
            at, kv = as_produced(rec)
            assert at not in got, "record %r read twice" % (at,)
            got[at] = ("rest",) + kv
        msg = kafka.poll(0.2)
        if msg is not None and not msg.error():
            at = (msg.partition(), msg.offset())
            assert at not in got, "record %r read twice" % (at,)
            got[at] = ("kafka", msg.key(), msg.value())
        if len(got) == len(first) and len(kafka.assignment()) == 2 and len(inst.assignment()) == 2:
            break
    rest_parts = {p for (_, p) in inst.assignment()}
    kafka_parts = {tp.partition for tp in kafka.assignment()}
    assert len(rest_parts) == 2 and len(kafka_parts) == 2 and not rest_parts & kafka_parts, (rest_parts, kafka_parts)
    assert {at: kv[1:] for at, kv in got.items()} == first, "read %d of %d" % (len(got), len(first))
    # Neither read the other's partitions once the group settled: records
    # produced now go to their owner only.
    second = produce(broker, "rc-shared", [(i % 4, b"b%d" % i, b"second-%d" % i) for i in range(40)])
    late, deadline = {}, time.monotonic() + 60
    while len(late) < len(second) and time.monotonic() < deadline:
        for rec in inst.poll(timeout_ms=200):
            at, kv = as_produced(rec)
            assert at[0] in rest_parts, rec
            late[at] = kv
        msg = kafka.poll(0.2)
        if msg is not None and not msg.error():
            assert msg.partition() in kafka_parts
            late[(msg.partition(), msg.offset())] = (msg.key(), msg.value())
    assert late == second, "read %d of %d" % (len(late), len(second))
    kafka.close()
    inst.delete()


def manual_assignment(broker):
    rest = Rest(broker)
    create_topic(broker, "rc-manual", 2)
    before = int(time.time() * 1000)
    placed = produce(broker, "rc-manual", [(0, b"k%d" % i, b"v%d" % i) for i in range(20)])
    inst = rest.create("rc-gmanual", **{"auto.offset.reset": "latest", "auto.commit.enable": "false"})
    inst.ok("POST", "assignments", {"partitions": [{"topic": "rc-manual", "partition": 0}]})
    assert inst.assignment() == [("rc-manual", 0)]
    expect_error(inst.call("POST", "subscription", {"topics": ["rc-manual"]}), 409, 40903, "mutually exclusive")
    expect_error(inst.call("POST", "positions", {"offsets": [{"topic": "rc-manual", "partition": 1, "offset": 0}]}),
                 409, 40903)

    def offsets_read(n=None):
        out, deadline = [], time.monotonic() + 30
        while time.monotonic() < deadline:
            batch = inst.poll(timeout_ms=300)
            out += [r["offset"] for r in batch]
            if (n is not None and len(out) >= n) or (n is None and not batch):
                break
        return out

    # latest: nothing until something new comes
    assert offsets_read() == []
    inst.ok("POST", "positions", {"offsets": [{"topic": "rc-manual", "partition": 0, "offset": 15}]})
    assert offsets_read(5) == [15, 16, 17, 18, 19]
    inst.ok("POST", "positions/beginning", {"partitions": [{"topic": "rc-manual", "partition": 0}]})
    assert offsets_read(20) == list(range(20))
    inst.ok("POST", "positions/end", {"partitions": [{"topic": "rc-manual", "partition": 0}]})
    assert offsets_read() == []
    # A time before every record: the first offset.
    stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(before / 1000 - 60)) + "Z"
    inst.ok("POST", "positions", {"timestamps": [{"topic": "rc-manual", "partition": 0, "timestamp": stamp}]})
    assert offsets_read(1)[0] == 0
    # REST Proxy commits the offset after the one named.
    r = inst.ok("POST", "offsets", {"offsets": [{"topic": "rc-manual", "partition": 0, "offset": 9}]}, status=200)
    assert r.json() == []
    got = inst.ok("GET", "offsets", {"partitions": [{"topic": "rc-manual", "partition": 0},
                                                     {"topic": "rc-manual", "partition": 1}]}, status=200).json()
    assert got == {"offsets": [{"topic": "rc-manual", "partition": 0, "offset": 10, "metadata": ""}]}, got
    expect_error(inst.call("GET", "offsets"), 404, 40402)
    inst.delete()
    kafka = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": "rc-gmanual", "enable.auto.commit": False})
    try:
        kafka.assign([TopicPartition("rc-manual", 0)])
        msg, deadline = None, time.monotonic() + 30
        while msg is None and time.monotonic() < deadline:
            msg = kafka.poll(0.5)
        assert msg is not None and msg.offset() == 10 and (msg.key(), msg.value()) == placed[(0, 10)], msg
    finally:
        kafka.close()


def auto_commit_on_delete(broker):
    rest = Rest(broker)
    create_topic(broker, "rc-auto")
    expected = produce(broker, "rc-auto", [(0, None, b"x%d" % i) for i in range(12)])
    inst = rest.create("rc-gauto", **{"auto.offset.reset": "earliest"})
    inst.subscribe(["rc-auto"])
    read_all([inst], expected)
    inst.delete()
    assert committed(broker, "rc-gauto", "rc-auto", 1) == {0: 12}


def max_bytes(broker):
    rest = Rest(broker)
    create_topic(broker, "rc-bytes")
    produce(broker, "rc-bytes", [(0, None, b"%04d" % i + b"." * 96) for i in range(30)])  # 100 bytes each
    inst = rest.create("rc-gbytes", **{"auto.offset.reset": "earliest", "auto.commit.enable": "false"})
    inst.ok("POST", "assignments", {"partitions": [{"topic": "rc-bytes", "partition": 0}]})
    seen, deadline = [], time.monotonic() + 30
    while len(seen) < 30 and time.monotonic() < deadline:
        batch = inst.poll(timeout_ms=500, max_bytes=1050)
        # The record that would reach the limit waits for the next poll.
        assert len(batch) <= 10, len(batch)
        seen += [r["offset"] for r in batch]
    assert seen == list(range(30)), seen
    inst.delete()


def errors(broker):
    rest = Rest(broker)
    create_topic(broker, "rc-errors")
    expect_error(rest.call("GET", "/consumers/rc-gerr/instances/nobody/records", accept=V2_BINARY), 404, 40403)
    expect_error(rest.call("POST", "/consumers/rc-gerr/instances/nobody/subscription", {"topics": ["t"]}), 404, 40403)
    expect_error(rest.call("DELETE", "/consumers/rc-gerr/instances/nobody"), 404, 40403)
    inst = rest.create("rc-gerr", name="dup")
    expect_error(rest.call("POST", "/consumers/rc-gerr", {"name": "dup"}), 409, 40902)
    rest.create("rc-gerr-other", name="dup").delete()  # names are per group
    expect_error(rest.call("POST", "/consumers/rc-gerr", {"auto.offset.reset": "bad-config"}), 422, 42204,
                 "auto.offset.reset")
    expect_error(rest.call("POST", "/consumers/rc-gerr", {"format": "xml"}), 422, 422)
    expect_error(rest.call("POST", "/consumers/rc-gerr", "not an object"), 422, 422)
    inst.subscribe(["rc-errors"])
    expect_error(inst.call("POST", "assignments", {"partitions": [{"topic": "rc-errors", "partition": 0}]}),
                 409, 40903, "mutually exclusive")
    expect_error(inst.call("POST", "subscription", {"topics": "rc-errors"}), 422, 422)
    expect_error(inst.call("PUT", "subscription", {"topics": ["rc-errors"]}), 405, 405)
    expect_error(inst.call("GET", "nothing-here"), 404, 404)
    inst.ok("DELETE", "subscription")
    assert inst.ok("GET", "subscription", status=200).json() == {"topics": []}
    expect_error(inst.call("GET", "records", accept=V2_BINARY), 409, 40903)
    inst.delete()
    # The broker still serves.
    assert rest.create("rc-gerr", name="dup") is not None


def expiry(binary):
    with Runnel(binary=binary, overrides={"runnel.admin.listeners": "http://127.0.0.1:0",
                                          "runnel.rest.consumer.instance.timeout.ms": "2000"}) as broker:
        rest = Rest(broker)
        create_topic(broker, "rc-expiry")
        inst = rest.create("rc-gexpiry")
        inst.subscribe(["rc-expiry"])
        deadline = time.monotonic() + 30
        while not inst.assignment() and time.monotonic() < deadline:
            inst.poll(timeout_ms=200)
        assert group_state(broker, "rc-gexpiry")[1] == 1
        deadline = time.monotonic() + 30
        while inst.call("GET", "assignments").status_code == 200 and time.monotonic() < deadline:
            time.sleep(3)  # longer than the timeout: the instance is unused meanwhile
        expect_error(inst.call("GET", "assignments"), 404, 40403)
        state, members = group_state(broker, "rc-gexpiry")
        assert members == 0, (state, members)


def main():
    binary = sys.argv[1] if len(sys.argv) > 1 else None
    with Runnel(binary=binary, overrides={"runnel.admin.listeners": "http://127.0.0.1:0"}) as broker:
        rc = run_tests([
            ("subscribe, read three partitions exactly, commit, delete", lambda: subscribe_consume_commit(broker)),
            ("the json format, and Accept picks the format", lambda: json_format(broker)),
            ("a record that is no JSON stops its partition for a json instance", lambda: not_json(broker)),
            ("a pattern subscription takes topics created later", lambda: pattern_subscription(broker)),
            ("a REST instance and librdkafka share a group's partitions", lambda: shared_group(broker)),
            ("assignment by hand, seeks, explicit commits librdkafka starts from", lambda: manual_assignment(broker)),
            ("auto commit commits on delete", lambda: auto_commit_on_delete(broker)),
            ("max_bytes leaves the rest for the next poll", lambda: max_bytes(broker)),
            ("errors: 40403, 40902, 42204, 422, 40903, 405", lambda: errors(broker)),
            ("an unused instance expires and leaves its group", lambda: expiry(binary)),
        ], broker)
    sys.exit(rc)


if __name__ == "__main__":
    main()
