#!/usr/bin/env python3
"""Runs the compatibility matrix's client drivers against one broker, or
against a three-broker cluster (--cluster).

For each client (a directory under clients/ with an executable `run` and an
about.json) it starts a FRESH broker — Runnel (runnel_harness.Runnel) or
Apache Kafka 4.x in KRaft mode (kafka_harness.Kafka) — with the same
settings, or with --cluster a fresh cluster of three — Runnel
(cluster_harness.Cluster: etcd and three `runnel serve`) or Kafka
(kafka_cluster_harness.KafkaCluster: three KRaft broker+controller nodes) —
with replication factor 3 and min.insync.replicas 2. It runs

    MATRIX_BROKERS=1@127.0.0.1:P1[,2@127.0.0.1:P2,3@127.0.0.1:P3] \
        clients/<client>/run --bootstrap 127.0.0.1:P1[,127.0.0.1:P2,...] --cache DIR

(a cluster's bootstrap lists every broker, as a production client's would:
a client bootstrapped from one broker could not start while that broker
is the one killed) and reads one JSON line per scenario from its stdout:
    {"scenario": "<id>", "status": "pass"|"fail"|"unsupported", "detail": "..."}
and, from a cluster scenario, requests to the harness:
    {"event": "kill_leader", "topic": "<t>", "partition": <p>}
which SIGKILLs the partition's leader (from Metadata), waits until the
survivors name a new leader, keeps the old one down 2 s more and starts it
again (same dir and port); what it did is appended to the scenario's detail,
and the scenario fails if that broker is down again when the driver ends.

With --security it starts one broker per client with a listener per
security column (security_columns.py: SSL, mTLS, SASL_PLAINTEXT with PLAIN
and SCRAM, SASL_SSL; the same settings on Runnel and Kafka), certificates
made once per run, SCRAM users created, and runs the driver with
`--security FILE` (what each column's client needs, JSON): the driver runs
only the "security" scenarios, the other modes never do.

A scenario from scenarios.json that the driver does not report counts as a
failure, as does a driver that exceeds its time, except a "cluster_only"
scenario: on one broker it is "unsupported" (it needs a cluster), and in a
cluster a driver whose about.json lists it under "not_implemented" gets
"not_implemented" (shown as not run, not counted as a failure); so does a
security scenario listed there (a driver listing them all is not started).
A scenario with a "runnel_cluster_gap" is one Runnel does not serve yet in
a cluster: on a Runnel cluster the driver is not asked to run it
($MATRIX_ONLY lists the others) and it is recorded as a failure whose
detail begins "not yet in Runnel" with the gap, which does not fail the run
(MATRIX.md shows it, and counts it under "passes on Kafka, fails on
Runnel"). A failure
the client's about.json lists under "known_failures" (a client bug, on the
brokers and with the detail the entry names: known_failure()) is kept in
the results but does not fail the run.
Results are merged into --out (one JSON object per client), so clients can
be run one at a time. Exit status 1 when any scenario failed on this broker.

    /usr/bin/python3 compat-tests/matrix/run_matrix.py --broker runnel \
        --runnel build/release/runnel --clients java,franz-go --out results/runnel.json
    /usr/bin/python3 compat-tests/matrix/run_matrix.py --broker kafka --cluster \
        --clients java --out results/kafka-cluster.json
    /usr/bin/python3 compat-tests/matrix/run_matrix.py --broker kafka --security \
        --clients java --out results/kafka-security.json
"""

import argparse
import concurrent.futures
import json
import os
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

import runnel_harness  # noqa: E402
import security_columns  # noqa: E402

CLIENTS = os.path.join(HERE, "clients")
REPO = os.path.dirname(os.path.dirname(HERE))

# Both brokers get these, beyond the harness's own listener and log dir:
# no 3 s wait before the first rebalance (Kafka's default would make every
# group scenario slower without testing anything more).
BROKER_SETTINGS = {
    "auto.create.topics.enable": "true",
    "num.partitions": "1",
    "group.initial.rebalance.delay.ms": "0",
}

# One Runnel broker also serves HTTP (its admin listener's REST endpoints),
# named to the drivers as $MATRIX_HTTP; Kafka has no HTTP ingest.
RUNNEL_HTTP = {"runnel.admin.listeners": "http://127.0.0.1:0"}

