#!/usr/bin/python3
"""Transactions' cost, Runnel beside Apache Kafka 4.1.1, in one run (issue 16).

Three brokers stay up for the whole run, each started fresh on an empty dir:

  runnel          one `runnel serve` (release build), its defaults: an
                  acks=all write is fsynced before it is acknowledged, and so
                  is each transaction's state and marker;
  runnel-nofsync  the same with runnel.acks.all.fsync=false, Kafka's
                  durability mode (the OS flushes; replication is the guard);
  kafka           Apache Kafka 4.1.1, one combined KRaft node
                  (compat-tests/kafka_harness.py, -Xmx1G, G1, jars from Maven
                  Central cached in build/kafka-jars or $RUNNEL_KAFKA_CACHE),
                  its shipped server.properties.

The client is librdkafka (bench/loadgen, Debian's librdkafka 2.0.2) on every
broker. In each of --rounds rounds, for every workload the brokers take
turns, in an order rotated every round, each run on a fresh topic of 6
partitions:

  idempotent      --records 100 B records, acks=all, enable.idempotence;
  transactional   the same records in transactions of --txn-records,
                  committed after each (rd_kafka_commit_transaction, which
                  first flushes the transaction's last records, is timed:
                  commit p50/p99);
  read_uncommitted, read_committed
                  a fresh consumer reads that transactional topic from the
                  start (no group), with each isolation level.

Reported: records/s and MB/s, the transactional/idempotent ratio for each
broker and the read_committed/read_uncommitted one (each taken within a
round, then the median over rounds), Runnel/Kafka ratios, commit latency.
Results: bench/results/txn_bench-<date>.json (every run, saved as it goes in
.partial.json) and .md. A benchmark, never part of the test suite.

  /usr/bin/python3 bench/txn_bench.py --runnel build/release/runnel   # --quick, --rounds N, --help
"""

import argparse
import datetime
import json
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(REPO, "compat-tests"))
import kafka_harness  # noqa: E402
import runnel_harness  # noqa: E402
from run_suite import (as_typed, bench_main, log, loadavg, median, metric_values, parse_common_args,  # noqa: E402
                       record, round_ratio, round_ratios, run_loadgen)

PARTITIONS = 6
SYSTEMS = ("runnel", "runnel-nofsync", "kafka")
LABEL = {"runnel": "Runnel", "runnel-nofsync": "Runnel (fsync=false)", "kafka": "Kafka"}
# Transactional ids and groups need their internal topics: one partition
# each is enough for one producer and keeps the three brokers alike.
SETTINGS = {"transaction.state.log.num.partitions": "1", "offsets.topic.num.partitions": "1"}
LIMIT = 900  # seconds any one loadgen may take


def start_brokers(args):
    brokers = {
        "runnel": runnel_harness.Runnel(args.runnel, dict(SETTINGS), prefix="runnel-txn-bench-"),
        "runnel-nofsync": runnel_harness.Runnel(args.runnel, dict(SETTINGS, **{"runnel.acks.all.fsync": "false"}),
                                                prefix="runnel-txn-bench-"),
        "kafka": kafka_harness.Kafka(args.kafka_cache, dict(SETTINGS), ready_timeout=600),
    }
    for name, b in brokers.items():
        if hasattr(b, "die_with_parent"):
            b.die_with_parent = True
        log("starting %s" % name)
        b.start()
    return brokers


def workloads(cfg):
    """(id, loadgen arguments for round r) in the order they run; the consume
    workloads read the topic the transactional run of the same round wrote."""
    n, t = str(cfg["records"]), str(cfg["txn_records"])
    common = ["--records", n, "--size", "100", "--partitions", str(PARTITIONS), "--acks", "all",
              "--timeout", str(LIMIT)]
    return [
        ("idempotent", lambda r: (common + ["--topic", "idem-%d" % r, "--idempotence"], True)),
        ("transactional", lambda r: (common + ["--topic", "txn-%d" % r, "--transaction-records", t], True)),
        ("read_uncommitted", lambda r: (common + ["--topic", "txn-%d" % r, "--mode", "consume", "--skip-fill",
                                                  "--isolation", "read_uncommitted"], False)),
        ("read_committed", lambda r: (common + ["--topic", "txn-%d" % r, "--mode", "consume", "--skip-fill",
                                                "--isolation", "read_committed"], False)),
    ]


