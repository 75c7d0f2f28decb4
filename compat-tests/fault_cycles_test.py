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
import os
import sys
import time

from confluent_kafka.admin import AdminClient, NewTopic

from faults import schedule, workload
from runnel_harness import Runnel

TOPIC = "cycles"
PARTITIONS = 3
GROUP = "cycles-group"


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
    saved = schedule.save(events, args.seed, "fault-schedule-")

    broker = Runnel(args.binary, overrides={"group.initial.rebalance.delay.ms": "0",
                                            "offsets.topic.num.partitions": "1"})
    started = time.monotonic()
    with broker:
        admin = AdminClient({"bootstrap.servers": broker.bootstrap, "broker.address.family": "v4"})
        admin.create_topics([NewTopic(TOPIC, PARTITIONS, 1)])[TOPIC].result(30)
        producing = workload.Producing(broker.bootstrap, TOPIC, PARTITIONS)
        consuming = workload.Consuming(broker.bootstrap, TOPIC, PARTITIONS, GROUP)
        producing.start()
        consuming.start()
        applied = schedule.Injector({1: broker}, log=lambda line: print("  " + line, flush=True)).run(events)

        log_report, group_report, figures = workload.settle(producing, consuming, broker.bootstrap)
        figures.update({"cycles": len(applied), "seed": args.seed, "seconds": round(time.monotonic() - started, 1)})
        workload.judge(log_report, group_report, figures, args.out, "%d SIGKILL cycles" % len(applied), saved)
        assert broker.stop() == 0, "graceful stop after the cycles"
    os.unlink(saved)
    print("ok   %d SIGKILL cycles: %d acknowledged, 0 lost, 0 duplicated, 0 reordered" % (
        len(applied), log_report["acknowledged"]), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