# A cluster's brokers get these too: every partition (the offsets topic's
# too) on all three, acks=all needing two of them. Both systems detect a
# dead broker after 3 s (cluster_harness.Cluster's session timeout; Kafka's
# default is 9 s), so a failover takes about as long on either.
CLUSTER_SIZE = 3
CLUSTER_SETTINGS = dict(BROKER_SETTINGS, **{
    "default.replication.factor": "3",
    "min.insync.replicas": "2",
    "offsets.topic.replication.factor": "3",
    "broker.session.timeout.ms": "3000",
    "broker.heartbeat.interval.ms": "1000",
})
KEEP_DOWN_AFTER_ELECTION = 2.0  # seconds the killed leader stays down once a new one is named


def scenario_list():
    with open(os.path.join(HERE, "scenarios.json")) as f:
        return json.load(f)


def scenarios(security=False):
    """The ids of one mode: the security columns, or every other scenario."""
    return [s["id"] for s in scenario_list() if bool(s.get("security")) == security]


def cluster_only():
    return {s["id"] for s in scenario_list() if s.get("cluster_only")}


RUNNEL_GAP = "not yet in Runnel: "  # how a runnel_cluster_gap's detail begins (make_matrix.py)


def runnel_gaps(args):
    """{scenario: what Runnel lacks} of the scenarios this run does not ask for."""
    if args.broker != "runnel" or not args.cluster:
        return {}
    return {s["id"]: s["runnel_cluster_gap"] for s in scenario_list() if s.get("runnel_cluster_gap")}


def all_clients():
    names = [d for d in os.listdir(CLIENTS) if os.path.isfile(os.path.join(CLIENTS, d, "run"))]
    return sorted(names, key=lambda d: (about(d).get("order", 1000), d))


def about(client):
    try:
        with open(os.path.join(CLIENTS, client, "about.json")) as f:
            return json.load(f)
    except OSError:
        return {}


class SingleBroker:
    """One broker, seen through the calls run_client makes of a cluster."""

    def __init__(self, broker, security_file=None):
        self.broker = broker
        self.bootstrap = broker.bootstrap
        self.brokers_env = "1@" + broker.bootstrap
        self.security_file = security_file  # --security FILE for the driver
        # $MATRIX_HTTP for the driver: Runnel's admin listener (its REST endpoints).
        admin_port = broker.admin_port() if hasattr(broker, "admin_port") else None
        self.http = "http://127.0.0.1:%d" % admin_port if admin_port else None

    def kill_leader(self, topic, partition):
        return "no cluster: kill_leader ignored"

    def down_again(self):
        return []

    def log_text(self):
        return self.broker.log_text()

    def close(self):
        self.broker.close()


class ThreeBrokers:
    """A cluster (cluster_harness.Cluster or kafka_cluster_harness.KafkaCluster)
    and what the drivers may ask of it."""

    def __init__(self, cluster):
        self.cluster = cluster
        ids = sorted(cluster.brokers)
        self.bootstrap = ",".join(cluster.brokers[i].bootstrap for i in ids)
        self.brokers_env = ",".join("%d@%s" % (i, cluster.brokers[i].bootstrap) for i in ids)
        # A broker gets SIGKILL when the thread that started it ends
        # (PR_SET_PDEATHSIG follows the thread, so that none outlives the
        # harness): one restarted by kill_leader's own short-lived thread
        # died again the moment it had started. Restarts run on this one
        # thread, which ends in close(), after the brokers are stopped.
        self.starter = concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="restarts")
        self.restarted = []  # node ids kill_leader started again

    def live(self):
        return [i for i in sorted(self.cluster.brokers) if self.cluster.brokers[i].alive()]

    def leader(self, topic, partition, among):
        """The leader the first of `among` that answers names, if it is one of `among`."""
        for i in among:
            try:
                parts = self.cluster.metadata(i, [topic])["topics"][topic]["partitions"]
                leader = parts[partition]["leader"]
                return leader if leader in among else None
            except Exception:  # not answering yet, or no such partition yet
                continue
        return None

    def kill_leader(self, topic, partition):
        """SIGKILLs topic-partition's leader, waits for a new one, keeps
        the old one down KEEP_DOWN_AFTER_ELECTION s more, starts it again.
        Returns what it did (for the scenario's detail)."""
        from cluster_harness import wait_until
        t0 = time.monotonic()
        old = wait_until(lambda: self.leader(topic, partition, self.live()), 30,
                         "a leader of %s-%d" % (topic, partition))
        self.cluster.brokers[old].kill9()
        killed = time.monotonic()
        survivors = [i for i in self.live() if i != old]
        new = wait_until(lambda: self.leader(topic, partition, survivors), 60,
                         "the survivors %s to name a new leader of %s-%d" % (survivors, topic, partition))
        elected = time.monotonic() - killed
        time.sleep(KEEP_DOWN_AFTER_ELECTION)
        self.starter.submit(self.cluster.brokers[old].start).result()
        self.restarted.append(old)
        return "harness: leader %d of %s-%d SIGKILLed %.1f s after the request, node %d leader %.1f s later, " \
               "%d restarted after %.1f s" % (old, topic, partition, killed - t0, new, elected, old,
                                              time.monotonic() - killed)

    def down_again(self):
        """The restarted brokers that are not running any more."""
        return [i for i in self.restarted if not self.cluster.brokers[i].alive()]

    def log_text(self):
        if hasattr(self.cluster, "log_text"):
            return self.cluster.log_text()
        # etcd last, so that the tail printed on a failure keeps it.
        return "".join("===== %s =====\n%s" % (b.name, b.log_text()[-6000:])
                       for b in list(self.cluster.brokers.values()) + [self.cluster.etcd])

    def close(self):
        try:
            self.cluster.close()
        finally:
            self.starter.shutdown()


