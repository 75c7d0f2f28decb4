"""Incremental fetch sessions (KIP-227, issue 18), from hand-built Fetch v12
(topics by name) and v13 (topics by id) requests:

- SessionEpoch 0 makes a session; an incremental fetch (the next epoch)
  lists only what changed and is answered only with partitions that have
  records, an error or a new high watermark;
- ForgottenTopicsData drops partitions from the session; SessionEpoch -1
  closes it;
- FETCH_SESSION_ID_NOT_FOUND, INVALID_FETCH_SESSION_EPOCH and
  FETCH_SESSION_TOPIC_ID_ERROR where Kafka answers them;
- max.incremental.fetch.session.cache.slots bounds the sessions, and the
  cache's gauges are on /metrics;
- Kafka's own consumer (kafka-console-consumer) opens a session and gets
  records produced while it polls, each once;
- a 1,000-partition consumer's steady-state fetch request and response
  are a small fraction of a full fetch's (bench/fetch_session_bench.py
  measures 5,000 beside Kafka).

usage: /usr/bin/python3 fetch_sessions_test.py <runnel binary>
"""

import subprocess
import sys
import time
import urllib.request

import kafka_wire as w
from runnel_harness import Runnel, run_tests

NONE = 0
UNKNOWN_TOPIC_OR_PARTITION = 3
FETCH_SESSION_ID_NOT_FOUND = 70
INVALID_FETCH_SESSION_EPOCH = 71
FETCH_SESSION_TOPIC_ID_ERROR = 106


class Client:
    """One connection; each call takes the next correlation id."""

    def __init__(self, port):
        self.c = w.Connection(port)
        self.corr = 10
        self.sent = self.received = 0

    def fetch(self, version, session_id, epoch, topics, **kw):
        self.corr += 1
        frame = w.fetch_flexible(version, self.corr, session_id, epoch, topics, **kw)
        body = self.c.call(frame, self.corr)
        self.sent, self.received = len(frame), len(body) + 8
        return w.parse_fetch_flexible(version, body)

    def close(self):
        self.c.close()


def create(port, topic, partitions):
    with w.Connection(port) as c:
        (name, err, msg), = w.parse_create_topics_v4(c.call(w.create_topics_v4(1, [(topic, partitions, 1)]), 1))
        assert err == 0, (err, msg)


def produce(port, topic, partition, value):
    with w.Connection(port) as c:
        batch = w.record_batch([(b"k", value, ())], int(time.time() * 1000))
        res = w.parse_produce_v8(c.call(w.produce_v8(2, -1, {topic: [(partition, batch)]}), 2))
        assert res[(topic, partition)][0] == 0, res


def answered(parts):
    return sorted((t, p) for t, p, *_ in parts)


