#!/usr/bin/python3
"""Failover times of a three-broker Runnel cluster beside a three-node
Apache Kafka 4.1.1 KRaft cluster, in the same run, on the same machine
(issue 13).

  Runnel: Debian's etcd (/usr/bin/etcd, or $RUNNEL_ETCD) and three
          `runnel serve` brokers (release build), node ids 1-3.
  Kafka:  three combined broker+controller nodes (process.roles=
          broker,controller, a static controller.quorum.voters of all
          three), node ids 1-3, each formatted with the same cluster id,
          started as kafka-server-start.sh does (compat-tests/kafka_harness.py:
          -Xmx1G -Xms1G, G1; jars from Maven Central, cached in
          build/kafka-jars).

Every process listens on 127.0.0.1 on ports picked free by the kernel, keeps
its data in a fresh temporary directory, and is stopped by its pid. Both
systems run with the same broker.session.timeout.ms and
broker.heartbeat.interval.ms (one settings row each; Kafka's defaults
9000/2000 first) and with auto.leader.rebalance.enable=false, so no
preferred-leader election moves a leader inside a measurement. Everything
else is each system's default (Kafka's controller.quorum.election.timeout.ms
1000 and fetch timeout 2000 among them).

Two scenarios, --rounds times each per system and settings row:

  leader:     a fresh topic, 1 partition, replication factor 3,
              min.insync.replicas=2, its leader a broker that is not the
              controller (a manual assignment), the full ISR agreed. An
              idempotent acks=all producer (librdkafka 2.0.2, the same
              client for both, linger.ms=0) sends one 100-byte record
              every 5 ms; after 2 s of
              acknowledgements the leader is SIGKILLed. Measured: from the
              kill to the first acknowledgement of a record produced after
              the kill (so the acknowledgement came from a new leader),
              and, polled every 20 ms in another thread, until the
              survivors' Metadata name a live leader.
              The killed broker is started again and the round ends once
              it is back in the partition's ISR.
  controller: the controller is SIGKILLed (Runnel: the broker etcd's
              controller key holds; Kafka: the KRaft quorum leader, from
              kafka-metadata-quorum describe --status). Measured, from the
              kill, in two threads at once:
                raw:   CreateTopics v4 (1 partition, replication factor 2,
                       a new name each try) sent straight to a surviving
                       broker, alternating between the two, until one
                       answers NONE;
                admin: librdkafka's AdminClient.create_topics (a new
                       client each try, bootstrapped on the survivors,
                       operation timeout 1.5 s, request timeout 2 s, so
                       about 2 s resolution; it sends to the controller
                       Metadata names) until one succeeds;
                named: Runnel only: until both survivors' Metadata name a
                       survivor as controller (a live broker, as KRaft's
                       brokers name, not the elected controller).
              The killed node is started again and rejoins before the
              next round.

Results: a table on stdout and bench/results/cluster_failover-<date>.json
(every measurement, the producer's errors, the load average). A benchmark,
never part of the test suite.

  /usr/bin/python3 bench/cluster_failover.py --runnel build/release/runnel
      [--rounds 5] [--settings 9000/2000 3000/1000] [--skip-kafka]
      [--only leader|controller] [--kafka-cache DIR]
"""

import argparse
import datetime
import json
import os
import statistics
import subprocess
import sys
import threading
import time
import uuid

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(REPO, "compat-tests"))
import kafka_harness  # noqa: E402
from cluster_harness import Etcd, wait_until  # noqa: E402
from kafka_cluster_harness import KafkaCluster, stop_all  # noqa: E402
import kafka_wire as kw  # noqa: E402
import runnel_harness  # noqa: E402
from run_suite import loadavg, log  # noqa: E402  (the suite's, beside this file)
from confluent_kafka import Producer  # noqa: E402
from confluent_kafka.admin import AdminClient, NewTopic  # noqa: E402

IDS = [1, 2, 3]
SEND_EVERY = 0.005
WARMUP = 2.0
MEASURE_LIMIT = 120.0


