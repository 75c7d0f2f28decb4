#!/usr/bin/python3
"""A three-broker cluster under the fault harness's mixed schedule: process,
network and etcd faults one after another, under an idempotent acks=all
producer and a committing consumer group (label "cluster", issue 18).

Every broker sits behind a loopback proxy it advertises (Cluster(...,
proxied=True), faults/proxy.py), so clients after the bootstrap and the
brokers' replica fetchers and inter-broker channels all go through one.
The topic has 3 partitions, rf 3, min.insync.replicas=2; __consumer_offsets
rf 3; replica.lag.time.max.ms 1500, so a partition or isolation (2 to 5 s)
can take the cut-off broker out of the ISR and back in afterwards, and a
SIGSTOP past the 3 s session moves its leaderships.

The schedule (faults/schedule.py, seeded) holds each fault once, in a drawn
order, on drawn brokers: sigkill, sigterm, sigstop, cut, isolate (a broker
unreachable by clients and brokers, keeping its etcd session), partition
(two brokers unable to reach each other), delay, etcd-stop (longer than
the broker sessions, for some draws) and etcd-kill. An isolation or a
partition lasts its drawn time and then, bounded, until a broker outside
it shows the ISR shrunk: the isolated broker out of the ISR of a partition
another leads (or, leading them all, alone in theirs), or the follower of
the two out of a partition the other leads. After each fault the test
waits, bounded, until the cluster has healed: every broker registered and
listed, every ISR full again (the expansion). Then the checker (faults/checker.py) compares
what the producer was acknowledged against what the log holds (0 lost,
moved, duplicated, reordered) and the group's commits against what it was
given; and the three replicas of each partition end with the same .log
bytes.

  /usr/bin/python3 compat-tests/cluster_faults_test.py build/debug/runnel [--seed S] [--events N]
                                                       [--schedule FILE] [--out FILE]
`--events` more than the nine kinds draws the rest at random (bench's long
mode); a failing run prints where it saved its schedule, which
`--schedule` replays.
"""

import argparse
import json
import os
import sys
import time

from cluster_harness import Cluster, create_topic, runnel_binary, wait_identical, wait_until
from faults import schedule, workload

TOPIC = "faults"
PARTITIONS = 3
GROUP = "faults-group"
OFFSETS_TOPIC = "__consumer_offsets"
SESSION_MS = 3000
BOUND = 30.0  # seconds on top of what the brokers are configured to take: CI machines are loaded
KINDS = ("sigkill", "sigterm", "sigstop", "cut", "isolate", "partition", "delay", "etcd-stop", "etcd-kill")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("binary", nargs="?")
    ap.add_argument("--seed", type=int, default=18)
    ap.add_argument("--events", type=int, default=len(KINDS))
    ap.add_argument("--schedule")
    ap.add_argument("--out")
    args = ap.parse_args()

    events = (schedule.load(args.schedule) if args.schedule else
              schedule.generate(args.seed, 0, [1, 2, 3], faults=KINDS, gap=(1.0, 3.0), stop_for=(2.0, 5.0),
                                limit=args.events, cover=True))
    saved = schedule.save(events, args.seed, "cluster-fault-schedule-")
    for e in events:
        print("  " + json.dumps(e, sort_keys=True), flush=True)

    started = time.monotonic()
    with Cluster(3, args.binary or runnel_binary(), session_timeout_ms=SESSION_MS, proxied=True, overrides={
            "min.insync.replicas": "2",
            "offsets.topic.num.partitions": "3",
            "replica.lag.time.max.ms": "1500"}) as c:
        bootstrap = ",".join(p.address for p in c.proxies.values())
        create_topic(bootstrap, TOPIC, PARTITIONS, 3)
        c.wait_in_sync(TOPIC, BOUND)
        producing = workload.Producing(bootstrap, TOPIC, PARTITIONS)
        consuming = workload.Consuming(bootstrap, TOPIC, PARTITIONS, GROUP, config={"session.timeout.ms": 15000})
        producing.start()
        consuming.start()
        # The member's FindCoordinator creates __consumer_offsets: in sync before the first fault.
        c.wait_in_sync(OFFSETS_TOPIC, BOUND * 2)

        heal_s = []
        held = [0]

        def healed(event):
            t0 = time.monotonic()
            now_held = sum(p.held_frames for p in c.proxies.values())
            if event["fault"] in ("isolate", "partition"):
                assert now_held > held[0], "%s held no frame: the proxies are not in the way" % event
            held[0] = now_held
            dead = [i for i, b in c.brokers.items() if not b.alive()]
            assert not dead, "brokers %s died under %s (schedule in %s)" % (dead, event, saved)
            c.wait_formed(SESSION_MS / 1000 + BOUND * 2, "the cluster formed again after %s" % event)
            for topic in (TOPIC, OFFSETS_TOPIC):
                c.wait_in_sync(topic, BOUND * 3)
            heal_s.append(round(time.monotonic() - t0, 2))
            print("    healed in %.1f s; %d acknowledged so far" % (heal_s[-1], len(producing.acked)), flush=True)

        shrinks = []

        def shrunk(event):
            """While an isolation or partition holds: waits until a broker
            outside it shows the ISR it should shrink to."""
            cut_off = [event["target"]] + ([event["peer"]] if event["fault"] == "partition" else [])
            observer = next(i for i in c.live_ids() if i not in cut_off)

            def expected(parts):
                if event["fault"] == "isolate":
                    b = event["target"]
                    return [p for p, v in parts.items() if v["leader"] != b and b not in v["isr"]] + [
                        p for p, v in parts.items() if v["leader"] == b and v["isr"] == [b]]
                a, b = cut_off
                return [p for p, v in parts.items() if (v["leader"], v["isr"].count(a) + v["isr"].count(b)) in
                        ((a, 1), (b, 1))]

            before = c.partitions(observer, TOPIC)
            if event["fault"] == "partition" and not any(v["leader"] in cut_off for v in before.values()):
                print("    neither of %s leads a partition: no ISR to shrink" % cut_off, flush=True)
                return
            t0 = time.monotonic()
            parts = wait_until(lambda: (lambda ps: ps if expected(ps) else None)(c.partitions(observer, TOPIC)),
                               1.5 + BOUND, "the ISR shrunk under %s, seen by node %d" % (event, observer))
            shrinks.append(round(time.monotonic() - t0, 2))
            print("    ISR shrunk (node %d: %s)" % (observer, {p: v["isr"] for p, v in parts.items()}), flush=True)

        injector = schedule.Injector(c.brokers, proxies=c.proxies, etcd=c.etcd, after=healed, held=shrunk,
                                     log=lambda line: print("  " + line, flush=True))
        applied = injector.run(events)

        log_report, group_report, figures = workload.settle(producing, consuming, bootstrap)
        for p in range(PARTITIONS):
            wait_identical(c, TOPIC, p, BOUND * 2, indexes="valid")
        figures.update({"events": len(applied), "seed": args.seed, "kinds": sorted({e["fault"] for _, e in applied}),
                        "heal_seconds_max": max(heal_s), "isr_shrinks": len(shrinks),
                        "seconds": round(time.monotonic() - started, 1)})
        workload.judge(log_report, group_report, figures, args.out, "%d faults" % len(applied), saved)
    os.unlink(saved)
    print("ok   %d faults (%s): %d acknowledged, 0 lost, 0 duplicated, 0 reordered, replicas identical" % (
        len(applied), ", ".join(e["fault"] for _, e in applied), log_report["acknowledged"]), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
