"""One seeded schedule of faults, and what applies it.

A schedule is a list of events, each at a time from the start of the run:

    {"at": 1.25, "fault": "sigkill", "target": 1}
    {"at": 3.10, "fault": "sigstop", "target": 2, "for": 0.8}
    {"at": 5.00, "fault": "sigterm", "target": 1}
    {"at": 6.40, "fault": "disk", "target": 3}

written one JSON object a line (`dump`, `load`), so the schedule a failing
run printed can be given back to it to run again, and drawn from a seed
(`generate`), so the same seed draws the same schedule.

Faults, and what `Injector` does for each. Process and disk faults act on
the target broker (a runnel_harness.BrokerProcess: Runnel or a cluster's
ClusterBroker):
- sigkill: the crash: SIGKILL, then started again on the same dir and port
  after `restart_after` seconds (default 0);
- sigterm: a graceful stop (SIGTERM, waited for), then started again;
- sigstop: the process frozen (SIGSTOP) for `for` seconds, then SIGCONT:
  a broker that stops answering without closing anything;
- disk: the broker's log dir starts failing, as the io_faults shim
  (faults/io_faults.cc) makes it when the broker was started with it and
  RUNNEL_IO_FAULT_ARM names the file this creates.
Network faults act on the loopback proxy in front of the target
(faults/proxy.py), which the broker advertises:
- cut: every connection to the target closed at once;
- isolate: for `for` seconds nothing passes between the target and anyone
  (clients, and other brokers both ways), while it keeps its etcd session:
  the leader that cannot reach its followers;
- partition: for `for` seconds the target and broker `peer` cannot reach
  each other; clients reach both;
- delay: every frame to and from the target waits `delay` seconds, for
  `for` seconds.
etcd faults (target "etcd", a cluster_harness.Etcd):
- etcd-stop: etcd frozen (SIGSTOP) for `for` seconds: leases stop being
  renewed and every call hangs, then it resumes;
- etcd-kill: SIGKILL, started again on the same data after
  `restart_after` seconds.
"""

import json
import os
import random
import signal
import tempfile
import time

FAULTS = ("sigkill", "sigterm", "sigstop", "disk", "cut", "isolate", "partition", "delay", "etcd-stop", "etcd-kill")
DURATIONS = ("sigstop", "isolate", "partition", "delay", "etcd-stop")  # events with a `for'
ETCD = "etcd"


def generate(seed, duration, targets, faults=("sigkill",), gap=(0.5, 3.0), stop_for=(0.2, 2.0), limit=None,
             delay=(0.05, 0.5), cover=False):
    """Events up to `duration` seconds (or the first `limit` of them, however
    long they take), `gap` apart (uniformly drawn), each a fault from
    `faults` on one of `targets` (etcd's on etcd); a fault that lasts does
    so for `stop_for` seconds (drawn), a partition is from another target.
    With `cover`, the first len(faults) events are each fault once, in an
    order drawn from the seed."""
    for f in faults:
        if f not in FAULTS:
            raise ValueError("unknown fault %r (known: %s)" % (f, ", ".join(FAULTS)))
    rng = random.Random(seed)
    first = rng.sample(list(faults), len(faults)) if cover else []
    events, at = [], rng.uniform(*gap)
    while (at < duration) if limit is None else (len(events) < limit):
        fault = first[len(events)] if len(events) < len(first) else rng.choice(faults)
        target = ETCD if fault.startswith("etcd-") else rng.choice(list(targets))
        event = {"at": round(at, 3), "fault": fault, "target": target}
        if fault in DURATIONS:
            event["for"] = round(rng.uniform(*stop_for), 3)
        if fault == "partition":
            event["peer"] = rng.choice([t for t in targets if t != target])
        if fault == "delay":
            event["delay"] = round(rng.uniform(*delay), 3)
        events.append(event)
        at += rng.uniform(*gap)
    return events


def dump(events, path):
    with open(path, "w") as f:
        for e in events:
            f.write(json.dumps(e, sort_keys=True) + "\n")


def save(events, seed, prefix):
    """Dumps the schedule to a temporary file a failing run names (for
    --schedule to replay); returns its path."""
    saved = tempfile.NamedTemporaryFile("w", prefix=prefix, suffix=".jsonl", delete=False)
    saved.close()
    dump(events, saved.name)
    print("schedule: %d events (seed %s), saved to %s" % (len(events), seed, saved.name), flush=True)
    return saved.name


def load(path):
    with open(path) as f:
        events = [json.loads(line) for line in f if line.strip()]
    for e in events:
        if e.get("fault") not in FAULTS or "at" not in e or "target" not in e or (
                e["fault"] == "partition" and "peer" not in e):
            raise ValueError("%s: not a fault event: %r" % (path, e))
    return sorted(events, key=lambda e: e["at"])


class Injector:
    """Applies a schedule to brokers: {target: BrokerProcess}, the proxies in
    front of them: {target: FrameProxy} and an etcd. run() keeps to the
    events' times (an event due while an earlier one is still being
    applied, such as a slow restart or a partition, runs as soon as it
    can: one fault at a time) and returns what was applied: [(seconds from
    the start, event)]. after(event) is called once each fault is over
    (a test waits there for the cluster to heal); held(event), while an
    isolation or partition is still in effect once its time is up (a test
    waits there, bounded, to see the ISR shrink: the fault lasts until it
    returns)."""

    def __init__(self, brokers, arm_files=None, restart_after=0.0, log=print, proxies=None, etcd=None,
                 after=None, held=None):
        self.brokers = brokers
        self.proxies = proxies or {}
        self.etcd = etcd
        self.after = after
        self.held = held
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
            if self.after is not None:
                self.after(e)
            self.applied.append((round(time.monotonic() - start, 3), e))
        return self.applied

    def apply(self, e):
        fault = e["fault"]
        self.log("fault at %.2f s: %s %s%s" % (e["at"], fault, "" if e["target"] == ETCD else "broker ",
                                                e["target"]))
        if fault.startswith("etcd-"):
            return self._etcd(e)
        if fault in ("cut", "isolate", "partition", "delay"):
            return self._network(e)
        b = self.brokers[e["target"]]
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

    def _proxy(self, target):
        p = self.proxies.get(target)
        if p is None:
            raise ValueError("network fault on broker %s, which has no proxy in front of it" % target)
        return p

    def _network(self, e):
        fault, target, lasts = e["fault"], e["target"], e.get("for", 1.0)
        p = self._proxy(target)
        if fault == "cut":
            p.cut()
            return
        if fault == "delay":
            p.delay(e["delay"])
            try:
                time.sleep(lasts)
            finally:
                p.delay(0.0)
            return
        # Holds on both sides: the target's own proxy, and every other
        # proxy for the connections the target opens to its broker.
        if fault == "isolate":
            held = [(p, None)] + [(q, target) for t, q in self.proxies.items() if t != target]
        else:
            held = [(p, e["peer"]), (self._proxy(e["peer"]), target)]
        for q, peer in held:
            q.hold(peer)
        try:
            time.sleep(lasts)
            if self.held is not None:
                self.held(e)
        finally:
            for q, peer in held:
                q.release(peer)

    def _etcd(self, e):
        if self.etcd is None:
            raise ValueError("etcd fault without an etcd")
        if e["fault"] == "etcd-stop":
            self.etcd.sigstop()
            try:
                time.sleep(e.get("for", 1.0))
            finally:
                self.etcd.sigcont()
        else:
            self.etcd.kill9()
            if self.restart_after:
                time.sleep(self.restart_after)
            self.etcd.restart()
