#!/usr/bin/python3
"""Replication numbers of a three-broker Runnel cluster beside a three-node
Apache Kafka 4.1.1 KRaft cluster, in the same run, on the same machine
(issue 14).

  Runnel:            Debian's etcd (/usr/bin/etcd, or $RUNNEL_ETCD) and three
                     `runnel serve` brokers (release build), node ids 1-3, its
                     default runnel.acks.all.fsync=true;
  Runnel (no fsync): a second such cluster with runnel.acks.all.fsync=false,
                     Kafka's durability mode;
  Kafka:             three combined broker+controller nodes (KRaft), started
                     as kafka-server-start.sh does (-Xmx1G -Xms1G, G1; jars
                     from Maven Central, cached in build/kafka-jars).

All three clusters are started once and stay up; the ones not under load sit
idle. Every process listens on 127.0.0.1 on ports picked free by the kernel,
keeps its data in a fresh temporary directory and is stopped by its pid.
Every cluster runs with the same settings: replica.lag.time.max.ms=5000 (so a
stopped follower leaves the ISR in seconds rather than Kafka's default 30),
broker.session.timeout.ms=30000 (so that follower stays registered while it
is stopped: what is measured is a stalled follower catching up, not a fenced
broker registering again), auto.leader.rebalance.enable=false; everything
else at each system's default.

Workloads, each on a fresh topic (replication factor 3,
min.insync.replicas=2, deleted afterwards); within each workload the three
systems take turns, in an order rotated every round:

  produce_100b_acksall  bench/loadgen (librdkafka) sends 100-byte records to
                        6 partitions with acks=all as fast as it can for
                        --produce-seconds: records/s, send-to-acknowledgement
                        p50/p99, and the CPU seconds the three broker
                        processes spent (utime+stime from /proc/<pid>/stat,
                        before and after) per GB of values acknowledged.
  e2e_100b_acksall      the same records at a fixed rate, half Kafka's
                        measured acks=all maximum of the first round, for
                        --e2e-seconds while a consumer in the same process
                        reads: send-to-acknowledgement and produce-to-consume
                        percentiles, and CPU seconds per GB at that rate.
  catchup_1k            4 partitions led in turn by two of the brokers, the
                        third (never the controller: Runnel's, or Kafka's
                        quorum leader) a follower of all 4. The follower gets
                        SIGSTOP; once the leaders have dropped it
                        from every ISR, --backlog-mib of 1 KiB records are
                        written (acks=1); then SIGCONT, and the clock runs
                        until a leader's Metadata shows it back in every ISR
                        (polled every 20 ms): MB/s of values caught up.
  newfollower_1k        the same backlog on 4 partitions replicated by two
                        brokers only; then AlterPartitionReassignments (as
                        kafka-reassign-partitions --execute sends it) adds
                        the third to every partition, and the clock runs
                        until it is in every ISR and
                        ListPartitionReassignments lists no move: MB/s of
                        values a new replica copied.

Results: bench/results/cluster_replication-<date>.json (every run, with the
load average before and after) and .md (medians, and the ratios
Runnel/Kafka taken within each round, then the median over rounds). A
benchmark, never part of the test suite.

  /usr/bin/python3 bench/cluster_replication.py   # --quick, --rounds N, --help
"""

import argparse
import datetime
import json
import os
import signal
import statistics
import sys
import time
import types

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(REPO, "compat-tests"))
import kafka_harness  # noqa: E402
import kafka_wire as kw  # noqa: E402
from cluster_harness import wait_until  # noqa: E402
from kafka_cluster_harness import KafkaCluster  # noqa: E402
from cluster_failover import IDS, RunnelCluster, admin  # noqa: E402  (beside this file)
from cluster_reassignment_test import alter, listed  # noqa: E402  (AlterPartitionReassignments on the wire)
from run_suite import (as_typed, bench_main, log, loadavg, median, metric_values, parse_common_args,  # noqa: E402
                       record, round_ratio, run_loadgen)
from confluent_kafka import Consumer, TopicPartition  # noqa: E402
from confluent_kafka.admin import NewTopic  # noqa: E402

