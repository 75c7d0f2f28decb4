#!/usr/bin/python3
"""SIGKILL cycles under an idempotent acks=all producer and a consumer
group, driven by the fault harness (faults/schedule.py) and judged by its
checker (faults/checker.py).

One Runnel broker, a topic of 3 partitions; a confluent-kafka producer
(enable.idempotence, acks=all) writes numbered records round the
partitions while a consumer group member reads and commits every 50
records synchronously. A seeded schedule SIGKILLs the broker and starts it
again, `--cycles` times. Then the producer flushes, the member catches up
and commits, and the checker compares: 0 lost, 0 moved, 0 duplicated, 0
reordered in the log; no committed offset past a record the group was not
given, none past the log end. Redeliveries to the group after a crash
(at-least-once) are counted, not failed.

ctest runs 5 cycles. The long mode (bench/README.md) is
    /usr/bin/python3 compat-tests/fault_cycles_test.py build/release/runnel --cycles 100
and `--out FILE` writes the figures as JSON; `--schedule FILE` runs a
schedule a failing run printed instead of drawing one from `--seed`.

usage: /usr/bin/python3 fault_cycles_test.py <runnel binary> [--cycles N] [--seed S]
                                             [--schedule FILE] [--out FILE]
"""

import argparse
import json
import os
import sys
import tempfile
import threading
import time

from confluent_kafka import Consumer, KafkaException, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from faults import checker, schedule
from idempotent_stream import read_partition
from runnel_harness import Runnel

TOPIC = "cycles"
PARTITIONS = 3
GROUP = "cycles-group"
COMMIT_EVERY = 50
AHEAD = 2000  # records produced and not yet acknowledged, at most


def record_id(value):
    return int(value[len(b"id-"):])


class Producing(threading.Thread):
    def __init__(self, bootstrap):
        super().__init__(daemon=True)
        self.acked = {}  # id -> (partition, offset)
        self.refused = []
        self.fatal = []
        self.produced = 0
        self.halt = threading.Event()
        self.lock = threading.Lock()
        self.producer = Producer({"bootstrap.servers": bootstrap, "broker.address.family": "v4",
                                  "enable.idempotence": True, "acks": "all", "linger.ms": 5,
                                  "message.timeout.ms": 300000, "reconnect.backoff.ms": 20,
                                  "reconnect.backoff.max.ms": 250, "error_cb": self._on_error})

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
                self.producer.produce(TOPIC, b"id-%08d" % rid, partition=rid % PARTITIONS, on_delivery=self._report)
            except BufferError:
                self.producer.poll(0.05)
                continue
            self.produced += 1
            self.producer.poll(0)
            if rid % 100 == 99:
                self.producer.poll(0.01)  # paced: records are in flight at every kill


class Consuming(threading.Thread):
    def __init__(self, bootstrap):
        super().__init__(daemon=True)
        self.consumed = {p: [] for p in range(PARTITIONS)}
        self.halt = threading.Event()
        self.commit_errors = 0
        self.consumer = Consumer({"bootstrap.servers": bootstrap, "broker.address.family": "v4",
                                  "group.id": GROUP, "enable.auto.commit": False,
                                  "auto.offset.reset": "earliest", "session.timeout.ms": 10000,
                                  "reconnect.backoff.ms": 20, "reconnect.backoff.max.ms": 250})

    def run(self):
        self.consumer.subscribe([TOPIC])
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


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("binary")
    ap.add_argument("--cycles", type=int, default=5)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--schedule")
    ap.add_argument("--out")
    args = ap.parse_args()

    events = (schedule.load(args.schedule) if args.schedule else
              schedule.generate(args.seed, 0, [1], faults=("sigkill",), gap=(1.0, 2.5), limit=args.cycles))
    saved = tempfile.NamedTemporaryFile("w", prefix="fault-schedule-", suffix=".jsonl", delete=False)
    saved.close()
    schedule.dump(events, saved.name)
    print("schedule: %d events (seed %d), saved to %s" % (len(events), args.seed, saved.name), flush=True)

    broker = Runnel(args.binary, overrides={"group.initial.rebalance.delay.ms": "0",
                                            "offsets.topic.num.partitions": "1"})
    started = time.monotonic()
    with broker:
        admin = AdminClient({"bootstrap.servers": broker.bootstrap, "broker.address.family": "v4"})
        admin.create_topics([NewTopic(TOPIC, PARTITIONS, 1)])[TOPIC].result(30)
        producing, consuming = Producing(broker.bootstrap), Consuming(broker.bootstrap)
        producing.start()
        consuming.start()
        applied = schedule.Injector({1: broker}, log=lambda line: print("  " + line, flush=True)).run(events)

        producing.halt.set()
        producing.join(30)
        left = producing.producer.flush(300)
        assert left == 0, "%d records undelivered 300 s after the last fault" % left
        assert not producing.fatal, "fatal producer errors: %s" % producing.fatal[:3]
        ends = {}
        probe = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": GROUP, "broker.address.family": "v4"})
        for p in range(PARTITIONS):
            ends[p] = probe.get_watermark_offsets(TopicPartition(TOPIC, p), timeout=30)[1]
        wait_until(lambda: all(consuming.consumed[p] and max(consuming.consumed[p]) + 1 >= ends[p]
                               for p in range(PARTITIONS) if ends[p]), 120, "the group catching up")
        consuming.halt.set()
        consuming.join(60)
        consuming.consumer.close()
        committed = {tp.partition: tp.offset for tp in
                     probe.committed([TopicPartition(TOPIC, p) for p in range(PARTITIONS)], timeout=30)}
        probe.close()

        log = {p: [(offset, record_id(value)) for offset, value in read_partition(broker.bootstrap, TOPIC, p, 120)]
               for p in range(PARTITIONS)}
        log_report = checker.check_log(producing.acked, log)
        group_report = checker.check_group(consuming.consumed, committed, ends)
        elapsed = time.monotonic() - started
        figures = {"cycles": len(applied), "seed": args.seed, "acknowledged": log_report["acknowledged"],
                   "stored": log_report["stored"], "refused": len(producing.refused),
                   "lost": len(log_report["lost"]), "moved": len(log_report["moved"]),
                   "duplicated": len(log_report["duplicated"]), "reordered": len(log_report["reordered"]),
                   "group_skipped": sum(len(v) for v in group_report["skipped"].values()),
                   "group_committed_beyond_end": len(group_report["beyond_end"]),
                   "group_redelivered": group_report["redelivered"], "commit_errors": consuming.commit_errors,
                   "seconds": round(elapsed, 1)}
        print(json.dumps(figures, sort_keys=True), flush=True)
        if args.out:
            with open(args.out, "w") as f:
                json.dump(figures, f, indent=1, sort_keys=True)
        bad = checker.failures(log_report, group_report)
        assert not bad, "after %d SIGKILL cycles: %s (schedule in %s)" % (len(applied), "; ".join(bad), saved.name)
        assert log_report["acknowledged"] > 0, "nothing was acknowledged"
        assert broker.stop() == 0, "graceful stop after the cycles"
    os.unlink(saved.name)
    print("ok   %d SIGKILL cycles: %d acknowledged, 0 lost, 0 duplicated, 0 reordered" % (
        len(applied), log_report["acknowledged"]), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