def admin(bootstrap):
    # log_level 2: librdkafka's connection-refused lines for the killed node would fill the output.
    return AdminClient({"bootstrap.servers": bootstrap, "socket.timeout.ms": 5000, "log_level": 2})


def describe(bootstrap, topic=None):
    return admin(bootstrap).list_topics(topic, timeout=5)


# -- Runnel -------------------------------------------------------------------


class RunnelCluster:
    name = "runnel"
    label = "Runnel"

    def __init__(self, binary, session_ms, heartbeat_ms, extra=None):
        self.etcd = Etcd()
        common = {
            "broker.session.timeout.ms": str(session_ms),
            "broker.heartbeat.interval.ms": str(heartbeat_ms),
            "auto.leader.rebalance.enable": "false",
        }
        common.update(extra or {})
        self.nodes = {i: runnel_harness.Runnel(binary, dict(common, **{"node.id": str(i)})) for i in IDS}

    def start(self):
        self.etcd.start()
        for n in self.nodes.values():
            n.overrides["runnel.etcd.endpoints"] = self.etcd.endpoint
            n.start()
        self.wait_formed()

    def bootstrap(self, ids=None):
        return ",".join(self.nodes[i].bootstrap for i in (ids or IDS))

    def live(self):
        return [i for i in IDS if self.nodes[i].alive()]

    def wait_formed(self, timeout=60):
        def formed():
            for i in self.live():
                md = describe(self.nodes[i].bootstrap)
                if sorted(md.brokers) != IDS or md.controller_id not in IDS:
                    return False
            return True
        wait_until(formed, timeout, "every broker to list all three and a controller")

    def controller(self):
        # The broker elected in etcd (runnel.etcd.prefix's default): Metadata
        # names a live broker instead, as KRaft's brokers do.
        kv = self.etcd.get("/runnel/controller")
        return json.loads(kv["value"])["id"] if kv else None

    def kill9(self, i):
        self.nodes[i].kill9()

    def restart(self, i):
        self.nodes[i].start()
        self.wait_formed()

    def close(self):
        stop_all(self.nodes.values(), 20)
        for n in self.nodes.values():
            n.close()
        self.etcd.close()


# -- Kafka --------------------------------------------------------------------


def kafka_cluster(cache_dir, session_ms, heartbeat_ms):
    return KafkaCluster(cache_dir, {
        "broker.session.timeout.ms": str(session_ms),
        "broker.heartbeat.interval.ms": str(heartbeat_ms),
        "auto.leader.rebalance.enable": "false",
    }, n=len(IDS), prefix="bench-kafka-")


# -- scenarios ------------------------------------------------------------------


def partition0(cluster, topic, ids=None):
    md = describe(cluster.bootstrap(ids or cluster.live()), topic)
    t = md.topics.get(topic)
    if t is None or t.error is not None or 0 not in t.partitions:
        return None
    return t.partitions[0]


def create(cluster, topic, assignment, config):
    client = admin(cluster.bootstrap(cluster.live()))
    fut = client.create_topics([NewTopic(topic, 1, replica_assignment=[assignment], config=config)],
                               request_timeout=30)[topic]
    fut.result(40)


