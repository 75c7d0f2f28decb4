"""Fault injection between an idempotent librdkafka producer and Runnel.

The fault harness's loopback proxy (faults/proxy.py) forwards Kafka frames
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
import struct
import sys
import threading

from confluent_kafka.admin import AdminClient, NewTopic

from faults.proxy import FrameProxy
from idempotent_stream import Stream
from runnel_harness import Runnel, run_tests

SEED = 20261129
MAX_FAULTS = 14
FAULT_RATE = 0.2  # per Produce request or response, until MAX_FAULTS are spent
RECORDS = 6000
TOPIC = "idem-faults"
PRODUCE = 0


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


class ProduceFaults:
    """The proxy's hooks (faults/proxy.py): seeded faults on Produce requests
    and responses, and a count of the batches sent more than once."""

    def __init__(self, seed, max_faults):
        self.rng = random.Random(seed)
        self.lock = threading.Lock()
        self.faults_left = max_faults
        self.enabled = True
        self.counts = {}
        self.batches_sent = {}  # (producer id, epoch, base sequence) -> times sent

    def fault(self, kinds):
        """One of `kinds` (with weights) or None: decided under the lock from the seeded generator."""
        with self.lock:
            if not self.enabled or self.faults_left <= 0 or self.rng.random() >= FAULT_RATE:
                return None, 0.0
            kind = self.rng.choices([k for k, _ in kinds], [w for _, w in kinds])[0]
            self.faults_left -= 1
            self.counts[kind] = self.counts.get(kind, 0) + 1
            return kind, self.rng.uniform(0.2, 1.5)

    def on_request(self, link, frame):
        if struct.unpack(">h", frame[4:6])[0] != PRODUCE:
            return None
        kind, _ = self.fault([("request lost", 2), ("request cut", 1)])
        if kind == "request lost":
            return "close"
        if kind == "request cut":
            return "half"
        with self.lock:
            for key in produce_batches(frame):
                self.batches_sent[key] = self.batches_sent.get(key, 0) + 1
        return None

    def on_response(self, link, frame, api_key):
        if api_key != PRODUCE:
            return None
        kind, delay = self.fault([("response swallowed", 2), ("response lost", 3), ("response delayed", 3)])
        if kind == "response swallowed":
            return "swallow"
        if kind == "response lost":
            return "close"
        if kind == "response delayed":
            return ("delay", delay)
        return None


def main():
    faults = ProduceFaults(SEED, MAX_FAULTS)
    proxy = FrameProxy("idempotence", on_request=faults.on_request, on_response=faults.on_response)
    broker = Runnel(overrides={"advertised.listeners": "PLAINTEXT://127.0.0.1:%d" % proxy.port})
    stream = None
    try:
        with broker:
            proxy.upstream_port = broker.port
            via_proxy = "127.0.0.1:%d" % proxy.port

            def create_topic():
                with faults.lock:
                    faults.enabled = False
                admin = AdminClient({"bootstrap.servers": via_proxy, "broker.address.family": "v4"})
                admin.create_topics([NewTopic(TOPIC, 1, 1)], operation_timeout=10)[TOPIC].result(30)
                with faults.lock:
                    faults.enabled = True

            def produce_through_faults():
                nonlocal stream
                # A swallowed response costs one socket.timeout.ms (librdkafka's local
                # request timeout): keep it short, and reconnections quick.
                stream = Stream(via_proxy, TOPIC, config={"socket.timeout.ms": 4000, "retry.backoff.ms": 50, "reconnect.backoff.ms": 20,
                                                         "reconnect.backoff.max.ms": 200})
                stream.produce(RECORDS, pause_every=1000, pause_s=0.02)
                stream.finish(60)
                with faults.lock:
                    faults.enabled = False
                    counts = dict(faults.counts)
                    resent = sum(1 for times in faults.batches_sent.values() if times > 1)
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