def run(cfg, args, runs):
    loadgen = os.path.join(args.build, "bench", "loadgen")
    log("load average at the start: %.2f %.2f %.2f" % os.getloadavg())
    started = time.monotonic()
    brokers = start_brokers(args)
    try:
        for rnd in range(1, cfg["rounds"] + 1):
            order = SYSTEMS[rnd % 3:] + SYSTEMS[:rnd % 3]
            for wid, make in workloads(cfg):
                for system in order:
                    rec = record(wid, system, rnd)
                    extra, create = make(rnd)
                    try:
                        res = run_loadgen(loadgen, brokers[system], extra, LIMIT + 60, create_topic=create)
                        if not res.get("ok"):
                            raise RuntimeError(res.get("stderr", "")[-500:] or json.dumps(res)[:500])
                        rec["result"] = res
                    except Exception as e:
                        rec["error"] = "%s: %s" % (type(e).__name__, e)
                    rec["load_after"] = loadavg()
                    log("round %d %-16s %-20s %s" % (rnd, wid, LABEL[system], brief(rec)))
                    runs.append(rec)
    finally:
        for b in brokers.values():
            b.close()
    cfg["run_seconds"] = round(time.monotonic() - started)
    log("load average at the end: %.2f %.2f %.2f" % os.getloadavg())


def section(wid):
    return "produce" if wid in ("idempotent", "transactional") else "consume"


def brief(rec):
    if "error" in rec:
        return "failed: " + rec["error"][:300]
    r = rec["result"][section(rec["workload"])]
    s = "%9.0f records/s %7.2f MB/s" % (r["records_per_s"], r["mb_per_s"])
    if "commit_p50_ms" in r:
        s += ", %d commits p50 %.2f ms p99 %.2f ms" % (r["transactions"], r["commit_p50_ms"], r["commit_p99_ms"])
    return s


# -- report ------------------------------------------------------------------------

def path(wid, metric):
    return ["result", section(wid), metric]


def summarize(cfg, runs):
    rows = []
    for wid, metric, unit in (("idempotent", "records_per_s", "records/s"),
                              ("transactional", "records_per_s", "records/s"),
                              ("transactional", "commit_p50_ms", "ms"),
                              ("transactional", "commit_p99_ms", "ms"),
                              ("read_uncommitted", "mb_per_s", "MB/s"),
                              ("read_committed", "mb_per_s", "MB/s")):
        p = path(wid, metric)
        row = {"workload": wid, "metric": metric, "unit": unit,
               "rounds": len(metric_values(runs, wid, "runnel", p))}
        for s in SYSTEMS:
            row[s] = median(runs, wid, s, p)
        row["runnel_over_kafka"] = round_ratio(runs, wid, "runnel", "kafka", p)
        row["runnel_nofsync_over_kafka"] = round_ratio(runs, wid, "runnel-nofsync", "kafka", p)
        rows.append(row)
    # Within one broker: transactional over idempotent, read_committed over
    # read_uncommitted, each round's pair, then the median.
    within = {}
    for name, (a, b, metric) in {"transactional / idempotent": ("transactional", "idempotent", "records_per_s"),
                                 "read_committed / read_uncommitted": ("read_committed", "read_uncommitted",
                                                                       "mb_per_s")}.items():
        within[name] = {}
        for s in SYSTEMS:
            ra = {r["round"]: r["result"][section(a)][metric] for r in runs
                  if r["workload"] == a and r["system"] == s and "error" not in r}
            rb = {r["round"]: r["result"][section(b)][metric] for r in runs
                  if r["workload"] == b and r["system"] == s and "error" not in r}
            per = [ra[k] / rb[k] for k in sorted(ra) if k in rb and rb[k]]
            within[name][s] = {"median": statistics.median(per) if per else None, "per_round": per}
    return {"rows": rows, "within": within}


def fmt(v):
    if v is None:
        return "-"
    return "%.2f" % v if v < 10 else format(round(v, 1) if v < 1000 else round(v), ",")


