#!/usr/bin/python3
"""REST produce in a three-broker cluster (label "cluster", issue 17).

Every broker has an admin listener. A topic of 3 partitions, rf 3, led by
three different brokers: records POSTed to one broker's REST endpoints (v3
with partition ids and keys, v2 with partitions) all land, each at the
offset its delivery report names, whichever broker leads its partition:
the REST path forwards a partition it does not lead to its leader over the
inter-broker channel, as REST Proxy's producer sends there. confluent-kafka
reads every partition back and compares it exactly. After SIGKILL of a
leader, once its partition is led elsewhere, REST produce to that partition
through the surviving broker that does not lead it lands again. Before
that, a REST consumer instance on each broker, in a group another broker
coordinates, reads every partition exactly and commits: its group requests
go to the coordinator and its fetches to each leader.

  /usr/bin/python3 compat-tests/cluster_rest_test.py build/debug/runnel
"""

import base64
import json
import sys
import time

import requests

from cluster_harness import Cluster, consume, create_topic, run_tests, runnel_binary, wait_until

BOUND = 30.0  # seconds on top of any configured timeout: CI machines are loaded
TOPIC = "rest-spread"
PARTITIONS = 3


def b64(data):
    return base64.b64encode(data).decode()


def leaders(c, via):
    return {p: v["leader"] for p, v in c.partitions(via, TOPIC).items()}


def cluster_id(base):
    r = requests.get(base + "/v3/clusters", timeout=BOUND)
    assert r.status_code == 200, r.text
    return r.json()["data"][0]["cluster_id"]


def v3_produce(base, records):
    """records: [(partition or None, key bytes or None, value bytes)] as one
    streamed body; -> the delivery reports, in order."""
    body = "".join(json.dumps(dict({"value": {"type": "BINARY", "data": b64(v)}},
                                   **({"partition_id": p} if p is not None else {}),
                                   **({"key": {"type": "BINARY", "data": b64(k)}} if k is not None else {})))
                   for p, k, v in records)
    r = requests.post("%s/v3/clusters/%s/topics/%s/records" % (base, cluster_id(base), TOPIC), data=body,
                      headers={"Content-Type": "application/json"}, timeout=BOUND * 2)
    assert r.status_code == 200, (r.status_code, r.text)
    decoder, text, reports, at = json.JSONDecoder(), r.text, [], 0
    while at < len(text):
        while at < len(text) and text[at].isspace():
            at += 1
        if at == len(text):
            break
        report, at = decoder.raw_decode(text, at)
        reports.append(report)
    assert len(reports) == len(records), (len(reports), text[:500])
    bad = [x for x in reports if x.get("error_code") != 200]
    assert not bad, bad[:3]
    return reports


def spread_produce(c):
    bases = {i: "http://127.0.0.1:%d" % b.admin_port() for i, b in c.brokers.items()}
    led = leaders(c, 1)
    assert len(set(led.values())) == PARTITIONS, "partitions not led by three brokers: %s" % led
    expected = {p: [] for p in range(PARTITIONS)}  # partition -> [(offset, key, value)]
    for via in (1, 2, 3):
        records = [(p, None, b"v3-via%d-p%d-%d" % (via, p, i)) for i in range(10) for p in range(PARTITIONS)]
        records += [(None, b"key-%d" % i, b"v3-via%d-keyed-%d" % (via, i)) for i in range(15)]
        for (p, k, v), report in zip(records, v3_produce(bases[via], records)):
            if p is not None:
                assert report["partition_id"] == p, report
            expected[report["partition_id"]].append((report["offset"], k, v))
    # v2 through broker 2, every partition named.
    v2 = [{"value": b64(b"v2-p%d-%d" % (p, i)), "partition": p} for i in range(5) for p in range(PARTITIONS)]
    r = requests.post(bases[2] + "/topics/" + TOPIC, data=json.dumps({"records": v2}),
                      headers={"Content-Type": "application/vnd.kafka.binary.v2+json",
                               "Accept": "application/vnd.kafka.v2+json"}, timeout=BOUND * 2)
    assert r.status_code == 200, (r.status_code, r.text)
    offsets = r.json()["offsets"]
    assert all(o.get("error_code") is None for o in offsets), offsets[:3]
    for rec, o in zip(v2, offsets):
        assert o["partition"] == rec["partition"], o
        expected[o["partition"]].append((o["offset"], None, base64.b64decode(rec["value"])))
    for p in range(PARTITIONS):
        want = sorted(expected[p])
        assert [o for o, _, _ in want] == list(range(len(want))), "partition %d offsets %s" % (p, want[:5])
        got = consume(c.bootstrap(), TOPIC, p, len(want))
        assert got == want, "partition %d: read %s, reported %s" % (p, got[:3], want[:3])
    print("     %s records through each broker's REST endpoints, leaders %s" % (
        {p: len(v) for p, v in expected.items()}, led), flush=True)


def java_hash(text):
    h = 0
    for ch in text:
        h = (31 * h + ord(ch)) & 0xFFFFFFFF
    return h


def coordinator_of(c, group):
    """The broker leading the group's __consumer_offsets partition (Kafka's
    partitionFor: the id's String.hashCode, sign bit cleared, modulo 50)."""
    offsets = c.partitions(1, "__consumer_offsets")
    return offsets[(java_hash(group) & 0x7FFFFFFF) % len(offsets)]["leader"]


