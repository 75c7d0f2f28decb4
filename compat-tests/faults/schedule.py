"""One seeded schedule of faults, and what applies it.

A schedule is a list of events, each at a time from the start of the run:

    {"at": 1.25, "fault": "sigkill", "target": 1}
    {"at": 3.10, "fault": "sigstop", "target": 2, "for": 0.8}
    {"at": 5.00, "fault": "sigterm", "target": 1}
    {"at": 6.40, "fault": "disk", "target": 3}

written one JSON object a line (`dump`, `load`), so the schedule a failing
run printed can be given back to it to run again, and drawn from a seed
(`generate`), so the same seed draws the same schedule.

Faults, and what `Injector` does for each to the target broker (a
runnel_harness.BrokerProcess: Runnel or a cluster's ClusterBroker):
- sigkill: the crash: SIGKILL, then started again on the same dir and port
  after `restart_after` seconds (default 0);
- sigterm: a graceful stop (SIGTERM, waited for), then started again;
- sigstop: the process frozen (SIGSTOP) for `for` seconds, then SIGCONT:
  a broker that stops answering without closing anything;
- disk: the broker's log dir starts failing, as the io_faults shim
  (faults/io_faults.cc) makes it when the broker was started with it and
  RUNNEL_IO_FAULT_ARM names the file this creates.
Network faults go through the loopback proxy (idempotence_fault_test.py's
FaultProxy) and are not scheduled here yet; nor are etcd's.
"""

import json
import os
import random
import signal
import time

FAULTS = ("sigkill", "sigterm", "sigstop", "disk")


def generate(seed, duration, targets, faults=("sigkill",), gap=(0.5, 3.0), stop_for=(0.2, 2.0), limit=None):
    """Events up to `duration` seconds (or the first `limit` of them, however
    long they take), `gap` apart (uniformly drawn), each a fault from
    `faults` on one of `targets`."""
    for f in faults:
        if f not in FAULTS:
            raise ValueError("unknown fault %r (known: %s)" % (f, ", ".join(FAULTS)))
    rng = random.Random(seed)
    events, at = [], rng.uniform(*gap)
    while (at < duration) if limit is None else (len(events) < limit):
        event = {"at": round(at, 3), "fault": rng.choice(faults), "target": rng.choice(list(targets))}
        if event["fault"] == "sigstop":
            event["for"] = round(rng.uniform(*stop_for), 3)
        events.append(event)
        at += rng.uniform(*gap)
    return events


def dump(events, path):
    with open(path, "w") as f:
        for e in events:
            f.write(json.dumps(e, sort_keys=True) + "\n")


def load(path):
    with open(path) as f:
        events = [json.loads(line) for line in f if line.strip()]
    for e in events:
        if e.get("fault") not in FAULTS or "at" not in e or "target" not in e:
            raise ValueError("%s: not a fault event: %r" % (path, e))
    return sorted(events, key=lambda e: e["at"])


class Injector:
    """Applies a schedule to brokers: {target: BrokerProcess}. run() keeps
    to the events' times (an event due while an earlier one is still being
    applied, such as a slow restart, runs as soon as it can) and returns
    what was applied: [(seconds from the start, event)]."""

    def __init__(self, brokers, arm_files=None, restart_after=0.0, log=print):
        self.brokers = brokers
        self.arm_files = arm_files or {}
        self.restart_after = restart_after
        self.log = log
        self.applied = []

    def run(self, events, stop=None):
        start = time.monotonic()
        for e in events:
            wait = start + e["at"] - time.monotonic()
            if stop is not None and stop.wait(max(0.0, wait)):
                break
            if stop is None and wait > 0:
                time.sleep(wait)
            self.apply(e)
            self.applied.append((round(time.monotonic() - start, 3), e))
        return self.applied

    def apply(self, e):
        b = self.brokers[e["target"]]
        fault = e["fault"]
        self.log("fault at %.2f s: %s broker %s" % (e["at"], fault, e["target"]))
        if fault == "sigkill":
            b.kill9()
            if self.restart_after:
                time.sleep(self.restart_after)
            b.start()
        elif fault == "sigterm":
            b.restart(graceful=True)
        elif fault == "sigstop":
            os.kill(b.proc.pid, signal.SIGSTOP)
            try:
                time.sleep(e.get("for", 1.0))
            finally:
                os.kill(b.proc.pid, signal.SIGCONT)
        elif fault == "disk":
            arm = self.arm_files.get(e["target"])
            if arm is None:
                raise ValueError("disk fault on broker %s, which was not started with the io_faults shim" % e["target"])
            open(arm, "w").close()
