"""The HTTP admin listener (issue 17): runnel.admin.listeners=http://127.0.0.1:0.

Readiness turns 200 once the broker serves; N produced records of a known
size show in /metrics as Kafka's JMX exporter names them (MessagesIn and
BytesIn of the topic, its partition's log end offset, Produce requests,
connections of the listener, BytesOut after a consumer reads them); the
error counts, request-time histograms, ReplicaManager and controller gauges,
fsync and group-commit histograms agree with what was done; a group's
committed offset and lag show per partition; every line of the text parses
as Prometheus's exposition format. /v1/brokers, /v1/topics and
/v1/partitions/<topic> describe the node, the topic and its offsets as JSON. An unknown path
is 404, a POST 405, and a request line that is not HTTP is refused (400 or
closed) without harm to the broker, which still answers Metadata.
"""

import json
import re
import socket
import sys
import time
import urllib.error
import urllib.request

from confluent_kafka import Consumer, KafkaError, KafkaException, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from runnel_harness import Runnel, run_tests

TOPIC = "admin-http-metrics"
N = 40
VALUE = b"v" * 100

_LABEL = r'[a-zA-Z_][a-zA-Z0-9_]*="(?:\\.|[^"\\\n])*"'
_SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(?:%s(?:,%s)*)?\})? (-?[0-9]+(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?)$'
                     % (_LABEL, _LABEL))
_COMMENT = re.compile(r"^# (HELP [a-zA-Z_:][a-zA-Z0-9_:]* .*|TYPE [a-zA-Z_:][a-zA-Z0-9_:]* (counter|gauge|histogram|untyped))$")


def get(port, path, method="GET"):
    """(status, content type, body) of one request."""
    req = urllib.request.Request("http://127.0.0.1:%d%s" % (port, path), method=method)
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.status, r.headers.get("Content-Type"), r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.headers.get("Content-Type"), e.read().decode()


def wait_ready(port):
    deadline = time.monotonic() + 30
    while True:
        try:
            status, _, body = get(port, "/v1/status/ready")
            if status == 200:
                assert json.loads(body) == {"ready": True}, body
                return
        except OSError:
            pass
        assert time.monotonic() < deadline, "not ready in 30 s"
        time.sleep(0.1)


