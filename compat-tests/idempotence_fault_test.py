"""Fault injection between an idempotent librdkafka producer and Runnel.

A TCP proxy in this process (threads, loopback only) forwards Kafka frames
between the producer and the broker, which advertises the proxy's address
(advertised.listeners) so that every connection the client opens goes
through it. On Produce traffic it injects, at random from a fixed seed and
up to a fixed number of faults: a request lost (the connection closed
before forwarding it), a request cut in the middle, a response swallowed
(the request stays unanswered until the client times it out), a response
lost with its connection (the append happened, the client cannot know),
and responses delayed. The client retries with the same producer id and
sequences; afterwards the partition must hold every acknowledged record
exactly once, at its acknowledged offset, in order, and no record twice
(idempotent_stream.py). The proxy also checks that batches were really
sent again, so the broker's duplicate detection was exercised.

usage: /usr/bin/python3 idempotence_fault_test.py <runnel binary>
"""

import random
import socket
import struct
import sys
import threading
import time

from confluent_kafka.admin import AdminClient, NewTopic

from idempotent_stream import Stream
from runnel_harness import Runnel, run_tests

SEED = 20261129
MAX_FAULTS = 14
FAULT_RATE = 0.2  # per Produce request or response, until MAX_FAULTS are spent
RECORDS = 6000
TOPIC = "idem-faults"
PRODUCE = 0


def recv_exact(sock, n):
    buf = b""
    while len(buf) < n:
        chunk = sock.recv(n - len(buf))
        if not chunk:
            raise ConnectionError("closed")
        buf += chunk
    return buf


def read_frame(sock):
    size = recv_exact(sock, 4)
    return size + recv_exact(sock, struct.unpack(">i", size)[0])


def produce_batches(frame):
    """(producer id, epoch, base sequence) of each batch in a Produce v3-8
    request frame (non-flexible; a flexible one yields nothing)."""
    (version,) = struct.unpack(">h", frame[6:8])
    if version >= 9:
        return []
    pos = 12
    (n,) = struct.unpack(">h", frame[pos:pos + 2])
    pos += 2 + max(n, 0)                          # client id
    (n,) = struct.unpack(">h", frame[pos:pos + 2])
    pos += 2 + max(n, 0) + 2 + 4                  # transactional id, acks, timeout
    out = []
    (topics,) = struct.unpack(">i", frame[pos:pos + 4])
    pos += 4
    for _ in range(topics):
        (n,) = struct.unpack(">h", frame[pos:pos + 2])
        pos += 2 + n
        (parts,) = struct.unpack(">i", frame[pos:pos + 4])
        pos += 4
        for _ in range(parts):
            (size,) = struct.unpack(">i", frame[pos + 4:pos + 8])
            batch = frame[pos + 8:pos + 8 + max(size, 0)]
            pos += 8 + max(size, 0)
            if len(batch) >= 61:
                out.append(struct.unpack(">qhi", batch[43:57]))
    return out


class FaultProxy:
    def __init__(self, seed, max_faults):
        self.rng = random.Random(seed)
        self.lock = threading.Lock()
        self.faults_left = max_faults
        self.enabled = True
        self.upstream_port = None
        self.counts = {}
        self.batches_sent = {}  # (producer id, epoch, base sequence) -> times sent
        self.listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(16)
        self.port = self.listener.getsockname()[1]
        self.closed = False
        self.links = []
        threading.Thread(target=self._accept, daemon=True).start()

    def fault(self, kinds):
        """One of `kinds` (with weights) or None: decided under the lock from the seeded generator."""
        with self.lock:
            if not self.enabled or self.faults_left <= 0 or self.rng.random() >= FAULT_RATE:
                return None, 0.0
            kind = self.rng.choices([k for k, _ in kinds], [w for _, w in kinds])[0]
            self.faults_left -= 1
            self.counts[kind] = self.counts.get(kind, 0) + 1
            return kind, self.rng.uniform(0.2, 1.5)

    def _accept(self):
        while not self.closed:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            try:
                upstream = socket.create_connection(("127.0.0.1", self.upstream_port), timeout=10)
                upstream.settimeout(None)
            except OSError:
                client.close()
                continue
            link = Link(self, client, upstream)
            with self.lock:
                self.links.append(link)
            link.start()

    def close(self):
        self.closed = True
        self.listener.close()
        with self.lock:
            links = list(self.links)
        for link in links:
            link.close()