def leader_round(cluster, rnd):
    ctrl = cluster.controller()
    leader = [i for i in IDS if i != ctrl][rnd % 2]
    rest = [i for i in IDS if i != leader]
    topic = "failover-leader-%d-%s" % (rnd, uuid.uuid4().hex[:6])
    create(cluster, topic, [leader] + rest, {"min.insync.replicas": "2"})
    wait_until(lambda: (lambda p: p is not None and p.leader == leader and sorted(p.isrs) == IDS)(
        partition0(cluster, topic)), 60, "%s led by %d with the full ISR" % (topic, leader))

    errors = []
    acks = []  # (ack time, produce time)
    p = Producer({"bootstrap.servers": cluster.bootstrap(), "acks": "all", "enable.idempotence": True,
                  "linger.ms": 0, "message.timeout.ms": 300000, "log_level": 2,
                  "error_cb": lambda e: errors.append(("client", time.monotonic(), str(e)))})

    def delivered(err, msg, sent):
        now = time.monotonic()
        if err is not None:
            errors.append(("delivery", now, str(err)))
        else:
            acks.append((now, sent))

    next_send = [time.monotonic()]

    def send():
        """One 100-byte record every SEND_EVERY seconds; serves delivery callbacks meanwhile."""
        now = time.monotonic()
        if now >= next_send[0]:
            next_send[0] = max(next_send[0] + SEND_EVERY, now - SEND_EVERY)
            p.produce(topic, value=b"x" * 100, partition=0, on_delivery=lambda e, m: delivered(e, m, now))
        p.poll(max(0.0, next_send[0] - time.monotonic()))

    start = time.monotonic()
    while time.monotonic() - start < 30 and not (acks and acks[-1][0] - acks[0][0] >= WARMUP):
        send()
    if not acks:
        raise RuntimeError("no acknowledgement before the kill")
    acked_before = len(acks)
    survivors = [i for i in IDS if i != leader]
    moved = {}
    done = threading.Event()

    def watch_metadata():
        # When the survivors' Metadata first names a live leader: the brokers' side of the failover.
        while not done.is_set() and time.monotonic() - killed < MEASURE_LIMIT:
            try:
                q = partition0(cluster, topic, survivors)
                if q is not None and q.leader in survivors:
                    moved["seconds"] = time.monotonic() - killed
                    return
            except Exception:
                pass
            time.sleep(0.02)

    cluster.kill9(leader)
    killed = time.monotonic()
    watcher = threading.Thread(target=watch_metadata)
    watcher.start()
    first = None
    while time.monotonic() - killed < MEASURE_LIMIT:
        send()
        after = [a for a, s in acks if s > killed]
        if after:
            first = after[0] - killed
            break
    done.set()
    watcher.join(30)
    p.flush(60)
    new_leader = None
    try:
        new_leader = partition0(cluster, topic).leader
    except Exception:
        pass
    log("  %s round %d: leader %d (controller %d) killed; first new acknowledgement %s s; new leader %s in "
        "Metadata after %s s; %d producer errors" % (
            cluster.label, rnd, leader, ctrl, "%.3f" % first if first is not None else "none", new_leader,
            "%.3f" % moved["seconds"] if "seconds" in moved else "none", len(errors)))
    cluster.restart(leader)
    t0 = time.monotonic()
    wait_until(lambda: (lambda q: q is not None and sorted(q.isrs) == IDS)(partition0(cluster, topic)), 120,
               "node %d back in %s's ISR" % (leader, topic))
    rejoin = time.monotonic() - t0
    return {"scenario": "leader", "round": rnd, "killed": leader, "controller": ctrl, "new_leader": new_leader,
            "seconds": first, "metadata_seconds": moved.get("seconds"), "acked_before_kill": acked_before, "acked_total": len(acks),
            "isr_rejoin_s": round(rejoin, 3),
            "errors": [(kind, round(t - killed, 3), e) for kind, t, e in errors]}


def create_raw(port, name, timeout_ms=2000):
    corr = 77
    with kw.Connection(port, timeout=timeout_ms / 1000 + 3) as c:
        body = c.call(kw.create_topics_v4(corr, [(name, 1, 2)], timeout_ms), corr)
    return {n: (e, m) for n, e, m in kw.parse_create_topics_v4(body)}[name]


