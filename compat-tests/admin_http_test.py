"""The HTTP admin listener (issue 17): runnel.admin.listeners=http://127.0.0.1:0.

Readiness turns 200 once the broker serves; N produced records of a known
size show in /metrics as Kafka's JMX exporter names them (MessagesIn and
BytesIn of the topic, its partition's log end offset, Produce requests,
connections of the listener, BytesOut after a consumer reads them); every
line of the text parses as Prometheus's exposition format. An unknown path
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

from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from runnel_harness import Runnel, run_tests

TOPIC = "admin-http-metrics"
N = 40
VALUE = b"v" * 100

_LABEL = r'[a-zA-Z_][a-zA-Z0-9_]*="(?:\\.|[^"\\\n])*"'
_SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(?:%s(?:,%s)*)?\})? (-?[0-9]+(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?)$'
                     % (_LABEL, _LABEL))
_COMMENT = re.compile(r"^# (HELP [a-zA-Z_:][a-zA-Z0-9_:]* .*|TYPE [a-zA-Z_:][a-zA-Z0-9_:]* (counter|gauge|untyped))$")


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
            ("an unknown path is 404, a POST 405, garbage 400 or closed", lambda: refusals(broker)),
        ], broker)
    sys.exit(rc)


if __name__ == "__main__":
    main()
