#!/usr/bin/python3
"""Records request_fuzz's seed corpus from real clients: a Runnel broker
behind a recording proxy on loopback (the broker advertises the proxy, so
every connection a client opens goes through it), one scenario per seed.
A seed is every request frame the scenario's clients wrote, over all their
connections, in the order the proxy read them: what request_fuzz serves
as one connection's requests.

usage: /usr/bin/python3 broker/fuzz/record_corpus.py <runnel binary> <corpus dir>
"""

import hashlib
import os
import socket
import struct
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "compat-tests"))

import confluent_kafka  # noqa: E402
from confluent_kafka import admin as ck_admin  # noqa: E402
import kafka  # noqa: E402  (kafka-python: older API versions than librdkafka's)
from runnel_harness import Runnel  # noqa: E402


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class RecordingProxy:
    """Forwards loopback connections to the broker and keeps each request
    frame a client sends, in arrival order across connections."""

    def __init__(self, port):
        self.listener = socket.create_server(("127.0.0.1", port))
        self.target = None
        self.lock = threading.Lock()
        self.frames = []
        threading.Thread(target=self._accept, daemon=True).start()

    def take(self):
        with self.lock:
            frames, self.frames = self.frames, []
        return frames

    def _accept(self):
        while True:
            client, _ = self.listener.accept()
            upstream = socket.create_connection(("127.0.0.1", self.target))
            threading.Thread(target=self._requests, args=(client, upstream), daemon=True).start()
            threading.Thread(target=self._pipe, args=(upstream, client), daemon=True).start()

    def _requests(self, src, dst):
        buf = b""
        try:
            while True:
                data = src.recv(65536)
                if not data:
                    break
                dst.sendall(data)
                buf += data
                while len(buf) >= 4:
                    size = struct.unpack(">i", buf[:4])[0]
                    if len(buf) < 4 + size:
                        break
                    with self.lock:
                        self.frames.append(buf[:4 + size])
                    buf = buf[4 + size:]
        except OSError:
            pass
        finally:
            for s in (src, dst):
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

    def _pipe(self, src, dst):
        try:
            while True:
                data = src.recv(65536)
                if not data:
                    break
                dst.sendall(data)
        except OSError:
            pass


def ck_conf(bootstrap, **extra):
    return dict({"bootstrap.servers": bootstrap}, **extra)


def produce_ck(bootstrap, topic, n, **conf):
    p = confluent_kafka.Producer(ck_conf(bootstrap, **conf))
    for i in range(n):
        p.produce(topic, key=b"k%d" % i, value=b"value %d " % i * 4, headers=[("h", b"v")])
    assert p.flush(30) == 0


def scenario_admin(b):
    a = ck_admin.AdminClient(ck_conf(b))
    wait = lambda fs: [f.result(30) for f in fs.values()]  # noqa: E731
    wait(a.create_topics([ck_admin.NewTopic("admin-t", 3, 1, config={"cleanup.policy": "compact",
                                                                       "retention.ms": "60000"})]))
    wait(a.describe_configs([ck_admin.ConfigResource("topic", "admin-t"),
                             ck_admin.ConfigResource("broker", "1")]))
    wait(a.alter_configs([ck_admin.ConfigResource("topic", "admin-t", set_config={"segment.ms": "3600000"})]))
    wait(a.create_partitions([confluent_kafka.admin.NewPartitions("admin-t", 5)]))
    a.list_topics(timeout=30)
    a.list_groups(timeout=30)
    wait(a.delete_topics(["admin-t"]))


def scenario_produce(compression):
    def run(b):
        produce_ck(b, "p-" + compression, 20, **{"compression.type": compression, "linger.ms": 5})
    return run


def scenario_idempotent(b):
    produce_ck(b, "idem", 30, **{"enable.idempotence": True, "acks": "all"})


def scenario_transaction(b):
    p = confluent_kafka.Producer(ck_conf(b, **{"transactional.id": "txn-seed"}))
    p.init_transactions(30)
    p.begin_transaction()
    for i in range(5):
        p.produce("txn-t", value=b"in txn %d" % i)
    p.commit_transaction(30)
    p.begin_transaction()
    p.produce("txn-t", value=b"aborted")
    p.abort_transaction(30)


def scenario_group(b):
    produce_ck(b, "grp", 10)
    c = confluent_kafka.Consumer(ck_conf(b, **{"group.id": "g-seed", "auto.offset.reset": "earliest",
                                               "enable.auto.commit": False}))
    c.subscribe(["grp"])
    got, deadline = 0, time.monotonic() + 30
    while got < 10 and time.monotonic() < deadline:
        m = c.poll(0.5)
        if m is not None and not m.error():
            got += 1
    c.commit(asynchronous=False)
    c.committed([confluent_kafka.TopicPartition("grp", 0)], 10)
    c.offsets_for_times([confluent_kafka.TopicPartition("grp", 0, 0)], 10)
    c.close()


def scenario_kafka_python(b):
    a = kafka.KafkaAdminClient(bootstrap_servers=b)
    a.create_topics([kafka.admin.NewTopic("kp", 2, 1)])
    a.describe_configs([kafka.admin.ConfigResource(kafka.admin.ConfigResourceType.TOPIC, "kp")])
    a.list_consumer_groups()
    p = kafka.KafkaProducer(bootstrap_servers=b, compression_type="gzip")
    for i in range(10):
        p.send("kp", key=b"k", value=b"kafka-python %d" % i)
    p.flush(30)
    p.close()
    c = kafka.KafkaConsumer("kp", bootstrap_servers=b, group_id="kp-g", auto_offset_reset="earliest",
                            consumer_timeout_ms=3000)
    for _ in c:
        pass
    c.commit()
    c.close()
    a.delete_consumer_groups(["kp-g"])
    a.delete_topics(["kp"])
    a.close()


SCENARIOS = [
    ("admin", scenario_admin),
    ("produce-none", scenario_produce("none")),
    ("produce-gzip", scenario_produce("gzip")),
    ("produce-snappy", scenario_produce("snappy")),
    ("produce-lz4", scenario_produce("lz4")),
    ("produce-zstd", scenario_produce("zstd")),
    ("idempotent", scenario_idempotent),
    ("transaction", scenario_transaction),
    ("group", scenario_group),
    ("kafka-python", scenario_kafka_python),
]


def main():
    binary, out = sys.argv[1], sys.argv[2]
    os.makedirs(out, exist_ok=True)
    port = free_port()
    proxy = RecordingProxy(port)
    overrides = {"advertised.listeners": "PLAINTEXT://127.0.0.1:%d" % port,
                 "group.initial.rebalance.delay.ms": "0",
                 "offsets.topic.num.partitions": "1", "transaction.state.log.num.partitions": "1"}
    with Runnel(binary, overrides=overrides) as broker:
        proxy.target = broker.port
        bootstrap = "127.0.0.1:%d" % port
        for name, run in SCENARIOS:
            run(bootstrap)
            time.sleep(0.5)  # the last requests reach the proxy
            frames = proxy.take()
            data = b"".join(frames)
            path = os.path.join(out, "%s-%s" % (name, hashlib.sha1(data).hexdigest()[:12]))
            with open(path, "wb") as f:
                f.write(data)
            print("%s: %d requests, %d bytes" % (name, len(frames), len(data)))


if __name__ == "__main__":
    main()