def start_secured_broker(kind, runnel_binary, cache, certs):
    """One broker with every security column's listener (security_columns),
    its SCRAM users, and the driver's --security file in its temp dir."""
    settings = dict(BROKER_SETTINGS, **security_columns.broker_settings(certs))
    if kind == "runnel":
        broker = runnel_harness.Runnel(runnel_binary, dict(settings, listeners=security_columns.runnel_listeners()))
    else:
        import kafka_harness
        broker = kafka_harness.Kafka(cache_dir=os.path.join(cache, "kafka-jars"), overrides=settings,
                                     listeners=security_columns.LISTENERS)
    try:
        broker.start()
        ports = broker.listener_ports()
        security_columns.add_scram_users(ports["PLAINTEXT"])
        path = security_columns.write_file(os.path.join(broker.tmp, "security.json"), certs, ports)
    except BaseException:
        broker._dump()
        broker.close()
        raise
    return SingleBroker(broker, path)


def start_broker(kind, runnel_binary, cache, cluster):
    if kind == "runnel":
        if cluster:
            import cluster_harness
            return ThreeBrokers(cluster_harness.Cluster(CLUSTER_SIZE, runnel_binary, CLUSTER_SETTINGS,
                                                        session_timeout_ms=3000, heartbeat_interval_ms=1000)
                                .__enter__())
        return SingleBroker(runnel_harness.Runnel(runnel_binary, dict(BROKER_SETTINGS, **RUNNEL_HTTP)).start())
    jars = os.path.join(cache, "kafka-jars")
    if cluster:
        import kafka_cluster_harness
        c = kafka_cluster_harness.KafkaCluster(jars, CLUSTER_SETTINGS, CLUSTER_SIZE)
        try:
            return ThreeBrokers(c.start())
        except BaseException:
            c._dump()
            c.close()
            raise
    import kafka_harness
    return SingleBroker(kafka_harness.Kafka(cache_dir=jars, overrides=BROKER_SETTINGS).start())


def pump_stderr(stream, client):
    for line in stream:
        sys.stderr.write("[%s] %s" % (client, line.decode("utf-8", "replace")))
    sys.stderr.flush()