def test_incremental_fetches_by_name():
    with Runnel() as b:
        create(b.port, "s", 20)
        c = Client(b.port)
        try:
            every = [("s", [(p, 0) for p in range(20)])]
            err, sid, parts = c.fetch(12, 0, 0, every)
            assert err == NONE and sid != 0, (err, sid)
            assert answered(parts) == [("s", p) for p in range(20)], "a full fetch answers every partition"

            # Nothing changed: nothing answered, the same session.
            err, sid2, parts = c.fetch(12, sid, 1, [], max_wait_ms=100)
            assert (err, sid2, parts) == (NONE, sid, []), (err, sid2, parts)

            produce(b.port, "s", 7, b"seven")
            err, _, parts = c.fetch(12, sid, 2, [])
            assert err == NONE
            assert [(p, hw) for _, p, _, hw, _ in parts] == [(7, 1)], parts
            assert b"seven" in parts[0][4], "the new record is in the incremental response"

            # The fetcher moves partition 7 on; unchanged since, it is left out.
            err, _, parts = c.fetch(12, sid, 3, [("s", [(7, 1)])], max_wait_ms=100)
            assert (err, parts) == (NONE, []), parts

            # A repeated epoch, an unknown id, a v13 request on a session by name.
            err, sid_err, parts = c.fetch(12, sid, 3, [])
            assert (err, sid_err, parts) == (INVALID_FETCH_SESSION_EPOCH, 0, []), (err, sid_err)
            err, _, _ = c.fetch(12, sid + 1 if sid < w.INT32_MAX else 1, 1, [])
            assert err == FETCH_SESSION_ID_NOT_FOUND, err
            err, _, _ = c.fetch(13, sid, 4, [])
            assert err == FETCH_SESSION_TOPIC_ID_ERROR, err

            # The session survived the errors: epoch 4 still stands. Forget
            # partitions 0-9; of two new records only 15's is answered.
            produce(b.port, "s", 3, b"three")
            produce(b.port, "s", 15, b"fifteen")
            err, _, parts = c.fetch(12, sid, 4, [], forgotten=[("s", list(range(10)))])
            assert err == NONE
            assert [(p, hw) for _, p, _, hw, _ in parts] == [(15, 1)], parts

            # A partition added incrementally is answered at once; 15,
            # moved past its record, is not.
            err, _, parts = c.fetch(12, sid, 5, [("s", [(3, 0), (15, 1)])])
            assert [(p, hw) for _, p, _, hw, _ in parts] == [(3, 1)], parts

            # An unknown topic added is answered with its error each time.
            err, _, parts = c.fetch(12, sid, 6, [("s", [(3, 1)]), ("nope", [(0, 0)])], max_wait_ms=100)
            assert [(t, p, e) for t, p, e, _, _ in parts] == [("nope", 0, UNKNOWN_TOPIC_OR_PARTITION)], parts
            err, _, parts = c.fetch(12, sid, 7, [], max_wait_ms=100)
            assert [(t, e) for t, _, e, _, _ in parts] == [("nope", UNKNOWN_TOPIC_OR_PARTITION)], parts

            # Epoch -1 closes the session: a sessionless full fetch.
            err, sid3, parts = c.fetch(12, sid, -1, [("s", [(0, 0)])])
            assert (err, sid3, answered(parts)) == (NONE, 0, [("s", 0)]), (err, sid3, parts)
            err, _, _ = c.fetch(12, sid, 8, [])
            assert err == FETCH_SESSION_ID_NOT_FOUND, err
        finally:
            c.close()


def test_incremental_fetches_by_topic_id():
    with Runnel() as b:
        create(b.port, "ids", 4)
        with w.Connection(b.port) as c:
            tid = w.topic_ids(c, ["ids"])["ids"]
        c = Client(b.port)
        try:
            err, sid, parts = c.fetch(13, 0, 0, [(tid, [(p, 0) for p in range(4)])])
            assert err == NONE and sid != 0 and len(parts) == 4, (err, sid, parts)
            assert all(t == tid for t, *_ in parts)
            produce(b.port, "ids", 2, b"two")
            err, _, parts = c.fetch(13, sid, 1, [])
            assert [(t, p, hw) for t, p, _, hw, _ in parts] == [(tid, 2, 1)], parts
            err, _, _ = c.fetch(12, sid, 2, [])
            assert err == FETCH_SESSION_TOPIC_ID_ERROR, err
            # Forgetting every partition ends the session.
            err, sid2, parts = c.fetch(13, sid, 2, [], forgotten=[(tid, [0, 1, 2, 3])])
            assert (err, sid2, parts) == (NONE, 0, []), (err, sid2, parts)
            err, _, _ = c.fetch(13, sid, 3, [])
            assert err == FETCH_SESSION_ID_NOT_FOUND, err
        finally:
            c.close()


def scrape(port):
    with urllib.request.urlopen("http://127.0.0.1:%d/metrics" % port, timeout=10) as r:
        text = r.read().decode()
    values = {}
    for line in text.splitlines():
        if line.startswith("kafka_server_fetchsessioncache_"):
            name, value = line.split()
            values[name] = float(value)
    return values


def test_cache_slots():
    overrides = {"max.incremental.fetch.session.cache.slots": "1", "runnel.admin.listeners": "http://127.0.0.1:0"}
    with Runnel(overrides=overrides) as b:
        create(b.port, "slots", 3)
        first, second = Client(b.port), Client(b.port)
        try:
            err, sid, _ = first.fetch(12, 0, 0, [("slots", [(0, 0), (1, 0)])])
            assert err == NONE and sid != 0
            # The one slot is taken by a session neither stale nor smaller.
            err, sid2, parts = second.fetch(12, 0, 0, [("slots", [(0, 0), (1, 0), (2, 0)])])
            assert (err, sid2, len(parts)) == (NONE, 0, 3), (err, sid2, parts)
            m = scrape(b.admin_port())
            assert m.get("kafka_server_fetchsessioncache_numincrementalfetchsessions") == 1, m
            assert m.get("kafka_server_fetchsessioncache_numincrementalfetchpartitionscached") == 2, m
            assert m.get("kafka_server_fetchsessioncache_incrementalfetchsessionevictions_total") == 0, m
            # Closed, the slot is free again.
            first.fetch(12, sid, -1, [])
            err, sid3, _ = second.fetch(12, 0, 0, [("slots", [(2, 0)])])
            assert err == NONE and sid3 != 0
        finally:
            first.close()
            second.close()


