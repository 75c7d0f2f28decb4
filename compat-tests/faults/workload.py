"""What runs under a fault schedule: an idempotent acks=all producer of
numbered records and a committing consumer group member (confluent-kafka),
and `settle`, which afterwards lets both finish and judges the result with
checker.py. fault_cycles_test.py (one broker) and cluster_faults_test.py
(three, behind proxies) share them.
"""

import json
import threading
import time

from confluent_kafka import Consumer, KafkaException, Producer, TopicPartition

from faults import checker
from idempotent_stream import read_partition

COMMIT_EVERY = 50
AHEAD = 2000  # records produced and not yet acknowledged, at most


def record_id(value):
    return int(value[len(b"id-"):])


class Producing(threading.Thread):
    """An idempotent acks=all producer writing numbered records (`id-<n>`)
    round the partitions, at most AHEAD unacknowledged."""

    def __init__(self, bootstrap, topic, partitions, config=None):
        super().__init__(daemon=True)
        self.topic, self.partitions = topic, partitions
        self.acked = {}  # id -> (partition, offset)
        self.refused = []
        self.fatal = []
        self.produced = 0
        self.halt = threading.Event()
        self.lock = threading.Lock()
        self.producer = Producer({"bootstrap.servers": bootstrap, "broker.address.family": "v4",
                                  "enable.idempotence": True, "acks": "all", "linger.ms": 5,
                                  "message.timeout.ms": 300000, "reconnect.backoff.ms": 20,
                                  "reconnect.backoff.max.ms": 250, "error_cb": self._on_error, **(config or {})})

    def _on_error(self, err):
        if err.fatal():
            self.fatal.append(err)

    def _report(self, err, msg):
        with self.lock:
            rid = record_id(msg.value())
            if err is None:
                self.acked[rid] = (msg.partition(), msg.offset())
            else:
                self.refused.append((rid, err))

    def run(self):
        while not self.halt.is_set():
            with self.lock:
                ahead = self.produced - len(self.acked) - len(self.refused)
            if ahead >= AHEAD:
                self.producer.poll(0.05)
                continue
            rid = self.produced
            try:
                self.producer.produce(self.topic, b"id-%08d" % rid, partition=rid % self.partitions,
                                      on_delivery=self._report)
            except BufferError:
                self.producer.poll(0.05)
                continue
            self.produced += 1
            self.producer.poll(0)
            if rid % 100 == 99:
                self.producer.poll(0.01)  # paced: records are in flight at every kill


class Consuming(threading.Thread):
    """A consumer group member committing synchronously every COMMIT_EVERY
    records; `consumed` is what it was given, per partition, in order."""

    def __init__(self, bootstrap, topic, partitions, group, config=None):
        super().__init__(daemon=True)
        self.topic, self.consumer_group = topic, group
        self.consumed = {p: [] for p in range(partitions)}
        self.halt = threading.Event()
        self.commit_errors = 0
        self.consumer = Consumer({"bootstrap.servers": bootstrap, "broker.address.family": "v4",
                                  "group.id": group, "enable.auto.commit": False,
                                  "auto.offset.reset": "earliest", "session.timeout.ms": 10000,
                                  "reconnect.backoff.ms": 20, "reconnect.backoff.max.ms": 250, **(config or {})})

    def run(self):
        self.consumer.subscribe([self.topic])
        since_commit = 0
        while not self.halt.is_set():
            m = self.consumer.poll(0.2)
            if m is None or m.error():
                continue
            self.consumed[m.partition()].append(m.offset())
            since_commit += 1
            if since_commit >= COMMIT_EVERY:
                since_commit = 0 if self.commit() else since_commit
        self.commit()

    def commit(self):
        try:
            self.consumer.commit(asynchronous=False)
            return True
        except KafkaException:
            self.commit_errors += 1  # the broker was down: the next commit covers these
            return False


def wait_until(pred, timeout, what):
    deadline = time.monotonic() + timeout
    while not pred():
        if time.monotonic() > deadline:
            raise AssertionError("%s: not within %.0f s" % (what, timeout))
        time.sleep(0.2)


def judge(log_report, group_report, figures, out, after, schedule_path):
    """Prints the figures (and writes them to `out`), then fails on what the
    checker counted: `after` says after what, the schedule where it is."""
    print(json.dumps(figures, sort_keys=True), flush=True)
    if out:
        with open(out, "w") as f:
            json.dump(figures, f, indent=1, sort_keys=True)
    bad = checker.failures(log_report, group_report)
    assert not bad, "after %s: %s (schedule in %s)" % (after, "; ".join(bad), schedule_path)
    assert log_report["acknowledged"] > 0, "nothing was acknowledged"


def settle(producing, consuming, bootstrap, flush_s=300, catch_up_s=120):
    """Stops producing, waits (bounded) until every record is acknowledged
    or refused and the group has been given the log's end, then reads each
    partition back: -> (log report, group report, the figures as a dict)."""
    topic, partitions, group = producing.topic, producing.partitions, consuming.consumer_group
    producing.halt.set()
    producing.join(30)
    left = producing.producer.flush(flush_s)
    assert left == 0, "%d records undelivered %d s after the last fault" % (left, flush_s)
    assert not producing.fatal, "fatal producer errors: %s" % producing.fatal[:3]
    probe = Consumer({"bootstrap.servers": bootstrap, "group.id": group, "broker.address.family": "v4"})
    ends = {p: probe.get_watermark_offsets(TopicPartition(topic, p), timeout=30)[1] for p in range(partitions)}
    wait_until(lambda: all(consuming.consumed[p] and max(consuming.consumed[p]) + 1 >= ends[p]
                           for p in range(partitions) if ends[p]), catch_up_s, "the group catching up")
    consuming.halt.set()
    consuming.join(60)
    consuming.consumer.close()
    committed = {tp.partition: tp.offset for tp in
                 probe.committed([TopicPartition(topic, p) for p in range(partitions)], timeout=30)}
    probe.close()
    log = {p: [(offset, record_id(value)) for offset, value in read_partition(bootstrap, topic, p, 120)]
           for p in range(partitions)}
    log_report = checker.check_log(producing.acked, log)
    group_report = checker.check_group(consuming.consumed, committed, ends)
    figures = {"acknowledged": log_report["acknowledged"], "stored": log_report["stored"],
               "refused": len(producing.refused), "lost": len(log_report["lost"]),
               "moved": len(log_report["moved"]), "duplicated": len(log_report["duplicated"]),
               "reordered": len(log_report["reordered"]),
               "group_skipped": sum(len(v) for v in group_report["skipped"].values()),
               "group_committed_beyond_end": len(group_report["beyond_end"]),
               "group_redelivered": group_report["redelivered"], "commit_errors": consuming.commit_errors}
    return log_report, group_report, figures