def run_client(client, brokers, cache, timeout, only=None):
    """Runs one driver (with `only`, just those scenarios: $MATRIX_ONLY);
    returns ({scenario: {status, detail}}, problem or None)."""
    cmd = [os.path.join(CLIENTS, client, "run"), "--bootstrap", brokers.bootstrap, "--cache", cache]
    if getattr(brokers, "security_file", None):
        cmd += ["--security", brokers.security_file]
    proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            start_new_session=True, env=dict(os.environ, MATRIX_BROKERS=brokers.brokers_env,
                                                             **({"MATRIX_ONLY": ",".join(only)} if only else {}),
                                                             **({"MATRIX_HTTP": brokers.http}
                                                                if getattr(brokers, "http", None) else {})))
    err = threading.Thread(target=pump_stderr, args=(proc.stderr, client), daemon=True)
    err.start()
    results = {}
    harness_notes = {}  # scenario -> what the harness did for it
    actions = []
    killed = threading.Event()

    def kill():
        killed.set()
        os.killpg(proc.pid, 9)

    timer = threading.Timer(timeout, kill)
    timer.start()
    try:
        for raw in proc.stdout:
            line = raw.decode("utf-8", "replace").strip()
            if not line.startswith("{"):
                sys.stderr.write("[%s stdout] %s\n" % (client, line))
                continue
            try:
                r = json.loads(line)
                if r.get("event") == "kill_leader":
                    # In a thread: the driver goes on producing and consuming meanwhile.
                    act = threading.Thread(target=kill_leader, args=(brokers, r, harness_notes, client),
                                           daemon=True)
                    act.start()
                    actions.append(act)
                    continue
                results[r["scenario"]] = {"status": r["status"], "detail": str(r.get("detail", ""))[:500]}
            except (ValueError, KeyError) as e:
                sys.stderr.write("[%s] unreadable result line %r: %s\n" % (client, line, e))
        rc = proc.wait()
    finally:
        timer.cancel()
        for act in actions:
            act.join(120)
    err.join(10)
    # A broker kill_leader restarted must still be running when the driver
    # is done: the scenario is one failure, not a broker that dies again.
    down = brokers.down_again()
    for sid, note in harness_notes.items():
        if sid in results:
            if down:
                results[sid]["status"] = "fail"
                note += "; node(s) %s down again when the driver ended" % ",".join(map(str, down))
            results[sid]["detail"] = (results[sid]["detail"] + " [" + note + "]")[:700]
    if killed.is_set():
        return results, "driver killed after %d s" % timeout
    if rc != 0:
        return results, "driver exited with %d" % rc
    return results, None


def kill_leader(brokers, event, notes, client):
    sid = event.get("scenario", "leader_failover")
    try:
        note = brokers.kill_leader(event["topic"], int(event.get("partition", 0)))
    except Exception as e:
        note = "harness: kill_leader failed: %s: %s" % (type(e).__name__, e)
    sys.stderr.write("[%s] %s\n" % (client, note))
    notes[sid] = note


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--broker", choices=["runnel", "kafka"], required=True)
    ap.add_argument("--cluster", action="store_true", help="three brokers, replication factor 3")
    ap.add_argument("--security", action="store_true", help="the security columns: SSL, mTLS, SASL listeners")
    ap.add_argument("--runnel", default=os.path.join(REPO, "build", "release", "runnel"))
    ap.add_argument("--clients", default="", help="comma-separated; default: every client")
    ap.add_argument("--cache", default=os.path.join(REPO, "build", "matrix-cache"))
    ap.add_argument("--out", default="")
    ap.add_argument("--timeout", type=int, default=600, help="seconds per driver")
    ap.add_argument("--only", default="", help="comma-separated scenario ids (debugging): only these are "
                    "recorded; drivers that read $MATRIX_ONLY run only these")
    args = ap.parse_args()
    # The runnel-cli row drives the `runnel` binary itself, whichever broker runs.
    os.environ["MATRIX_RUNNEL"] = os.path.abspath(args.runnel)
    if args.security and args.cluster:
        ap.error("--security runs on one broker: not with --cluster")

    cache = os.path.abspath(args.cache)
    os.makedirs(cache, exist_ok=True)
    wanted = [c for c in args.clients.split(",") if c] or all_clients()
    ids = scenarios(args.security)
    if args.only:
        ids = [sid for sid in ids if sid in args.only.split(",")]
        os.environ["MATRIX_ONLY"] = ",".join(ids)
    only_in_cluster = cluster_only()
    where = args.broker + (" cluster" if args.cluster else " security" if args.security else "")
    certs = None
    if args.security:
        from test_certs import Certs
        certs = Certs()  # once per run, for every client's broker
    merged = {}
    if args.out and os.path.exists(args.out):
        with open(args.out) as f:
            merged = json.load(f)

    try:
        failed = run_clients(args, wanted, ids, only_in_cluster, where, cache, certs, merged)
    finally:
        if certs:
            certs.close()
    if failed:
        print("FAILED on %s: %s" % (where, ", ".join(failed)), flush=True)
        return 1
    return 0


