"""The REST Proxy compatible endpoints on the admin listener (issue 17).

Driven over HTTP as users drive Confluent REST Proxy: Python `requests` and
`curl`, on a real runnel (runnel.admin.listeners=http://127.0.0.1:0). Every
record is read back with confluent-kafka (and once with kcat) and compared
exactly: partition, offset, key, value, headers and timestamp.

  - v3 cluster discovery: GET /v3/clusters names the cluster id that the
    produce path takes; another id is 404;
  - v3 produce with BINARY, JSON and STRING keys and values, base64 headers
    (repeated names, null values), partition_id and timestamp; the delivery
    report is REST Proxy's, field for field;
  - v3 streaming: a chunked body of 100 records gets 100 reports in order;
    on a raw socket each record's report arrives before the next record is
    sent (the answer streams, it is not buffered);
  - v2 produce (binary and json embedded formats), the partition path,
    keyed records placed where librdkafka's murmur2 partitioner puts them;
  - the Produce path's rules reach REST: min.insync.replicas (acks=all),
    max.message.bytes, topic auto-creation on or off;
  - Runnel's raw endpoint (Flume's HTTP sink): the body is the value, byte
    for byte;
  - errors: REST Proxy's bodies and codes for an unknown topic, partition,
    cluster and path, bad JSON, bad base64, a wrong Content-Type or Accept,
    a wrong method; a body broken off or malformed HTTP leaves the broker
    serving.
"""

import base64
import json
import socket
import subprocess
import sys
import time

import requests
from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from runnel_harness import Runnel, run_tests

V2_BINARY = "application/vnd.kafka.binary.v2+json"
V2_JSON = "application/vnd.kafka.json.v2+json"
V2_ANSWER = "application/vnd.kafka.v2+json"
TIMEOUT = 30


def b64(data):
    return base64.b64encode(data).decode()


def create_topic(broker, name, partitions=1, config=None):
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    admin.create_topics([NewTopic(name, partitions, 1, config=config or {})])[name].result(timeout=TIMEOUT)


def read_back(broker, topic, partition, count, start=0):
    """(offset, key, value, headers, timestamp ms) of `count` records from `start`."""
    consumer = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": "rest-read-back",
                         "enable.auto.commit": False})
    try:
        consumer.assign([TopicPartition(topic, partition, start)])
        got, deadline = [], time.monotonic() + TIMEOUT
        while len(got) < count and time.monotonic() < deadline:
            msg = consumer.poll(1.0)
            if msg is None:
                continue
            assert not msg.error(), msg.error()
            got.append((msg.offset(), msg.key(), msg.value(), msg.headers(), msg.timestamp()[1]))
        assert len(got) == count, "read %d of %d records of %s-%d" % (len(got), count, topic, partition)
        return got
    finally:
        consumer.close()


def end_offset(broker, topic, partition):
    consumer = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": "rest-end-offset"})
    try:
        return consumer.get_watermark_offsets(TopicPartition(topic, partition), timeout=TIMEOUT)[1]
    finally:
        consumer.close()


def concatenated(text):
    """The JSON values of a concatenated-JSON body."""
    decoder, at, out = json.JSONDecoder(), 0, []
    while at < len(text):
        while at < len(text) and text[at] in " \t\r\n":
            at += 1
        if at == len(text):
            break
        value, at = decoder.raw_decode(text, at)
        out.append(value)
    return out


class Rest:
    def __init__(self, broker):
        self.base = "http://127.0.0.1:%d" % broker.admin_port()
        self.session = requests.Session()

    def cluster_id(self):
        r = self.session.get(self.base + "/v3/clusters", timeout=TIMEOUT)
        assert r.status_code == 200, r.text
        return r.json()["data"][0]["cluster_id"]

    def records_url(self, topic, cluster=None):
        return "%s/v3/clusters/%s/topics/%s/records" % (self.base, cluster or self.cluster_id(), topic)

    def v3(self, topic, body, **kw):
        return self.session.post(self.records_url(topic), data=body, timeout=TIMEOUT,
                                 headers=kw.pop("headers", {"Content-Type": "application/json"}), **kw)

    def v2(self, path, body, content_type=V2_BINARY, accept=V2_ANSWER):
        headers = {"Content-Type": content_type}
        if accept:
            headers["Accept"] = accept
        return self.session.post(self.base + path, data=body, headers=headers, timeout=TIMEOUT)