def scrape(port):
    """{(name, frozenset(labels)): value}, checking every line's syntax."""
    status, ctype, body = get(port, "/metrics")
    assert status == 200, status
    assert ctype.startswith("text/plain; version=0.0.4"), ctype
    samples = {}
    for line in body.splitlines():
        if line.startswith("#"):
            assert _COMMENT.match(line), "bad comment line: %r" % line
            continue
        m = _SAMPLE.match(line)
        assert m, "not a Prometheus sample line: %r" % line
        labels = frozenset(re.findall(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:\\.|[^"\\])*)"', m.group(2) or ""))
        key = (m.group(1), labels)
        assert key not in samples, "series twice: %r" % line
        samples[key] = float(m.group(3))
    return samples


def eq(got, want, what):
    assert got == want, "%s: %r != %r" % (what, got, want)


def value(samples, name, **labels):
    key = (name, frozenset(labels.items()))
    assert key in samples, "no %s%r in /metrics" % (name, labels)
    return samples[key]


def status_endpoints(broker):
    port = broker.admin_port()
    assert port, "no admin listening line in the log"
    wait_ready(port)
    status, _, body = get(port, "/v1/status/live")
    assert status == 200, (status, body)


def produce_and_scrape(broker):
    port = broker.admin_port()
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    admin.create_topics([NewTopic(TOPIC, 1, 1)])[TOPIC].result(timeout=30)
    before = scrape(port)
    assert value(before, "kafka_server_brokertopicmetrics_messagesin_total", topic=TOPIC) == 0
    producer = Producer({"bootstrap.servers": broker.bootstrap, "linger.ms": 0, "enable.idempotence": True,
                         "compression.type": "none"})
    for i in range(N):
        producer.produce(TOPIC, value=VALUE)
    assert producer.flush(30) == 0, "records not delivered"
    m = scrape(port)
    eq(value(m, "kafka_server_brokertopicmetrics_messagesin_total", topic=TOPIC), N, "messagesin")
    assert value(m, "kafka_server_brokertopicmetrics_messagesin_total") >= N
    bytes_in = value(m, "kafka_server_brokertopicmetrics_bytesin_total", topic=TOPIC)
    assert bytes_in >= N * len(VALUE), bytes_in  # uncompressed: the values and their batches' framing
    assert value(m, "kafka_server_brokertopicmetrics_bytesin_total") >= bytes_in
    eq(value(m, "kafka_log_log_logendoffset", topic=TOPIC, partition="0"), N, "log end offset")
    eq(value(m, "kafka_log_log_logstartoffset", topic=TOPIC, partition="0"), 0, "log start offset")
    assert value(m, "kafka_log_log_size", topic=TOPIC, partition="0") >= bytes_in
    eq(value(m, "kafka_log_log_numlogsegments", topic=TOPIC, partition="0"), 1, "segments")
    produces = sum(v for (name, labels), v in m.items()
                   if name == "kafka_network_requestmetrics_requests_total" and ("request", "Produce") in labels)
    assert produces >= 1, produces
    assert value(m, "kafka_server_socket_server_metrics_connection_count", listener="PLAINTEXT") >= 1
    eq(value(m, "kafka_server_brokertopicmetrics_bytesout_total", topic=TOPIC), 0, "bytesout before a fetch")

    consumer = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": "admin-http", "enable.auto.commit": False})
    try:
        consumer.assign([TopicPartition(TOPIC, 0, 0)])
        got, deadline = 0, time.monotonic() + 30
        while got < N and time.monotonic() < deadline:
            msg = consumer.poll(1.0)
            if msg is not None and not msg.error():
                got += 1
        eq(got, N, "records consumed")
        after = scrape(port)
        assert value(after, "kafka_server_brokertopicmetrics_bytesout_total", topic=TOPIC) > 0
    finally:
        consumer.close()


def histogram_ok(m, name, **labels):
    """A histogram's buckets are cumulative and its +Inf bucket is its count; that count."""
    bounds = sorted((float(dict(lbl)["le"]), v) for (n, lbl), v in m.items()
                    if n == name + "_bucket" and all((k, w) in lbl for k, w in labels.items()))
    assert bounds and bounds[-1][0] == float("inf"), (name, labels, bounds)
    counts = [v for _, v in bounds]
    assert counts == sorted(counts), (name, labels, counts)
    count = value(m, name + "_count", **labels)
    eq(counts[-1], count, name + " +Inf bucket")
    assert value(m, name + "_sum", **labels) >= 0
    return count


def request_and_group_metrics(broker):
    port = broker.admin_port()
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    # One refusal Kafka counts: DeleteTopics of a topic that does not exist.
    try:
        admin.delete_topics(["admin-http-no-such-topic"])["admin-http-no-such-topic"].result(timeout=30)
        raise AssertionError("deleting a topic that does not exist succeeded")
    except KafkaException as e:
        eq(e.args[0].code(), KafkaError.UNKNOWN_TOPIC_OR_PART, "DeleteTopics error")
    consumer = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": "admin-http-lag",
                         "enable.auto.commit": False})
    try:
        consumer.commit(offsets=[TopicPartition(TOPIC, 0, 10)], asynchronous=False)
    finally:
        consumer.close()
    m = scrape(port)

    # Every Produce request here had one partition: one error code each, NONE.
    def by(name, **labels):
        return {dict(lbl).get("version"): v for (n, lbl), v in m.items()
                if n == name and all((k, w) in lbl for k, w in labels.items())}
    produces = sum(by("kafka_network_requestmetrics_requests_total", request="Produce").values())
    eq(value(m, "kafka_network_requestmetrics_errors_total", request="Produce", error="NONE"), produces,
       "Produce NONE errors")
    eq(value(m, "kafka_network_requestmetrics_errors_total", request="DeleteTopics",
             error="UNKNOWN_TOPIC_OR_PARTITION"), 1, "DeleteTopics refusals")
    # Each answered Produce was timed once, at its own version.
    for version, n in by("kafka_network_requestmetrics_requests_total", request="Produce").items():
        eq(histogram_ok(m, "kafka_network_requestmetrics_totaltimems", request="Produce", version=version), n,
           "Produce v%s times" % version)
    assert value(m, "kafka_network_requestchannel_requestqueuesize") >= 0
    assert value(m, "kafka_network_socketserver_memorypoolused") >= 0

    # One broker: it leads all it hosts, nothing is short of replicas, it is the controller.
    partitions = value(m, "kafka_server_replicamanager_partitioncount")
    assert partitions >= 2, partitions  # the topic and __consumer_offsets
    eq(value(m, "kafka_server_replicamanager_leadercount"), partitions, "leaders")
    eq(value(m, "kafka_server_replicamanager_underreplicatedpartitions"), 0, "under-replicated")
    eq(value(m, "kafka_server_replicamanager_underminisrpartitioncount"), 0, "under min ISR")
    assert value(m, "kafka_server_replicamanager_produceridcount") >= 1  # the idempotent producer
    eq(value(m, "kafka_controller_kafkacontroller_activecontrollercount"), 1, "active controller")
    eq(value(m, "kafka_controller_kafkacontroller_offlinepartitionscount"), 0, "offline")
    eq(value(m, "kafka_controller_kafkacontroller_globalpartitioncount"), partitions, "partitions")

    # acks=all appends are fsynced (runnel.acks.all.fsync), through group commit.
    assert histogram_ok(m, "kafka_log_logflushstats_logflushrateandtimems") >= 1
    assert histogram_ok(m, "runnel_log_group_commit_size") >= 1

    # The group: counted once, by state, with its offset and lag.
    groups = value(m, "kafka_coordinator_group_groupmetadatamanager_numgroups")
    assert groups >= 1, groups
    states = sum(v for (n, _), v in m.items()
                 if n.startswith("kafka_coordinator_group_groupmetadatamanager_numgroups") and
                 n != "kafka_coordinator_group_groupmetadatamanager_numgroups")
    eq(states, groups, "groups by state")
    eq(value(m, "kafka_consumergroup_current_offset", consumergroup="admin-http-lag", topic=TOPIC, partition="0"),
       10, "committed offset")
    eq(value(m, "kafka_consumergroup_lag", consumergroup="admin-http-lag", topic=TOPIC, partition="0"), N - 10,
       "lag")


def json_documents(broker):
    port = broker.admin_port()

    def doc(path, want_status=200):
        status, ctype, body = get(port, path)
        eq(status, want_status, path)
        eq(ctype, "application/json", path + " content type")
        return json.loads(body)
    brokers = doc("/v1/brokers")
    eq([(b["node_id"], b["alive"], b["is_controller"], b["fenced"]) for b in brokers], [(1, True, True, False)],
       "brokers")
    eq([(e["listener"], e["host"], e["port"]) for e in brokers[0]["endpoints"]],
       [("PLAINTEXT", "127.0.0.1", int(broker.bootstrap.rsplit(":", 1)[1]))], "endpoints")
    topics = {t["name"]: t for t in doc("/v1/topics")}
    t = topics[TOPIC]
    eq((t["partitions"], t["replication_factor"], t["internal"]), (1, 1, False), "topic")
    assert len(t["topic_id"]) == 22, t
    assert topics["__consumer_offsets"]["internal"] is True
    parts = doc("/v1/partitions/" + TOPIC)
    eq(len(parts), 1, "partitions")
    p = parts[0]
    eq((p["partition"], p["leader"], p["replicas"], p["isr"]), (0, 1, [1], [1]), "partition 0")
    eq((p["log_start_offset"], p["high_watermark"], p["last_stable_offset"], p["log_end_offset"]), (0, N, N, N),
       "offsets")
    assert p["size"] > 0, p
    missing = doc("/v1/partitions/no-such-topic", 404)
    eq(missing["error_code"], 404, "missing topic")


def refusals(broker):
    port = broker.admin_port()
    status, _, _ = get(port, "/v1/nothing-here")
    assert status == 404, status
    status, _, _ = get(port, "/metrics", method="POST")
    assert status == 405, status
    for garbage in (b"NOT HTTP AT ALL\x00\x01\r\n\r\n", b"GET /metrics HTTP/9.9 extra\r\n\r\n", b"\xff" * 4096):
        with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
            s.sendall(garbage)
            reply = b""
            while True:
                chunk = s.recv(4096)
                if not chunk:
                    break
                reply += chunk
        assert reply == b"" or reply.startswith(b"HTTP/1.1 400"), reply[:80]
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    md = admin.list_topics(timeout=10)
    assert TOPIC in md.topics, list(md.topics)
    status, _, _ = get(port, "/v1/status/live")
    assert status == 200, status


def main():
    with Runnel(overrides={"runnel.admin.listeners": "http://127.0.0.1:0"}) as broker:
        rc = run_tests([
            ("ready and live answer 200 once the broker serves", lambda: status_endpoints(broker)),
            ("metrics count the records produced and fetched", lambda: produce_and_scrape(broker)),
            ("errors, times, replicas, fsyncs, groups and lag", lambda: request_and_group_metrics(broker)),
            ("brokers, topics and partitions as JSON", lambda: json_documents(broker)),
            ("an unknown path is 404, a POST 405, garbage 400 or closed", lambda: refusals(broker)),
        ], broker)
    sys.exit(rc)


if __name__ == "__main__":
    main()