SYSTEMS = ("runnel", "runnel-nofsync", "kafka")
LABEL = {"runnel": "Runnel", "runnel-nofsync": "Runnel (no fsync)", "kafka": "Kafka 4.1.1"}
DURABILITY = {
    "runnel": "an acks=all record is acknowledged once the leader and every ISR follower have fsynced it "
              "(fdatasync, group commit; a follower reports an offset only once it is on its disk): Runnel's "
              "default",
    "runnel-nofsync": "runnel.acks.all.fsync=false: acknowledged once every ISR member has it in its page "
                      "cache, as in Kafka",
    "kafka": "Kafka's defaults: acknowledged once every ISR member has it in its page cache; no fsync (flush "
             "left to the OS and segment roll). Three brokers losing power at once can lose acknowledged records",
}
# The same on every cluster; see the docstring for why each differs from the default.
COMMON = {
    "replica.lag.time.max.ms": "5000",
    "broker.session.timeout.ms": "30000",
    "broker.heartbeat.interval.ms": "2000",
    "auto.leader.rebalance.enable": "false",
}
TOPIC_CONFIG = {"min.insync.replicas": "2"}
CATCHUP_PARTITIONS = 4


# -- the clusters ----------------------------------------------------------------


def start_clusters(args, clusters):
    """Starts one cluster per system into `clusters` (so the caller closes even a half-started set)."""
    for name in SYSTEMS:
        log("starting %s: three nodes" % LABEL[name])
        t0 = time.monotonic()
        if name == "kafka":
            c = KafkaCluster(args.kafka_cache, COMMON, n=len(IDS), prefix="bench-kafka-")
        else:
            extra = dict(COMMON, **({"runnel.acks.all.fsync": "false"} if name == "runnel-nofsync" else {}))
            c = RunnelCluster(args.runnel, COMMON["broker.session.timeout.ms"],
                              COMMON["broker.heartbeat.interval.ms"], extra)
            for n in c.nodes.values():
                n.die_with_parent = True  # as Kafka's nodes and etcd: no broker outlives a killed run
        clusters[name] = c  # before start(): a failed start is still closed
        c.start()
        create_group_coordinator(c)
        log("  formed in %.1f s" % (time.monotonic() - t0))


def create_group_coordinator(cluster):
    """The end-to-end consumer has a group.id, and librdkafka looks up its
    coordinator: that creates __consumer_offsets (50 partitions, replication
    factor 3 on both systems). Done here, so no measurement includes it."""
    c = Consumer({"bootstrap.servers": cluster.bootstrap(), "group.id": "bench-warm-up", "log_level": 2})
    try:  # NOT_COORDINATOR until the new coordinator has loaded its partition
        wait_until(lambda: c.committed([TopicPartition("bench-warm-up", 0)], timeout=10) is not None, 120,
                   "a group coordinator", poll=0.5)
    finally:
        c.close()


def controller(cluster):
    """The node whose SIGSTOP would stall metadata: Runnel's controller, Kafka's quorum leader."""
    if cluster.name == "kafka":
        return cluster.controller()
    return metadata(cluster, IDS[0])["controller_id"]


def metadata(cluster, node_id, topics=None):
    with kw.Connection(cluster.nodes[node_id].port, timeout=10) as c:
        return kw.parse_metadata_v7(c.call(kw.metadata_v7(7, topics), 7))


def partitions(cluster, node_id, topic):
    t = metadata(cluster, node_id, [topic])["topics"].get(topic)
    return {} if t is None or t["error"] else t["partitions"]


def fully_replicated(cluster, topic, count):
    """Every node's Metadata shows `count` partitions, each with a leader and all three in its ISR."""
    for i in IDS:
        ps = partitions(cluster, i, topic)
        if len(ps) != count or any(p["leader"] < 0 or sorted(p["isr"]) != IDS for p in ps.values()):
            return False
    return True


def create_topic(cluster, topic, count, assignment=None):
    new = (NewTopic(topic, count, replica_assignment=assignment, config=TOPIC_CONFIG) if assignment else
           NewTopic(topic, count, 3, config=TOPIC_CONFIG))
    client = admin(cluster.bootstrap())  # held until the answer: a destroyed client fails its futures
    client.create_topics([new], request_timeout=30)[topic].result(40)
    wait_until(lambda: fully_replicated(cluster, topic, count), 60, "%s fully replicated" % topic, poll=0.05)