def expect_error(r, status, code, words=None):
    assert r.status_code == status, (r.status_code, r.text)
    body = r.json()
    assert body["error_code"] == code, body
    assert isinstance(body["message"], str) and body["message"], body
    if words:
        assert words in body["message"], body


# -- v3 ----------------------------------------------------------------------

def clusters(broker):
    rest = Rest(broker)
    r = rest.session.get(rest.base + "/v3/clusters", timeout=TIMEOUT)
    assert r.status_code == 200 and r.headers["Content-Type"] == "application/json", (r.status_code, r.headers)
    listed = r.json()
    assert listed["kind"] == "KafkaClusterList", listed
    assert len(listed["data"]) == 1, listed
    cluster = listed["data"][0]
    cid = cluster["cluster_id"]
    assert cid, cluster
    assert cluster["kind"] == "KafkaCluster" and cluster["metadata"]["self"] == rest.base + "/v3/clusters/" + cid
    assert cluster["controller"]["related"] == rest.base + "/v3/clusters/%s/brokers/1" % cid, cluster
    # The same id as Kafka's Metadata (librdkafka reads it there).
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    assert admin.list_topics(timeout=TIMEOUT).cluster_id == cid
    one = rest.session.get(rest.base + "/v3/clusters/" + cid, timeout=TIMEOUT)
    assert one.status_code == 200 and one.json() == cluster, one.text
    expect_error(rest.session.get(rest.base + "/v3/clusters/no-such-cluster", timeout=TIMEOUT), 404, 404,
                 "no-such-cluster")