def test_many_partitions_cost_little():
    n = 1000
    with Runnel() as b:
        create(b.port, "wide", n)
        c = Client(b.port)
        try:
            every = [("wide", [(p, 0) for p in range(n)])]
            err, sid, parts = c.fetch(12, 0, 0, every)
            assert err == NONE and sid != 0 and len(parts) == n
            full_sent, full_received = c.sent, c.received
            # Sessionless, every fetch costs that much.
            err, _, parts = c.fetch(12, 0, -1, every)
            assert len(parts) == n
            produce(b.port, "wide", 500, b"x")
            err, _, parts = c.fetch(12, sid, 1, [])
            assert [p for _, p, *_ in parts] == [500], parts
            inc_sent, inc_received = c.sent, c.received
            print("1,000 partitions: full fetch %d B sent, %d B received; incremental %d B sent, %d B received"
                  % (full_sent, full_received, inc_sent, inc_received))
            assert inc_sent * 20 < full_sent, (inc_sent, full_sent)
            assert inc_received * 20 < full_received, (inc_received, full_received)
        finally:
            c.close()


def test_java_consumer_fetches_incrementally():
    """Kafka's own consumer (kafka-console-consumer, Kafka 4.1's jars) opens
    a session and gets records produced while it polls through incremental
    fetches: every record once, in order per partition."""
    from kafka_harness import kafka_classpath
    classpath = kafka_classpath()
    partitions, first, later = 10, 30, 10
    with Runnel(overrides={"runnel.admin.listeners": "http://127.0.0.1:0"}) as b:
        create(b.port, "java", partitions)
        values = ["v%03d" % i for i in range(first + later)]
        for i in range(first):
            produce(b.port, "java", i % partitions, values[i].encode())
        cmd = ["java", "-Dlog4j2.level=ERROR", "-cp", classpath, "org.apache.kafka.tools.consumer.ConsoleConsumer",
               "--bootstrap-server", b.bootstrap, "--topic", "java", "--from-beginning",
               "--max-messages", str(first + later), "--timeout-ms", "60000",
               "--property", "print.partition=true"]
        consumer = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            deadline = time.monotonic() + 120
            while scrape(b.admin_port()).get("kafka_server_fetchsessioncache_numincrementalfetchsessions", 0) < 1:
                assert consumer.poll() is None, "the consumer exited: %s" % consumer.stderr.read()
                assert time.monotonic() < deadline, "the Java consumer opened no fetch session in 120 s"
                time.sleep(0.2)
            for i in range(first, first + later):
                produce(b.port, "java", i % partitions, values[i].encode())
            out, err = consumer.communicate(timeout=120)
        finally:
            if consumer.poll() is None:
                consumer.kill()
                consumer.wait()
        got = {}
        for line in out.splitlines():
            part, value = line.split("\t")
            got.setdefault(int(part.split(":")[1]), []).append(value)
        want = {}
        for i, v in enumerate(values):
            want.setdefault(i % partitions, []).append(v)
        assert got == want, "consumed %s\nstderr: %s" % (got, err[-2000:])


if __name__ == "__main__":
    sys.exit(run_tests([
        ("incremental fetches by topic name: changes only, forgotten topics, errors", test_incremental_fetches_by_name),
        ("incremental fetches by topic id (v13)", test_incremental_fetches_by_topic_id),
        ("max.incremental.fetch.session.cache.slots and the cache's metrics", test_cache_slots),
        ("a 1,000-partition session fetches a small fraction of the bytes", test_many_partitions_cost_little),
        ("the Java consumer fetches incrementally", test_java_consumer_fetches_incrementally),
    ]))