def delete_topic(cluster, topic):
    client = admin(cluster.bootstrap())
    client.delete_topics([topic], request_timeout=30)[topic].result(40)


def cpu_seconds(pid):
    """utime + stime of a live process (all its threads), in seconds."""
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def cpu_snapshot(cluster):
    """The three brokers' CPU seconds, and with Runnel's etcd ("all": Kafka's
    controllers run inside its brokers, so for Kafka both are the same)."""
    brokers = sum(cpu_seconds(n.proc.pid) for n in cluster.nodes.values())
    etcd = cpu_seconds(cluster.etcd.proc.pid) if cluster.name == "runnel" else 0.0
    return {"brokers": brokers, "all": brokers + etcd}


def cpu_used(before, after, value_bytes):
    out = {k: round(after[k] - before[k], 2) for k in before}
    if value_bytes:
        out.update({k + "_per_gb": round((after[k] - before[k]) / (value_bytes / 1e9), 2) for k in before})
    return out


# -- workloads ------------------------------------------------------------------


def loadgen_on(cfg, cluster, topic, extra, timeout=900):
    """loadgen on a topic that exists (so it sends no CreateTopics: librdkafka
    sends that to the controller Metadata names, which in KRaft is any
    broker, the stopped follower too), the brokers' CPU time read around it."""
    before = cpu_snapshot(cluster)
    result = run_loadgen(cfg["loadgen"], types.SimpleNamespace(bootstrap=cluster.bootstrap()),
                         extra + ["--topic", topic, "--timeout", "300"], timeout, create_topic=False)
    produced = result.get("produce") or result.get("fill") or {}
    return result, cpu_used(before, cpu_snapshot(cluster), produced.get("delivered", 0) * result["size"])


def produce_max(cfg, cluster, rec):
    topic = "rf3-produce-%d" % rec["round"]
    create_topic(cluster, topic, 6)
    rec["result"], rec["cpu_s"] = loadgen_on(cfg, cluster, topic, [
        "--mode", "produce", "--size", "100", "--partitions", "6", "--acks", "all",
        "--duration", str(cfg["produce_seconds"])])
    rec["isr_full_after"] = fully_replicated(cluster, topic, 6)
    delete_topic(cluster, topic)


def e2e_paced(cfg, cluster, rec):
    topic = "rf3-e2e-%d" % rec["round"]
    create_topic(cluster, topic, 6)
    rec["rate"] = cfg["e2e_rate"]
    rec["result"], rec["cpu_s"] = loadgen_on(cfg, cluster, topic, [
        "--mode", "e2e", "--size", "100", "--partitions", "6", "--acks", "all", "--rate", str(cfg["e2e_rate"]),
        "--duration", str(cfg["e2e_seconds"])])
    rec["isr_full_after"] = fully_replicated(cluster, topic, 6)
    delete_topic(cluster, topic)


def isr_of(cluster, node_id, topic):
    return [p["isr"] for p in partitions(cluster, node_id, topic).values()]


def pick_follower(cluster, rnd):
    """(controller, the follower, the two leaders): the follower is never the
    controller (stopping it would stall metadata), alternating by round."""
    ctrl = controller(cluster)
    follower = [i for i in IDS if i != ctrl][rnd % 2]
    return ctrl, follower, [i for i in IDS if i != follower]