def markdown(cfg, machine, summary, runs):
    t = ["# Transactions against idempotence, Runnel beside Kafka 4.1.1, %s" % cfg["date"], "",
         "`%s`: %d round(s); within each workload the brokers take turns, in an order rotated every round. "
         "Raw runs: [%s](%s)." % (cfg["command"], cfg["rounds"], os.path.basename(cfg["json"]),
                                  os.path.basename(cfg["json"])), "",
         "Machine: %s, %d cores, %s, kernel %s, shared: load average %.1f at the start, %.1f at the end, median "
         "%.1f across runs (the benchmark's own processes count). The run took %s s." % (
             machine["cpu"], machine["cores"], machine["memory"], machine["kernel"], machine["load_start"],
             machine["load_end"], machine["load_median"], cfg.get("run_seconds", "?")), "",
         "Runnel %s (`%s`), Apache Kafka %s (KRaft, one combined node, -Xmx1G, its shipped server.properties), "
         "librdkafka %s (bench/loadgen) as the client. %d records of 100 B to 6 partitions per produce run, "
         "acks=all; transactions of %d records, each committed; the consume runs read the transactional run's "
         "topic back from the start." % (machine["runnel_commit"], machine["runnel_binary"],
                                         machine["kafka_version"], machine["librdkafka"], cfg["records"],
                                         cfg["txn_records"]), "",
         "Medians over the rounds. Ratios are taken within each round (the pair under the same load), then the "
         "median; per-round values in parentheses.", "",
         "| workload | metric | %s | Runnel / Kafka | Runnel (fsync=false) / Kafka |" %
         " | ".join(LABEL[s] for s in SYSTEMS),
         "|---|---|%s---:|---:|" % ("---:|" * len(SYSTEMS))]
    for row in summary["rows"]:
        t.append("| %s | %s (%s) | %s | %s | %s |" % (
            row["workload"], row["metric"], row["unit"], " | ".join(fmt(row[s]) for s in SYSTEMS),
            fmt(row["runnel_over_kafka"]), fmt(row["runnel_nofsync_over_kafka"])))
    t += ["", "| within one broker | %s |" % " | ".join(LABEL[s] for s in SYSTEMS),
          "|---|%s" % ("---:|" * len(SYSTEMS))]
    for name, per in summary["within"].items():
        t.append("| %s | %s |" % (name, " | ".join(
            "%s (%s)" % (fmt(per[s]["median"]), ", ".join("%.2f" % x for x in per[s]["per_round"]))
            for s in SYSTEMS)))
    failed = ["%s round %d (%s): %s" % (LABEL[r["system"]], r["round"], r["workload"], r["error"][:200])
              for r in runs if "error" in r]
    t += ["", "Failed runs: %s." % ("; ".join(failed) or "none"), "", "## Every run", "",
          "| round | workload | broker | result | load before | after |", "|---:|---|---|---|---:|---:|"]
    for r in runs:
        t.append("| %d | %s | %s | %s | %.2f | %.2f |" % (r["round"], r["workload"], LABEL[r["system"]],
                                                        brief(r), r["load_before"], r["load_after"]))
    return "\n".join(t) + "\n"


def report(stem, cfg, machine, runs):
    summary = summarize(cfg, runs)
    with open(stem + ".json", "w") as f:
        json.dump({"config": cfg, "machine": machine, "summary": summary, "runs": runs}, f, indent=1)
    with open(stem + ".md", "w") as f:
        f.write(markdown(cfg, machine, summary, runs))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="small sizes and one round, for trying it")
    ap.add_argument("--rounds", type=int, help="rounds (full: 3, quick: 1)")
    ap.add_argument("--records", type=int, help="records per produce run (full: 2,000,000, quick: 200,000)")
    ap.add_argument("--txn-records", type=int, default=1000, help="records per transaction (1000)")
    args = parse_common_args(ap)
    cfg = {
        "rounds": args.rounds or (1 if args.quick else 3),
        "records": args.records or (200_000 if args.quick else 2_000_000),
        "txn_records": args.txn_records,
        "command": " ".join(["bench/txn_bench.py"] + [as_typed(a) for a in sys.argv[1:]]),
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d"),
    }
    return bench_main("txn_bench", cfg, args, run, report)


if __name__ == "__main__":
    sys.exit(main())
