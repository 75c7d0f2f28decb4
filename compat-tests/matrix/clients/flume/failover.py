"""leader_failover for the Flume row (see the matrix README): one netcat
source -> memory channel -> Kafka sink chain (acks=all, idempotent) is fed a
line every 5 ms while the driver's reader (confluent_kafka, as in the other
scenarios: the row's component only produces) reads the partition from the
start; after 100 acknowledgements the harness kills the partition's leader.

A sink's only per-record delivery report is its callback's DEBUG line
("Acked message partition:P ofset:O", or "Error sending message to Kafka"),
logged in acknowledgement order; a batch that fails is logged as "Failed to
publish events" and rolled back into the channel to be sent again. Flume
exposes no metadata, so the new leader is the one confluent_kafka's metadata names.
"""

import json
import re
import threading
import time

BEFORE = 100  # acknowledged before the kill is asked for
AFTER = 100   # acknowledged after the metadata names a new leader
EVERY = 0.005

FAILED = re.compile(r"Failed to publish events|Error sending message to Kafka|Unable to deliver event")


def partition0(client, topic):
    """(leader, sorted ISR) of topic's partition 0 in client's metadata, or None while it has none."""
    try:
        p = client.list_topics(topic, timeout=5).topics[topic].partitions[0]
        return p.leader, sorted(p.isrs)
    except Exception:  # noqa: BLE001 - asked the killed broker, or no such partition yet: ask again
        return None


def watch_leader(admin, topic, old):
    """Starts a thread that appends partition 0's first leader other than old to
    the list it returns, with the Event that stops it. From its own thread: a
    metadata request that goes to the killed broker waits out its timeout, and
    the driver must go on meanwhile."""
    new, over = [], threading.Event()

    def watch():
        while not new and not over.is_set():
            p = partition0(admin, topic)
            if p is not None and p[0] not in (old, -1):
                new.append(p[0])
            else:
                over.wait(0.5)
    threading.Thread(target=watch, daemon=True).start()
    return new, over


class Log:
    """The agent log from where the scenario began."""

    def __init__(self, agent, client_id):
        self.agent = agent
        self.start = len(agent.text())
        # The callback runs on the producer's I/O thread, named after its
        # client.id: this sink's acknowledgements, not another sink's.
        self.acked_line = re.compile(r"\[kafka-producer-network-thread \| %s\] SinkCallback: "
                                     r"Acked message partition:(\d+) ofset:(\d+)" % re.escape(client_id))

    def text(self):
        return self.agent.text()[self.start:]

    def acked(self):
        """(partition, offset) of each acknowledgement, in the order the sink's producer had them."""
        return [(int(p), int(o)) for p, o in self.acked_line.findall(self.text())]


def run(agent, chain, bootstrap, brokers, log):
    from confluent_kafka import Consumer, TopicPartition, OFFSET_BEGINNING
    from confluent_kafka.admin import AdminClient, NewTopic
    topic = chain.topic
    ids = sorted(brokers)
    # The topic the sink's producer would auto-create would have the same
    # shape; created first so that its ISR is full before anything is sent.
    admin = AdminClient({"bootstrap.servers": bootstrap, "broker.address.family": "v4"})
    admin.create_topics([NewTopic(topic, 1, len(ids))], request_timeout=20)[topic].result(25)
    deadline = time.monotonic() + 30
    while True:
        p = partition0(admin, topic)
        if p is not None and p[1] == ids and p[0] in ids:
            break
        assert time.monotonic() < deadline, "%s's ISR not %s after 30 s: %s" % (topic, ids, p)
        time.sleep(0.2)
    old = p[0]

    agent_log = Log(agent, chain.client_id)
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": "flume-reader-" + topic,
                  "enable.auto.commit": False, "enable.partition.eof": False,
                  "topic.metadata.refresh.interval.ms": 1000})
    c.assign([TopicPartition(topic, 0, OFFSET_BEGINNING)])
    feeder = chain.open()
    sent, got = [], []
    acked_seen = [0, 0.0]  # count, when last read

    def poll(timeout):
        m = c.poll(timeout)
        while m is not None:
            if m.error():
                log("reader", topic, m.error())  # e.g. the killed broker's connection
            else:
                got.append(m)
            m = c.poll(0)

    def step():
        v = "%s-%06d" % (topic, len(sent))
        feeder.send(v)
        sent.append(v)
        poll(EVERY)

    def acked():
        # The log grows by a line per event: read it at most every 0.2 s.
        if time.monotonic() - acked_seen[1] > 0.2:
            acked_seen[:] = [len(agent_log.acked()), time.monotonic()]
        return acked_seen[0]

    new, over = [], threading.Event()
    try:
        # The sink backs off 1 s each time it finds its channel empty.
        deadline = time.monotonic() + 30
        while acked() < BEFORE:
            assert time.monotonic() < deadline, "%d of %d acknowledged before the kill" % (acked(), BEFORE)
            step()
        print(json.dumps({"event": "kill_leader", "scenario": "leader_failover", "topic": topic, "partition": 0}),
              flush=True)
        killed, at_change = time.monotonic(), None
        new, over = watch_leader(admin, topic, old)
        while at_change is None or acked() < at_change + AFTER:
            assert time.monotonic() < killed + 60, "60 s after the kill: new leader %s, %d of %d acknowledged" % (
                new, acked(), len(sent))
            step()
            if at_change is None and new:
                at_change = acked()
        feeder.close()
        feeder = None
        deadline = time.monotonic() + 90
        while acked() < len(sent) and time.monotonic() < deadline:
            poll(0.2)
        deadline = time.monotonic() + 30
        while len(got) < len(sent) and time.monotonic() < deadline:
            poll(0.2)
        end = time.monotonic() + 1.0  # anything more would be a duplicate
        while time.monotonic() < end:
            poll(0.2)
        low, high = c.get_watermark_offsets(TopicPartition(topic, 0), timeout=10)
    finally:
        over.set()
        if feeder is not None:
            feeder.close()
        c.close()
    text = agent_log.text()
    failures = [l for l in text.splitlines() if FAILED.search(l)]
    assert not failures, "%d delivery failures in the agent log: %s" % (len(failures), failures[:2])
    offsets = agent_log.acked()
    assert len(offsets) == len(sent), "%d of %d events acknowledged" % (len(offsets), len(sent))
    assert offsets == [(0, i) for i in range(len(sent))], \
        "acknowledged offsets are not 0..%d, each once, in order" % (len(sent) - 1)
    values = [m.value().decode("utf-8", "replace") for m in got]
    assert values == sent, "consumed %d records, sent %d (not the same sequence: lost, duplicated or reordered)" % (
        len(values), len(sent))
    assert [m.offset() for m in got] == list(range(len(sent))), "consumed offsets are not the acknowledged ones"
    assert (low, high) == (0, len(sent)), "watermarks %s, expected (0, %d)" % ((low, high), len(sent))
    return ("%d events via netcat -> memory channel -> Kafka sink (acks=all, idempotent), leader %d killed, %d "
            "took over: no failed send or rollback, every event acknowledged once, at offsets 0..%d in send "
            "order; the reader consumed them once, in order, at those offsets") % (len(sent), old, new[0], len(sent) - 1)