def v3_data_types(broker):
    topic = "rest-v3-types"
    create_topic(broker, topic, partitions=3)
    rest = Rest(broker)
    cid = rest.cluster_id()
    ts = "2021-02-05T19:14:42.821Z"
    ts_ms = 1612552482821
    cases = [
        ({"partition_id": 1, "key": {"type": "BINARY", "data": b64(b"\x00k\xff")},
          "value": {"type": "BINARY", "data": b64(b"\x01\x02\x00v")}, "timestamp": ts,
          "headers": [{"name": "h1", "value": b64(b"one")}, {"name": "h1", "value": b64(b"two")},
                      {"name": "nil", "value": None}]},
         b"\x00k\xff", b"\x01\x02\x00v", [("h1", b"one"), ("h1", b"two"), ("nil", None)]),
        ({"partition_id": 1, "key": {"type": "JSON", "data": {"id": 7}},
          "value": {"type": "JSON", "data": {"name": "x", "list": [1, True, None, "s"]}}, "timestamp": ts},
         b'{"id":7}', b'{"name":"x","list":[1,true,null,"s"]}', None),
        ({"partition_id": 1, "key": {"type": "STRING", "data": "clé"},
          "value": {"type": "STRING", "data": "välue"}, "timestamp": ts},
         "clé".encode(), "välue".encode(), None),
        ({"partition_id": 1, "value": {"type": "STRING", "data": "no key"}, "timestamp": ts}, None, b"no key", None),
        ({"partition_id": 1, "key": {"type": "STRING", "data": "tombstone"}, "timestamp": ts},
         b"tombstone", None, None),
    ]
    for i, (record, key, value, headers) in enumerate(cases):
        r = rest.v3(topic, json.dumps(record))
        assert r.status_code == 200, r.text
        assert r.headers["Content-Type"] == "application/json", r.headers
        report = r.json()
        want = {"error_code": 200, "cluster_id": cid, "topic_name": topic, "partition_id": 1, "offset": i,
                "timestamp": ts}
        if "key" in record:
            want["key"] = {"type": record["key"]["type"], "size": len(key)}
        if "value" in record:
            want["value"] = {"type": record["value"]["type"], "size": len(value)}
        assert report == want, (report, want)
    got = read_back(broker, topic, 1, len(cases))
    for i, ((offset, key, value, headers, timestamp), (_, want_key, want_value, want_headers)) in \
            enumerate(zip(got, cases)):
        assert (offset, key, value, timestamp) == (i, want_key, want_value, ts_ms), (i, got[i])
        assert headers == want_headers, (headers, want_headers)
    # No timestamp: the broker's clock, which the report and the record agree on.
    before = int(time.time() * 1000)
    r = rest.v3(topic, json.dumps({"partition_id": 2, "value": {"type": "STRING", "data": "now"}}))
    report = r.json()
    [(_, _, _, _, stamp)] = read_back(broker, topic, 2, 1)
    assert before - 1000 <= stamp <= int(time.time() * 1000) + 1000, (before, stamp)
    assert report["timestamp"] == time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(stamp // 1000)) + \
        ("" if stamp % 1000 == 0 else ".%03d" % (stamp % 1000)) + "Z", (report, stamp)


def v3_streaming(broker):
    topic = "rest-v3-stream"
    create_topic(broker, topic)
    rest = Rest(broker)
    n = 100

    def body():  # a generator body: requests sends it chunked
        for i in range(n):
            yield json.dumps({"value": {"type": "STRING", "data": "record-%d" % i}}).encode()

    r = rest.session.post(rest.records_url(topic), data=body(), headers={"Content-Type": "application/json"},
                          timeout=TIMEOUT)
    assert r.status_code == 200, r.text
    assert r.headers.get("Transfer-Encoding") == "chunked", r.headers
    reports = concatenated(r.text)
    assert [x["offset"] for x in reports] == list(range(n)), reports[:3]
    assert all(x["error_code"] == 200 and x["partition_id"] == 0 for x in reports), reports[:3]
    got = read_back(broker, topic, 0, n)
    assert [g[2] for g in got] == [b"record-%d" % i for i in range(n)]

    # A body of known length over a MiB is produced in several Produces: all
    # of its reports, in order, after the stream's.
    big = "".join(json.dumps({"value": {"type": "STRING", "data": "%04d" % i + "b" * 500}}) for i in range(3000))
    r = rest.v3(topic, big)
    reports = concatenated(r.text)
    assert [x["offset"] for x in reports] == list(range(n, n + 3000)), [x.get("offset") for x in reports[:3]]
    got = read_back(broker, topic, 0, 3000, start=n)
    assert [g[2][:4] for g in got] == [b"%04d" % i for i in range(3000)]
    n += 3000

    # Interactive: the report of each record is read before the next is sent.
    port = broker.admin_port()
    cid = rest.cluster_id()
    with socket.create_connection(("127.0.0.1", port), timeout=TIMEOUT) as s:
        s.sendall(("POST /v3/clusters/%s/topics/%s/records HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                   "Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n" % (cid, topic)).encode())
        seen = b""
        for i in range(3):
            chunk = json.dumps({"value": {"type": "STRING", "data": "live-%d" % i}}).encode()
            s.sendall(b"%x\r\n%s\r\n" % (len(chunk), chunk))
            want = b'"offset":%d' % (n + i)
            deadline = time.monotonic() + TIMEOUT
            while want not in seen:
                assert time.monotonic() < deadline, "no report for record %d before the next: %r" % (i, seen)
                part = s.recv(65536)
                assert part, "connection closed: %r" % seen
                seen += part
        s.sendall(b"0\r\n\r\n")
        while not seen.endswith(b"0\r\n\r\n"):
            part = s.recv(65536)
            assert part, "connection closed before the last chunk: %r" % seen
            seen += part
    assert seen.startswith(b"HTTP/1.1 200 OK"), seen[:100]

    # Expect: 100-continue (curl's way with a body over 1 KiB): told to go on
    # before the body is sent.
    body = json.dumps({"value": {"type": "STRING", "data": "c" * 2000}}).encode()
    with socket.create_connection(("127.0.0.1", port), timeout=TIMEOUT) as s:
        s.sendall(("POST /v3/clusters/%s/topics/%s/records HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                   "Content-Type: application/json\r\nExpect: 100-continue\r\nContent-Length: %d\r\n\r\n"
                   % (cid, topic, len(body))).encode())
        interim = s.recv(65536)
        assert interim == b"HTTP/1.1 100 Continue\r\n\r\n", interim
        s.sendall(body)
        seen = b""
        while b'"offset":%d' % (n + 3) not in seen:
            part = s.recv(65536)
            assert part, "connection closed: %r" % seen
            seen += part


def v3_errors(broker):
    rest = Rest(broker)
    topic = "rest-v3-errors"
    create_topic(broker, topic, partitions=2)
    cid = rest.cluster_id()
    ok = json.dumps({"value": {"type": "STRING", "data": "x"}})
    # Before any record: HTTP status and REST Proxy's error body.
    expect_error(rest.session.post(rest.records_url(topic, "wrong-cluster"), data=ok,
                                   headers={"Content-Type": "application/json"}, timeout=TIMEOUT),
                 404, 404, "wrong-cluster")
    expect_error(rest.v3("rest-no-such-topic", ok), 404, 404, "rest-no-such-topic")
    expect_error(rest.v3(topic, ok, headers={"Content-Type": "text/plain"}), 415, 415)
    expect_error(rest.v3(topic, ok, headers={}), 415, 415)
    expect_error(rest.v3(topic, "{not json"), 400, 400)
    expect_error(rest.v3(topic, ""), 400, 400)
    expect_error(rest.session.get(rest.records_url(topic), timeout=TIMEOUT), 405, 405)
    expect_error(rest.session.get(rest.base + "/v3/clusters/%s/nothing" % cid, timeout=TIMEOUT), 404, 404)
    # A bad record is a report in its place; the records around it land.
    body = "".join([
        json.dumps({"value": {"type": "STRING", "data": "before"}}),
        json.dumps({"value": {"type": "BINARY", "data": "***not base64***"}}),
        json.dumps({"value": {"type": "AVRO", "data": "x"}}),
        json.dumps({"partition_id": 7, "value": {"type": "STRING", "data": "x"}}),
        json.dumps({"timestamp": "yesterday", "value": {"type": "STRING", "data": "x"}}),
        json.dumps({"value": {"type": "STRING", "data": "after"}}),
    ])
    r = rest.v3(topic, body)
    assert r.status_code == 200, r.text
    reports = concatenated(r.text)
    assert [x["error_code"] for x in reports] == [200, 400, 400, 404, 400, 200], reports
    assert "base64" in reports[1]["message"] and "schema registry" in reports[2]["message"], reports
    assert reports[5]["offset"] == reports[0]["offset"] + 1, reports
    # JSON that breaks off mid-stream: the records before it stand, then a 400 report.
    r = rest.v3(topic, ok + ok + '{"value": {"type": "STR')
    reports = concatenated(r.text)
    assert [x["error_code"] for x in reports] == [200, 200, 400], reports


def produce_rules(broker):
    """What Kafka's Produce refuses, REST refuses too: it is the same path."""
    rest = Rest(broker)
    create_topic(broker, "rest-min-isr", config={"min.insync.replicas": "2"})
    r = rest.v3("rest-min-isr", json.dumps({"value": {"type": "STRING", "data": "x"}}))
    report = r.json()
    assert report["error_code"] == 50003 and report["message"].startswith("Kafka error: "), report
    r = rest.v2("/topics/rest-min-isr", json.dumps({"records": [{"value": b64(b"x")}]}))
    assert r.status_code == 200, r.text
    assert r.json()["offsets"] == [{"partition": None, "offset": None, "error_code": 2,
                                    "error": r.json()["offsets"][0]["error"]}], r.text
    create_topic(broker, "rest-small", config={"max.message.bytes": "1000"})
    r = rest.v3("rest-small", json.dumps({"value": {"type": "BINARY", "data": b64(b"z" * 3000)}}))
    report = r.json()
    assert report["error_code"] == 50002 and report["message"].startswith("Kafka error: "), report
    r = rest.v3("rest-small", json.dumps({"value": {"type": "BINARY", "data": b64(b"z" * 100)}}))
    assert r.json()["error_code"] == 200 and r.json()["offset"] == 0, r.text


def auto_creation(runnel_binary):
    with Runnel(binary=runnel_binary, overrides={"runnel.admin.listeners": "http://127.0.0.1:0",
                                                 "auto.create.topics.enable": "true",
                                                 "num.partitions": "3"}) as other:
        rest = Rest(other)
        r = rest.v3("rest-auto-created", json.dumps({"partition_id": 2, "value": {"type": "STRING", "data": "a"}}))
        assert r.status_code == 200 and r.json()["partition_id"] == 2, r.text
        md = AdminClient({"bootstrap.servers": other.bootstrap}).list_topics(timeout=TIMEOUT)
        assert len(md.topics["rest-auto-created"].partitions) == 3, md.topics
        r = rest.v2("/topics/rest-auto-created-v2", json.dumps({"records": [{"value": b64(b"b")}]}))
        assert r.status_code == 200 and r.json()["offsets"][0]["offset"] == 0, r.text
        [(_, _, value, _, _)] = read_back(other, "rest-auto-created", 2, 1)
        assert value == b"a"


# -- v2 ----------------------------------------------------------------------

def v2_produce(broker):
    rest = Rest(broker)
    topic = "rest-v2"
    create_topic(broker, topic, partitions=2)
    r = rest.v2("/topics/" + topic, json.dumps({"records": [
        {"key": b64(b"k0"), "value": b64(b"\x00\xffbinary"), "partition": 1},
        {"value": b64(b"second"), "partition": 1},
        {"key": b64(b"null value"), "partition": 1},
    ]}))
    assert r.status_code == 200 and r.headers["Content-Type"] == V2_ANSWER, (r.status_code, r.headers, r.text)
    assert r.json() == {"offsets": [{"partition": 1, "offset": i, "error_code": None, "error": None}
                                    for i in range(3)],
                        "key_schema_id": None, "value_schema_id": None}, r.text
    r = rest.v2("/topics/%s/partitions/0" % topic,
                json.dumps({"records": [{"key": {"id": 1}, "value": {"foo": ["bar", 2, None]}},
                                        {"value": "just a string"}]}), content_type=V2_JSON)
    assert r.status_code == 200, r.text
    assert [o["partition"] for o in r.json()["offsets"]] == [0, 0], r.text
    got1 = read_back(broker, topic, 1, 3)
    assert [(g[0], g[1], g[2]) for g in got1] == [(0, b"k0", b"\x00\xffbinary"), (1, None, b"second"),
                                                  (2, b"null value", None)], got1
    got0 = read_back(broker, topic, 0, 2)
    assert [(g[1], g[2]) for g in got0] == [(b'{"id":1}', b'{"foo":["bar",2,null]}'), (None, b'"just a string"')]


def v2_keyed_partitions(broker):
    """Keyed records without a partition land where a Java producer (and
    librdkafka's murmur2_random partitioner) puts them."""
    rest = Rest(broker)
    create_topic(broker, "rest-keyed", partitions=5)
    create_topic(broker, "rest-keyed-kafka", partitions=5)
    keys = [("key-%d" % i).encode() for i in range(40)]
    r = rest.v2("/topics/rest-keyed", json.dumps({"records": [{"key": b64(k), "value": b64(k)} for k in keys]}))
    rest_partitions = [o["partition"] for o in r.json()["offsets"]]
    delivered = {}
    producer = Producer({"bootstrap.servers": broker.bootstrap, "partitioner": "murmur2_random", "linger.ms": 0})
    for k in keys:
        producer.produce("rest-keyed-kafka", key=k, value=k,
                         on_delivery=lambda err, msg: delivered.__setitem__(msg.key(), msg.partition()))
    assert producer.flush(TIMEOUT) == 0
    assert rest_partitions == [delivered[k] for k in keys], (rest_partitions, delivered)
    assert len(set(rest_partitions)) > 1, rest_partitions


def v2_errors(broker):
    rest = Rest(broker)
    topic = "rest-v2-errors"
    create_topic(broker, topic)
    ok = json.dumps({"records": [{"value": b64(b"x")}]})
    expect_error(rest.v2("/topics/rest-v2-nowhere", ok), 404, 40401, "Topic not found")
    expect_error(rest.v2("/topics/%s/partitions/3" % topic, ok), 404, 40402, "Partition not found")
    expect_error(rest.v2("/topics/%s/partitions/x" % topic, ok), 404, 40402)
    expect_error(rest.v2("/topics/" + topic, ok, content_type="application/json"), 415, 415)
    expect_error(rest.v2("/topics/" + topic, ok, content_type="application/vnd.kafka.avro.v2+json"), 415, 415)
    expect_error(rest.v2("/topics/" + topic, ok, accept="text/html"), 406, 406)
    assert rest.v2("/topics/" + topic, ok, accept="text/html, application/vnd.kafka.v2+json;q=0.5").status_code == 200
    assert rest.v2("/topics/" + topic, ok, accept=None).status_code == 200
    expect_error(rest.v2("/topics/" + topic, "{\"records\": [}"), 400, 400)
    expect_error(rest.v2("/topics/" + topic, json.dumps({"records": [{"value": "%%%"}]})), 422, 422, "base64")
    expect_error(rest.v2("/topics/" + topic, json.dumps({"records": []})), 422, 422)
    expect_error(rest.v2("/topics/" + topic, json.dumps({"value": "eA=="})), 422, 422)
    expect_error(rest.session.get(rest.base + "/topics/" + topic, timeout=TIMEOUT), 405, 405)
    # Nothing of the refused requests reached the log: the two accepted records only.
    assert len(read_back(broker, topic, 0, 2)) == 2
    assert end_offset(broker, topic, 0) == 2


# -- curl, kcat, raw, robustness ------------------------------------------------

def with_curl(broker):
    rest = Rest(broker)
    topic = "rest-curl"
    create_topic(broker, topic)
    url = rest.records_url(topic)
    out = subprocess.run(["curl", "-sS", "--max-time", "30", "-X", "POST", "-H", "Content-Type: application/json",
                          "--data", '{"key":{"type":"STRING","data":"ck"},"value":{"type":"JSON","data":[1,2]}}',
                          "-w", "\\n%{http_code}", url], capture_output=True, text=True, check=True).stdout
    body, status = out.rsplit("\n", 1)
    assert status == "200" and json.loads(body)["offset"] == 0, out
    # Streaming with curl: a chunked body from stdin.
    stream = "".join(json.dumps({"value": {"type": "STRING", "data": "s%d" % i}}) + "\n" for i in range(5))
    out = subprocess.run(["curl", "-sS", "--max-time", "30", "-X", "POST", "-H", "Content-Type: application/json",
                          "-H", "Transfer-Encoding: chunked", "--data-binary", "@-", url],
                         input=stream, capture_output=True, text=True, check=True).stdout
    assert [x["offset"] for x in concatenated(out)] == [1, 2, 3, 4, 5], out
    out = subprocess.run(["curl", "-sS", "--max-time", "30", "-X", "POST", "-H", "Content-Type: " + V2_BINARY,
                          "--data", json.dumps({"records": [{"value": b64(b"v2 by curl")}]}),
                          rest.base + "/topics/" + topic], capture_output=True, text=True, check=True).stdout
    assert json.loads(out)["offsets"][0]["offset"] == 6, out
    kcat = subprocess.run(["kcat", "-C", "-b", broker.bootstrap, "-t", topic, "-p", "0", "-o", "0", "-e", "-q",
                           "-f", "%o|%k|%s\\n"], capture_output=True, text=True, timeout=60, check=True).stdout
    assert kcat.splitlines() == ["0|ck|[1,2]"] + ["%d||s%d" % (i + 1, i) for i in range(5)] + ["6||v2 by curl"], kcat


def raw_endpoint(broker):
    rest = Rest(broker)
    topic = "rest-raw"
    create_topic(broker, topic, partitions=2)
    payload = bytes(range(256)) * 3
    r = rest.session.post(rest.base + "/topics/%s/raw?partition=1&key=a%%20key" % topic, data=payload,
                          headers={"Content-Type": "application/octet-stream"}, timeout=TIMEOUT)
    assert r.status_code == 200, r.text
    report = r.json()
    assert report["partition_id"] == 1 and report["offset"] == 0 and report["value"] == \
        {"type": "BINARY", "size": len(payload)}, report
    r = rest.session.post(rest.base + "/topics/%s/raw?partition=1" % topic, data=b"", timeout=TIMEOUT)
    assert r.status_code == 200 and r.json()["offset"] == 1, r.text
    got = read_back(broker, topic, 1, 2)
    assert (got[0][1], got[0][2]) == (b"a key", payload), got[0][:3]
    assert got[1][2] in (b"", None) and got[1][1] is None, got[1]
    expect_error(rest.session.post(rest.base + "/topics/rest-raw-none/raw", data=b"x", timeout=TIMEOUT),
                 404, 40401)
    expect_error(rest.session.post(rest.base + "/topics/%s/raw?partition=9" % topic, data=b"x", timeout=TIMEOUT),
                 404, 40402)
    expect_error(rest.session.post(rest.base + "/topics/%s/raw?partition=-1" % topic, data=b"x",
                                   timeout=TIMEOUT), 400, 400)


def robustness(broker):
    """Broken bodies and HTTP never take the broker down."""
    rest = Rest(broker)
    port = broker.admin_port()
    cid = rest.cluster_id()
    create_topic(broker, "rest-robust")
    path = "/v3/clusters/%s/topics/rest-robust/records" % cid
    attempts = [
        # a chunked body broken off
        b"POST %s HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
        b"10\r\n{\"value\":{\"type\"" % path.encode(),
        # a bad chunk size
        b"POST %s HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
        b"zz\r\n{}\r\n0\r\n\r\n" % path.encode(),
        # a Content-Length longer than what comes
        b"POST /topics/rest-robust HTTP/1.1\r\nHost: x\r\nContent-Type: %s\r\nContent-Length: 100\r\n\r\n{\"rec"
        % V2_BINARY.encode(),
        # a huge Content-Length
        b"POST /topics/rest-robust HTTP/1.1\r\nHost: x\r\nContent-Type: %s\r\nContent-Length: 99999999999\r\n\r\n"
        % V2_BINARY.encode(),
        # deep nesting
        b"POST %s HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 20000\r\n\r\n" %
        path.encode() + b"[" * 10000 + b"]" * 10000,
        # a bad escape in the path
        b"GET /v3/clusters/%zz HTTP/1.1\r\nHost: x\r\n\r\n",
    ]
    for raw in attempts:
        with socket.create_connection(("127.0.0.1", port), timeout=TIMEOUT) as s:
            try:
                s.sendall(raw)
                s.shutdown(socket.SHUT_WR)
            except OSError:
                pass  # answered and closed before all of it was sent: what came back is read below
            reply = b""
            while True:
                try:
                    part = s.recv(65536)
                except ConnectionResetError:
                    break
                if not part:
                    break
                reply += part
        assert reply == b"" or reply.startswith(b"HTTP/1.1 "), reply[:100]
        assert b"HTTP/1.1 200" not in reply or b'"error_code":400' in reply or b"413" in reply, reply[:300]
    r = rest.v3("rest-robust", json.dumps({"value": {"type": "STRING", "data": "still here"}}))
    assert r.status_code == 200 and r.json()["error_code"] == 200, r.text
    assert rest.session.get(rest.base + "/v1/status/live", timeout=TIMEOUT).status_code == 200


def main():
    binary = sys.argv[1] if len(sys.argv) > 1 else None
    with Runnel(overrides={"runnel.admin.listeners": "http://127.0.0.1:0",
                           "auto.create.topics.enable": "false"}) as broker:
        rc = run_tests([
            ("v3 clusters name the cluster id; another id is 404", lambda: clusters(broker)),
            ("v3 produce: every data type, headers, partition and timestamp, read back exactly",
             lambda: v3_data_types(broker)),
            ("v3 streaming: 100 chunked records, and each report before the next record",
             lambda: v3_streaming(broker)),
            ("v3 errors: REST Proxy's codes before and within the stream", lambda: v3_errors(broker)),
            ("Produce's rules hold over REST: min.insync.replicas, max.message.bytes",
             lambda: produce_rules(broker)),
            ("auto-creation follows auto.create.topics.enable", lambda: auto_creation(binary)),
            ("v2 produce: binary and json formats, the partition path", lambda: v2_produce(broker)),
            ("v2 keyed records land where murmur2 puts them", lambda: v2_keyed_partitions(broker)),
            ("v2 errors: 40401, 40402, 415, 406, 400, 422, 405", lambda: v2_errors(broker)),
            ("curl posts v3, a v3 stream and v2; kcat reads them back", lambda: with_curl(broker)),
            ("the raw endpoint stores the body as the value", lambda: raw_endpoint(broker)),
            ("broken bodies and HTTP leave the broker serving", lambda: robustness(broker)),
        ], broker)
    sys.exit(rc)


if __name__ == "__main__":
    main()
