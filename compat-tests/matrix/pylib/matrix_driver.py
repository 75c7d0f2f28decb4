"""What every Python matrix driver shares (see notes in compat-tests/matrix):
argument parsing, unique topic/group names, bounded waits, and running each
scenario with a time limit while printing exactly one JSON line for it.

A driver module builds a dict scenario id -> callable(ctx) or Unsupported(why)
and calls run(client_id, scenarios). A callable passes by returning (optionally
a short detail string) and fails by raising; it never prints to stdout.

With --security FILE only the "security" scenarios run (and only then): for
each, ctx.security is that column's entry of FILE (its keys:
../security_columns.py, column()) and ctx.bootstrap its listener's address.
"""

import argparse
import json
import os
import random
import signal
import string
import sys
import time
import traceback

SCENARIO_SECONDS = 90  # one scenario's limit: generous for a loaded machine (Kafka's first group or
                       # idempotent producer also creates __consumer_offsets or __transaction_state)
MATRIX_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class Unsupported:
    def __init__(self, why):
        self.why = why


class ScenarioTimeout(Exception):
    pass


def log(*args):
    print(*args, file=sys.stderr, flush=True)


def wait_until(what, predicate, timeout=20.0, step=0.2):
    """Calls predicate until it returns something truthy (returned) or raises after timeout."""
    deadline = time.monotonic() + timeout
    last = None
    while True:
        try:
            got = predicate()
            if got:
                return got
        except Exception as e:  # transient errors while a broker catches up; reported if it never does
            last = e
        if time.monotonic() >= deadline:
            raise AssertionError("timed out after %.0f s waiting for %s%s" % (timeout, what, " (last error: %s)" % last if last else ""))
        time.sleep(step)


def brokers_from_env(bootstrap):
    """{node id: (host, port)} of every broker the harness started: $MATRIX_BROKERS
    ("1@host:port,2@host:port,..."), else the one broker of --bootstrap as node 1."""
    spec = os.environ.get("MATRIX_BROKERS") or "1@" + bootstrap.split(",")[0]
    brokers = {}
    for entry in spec.split(","):
        node, addr = entry.split("@", 1)
        host, port = addr.rsplit(":", 1)
        brokers[int(node)] = (host, int(port))
    return brokers


class Context:
    def __init__(self, client_id, bootstrap, cache):
        self.client_id = client_id
        self.bootstrap = bootstrap
        self.host, port = bootstrap.split(",")[0].rsplit(":", 1)
        self.port = int(port)
        self.brokers = brokers_from_env(bootstrap)
        self.cluster = len(self.brokers) > 1
        self.cache = cache
        self.run_id = "".join(random.choice(string.ascii_lowercase + string.digits) for _ in range(6))
        self.scenario = None
        self.security = None  # a security column's entry of --security FILE, while its scenario runs

    def secure(self, column):
        """Points the context at one security column's listener."""
        self.security = column
        self.bootstrap = column["bootstrap"]
        self.host, port = self.bootstrap.rsplit(":", 1)
        self.port = int(port)

    def name(self, suffix=""):
        """A topic or group name unique to this client, run and scenario."""
        return "%s-%s-%s%s" % (self.client_id, self.run_id, self.scenario.replace("_", "-"), "-" + suffix if suffix else "")

    def kill_leader(self, topic, partition=0):
        """Asks the harness (run_matrix.py, reading stdout) to SIGKILL the
        partition's leader; it starts it again after a new leader is named."""
        print(json.dumps({"event": "kill_leader", "scenario": self.scenario, "topic": topic,
                          "partition": partition}), flush=True)