def controller_round(cluster, rnd):
    ctrl = cluster.controller()
    survivors = [i for i in IDS if i != ctrl]
    tag = uuid.uuid4().hex[:6]
    # Both paths work before the kill.
    err, msg = create_raw(cluster.nodes[survivors[0]].port, "ctl-pre-%d-%s" % (rnd, tag))
    if err != 0:
        raise RuntimeError("CreateTopics before the kill answered %d %s" % (err, msg))
    results = {}
    tries = {"raw": [], "admin": []}
    stop = threading.Event()

    def raw_loop():
        k = 0
        while not stop.is_set():
            port = cluster.nodes[survivors[k % 2]].port
            try:
                err, msg = create_raw(port, "ctl-raw-%d-%s-%d" % (rnd, tag, k))
            except Exception as e:
                err, msg = -2, "%s: %s" % (type(e).__name__, e)
            tries["raw"].append((round(time.monotonic() - killed, 3), err, msg))
            if err == 0:
                results["raw"] = time.monotonic() - killed
                return
            k += 1
            time.sleep(0.02)

    def admin_loop():
        k = 0
        while not stop.is_set():
            name = "ctl-admin-%d-%s-%d" % (rnd, tag, k)
            try:
                client = admin(cluster.bootstrap(survivors))
                client.create_topics([NewTopic(name, 1, 2)], operation_timeout=1.5, request_timeout=2)[name].result(10)
                results["admin"] = time.monotonic() - killed
                tries["admin"].append((round(time.monotonic() - killed, 3), 0, ""))
                return
            except Exception as e:
                tries["admin"].append((round(time.monotonic() - killed, 3), -1, str(e)))
            k += 1
            time.sleep(0.02)

    def named_loop():
        # Kafka's Metadata names a random live broker, the killed one among them until its session ends: no such row.
        while not stop.is_set():
            try:
                if all(describe(cluster.nodes[i].bootstrap).controller_id in survivors for i in survivors):
                    results["named"] = time.monotonic() - killed
                    return
            except Exception:
                pass
            time.sleep(0.05)

    cluster.kill9(ctrl)
    killed = time.monotonic()
    threads = [threading.Thread(target=raw_loop), threading.Thread(target=admin_loop)]
    if cluster.name == "runnel":
        threads.append(threading.Thread(target=named_loop))
    for t in threads:
        t.start()
    for t in threads:
        t.join(MEASURE_LIMIT)
    stop.set()
    for t in threads:
        t.join(30)
    new_ctrl = None
    try:
        if cluster.name == "runnel":
            # The killed broker stays elected until its lease expires, which
            # the measurements no longer wait for: the round ends elected anew.
            wait_until(lambda: cluster.controller() not in (None, ctrl), MEASURE_LIMIT, "a new controller elected")
        new_ctrl = cluster.controller()
    except Exception:
        pass
    def fmt(k):
        return "%.3f" % results[k] if k in results else "none"
    log("  %s round %d: controller %d killed; CreateTopics raw %s s, AdminClient %s s, new controller %s; "
        "survivors named in Metadata %s s" % (cluster.label, rnd, ctrl, fmt("raw"), fmt("admin"), new_ctrl,
                                              fmt("named")))
    cluster.restart(ctrl)
    return {"scenario": "controller", "round": rnd, "killed": ctrl, "new_controller": new_ctrl,
            "raw_seconds": results.get("raw"), "admin_seconds": results.get("admin"),
            "named_seconds": results.get("named"),
            "failed_tries": {k: [t for t in v if t[1] != 0][:20] for k, v in tries.items()},
            "tries": {k: len(v) for k, v in tries.items()}}


# -- report -------------------------------------------------------------------


def stats(values):
    vals = [v for v in values if v is not None]
    if not vals:
        return None
    return {"median": statistics.median(vals), "max": max(vals), "n": len(vals), "missing": len(values) - len(vals)}


def summarize(runs):
    rows = []
    metrics = [("leader", "seconds", "leader kill -9 -> first acks=all ack"),
               ("leader", "metadata_seconds", "leader kill -9 -> survivors' Metadata name a live leader"),
               ("controller", "raw_seconds", "controller kill -9 -> CreateTopics to a survivor OK"),
               ("controller", "admin_seconds", "controller kill -9 -> AdminClient.create_topics OK"),
               ("controller", "named_seconds", "controller kill -9 -> survivors' Metadata name a survivor")]
    for setting in sorted({r["setting"] for r in runs}, reverse=True):
        for scenario, key, label in metrics:
            row = {"setting": setting, "label": label}
            for system in ("runnel", "kafka"):
                row[system] = stats([r[key] for r in runs if r["system"] == system and r["setting"] == setting
                                     and r["scenario"] == scenario])
            if row["runnel"] is None and row["kafka"] is None:
                continue
            if row["runnel"] and row["kafka"]:
                row["ratio_median"] = row["runnel"]["median"] / row["kafka"]["median"]
                row["ratio_max"] = row["runnel"]["max"] / row["kafka"]["max"]
            rows.append(row)
    return rows