class Link:
    """One client connection and its broker connection, a thread each way."""

    def __init__(self, proxy, client, upstream):
        self.proxy = proxy
        self.client = client
        self.upstream = upstream
        self.api_of = {}  # correlation id -> api key of requests sent on
        self.dead = threading.Event()

    def start(self):
        threading.Thread(target=self._requests, daemon=True).start()
        threading.Thread(target=self._responses, daemon=True).start()

    def close(self):
        if self.dead.is_set():
            return
        self.dead.set()
        for s in (self.client, self.upstream):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            s.close()

    def _requests(self):
        try:
            while not self.dead.is_set():
                frame = read_frame(self.client)
                api_key, _, corr = struct.unpack(">hhi", frame[4:12])
                if api_key == PRODUCE:
                    kind, _ = self.proxy.fault([("request lost", 2), ("request cut", 1)])
                    if kind == "request lost":
                        return self.close()
                    if kind == "request cut":
                        self.upstream.sendall(frame[:len(frame) // 2])
                        time.sleep(0.05)
                        return self.close()
                    with self.proxy.lock:
                        for key in produce_batches(frame):
                            self.proxy.batches_sent[key] = self.proxy.batches_sent.get(key, 0) + 1
                self.api_of[corr] = api_key
                self.upstream.sendall(frame)
        except (OSError, ConnectionError, struct.error):
            self.close()

    def _responses(self):
        try:
            while not self.dead.is_set():
                frame = read_frame(self.upstream)
                (corr,) = struct.unpack(">i", frame[4:8])
                if self.api_of.pop(corr, None) == PRODUCE:
                    kind, delay = self.proxy.fault([("response swallowed", 2), ("response lost", 3),
                                                    ("response delayed", 3)])
                    if kind == "response swallowed":
                        continue
                    if kind == "response lost":
                        return self.close()
                    if kind == "response delayed":
                        time.sleep(delay)
                self.client.sendall(frame)
        except (OSError, ConnectionError, struct.error):
            self.close()


def main():
    proxy = FaultProxy(SEED, MAX_FAULTS)
    broker = Runnel(overrides={"advertised.listeners": "PLAINTEXT://127.0.0.1:%d" % proxy.port})
    stream = None
    try:
        with broker:
            proxy.upstream_port = broker.port
            via_proxy = "127.0.0.1:%d" % proxy.port

            def create_topic():
                with proxy.lock:
                    proxy.enabled = False
                admin = AdminClient({"bootstrap.servers": via_proxy, "broker.address.family": "v4"})
                admin.create_topics([NewTopic(TOPIC, 1, 1)], operation_timeout=10)[TOPIC].result(30)
                with proxy.lock:
                    proxy.enabled = True

            def produce_through_faults():
                nonlocal stream
                # A swallowed response costs one socket.timeout.ms (librdkafka's local
                # request timeout): keep it short, and reconnections quick.
                stream = Stream(via_proxy, TOPIC, config={"socket.timeout.ms": 4000, "retry.backoff.ms": 50, "reconnect.backoff.ms": 20,
                                                         "reconnect.backoff.max.ms": 200})
                stream.produce(RECORDS, pause_every=1000, pause_s=0.02)
                stream.finish(60)
                with proxy.lock:
                    proxy.enabled = False
                    counts = dict(proxy.counts)
                    resent = sum(1 for times in proxy.batches_sent.values() if times > 1)
                print("faults injected: %s; batches sent more than once: %d; acknowledged %d of %d" % (
                    counts, resent, stream.acked_count(), RECORDS), flush=True)
                # Which requests the seeded draws hit depends on timing; the
                # budget is normally spent long before the stream ends.
                assert sum(counts.values()) >= MAX_FAULTS // 2, "only %d of %d faults happened" % (
                    sum(counts.values()), MAX_FAULTS)
                lost_appends = counts.get("response swallowed", 0) + counts.get("response lost", 0)
                assert lost_appends > 0 and resent > 0, "no batch was retried after its append: nothing tested"

            def every_acked_record_once_in_order():
                n = stream.check(via_proxy)
                assert n == RECORDS, "%d records in the log, %d produced and acknowledged" % (n, RECORDS)

            rc = run_tests([
                ("create the topic", create_topic),
                ("idempotent producer through dropped, cut, swallowed and delayed traffic", produce_through_faults),
                ("the partition holds every record once, in order, at its acked offset",
                 every_acked_record_once_in_order),
            ], broker)
    finally:
        proxy.close()
    sys.exit(rc)


if __name__ == "__main__":
    main()