def known_failure(client, sid, broker, detail):
    """Why a failure of sid on this broker is the client's bug, from its
    about.json's "known_failures": {scenario: entry}, or None. An entry is
    the why itself (any failure, either broker), or {"why": ..., "brokers":
    those it fails on (default both), "detail": text the failure's detail
    contains}: a failure on another broker, or with another detail, is not
    excused."""
    entry = about(client).get("known_failures", {}).get(sid)
    if entry is None or isinstance(entry, str):
        return entry
    if broker not in entry.get("brokers", ["kafka", "runnel"]) or entry.get("detail", "") not in detail:
        return None
    return entry["why"]


def run_clients(args, wanted, ids, only_in_cluster, where, cache, certs, merged):
    """Runs each client's driver on its fresh broker, merging into args.out; the failures."""
    failed = []
    for client in wanted:
        if not os.path.isfile(os.path.join(CLIENTS, client, "run")):
            sys.exit("no such client: %s" % client)
        t0 = time.monotonic()
        pending = about(client).get("not_implemented", {})
        gaps = {sid: why for sid, why in runnel_gaps(args).items() if sid in ids}
        to_run = [sid for sid in ids if sid not in gaps]
        if (args.security and all(sid in pending for sid in ids)) or not to_run:
            results, problem, broker_log = {}, None, ""  # no code for any column, or nothing to ask: no broker
        else:
            if args.security:
                broker = start_secured_broker(args.broker, args.runnel, cache, certs)
            else:
                broker = start_broker(args.broker, args.runnel, cache, args.cluster)
            try:
                results, problem = run_client(client, broker, cache, args.timeout, to_run if gaps else None)
            finally:
                broker_log = broker.log_text()
                broker.close()
        for sid, why in gaps.items():
            results[sid] = {"status": "fail", "detail": RUNNEL_GAP + why}
        for sid in ids:
            if sid in results:
                continue
            if sid in only_in_cluster and not args.cluster:
                results[sid] = {"status": "unsupported", "detail": "needs a cluster: the harness runs it with run_matrix.py --cluster"}
            elif (sid in only_in_cluster or args.security) and sid in pending:
                results[sid] = {"status": "not_implemented", "detail": "not run: %s" % pending[sid]}
            else:
                results[sid] = {"status": "fail", "detail": problem or "driver reported nothing"}
        # A client bug (about.json's known_failures, see known_failure())
        # stays a failure in the results, but is not Runnel's to fix.
        bad = []
        for sid in ids:
            why = known_failure(client, sid, args.broker, results[sid]["detail"])
            if results[sid]["status"] != "fail":
                if why is not None and results[sid]["status"] == "pass":
                    sys.stderr.write("[%s] %s passes on %s: its known_failures entry may be out of date\n"
                                     % (client, sid, where))
            elif sid in gaps:
                pass  # Runnel's, declared in scenarios.json; kept in the results
            elif why is None:
                bad.append(sid)
            else:
                results[sid]["detail"] = "known client bug (%s): %s" % (why, results[sid]["detail"])
        for sid in ids:
            r = results[sid]
            print("%-20s %-24s %-11s %s" % (client, sid, r["status"], r["detail"][:120]), flush=True)
        if bad:
            failed += ["%s/%s" % (client, sid) for sid in bad]
            tail = broker_log[-20000:]
            sys.stderr.write("----- %s log tail (%s) -----\n%s\n----- end -----\n" % (where, client, tail))
        merged[client] = {
            "title": about(client).get("title", client),
            "order": about(client).get("order", 1000),
            "broker": args.broker,
            "brokers": CLUSTER_SIZE if args.cluster else 1,
            "date": time.strftime("%Y-%m-%d"),
            "seconds": round(time.monotonic() - t0, 1),
            "scenarios": {sid: results[sid] for sid in ids},
        }
        if args.security:
            merged[client]["security"] = True
        if args.out:
            tmp = args.out + ".tmp"
            with open(tmp, "w") as f:
                json.dump(merged, f, indent=1, sort_keys=True)
                f.write("\n")
            os.replace(tmp, args.out)
        print("%s on %s: %d of %d scenarios failed (%.0f s)" % (client, where, len(bad), len(ids),
                                                               time.monotonic() - t0), flush=True)
    return failed


if __name__ == "__main__":
    sys.exit(main())