def feed_through_failover(ctx, topic, step, progress, leader, old, before, after, what, errors=lambda: "",
                          every=0.5):
    """The leader_failover scenarios' common course: step() (send a record,
    take what came) until progress() counts `before`, then ask the harness
    to kill topic-0's leader, and step on until leader() names another
    broker (asked every `every` s; a failing ask is asked again) and
    progress() grew `after` since. Returns the new leader. `what` names
    progress in the failures, `errors()` adds the client's errors."""
    deadline = time.monotonic() + 20
    while progress() < before:
        assert time.monotonic() < deadline, "%d of %d %s before the kill" % (progress(), before, what)
        step()
    ctx.kill_leader(topic, 0)
    killed, new, at_change, checked = time.monotonic(), None, None, 0.0
    while at_change is None or progress() < at_change + after:
        assert time.monotonic() < killed + 60, "60 s after the kill: new leader %s, %d %s%s" % (
            new, progress(), what, errors())
        step()
        if new is None and time.monotonic() - checked > every:
            checked = time.monotonic()
            try:
                now = leader()
                if now not in (old, -1):
                    new, at_change = now, progress()
            except Exception:  # asked the dead broker, or no leader yet: ask again
                pass
    return new


NEEDS_CLUSTER = Unsupported("needs a cluster: the harness runs it with run_matrix.py --cluster")


def scenario_list():
    with open(os.path.join(MATRIX_DIR, "scenarios.json")) as f:
        ids = json.load(f)
    # Either a plain list of ids or a list of {"id": ...} objects.
    return [{"id": x} if isinstance(x, str) else x for x in ids]


# The security columns' scenario ids (scenarios.json's "security": true).
SECURITY_COLUMNS = tuple(x["id"] for x in scenario_list() if x.get("security"))


def _on_alarm(signum, frame):
    raise ScenarioTimeout("scenario exceeded %d s" % SCENARIO_SECONDS)


def emit(scenario, status, detail):
    detail = " ".join(str(detail).split())
    if len(detail) > 300:
        detail = detail[:297] + "..."
    print(json.dumps({"scenario": scenario, "status": status, "detail": detail}), flush=True)


def parse_args():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bootstrap", required=True)
    ap.add_argument("--cache", required=True)
    ap.add_argument("--security", help="JSON file of the security columns: run only those scenarios")
    ap.add_argument("--only", default=os.environ.get("MATRIX_ONLY"),
                    help="comma-separated scenario ids (debugging; run_matrix.py --only sets $MATRIX_ONLY)")
    return ap.parse_args()


def run(client_id, scenarios, args=None):
    args = args or parse_args()
    ctx = Context(client_id, args.bootstrap, args.cache)
    ids = [x["id"] for x in scenario_list() if bool(x.get("security")) == bool(args.security)]
    cluster_only = {x["id"] for x in scenario_list() if x.get("cluster_only")}
    columns = {}
    if args.security:
        with open(args.security) as f:
            columns = json.load(f)
    if args.only:
        ids = [i for i in ids if i in args.only.split(",")]
    signal.signal(signal.SIGALRM, _on_alarm)
    for sid in ids:
        fn = scenarios.get(sid)
        if fn is not None and sid in cluster_only and not ctx.cluster:
            fn = NEEDS_CLUSTER
        if fn is None and (sid in cluster_only or args.security):
            continue  # not written for this driver yet: run_matrix.py reports it (about.json's not_implemented)
        if fn is None:
            emit(sid, "fail", "the %s driver has no code for this scenario" % client_id)
            continue
        if isinstance(fn, Unsupported):
            emit(sid, "unsupported", fn.why)
            continue
        ctx.scenario = sid
        if args.security:
            if sid not in columns:
                emit(sid, "fail", "%s has no entry for this column" % args.security)
                continue
            ctx.secure(columns[sid])
        start = time.monotonic()
        log("== %s: %s" % (client_id, sid))
        signal.alarm(SCENARIO_SECONDS)
        try:
            detail = fn(ctx)
            signal.alarm(0)
            emit(sid, "pass", detail or "")
            log("   pass (%.1f s)" % (time.monotonic() - start))
        except BaseException as e:  # includes ScenarioTimeout; KeyboardInterrupt still stops the run below
            signal.alarm(0)
            if isinstance(e, KeyboardInterrupt):
                raise
            reason = "%s: %s" % (type(e).__name__, e) if str(e) else type(e).__name__
            emit(sid, "fail", reason)
            traceback.print_exc(file=sys.stderr)
            log("   FAIL (%.1f s): %s" % (time.monotonic() - start, reason))
    return 0