def rest_consumers(c):
    """A REST consumer instance on each broker, in a group another broker
    coordinates, reads every partition (two led elsewhere) exactly and
    commits; librdkafka sees the commits."""
    from confluent_kafka import Consumer, TopicPartition
    counts = {p: hi for p, (lo, hi) in watermarks(c).items()}
    expected = {p: consume(c.bootstrap(), TOPIC, p, counts[p]) for p in range(PARTITIONS)}
    # __consumer_offsets exists once a group has asked for its coordinator.
    kafka = Consumer({"bootstrap.servers": c.bootstrap(), "group.id": "rest-first-group"})
    try:
        kafka.committed([TopicPartition(TOPIC, 0)], timeout=BOUND)
    finally:
        kafka.close()

    def offsets_led():
        try:
            return all(v["leader"] >= 0 for v in c.partitions(1, "__consumer_offsets").values())
        except AssertionError:
            return False
    wait_until(offsets_led, BOUND, "__consumer_offsets led")
    for via in (1, 2, 3):
        group = next(g for g in ("rest-cg-%d-%d" % (via, i) for i in range(200)) if coordinator_of(c, g) != via)
        base = "http://127.0.0.1:%d/consumers/%s" % (c.brokers[via].admin_port(), group)
        headers = {"Content-Type": "application/vnd.kafka.v2+json"}
        r = requests.post(base, data=json.dumps({"auto.offset.reset": "earliest", "auto.commit.enable": "false"}),
                          headers=headers, timeout=BOUND)
        assert r.status_code == 200, r.text
        inst = base + "/instances/" + r.json()["instance_id"]
        r = requests.post(inst + "/subscription", data=json.dumps({"topics": [TOPIC]}), headers=headers, timeout=BOUND)
        assert r.status_code == 204, r.text
        got = {p: [] for p in range(PARTITIONS)}
        deadline = time.monotonic() + BOUND * 2
        while sum(map(len, got.values())) < sum(counts.values()) and time.monotonic() < deadline:
            r = requests.get(inst + "/records", params={"timeout": 500},
                             headers={"Accept": "application/vnd.kafka.binary.v2+json"}, timeout=BOUND)
            assert r.status_code == 200, r.text
            for rec in r.json():
                key = None if rec["key"] is None else base64.b64decode(rec["key"])
                got[rec["partition"]].append((rec["offset"], key, base64.b64decode(rec["value"])))
        assert got == expected, "through broker %d: read %s of %s" % (
            via, {p: len(v) for p, v in got.items()}, counts)
        r = requests.post(inst + "/offsets", headers=headers, timeout=BOUND)
        assert r.status_code == 200 and r.json() == [], r.text
        kafka = Consumer({"bootstrap.servers": c.bootstrap(), "group.id": group})
        try:
            done = kafka.committed([TopicPartition(TOPIC, p) for p in range(PARTITIONS)], timeout=BOUND)
            assert {tp.partition: tp.offset for tp in done} == counts, (done, counts)
        finally:
            kafka.close()
        r = requests.delete(inst, timeout=BOUND)
        assert r.status_code == 204, r.text
        print("     through broker %d, group %s coordinated by broker %d: %d records" % (
            via, group, coordinator_of(c, group), sum(counts.values())), flush=True)


def watermarks(c):
    from confluent_kafka import Consumer, TopicPartition
    kafka = Consumer({"bootstrap.servers": c.bootstrap(), "group.id": "rest-watermarks"})
    try:
        return {p: kafka.get_watermark_offsets(TopicPartition(TOPIC, p), timeout=BOUND) for p in range(PARTITIONS)}
    finally:
        kafka.close()


def after_a_leader_dies(c):
    led = leaders(c, 1)
    victim = led[2] if led[2] != 1 else led[1]
    moved = next(p for p, l in led.items() if l == victim)
    c.kill9(victim)
    survivors = [i for i in c.live_ids() if i != victim]
    wait_until(lambda: leaders(c, survivors[0]).get(moved) not in (victim, -1), BOUND * 2,
               "partition %d led after broker %d died" % (moved, victim))
    # Through the survivor that does not lead it: forwarded to the new leader.
    new_leader = leaders(c, survivors[0])[moved]
    via = next(i for i in survivors if i != new_leader)
    base = "http://127.0.0.1:%d" % c.brokers[via].admin_port()
    reports = v3_produce(base, [(moved, None, b"after-%d" % i) for i in range(5)])
    first = reports[0]["offset"]
    got = consume(c.bootstrap(survivors), TOPIC, moved, first + 5)[first:]
    assert [v for _, _, v in got] == [b"after-%d" % i for i in range(5)], got
    assert [o for o, _, _ in got] == [x["offset"] for x in reports], (got, reports)


def main():
    binary = sys.argv[1] if len(sys.argv) > 1 else runnel_binary()
    with Cluster(3, binary, overrides={"runnel.admin.listeners": "http://127.0.0.1:0"}) as c:
        create_topic(c.bootstrap(), TOPIC, PARTITIONS, 3)
        c.wait_in_sync(TOPIC, BOUND)
        return run_tests([
            ("REST produce through each broker lands on every partition's leader", lambda: spread_produce(c)),
            ("REST consumer instances on each broker read every leader's partitions and commit",
             lambda: rest_consumers(c)),
            ("after SIGKILL of a leader, REST produce reaches the new one", lambda: after_a_leader_dies(c)),
        ])


if __name__ == "__main__":
    sys.exit(main())