def print_table(rows):
    def s(st):
        return "-" if st is None else "%.2f / %.2f%s" % (st["median"], st["max"],
                                                         " (%d missing)" % st["missing"] if st["missing"] else "")
    print("| session/heartbeat ms | measured | Runnel median / max s | Kafka median / max s | "
          "Runnel/Kafka median | max |")
    print("|---|---|---:|---:|---:|---:|")
    for r in rows:
        print("| %s | %s | %s | %s | %s | %s |" % (
            r["setting"], r["label"], s(r["runnel"]), s(r["kafka"]),
            "**%.2f**" % r["ratio_median"] if "ratio_median" in r else "-",
            "%.2f" % r["ratio_max"] if "ratio_max" in r else "-"))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runnel", default=os.path.join(REPO, "build", "release", "runnel"))
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--settings", nargs="+", default=["9000/2000"],
                    help="broker.session.timeout.ms/broker.heartbeat.interval.ms rows (default 9000/2000)")
    ap.add_argument("--only", choices=["leader", "controller"])
    ap.add_argument("--skip-kafka", action="store_true")
    ap.add_argument("--skip-runnel", action="store_true")
    ap.add_argument("--kafka-cache", default=None)
    ap.add_argument("--runnel-set", nargs="+", default=[], metavar="KEY=VALUE",
                    help="extra Runnel settings, for diagnosis (recorded in the JSON)")
    args = ap.parse_args()

    date = datetime.date.today().isoformat()
    out_path = os.path.join(HERE, "results", "cluster_failover-%s.json" % date)
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL).stdout.decode().strip()
    doc = {"date": date, "runnel_commit": commit, "kafka_version": kafka_harness.KAFKA_VERSION,
           "rounds": args.rounds, "settings": args.settings, "load_before": loadavg(), "runs": []}
    runnel_set = dict(kv.split("=", 1) for kv in args.runnel_set)
    if runnel_set:
        doc["runnel_set"] = runnel_set
        out_path = out_path.replace(".json", "-runnel-set.json")
    scenarios = [("leader", leader_round), ("controller", controller_round)]
    if args.only:
        scenarios = [s for s in scenarios if s[0] == args.only]
    systems = [] if args.skip_runnel else ["runnel"]
    if not args.skip_kafka:
        systems.append("kafka")
    for setting in args.settings:
        session_ms, heartbeat_ms = (int(x) for x in setting.split("/"))
        for system in systems:
            log("%s, session %d ms, heartbeat %d ms: starting three nodes" % (system, session_ms, heartbeat_ms))
            cluster = (RunnelCluster(args.runnel, session_ms, heartbeat_ms, runnel_set) if system == "runnel"
                       else kafka_cluster(args.kafka_cache, session_ms, heartbeat_ms))
            try:
                t0 = time.monotonic()
                cluster.start()
                log("  formed in %.1f s" % (time.monotonic() - t0))
                for scenario, fn in scenarios:
                    for rnd in range(args.rounds):
                        rec = fn(cluster, rnd)
                        rec.update(system=system, setting=setting, load=loadavg())
                        doc["runs"].append(rec)
                        with open(out_path + ".partial", "w") as f:
                            json.dump(doc, f, indent=1)
            except BaseException:
                for n in cluster.nodes.values():
                    n._dump()
                raise
            finally:
                cluster.close()
    doc["load_after"] = loadavg()
    doc["summary"] = summarize(doc["runs"])
    with open(out_path, "w") as f:
        json.dump(doc, f, indent=1)
    if os.path.exists(out_path + ".partial"):
        os.remove(out_path + ".partial")
    print("Runnel %s, Kafka %s, %d rounds, load average %.1f before and %.1f after" % (
        commit, kafka_harness.KAFKA_VERSION, args.rounds, doc["load_before"], doc["load_after"]))
    print_table(doc["summary"])


if __name__ == "__main__":
    main()