def write_backlog(cfg, cluster, topic, rec):
    """--backlog-mib of 1 KiB values to the topic's partitions, acks=1."""
    rec["fill"], rec["fill_cpu_s"] = loadgen_on(cfg, cluster, topic, [
        "--mode", "produce", "--size", "1024", "--partitions", str(CATCHUP_PARTITIONS), "--acks", "1",
        "--records", str(cfg["backlog_bytes"] // 1024)])
    if not rec["fill"].get("ok"):
        raise RuntimeError("backlog not written: %s" % rec["fill"].get("stderr", "")[-500:])


def record_copied(rec, cluster, topic, seconds, cpu_before):
    """The catch-up result of a backlog copied in `seconds`; the topic goes."""
    value_bytes = rec["fill"]["produce"]["delivered"] * 1024
    rec["result"] = {"catchup": {"seconds": round(seconds, 3), "value_bytes": value_bytes,
                                 "mb_per_s": round(value_bytes / 1e6 / seconds, 1)}}
    rec["cpu_s"] = cpu_used(cpu_before, cpu_snapshot(cluster), value_bytes)
    delete_topic(cluster, topic)


def catchup(cfg, cluster, rec):
    """A follower SIGSTOPped until it is out of every ISR and a backlog is
    written, then SIGCONTed: the time until it is back in every ISR."""
    rnd = rec["round"]
    ctrl, follower, leaders = pick_follower(cluster, rnd)
    assignment = [[leaders[p % 2], leaders[(p + 1) % 2], follower] for p in range(CATCHUP_PARTITIONS)]
    topic = "rf3-catchup-%d" % rnd
    create_topic(cluster, topic, CATCHUP_PARTITIONS, assignment)
    rec.update(follower=follower, controller=ctrl)
    pid = cluster.nodes[follower].proc.pid
    os.kill(pid, signal.SIGSTOP)
    stopped = time.monotonic()
    try:
        wait_until(lambda: all(follower not in isr for isr in isr_of(cluster, leaders[0], topic)), 60,
                   "node %d out of every ISR of %s" % (follower, topic), poll=0.05)
        rec["shrink_s"] = round(time.monotonic() - stopped, 3)
        write_backlog(cfg, cluster, topic, rec)
        before = cpu_snapshot(cluster)
    finally:
        os.kill(pid, signal.SIGCONT)
    resumed = time.monotonic()
    rec["stopped_s"] = round(resumed - stopped, 3)
    wait_until(lambda: all(follower in isr for isr in isr_of(cluster, leaders[0], topic)), 300,
               "node %d back in every ISR of %s" % (follower, topic), poll=0.02)
    seconds = time.monotonic() - resumed
    record_copied(rec, cluster, topic, seconds, before)


def reassignment_done(cluster, node_id, topic, follower):
    """Every partition of `topic` lists `follower` in its ISR and none is still being moved."""
    if not all(follower in isr for isr in isr_of(cluster, node_id, topic)):
        return False
    return not listed(cluster.nodes[node_id].port, {topic: list(range(CATCHUP_PARTITIONS))})


def new_follower(cfg, cluster, rec):
    """A backlog on partitions replicated by two brokers, then the third
    added to every partition with AlterPartitionReassignments (what
    kafka-reassign-partitions --execute sends): the time until the new
    follower is in every ISR and the moves are complete."""
    rnd = rec["round"]
    ctrl, follower, leaders = pick_follower(cluster, rnd)
    before_move = [[leaders[p % 2], leaders[(p + 1) % 2]] for p in range(CATCHUP_PARTITIONS)]
    topic = "rf2-newfollower-%d" % rnd
    client = admin(cluster.bootstrap())
    client.create_topics([NewTopic(topic, CATCHUP_PARTITIONS, replica_assignment=before_move,
                                   config=dict(TOPIC_CONFIG, **{"min.insync.replicas": "1"}))],
                         request_timeout=30)[topic].result(40)
    wait_until(lambda: all(len(isr) == 2 for isr in isr_of(cluster, leaders[0], topic)) and
               len(isr_of(cluster, leaders[0], topic)) == CATCHUP_PARTITIONS, 60, "%s on two brokers" % topic,
               poll=0.05)
    rec.update(follower=follower, controller=ctrl)
    write_backlog(cfg, cluster, topic, rec)
    before = cpu_snapshot(cluster)
    moved = time.monotonic()
    top, res = alter(cluster.nodes[leaders[0]].port,
                     {(topic, p): before_move[p] + [follower] for p in range(CATCHUP_PARTITIONS)})
    if top or any(err for err, _ in res.values()):
        raise RuntimeError("AlterPartitionReassignments: %s %s" % (top, res))
    wait_until(lambda: reassignment_done(cluster, leaders[0], topic, follower), 300,
               "node %d a replica in every ISR of %s" % (follower, topic), poll=0.02)
    seconds = time.monotonic() - moved
    record_copied(rec, cluster, topic, seconds, before)


WORKLOADS = [
    ("produce_100b_acksall", produce_max),
    ("e2e_100b_acksall", e2e_paced),
    ("catchup_1k", catchup),
    ("newfollower_1k", new_follower),
]


def run(cfg, args, runs):
    clusters = {}
    started = time.monotonic()
    try:
        start_clusters(args, clusters)
        for rnd in range(1, cfg["rounds"] + 1):
            order = SYSTEMS[(rnd - 1) % 3:] + SYSTEMS[:(rnd - 1) % 3]
            for wid, fn in WORKLOADS:
                if cfg["only"] and wid not in cfg["only"]:
                    continue
                if wid == "e2e_100b_acksall" and "e2e_rate" not in cfg:
                    kmax = (median(runs, "produce_100b_acksall", "kafka", RPS) or
                            median(runs, "produce_100b_acksall", "runnel", RPS) or 100000)
                    cfg["e2e_rate"] = int(kmax / 2)
                for name in order:
                    log("%s, round %d: %s" % (wid, rnd, LABEL[name]))
                    rec = record(wid, name, rnd)
                    try:
                        fn(cfg, clusters[name], rec)
                        if not rec["result"].get("ok", True):
                            rec["error"] = rec["result"].get("stderr", "loadgen reported failure")
                    except Exception as e:
                        rec["error"] = "%s: %s" % (type(e).__name__, e)
                        log("  failed: %s" % rec["error"])
                    rec["load_after"] = loadavg()
                    log("  %s" % brief(rec))
                    runs.append(rec)
    finally:
        for c in clusters.values():
            try:
                c.close()
            except Exception as e:
                log("closing a cluster: %s" % e)
    cfg["run_seconds"] = round(time.monotonic() - started)


def brief(rec):
    r = rec.get("result") or {}
    if "catchup" in r:
        s = "caught up %.1f MB in %.2f s: %.1f MB/s" % (
            r["catchup"]["value_bytes"] / 1e6, r["catchup"]["seconds"], r["catchup"]["mb_per_s"])
        return s + (" (stopped %.1f s)" % rec["stopped_s"] if "stopped_s" in rec else " (a new replica)")
    if "produce" in r:
        p = r["produce"]
        s = "%s records/s, p99 %.2f ms" % (format(int(p["records_per_s"]), ","), p["p99_ms"])
        if "consume" in r and "e2e_p99_ms" in r["consume"]:
            s += ", end-to-end p99 %.2f ms" % r["consume"]["e2e_p99_ms"]
        return s + ", broker CPU %.1f s/GB" % rec["cpu_s"].get("brokers_per_gb", 0)
    return rec.get("error", "")


# -- report ------------------------------------------------------------------------

RPS = ["result", "produce", "records_per_s"]


def rows(cfg):
    """(label, workload, path to the number, unit, higher is better, goal against Kafka)"""
    rate = format(cfg.get("e2e_rate", 0), ",")
    return [
        ("Produce 100 B acks=all, 6 partitions", "produce_100b_acksall", RPS, "records/s", True, ">= 1.5"),
        ("  send-to-ack p99 at that (saturated) rate", "produce_100b_acksall", ["result", "produce", "p99_ms"],
         "ms", False, ""),
        ("  broker CPU per GB produced", "produce_100b_acksall", ["cpu_s", "brokers_per_gb"], "CPU s/GB", False,
         ""),
        ("  the same with Runnel's etcd", "produce_100b_acksall", ["cpu_s", "all_per_gb"], "CPU s/GB", False, ""),
        ("Paced at %s records/s: records/s acknowledged" % rate, "e2e_100b_acksall", RPS, "records/s", True, ""),
        ("  send-to-ack p99", "e2e_100b_acksall", ["result", "produce", "p99_ms"], "ms", False, ""),
        ("  send-to-ack p50", "e2e_100b_acksall", ["result", "produce", "p50_ms"], "ms", False, ""),
        ("  end-to-end p99 (produce to consume)", "e2e_100b_acksall", ["result", "consume", "e2e_p99_ms"], "ms",
         False, "<= 0.33"),
        ("  end-to-end p50", "e2e_100b_acksall", ["result", "consume", "e2e_p50_ms"], "ms", False, ""),
        ("  broker CPU per GB produced", "e2e_100b_acksall", ["cpu_s", "brokers_per_gb"], "CPU s/GB", False, ""),
        ("Follower catch-up, %d MiB of 1 KiB records" % (cfg["backlog_bytes"] >> 20), "catchup_1k",
         ["result", "catchup", "mb_per_s"], "MB/s", True, ""),
        ("  SIGCONT to back in every ISR", "catchup_1k", ["result", "catchup", "seconds"], "s", False, ""),
        ("  broker CPU per GB caught up", "catchup_1k", ["cpu_s", "brokers_per_gb"], "CPU s/GB", False, ""),
        ("New follower (reassignment) catch-up, %d MiB of 1 KiB records" % (cfg["backlog_bytes"] >> 20),
         "newfollower_1k", ["result", "catchup", "mb_per_s"], "MB/s", True, ""),
        ("  reassignment to every ISR and the moves complete", "newfollower_1k", ["result", "catchup", "seconds"],
         "s", False, ""),
        ("  broker CPU per GB copied", "newfollower_1k", ["cpu_s", "brokers_per_gb"], "CPU s/GB", False, ""),
    ]


def summarize(cfg, runs):
    table = []
    for label, wid, path, unit, higher, goal in rows(cfg):
        row = {"label": label.strip(), "workload": wid, "unit": unit, "higher_is_better": higher, "goal": goal,
               "rounds": len(metric_values(runs, wid, "runnel", path))}
        for s in SYSTEMS:
            row[s] = median(runs, wid, s, path)
        row["runnel_over_kafka"] = round_ratio(runs, wid, "runnel", "kafka", path)
        row["nofsync_over_kafka"] = round_ratio(runs, wid, "runnel-nofsync", "kafka", path)
        if any(row[s] is not None for s in SYSTEMS):  # not a workload left out by --only
            table.append(row)
    return table


def fmt(v, unit):
    if v is None:
        return "-"
    if unit == "records/s":
        return format(int(round(v)), ",")
    return "%.2f" % v if v < 10 else format(round(v, 1), ",")


def write_markdown(path, cfg, machine, table, runs):
    ratio = lambda r: "-" if r is None else "**%.2f**" % r if r >= 0.1 else "**%.3f**" % r  # noqa: E731
    t = ["# Replication: three Runnel brokers beside three Kafka 4.1.1 nodes, %s" % cfg["date"], "",
         "`%s`: %d round(s); within each workload the systems take turns, in an order rotated every round. "
         "Raw runs: [%s](%s)." % (cfg["command"], cfg["rounds"], os.path.basename(cfg["json"]),
                                  os.path.basename(cfg["json"])), "",
         "Machine: %s, %d cores, %s, shared: load average %.1f at the start, %.1f at the end, median %.1f across "
         "runs (the benchmark's own processes count: a load of 2 means both cores busy). The run took %s s." % (
             machine["cpu"], machine["cores"], machine["memory"], machine["load_start"], machine["load_end"],
             machine["load_median"], cfg.get("run_seconds", "?")), "",
         "Runnel %s (release build; etcd from Debian), Apache Kafka %s (KRaft, three combined broker+controller "
         "nodes, -Xmx1G each), librdkafka %s as the one client (`bench/loadgen`). Every cluster: %s; every topic: "
         "replication factor 3, `min.insync.replicas=2`." % (
             machine["runnel_commit"], machine["kafka_version"], machine["librdkafka"],
             ", ".join("`%s=%s`" % kv for kv in COMMON.items())), "",
         "Durability with acks=all:"]
    t += ["- **%s**: %s." % (LABEL[s], DURABILITY[s]) for s in SYSTEMS]
    t += ["", "Medians over the rounds. Ratios are the system's number over Kafka's taken within each round "
          "(both under the same load), then the median over rounds: above 1 is better for records/s and MB/s, "
          "below 1 for ms, s and CPU s/GB.", "",
          "| Workload | unit | Runnel | Runnel (no fsync) | Kafka | Runnel/Kafka | Runnel (no fsync)/Kafka | goal |",
          "|---|---|---:|---:|---:|---:|---:|---|"]
    for row in table:
        t.append("| %s | %s | %s | %s | %s | %s | %s | %s |" % (
            row["label"], row["unit"], fmt(row["runnel"], row["unit"]), fmt(row["runnel-nofsync"], row["unit"]),
            fmt(row["kafka"], row["unit"]), ratio(row["runnel_over_kafka"]), ratio(row["nofsync_over_kafka"]),
            row["goal"]))
    flaps = ["%s round %d (%s)" % (LABEL[r["system"]], r["round"], r["workload"]) for r in runs
             if r.get("isr_full_after") is False]
    failed = ["%s round %d (%s): %s" % (LABEL[r["system"]], r["round"], r["workload"], r["error"][:200])
              for r in runs if "error" in r]
    t += ["", "ISR not full right after a produce workload: %s." % ("; ".join(flaps) or "never"),
          "Failed runs: %s." % ("; ".join(failed) or "none"), "",
          "## How it was measured", "",
          "- Produce: `loadgen --mode produce --acks all --size 100 --partitions 6 --duration %s` (linger.ms=5, a "
          "unique key per record, round-robin over the partitions), as fast as the client can; the p99 at that "
          "rate is mostly the time a record waits in the client's queue." % cfg["produce_seconds"],
          "- Paced: `loadgen --mode e2e --acks all --rate R --duration %s`, R half Kafka's median acks=all rate "
          "of the first round; a consumer in the same process (librdkafka defaults, fetch.wait.max.ms=500) reads "
          "while the producer sends; every value carries its send time." % cfg["e2e_seconds"],
          "- CPU: utime+stime of the three broker processes (Kafka's JVMs, runnel) from /proc/<pid>/stat before "
          "and after the loadgen run, over the GB (10^9 bytes) of values acknowledged; 'with Runnel's etcd' adds "
          "etcd's (Kafka's controllers run inside its brokers). The client's own CPU is not counted.",
          "- Catch-up: the follower gets SIGSTOP; once a leader's Metadata shows it out of every ISR (after "
          "replica.lag.time.max.ms), %d MiB of 1 KiB values are written with acks=1 to its 4 partitions; SIGCONT, "
          "and the time runs until a leader's Metadata shows it in every ISR again, polled every 20 ms "
          "(so it includes the ISR write: Runnel's compare-and-swap in etcd, Kafka's AlterPartition to the "
          "controller). MB/s counts values." % (cfg["backlog_bytes"] >> 20),
          "- New follower: a topic of 4 partitions on two brokers only (min.insync.replicas=1) gets the same "
          "backlog; then one AlterPartitionReassignments request (what kafka-reassign-partitions --execute sends) "
          "adds the third broker to every partition, and the time runs until a leader's Metadata shows it in every "
          "ISR and ListPartitionReassignments lists no move, polled every 20 ms (so it includes creating the "
          "replicas and the reassignment's completion). MB/s counts values.", ""]
    with open(path, "w") as f:
        f.write("\n".join(t))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="small sizes and one round, for trying it")
    ap.add_argument("--rounds", type=int, help="rounds (full: 3, quick: 1)")
    ap.add_argument("--produce-seconds", type=float, help="length of the produce run (full: 5, quick: 2)")
    ap.add_argument("--e2e-seconds", type=float, help="length of the paced run (full: 8, quick: 3)")
    ap.add_argument("--backlog-mib", type=int, help="catch-up backlog (full: 256, quick: 32)")
    ap.add_argument("--only", nargs="*", choices=[w for w, _ in WORKLOADS], help="run only these workloads")
    args = parse_common_args(ap)
    cfg = {
        "rounds": args.rounds or (1 if args.quick else 3),
        "produce_seconds": args.produce_seconds or (2 if args.quick else 5),
        "e2e_seconds": args.e2e_seconds or (3 if args.quick else 8),
        "backlog_bytes": (args.backlog_mib or (32 if args.quick else 256)) << 20,
        "only": args.only or [],
        "command": " ".join(["bench/cluster_replication.py"] + [as_typed(a) for a in sys.argv[1:]]),
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d"),
        "loadgen": os.path.join(args.build, "bench", "loadgen"),
    }
    return bench_main("cluster_replication", cfg, args, run, report)


def report(stem, cfg, machine, runs):
    cfg["loadgen"] = as_typed(cfg["loadgen"])
    table = summarize(cfg, runs)
    with open(stem + ".json", "w") as f:
        json.dump({"config": cfg, "machine": machine, "settings": COMMON, "durability": DURABILITY,
                   "summary": table, "runs": runs}, f, indent=1)
    write_markdown(stem + ".md", cfg, machine, table, runs)


if __name__ == "__main__":
    sys.exit(main())
